import { useEffect } from 'react';
import { pageFor } from './routes/pages';

/** How near the viewport a link must come for its page's code to be fetched (docs/product-spec.md §9). */
export const PREFETCH_MARGIN_PX = 200;

/**
 * Prefetches, as Next.js links do, the code of a link's page once the link
 * comes within 200 px of the viewport. Every same-origin link in the
 * document is watched, including those rendered later; a link that
 * triggered a prefetch is marked data-prefetched.
 */
export function usePrefetchLinks(): void {
  useEffect(() => {
    if (typeof IntersectionObserver === 'undefined') return;
    const seen = new WeakSet<Element>();
    const near = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          const link = entry.target as HTMLAnchorElement;
          near.unobserve(link);
          const url = new URL(link.href, window.location.href);
          const target = url.origin === window.location.origin ? pageFor(url.pathname) : null;
          if (!target) continue;
          link.dataset.prefetched = 'true';
          void target.load().catch(() => undefined);
        }
      },
      { rootMargin: `${PREFETCH_MARGIN_PX}px` },
    );
    const watch = (root: ParentNode) => {
      root.querySelectorAll('a[href]').forEach((a) => {
        if (seen.has(a)) return;
        seen.add(a);
        near.observe(a);
      });
    };
    watch(document);
    const added = new MutationObserver((records) => {
      for (const r of records) {
        r.addedNodes.forEach((n) => {
          if (n instanceof HTMLAnchorElement && n.hasAttribute('href') && !seen.has(n)) {
            seen.add(n);
            near.observe(n);
          } else if (n instanceof Element) watch(n);
        });
      }
    });
    added.observe(document.body, { childList: true, subtree: true });
    return () => {
      added.disconnect();
      near.disconnect();
    };
  }, []);
}
