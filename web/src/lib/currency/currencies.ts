/** A currency as the picker lists it (docs/product-spec.md §3). */
export interface Currency {
  code: string;
  name: string;
  symbol: string;
}

/** The picker's currencies, in the order of docs/product-spec.md §9. */
export const PICKER_CURRENCIES: Currency[] = [
  { code: 'USD', name: 'US Dollar', symbol: '$' },
  { code: 'EUR', name: 'Euro', symbol: '€' },
  { code: 'GBP', name: 'British Pound', symbol: '£' },
  { code: 'AUD', name: 'Australian Dollar', symbol: 'A$' },
  { code: 'CAD', name: 'Canadian Dollar', symbol: 'C$' },
  { code: 'JPY', name: 'Japanese Yen', symbol: '¥' },
  { code: 'INR', name: 'Indian Rupee', symbol: '₹' },
  { code: 'CNY', name: 'Chinese Yuan', symbol: 'CN¥' },
  { code: 'BRL', name: 'Brazilian Real', symbol: 'R$' },
  { code: 'MXN', name: 'Mexican Peso', symbol: 'MX$' },
  { code: 'SGD', name: 'Singapore Dollar', symbol: 'S$' },
  { code: 'HKD', name: 'Hong Kong Dollar', symbol: 'HK$' },
  { code: 'NZD', name: 'New Zealand Dollar', symbol: 'NZ$' },
  { code: 'CHF', name: 'Swiss Franc', symbol: 'CHF' },
  { code: 'SEK', name: 'Swedish Krona', symbol: 'kr' },
];

/** The default currency (docs/product-spec.md §9). */
export const DEFAULT_CURRENCY = 'USD';

/** Symbols of the picker's currencies and about 30 more (docs/product-spec.md §9). */
export const CURRENCY_SYMBOLS: Record<string, string> = {
  ...Object.fromEntries(PICKER_CURRENCIES.map((c) => [c.code, c.symbol])),
  NOK: 'kr',
  DKK: 'kr',
  PLN: 'zł',
  CZK: 'Kč',
  HUF: 'Ft',
  RON: 'lei',
  BGN: 'лв',
  TRY: '₺',
  RUB: '₽',
  UAH: '₴',
  ILS: '₪',
  AED: 'د.إ',
  SAR: '﷼',
  QAR: '﷼',
  EGP: 'E£',
  ZAR: 'R',
  NGN: '₦',
  KES: 'KSh',
  GHS: '₵',
  KRW: '₩',
  TWD: 'NT$',
  THB: '฿',
  MYR: 'RM',
  IDR: 'Rp',
  PHP: '₱',
  VND: '₫',
  PKR: '₨',
  BDT: '৳',
  ARS: 'AR$',
  CLP: 'CL$',
  COP: 'CO$',
  PEN: 'S/',
};

/** A currency's English name ("South Korean Won"), or its code when the browser does not know it. */
export function currencyName(code: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'currency' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * What the picker offers: its 15 currencies, and the chosen one after them
 * when it is another (a detected ko-KR → KRW, or one saved on the profile),
 * so the chosen currency is always shown and selectable.
 */
export function pickerCurrencies(chosen: string): Currency[] {
  if (!chosen || PICKER_CURRENCIES.some((c) => c.code === chosen)) return PICKER_CURRENCIES;
  return [...PICKER_CURRENCIES, { code: chosen, name: currencyName(chosen), symbol: symbolFor(chosen) }];
}

/** The symbol of a currency; an unknown code shows itself. */
export function symbolFor(code: string): string {
  return CURRENCY_SYMBOLS[code] ?? code;
}

/** Currencies counted in whole units (no cents), as Stripe charges them. */
export const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
