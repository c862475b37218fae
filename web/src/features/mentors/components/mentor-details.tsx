import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-provider';
import type { Category, UserProfile } from '@/types/user';

/** The mentor's categories as chips (nothing when none match). */
export function CategoryTags({ mentor, categories }: { mentor: UserProfile; categories: Category[] }) {
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

/** The mentor's rate cards, priced in the chosen currency. */
export function RateCardList({ mentor, className }: { mentor: UserProfile; className?: string }) {
  const { formatPrice } = useCurrency();
  return (
    <dl className={cn('grid grid-cols-2 gap-2', className)}>
      {(mentor.rateCards ?? []).map((card) => (
        <div key={card.duration} className="rounded-lg bg-zinc-950/70 px-3 py-2">
          <dt className="text-xs text-zinc-500">{card.duration}</dt>
          <dd className="text-sm font-semibold text-white">{formatPrice(card.price)}</dd>
        </div>
      ))}
    </dl>
  );
}
