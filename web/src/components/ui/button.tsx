import type { ButtonHTMLAttributes, ReactNode, Ref } from 'react';
import { cn } from '@/lib/cn';

/** How a button reads: the main action, a quiet one, a bare one, or one that destroys something. */
export type ButtonVariant = 'primary' | 'secondary' | 'ghost' | 'danger';

// A primary button darkens on hover: white on brand-500 is under the 4.5:1 contrast small text needs.
const variants: Record<ButtonVariant, string> = {
  primary: 'bg-brand-600 text-white hover:bg-violet-700 disabled:bg-brand-600/50',
  secondary: 'border border-zinc-700 bg-zinc-900 text-zinc-100 hover:border-zinc-600 hover:bg-zinc-800',
  ghost: 'text-zinc-300 hover:bg-zinc-800 hover:text-white',
  danger: 'border border-red-900/70 bg-red-950/40 text-red-300 hover:border-red-700 hover:bg-red-900/40',
};

const sizes = {
  sm: 'h-7 px-2.5 text-xs',
  md: 'h-9 px-3.5 text-sm',
  lg: 'h-11 px-5 text-sm font-semibold',
} as const;

/** The focus ring every control shows when reached by keyboard. */
export const focusRing =
  'focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-400';

/**
 * A button (type "button" unless given): a variant, a size (sm for
 * toolbars, lg for a page's main action), an optional leading icon and a
 * visible focus ring.
 */
export function Button({
  variant = 'secondary',
  size = 'md',
  icon,
  className,
  children,
  ref,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: ButtonVariant;
  size?: keyof typeof sizes;
  icon?: ReactNode;
  ref?: Ref<HTMLButtonElement>;
}) {
  return (
    <button
      ref={ref}
      type="button"
      className={cn(
        'inline-flex shrink-0 items-center justify-center gap-1.5 rounded-lg font-medium whitespace-nowrap transition disabled:cursor-not-allowed disabled:opacity-60',
        focusRing,
        sizes[size],
        variants[variant],
        className,
      )}
      {...rest}
    >
      {icon}
      {children}
    </button>
  );
}

/** A square button that shows only an icon; label is its accessible name and tooltip. */
export function IconButton({
  label,
  size = 'sm',
  children,
  className,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { label: string; size?: 'sm' | 'md' }) {
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className={cn(
        'inline-flex shrink-0 items-center justify-center text-zinc-400 transition hover:bg-zinc-800 hover:text-white disabled:opacity-40',
        size === 'sm' ? 'size-7 rounded-md' : 'size-9 rounded-lg',
        focusRing,
        className,
      )}
      {...rest}
    >
      {children}
    </button>
  );
}
