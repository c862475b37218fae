import { useEffect, useState, type ReactNode } from 'react';
import { SessionContext, type Session } from '@/lib/session';
import type { UserProfile } from '@/types/user';
import { useAuthUser, watchProfile } from '../api/session-api';

/** Provides the session: the auth state and a live view of users/{uid}. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, loading] = useAuthUser();
  const [profile, setProfile] = useState<{ uid: string; data: UserProfile | null } | null>(null);

  useEffect(() => {
    if (!user) return;
    return watchProfile(user.uid, (data) => setProfile({ uid: user.uid, data }));
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
