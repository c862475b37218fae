import type { PublicMentor } from '@/types/user';

/** How the directory orders mentors. */
export type SortOrder = 'rating' | 'price' | 'newest';

export const SORT_ORDERS: { value: SortOrder; label: string }[] = [
  { value: 'rating', label: 'Best rated' },
  { value: 'price', label: 'Lowest price' },
  { value: 'newest', label: 'Newest' },
];

/** What the directory shows, as its URL says: ?q=&category=&sort=&min=&max=. */
export interface DirectoryQuery {
  q: string;
  category: string | null;
  sort: SortOrder;
  /** Price bounds in the currency prices are shown in; null for none. */
  min: number | null;
  max: number | null;
}

function bound(v: string | null): number | null {
  if (v === null || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** The query a URL's search parameters hold; anything unreadable is left out. */
export function readQuery(params: URLSearchParams): DirectoryQuery {
  const sort = params.get('sort');
  return {
    q: params.get('q') ?? '',
    category: params.get('category') || null,
    sort: SORT_ORDERS.some((o) => o.value === sort) ? (sort as SortOrder) : 'rating',
    min: bound(params.get('min')),
    max: bound(params.get('max')),
  };
}

/** The search parameters of a query, without its defaults. */
export function writeQuery(query: DirectoryQuery): URLSearchParams {
  const out = new URLSearchParams();
  if (query.q.trim()) out.set('q', query.q);
  if (query.category) out.set('category', query.category);
  if (query.sort !== 'rating') out.set('sort', query.sort);
  if (query.min !== null) out.set('min', String(query.min));
  if (query.max !== null) out.set('max', String(query.max));
  return out;
}

/** Lower-case, without accents, so "jose" finds "José". */
function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The mentor's lowest price in USD (what "from" shows and price filters and sorts by). */
export function startingPrice(m: PublicMentor): number | null {
  const prices = (m.rateCards ?? []).map((c) => c.price).filter((p) => p > 0);
  return prices.length ? Math.min(...prices) : null;
}

/** Whether a query's price range is upside down (from above to), which no price can meet. */
export function invertedRange(query: DirectoryQuery): boolean {
  return query.min !== null && query.max !== null && query.min > query.max;
}

/**
 * The mentors a query shows, in its order: every word of q in the name,
 * title or expertise; the category; a starting price (converted by shown,
 * from USD into the currency shown) within min and max. Mentors who can be
 * booked come first, whatever the order.
 */
export function applyQuery(
  mentors: PublicMentor[],
  query: DirectoryQuery,
  shown: (usd: number) => number,
): PublicMentor[] {
  const words = fold(query.q).split(/\s+/).filter(Boolean);
  const matches = (m: PublicMentor) => {
    const text = fold([m.name, m.displayName, m.title, ...(m.expertise ?? [])].join(' '));
    return words.every((w) => text.includes(w));
  };
  const inRange = (m: PublicMentor) => {
    if (query.min === null && query.max === null) return true;
    const usd = startingPrice(m);
    if (usd === null) return false;
    const price = shown(usd);
    return (query.min === null || price >= query.min) && (query.max === null || price <= query.max);
  };
  const name = (m: PublicMentor) => m.name || m.displayName || '';
  const order: Record<SortOrder, (a: PublicMentor, b: PublicMentor) => number> = {
    rating: (a, b) => b.rating.average - a.rating.average || b.rating.count - a.rating.count,
    price: (a, b) => (startingPrice(a) ?? Infinity) - (startingPrice(b) ?? Infinity),
    newest: (a, b) => (b.listedAt?.getTime() ?? 0) - (a.listedAt?.getTime() ?? 0),
  };
  return mentors
    .filter(
      (m) => matches(m) && (!query.category || m.taxonomySelections?.includes(query.category)) && inRange(m),
    )
    .sort(
      (a, b) =>
        Number(b.bookable) - Number(a.bookable) || order[query.sort](a, b) || name(a).localeCompare(name(b)),
    );
}
