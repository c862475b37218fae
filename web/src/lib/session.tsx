import type { User } from 'firebase/auth';
import { doc, onSnapshot } from 'firebase/firestore';
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useAuthState } from 'react-firebase-hooks/auth';
import type { UserProfile } from '@/types/user';
import { firebase } from './firebase';

/** The signed-in person, their stored profile and role (spec §3, §4). */
export interface Session {
  /** True until Firebase Auth has restored (or not) a signed-in user. */
  loading: boolean;
  user: User | null;
  profile: UserProfile | null;
  /** The profile's role, 'user' by default and when the profile cannot load. */
  role: string;
}

const SessionContext = createContext<Session>({ loading: true, user: null, profile: null, role: 'user' });

/** Provides the session: the auth state and a live view of users/{uid}. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, loading] = useAuthState(firebase().auth);
  const [profile, setProfile] = useState<{ uid: string; data: UserProfile | null } | null>(null);

  useEffect(() => {
    if (!user) return;
    return onSnapshot(
      doc(firebase().db, 'users', user.uid),
      (snap) =>
        setProfile({
          uid: user.uid,
          data: snap.exists() ? ({ id: snap.id, ...snap.data() } as UserProfile) : null,
        }),
      (err) => {
        console.error('Failed to load the profile:', err);
        setProfile({ uid: user.uid, data: null });
      },
    );
  }, [user]);

  const current = user && profile?.uid === user.uid ? profile.data : null;
  const value: Session = {
    loading,
    user: user ?? null,
    profile: current,
    role: current?.role || 'user',
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The current session. */
export function useSession(): Session {
  return useContext(SessionContext);
}
