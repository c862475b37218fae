import { DEFAULT_CURRENCY } from '@/lib/currency/currencies';

/** The currency of each region the app knows. */
const REGION_CURRENCY: Record<string, string> = {
  US: 'USD',
  GB: 'GBP',
  AU: 'AUD',
  CA: 'CAD',
  JP: 'JPY',
  IN: 'INR',
  CN: 'CNY',
  BR: 'BRL',
  MX: 'MXN',
  SG: 'SGD',
  HK: 'HKD',
  NZ: 'NZD',
  CH: 'CHF',
  SE: 'SEK',
  NO: 'NOK',
  DK: 'DKK',
  PL: 'PLN',
  CZ: 'CZK',
  DE: 'EUR',
  FR: 'EUR',
  ES: 'EUR',
  IT: 'EUR',
  NL: 'EUR',
  BE: 'EUR',
  AT: 'EUR',
  IE: 'EUR',
  PT: 'EUR',
  FI: 'EUR',
  GR: 'EUR',
  LU: 'EUR',
  SK: 'EUR',
  SI: 'EUR',
  EE: 'EUR',
  LV: 'EUR',
  LT: 'EUR',
  HR: 'EUR',
  KR: 'KRW',
  ZA: 'ZAR',
  TR: 'TRY',
  IL: 'ILS',
  AE: 'AED',
  TH: 'THB',
  MY: 'MYR',
  ID: 'IDR',
  PH: 'PHP',
};

/**
 * People in Australia, New Zealand and Canada often run en-US or en-GB
 * browsers: for those regions the time zone decides (docs/product-spec.md §9).
 */
function adjustRegion(region: string, timeZone: string): string {
  if (region !== 'US' && region !== 'GB') return region;
  if (timeZone.startsWith('Australia/')) return 'AU';
  if (timeZone === 'Pacific/Auckland' || timeZone === 'Pacific/Chatham') return 'NZ';
  const canadian = [
    'Toronto',
    'Vancouver',
    'Edmonton',
    'Winnipeg',
    'Halifax',
    'St_Johns',
    'Regina',
    'Montreal',
    'Moncton',
    'Whitehorse',
  ];
  if (canadian.some((city) => timeZone === `America/${city}`)) return 'CA';
  return region;
}

/**
 * The default currency from the browser's locale region, adjusted by time
 * zone; USD when the region is unknown or anything fails.
 */
export function detectCurrency(locale: string, timeZone: string): string {
  try {
    const region = new Intl.Locale(locale).maximize().region;
    if (!region) return DEFAULT_CURRENCY;
    return REGION_CURRENCY[adjustRegion(region, timeZone)] ?? DEFAULT_CURRENCY;
  } catch {
    return DEFAULT_CURRENCY;
  }
}

/** The default currency of this browser. */
export function detectBrowserCurrency(): string {
  try {
    return detectCurrency(navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone);
  } catch {
    return DEFAULT_CURRENCY;
  }
}
