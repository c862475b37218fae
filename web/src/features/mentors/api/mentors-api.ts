import { collection, doc, getDocs, onSnapshot, query, where } from 'firebase/firestore';
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

/** One mentor's profile, live; null when it does not exist or cannot be read. */
export function useMentor(id: string): { mentor: UserProfile | null; loading: boolean } {
  const [state, setState] = useState<{ id: string; mentor: UserProfile | null; loading: boolean }>({
    id,
    mentor: null,
    loading: true,
  });
  useEffect(
    () =>
      onSnapshot(
        doc(firebase().db, 'users', id),
        (snap) =>
          setState({
            id,
            mentor: snap.exists() ? { ...(snap.data() as UserProfile), id: snap.id } : null,
            loading: false,
          }),
        (err) => {
          console.error('Failed to load the mentor:', err);
          setState({ id, mentor: null, loading: false });
        },
      ),
    [id],
  );
  return state.id === id ? state : { mentor: null, loading: true };
}
