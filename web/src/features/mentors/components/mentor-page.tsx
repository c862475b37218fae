import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { PriceNote } from '@/components/price-note';
import { formatDate } from '@/lib/format-date';
import type { Category, PublicMentor } from '@/types/user';
import { useMentor } from '../api/mentors-api';
import { CategoryTags, RateCardList, RatingSummary, Stars } from './mentor-details';

function Reviews({ mentor }: { mentor: PublicMentor }) {
  if (mentor.reviews.length === 0) return null;
  return (
    <section aria-labelledby="reviews-heading" className="space-y-3">
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
  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_24rem]">
      <section className="space-y-6 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6">
        <header className="flex items-center gap-4">
          <Avatar person={{ photoURL: mentor.photoURL, name: mentor.name || mentor.displayName }} size="lg" />
          <div className="min-w-0 space-y-1">
            <h1 className="text-2xl font-semibold tracking-tight text-white">
              {mentor.name || mentor.displayName}
            </h1>
            <p className="text-zinc-400">{mentor.title}</p>
            <RatingSummary rating={mentor.rating} />
          </div>
        </header>
        <CategoryTags mentor={mentor} categories={categories} />
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
        <div className="space-y-2">
          <RateCardList rateCards={mentor.rateCards ?? []} className="sm:grid-cols-4" />
          <PriceNote />
        </div>
        <Reviews mentor={mentor} />
      </section>
      <div>{action(mentor)}</div>
    </div>
  );
}
