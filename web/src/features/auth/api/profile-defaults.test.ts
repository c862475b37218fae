import { defaultProfile, missingFields, DEFAULT_RATE_CARDS } from './profile-defaults';

describe('defaultProfile', () => {
  it('creates a mentor with role user and the four default rate cards', () => {
    const p = defaultProfile({ uid: 'u1', email: 'sam@loupe.dev', displayName: null, photoURL: null });
    expect(p).toMatchObject({ id: 'u1', isMentor: true, role: 'user', stripeConnected: false, name: 'sam' });
    expect(p.rateCards).toEqual([
      { duration: 'Up to 1 min', price: 20 },
      { duration: '1-3 mins', price: 35 },
      { duration: '3-5 mins', price: 50 },
      { duration: '5+ mins', price: 75 },
    ]);
  });
});

describe('missingFields', () => {
  it('fills in only what is missing', () => {
    const stored = { name: 'Kept', isMentor: false, rateCards: [] };
    const defaults = { name: 'New', isMentor: true, rateCards: DEFAULT_RATE_CARDS, bio: '', role: 'user' };
    expect(missingFields(stored, defaults)).toEqual({ bio: '', role: 'user' });
  });
});
