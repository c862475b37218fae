import { Info } from 'lucide-react';
import { useCurrency } from '@/lib/currency/currency-context';

/** A small note under prices shown in USD because the chosen currency's rate is unavailable. */
export function PriceNote() {
  const { currency, ratesUnavailable } = useCurrency();
  if (!ratesUnavailable) return null;
  return (
    <p role="note" className="flex items-center gap-1.5 text-xs text-zinc-400">
      <Info className="size-3.5 shrink-0" aria-hidden />
      Prices in USD: {currency} exchange rates are unavailable right now.
    </p>
  );
}
