import type { ReactNode } from 'react';
import { Logo } from './logo';

/** The sticky top bar: the logo on the left, the given actions on the right. */
export function AppHeader({ actions, simplified = false }: { actions?: ReactNode; simplified?: boolean }) {
  return (
    <header
      className={
        simplified
          ? 'sticky top-0 z-40 bg-transparent backdrop-blur-sm'
          : 'sticky top-0 z-40 border-b border-zinc-800/80 bg-zinc-950/85 backdrop-blur supports-[backdrop-filter]:bg-zinc-950/70'
      }
    >
      <div className="mx-auto flex h-16 max-w-7xl items-center justify-between gap-4 px-4 sm:px-6 lg:px-8">
        <Logo />
        <div className="flex items-center gap-2 sm:gap-3">{actions}</div>
      </div>
    </header>
  );
}
