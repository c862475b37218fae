import { cn } from '@/lib/cn';
import { Badge } from '../ui/controls';
import { RulesSource, rangeText } from './rules-source';
import { showValue, valueTone, type Decision, type Range, type RulesValue } from './types';

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
                <Badge tone={x.tone} className="max-w-full font-mono">
                  <Folded text={x.value} />
                </Badge>
              </span>
            ))}
          </div>
        );
      }}
    />
  );
}

/** Past this many characters a value is folded to its start, and opens on a click. */
const foldAt = 80;

/** A value's text, folded when long (a request.resource or request.auth dump). */
export function Folded({ text }: { text: string }) {
  if (text.length <= foldAt) return <>{text}</>;
  return (
    <details className="min-w-0">
      <summary className="cursor-pointer truncate">{text.slice(0, foldAt - 20)}…</summary>
      <span className="block whitespace-pre-wrap [overflow-wrap:anywhere]">{text}</span>
    </details>
  );
}

type Step = { line: number; text: string; value: string; tone: ReturnType<typeof valueTone>; allow: boolean };

const width = (r: Range) => (r.endLine - r.line) * 10_000 + r.endColumn - r.column;

/**
 * What decided a request, in the order read: each allow tried with its whole
 * condition and value (the granting one alone when one granted), then, for a
 * denial, the conditions in the functions it called that were false or failed.
 */
export function decidingSteps(decision: Decision, source: string): Step[] {
  const allows = decision.allows ?? [];
  const tried = decision.line ? allows.filter((a) => a.line === decision.line) : allows;
  const allowLines = new Set(allows.map((a) => a.line));
  const widest = new Map<number, { range: Range; value: RulesValue }>();
  for (const e of decision.expressions ?? []) {
    const w = widest.get(e.range.line);
    if (!w || width(e.range) > width(w.range)) widest.set(e.range.line, e);
  }
  const step = (line: number, allow: boolean): Step | null => {
    const e = widest.get(line);
    if (!e) return null;
    return {
      line,
      text: rangeText(source, e.range),
      value: showValue(e.value),
      tone: valueTone(e.value),
      allow,
    };
  };
  const steps = tried.flatMap((a) => step(a.line, true) ?? []);
  if (!decision.line)
    for (const line of [...widest.keys()].sort((a, b) => a - b)) {
      if (allowLines.has(line)) continue;
      const s = step(line, false);
      if (s && s.tone !== 'green' && s.tone !== 'zinc') steps.push(s);
    }
  return steps;
}

/** The deciding expressions, first in the request's detail: each wraps rather than running off-screen. */
export function DecidedBy({ decision, source }: { decision: Decision; source: string }) {
  const steps = decidingSteps(decision, source);
  if (!steps.length) return null;
  return (
    <ol aria-label="Deciding expressions" className="space-y-1">
      {steps.map((st) => (
        <li
          key={`${st.line}-${st.allow}`}
          className="flex items-start gap-2 rounded-md border border-zinc-800 bg-zinc-950/60 px-2 py-1 text-xs"
        >
          <span className="tabular shrink-0 text-zinc-400">
            {st.allow ? `allow, line ${st.line}` : `line ${st.line}`}
          </span>
          <span className="min-w-0 flex-1 font-mono [overflow-wrap:anywhere] whitespace-pre-wrap text-zinc-200">
            {st.text} <span className="text-zinc-400">→</span>{' '}
            <Badge tone={st.tone} className="max-w-full font-mono">
              <Folded text={st.value} />
            </Badge>
          </span>
        </li>
      ))}
    </ol>
  );
}
