import { LoaderCircle } from 'lucide-react';
import { progressText, type Progress } from '../api/client';

/**
 * A line saying what is under way, with a spinner, announced politely; with
 * progress, how far it is ("42% (4,200 of 10,000 documents)") and a bar.
 */
export function Working({ children, progress }: { children: string; progress?: Progress | null }) {
  const pct = progress?.total ? Math.floor((progress.done * 100) / progress.total) : null;
  return (
    <div
      role="status"
      className="flex flex-col gap-1.5 rounded-lg border border-zinc-800 bg-zinc-900/60 px-3 py-1.5 text-xs text-zinc-300"
    >
      <span className="flex items-center gap-2">
        <LoaderCircle className="size-3.5 shrink-0 animate-spin motion-reduce:animate-none" aria-hidden />
        <span className="min-w-0 break-words">
          {children}
          {progress && ` ${progressText(progress)}`}
        </span>
      </span>
      {pct !== null && (
        <div
          role="progressbar"
          aria-label={children}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={pct}
          className="h-1 overflow-hidden rounded-full bg-zinc-800"
        >
          <div className="bg-brand-400 h-full transition-[width]" style={{ width: `${pct}%` }} />
        </div>
      )}
    </div>
  );
}
