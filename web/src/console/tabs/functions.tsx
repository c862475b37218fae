import { Pause, Play, ScrollText, Zap } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { api, messageOf } from '../api/client';
import { usePolled } from '../api/live';
import { Button } from '@/components/ui/button';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { clock } from '../ui/format';

/** One delivery attempt of a trigger, as /emulator/v1/functions/events lists it. */
type Attempt = {
  eventId: string;
  trigger: string;
  owner: string;
  source: string;
  resource: string;
  type: string;
  attempt: number;
  status: number;
  error?: string;
  delivered: boolean;
  at: string;
  latencyNs: number;
  durationNs: number;
};
/** One function a codebase's runtime discovered, as /emulator/v1/functions lists it. */
type Fn = {
  name: string;
  codebase: string;
  runtime: string;
  kind: string;
  platform?: string;
  regions: string[];
  trigger?: { source: string; eventType: string; instance?: string; pattern?: string; retry: boolean };
  blockingEvent?: string;
  schedule?: string;
  entryPoint?: string;
  url?: string;
  calls: number;
  errors: number;
  lastRun?: Run;
};
/** One invocation of a function, as /emulator/v1/functions/runs lists it. */
type Run = {
  id: string;
  codebase: string;
  function: string;
  started: string;
  running: boolean;
  status: number;
  error?: string;
  failed: boolean;
  durationNs: number;
};
type State = {
  state: string;
  functions?: Fn[];
  codebases?: { name: string; runtime: string; state: string }[];
  detail?: string;
  paused?: boolean;
  url?: string;
  exit?: { at: string; code?: number; signal?: string };
  restarts?: number;
  build?: { state: string; at: string };
};

const stateTone = (state?: string) =>
  state === 'running' ? 'green' : state === 'failed' || state === 'exited' ? 'red' : 'amber';

/** How the process last ended: its signal or exit code, and when. */
const exitText = (exit: NonNullable<State['exit']>) =>
  `${exit.signal ?? `exit code ${exit.code ?? '?'}`} at ${clock(exit.at)}`;
type Line = {
  seq: number;
  time: string;
  stream: string;
  text: string;
  codebase?: string;
  function?: string;
  run?: string;
  severity?: string;
};

/** What starts a function, in a few words: how it is called, or its event and filter. */
function triggerText(f: Fn) {
  if (f.kind === 'blocking') return `auth ${f.blockingEvent}`;
  if (f.kind === 'schedule') return `schedule · ${f.schedule}`;
  if (f.kind === 'task') return `task queue${f.trigger?.retry ? ' · retry' : ''}`;
  if (f.kind === 'https' && f.platform === 'run') return `HTTP ${f.entryPoint ?? ''}`;
  if (f.kind === 'https') return 'HTTPS onRequest';
  if (f.kind === 'callable') return 'callable onCall';
  if (!f.trigger) return f.kind;
  const type = f.trigger.eventType.replace(/^google\.(cloud|firebase)\./, '').replace(/\.v1\./, ' ');
  const where = [f.trigger.instance, f.trigger.pattern].filter((x) => x && x !== '*').join(' ');
  return `${type}${where ? ` · ${where}` : ''}${f.trigger.retry ? ' · retry' : ''}`;
}

const ms = (ns: number) =>
  ns >= 1e9 ? `${(ns / 1e9).toFixed(2)} s` : `${(ns / 1e6).toFixed(ns < 1e7 ? 1 : 0)} ms`;

/** Trigger deliveries and the functions process's log, live; pause and resume background triggers. */
export function FunctionsTab() {
  const state = usePolled(() => api<State>('/emulator/v1/functions'), 2000);
  const events = usePolled(
    () => api<{ events: Attempt[] }>('/emulator/v1/functions/events').then((r) => r.events),
    1500,
  );
  const [failedOnly, setFailedOnly] = useState(false);
  const [logFunction, setLogFunction] = useState('');
  const lines = useFunctionLines();
  const toast = useToast();
  const st = state.data;
  const selected = st?.functions?.find((f) => f.name === logFunction);
  if (state.error && !st)
    return (
      <div className="space-y-4">
        <TabHeader title="Functions" />
        <Empty icon={<Zap className="size-6" />} title="Functions are not running">
          Name a functions source in firebase.json (functions.source) and loupe builds and runs it.
        </Empty>
      </div>
    );
  const shown = [...(events.data ?? [])].reverse().filter((a) => !failedOnly || !a.delivered);
  return (
    <div className="space-y-4">
      <TabHeader
        title="Functions"
        description={
          <span className="flex flex-wrap items-center gap-2">
            <Badge tone={stateTone(st?.state)}>{st?.state ?? '…'}</Badge>
            {(st?.codebases?.length ?? 0) > 1 &&
              st?.codebases?.map((c) => (
                <Badge key={c.name} tone={stateTone(c.state)}>
                  {c.name} ({c.runtime}): {c.state}
                </Badge>
              ))}
            {st?.build?.state === 'building' && st.state !== 'building' && (
              <Badge tone="amber">rebuilding</Badge>
            )}
            {st?.build?.state === 'failed' && st.state !== 'failed' && <Badge tone="red">build failed</Badge>}
            {!!st?.restarts && (
              <span>
                restarted {st.restarts}× · last exit {st.exit ? exitText(st.exit) : ''}
              </span>
            )}
            {st?.paused && <Badge tone="amber">background triggers paused</Badge>}
            {st?.url && <span className="font-mono">{st.url}</span>}
          </span>
        }
        actions={
          <Button
            size="sm"
            variant={st?.paused ? 'primary' : 'secondary'}
            icon={st?.paused ? <Play className="size-3.5" /> : <Pause className="size-3.5" />}
            onClick={async () => {
              try {
                await api('/emulator/v1/functions/backgroundTriggers', {
                  method: 'PUT',
                  json: { paused: !st?.paused },
                });
                state.reload();
              } catch (err) {
                toast({ tone: 'error', title: 'Could not switch the triggers', description: messageOf(err) });
              }
            }}
          >
            {st?.paused ? 'Resume triggers' : 'Pause triggers'}
          </Button>
        }
      />
      {st?.detail && (st.state !== 'running' || st.build?.state === 'failed') && (
        <ErrorNote>
          <span className="font-mono whitespace-pre-wrap [overflow-wrap:anywhere]">{st.detail}</span>
        </ErrorNote>
      )}
      {st?.paused && (
        <p className="rounded-lg border border-amber-900/50 bg-amber-950/30 px-3 py-2 text-xs text-amber-200">
          While paused, writes trigger nothing (as firebase-tools’ disableBackgroundTriggers); resume to
          deliver new ones.
        </p>
      )}
      {!!st?.functions?.length && (
        <Panel title="Functions">
          <ul className="divide-y divide-zinc-800/70" aria-label="Functions">
            {st.functions.map((f) => (
              <li
                key={`${f.codebase}/${f.name}`}
                className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2 text-sm"
              >
                <span className="min-w-0 flex-[1_1_100%] sm:flex-[1_1_0%]">
                  <span className="block font-medium [overflow-wrap:anywhere] text-zinc-100">{f.name}</span>
                  <span className="block font-mono text-xs [overflow-wrap:anywhere] text-zinc-400">
                    {triggerText(f)}
                  </span>
                </span>
                <Badge>{f.runtime}</Badge>
                <Badge>{f.codebase}</Badge>
                <RunSummary f={f} />
                {f.kind === 'schedule' && (
                  <Button
                    size="sm"
                    variant="secondary"
                    icon={<Play className="size-3.5" />}
                    onClick={async () => {
                      try {
                        await api(`/emulator/v1/functions/${encodeURIComponent(f.name)}/run`, {
                          method: 'POST',
                        });
                        toast({ title: `${f.name} runs` });
                      } catch (err) {
                        toast({
                          tone: 'error',
                          title: `Could not run ${f.name}`,
                          description: messageOf(err),
                        });
                      }
                    }}
                  >
                    Run
                  </Button>
                )}
                <Button
                  size="sm"
                  variant={logFunction === f.name ? 'primary' : 'secondary'}
                  icon={<ScrollText className="size-3.5" />}
                  aria-pressed={logFunction === f.name}
                  aria-label={`Runs of ${f.name}`}
                  onClick={() => setLogFunction(logFunction === f.name ? '' : f.name)}
                >
                  Runs
                </Button>
              </li>
            ))}
          </ul>
        </Panel>
      )}
      {selected && <RunsPanel f={selected} lines={lines} />}
      <div className="grid grid-cols-1 gap-4 2xl:grid-cols-2">
        <Panel
          title="Trigger deliveries"
          actions={
            <label className="flex items-center gap-1.5 text-xs text-zinc-400">
              <input
                type="checkbox"
                checked={failedOnly}
                onChange={(e) => setFailedOnly(e.target.checked)}
                className="accent-brand-500"
              />
              failed only
            </label>
          }
        >
          {events.data && shown.length === 0 && (
            <Empty
              icon={<Zap className="size-6" />}
              title={failedOnly ? 'No failed delivery' : 'No delivery yet'}
            >
              Write to Firestore and the triggers that match run here.
            </Empty>
          )}
          <ul className="divide-y divide-zinc-800/70" aria-label="Deliveries">
            {shown.map((a) => (
              <li
                key={`${a.eventId}-${a.trigger}-${a.attempt}`}
                className="grid grid-cols-[auto_minmax(0,1fr)_auto] items-start gap-x-3 gap-y-0.5 px-3 py-2"
              >
                <span
                  className={cn('mt-1.5 size-2 rounded-full', a.delivered ? 'bg-emerald-400' : 'bg-red-400')}
                  aria-hidden
                />
                <span className="min-w-0">
                  <span className="flex flex-wrap items-center gap-2">
                    <span className="font-medium text-zinc-100">{a.trigger}</span>
                    <Badge>{a.type.replace(/^google\.cloud\.firestore\.document\.v1\./, '')}</Badge>
                    {a.attempt > 1 && <Badge tone="amber">attempt {a.attempt}</Badge>}
                    <Badge tone={a.delivered ? 'green' : 'red'}>{a.status || 'no answer'}</Badge>
                  </span>
                  {a.source === 'firestore' ? (
                    <Link
                      to={`../firestore?path=${encodeURIComponent(a.resource)}`}
                      className="block truncate font-mono text-xs text-brand-300 hover:underline"
                    >
                      {a.resource}
                    </Link>
                  ) : (
                    <span className="block truncate font-mono text-xs text-zinc-400">
                      {a.source} {a.resource}
                    </span>
                  )}
                  {a.error && <span className="block text-xs break-words text-red-300">{a.error}</span>}
                </span>
                <span className="tabular text-right text-[11px] leading-relaxed text-zinc-400">
                  <span className="block">{clock(a.at)}</span>
                  <span className="block" title="from the commit to the delivery">
                    waited {ms(a.latencyNs)}
                  </span>
                  <span className="block" title="how long the function took">
                    ran {ms(a.durationNs)}
                  </span>
                </span>
              </li>
            ))}
          </ul>
        </Panel>
        <LogPanel only={logFunction} lines={lines} />
      </div>
    </div>
  );
}

/** The workers' log lines, followed live (the newest 2000). */
function useFunctionLines() {
  const [lines, setLines] = useState<Line[]>([]);
  const last = useRef(0);
  usePolled(async () => {
    const r = await api<{ lines: Line[] }>(`/emulator/v1/functions/logs?after=${last.current}`);
    if (r.lines.length) {
      last.current = r.lines.at(-1)?.seq ?? last.current;
      setLines((ls) => [...ls, ...r.lines].slice(-2000));
    }
    return r.lines.length;
  }, 1500);
  return lines;
}

/** A function's calls, errors and last run, in a few words. */
function RunSummary({ f }: { f: Fn }) {
  return (
    <span className="tabular flex flex-wrap items-center gap-x-2 text-xs text-zinc-400">
      <span>
        {f.calls} {f.calls === 1 ? 'call' : 'calls'}
      </span>
      <span className={f.errors ? 'text-red-300' : undefined}>
        {f.errors} {f.errors === 1 ? 'error' : 'errors'}
      </span>
      <span title={f.lastRun?.started}>
        {f.lastRun ? `last run ${clock(f.lastRun.started)}` : 'never run'}
      </span>
    </span>
  );
}

/** What a run's answer was: running, its status, or that none came. */
function runOutcome(r: Run) {
  if (r.running) return 'running';
  if (r.error) return 'no answer';
  return String(r.status);
}

/** One function's runs, newest first, each with the log lines it wrote. */
function RunsPanel({ f, lines }: { f: Fn; lines: Line[] }) {
  const runs = usePolled(
    () =>
      api<{ runs: Run[] }>(
        `/emulator/v1/functions/runs?function=${encodeURIComponent(f.name)}&codebase=${encodeURIComponent(f.codebase)}`,
      ).then((r) => r.runs.reverse()),
    1500,
    [f.name, f.codebase],
  );
  // Picked from a long list, the runs show where the eye can find them.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.scrollIntoView({ block: 'nearest' }), [f.name, f.codebase]);
  return (
    <div ref={box} className="scroll-mt-4">
      <Panel
        title={
          <span className="flex min-w-0 items-center gap-2">
            <Zap className="size-4 shrink-0 text-zinc-400" />
            <span className="[overflow-wrap:anywhere]">Runs of {f.name}</span>
          </span>
        }
      >
        {runs.data?.length === 0 && (
          <Empty icon={<Zap className="size-6" />} title="Not run yet">
            Each call, delivery or request to {f.name} appears here with what it logged.
          </Empty>
        )}
        <ul className="divide-y divide-zinc-800/70" aria-label={`Runs of ${f.name}`}>
          {runs.data?.map((r) => {
            const own = lines.filter((l) => l.run === r.id);
            return (
              <li key={r.id} className="space-y-1 px-3 py-2">
                <span className="flex flex-wrap items-center gap-2 text-xs">
                  <span
                    className={cn(
                      'size-2 rounded-full',
                      r.running ? 'bg-amber-400' : r.failed ? 'bg-red-400' : 'bg-emerald-400',
                    )}
                    aria-hidden
                  />
                  <span className="tabular text-zinc-300">{clock(r.started)}</span>
                  <Badge tone={r.running ? 'amber' : r.failed ? 'red' : 'green'}>{runOutcome(r)}</Badge>
                  {!r.running && <span className="tabular text-zinc-400">ran {ms(r.durationNs)}</span>}
                  <span className="font-mono text-[11px] text-zinc-400">{r.id}</span>
                </span>
                {r.error && (
                  <span className="block text-xs [overflow-wrap:anywhere] text-red-300">{r.error}</span>
                )}
                <pre
                  tabIndex={0}
                  aria-label={`Log of run ${r.id}`}
                  className="max-h-48 overflow-auto rounded-lg border border-zinc-800 bg-zinc-950/60 px-2.5 py-1.5 font-mono text-[11px] leading-relaxed"
                >
                  {own.length === 0 && <span className="text-zinc-400">Nothing logged.</span>}
                  {own.map((l) => (
                    <LogText key={l.seq} l={l} />
                  ))}
                </pre>
              </li>
            );
          })}
        </ul>
      </Panel>
    </div>
  );
}

/** The workers' log lines, followed live; only those of one function when only names one. */
function LogPanel({ only, lines }: { only: string; lines: Line[] }) {
  const box = useRef<HTMLPreElement>(null);
  const shown = only ? lines.filter((l) => l.function === only) : lines;
  useEffect(() => {
    const el = box.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 80) el.scrollTop = el.scrollHeight;
  }, [lines]);
  return (
    <Panel
      title={
        <span className="flex items-center gap-2">
          <ScrollText className="size-4 text-zinc-400" /> Functions log
          {only && <Badge>{only}</Badge>}
        </span>
      }
    >
      <pre
        tabIndex={0}
        ref={box}
        className="max-h-[32rem] min-h-40 overflow-auto px-3 py-2 font-mono text-[11px] leading-relaxed"
        aria-label="Functions log"
      >
        {shown.length === 0 && <span className="text-zinc-400">Nothing logged yet.</span>}
        {shown.map((l) => (
          <LogText key={l.seq} l={l} />
        ))}
      </pre>
    </Panel>
  );
}

/** One log line, coloured by its severity. */
function LogText({ l }: { l: Line }) {
  return (
    <div
      className={cn(
        'whitespace-pre-wrap [overflow-wrap:anywhere]',
        l.severity === 'ERROR' || l.severity === 'CRITICAL'
          ? 'text-red-300'
          : l.severity === 'WARNING'
            ? 'text-amber-200'
            : l.stream === 'stderr'
              ? 'text-zinc-300'
              : 'text-zinc-400',
      )}
    >
      <span className="text-zinc-400 select-none">{clock(l.time)} </span>
      {l.function && <span className="text-brand-300">{l.function} </span>}
      {l.text}
    </div>
  );
}
