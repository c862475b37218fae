import type { ReactNode } from 'react';
import { SessionContext, type Session } from '@/lib/session';
import { useAuthUser, useProfile } from '../api/session-api';

/** Provides the session: the auth state and a live view of users/{uid}. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [user, loading] = useAuthUser();
  const { data: profile } = useProfile(user?.uid ?? null);
  const value: Session = {
    loading,
    user: user ?? null,
    profile: user ? profile : null,
    role: (user && profile?.role) || 'user',
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
