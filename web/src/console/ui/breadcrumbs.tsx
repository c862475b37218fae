import { ChevronRight, Pencil } from 'lucide-react';
import { useId, useState, type ReactNode } from 'react';
import { cn } from '@/lib/cn';
import { IconButton } from '@/components/ui/button';
import { Input } from '@/components/ui/input';

/**
 * A path as a row of links: the root, then each segment; `onGo(depth)` opens
 * the root (0) or the path of its first `depth` segments. With `onPath`, the
 * path can also be typed: clicking the bar (or its pencil) turns it into a
 * field, Enter goes to what was typed (onPath answers why not, or null when
 * it went), Escape puts the links back.
 */
export function Breadcrumbs({
  label,
  root,
  segs,
  onGo,
  onPath,
  placeholder,
}: {
  label: string;
  root: ReactNode;
  segs: string[];
  onGo: (depth: number) => void;
  onPath?: (path: string) => string | null;
  placeholder?: string;
}) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  const errorId = useId();
  const bar =
    'flex min-h-8 flex-wrap items-center gap-0.5 rounded-lg border border-zinc-800 bg-zinc-900/60 px-2 py-1 font-mono text-xs';
  const edit = () => {
    setText(segs.join('/'));
    setError('');
    setEditing(true);
  };
  const stop = () => {
    setEditing(false);
    setError('');
  };
  if (editing && onPath)
    return (
      <div>
        <form
          aria-label={label}
          className={cn(bar, 'flex-nowrap gap-2')}
          onSubmit={(e) => {
            e.preventDefault();
            const why = onPath(text);
            if (why) setError(why);
            else stop();
          }}
        >
          <Input
            aria-label={`${label}, typed`}
            aria-invalid={!!error}
            aria-describedby={error ? errorId : undefined}
            value={text}
            placeholder={placeholder}
            onChange={(e) => {
              setText(e.target.value);
              setError('');
            }}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                stop();
              }
            }}
            onBlur={() => !error && stop()}
            className="h-6 min-w-0 flex-1 border-none bg-transparent px-1 font-mono text-xs"
            autoFocus
            spellCheck={false}
            autoCapitalize="off"
            autoComplete="off"
          />
          <span className="hidden shrink-0 text-[11px] text-zinc-400 sm:inline">
            Enter to go · Esc to cancel
          </span>
        </form>
        {error && (
          <p id={errorId} role="alert" className="mt-1 px-1 text-xs text-red-300">
            {error}
          </p>
        )}
      </div>
    );
  return (
    <nav
      aria-label={label}
      className={cn(bar, onPath && 'cursor-text')}
      onClick={(e) => onPath && e.target === e.currentTarget && edit()}
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
      {onPath && (
        <IconButton label={`Edit ${label.toLowerCase()}`} onClick={edit} className="ml-auto">
          <Pencil className="size-3.5" />
        </IconButton>
      )}
    </nav>
  );
}
