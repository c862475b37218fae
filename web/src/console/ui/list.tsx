import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

/** A selectable row of a list column. */
export function ListRow({
  selected,
  onClick,
  children,
  className,
}: {
  selected?: boolean;
  onClick: () => void;
  children: ReactNode;
  className?: string;
}) {
  return (
    <li>
      <button
        type="button"
        onClick={onClick}
        aria-current={selected ? 'true' : undefined}
        className={cn(
          'flex w-full items-center gap-2 px-3 py-1.5 text-left transition focus-visible:bg-zinc-800 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-brand-400',
          selected
            ? 'bg-brand-500/15 text-white shadow-[inset_2px_0_0] shadow-brand-400'
            : 'text-zinc-300 hover:bg-zinc-800/60',
          className,
        )}
      >
        {children}
      </button>
    </li>
  );
}
