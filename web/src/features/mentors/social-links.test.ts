import { socialLinks } from './social-links';

describe('socialLinks', () => {
  it('turns handles into profile links, keeps http links, and leaves out the rest', () => {
    expect(
      socialLinks({
        instagram: 'mayachenguitar',
        twitter: '@maya',
        facebook: 'javascript:alert(1)',
        linkedin: 'https://www.linkedin.com/in/maya-chen/',
      }),
    ).toEqual([
      {
        network: 'instagram',
        label: 'Instagram',
        href: 'https://www.instagram.com/mayachenguitar',
        text: '@mayachenguitar',
      },
      { network: 'twitter', label: 'X (Twitter)', href: 'https://x.com/maya', text: '@maya' },
      {
        network: 'linkedin',
        label: 'LinkedIn',
        href: 'https://www.linkedin.com/in/maya-chen/',
        text: 'www.linkedin.com/in/maya-chen',
      },
    ]);
    expect(socialLinks(undefined)).toEqual([]);
  });
});
