import { symbolFor, ZERO_DECIMAL } from './currencies';

const number = new Intl.NumberFormat('en-US', { minimumFractionDigits: 0, maximumFractionDigits: 2 });

/** An amount as the app shows it: en-US digits, 0 to 2 decimals, symbol first (spec §9). */
export function formatAmount(amount: number, code: string): string {
  return `${symbolFor(code)}${number.format(amount)}`;
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
  if (!(known.code === currency && known.live)) return formatAmount(usd, 'USD');
  const amount = usd * known.rate;
  return formatAmount(ZERO_DECIMAL.has(currency) ? Math.round(amount) : amount, currency);
}
