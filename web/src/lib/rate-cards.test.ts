import { cardLength, cardProblem, cheapestFit, fits } from './rate-cards';

describe('cardLength', () => {
  it.each([
    ['Up to 1 min', { min: 0, max: 60 }],
    ['1-3 mins', { min: 60, max: 180 }],
    ['3 – 5 minutes', { min: 180, max: 300 }],
    ['5+ mins', { min: 300, max: Number.POSITIVE_INFINITY }],
    ['Over 10 min', { min: 600, max: Number.POSITIVE_INFINITY }],
    ['90 s', { min: 0, max: 90 }],
    ['30 s to 2 min', { min: 30, max: 120 }],
    ['2', { min: 0, max: 120 }],
    ['Full routine', null],
    ['3-1 mins', null],
    ['5 parsecs', null],
  ])('%s', (label, want) => {
    expect(cardLength(label)).toEqual(want);
  });
});

describe('fits and cheapestFit', () => {
  const cards = [
    { duration: '5+ mins', price: 75 },
    { duration: 'Up to 1 min', price: 20 },
    { duration: '1-3 mins', price: 35 },
  ];
  it('fits a clip up to a card’s limit, with half a second of grace', () => {
    expect(fits({ duration: 'Up to 1 min', price: 20 }, 60.04)).toBe(true);
    expect(fits({ duration: 'Up to 1 min', price: 20 }, 90)).toBe(false);
    expect(fits({ duration: 'Anything', price: 20 }, 9000)).toBe(true);
  });
  it('picks the cheapest card the clip fits', () => {
    expect(cheapestFit(cards, 45)).toBe(1);
    expect(cheapestFit(cards, 90)).toBe(2);
    expect(cheapestFit(cards, 3600)).toBe(0);
    expect(cheapestFit([{ duration: 'Up to 1 min', price: 20 }], 90)).toBe(-1);
  });
});

describe('cardProblem', () => {
  it('asks for a label and a positive price', () => {
    expect(cardProblem({ duration: ' ', price: 20 })).toMatch(/length/);
    expect(cardProblem({ duration: 'Up to 1 min', price: 0 })).toMatch(/price above 0/);
    expect(cardProblem({ duration: 'Up to 1 min', price: 20 })).toBeNull();
  });
});
