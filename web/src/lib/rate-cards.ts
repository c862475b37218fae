import type { RateCard } from '@/types/user';

/** How much longer than a card's limit a clip may run (encoders make a one-minute clip 60.04 s). */
export const GRACE_SECONDS = 0.5;

/** Highest price a card may ask, in USD (firestore.rules). */
export const MAX_CARD_PRICE = 10_000;

/** Why a rate card cannot be booked, or null when it can: it needs a label and a positive price. */
export function cardProblem(card: RateCard): string | null {
  if (!card.duration?.trim()) return 'Give this rate card a length, e.g. “Up to 1 min”.';
  if (!(card.price > 0)) return 'Give this rate card a price above 0.';
  if (card.price > MAX_CARD_PRICE)
    return `Rate cards can ask up to $${MAX_CARD_PRICE.toLocaleString('en-US')}.`;
  return null;
}

/** Whether a rate card can be booked and paid. */
export function validCard(card: RateCard): boolean {
  return cardProblem(card) === null;
}

const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
};
const NUM = String.raw`(\d+(?:\.\d+)?)`;
const UNIT = String.raw`\s*([a-z]+)?`;
const UP_TO = new RegExp(String.raw`^(?:up\s+to|under|max(?:imum)?|<=?)\s*${NUM}${UNIT}$`);
const SPAN = new RegExp(String.raw`^${NUM}${UNIT}\s*(?:-|–|to)\s*${NUM}${UNIT}$`);
const OVER = new RegExp(
  String.raw`^(?:over|more\s+than|>=?)\s*${NUM}${UNIT}$|^${NUM}\s*\+${UNIT}$|^${NUM}${UNIT}\s*\+$`,
);
const PLAIN = new RegExp(String.raw`^${NUM}${UNIT}$`);

function seconds(n: string | undefined, unit: string | undefined): number | null {
  const factor = unit ? UNITS[unit] : 60;
  return n === undefined || factor === undefined ? null : Number(n) * factor;
}

/**
 * The clip lengths a card's label covers, in seconds: "Up to 1 min" → 0–60,
 * "1-3 mins" → 60–180, "5+ mins" → 300–∞, "90 s" → 0–90 (minutes without a
 * unit); null for a label that names no length (it fits any clip). The same
 * reading as the payments function's (functions/listing).
 */
export function cardLength(label: string): { min: number; max: number } | null {
  const l = label.trim().toLowerCase().replace(/\s+/g, ' ');
  let m = UP_TO.exec(l);
  if (m) {
    const max = seconds(m[1], m[2]);
    return max === null ? null : { min: 0, max };
  }
  m = SPAN.exec(l);
  if (m) {
    const min = seconds(m[1], m[2] || m[4]);
    const max = seconds(m[3], m[4]);
    return min === null || max === null || min > max ? null : { min, max };
  }
  m = OVER.exec(l);
  if (m) {
    const i = m[1] !== undefined ? 1 : m[3] !== undefined ? 3 : 5;
    const min = seconds(m[i], m[i + 1]);
    return min === null ? null : { min, max: Number.POSITIVE_INFINITY };
  }
  m = PLAIN.exec(l);
  if (m) {
    const max = seconds(m[1], m[2]);
    return max === null ? null : { min: 0, max };
  }
  return null;
}

/** Whether a clip of `duration` seconds may be booked on a card: no longer than its limit. */
export function fits(card: RateCard, duration: number): boolean {
  const length = cardLength(card.duration);
  return !length || duration <= length.max + GRACE_SECONDS;
}

/** The index of the cheapest card a clip fits, or -1 when it fits none. */
export function cheapestFit(cards: RateCard[], duration: number): number {
  let best = -1;
  cards.forEach((c, i) => {
    if (fits(c, duration) && (best < 0 || c.price < (cards[best]?.price ?? Infinity))) best = i;
  });
  return best;
}
