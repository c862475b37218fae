import type { ReactNode } from 'react';
import { ExternalLink } from 'lucide-react';
import { Link } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { focusRing } from '@/components/ui/button';
import { PriceNote } from '@/components/price-note';
import { formatDate } from '@/lib/format-date';
import type { Category, PublicMentor } from '@/types/user';
import { useMentor } from '../api/mentors-api';
import { socialLinks } from '../social-links';
import { CategoryTags, RateCardList, RatingSummary, Stars, Turnaround } from './mentor-details';

function Reviews({ mentor }: { mentor: PublicMentor }) {
  if (mentor.reviews.length === 0) return null;
  return (
    <section
      aria-labelledby="reviews-heading"
      className="space-y-3 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6 lg:col-start-1 lg:row-start-2"
    >
      <h2 id="reviews-heading" className="font-semibold text-white">
        Reviews
      </h2>
      <ul className="space-y-3">
        {mentor.reviews.map((r) => (
          <li key={r.requestId} className="space-y-1 rounded-xl bg-zinc-950/60 p-4">
            <div className="flex flex-wrap items-center gap-2 text-sm">
              <Stars rating={r.rating} />
              <span className="font-medium text-white">{r.reviewerName}</span>
              {r.createdAt && <span className="text-zinc-400">· {formatDate(r.createdAt)}</span>}
            </div>
            {r.text && <p className="text-sm whitespace-pre-wrap text-zinc-300">{r.text}</p>}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * /mentors/:id: a listed mentor's public profile, signed in or not, with
 * `action(mentor)` (the request form) beside it.
 */
export function MentorPage({
  id,
  categories,
  action,
}: {
  id: string;
  categories: Category[];
  action: (mentor: PublicMentor) => ReactNode;
}) {
  const { data: mentor, loading } = useMentor(id);
  if (loading) return <p className="text-zinc-400">Loading…</p>;
  if (!mentor) {
    return (
      <p className="rounded-xl border border-zinc-800 bg-zinc-900/60 p-6 text-zinc-300">
        This mentor is not available.{' '}
        <Link to="/" className="text-brand-400 hover:text-brand-300">
          Browse mentors
        </Link>
      </p>
    );
  }
  const links = socialLinks(mentor.social);
  return (
    <div className="grid grid-cols-1 gap-6 lg:grid-cols-[minmax(0,1fr)_24rem]">
      <section className="space-y-6 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6 lg:col-start-1 lg:row-start-1">
        <header className="flex items-center gap-4">
          <Avatar person={{ photoURL: mentor.photoURL, name: mentor.name || mentor.displayName }} size="lg" />
          <div className="min-w-0 space-y-1">
            <h1 className="text-2xl font-semibold tracking-tight text-white">
              {mentor.name || mentor.displayName}
            </h1>
            <p className="text-zinc-400">{mentor.title}</p>
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
              <RatingSummary rating={mentor.rating} />
              <Turnaround days={mentor.turnaroundDays} />
            </div>
          </div>
        </header>
        <CategoryTags mentor={mentor} categories={categories} />
        {mentor.introVideoUrl && (
          <video
            src={mentor.introVideoUrl}
            controls
            playsInline
            preload="metadata"
            aria-label={`Intro clip from ${mentor.name || mentor.displayName}`}
            className="aspect-video w-full rounded-xl border border-zinc-800 bg-black"
          />
        )}
        {mentor.bio && <p className="whitespace-pre-wrap text-zinc-300">{mentor.bio}</p>}
        {(mentor.expertise ?? []).length > 0 && (
          <p className="text-sm text-zinc-300">
            <span className="text-zinc-400">Expertise: </span>
            {mentor.expertise.join(', ')}
          </p>
        )}
        {mentor.previouslyWorkedWith && (
          <p className="text-sm text-zinc-300">
            <span className="text-zinc-400">Worked with: </span>
            {mentor.previouslyWorkedWith}
          </p>
        )}
        {links.length > 0 && (
          <ul aria-label="Social links" className="flex flex-wrap gap-2">
            {links.map((l) => (
              <li key={l.network}>
                <a
                  href={l.href}
                  target="_blank"
                  rel="noreferrer noopener"
                  aria-label={`${l.label}: ${l.text}`}
                  className={`inline-flex items-center gap-1.5 rounded-full border border-zinc-800 px-3 py-1 text-sm text-zinc-300 hover:border-zinc-700 hover:text-white ${focusRing}`}
                >
                  <ExternalLink className="size-3.5 text-zinc-400" aria-hidden />
                  {l.label} <span className="text-zinc-400">{l.text}</span>
                </a>
              </li>
            ))}
          </ul>
        )}
        <div className="space-y-2">
          <RateCardList rateCards={mentor.rateCards ?? []} className="sm:grid-cols-4" />
          <PriceNote />
        </div>
      </section>
      {/* On a phone the booking form comes before the reviews; on a desktop it sits beside both. */}
      <div className="lg:col-start-2 lg:row-span-2 lg:row-start-1">{action(mentor)}</div>
      <Reviews mentor={mentor} />
    </div>
  );
}
