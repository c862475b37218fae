import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

/**
 * A rules file with line numbers. lineClass shades a line; gutter adds text
 * before it (coverage counts); below adds content under it (evaluated
 * expressions).
 */
export function RulesSource({
  source,
  lineClass,
  gutter,
  below,
  label,
}: {
  source: string;
  lineClass?: (line: number) => string | undefined;
  gutter?: (line: number) => ReactNode;
  below?: (line: number) => ReactNode;
  label: string;
}) {
  const lines = source.split('\n');
  return (
    <div
      role="figure"
      aria-label={label}
      tabIndex={0}
      className="overflow-x-auto font-mono text-xs leading-5"
    >
      <ol className="min-w-max py-2">
        {lines.map((text, i) => {
          const n = i + 1;
          const extra = below?.(n);
          return (
            <li key={n} data-line={n} className={cn('relative', lineClass?.(n))}>
              <div className="flex">
                {gutter && (
                  <span className="w-14 shrink-0 pr-1.5 text-right text-[10px] text-zinc-400 select-none sm:w-20 sm:pr-2">
                    {gutter(n)}
                  </span>
                )}
                <span className="w-8 shrink-0 pr-2 text-right text-zinc-400 select-none sm:w-9 sm:pr-3">
                  {n}
                </span>
                <code className="pr-4 whitespace-pre text-zinc-200">{text || ' '}</code>
              </div>
              {extra && <div className="pb-1 pl-12">{extra}</div>}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

/** The source text a 1-based range covers (its first line only when it spans lines). */
export function rangeText(
  source: string,
  r: { line: number; column: number; endLine: number; endColumn: number },
): string {
  const line = Array.from(source.split('\n')[r.line - 1] ?? '');
  const end = r.endLine === r.line ? r.endColumn - 1 : line.length;
  return line.slice(r.column - 1, end).join('');
}
