import { LoaderCircle } from 'lucide-react';
import { progressText, type Progress } from '../api/client';

/**
 * A line saying what is under way, with a spinner; with progress, how far
 * it is ("42% (4,200 of 10,000 documents)") and a bar. Only what is under
 * way is announced (politely, once): the count changes too often to be
 * read out, so assistive technology finds it on the bar.
 */
export function Working({ children, progress }: { children: string; progress?: Progress | null }) {
  const pct = progress?.total ? Math.floor((progress.done * 100) / progress.total) : null;
  const howFar = progress ? progressText(progress) : null;
  return (
    <div className="flex flex-col gap-1.5 rounded-lg border border-zinc-800 bg-zinc-900/60 px-3 py-1.5 text-xs text-zinc-300">
      <span className="flex items-center gap-2">
        <LoaderCircle className="size-3.5 shrink-0 animate-spin motion-reduce:animate-none" aria-hidden />
        <span className="min-w-0 break-words">
          <span role="status">{children}</span>
          {howFar && <span aria-hidden> {howFar}</span>}
        </span>
      </span>
      {pct !== null && (
        <div
          role="progressbar"
          aria-label={children}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={pct}
          aria-valuetext={howFar ?? undefined}
          className="h-1 overflow-hidden rounded-full bg-zinc-800"
        >
          <div className="bg-brand-400 h-full transition-[width]" style={{ width: `${pct}%` }} />
        </div>
      )}
    </div>
  );
}
