import type { SocialLinks } from '@/types/user';

const PROFILES: Record<keyof SocialLinks, { label: string; base: string }> = {
  instagram: { label: 'Instagram', base: 'https://www.instagram.com/' },
  twitter: { label: 'X (Twitter)', base: 'https://x.com/' },
  facebook: { label: 'Facebook', base: 'https://www.facebook.com/' },
  linkedin: { label: 'LinkedIn', base: 'https://www.linkedin.com/in/' },
};

/** A social link as the mentor page shows it. */
export interface SocialLink {
  network: keyof SocialLinks;
  label: string;
  href: string;
  /** What the link reads: the handle, or the link's host and path. */
  text: string;
}

/**
 * The links a profile stores (docs/product-spec.md §3 social), as addresses to open: a
 * handle ("mayachenguitar", "@maya") becomes the network's profile URL; an
 * http(s) link is kept; anything else (another scheme, spaces) is left out.
 */
export function socialLinks(social: Partial<SocialLinks> | undefined): SocialLink[] {
  return (Object.keys(PROFILES) as (keyof SocialLinks)[]).flatMap((network) => {
    const value = social?.[network]?.trim() ?? '';
    if (!value) return [];
    const { label, base } = PROFILES[network];
    if (/^https?:\/\//i.test(value)) {
      try {
        const url = new URL(value);
        return [{ network, label, href: url.href, text: `${url.host}${url.pathname}`.replace(/\/$/, '') }];
      } catch {
        return [];
      }
    }
    const handle = value.replace(/^@/, '');
    if (!/^[\w.-]+$/.test(handle)) return [];
    return [{ network, label, href: base + handle, text: `@${handle}` }];
  });
}
