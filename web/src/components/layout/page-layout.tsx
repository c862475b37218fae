import { Suspense, type ReactNode } from 'react';
import { Outlet, useLocation } from 'react-router';
import { cn } from '@/lib/cn';
import { AppHeader } from './app-header';
import { ErrorBoundary } from './error-boundary';
import { OfflineBanner } from './offline-banner';

const skip =
  'sr-only focus:not-sr-only focus:fixed focus:top-3 focus:left-3 focus:z-[60] focus:rounded-lg focus:bg-white focus:px-4 focus:py-2 focus:text-sm focus:font-semibold focus:text-zinc-900';

/** What the content area shows while a page's code loads. */
function PageLoading() {
  return (
    <div role="status" className="flex justify-center py-24">
      <span className="size-8 animate-spin rounded-full border-2 border-zinc-700 border-t-brand-400" />
      <span className="sr-only">Loading…</span>
    </div>
  );
}

/**
 * The shared layout: a skip link, the top bar, the offline banner and the
 * content area up to max-w-7xl, where a page that fails to load or render
 * shows what happened and a Try again button (onRetry runs first). Paths starting with /landing get the
 * simplified header on a gradient background.
 */
export function PageLayout({ actions, onRetry }: { actions?: ReactNode; onRetry?: () => void }) {
  const { pathname } = useLocation();
  const landing = pathname.startsWith('/landing');
  return (
    <div
      className={
        landing ? 'min-h-dvh bg-gradient-to-br from-violet-950 via-zinc-950 to-fuchsia-950' : 'min-h-dvh'
      }
    >
      <a href="#main" className={skip}>
        Skip to content
      </a>
      <AppHeader simplified={landing} actions={actions} />
      <OfflineBanner />
      <main
        id="main"
        tabIndex={-1}
        className={cn('mx-auto max-w-7xl px-4 outline-none sm:px-6 lg:px-8', landing ? 'py-10' : 'py-8')}
      >
        <ErrorBoundary resetKey={pathname} onRetry={onRetry}>
          <Suspense fallback={<PageLoading />}>
            <Outlet />
          </Suspense>
        </ErrorBoundary>
      </main>
    </div>
  );
}
