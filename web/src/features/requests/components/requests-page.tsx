import { Inbox, Send } from 'lucide-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { formatNotificationTime } from '@/lib/format-date';
import { useSession } from '@/lib/session';
import type { FeedbackRequest, RequestStatus } from '@/types/request';
import { useMyRequests, useVideoUrl } from '../api/requests-api';
import { STATUS_LABELS } from '../request-rules';
import { latestVideoPath, versionLabel } from '../versions';
import { PaymentBadge, RequestActions, StatusBadge } from './request-summary';

const FILTERS: (RequestStatus | 'all')[] = [
  'all',
  'pending',
  'accepted',
  'completed',
  'declined',
  'cancelled',
];

/**
 * A still of a request's latest version: the image stored at upload, else
 * the first frame as the browser draws it from the video's start (#t=0.1);
 * a version chip when there are several.
 */
function RequestThumbnail({ request }: { request: FeedbackRequest }) {
  const path = latestVideoPath(request);
  const still = request.versionCount > 1 ? request.latestThumbnailPath : request.thumbnailPath;
  const url = useVideoUrl({
    videoPath: still ?? path,
    videoUrl: !still && path === request.videoPath ? request.videoUrl : '',
  });
  return (
    <span className="relative block aspect-video w-28 shrink-0 overflow-hidden rounded-lg border border-zinc-800 bg-black sm:w-32">
      {url && still && (
        <img src={url} alt="" loading="lazy" decoding="async" className="size-full object-cover" />
      )}
      {url && !still && (
        <video
          src={`${url}#t=0.1`}
          preload="metadata"
          muted
          playsInline
          tabIndex={-1}
          aria-hidden
          className="pointer-events-none size-full object-cover"
        />
      )}
      {request.versionCount > 1 && (
        <span className="absolute right-1 bottom-1 rounded bg-black/75 px-1.5 py-0.5 font-mono text-xs text-white">
          {versionLabel(request.versionCount)}
        </span>
      )}
    </span>
  );
}

function RequestRow({
  request,
  side,
  uid,
}: {
  request: FeedbackRequest;
  side: 'sent' | 'received';
  uid: string;
}) {
  const { formatPrice } = useCurrency();
  return (
    <li className="flex flex-col gap-3 p-4 sm:flex-row sm:items-center">
      <Link to={`/requests/${request.id}`} className="flex min-w-0 flex-1 items-start gap-3 hover:opacity-90">
        <RequestThumbnail request={request} />
        <span className="min-w-0 flex-1 space-y-1">
          <span className="flex flex-wrap items-center gap-2">
            <span className="min-w-0 font-medium break-words text-white">{request.title}</span>
            <StatusBadge status={request.status} />
            <PaymentBadge status={request.paymentStatus} />
          </span>
          <span className="block text-sm text-zinc-400">
            {side === 'sent' ? `To ${request.mentorName}` : `From ${request.requesterName}`} ·{' '}
            {request.rateCard.duration} · {formatPrice(request.rateCard.price)} ·{' '}
            {formatNotificationTime(request.createdAt)}
            {request.versionCount > 1 && ` · ${request.versionCount} versions`}
          </span>
        </span>
      </Link>
      {side === 'received' && <RequestActions request={request} uid={uid} />}
    </li>
  );
}

/** /requests: the requests a person sent and received, live, filtered by status. */
export function RequestsPage() {
  const { user } = useSession();
  const uid = user?.uid ?? null;
  const { data: requests, loading, error } = useMyRequests(uid);
  const [chosenSide, setSide] = useState<'received' | 'sent' | null>(null);
  // Until the person picks a tab, show the side that has requests (received first).
  const side =
    chosenSide ?? (requests.received.length === 0 && requests.sent.length > 0 ? 'sent' : 'received');
  const [filter, setFilter] = useState<RequestStatus | 'all'>('all');
  const list = requests[side].filter((r) => filter === 'all' || r.status === filter);
  const count = (s: RequestStatus | 'all') =>
    requests[side].filter((r) => s === 'all' || r.status === s).length;
  const tab = (active: boolean) =>
    cn(
      'inline-flex items-center gap-2 rounded-lg px-3 py-2 text-sm font-medium transition',
      active ? 'bg-zinc-800 text-white' : 'text-zinc-400 hover:text-white',
    );
  return (
    <section className="mx-auto max-w-3xl space-y-6">
      <header className="space-y-1">
        <h1 className="text-2xl font-semibold tracking-tight text-white sm:text-3xl">Requests</h1>
        <p className="text-sm text-zinc-400">Videos waiting for feedback, and the feedback you asked for.</p>
      </header>
      <div
        role="tablist"
        aria-label="Requests"
        className="flex gap-1 rounded-xl border border-zinc-800 bg-zinc-900/60 p-1"
      >
        <button
          role="tab"
          type="button"
          aria-selected={side === 'received'}
          className={tab(side === 'received')}
          onClick={() => setSide('received')}
        >
          <Inbox className="size-4" aria-hidden /> Received ({requests.received.length})
        </button>
        <button
          role="tab"
          type="button"
          aria-selected={side === 'sent'}
          className={tab(side === 'sent')}
          onClick={() => setSide('sent')}
        >
          <Send className="size-4" aria-hidden /> Sent ({requests.sent.length})
        </button>
      </div>
      <nav aria-label="Status" className="flex flex-wrap gap-2">
        {FILTERS.map((s) => (
          <button
            key={s}
            type="button"
            aria-pressed={filter === s}
            onClick={() => setFilter(s)}
            className={cn(
              'rounded-full border px-3 py-1 text-xs transition',
              filter === s
                ? 'border-brand-500 bg-brand-500/15 text-white'
                : 'border-zinc-800 text-zinc-400 hover:text-white',
            )}
          >
            {s === 'all' ? 'All' : STATUS_LABELS[s]}{' '}
            {count(s) > 0 && <span className="text-zinc-400">{count(s)}</span>}
          </button>
        ))}
      </nav>
      <div className="overflow-hidden rounded-2xl border border-zinc-800 bg-zinc-900/60">
        {error ? (
          <p className="p-8 text-center text-sm text-zinc-400">
            Your requests could not be loaded. Reload to try again.
          </p>
        ) : loading ? (
          <p className="p-8 text-center text-sm text-zinc-400">Loading…</p>
        ) : list.length === 0 ? (
          <p className="p-8 text-center text-sm text-zinc-400">
            {side === 'sent' ? (
              <>
                No requests here.{' '}
                <Link to="/" className="text-brand-400 hover:text-brand-300">
                  Find a mentor
                </Link>
              </>
            ) : (
              'No requests here yet.'
            )}
          </p>
        ) : (
          <ul className="divide-y divide-zinc-800/70">
            {list.map((r) => (
              <RequestRow key={r.id} request={r} side={side} uid={uid ?? ''} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
