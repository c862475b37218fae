import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

const sizes = {
  sm: { box: 'space-y-1', label: 'text-xs font-medium text-zinc-400' },
  md: { box: 'space-y-1.5', label: 'text-sm text-zinc-300' },
} as const;

/**
 * A label above its control (the label names it), with an optional hint
 * below and an error that replaces the hint; sm is the console's denser look.
 */
export function Field({
  label,
  children,
  hint,
  error,
  size = 'md',
  className,
}: {
  label: ReactNode;
  children: ReactNode;
  hint?: ReactNode;
  error?: string | null;
  size?: keyof typeof sizes;
  className?: string;
}) {
  return (
    <div className={cn(sizes[size].box, className)}>
      <label className={cn('block', sizes[size].box)}>
        <span className={cn('block', sizes[size].label)}>{label}</span>
        {children}
      </label>
      {error ? (
        <p role="alert" className="text-xs text-rose-300">
          {error}
        </p>
      ) : (
        hint && <p className="text-xs text-zinc-400">{hint}</p>
      )}
    </div>
  );
}
