import { PICKER_CURRENCIES, symbolFor, CURRENCY_SYMBOLS } from './currencies';
import { detectCurrency } from './detect';
import { formatAmount, formatPrice } from './format';
import { createRates, RATES_CACHE_MS } from './rates';

describe('currencies', () => {
  it('lists the 15 picker currencies in order', () => {
    expect(PICKER_CURRENCIES.map((c) => c.code).join(' ')).toBe(
      'USD EUR GBP AUD CAD JPY INR CNY BRL MXN SGD HKD NZD CHF SEK',
    );
  });
  it('knows about 45 symbols and shows an unknown code as itself', () => {
    expect(Object.keys(CURRENCY_SYMBOLS).length).toBeGreaterThanOrEqual(45);
    expect(symbolFor('EUR')).toBe('€');
    expect(symbolFor('XYZ')).toBe('XYZ');
  });
});

describe('detectCurrency', () => {
  it.each([
    ['en-US', 'America/New_York', 'USD'],
    ['en-GB', 'Europe/London', 'GBP'],
    ['en-US', 'Australia/Sydney', 'AUD'],
    ['en-GB', 'Pacific/Auckland', 'NZD'],
    ['en-US', 'America/Toronto', 'CAD'],
    ['de-DE', 'Europe/Berlin', 'EUR'],
    ['ja', 'Asia/Tokyo', 'JPY'],
    ['fr-CA', 'America/Montreal', 'CAD'],
    ['xx-ZZ', 'UTC', 'USD'],
    ['not a locale!', 'UTC', 'USD'],
  ])('%s in %s → %s', (locale, tz, want) => {
    expect(detectCurrency(locale, tz)).toBe(want);
  });
});

describe('formatAmount', () => {
  it.each([
    [20, 'USD', '$20'],
    [35.5, 'EUR', '€35.5'],
    [1234.567, 'GBP', '£1,234.57'],
    [3000, 'JPY', '¥3,000'],
    [12, 'XYZ', 'XYZ12'],
  ])('%d %s reads %s', (amount, code, want) => {
    expect(formatAmount(amount, code)).toBe(want);
  });
});

describe('formatPrice', () => {
  const eur = { code: 'EUR', rate: 0.8659, live: true };
  it('converts with the live rate of the chosen currency', () => {
    expect(formatPrice(45, 'EUR', eur)).toBe('€38.97');
    expect(formatPrice(20, 'JPY', { code: 'JPY', rate: 156.37, live: true })).toBe('¥3,127.4');
  });
  it('shows USD, never a conversion at the fallback rate 1, when rates are unavailable', () => {
    expect(formatPrice(15, 'EUR', { code: 'EUR', rate: 1, live: false })).toBe('$15');
  });
  it("shows USD while the chosen currency's rate is still loading", () => {
    expect(formatPrice(15, 'GBP', eur)).toBe('$15');
  });
});

describe('createRates', () => {
  it('caches a base for 5 minutes, then fetches again', async () => {
    let clock = 0;
    const fetchFn = vi.fn(async () => Response.json({ base: 'USD', rates: { EUR: 0.9 } }));
    const rates = createRates(fetchFn as unknown as typeof fetch, () => clock);
    expect(await rates.rate('USD', 'EUR')).toBe(0.9);
    clock = RATES_CACHE_MS - 1;
    expect(await rates.rate('USD', 'EUR')).toBe(0.9);
    expect(fetchFn).toHaveBeenCalledTimes(1);
    expect(fetchFn).toHaveBeenCalledWith('/api/rates/v4/latest/USD');
    clock = RATES_CACHE_MS;
    await rates.rate('USD', 'EUR');
    expect(fetchFn).toHaveBeenCalledTimes(2);
  });
  it('gives rate 1 when the fetch fails', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const rates = createRates((async () => new Response('down', { status: 502 })) as unknown as typeof fetch);
    expect(await rates.rate('USD', 'EUR')).toBe(1);
    expect(await rates.rate('USD', 'USD')).toBe(1);
    expect(await rates.quote('USD', 'EUR')).toEqual({ rate: 1, live: false });
    expect(await rates.quote('USD', 'USD')).toEqual({ rate: 1, live: true });
  });
  it('marks a currency the rates lack as not live', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const rates = createRates((async () =>
      Response.json({ base: 'USD', rates: { EUR: 0.9 } })) as unknown as typeof fetch);
    expect(await rates.quote('USD', 'EUR')).toEqual({ rate: 0.9, live: true });
    expect(await rates.quote('USD', 'XYZ')).toEqual({ rate: 1, live: false });
  });
});
