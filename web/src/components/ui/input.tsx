import type { InputHTMLAttributes, Ref, SelectHTMLAttributes, TextareaHTMLAttributes } from 'react';
import { cn } from '@/lib/cn';

/** Whether className sets a utility of the given prefix (w-, h-), so a default is left out. */
const sets = (className: string | undefined, prefix: string) =>
  !!className?.split(/\s+/).some((c) => c.replace(/^\w+:/, '').startsWith(prefix));

const field =
  'rounded-lg border border-zinc-700 bg-zinc-950 px-2.5 text-sm text-zinc-100 placeholder:text-zinc-400 focus:border-brand-500 focus:ring-2 focus:ring-brand-500/30 focus:outline-none aria-invalid:border-rose-500/70';

/** A text input, h-9 and full width unless className says otherwise. */
export function Input({
  className,
  ref,
  ...rest
}: InputHTMLAttributes<HTMLInputElement> & { ref?: Ref<HTMLInputElement> }) {
  return (
    <input
      ref={ref}
      className={cn(field, !sets(className, 'h-') && 'h-9', !sets(className, 'w-') && 'w-full', className)}
      {...rest}
    />
  );
}

/** A multi-line text field, full width. */
export function Textarea({
  className,
  ref,
  ...rest
}: TextareaHTMLAttributes<HTMLTextAreaElement> & { ref?: Ref<HTMLTextAreaElement> }) {
  return <textarea ref={ref} className={cn(field, 'w-full py-2', className)} {...rest} />;
}

/** A native select, h-9 and full width unless className says otherwise. */
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
