import { detectCurrency } from './detect';
import { createRates, RATES_CACHE_MS } from './api/rates-api';

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
