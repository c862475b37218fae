import type { User } from 'firebase/auth';
import { doc, onSnapshot } from 'firebase/firestore';
import { useAuthState } from 'react-firebase-hooks/auth';
import { firebase } from '@/lib/firebase';
import type { UserProfile } from '@/types/user';

/** The signed-in user, as Firebase Auth restores it: [user, loading]. */
export function useAuthUser(): [User | null | undefined, boolean] {
  const [user, loading] = useAuthState(firebase().auth);
  return [user, loading];
}

/**
 * Follows users/{uid}: onProfile gets the stored profile, or null when it
 * does not exist or cannot be read (the failure is logged, spec §8).
 * Returns the unsubscribe function.
 */
export function watchProfile(uid: string, onProfile: (profile: UserProfile | null) => void): () => void {
  return onSnapshot(
    doc(firebase().db, 'users', uid),
    (snap) => onProfile(snap.exists() ? ({ id: snap.id, ...snap.data() } as UserProfile) : null),
    (err) => {
      console.error('Failed to load the profile:', err);
      onProfile(null);
    },
  );
}
