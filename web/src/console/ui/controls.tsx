import {
  forwardRef,
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from 'react';
import { cn } from '@/lib/cn';

type Variant = 'primary' | 'secondary' | 'ghost' | 'danger';

// A primary button darkens on hover: white on brand-500 is under the 4.5:1 contrast small text needs.
const variants: Record<Variant, string> = {
  primary: 'bg-brand-600 text-white hover:bg-violet-700 disabled:bg-brand-600/50',
  secondary: 'border border-zinc-700 bg-zinc-900 text-zinc-100 hover:border-zinc-600 hover:bg-zinc-800',
  ghost: 'text-zinc-300 hover:bg-zinc-800 hover:text-white',
  danger: 'border border-red-900/70 bg-red-950/40 text-red-300 hover:border-red-700 hover:bg-red-900/40',
};

/** A button; size sm suits toolbars. */
export const Button = forwardRef<
  HTMLButtonElement,
  ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; size?: 'sm' | 'md'; icon?: ReactNode }
>(function Button({ variant = 'secondary', size = 'md', icon, className, children, ...rest }, ref) {
  return (
    <button
      ref={ref}
      type="button"
      className={cn(
        'inline-flex shrink-0 items-center justify-center gap-1.5 rounded-lg font-medium whitespace-nowrap transition focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-400 disabled:cursor-not-allowed disabled:opacity-60',
        size === 'sm' ? 'h-7 px-2.5 text-xs' : 'h-9 px-3.5 text-sm',
        variants[variant],
        className,
      )}
      {...rest}
    >
      {icon}
      {children}
    </button>
  );
});

/** A square button that shows only an icon; label is its accessible name. */
export function IconButton({
  label,
  children,
  className,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { label: string }) {
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className={cn(
        'inline-flex size-7 shrink-0 items-center justify-center rounded-md text-zinc-400 transition hover:bg-zinc-800 hover:text-white focus-visible:outline-2 focus-visible:outline-brand-400 disabled:opacity-40',
        className,
      )}
      {...rest}
    >
      {children}
    </button>
  );
}

/** Whether className sets a utility of the given prefix (w-, h-), so a default is left out. */
const sets = (className: string | undefined, prefix: string) =>
  !!className?.split(/\s+/).some((c) => c.replace(/^\w+:/, '').startsWith(prefix));

const field =
  'rounded-lg border border-zinc-700 bg-zinc-950 px-2.5 text-sm text-zinc-100 placeholder:text-zinc-400 focus:border-brand-500 focus:outline-none focus:ring-2 focus:ring-brand-500/30';

export const Input = forwardRef<HTMLInputElement, InputHTMLAttributes<HTMLInputElement>>(function Input(
  { className, ...rest },
  ref,
) {
  return (
    <input
      ref={ref}
      className={cn(field, !sets(className, 'h-') && 'h-9', !sets(className, 'w-') && 'w-full', className)}
      {...rest}
    />
  );
});

export function Textarea({ className, ...rest }: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <textarea className={cn(field, 'w-full py-2 font-mono text-xs leading-relaxed', className)} {...rest} />
  );
}

export function Select({ className, children, ...rest }: SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select
      className={cn(
        field,
        'pr-7',
        !sets(className, 'h-') && 'h-9',
        !sets(className, 'w-') && 'w-full',
        className,
      )}
      {...rest}
    >
      {children}
    </select>
  );
}

/** A label above a control. */
export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: ReactNode }) {
  return (
    <label className="block space-y-1">
      <span className="text-xs font-medium text-zinc-400">{label}</span>
      {children}
      {hint && <span className="block text-xs text-zinc-400">{hint}</span>}
    </label>
  );
}

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
