import type { RateCard, UserProfile } from '@/types/user';

/** The rate cards every new profile starts with, in USD (docs/product-spec.md §7). */
export const DEFAULT_RATE_CARDS: RateCard[] = [
  { duration: 'Up to 1 min', price: 20 },
  { duration: '1-3 mins', price: 35 },
  { duration: '3-5 mins', price: 50 },
  { duration: '5+ mins', price: 75 },
];

/** The profile created at sign-up: a mentor with role 'user' (docs/product-spec.md §6, §7). */
export function defaultProfile(user: {
  uid: string;
  email: string | null;
  displayName: string | null;
  photoURL: string | null;
}): Omit<UserProfile, 'preferredCurrency' | 'fcmToken'> {
  const name = user.displayName ?? user.email?.split('@')[0] ?? '';
  return {
    id: user.uid,
    name,
    displayName: name,
    email: user.email ?? '',
    photoURL: user.photoURL ?? '',
    title: '',
    bio: '',
    expertise: [],
    taxonomySelections: [],
    previouslyWorkedWith: '',
    social: { instagram: '', twitter: '', facebook: '', linkedin: '' },
    rateCards: DEFAULT_RATE_CARDS,
    isMentor: true,
    stripeConnected: false,
    reviews: [],
    role: 'user',
  };
}

/** The fields a returning user's stored profile lacks; nothing present is overwritten. */
export function missingFields(
  stored: Record<string, unknown>,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(defaults).filter(([key]) => stored[key] === undefined));
}
