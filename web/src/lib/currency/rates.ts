/** How long fetched rates are reused (spec §9). */
export const RATES_CACHE_MS = 300_000;

interface CacheEntry {
  at: number;
  rates: Record<string, number>;
}

/**
 * Fetches exchange rates through the rates function (same origin,
 * /api/rates/v4/latest/{base}), caching each base for 5 minutes. A failed
 * fetch gives rate 1 (spec §8).
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
  return {
    /** The rate to convert one unit of base into target. */
    async rate(base: string, target: string): Promise<number> {
      if (base === target) return 1;
      try {
        return (await ratesFor(base))[target] ?? 1;
      } catch (err) {
        console.error('Failed to fetch exchange rate:', err);
        return 1;
      }
    },
  };
}
