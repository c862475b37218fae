import type { User } from 'firebase/auth';
import { createContext, useContext } from 'react';
import type { UserProfile } from '@/types/user';

/** The signed-in person, their stored profile and role (docs/product-spec.md §3, §4). */
export interface Session {
  /** True until Firebase Auth has restored (or not) a signed-in user. */
  loading: boolean;
  user: User | null;
  profile: UserProfile | null;
  /** The profile's role, 'user' by default and when the profile cannot load. */
  role: string;
}

/** Where the session provider (features/auth) puts the session. */
export const SessionContext = createContext<Session>({
  loading: true,
  user: null,
  profile: null,
  role: 'user',
});

/** The current session. */
export function useSession(): Session {
  return useContext(SessionContext);
}
