import { collection, doc, getDocs, type DocumentData } from 'firebase/firestore';
import { useEffect, useState } from 'react';
import { firebase, timestampToDate } from '@/lib/firebase';
import { useLiveDoc, useLiveQuery, type Live } from '@/lib/firebase-live';
import type { Category, PublicMentor } from '@/types/user';

/** Reads every category, mapped to id, name and emoji (docs/product-spec.md §7); failures are logged and give none. */
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

/** A mentors/{uid} document as the app uses it. */
function fromDoc(id: string, d: DocumentData): PublicMentor {
  return {
    ...(d as PublicMentor),
    id,
    bookable: d.bookable === true,
    listedAt: timestampToDate(d.listedAt),
    turnaroundDays: typeof d.turnaroundDays === 'number' ? d.turnaroundDays : null,
    rating: { average: Number(d.rating?.average ?? 0), count: Number(d.rating?.count ?? 0) },
    reviews: ((d.reviews ?? []) as DocumentData[]).map((r) => ({
      requestId: String(r.requestId ?? ''),
      reviewerName: String(r.reviewerName ?? ''),
      rating: Number(r.rating ?? 0),
      text: String(r.text ?? ''),
      createdAt: timestampToDate(r.createdAt),
    })),
  };
}

/** Listed mentors (the public mentors/ projection, readable signed out), live, by name. */
export function useMentors(): Live<PublicMentor[]> {
  return useLiveQuery('mentors', () => collection(firebase().db, 'mentors'), {
    read: (snap) =>
      snap.docs
        .map((d) => fromDoc(d.id, d.data()))
        .sort((a, b) => (a.name || '').localeCompare(b.name || '')),
    initial: [],
    log: 'Failed to load mentors:',
  });
}

/** One listed mentor, live; null when not listed or unreadable. */
export function useMentor(id: string): Live<PublicMentor | null> {
  return useLiveDoc(`mentors/${id}`, () => doc(firebase().db, 'mentors', id), {
    read: (snap) => (snap.exists() ? fromDoc(snap.id, snap.data()) : null),
    initial: null,
    log: 'Failed to load the mentor:',
  });
}
