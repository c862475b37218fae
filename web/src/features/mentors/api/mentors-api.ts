import { collection, getDocs, onSnapshot, query, where } from 'firebase/firestore';
import { useEffect, useState } from 'react';
import { firebase } from '@/lib/firebase';
import type { Category, UserProfile } from '@/types/user';

/** Reads every category, mapped to id, name and emoji (spec §7); failures are logged and give none. */
export async function fetchCategories(): Promise<Category[]> {
  try {
    const snap = await getDocs(collection(firebase().db, 'categories'));
    return snap.docs
      .map((d) => ({
        id: d.id,
        name: String(d.get('name') ?? ''),
        emoji: d.get('emoji') as string | undefined,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    console.error('Failed to load categories:', err);
    return [];
  }
}

/** The categories, loaded once. */
export function useCategories(): Category[] {
  const [categories, setCategories] = useState<Category[]>([]);
  useEffect(() => {
    void fetchCategories().then(setCategories);
  }, []);
  return categories;
}

/** Mentors, live. */
export function useMentors(): { mentors: UserProfile[]; loading: boolean; error: boolean } {
  const [state, setState] = useState({ mentors: [] as UserProfile[], loading: true, error: false });
  useEffect(
    () =>
      onSnapshot(
        query(collection(firebase().db, 'users'), where('isMentor', '==', true)),
        (snap) =>
          setState({
            mentors: snap.docs
              .map((d) => ({ ...(d.data() as UserProfile), id: d.id }))
              .sort((a, b) => (a.name || '').localeCompare(b.name || '')),
            loading: false,
            error: false,
          }),
        (err) => {
          console.error('Failed to load mentors:', err);
          setState({ mentors: [], loading: false, error: true });
        },
      ),
    [],
  );
  return state;
}
