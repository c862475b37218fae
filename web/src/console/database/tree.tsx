import { ChevronDown, ChevronRight } from 'lucide-react';
import { cn } from '@/lib/cn';
import { Button } from '@/components/ui/button';
import { childPath, type Child, type Listing } from './api';

export type TreeState = {
  listings: Record<string, Listing>;
  expanded: Set<string>;
  selected: string;
  toggle: (path: string) => void;
  select: (path: string) => void;
  more: (path: string) => void;
};

/** A leaf value as JSON, coloured by type. */
export function LeafValue({ value }: { value: unknown }) {
  const tone =
    typeof value === 'string'
      ? 'text-emerald-300'
      : typeof value === 'number'
        ? 'text-sky-300'
        : typeof value === 'boolean'
          ? 'text-amber-300'
          : 'text-zinc-400';
  return <span className={cn('font-mono [overflow-wrap:anywhere]', tone)}>{JSON.stringify(value)}</span>;
}

/** The children of path that its listing holds, each a row, objects expandable. */
export function TreeRows({ path, depth, tree }: { path: string; depth: number; tree: TreeState }) {
  const listing = tree.listings[path];
  if (!listing) return <p className="px-3 py-1 text-xs text-zinc-400">Loading…</p>;
  return (
    <ul className="min-w-0" aria-label={depth === 0 ? 'Data' : undefined}>
      {listing.children.map((c) => (
        <TreeRow key={c.key} parent={path} child={c} depth={depth} tree={tree} />
      ))}
      {listing.next !== undefined && (
        <li style={{ paddingLeft: `${depth * 1.1 + 1.9}rem` }} className="py-1">
          <Button size="sm" variant="ghost" onClick={() => tree.more(path)}>
            Show more ({listing.children.length.toLocaleString()} of {listing.total.toLocaleString()})
          </Button>
        </li>
      )}
    </ul>
  );
}

function TreeRow({
  parent,
  child,
  depth,
  tree,
}: {
  parent: string;
  child: Child;
  depth: number;
  tree: TreeState;
}) {
  const path = childPath(parent, child.key);
  const isObject = child.children !== undefined;
  const open = isObject && tree.expanded.has(path);
  const selected = tree.selected === path;
  return (
    <li data-path={path}>
      <div
        className={cn(
          'flex min-w-0 items-center gap-0.5 pr-2 text-xs',
          selected ? 'bg-brand-500/15 shadow-[inset_2px_0_0] shadow-brand-400' : 'hover:bg-zinc-800/50',
        )}
        style={{ paddingLeft: `${depth * 1.1 + 0.25}rem` }}
      >
        {isObject ? (
          <button
            type="button"
            aria-expanded={open}
            aria-label={`${open ? 'Collapse' : 'Expand'} ${child.key}`}
            onClick={() => tree.toggle(path)}
            className="grid size-6 shrink-0 place-items-center rounded text-zinc-400 hover:bg-zinc-800 hover:text-white focus-visible:outline-2 focus-visible:outline-brand-400"
          >
            {open ? <ChevronDown className="size-3.5" /> : <ChevronRight className="size-3.5" />}
          </button>
        ) : (
          <span className="size-6 shrink-0" aria-hidden />
        )}
        <button
          type="button"
          onClick={() => tree.select(path)}
          aria-current={selected ? 'true' : undefined}
          className="flex min-w-0 flex-1 items-baseline gap-1.5 rounded px-1 py-1 text-left focus-visible:outline-2 focus-visible:outline-brand-400"
        >
          <span className="shrink-0 font-mono text-zinc-200">{child.key}</span>
          {isObject ? (
            <span className="truncate text-[11px] text-zinc-400">
              {(child.children ?? 0).toLocaleString()} {child.children === 1 ? 'child' : 'children'}
            </span>
          ) : (
            <>
              <span className="text-zinc-400" aria-hidden>
                :
              </span>
              <LeafValue value={child.value} />
            </>
          )}
        </button>
      </div>
      {open && <TreeRows path={path} depth={depth + 1} tree={tree} />}
    </li>
  );
}
