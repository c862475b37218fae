import { Plus, Trash2 } from 'lucide-react';
import { Button, IconButton } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { useCurrency } from '@/lib/currency/currency-context';
import { cardProblem } from '@/lib/rate-cards';
import type { RateCard } from '@/types/user';

/**
 * The mentor's rate cards, each a length (its label) and a price in USD
 * shown in the chosen currency; a card without a length or a price says so
 * under it (it could not be booked, and the profile does not save).
 */
export function RateCardsEditor({
  cards,
  onChange,
}: {
  cards: RateCard[];
  onChange: (cards: RateCard[]) => void;
}) {
  const { formatPrice, currency } = useCurrency();
  const change = (i: number, card: Partial<RateCard>) =>
    onChange(cards.map((c, j) => (j === i ? { ...c, ...card } : c)));
  return (
    <div className="space-y-2">
      <p className="text-sm text-zinc-300">
        Rate cards: the clip length each covers and its price (in USD; shown in {currency}). Name lengths like
        “Up to 1 min”, “1-3 mins” or “5+ mins” so clips are priced by their real length.
      </p>
      {cards.map((card, i) => {
        const problem = cardProblem(card);
        const id = `card-${i}-problem`;
        return (
          <div key={i} className="space-y-1">
            <div className="grid grid-cols-[minmax(0,1fr)_6.5rem_auto] items-center gap-2 sm:grid-cols-[minmax(0,1fr)_7rem_5rem_auto]">
              <Input
                aria-label="Duration"
                aria-invalid={!card.duration.trim() || undefined}
                aria-describedby={problem ? id : undefined}
                placeholder="Up to 1 min"
                maxLength={40}
                value={card.duration}
                onChange={(e) => change(i, { duration: e.target.value })}
              />
              <Input
                aria-label="Price in USD"
                aria-invalid={!(card.price > 0) || undefined}
                aria-describedby={problem ? id : undefined}
                type="number"
                min={0.01}
                max={10000}
                step="0.01"
                value={Number.isFinite(card.price) ? card.price : ''}
                onChange={(e) => change(i, { price: e.target.value === '' ? 0 : Number(e.target.value) })}
              />
              <span className="hidden text-sm text-zinc-400 sm:block">{formatPrice(card.price)}</span>
              <IconButton
                size="md"
                label={`Remove ${card.duration || 'this rate card'}`}
                onClick={() => onChange(cards.filter((_, j) => j !== i))}
              >
                <Trash2 className="size-4" aria-hidden />
              </IconButton>
            </div>
            {problem && (
              <p id={id} className="text-xs text-rose-300">
                {problem}
              </p>
            )}
          </div>
        );
      })}
      <Button
        variant="ghost"
        className="border border-dashed border-zinc-700"
        icon={<Plus className="size-4" aria-hidden />}
        onClick={() => onChange([...cards, { duration: '', price: 0 }])}
      >
        Add a rate card
      </Button>
    </div>
  );
}
