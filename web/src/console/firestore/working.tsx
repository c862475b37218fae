import { LoaderCircle } from 'lucide-react';

/** A line saying what is under way, with a spinner, announced politely. */
export function Working({ children }: { children: string }) {
  return (
    <p
      role="status"
      className="flex items-center gap-2 rounded-lg border border-zinc-800 bg-zinc-900/60 px-3 py-1.5 text-xs text-zinc-300"
    >
      <LoaderCircle className="size-3.5 animate-spin motion-reduce:animate-none" aria-hidden />
      {children}
    </p>
  );
}
