import type { PublicMentor } from '@/types/user';
import { applyQuery, invertedRange, readQuery, writeQuery } from './directory-query';

const mentor = (over: Partial<PublicMentor>): PublicMentor => ({
  id: over.name ?? 'x',
  name: '',
  displayName: '',
  photoURL: '',
  title: '',
  bio: '',
  expertise: [],
  taxonomySelections: [],
  previouslyWorkedWith: '',
  social: { instagram: '', twitter: '', facebook: '', linkedin: '' },
  rateCards: [],
  bookable: true,
  listedAt: null,
  rating: { average: 0, count: 0 },
  reviews: [],
  ...over,
});

const maya = mentor({
  name: 'Maya Chen',
  title: 'Jazz guitarist',
  expertise: ['Improvisation'],
  taxonomySelections: ['music'],
  rateCards: [{ duration: 'Up to 1 min', price: 25 }],
  rating: { average: 5, count: 1 },
  listedAt: new Date(1000),
});
const jose = mentor({
  name: 'José Ortega',
  title: 'Flamenco dancer',
  taxonomySelections: ['dance'],
  rateCards: [{ duration: 'Up to 1 min', price: 40 }],
  rating: { average: 4.5, count: 8 },
  listedAt: new Date(3000),
});
const priya = mentor({
  name: 'Priya Raman',
  title: 'Speaking coach',
  rateCards: [{ duration: 'Up to 1 min', price: 15 }],
  listedAt: new Date(2000),
});
const all = [maya, jose, priya];
const names = (ms: PublicMentor[]) => ms.map((m) => m.name);
const usd = (n: number) => n;

describe('the directory query', () => {
  it('reads and writes the URL, dropping defaults and nonsense', () => {
    const q = readQuery(new URLSearchParams('q=jazz&sort=price&min=10&max=abc&category=music'));
    expect(q).toEqual({ q: 'jazz', category: 'music', sort: 'price', min: 10, max: null });
    expect(writeQuery(q).toString()).toBe('q=jazz&category=music&sort=price&min=10');
    expect(readQuery(new URLSearchParams('sort=loudest')).sort).toBe('rating');
  });

  it('searches names, titles and expertise, accents aside', () => {
    expect(names(applyQuery(all, { ...readQuery(new URLSearchParams()), q: 'jose' }, usd))).toEqual([
      'José Ortega',
    ]);
    expect(names(applyQuery(all, readQuery(new URLSearchParams('q=improvisation')), usd))).toEqual([
      'Maya Chen',
    ]);
  });

  it('sorts by rating, price or newest, and filters by starting price in the shown currency', () => {
    expect(names(applyQuery(all, readQuery(new URLSearchParams()), usd))).toEqual([
      'Maya Chen',
      'José Ortega',
      'Priya Raman',
    ]);
    expect(names(applyQuery(all, readQuery(new URLSearchParams('sort=price')), usd))).toEqual([
      'Priya Raman',
      'Maya Chen',
      'José Ortega',
    ]);
    expect(names(applyQuery(all, readQuery(new URLSearchParams('sort=newest')), usd))[0]).toBe('José Ortega');
    // In EUR at 0.8: 25 USD is €20, 40 USD €32.
    const eur = (n: number) => n * 0.8;
    expect(names(applyQuery(all, readQuery(new URLSearchParams('min=20&max=30')), eur))).toEqual([
      'Maya Chen',
    ]);
  });

  it('lists mentors who cannot be booked after those who can, in any order', () => {
    const unpaid = mentor({ name: 'Tom Becker', bookable: false, rating: { average: 5, count: 9 } });
    const cheap = mentor({
      ...unpaid,
      name: 'Tim Cheap',
      rateCards: [{ duration: 'Up to 1 min', price: 1 }],
    });
    expect(names(applyQuery([unpaid, ...all], readQuery(new URLSearchParams()), usd)).at(-1)).toBe(
      'Tom Becker',
    );
    expect(names(applyQuery([cheap, ...all], readQuery(new URLSearchParams('sort=price')), usd)).at(-1)).toBe(
      'Tim Cheap',
    );
  });

  it('knows an upside-down price range', () => {
    expect(invertedRange(readQuery(new URLSearchParams('min=50&max=10')))).toBe(true);
    expect(invertedRange(readQuery(new URLSearchParams('min=10&max=50')))).toBe(false);
    expect(invertedRange(readQuery(new URLSearchParams('min=50')))).toBe(false);
  });
});
