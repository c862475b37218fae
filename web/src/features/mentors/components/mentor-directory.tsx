import { Search, SlidersHorizontal } from 'lucide-react';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { Field } from '@/components/ui/field';
import { Input, Select } from '@/components/ui/input';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { formatAmount } from '@/lib/currency/format';
import { PriceNote } from '@/components/price-note';
import type { Category, PublicMentor } from '@/types/user';
import { useCategories, useMentors } from '../api/mentors-api';
import {
  applyQuery,
  invertedRange,
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
          {!mentor.bookable && (
            <p className="mt-1 inline-block rounded-full bg-zinc-800 px-2 py-0.5 text-xs font-medium text-zinc-300">
              Not taking requests yet
            </p>
          )}
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
      {mentor.bookable ? (
        <RateCardList rateCards={mentor.rateCards ?? []} className="mt-auto" />
      ) : (
        <p className="mt-auto text-sm text-zinc-400">
          Has not set up payouts yet, so cannot be booked for now.
        </p>
      )}
    </Link>
  );
}

/**
 * Home: the mentor directory, priced in the chosen currency: search (name,
 * title, expertise), a category, a sort order and a price range (in the
 * shown currency), all kept in the URL so a search can be shared. On a
 * phone the filters other than search fold behind a Filters button. Mentors
 * who cannot be booked yet are marked and listed last; an upside-down
 * price range says so.
 */
/** A price bound of the directory's filters: empty or not a non-negative number is no bound. */
function PriceField({
  label,
  value,
  onChange,
  invalid,
}: {
  label: string;
  value: number | null;
  onChange: (price: number | null) => void;
  invalid?: boolean;
}) {
  return (
    <Field label={label}>
      <Input
        type="number"
        min={0}
        inputMode="decimal"
        placeholder="Any"
        value={value ?? ''}
        onChange={(e) => {
          const v = e.target.value;
          onChange(v.trim() === '' || !(Number(v) >= 0) ? null : Number(v));
        }}
        aria-invalid={invalid || undefined}
      />
    </Field>
  );
}

export function MentorDirectory() {
  const { data: mentors, loading, error } = useMentors();
  const categories = useCategories();
  const { shownPrice } = useCurrency();
  const [filtersOpen, setFiltersOpen] = useState(false);
  const [params, setParams] = useSearchParams();
  const query = readQuery(params);
  const update = (change: Partial<DirectoryQuery>) =>
    setParams(writeQuery({ ...query, ...change }), { replace: true });
  const shown = applyQuery(mentors, query, (usd) => shownPrice(usd).amount);
  const code = shownPrice(1).code;
  const filtered =
    query.q.trim() !== '' || query.category !== null || query.min !== null || query.max !== null;
  const inverted = invertedRange(query);
  // How many of the folded filters are set (the Filters button says so on a phone).
  const folded = [
    query.sort !== 'rating',
    query.category !== null,
    query.min !== null,
    query.max !== null,
  ].filter(Boolean).length;
  const chip = (active: boolean) =>
    cn(
      'rounded-full border px-3 py-1.5 text-sm transition focus-visible:outline-2 focus-visible:outline-brand-400',
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
      <div
        role="search"
        className="grid grid-cols-1 gap-3 sm:grid-cols-[minmax(0,1fr)_11rem] lg:grid-cols-[minmax(0,1fr)_11rem_7rem_7rem]"
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
        <button
          type="button"
          aria-expanded={filtersOpen}
          aria-controls="directory-filters directory-categories"
          onClick={() => setFiltersOpen((o) => !o)}
          className="inline-flex items-center justify-center gap-2 rounded-lg border border-zinc-800 px-3 py-2 text-sm text-zinc-200 hover:bg-zinc-900 focus-visible:outline-2 focus-visible:outline-brand-400 sm:hidden"
        >
          <SlidersHorizontal className="size-4" aria-hidden />
          {filtersOpen ? 'Hide filters' : folded > 0 ? `Filters (${folded})` : 'Filters'}
        </button>
        <div id="directory-filters" className={cn('contents', !filtersOpen && 'max-sm:hidden')}>
          <Field label="Sort by">
            <Select value={query.sort} onChange={(e) => update({ sort: e.target.value as SortOrder })}>
              {SORT_ORDERS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </Select>
          </Field>
          <PriceField label={`From (${code})`} value={query.min} onChange={(min) => update({ min })} />
          <PriceField
            label={`To (${code})`}
            value={query.max}
            onChange={(max) => update({ max })}
            invalid={inverted}
          />
        </div>
      </div>
      {categories.length > 0 && (
        <nav
          id="directory-categories"
          aria-label="Categories"
          className={cn('flex flex-wrap gap-2', !filtersOpen && 'max-sm:hidden')}
        >
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
      ) : inverted ? (
        <p role="alert" className="rounded-xl border border-amber-400/40 bg-amber-400/10 p-6 text-amber-100">
          The price range is upside down: from {formatAmount(query.min ?? 0, code)} is more than to{' '}
          {formatAmount(query.max ?? 0, code)}, so no price fits.{' '}
          <button
            type="button"
            className="font-medium text-brand-300 underline hover:text-brand-200"
            onClick={() => update({ min: query.max, max: query.min })}
          >
            Swap them
          </button>
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
          <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {shown.map((m) => (
              <MentorCard key={m.id} mentor={m} categories={categories} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
