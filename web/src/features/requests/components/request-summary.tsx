import { useState } from 'react';
import { ConfirmDialog } from '@/components/ui/dialog';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-provider';
import { formatDate } from '@/lib/format-date';
import type { FeedbackRequest, RequestStatus } from '@/types/request';
import { setRequestStatus } from '../api/requests-api';
import { STATUS_LABELS, availableActions } from '../request-rules';

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

/** Moves that end a request: asked about first, and shown as destructive. */
function confirmation(request: FeedbackRequest, status: RequestStatus) {
  if (status === 'declined') {
    return {
      title: 'Decline this request?',
      message: `${request.requesterName} will see that you declined “${request.title}”. This cannot be undone.`,
      confirmLabel: 'Decline request',
    };
  }
  if (status === 'cancelled') {
    return {
      title: 'Cancel this request?',
      message: `${request.mentorName} will no longer be asked for feedback on “${request.title}”. This cannot be undone.`,
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
      toast({ title: 'The request was not updated', description: 'Reload the page and try again.' });
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
          <button
            key={a.status}
            type="button"
            disabled={busy}
            onClick={() => (destructive ? setAsking(a.status) : void move(a.status))}
            className={cn(
              'rounded-lg px-3 py-1.5 text-sm font-medium transition disabled:opacity-50',
              destructive
                ? 'border border-red-500/40 text-red-300 hover:bg-red-500/10 hover:text-red-200'
                : i === 0
                  ? 'bg-brand-600 text-white hover:bg-brand-500'
                  : 'border border-zinc-700 text-zinc-200 hover:bg-zinc-800',
            )}
          >
            {a.label}
          </button>
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
        <StatusBadge status={request.status} />
      </div>
      {request.description && (
        <p className="text-sm whitespace-pre-wrap text-zinc-300">{request.description}</p>
      )}
      <RequestActions request={request} uid={uid} />
    </section>
  );
}
