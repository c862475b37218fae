import { useState } from 'react';
import { Link } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { cn } from '@/lib/cn';
import { PriceNote } from '@/components/price-note';
import type { Category, PublicMentor } from '@/types/user';
import { useCategories, useMentors } from '../api/mentors-api';
import { CategoryTags, RateCardList, RatingSummary } from './mentor-details';

function MentorCard({ mentor, categories }: { mentor: PublicMentor; categories: Category[] }) {
  return (
    <Link
      to={`/mentors/${mentor.id}`}
      className="flex flex-col gap-4 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 transition hover:border-zinc-700 hover:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-brand-400"
    >
      <div className="flex items-start gap-3">
        <Avatar person={{ photoURL: mentor.photoURL, name: mentor.name || mentor.displayName }} size="md" />
        <div className="min-w-0">
          <h2 className="truncate font-semibold text-white">{mentor.name || mentor.displayName}</h2>
          <p className="line-clamp-2 text-sm text-zinc-400">{mentor.title}</p>
          <RatingSummary rating={mentor.rating} />
        </div>
      </div>
      <CategoryTags mentor={mentor} categories={categories} />
      {mentor.bio && <p className="line-clamp-3 text-sm text-zinc-300">{mentor.bio}</p>}
      <RateCardList rateCards={mentor.rateCards ?? []} className="mt-auto" />
    </Link>
  );
}

/** Home: the mentor directory with a category filter, priced in the chosen currency. */
export function MentorDirectory() {
  const { data: mentors, loading, error } = useMentors();
  const categories = useCategories();
  const [category, setCategory] = useState<string | null>(null);
  const shown = category ? mentors.filter((m) => m.taxonomySelections?.includes(category)) : mentors;
  const chip = (active: boolean) =>
    cn(
      'rounded-full border px-3 py-1.5 text-sm transition',
      active
        ? 'border-brand-500 bg-brand-500/15 text-white'
        : 'border-zinc-800 text-zinc-300 hover:border-zinc-700 hover:bg-zinc-900',
    );
  return (
    <section className="space-y-8">
      <header className="space-y-3">
        <h1 className="text-3xl font-semibold tracking-tight text-white sm:text-4xl">Find a mentor</h1>
        <p className="max-w-2xl text-zinc-400">
          Send a clip, get feedback pinned to the exact moments that matter, from people who have done it.
        </p>
        <PriceNote />
      </header>
      {categories.length > 0 && (
        <nav aria-label="Categories" className="flex flex-wrap gap-2">
          <button
            type="button"
            className={chip(category === null)}
            aria-pressed={category === null}
            onClick={() => setCategory(null)}
          >
            All
          </button>
          {categories.map((c) => (
            <button
              key={c.id}
              type="button"
              aria-pressed={category === c.id}
              className={chip(category === c.id)}
              onClick={() => setCategory(c.id)}
            >
              {c.emoji} {c.name}
            </button>
          ))}
        </nav>
      )}
      {loading ? (
        <p className="text-zinc-400">Loading mentors…</p>
      ) : error ? (
        <p className="rounded-xl border border-zinc-800 bg-zinc-900/60 p-6 text-zinc-300">
          Mentors could not be loaded. Check your connection and reload the page.
        </p>
      ) : shown.length === 0 ? (
        <p className="rounded-xl border border-zinc-800 bg-zinc-900/60 p-6 text-zinc-400">
          No mentors here yet.
        </p>
      ) : (
        <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {shown.map((m) => (
            <MentorCard key={m.id} mentor={m} categories={categories} />
          ))}
        </div>
      )}
    </section>
  );
}
