import { ChevronRight } from 'lucide-react';
import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

/**
 * A path as a row of links: the root, then each segment; `onGo(depth)` opens
 * the root (0) or the path of its first `depth` segments.
 */
export function Breadcrumbs({
  label,
  root,
  segs,
  onGo,
}: {
  label: string;
  root: ReactNode;
  segs: string[];
  onGo: (depth: number) => void;
}) {
  return (
    <nav
      aria-label={label}
      className="flex min-h-8 flex-wrap items-center gap-0.5 rounded-lg border border-zinc-800 bg-zinc-900/60 px-2 py-1 font-mono text-xs"
    >
      <button
        type="button"
        onClick={() => onGo(0)}
        className="flex items-center gap-1 rounded px-1.5 py-0.5 text-zinc-300 hover:bg-zinc-800 hover:text-white"
      >
        {root}
      </button>
      {segs.map((s, i) => (
        <span key={i} className="flex items-center gap-0.5">
          <ChevronRight className="size-3.5 text-zinc-400" aria-hidden />
          <button
            type="button"
            onClick={() => onGo(i + 1)}
            className={cn(
              'rounded px-1.5 py-0.5 hover:bg-zinc-800',
              i === segs.length - 1 ? 'text-white' : 'text-zinc-400',
            )}
          >
            {s}
          </button>
        </span>
      ))}
    </nav>
  );
}
