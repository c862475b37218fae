import { Clock, Star } from 'lucide-react';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import type { Category, PublicMentor, RateCard } from '@/types/user';

/** The mentor's categories as chips (nothing when none match). */
export function CategoryTags({ mentor, categories }: { mentor: PublicMentor; categories: Category[] }) {
  const tags = categories.filter((c) => mentor.taxonomySelections?.includes(c.id));
  if (tags.length === 0) return null;
  return (
    <div className="flex flex-wrap gap-1.5">
      {tags.map((c) => (
        <span key={c.id} className="rounded-full bg-zinc-800 px-2.5 py-0.5 text-xs text-zinc-300">
          {c.emoji} {c.name}
        </span>
      ))}
    </div>
  );
}

/** Rate cards, priced in the chosen currency. */
export function RateCardList({ rateCards, className }: { rateCards: RateCard[]; className?: string }) {
  const { formatPrice } = useCurrency();
  return (
    <dl className={cn('grid grid-cols-2 gap-2', className)}>
      {rateCards.map((card) => (
        <div key={card.duration} className="rounded-lg bg-zinc-950/70 px-3 py-2">
          <dt className="text-xs text-zinc-400">{card.duration}</dt>
          <dd className="text-sm font-semibold text-white">{formatPrice(card.price)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Average rating and review count ("4.8 · 12 reviews"), or "New" without reviews. */
export function RatingSummary({ rating }: { rating: PublicMentor['rating'] }) {
  if (rating.count === 0) {
    return <span className="text-xs font-medium text-zinc-400">New mentor</span>;
  }
  const label = `Rated ${rating.average.toFixed(1)} out of 5 from ${rating.count} review${rating.count === 1 ? '' : 's'}`;
  return (
    <span className="inline-flex items-center gap-1 text-sm text-zinc-300" aria-label={label} role="img">
      <Star className="size-4 fill-amber-400 text-amber-400" aria-hidden />
      <span className="font-semibold text-white">{rating.average.toFixed(1)}</span>
      <span className="text-zinc-400">
        · {rating.count} review{rating.count === 1 ? '' : 's'}
      </span>
    </span>
  );
}

/** 1 to 5 stars, read-only. */
export function Stars({ rating }: { rating: number }) {
  return (
    <span className="inline-flex" role="img" aria-label={`${rating} out of 5 stars`}>
      {[1, 2, 3, 4, 5].map((n) => (
        <Star
          key={n}
          className={cn('size-3.5', n <= rating ? 'fill-amber-400 text-amber-400' : 'text-zinc-600')}
          aria-hidden
        />
      ))}
    </span>
  );
}

/** The turnaround a mentor promises ("Feedback within 3 days"), or nothing. */
export function Turnaround({ days, className }: { days: number | null | undefined; className?: string }) {
  if (!days) return null;
  return (
    <span className={cn('inline-flex items-center gap-1 text-xs text-zinc-300', className)}>
      <Clock className="size-3.5 text-zinc-400" aria-hidden />
      Feedback within {days} day{days === 1 ? '' : 's'}
    </span>
  );
}
