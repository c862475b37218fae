import type { User } from 'firebase/auth';
import { collection, query, where } from 'firebase/firestore';
import { firebase } from '@/lib/firebase';
import { useLiveQuery, type Live } from '@/lib/firebase-live';
import { paymentFromData } from '@/lib/payments';
import type { Payment } from '@/types/request';

/** A transfer to a mentor's Stripe account, as the payments function lists it (amounts in minor units). */
export interface Payout {
  id: string;
  amount: number;
  amountReversed: number;
  currency: string;
  reversed: boolean;
  /** When Stripe made it. */
  created: Date;
  requestId: string;
}

/** The payments a mentor received (payments/ with their mentorId), newest first, live. */
export function useReceivedPayments(uid: string | null): Live<Payment[]> {
  return useLiveQuery(
    uid ? `payments?mentorId=${uid}` : null,
    () => query(collection(firebase().db, 'payments'), where('mentorId', '==', uid)),
    {
      read: (snap) =>
        snap.docs
          .map((d) => paymentFromData(d.id, d.data({ serverTimestamps: 'estimate' })))
          .sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0)),
      initial: [],
      log: 'Error reading the payments received:',
    },
  );
}

/**
 * The transfers Stripe made to the signed-in mentor's connected account
 * (the payments function's /api/payments/earnings), newest first. Fails with
 * the function's message, or a plain one when it cannot be reached.
 */
export async function fetchPayouts(user: User | null): Promise<Payout[]> {
  if (!user) throw new Error('No user logged in');
  const response = await fetch('/api/payments/earnings', {
    method: 'POST',
    headers: { Authorization: `Bearer ${await user.getIdToken()}` },
  });
  const body = (await response.json().catch(() => ({}))) as {
    transfers?: (Omit<Payout, 'created'> & { created: number })[];
    error?: { message?: string };
  };
  if (!response.ok || !body.transfers) {
    throw new Error(body.error?.message ?? `Payouts are unavailable (${response.status})`);
  }
  return body.transfers.map((t) => ({ ...t, created: new Date(t.created * 1000) }));
}
