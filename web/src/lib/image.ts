/**
 * Images from storage go through the framework's image-optimisation path
 * (docs/product-spec.md §7), /_next/image?url=…&w=…&q=…, as Next.js's <Image> sends them:
 * widths from Next's default list, quality 75, a srcset for 1× and 2×
 * screens. Locally loupe answers the path; in production the hosting CDN
 * does, with the storage CDN's own download URLs in `url`.
 */

/** The widths the optimiser serves (Next.js's default deviceSizes and imageSizes). */
export const IMAGE_WIDTHS = [16, 32, 48, 64, 96, 128, 256, 384, 640, 750, 828, 1080, 1200, 1920, 2048, 3840];

/** Default quality (docs/product-spec.md §7). */
export const IMAGE_QUALITY = 75;

/** The optimisation path. */
export const IMAGE_PATH = '/_next/image';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function parse(src: string): URL | null {
  try {
    return new URL(src, 'http://relative.invalid');
  } catch {
    return null;
  }
}

/** Whether a URL is a storage download URL: …/v0/b/{bucket}/o/{object}. */
export function isStorageUrl(src: string): boolean {
  const u = parse(src);
  return !!u && /^\/v0\/b\/[^/]+\/o\/.+/.test(u.pathname);
}

/**
 * A storage download URL without its host when that host is a local loupe
 * (a loopback address, or the origin serving the app), so stored data works
 * on any port; production URLs and anything else are kept as they are.
 */
export function portableUrl(src: string, appOrigin: string = globalThis.location?.origin ?? ''): string {
  const u = parse(src);
  if (!u || !isStorageUrl(src) || u.hostname === 'relative.invalid') return src;
  if (!LOOPBACK.has(u.hostname) && u.origin !== appOrigin) return src;
  return `${u.pathname}${u.search}${u.hash}`;
}

/** The smallest served width that covers `px` device pixels. */
export function snapWidth(px: number): number {
  return IMAGE_WIDTHS.find((w) => w >= px) ?? 3840;
}

/** The optimiser's address for an image at a served width. */
export function optimisedUrl(src: string, width: number, quality: number = IMAGE_QUALITY): string {
  return `${IMAGE_PATH}?url=${encodeURIComponent(portableUrl(src))}&w=${width}&q=${quality}`;
}

/**
 * What an <img> shown `width` CSS pixels wide needs: for a storage image,
 * src (the 2× URL, as Next.js does) and a srcset for 1× and 2× screens;
 * any other image is used as it is.
 */
export function optimisedImage(
  src: string,
  width: number,
  quality: number = IMAGE_QUALITY,
): { src: string; srcSet?: string } {
  if (!isStorageUrl(src)) return { src };
  const one = optimisedUrl(src, snapWidth(width), quality);
  const two = optimisedUrl(src, snapWidth(width * 2), quality);
  return { src: two, srcSet: `${one} 1x, ${two} 2x` };
}
