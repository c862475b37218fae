import { Receipt, RotateCw } from 'lucide-react';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Button } from '@/components/ui/button';
import { formatAmount } from '@/lib/currency/format';
import { ZERO_DECIMAL } from '@/lib/currency/currencies';
import { formatDate } from '@/lib/format-date';
import { useSession } from '@/lib/session';
import type { Payment } from '@/types/request';
import { fetchPayouts, useReceivedPayments, type Payout } from '../api/earnings-api';

/** An amount in a currency's smallest unit (as Stripe counts it), as the app shows it. */
function minor(amount: number, currency: string): string {
  return formatAmount(ZERO_DECIMAL.has(currency) ? amount : amount / 100, currency);
}

/** What a mentor kept, per currency: payments received less those refunded ("$45 · €38.97"). */
function earned(payments: Payment[]): string {
  const totals = new Map<string, number>();
  for (const p of payments) {
    if (!p.refunded) totals.set(p.currency, (totals.get(p.currency) ?? 0) + p.amount);
  }
  return [...totals].map(([code, amount]) => minor(amount, code)).join(' · ') || minor(0, 'USD');
}

type Payouts = { state: 'loading' } | { state: 'error'; message: string } | { state: 'done'; list: Payout[] };

/**
 * A mentor's earnings: what they kept from the payments they received, each
 * payment with its receipt and request, and the transfers Stripe made to
 * their payout account (from the payments function; a retry when it cannot
 * be reached).
 */
export function EarningsPanel({ connected }: { connected: boolean }) {
  const { user } = useSession();
  const { data: payments, loading } = useReceivedPayments(user?.uid ?? null);
  const [payouts, setPayouts] = useState<Payouts>({ state: 'loading' });
  const latest = useRef(0);
  const fetchList = useCallback(() => {
    const call = ++latest.current; // only the newest answer is shown
    fetchPayouts(user).then(
      (list) => {
        if (call === latest.current) setPayouts({ state: 'done', list });
      },
      (err: unknown) => {
        if (call !== latest.current) return;
        setPayouts({
          state: 'error',
          message: navigator.onLine
            ? `Payouts could not be loaded: ${err instanceof Error ? err.message : 'try again'}.`
            : 'You are offline, so payouts could not be loaded.',
        });
      },
    );
  }, [user]);
  // Stripe transfers (and reverses) a payout before the payment is recorded or marked
  // refunded, so a payment arriving or refunded while the panel is open fetches payouts again.
  const paid = payments.map((p) => `${p.id}${p.refunded ? ':refunded' : ''}`).join();
  useEffect(() => {
    if (connected) fetchList();
  }, [connected, fetchList, paid]);
  // A payout's receipt is the receipt of the payment it came from (the same request).
  const receipts = new Map(payments.filter((p) => p.receiptUrl).map((p) => [p.requestId, p.receiptUrl]));
  const retry = () => {
    setPayouts({ state: 'loading' });
    fetchList();
  };

  return (
    <section
      aria-labelledby="earnings-heading"
      className="space-y-4 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6"
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="earnings-heading" className="font-semibold text-white">
          Earnings
        </h2>
        {!loading && <p className="text-sm text-zinc-300">Earned {earned(payments)}</p>}
      </div>
      {loading ? (
        <p className="text-sm text-zinc-400">Loading payments…</p>
      ) : payments.length === 0 ? (
        <p className="text-sm text-zinc-400">No payments yet. They appear here once a request is paid.</p>
      ) : (
        <ul aria-label="Payments received" className="divide-y divide-zinc-800 text-sm">
          {payments.map((p) => (
            <li key={p.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-2">
              <span className="w-28 text-zinc-400">{p.createdAt ? formatDate(p.createdAt) : 'Just now'}</span>
              <span className="font-medium text-white">{minor(p.amount, p.currency)}</span>
              <span className={p.refunded ? 'text-rose-300' : 'text-emerald-300'}>
                {p.refunded ? 'Refunded' : 'Paid'}
              </span>
              <span className="ml-auto flex gap-3">
                <Link to={`/requests/${p.requestId}`} className="text-brand-400 hover:text-brand-300">
                  Request
                </Link>
                {p.receiptUrl && (
                  <a
                    href={p.receiptUrl}
                    target="_blank"
                    rel="noreferrer"
                    className="inline-flex items-center gap-1 text-brand-400 hover:text-brand-300"
                  >
                    <Receipt className="size-3.5" aria-hidden />
                    Receipt
                  </a>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
      <div className="space-y-2">
        <h3 className="text-sm font-medium text-white">Payouts to your Stripe account</h3>
        {!connected ? (
          <p className="text-sm text-zinc-400">Connect payouts to receive transfers.</p>
        ) : payouts.state === 'loading' ? (
          <p className="text-sm text-zinc-400">Loading payouts…</p>
        ) : payouts.state === 'error' ? (
          <div className="flex flex-wrap items-center gap-3">
            <p role="alert" className="text-sm text-rose-300">
              {payouts.message}
            </p>
            <Button size="sm" icon={<RotateCw className="size-3.5" aria-hidden />} onClick={retry}>
              Try again
            </Button>
          </div>
        ) : payouts.list.length === 0 ? (
          <p className="text-sm text-zinc-400">No payouts yet.</p>
        ) : (
          <ul aria-label="Payouts" className="divide-y divide-zinc-800 text-sm">
            {payouts.list.map((t) => (
              <li key={t.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 py-2">
                <span className="w-28 text-zinc-400">{formatDate(t.created)}</span>
                <span className="font-medium text-white">{minor(t.amount, t.currency)}</span>
                <span className={t.amountReversed > 0 ? 'text-rose-300' : 'text-emerald-300'}>
                  {t.reversed
                    ? 'Taken back (refund)'
                    : t.amountReversed > 0
                      ? `${minor(t.amountReversed, t.currency)} taken back`
                      : 'Transferred'}
                </span>
                {receipts.get(t.requestId) && (
                  <span className="ml-auto">
                    <a
                      href={receipts.get(t.requestId)}
                      target="_blank"
                      rel="noreferrer"
                      aria-label={`Receipt for the ${minor(t.amount, t.currency)} payout of ${formatDate(t.created)}`}
                      className="inline-flex items-center gap-1 text-brand-400 hover:text-brand-300"
                    >
                      <Receipt className="size-3.5" aria-hidden />
                      Receipt
                    </a>
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
