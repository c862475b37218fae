/** The console's own layout pieces; its controls are the shared ones of src/components/ui. */
import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

const tones = {
  zinc: 'bg-zinc-800 text-zinc-300',
  brand: 'bg-brand-500/15 text-brand-300',
  green: 'bg-emerald-500/15 text-emerald-300',
  red: 'bg-red-500/15 text-red-300',
  amber: 'bg-amber-500/15 text-amber-300',
  sky: 'bg-sky-500/15 text-sky-300',
};

/** A small pill. */
export function Badge({
  tone = 'zinc',
  children,
  className,
}: {
  tone?: keyof typeof tones;
  children: ReactNode;
  className?: string;
}) {
  return (
    <span
      className={cn(
        'inline-flex items-center rounded px-1.5 py-0.5 text-[11px] leading-none font-medium',
        tones[tone],
        className,
      )}
    >
      {children}
    </span>
  );
}

/** A bordered surface with an optional title bar. */
export function Panel({
  title,
  actions,
  children,
  className,
}: {
  title?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
}) {
  return (
    <section
      className={cn('flex min-w-0 flex-col rounded-xl border border-zinc-800 bg-zinc-900/60', className)}
    >
      {(title || actions) && (
        <header className="flex min-h-11 items-center gap-2 border-b border-zinc-800 px-3 py-1.5">
          <h2 className="min-w-0 flex-1 truncate text-sm font-semibold text-zinc-200">{title}</h2>
          {actions}
        </header>
      )}
      {children}
    </section>
  );
}

/** What a list shows when it has nothing. */
export function Empty({ icon, title, children }: { icon?: ReactNode; title: string; children?: ReactNode }) {
  return (
    <div className="flex flex-col items-center justify-center gap-2 px-6 py-10 text-center">
      {icon && <div className="text-zinc-400">{icon}</div>}
      <p className="font-medium text-zinc-300">{title}</p>
      {children && <div className="max-w-sm text-xs text-zinc-400">{children}</div>}
    </div>
  );
}

/** The title row of a tab. */
export function TabHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <div className="flex flex-wrap items-end gap-3">
      <div className="min-w-0 flex-1 basis-64">
        <h1 className="text-lg font-semibold tracking-tight text-white">{title}</h1>
        {description && <p className="mt-0.5 text-xs text-zinc-400">{description}</p>}
      </div>
      {actions && <div className="flex flex-wrap items-center gap-2 sm:shrink-0">{actions}</div>}
    </div>
  );
}

/** A message bar for an error. */
export function ErrorNote({ children }: { children: ReactNode }) {
  return (
    <div
      role="alert"
      className="rounded-lg border border-red-900/60 bg-red-950/40 px-3 py-2 text-xs text-red-200"
    >
      {children}
    </div>
  );
}
