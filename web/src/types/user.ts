/** One priced option a mentor offers; prices are stored in USD. */
export interface RateCard {
  duration: string;
  price: number;
}

/** Social profile links. */
export interface SocialLinks {
  instagram: string;
  twitter: string;
  facebook: string;
  linkedin: string;
}

/** A stored user profile, users/{uid} (spec §3). */
export interface UserProfile {
  id: string;
  name: string;
  displayName: string;
  email: string;
  photoURL: string;
  title: string;
  bio: string;
  expertise: string[];
  taxonomySelections: string[];
  previouslyWorkedWith: string;
  social: SocialLinks;
  rateCards: RateCard[];
  isMentor: boolean;
  stripeConnected: boolean;
  reviews: unknown[];
  role: string;
  preferredCurrency?: string;
  fcmToken?: string;
}

/** A category of expertise (spec §3). */
export interface Category {
  id: string;
  name: string;
  emoji?: string;
}
