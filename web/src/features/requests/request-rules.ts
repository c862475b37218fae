import { ZERO_DECIMAL } from '@/lib/currency/currencies';
import type { FeedbackRequest, PaymentStatus, RequestStatus } from '@/types/request';

/** Largest video a request takes: what storage.rules allow under videos/ (1 GB). */
export const MAX_VIDEO_BYTES = 1024 * 1024 * 1024;

/** Why a file cannot be the request's video, or null when it can. */
export function checkVideo(file: { type: string; size: number }): string | null {
  if (!file.type.startsWith('video/')) return 'Choose a video file (MP4, MOV or WebM).';
  if (file.size === 0) return 'That video is empty.';
  if (file.size > MAX_VIDEO_BYTES) return 'Videos can be up to 1 GB.';
  return null;
}

/** Storage path of a request's video: videos/{uid}/{time}_{safe name}. */
export function videoPath(uid: string, time: number, fileName: string): string {
  const safe = fileName.replace(/[^\w.-]+/g, '_').replace(/^[._]+/, '') || 'video';
  return `videos/${uid}/${time}_${safe}`;
}

/** How each status reads. */
export const STATUS_LABELS: Record<RequestStatus, string> = {
  pending: 'Pending',
  accepted: 'In progress',
  declined: 'Declined',
  completed: 'Completed',
  cancelled: 'Cancelled',
};

/** How each payment state reads. */
export const PAYMENT_LABELS: Record<PaymentStatus, string> = {
  unpaid: 'Awaiting payment',
  paid: 'Paid',
  refunded: 'Refunded',
};

/** Whether a request is past the due date its mentor's turnaround set (the requester may then cancel it). */
export function isOverdue(request: Pick<FeedbackRequest, 'dueAt'>, now: Date): boolean {
  return request.dueAt !== null && now.getTime() > request.dueAt.getTime();
}

/**
 * The moves a person may make on a request (firestore.rules): label and
 * target status. A mentor accepts only a paid request; the requester
 * cancels a pending one, or an accepted one once it is overdue (refunded).
 */
export function availableActions(
  request: Pick<FeedbackRequest, 'status' | 'mentorId' | 'requesterId' | 'paymentStatus' | 'dueAt'>,
  uid: string | null,
  now: Date = new Date(),
): { label: string; status: RequestStatus }[] {
  if (uid && uid === request.mentorId) {
    if (request.status === 'pending') {
      const decline = { label: 'Decline', status: 'declined' as const };
      return request.paymentStatus === 'paid'
        ? [{ label: 'Accept', status: 'accepted' }, decline]
        : [decline];
    }
    if (request.status === 'accepted') return [{ label: 'Mark completed', status: 'completed' }];
  }
  if (uid && uid === request.requesterId && request.status === 'pending') {
    return [{ label: 'Cancel request', status: 'cancelled' }];
  }
  if (uid && uid === request.requesterId && request.status === 'accepted' && isOverdue(request, now)) {
    return [{ label: 'Cancel for a refund', status: 'cancelled' }];
  }
  return [];
}

/** A charged amount, in Stripe's smallest unit of its currency, as a number of whole units. */
export function fromMinorUnits(amount: number, currency: string): number {
  return ZERO_DECIMAL.has(currency.toUpperCase()) ? amount : amount / 100;
}
