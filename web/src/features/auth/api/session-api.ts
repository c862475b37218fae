import type { User } from 'firebase/auth';
import { doc } from 'firebase/firestore';
import { useAuthState } from 'react-firebase-hooks/auth';
import { firebase } from '@/lib/firebase';
import { useLiveDoc, type Live } from '@/lib/firebase-live';
import type { UserProfile } from '@/types/user';

/** The signed-in user, as Firebase Auth restores it: [user, loading]. */
export function useAuthUser(): [User | null | undefined, boolean] {
  const [user, loading] = useAuthState(firebase().auth);
  return [user, loading];
}

/**
 * users/{uid}, live: the stored profile, or null when it does not exist or
 * cannot be read (the failure is logged, docs/product-spec.md §8); nothing without a uid.
 */
export function useProfile(uid: string | null): Live<UserProfile | null> {
  return useLiveDoc(uid && `users/${uid}`, () => doc(firebase().db, 'users', uid ?? ''), {
    read: (snap) => (snap.exists() ? ({ id: snap.id, ...snap.data() } as UserProfile) : null),
    initial: null,
    log: 'Failed to load the profile:',
  });
}
