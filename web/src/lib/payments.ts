import { timestampToDate } from '@/lib/firebase';
import type { Payment } from '@/types/request';

/** A stored payment (payments/{id}, written by the payments function) as the app reads it. */
export function paymentFromData(id: string, d: Record<string, unknown>): Payment {
  return {
    id,
    requestId: String(d.requestId ?? ''),
    amount: Number(d.amount ?? 0),
    currency: String(d.currency ?? 'USD'),
    receiptUrl: String(d.receiptUrl ?? ''),
    createdAt: timestampToDate(d.createdAt),
    refunded: Boolean(d.refundedAt),
  };
}
