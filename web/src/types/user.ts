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

/** A stored user profile, users/{uid} (docs/product-spec.md §3). */
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
  /** The days within which a mentor promises feedback once paid (1 to 30); null when they promise none. */
  turnaroundDays?: number | null;
  /** A mentor's optional intro clip (its download URL, under intros/{uid}/). */
  introVideoUrl?: string;
}

/** A category of expertise (docs/product-spec.md §3). */
export interface Category {
  id: string;
  name: string;
  emoji?: string;
}

/** A review of a completed request, as the mentor's public profile lists it. */
export interface Review {
  requestId: string;
  reviewerName: string;
  /** 1 to 5. */
  rating: number;
  text: string;
  createdAt: Date | null;
}

/** The profile fields its owner edits and the public projection shows. */
export type ProfileField =
  | 'name'
  | 'displayName'
  | 'photoURL'
  | 'title'
  | 'bio'
  | 'expertise'
  | 'taxonomySelections'
  | 'previouslyWorkedWith'
  | 'social'
  | 'rateCards'
  | 'turnaroundDays'
  | 'introVideoUrl';

/**
 * A listed mentor, mentors/{uid}: the public projection of a complete mentor
 * profile that the profiles function keeps (no e-mail, push token, Stripe
 * or role fields). bookable: the mentor can take paid requests.
 */
export interface PublicMentor extends Pick<UserProfile, 'id' | ProfileField> {
  bookable: boolean;
  /** When the mentor was first listed (for the directory's "newest"); null on older projections. */
  listedAt: Date | null;
  rating: { average: number; count: number };
  /** The latest reviews, newest first. */
  reviews: Review[];
}
