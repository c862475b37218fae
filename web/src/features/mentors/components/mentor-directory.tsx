import { Search } from 'lucide-react';
import { Link, useSearchParams } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { Field } from '@/components/ui/field';
import { Input, Select } from '@/components/ui/input';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { PriceNote } from '@/components/price-note';
import type { Category, PublicMentor } from '@/types/user';
import { useCategories, useMentors } from '../api/mentors-api';
import {
  applyQuery,
  readQuery,
  SORT_ORDERS,
  writeQuery,
  type DirectoryQuery,
  type SortOrder,
} from '../directory-query';
import { CategoryTags, RateCardList, RatingSummary, Turnaround } from './mentor-details';

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
          {mentor.turnaroundDays ? (
            <p className="mt-1">
              <Turnaround days={mentor.turnaroundDays} />
            </p>
          ) : null}
        </div>
      </div>
      <CategoryTags mentor={mentor} categories={categories} />
      {mentor.bio && <p className="line-clamp-3 text-sm text-zinc-300">{mentor.bio}</p>}
      <RateCardList rateCards={mentor.rateCards ?? []} className="mt-auto" />
    </Link>
  );
}

/**
 * Home: the mentor directory, priced in the chosen currency: search (name,
 * title, expertise), a category, a sort order and a price range (in the
 * shown currency), all kept in the URL so a search can be shared.
 */
export function MentorDirectory() {
  const { data: mentors, loading, error } = useMentors();
  const categories = useCategories();
  const { shownPrice } = useCurrency();
  const [params, setParams] = useSearchParams();
  const query = readQuery(params);
  const update = (change: Partial<DirectoryQuery>) =>
    setParams(writeQuery({ ...query, ...change }), { replace: true });
  const shown = applyQuery(mentors, query, (usd) => shownPrice(usd).amount);
  const code = shownPrice(1).code;
  const filtered =
    query.q.trim() !== '' || query.category !== null || query.min !== null || query.max !== null;
  const chip = (active: boolean) =>
    cn(
      'rounded-full border px-3 py-1.5 text-sm transition focus-visible:outline-2 focus-visible:outline-brand-400',
      active
        ? 'border-brand-500 bg-brand-500/15 text-white'
        : 'border-zinc-800 text-zinc-300 hover:border-zinc-700 hover:bg-zinc-900',
    );
  const price = (v: string) => (v.trim() === '' || !(Number(v) >= 0) ? null : Number(v));
  return (
    <section className="space-y-8">
      <header className="space-y-3">
        <h1 className="text-3xl font-semibold tracking-tight text-white sm:text-4xl">Find a mentor</h1>
        <p className="max-w-2xl text-zinc-400">
          Send a clip, get feedback pinned to the exact moments that matter, from people who have done it.
        </p>
        <PriceNote />
      </header>
      <div
        role="search"
        className="grid gap-3 sm:grid-cols-[minmax(0,1fr)_11rem] lg:grid-cols-[minmax(0,1fr)_11rem_7rem_7rem]"
      >
        <Field label="Search mentors">
          <div className="relative">
            <Search
              className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-zinc-400"
              aria-hidden
            />
            <Input
              type="search"
              className="pl-8"
              placeholder="Name, title or expertise"
              value={query.q}
              onChange={(e) => update({ q: e.target.value })}
            />
          </div>
        </Field>
        <Field label="Sort by">
          <Select value={query.sort} onChange={(e) => update({ sort: e.target.value as SortOrder })}>
            {SORT_ORDERS.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </Select>
        </Field>
        <Field label={`From (${code})`}>
          <Input
            type="number"
            min={0}
            inputMode="decimal"
            placeholder="Any"
            value={query.min ?? ''}
            onChange={(e) => update({ min: price(e.target.value) })}
          />
        </Field>
        <Field label={`To (${code})`}>
          <Input
            type="number"
            min={0}
            inputMode="decimal"
            placeholder="Any"
            value={query.max ?? ''}
            onChange={(e) => update({ max: price(e.target.value) })}
          />
        </Field>
      </div>
      {categories.length > 0 && (
        <nav aria-label="Categories" className="flex flex-wrap gap-2">
          <button
            type="button"
            className={chip(query.category === null)}
            aria-pressed={query.category === null}
            onClick={() => update({ category: null })}
          >
            All
          </button>
          {categories.map((c) => (
            <button
              key={c.id}
              type="button"
              aria-pressed={query.category === c.id}
              className={chip(query.category === c.id)}
              onClick={() => update({ category: c.id })}
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
          {filtered ? (
            <>
              No mentors match.{' '}
              <Link to="/" className="text-brand-400 hover:text-brand-300">
                Clear the search
              </Link>
            </>
          ) : (
            'No mentors here yet.'
          )}
        </p>
      ) : (
        <>
          <p role="status" className="sr-only">
            {shown.length} mentor{shown.length === 1 ? '' : 's'}
          </p>
          <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {shown.map((m) => (
              <MentorCard key={m.id} mentor={m} categories={categories} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
