import type { RateCard } from './user';

/** Where a feedback request is in its life (firestore.rules allows these moves). */
export type RequestStatus = 'pending' | 'accepted' | 'declined' | 'completed' | 'cancelled';

/** Where a request's payment is. */
export type PaymentStatus = 'unpaid' | 'paid' | 'refunded';

/** A recorded payment, payments/{id}: what was charged, in the currency charged (minor units). */
export interface Payment {
  id: string;
  /** The request it paid for. */
  requestId: string;
  amount: number;
  currency: string;
  receiptUrl: string;
  createdAt: Date | null;
  refunded: boolean;
}

/** The requester's rating (1–5) and review of a completed request. */
export interface RequestReview {
  rating: number;
  text: string;
}

/** A feedback request, feedbackRequests/{id}: a requester's video sent to a mentor. */
export interface FeedbackRequest {
  id: string;
  requesterId: string;
  requesterName: string;
  mentorId: string;
  mentorName: string;
  title: string;
  description: string;
  videoPath: string;
  videoUrl: string;
  /** The chosen rate card; its price is in USD like every stored price. */
  rateCard: RateCard;
  /** The currency the requester saw the price in. */
  currency: string;
  status: RequestStatus;
  /** Set by the payments function only: unpaid → paid (webhook) → refunded (declined or cancelled). */
  paymentStatus: PaymentStatus;
  /** The payment's id (payments/{paymentId}) once paid. */
  paymentId: string;
  createdAt: Date | null;
  updatedAt: Date | null;
}

/** A comment on a request (spec §3); replies name their parent. */
export interface Comment {
  id: string;
  userId: string;
  userDisplayName: string;
  userProfilePicture: string | null;
  content: string;
  mediaUrl: string;
  mediaType: string;
  /** Server time of posting; null while the write is pending. */
  timestamp: Date | null;
  /** Seconds into the video the comment is about; null for a general comment. */
  videoTimestamp: number | null;
  isReply: boolean;
  parentCommentId?: string;
  repliesCount: number;
  deleted: boolean;
  /** True while the comment is written locally but not yet stored (offline, or in flight). */
  pending?: boolean;
}
