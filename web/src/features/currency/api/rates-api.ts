/** How long fetched rates are reused (docs/product-spec.md §9). */
export const RATES_CACHE_MS = 300_000;

interface CacheEntry {
  at: number;
  rates: Record<string, number>;
}

/** A conversion rate and whether it came from real rates (false: the fallback 1). */
export interface Quote {
  rate: number;
  live: boolean;
}

/**
 * Fetches exchange rates through the rates function (same origin,
 * /api/rates/v4/latest/{base}), caching each base for 5 minutes. A failed
 * fetch, or a currency the rates lack, gives rate 1 (docs/product-spec.md §8) marked not
 * live, so the app can show USD instead of a wrong conversion.
 */
export function createRates(fetchFn: typeof fetch = (...a) => fetch(...a), now: () => number = Date.now) {
  const cache = new Map<string, CacheEntry>();
  async function ratesFor(base: string): Promise<Record<string, number>> {
    const hit = cache.get(base);
    if (hit && now() - hit.at < RATES_CACHE_MS) return hit.rates;
    const res = await fetchFn(`/api/rates/v4/latest/${encodeURIComponent(base)}`);
    if (!res.ok) throw new Error(`rates: HTTP ${res.status}`);
    const body = (await res.json()) as { rates?: Record<string, number> };
    if (!body.rates) throw new Error('rates: no rates in the answer');
    cache.set(base, { at: now(), rates: body.rates });
    return body.rates;
  }
  async function quote(base: string, target: string): Promise<Quote> {
    if (base === target) return { rate: 1, live: true };
    try {
      const rate = (await ratesFor(base))[target];
      if (typeof rate === 'number' && rate > 0) return { rate, live: true };
      console.error(`Failed to fetch exchange rate: no ${target} rate for ${base}`);
    } catch (err) {
      console.error('Failed to fetch exchange rate:', err);
    }
    return { rate: 1, live: false };
  }
  return {
    quote,
    /** The rate to convert one unit of base into target; 1 when rates are unavailable. */
    async rate(base: string, target: string): Promise<number> {
      return (await quote(base, target)).rate;
    },
  };
}
