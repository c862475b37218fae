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
  /** The video's length in seconds as the browser read it at upload; null when unknown. */
  videoDuration: number | null;
  /** The video's frame rate, read from its MP4 boxes at upload; null when unknown (older requests). */
  videoFrameRate: number | null;
  /** The chosen rate card; its price is in USD like every stored price. */
  rateCard: RateCard;
  /** The currency the requester saw the price in. */
  currency: string;
  status: RequestStatus;
  /** Set by the payments function only: unpaid → paid (webhook) → refunded (declined or cancelled). */
  paymentStatus: PaymentStatus;
  /** The payment's id (payments/{paymentId}) once paid. */
  paymentId: string;
  /**
   * When the mentor's promised turnaround ends (set by the payments function
   * at payment); null when the mentor promised none. Once it passes, the
   * requester may cancel an accepted request for a refund.
   */
  dueAt: Date | null;
  /** How many versions of the video the request has: 1 (its own video) until the requester adds a take. */
  versionCount: number;
  /** The storage path of the latest version's video ('' while there is only v1). */
  latestVideoPath: string;
  /** A still of the request's own video (v1) for lists; null when none was made. */
  thumbnailPath: string | null;
  /** A still of the latest version's video (v2 on); null when none was made. */
  latestThumbnailPath: string | null;
  createdAt: Date | null;
  updatedAt: Date | null;
}

/**
 * One take of a request's video: v1 is the request's own video, later ones
 * are stored in feedbackRequests/{id}/versions/{number} by the requester.
 */
export interface VideoVersion {
  number: number;
  videoPath: string;
  videoUrl: string;
  /** Seconds, as the browser read it at upload; null when unknown. */
  videoDuration: number | null;
  /** Frames per second read from the file's boxes; null when unknown. */
  videoFrameRate: number | null;
  /** What the requester changed in this take ('' when nothing was said). */
  note: string;
  createdAt: Date | null;
}

/** A shape drawn on the video frame, in coordinates from 0 to 1 across the frame. */
export interface DrawnShape {
  kind: 'pen' | 'arrow' | 'rect' | 'ellipse';
  color: string;
  /** pen: x0, y0, x1, y1, …; the others: the two corners (or the arrow's tail and head). */
  points: number[];
}

/** A comment on a request (docs/product-spec.md §3); replies name their parent. */
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
  /** Where a range comment ends (its out point), after videoTimestamp; null for a moment. */
  videoEndTimestamp: number | null;
  /** Shapes drawn on the frame at videoTimestamp, shown when the player is there. */
  drawing: DrawnShape[];
  /** Resolved by either party (Frame.io's "complete"). */
  resolved: boolean;
  /** When the author last edited the text; null when never. */
  editedAt: Date | null;
  /** The version of the video it is about (1 for comments stored before versions existed). */
  version: number;
  /** The comment of an earlier version this one was carried forward from; null when written here. */
  carriedFrom: string | null;
  isReply: boolean;
  parentCommentId?: string;
  repliesCount: number;
  deleted: boolean;
  /** True while the comment is written locally but not yet stored (offline, or in flight). */
  pending?: boolean;
}
