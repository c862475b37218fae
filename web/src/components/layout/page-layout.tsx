import type { ReactNode } from 'react';
import { Outlet, useLocation } from 'react-router';
import { AppHeader } from './app-header';

/**
 * The shared layout: the top bar and the content area up to max-w-7xl. Paths
 * starting with /landing get the simplified header on a gradient background.
 */
export function PageLayout({ actions }: { actions?: ReactNode }) {
  const landing = useLocation().pathname.startsWith('/landing');
  if (landing) {
    return (
      <div className="min-h-dvh bg-gradient-to-br from-violet-950 via-zinc-950 to-fuchsia-950">
        <AppHeader simplified actions={actions} />
        <main className="mx-auto max-w-7xl px-4 py-10 sm:px-6 lg:px-8">
          <Outlet />
        </main>
      </div>
    );
  }
  return (
    <div className="min-h-dvh">
      <AppHeader actions={actions} />
      <main className="mx-auto max-w-7xl px-4 py-8 sm:px-6 lg:px-8">
        <Outlet />
      </main>
    </div>
  );
}
