import { symbolFor } from './currencies';

const number = new Intl.NumberFormat('en-US', { minimumFractionDigits: 0, maximumFractionDigits: 2 });

/** An amount as the app shows it: en-US digits, 0 to 2 decimals, symbol first (spec §9). */
export function formatAmount(amount: number, code: string): string {
  return `${symbolFor(code)}${number.format(amount)}`;
}
