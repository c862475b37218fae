import { missingForListing } from './listing';

const complete = {
  title: 'Guitarist',
  bio: 'Fifteen years on stage.',
  taxonomySelections: ['music'],
  rateCards: [{ duration: 'Up to 1 min', price: 20 }],
};

describe('missingForListing', () => {
  it('lists nothing for a complete profile', () => {
    expect(missingForListing(complete)).toEqual([]);
  });
  it('names what a new account lacks, in order', () => {
    expect(
      missingForListing({
        title: '',
        bio: ' ',
        taxonomySelections: [],
        rateCards: [{ duration: 'Up to 1 min', price: 20 }],
      }),
    ).toEqual(['a title', 'a bio', 'a category']);
  });
  it('does not count free or unnamed rate cards', () => {
    expect(
      missingForListing({
        ...complete,
        rateCards: [
          { duration: '1 min', price: 0 },
          { duration: '', price: 5 },
        ],
      }),
    ).toEqual(['a rate card']);
  });
});
