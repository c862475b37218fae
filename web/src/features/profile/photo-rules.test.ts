import { checkPhoto } from './photo-rules';

describe('checkPhoto', () => {
  it('takes JPEG, PNG, GIF and WebP photos up to 5 MB', () => {
    expect(checkPhoto({ name: 'me.jpg', type: 'image/jpeg', size: 200_000 })).toBeNull();
    expect(checkPhoto({ name: 'me.webp', type: 'image/webp', size: 5 * 1024 * 1024 })).toBeNull();
  });
  it('says a file that is not an image is not an image', () => {
    expect(checkPhoto({ name: 'cv.pdf', type: 'application/pdf', size: 10 })).toBe(
      '“cv.pdf” is not an image. Choose a JPEG, PNG, GIF or WebP photo.',
    );
    expect(checkPhoto({ name: 'logo.svg', type: 'image/svg+xml', size: 10 })).toMatch(/is not an image/);
  });
  it('says how big a large photo is', () => {
    expect(checkPhoto({ name: 'raw.png', type: 'image/png', size: 7.2 * 1024 * 1024 })).toBe(
      '“raw.png” is 7.2 MB. Photos can be up to 5 MB.',
    );
  });
});
