import { cn } from '@/lib/cn';
import { Badge } from '../ui/controls';
import { RulesSource, rangeText } from './rules-source';
import { showValue, valueTone, type Decision } from './types';

const decisionClass = {
  allow: 'bg-emerald-500/15 shadow-[inset_3px_0_0] shadow-emerald-400',
  deny: 'bg-red-500/15 shadow-[inset_3px_0_0] shadow-red-400',
  error: 'bg-amber-500/15 shadow-[inset_3px_0_0] shadow-amber-400',
};

/**
 * The rules source of one decision: the allow line that granted it green,
 * those that did not red (amber for errors), and under each line the value
 * of every expression evaluated on it.
 */
export function DecisionView({ decision, source }: { decision: Decision; source: string }) {
  const allows = new Map((decision.allows ?? []).map((a) => [a.line, a]));
  const exprs = new Map<number, { text: string; value: string; tone: ReturnType<typeof valueTone> }[]>();
  for (const e of decision.expressions ?? []) {
    const list = exprs.get(e.range.line) ?? [];
    const text = rangeText(source, e.range);
    // Innermost first: keep the widest expression of a given text.
    if (!list.some((x) => x.text === text))
      list.push({ text, value: showValue(e.value), tone: valueTone(e.value) });
    exprs.set(e.range.line, list);
  }
  return (
    <RulesSource
      label="Rules source"
      source={source}
      lineClass={(n) => {
        const a = allows.get(n);
        if (!a) return undefined;
        return cn(decisionClass[a.outcome], n === decision.line && 'font-semibold');
      }}
      below={(n) => {
        const a = allows.get(n);
        const list = exprs.get(n);
        if (!list && !a?.message) return null;
        return (
          <div className="flex flex-wrap gap-1 font-sans">
            {a && (
              <span data-decision={a.outcome} className="sr-only">
                {n === decision.line
                  ? 'this allow granted the request'
                  : `this allow ${a.outcome === 'deny' ? 'did not grant it' : 'failed'}`}
              </span>
            )}
            {a?.message && <Badge tone="amber">{a.message}</Badge>}
            {list?.map((x, i) => (
              <span
                key={i}
                className="inline-flex max-w-full items-center gap-1 rounded border border-zinc-800 bg-zinc-950 px-1.5 py-0.5 text-[11px]"
              >
                <code className="truncate text-zinc-400">{x.text}</code>
                <span className="text-zinc-400">→</span>
                <Badge tone={x.tone} className="font-mono">
                  {x.value}
                </Badge>
              </span>
            ))}
          </div>
        );
      }}
    />
  );
}
