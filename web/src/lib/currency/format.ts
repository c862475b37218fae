import { symbolFor, ZERO_DECIMAL } from './currencies';

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const cents = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * An amount as the app shows it (docs/product-spec.md §9: en-US digits, symbol first, 0 to 2
 * decimals): none for a whole amount, two whenever there are cents (R$133.30,
 * never R$133.3), and none for currencies without cents (¥3,127).
 */
export function formatAmount(amount: number, code: string): string {
  const rounded = Math.round(amount * 100) / 100;
  const noCents = ZERO_DECIMAL.has(code) || Number.isInteger(rounded);
  return `${symbolFor(code)}${(noCents ? whole : cents).format(noCents ? Math.round(amount) : rounded)}`;
}

/** The rate known for a currency: live from the rates, or the fallback 1 (not live). */
export interface KnownRate {
  code: string;
  rate: number;
  live: boolean;
}

/**
 * A USD price as shown to someone who chose `currency`: converted with a
 * live rate for that currency (in whole units for currencies without cents,
 * as checkout charges them), else in USD (never converted at the fallback
 * rate 1, which would show €15 for $15).
 */
export function formatPrice(usd: number, currency: string, known: KnownRate): string {
  const shown = shownPrice(usd, currency, known);
  return formatAmount(shown.amount, shown.code);
}

/**
 * A USD price in the currency it is shown in: converted with a live rate
 * for the chosen currency (whole units for currencies without cents), else
 * in USD.
 */
export function shownPrice(
  usd: number,
  currency: string,
  known: KnownRate,
): { amount: number; code: string } {
  if (!(known.code === currency && known.live)) return { amount: usd, code: 'USD' };
  const amount = usd * known.rate;
  return { amount: ZERO_DECIMAL.has(currency) ? Math.round(amount) : amount, code: currency };
}
