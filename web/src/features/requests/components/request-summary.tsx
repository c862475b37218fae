import { Clock, Receipt, Star } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { Button } from '@/components/ui/button';
import { ConfirmDialog } from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Textarea } from '@/components/ui/input';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { formatAmount } from '@/lib/currency/format';
import { formatDate, formatDateTime } from '@/lib/format-date';
import { useSession } from '@/lib/session';
import type { FeedbackRequest, PaymentStatus, RequestStatus } from '@/types/request';
import { setRequestStatus, startCheckout, submitReview, usePayment, useReview } from '../api/requests-api';
import { PAYMENT_LABELS, STATUS_LABELS, availableActions, fromMinorUnits, isOverdue } from '../request-rules';

const badgeColors: Record<RequestStatus, string> = {
  pending: 'bg-amber-400/10 text-amber-300 ring-amber-400/20',
  accepted: 'bg-sky-400/10 text-sky-300 ring-sky-400/20',
  completed: 'bg-emerald-400/10 text-emerald-300 ring-emerald-400/20',
  declined: 'bg-zinc-400/10 text-zinc-400 ring-zinc-400/20',
  cancelled: 'bg-zinc-400/10 text-zinc-400 ring-zinc-400/20',
};

/** A request's status as a coloured badge. */
export function StatusBadge({ status }: { status: RequestStatus }) {
  return (
    <span
      className={cn('rounded-full px-2.5 py-0.5 text-xs font-medium ring-1 ring-inset', badgeColors[status])}
    >
      {STATUS_LABELS[status] ?? status}
    </span>
  );
}

const paymentColors: Record<PaymentStatus, string> = {
  unpaid: 'bg-amber-400/10 text-amber-300 ring-amber-400/20',
  paid: 'bg-emerald-400/10 text-emerald-300 ring-emerald-400/20',
  refunded: 'bg-sky-400/10 text-sky-300 ring-sky-400/20',
};

/** A request's payment state as a badge. */
export function PaymentBadge({ status }: { status: PaymentStatus }) {
  return (
    <span
      className={cn(
        'rounded-full px-2.5 py-0.5 text-xs font-medium ring-1 ring-inset',
        paymentColors[status],
      )}
    >
      {PAYMENT_LABELS[status] ?? status}
    </span>
  );
}

/**
 * The payment of a request: what was paid (or refunded) with its receipt;
 * for the requester of an unpaid open request, a button to pay.
 */
function PaymentPanel({ request, uid }: { request: FeedbackRequest; uid: string | null }) {
  const { user } = useSession();
  const { formatPrice } = useCurrency();
  const toast = useToast();
  const [params] = useSearchParams();
  const [busy, setBusy] = useState(false);
  const { data: payment } = usePayment(request.paymentId);
  const requester = uid === request.requesterId;

  async function pay() {
    setBusy(true);
    try {
      window.location.assign(await startCheckout(user, request.id));
    } catch (err) {
      setBusy(false);
      toast({
        tone: 'error',
        title: 'Payment could not start',
        description: err instanceof Error ? err.message : 'Try again in a moment.',
      });
    }
  }

  if (request.paymentStatus === 'unpaid') {
    if (!requester || request.status !== 'pending') {
      return requester ? null : (
        <p className="text-sm text-zinc-400">Waiting for {request.requesterName} to pay.</p>
      );
    }
    if (params.get('checkout') === 'done') {
      return (
        <p role="status" className="text-sm text-zinc-300">
          Payment submitted. Confirming it with Stripe…
        </p>
      );
    }
    return (
      <div className="flex flex-wrap items-center gap-3 rounded-xl bg-amber-400/5 p-3 ring-1 ring-amber-400/20">
        <p className="flex-1 text-sm text-zinc-300">
          {params.get('checkout') === 'cancelled' ? 'Payment cancelled. ' : ''}
          {request.mentorName} can accept your request once it is paid.
        </p>
        <Button variant="primary" disabled={busy} onClick={() => void pay()}>
          {busy ? 'Opening checkout…' : `Pay ${formatPrice(request.rateCard.price)}`}
        </Button>
      </div>
    );
  }
  if (!payment) return null;
  const amount = formatAmount(fromMinorUnits(payment.amount, payment.currency), payment.currency);
  return (
    <p className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm text-zinc-300">
      <Receipt className="size-4 text-zinc-400" aria-hidden />
      <span>
        {request.paymentStatus === 'refunded' ? `Refunded ${amount}` : `Paid ${amount}`}
        {payment.createdAt && ` on ${formatDate(payment.createdAt)}`}
      </span>
      {payment.receiptUrl && (
        <a
          href={payment.receiptUrl}
          target="_blank"
          rel="noreferrer"
          className="font-medium text-brand-400 hover:text-brand-300"
        >
          View receipt
        </a>
      )}
    </p>
  );
}

/** The requester's rating and review of a completed request: a form until it is given, then the review. */
function ReviewPanel({ request, uid }: { request: FeedbackRequest; uid: string | null }) {
  const { user, profile } = useSession();
  const toast = useToast();
  const { data: review, loading } = useReview(request.id);
  const [rating, setRating] = useState(0);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const requester = uid === request.requesterId;
  if (request.status !== 'completed' || loading) return null;
  if (review) {
    return (
      <div className="space-y-1 rounded-xl bg-zinc-900/60 p-4 ring-1 ring-zinc-800">
        <p className="text-sm font-medium text-white">
          {requester ? 'Your review' : `${request.requesterName}'s review`}
        </p>
        <p className="text-sm text-amber-400" aria-label={`${review.rating} out of 5 stars`}>
          {'★'.repeat(review.rating)}
          <span className="text-zinc-600">{'★'.repeat(5 - review.rating)}</span>
        </p>
        {review.text && <p className="text-sm whitespace-pre-wrap text-zinc-300">{review.text}</p>}
      </div>
    );
  }
  if (!requester) return null;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (rating < 1) return;
    setBusy(true);
    try {
      await submitReview(user, request, {
        rating,
        text,
        reviewerName: profile?.name || user?.displayName || 'A requester',
      });
      toast({ title: 'Thanks for your review' });
    } catch {
      toast({ tone: 'error', title: 'Your review was not saved', description: 'Try again in a moment.' });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      onSubmit={(e) => void submit(e)}
      aria-label="Review this feedback"
      className="space-y-3 rounded-xl bg-zinc-900/60 p-4 ring-1 ring-zinc-800"
    >
      <fieldset>
        <legend className="mb-2 text-sm font-medium text-white">
          How was {request.mentorName}&apos;s feedback?
        </legend>
        <div className="flex gap-1">
          {[1, 2, 3, 4, 5].map((n) => (
            <label
              key={n}
              className="cursor-pointer rounded p-0.5 has-focus-visible:ring-2 has-focus-visible:ring-brand-500"
            >
              <input
                type="radio"
                name="rating"
                value={n}
                className="sr-only"
                checked={rating === n}
                onChange={() => setRating(n)}
                aria-label={`${n} star${n === 1 ? '' : 's'}`}
              />
              <Star
                className={cn('size-6', n <= rating ? 'fill-amber-400 text-amber-400' : 'text-zinc-500')}
                aria-hidden
              />
            </label>
          ))}
        </div>
      </fieldset>
      <Field label="Review">
        <Textarea
          value={text}
          maxLength={1000}
          onChange={(e) => setText(e.target.value)}
          placeholder="What helped? Others will read this on their profile."
          className="min-h-20"
        />
      </Field>
      <Button type="submit" variant="primary" disabled={busy || rating < 1}>
        Submit review
      </Button>
    </form>
  );
}

/** Moves that end a request: asked about first, and shown as destructive. */
function confirmation(request: FeedbackRequest, status: RequestStatus) {
  const refund = request.paymentStatus === 'paid' ? ' The payment is refunded in full.' : '';
  if (status === 'declined') {
    return {
      title: 'Decline this request?',
      message: `${request.requesterName} will see that you declined “${request.title}”.${refund} This cannot be undone.`,
      confirmLabel: 'Decline request',
    };
  }
  if (status === 'cancelled') {
    return {
      title: 'Cancel this request?',
      message: `${request.mentorName} will no longer be asked for feedback on “${request.title}”.${refund} This cannot be undone.`,
      confirmLabel: 'Cancel request',
    };
  }
  return null;
}

/**
 * The buttons for the moves the signed-in person may make on a request;
 * declining and cancelling ask first and are styled as destructive.
 */
export function RequestActions({ request, uid }: { request: FeedbackRequest; uid: string | null }) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState<RequestStatus | null>(null);
  const actions = availableActions(request, uid);
  if (actions.length === 0) return null;
  async function move(status: RequestStatus) {
    setBusy(true);
    try {
      await setRequestStatus(request.id, status);
    } catch {
      toast({
        tone: 'error',
        title: 'The request was not updated',
        description: 'Reload the page and try again.',
      });
    } finally {
      setBusy(false);
    }
  }
  const question = asking && confirmation(request, asking);
  return (
    <div className="flex flex-wrap gap-2">
      {actions.map((a, i) => {
        const destructive = confirmation(request, a.status) !== null;
        return (
          <Button
            key={a.status}
            disabled={busy}
            onClick={() => (destructive ? setAsking(a.status) : void move(a.status))}
            variant={destructive ? 'danger' : i === 0 ? 'primary' : 'secondary'}
          >
            {a.label}
          </Button>
        );
      })}
      {question && asking && (
        <ConfirmDialog
          open
          destructive
          title={question.title}
          message={question.message}
          confirmLabel={question.confirmLabel}
          cancelLabel="Keep request"
          onConfirm={() => void move(asking)}
          onClose={() => setAsking(null)}
        />
      )}
    </div>
  );
}

/**
 * When feedback on an open, paid request is due (the mentor's turnaround);
 * once that has passed, it says so, and tells the requester they may cancel
 * for a full refund.
 */
function DueNote({ request, uid }: { request: FeedbackRequest; uid: string | null }) {
  if (!request.dueAt || request.paymentStatus !== 'paid') return null;
  if (request.status !== 'pending' && request.status !== 'accepted') return null;
  const due = formatDateTime(request.dueAt);
  const overdue = isOverdue(request, new Date());
  return (
    <p
      className={cn(
        'flex items-start gap-2 text-sm',
        overdue ? 'rounded-xl bg-rose-500/5 p-3 text-rose-200 ring-1 ring-rose-500/20' : 'text-zinc-300',
      )}
    >
      <Clock className="mt-0.5 size-4 shrink-0 text-zinc-400" aria-hidden />
      <span>
        {!overdue
          ? `Feedback due by ${due}.`
          : uid === request.requesterId
            ? `Feedback was due by ${due}. ${request.mentorName} has not sent it: you can cancel for a full refund.`
            : `Feedback was due by ${due}. ${request.requesterName} can now cancel for a full refund.`}
      </span>
    </p>
  );
}

/** The request page's details: title, the two people, price, status, description and actions. */
export function RequestSummary({ request, uid }: { request: FeedbackRequest; uid: string | null }) {
  const { formatPrice } = useCurrency();
  const mine = uid === request.requesterId;
  return (
    <section className="space-y-3">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 space-y-1">
          <h1 className="text-xl font-semibold tracking-tight text-white sm:text-2xl">{request.title}</h1>
          <p className="text-sm text-zinc-400">
            {mine ? `To ${request.mentorName}` : `From ${request.requesterName}`} ·{' '}
            {request.rateCard.duration} · {formatPrice(request.rateCard.price)}
            {request.createdAt && ` · ${formatDate(request.createdAt)}`}
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <StatusBadge status={request.status} />
          <PaymentBadge status={request.paymentStatus} />
        </div>
      </div>
      {request.description && (
        <p className="text-sm whitespace-pre-wrap text-zinc-300">{request.description}</p>
      )}
      <PaymentPanel request={request} uid={uid} />
      <DueNote request={request} uid={uid} />
      <RequestActions request={request} uid={uid} />
      <ReviewPanel request={request} uid={uid} />
    </section>
  );
}
