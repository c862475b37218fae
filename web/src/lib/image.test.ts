import { isStorageUrl, optimisedImage, portableUrl, snapWidth } from './image';

const local = 'http://127.0.0.1:8080/v0/b/demo-loupe.appspot.com/o/avatars%2Fu1%2F1.png?alt=media&token=t1';
const prod =
  'https://firebasestorage.googleapis.com/v0/b/loupe-prod.appspot.com/o/avatars%2Fu1%2F1.png?alt=media&token=t1';

describe('portableUrl', () => {
  it('drops a local host from storage URLs and keeps production and other URLs', () => {
    expect(portableUrl(local, 'http://127.0.0.1:8080')).toBe(
      '/v0/b/demo-loupe.appspot.com/o/avatars%2Fu1%2F1.png?alt=media&token=t1',
    );
    expect(portableUrl(local.replace('127.0.0.1:8080', 'loupe.lan:9000'), 'http://loupe.lan:9000')).toBe(
      '/v0/b/demo-loupe.appspot.com/o/avatars%2Fu1%2F1.png?alt=media&token=t1',
    );
    expect(portableUrl(prod, 'https://loupe.app')).toBe(prod);
    expect(portableUrl('https://lh3.googleusercontent.com/a/x', 'https://loupe.app')).toBe(
      'https://lh3.googleusercontent.com/a/x',
    );
  });
});

describe('optimisedImage', () => {
  it('sends storage images through /_next/image at 1× and 2× widths, quality 75', () => {
    const img = optimisedImage(local, 40);
    const url = encodeURIComponent('/v0/b/demo-loupe.appspot.com/o/avatars%2Fu1%2F1.png?alt=media&token=t1');
    expect(img.srcSet).toBe(`/_next/image?url=${url}&w=48&q=75 1x, /_next/image?url=${url}&w=96&q=75 2x`);
    expect(img.src).toBe(`/_next/image?url=${url}&w=96&q=75`);
    expect(optimisedImage(prod, 32).src).toBe(`/_next/image?url=${encodeURIComponent(prod)}&w=64&q=75`);
  });
  it('leaves other images alone', () => {
    expect(optimisedImage('https://lh3.googleusercontent.com/a/x', 32)).toEqual({
      src: 'https://lh3.googleusercontent.com/a/x',
    });
    expect(isStorageUrl('/favicon.svg')).toBe(false);
  });
  it('snaps to the served widths', () => {
    expect([1, 16, 17, 80, 160, 416, 5000].map(snapWidth)).toEqual([16, 16, 32, 96, 256, 640, 3840]);
  });
});
