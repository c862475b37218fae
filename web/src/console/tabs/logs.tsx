import { Pause, Play, ScrollText } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { cn } from '@/lib/cn';
import { Button } from '@/components/ui/button';
import { Input, Select } from '@/components/ui/input';
import { ApiError, ownerHeaders } from '../api/client';
import { useOverview } from '../api/overview';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { clock } from '../ui/format';
import { jsonText } from '../ui/json';

/** One log record as GET /emulator/v1/logs streams it (docs/admin-api.md: Logs). */
export type LogEntry = {
  id: number;
  time: string;
  level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  service: string;
  codebase?: string;
  function?: string;
  message: string;
  payload?: Record<string, unknown>;
};

const maxShown = 1000;

const levelTone = { DEBUG: 'zinc', INFO: 'sky', WARN: 'amber', ERROR: 'red' } as const;

/** JSON lines read from a streamed response body, each handed to onLines as they arrive. */
async function readLines(body: ReadableStream<Uint8Array>, onLines: (lines: LogEntry[]) => void) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const parts = (rest + decoder.decode(value, { stream: true })).split('\n');
    rest = parts.pop() ?? '';
    const lines = parts.filter((l) => l.trim()).map((l) => JSON.parse(l) as LogEntry);
    if (lines.length) onLines(lines);
  }
}

/**
 * The log entries matching filters, newest first, followed live over one
 * streamed request; while paused, new entries are held (and counted), and
 * resume() shows them.
 */
function useLogStream(filters: Record<string, string>, paused: boolean) {
  const key = new URLSearchParams(Object.entries(filters).filter(([, v]) => v)).toString();
  // The lines shown and held, for the filters of key (another key's are stale).
  const [log, setLog] = useState<{ key: string; entries: LogEntry[]; held: LogEntry[] }>({
    key: '',
    entries: [],
    held: [],
  });
  const [error, setError] = useState('');
  const pausedRef = useRef(paused);
  useEffect(() => {
    pausedRef.current = paused;
  });
  useEffect(() => {
    const ctrl = new AbortController();
    const query = new URLSearchParams(key);
    query.set('limit', String(maxShown));
    query.set('follow', '1');
    (async () => {
      const res = await fetch(`/emulator/v1/logs?${query}`, { headers: ownerHeaders, signal: ctrl.signal });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
        throw new ApiError(body.error?.message ?? `${res.status} ${res.statusText}`, res.status);
      }
      setError('');
      await readLines(res.body, (lines) =>
        setLog((s) => {
          const base = s.key === key ? s : { key, entries: [], held: [] };
          return pausedRef.current
            ? { ...base, held: [...base.held, ...lines].slice(-maxShown) }
            : { ...base, entries: [...[...lines].reverse(), ...base.entries].slice(0, maxShown) };
        }),
      );
    })().catch((e: unknown) => {
      if (!ctrl.signal.aborted) setError(e instanceof Error ? e.message : String(e));
    });
    return () => ctrl.abort();
  }, [key]);
  const current = log.key === key;
  return {
    entries: current ? log.entries : [],
    held: current ? log.held.length : 0,
    error,
    resume: () => {
      pausedRef.current = false;
      setLog((s) => ({
        ...s,
        entries: [...[...s.held].reverse(), ...s.entries].slice(0, maxShown),
        held: [],
      }));
    },
  };
}

/** Every service's log lines (loupe's own, functions' output, rules decisions), live and filtered. */
export function LogsTab() {
  const overview = useOverview();
  const [params, setParams] = useSearchParams();
  const filters = {
    service: params.get('service') ?? '',
    level: params.get('level') ?? '',
    q: params.get('q') ?? '',
  };
  const [paused, setPaused] = useState(false);
  const log = useLogStream(filters, paused);
  const services = [...new Set(['loupe', 'rules', 'hub', ...overview.services.map((s) => s.name)])].sort();
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  return (
    <div className="space-y-4">
      <TabHeader
        title="Logs"
        description="Every service’s log lines, newest first: loupe’s own, each function’s output, a summary of each rules decision. Scripts read the same from GET /emulator/v1/logs?follow=1."
        actions={
          <Button
            size="sm"
            icon={paused ? <Play className="size-3.5" /> : <Pause className="size-3.5" />}
            onClick={() => {
              if (paused) log.resume();
              setPaused(!paused);
            }}
          >
            {paused ? `Follow${log.held ? ` (${log.held} new)` : ''}` : 'Pause'}
          </Button>
        }
      />
      <div className="grid grid-cols-2 gap-2 sm:flex sm:flex-wrap" role="group" aria-label="Filters">
        <Select
          aria-label="Service"
          value={filters.service}
          onChange={(e) => set('service', e.target.value)}
          className="h-8 w-full text-xs sm:w-auto"
        >
          <option value="">All services</option>
          {services.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </Select>
        <Select
          aria-label="Level"
          value={filters.level}
          onChange={(e) => set('level', e.target.value)}
          className="h-8 w-full text-xs sm:w-auto"
        >
          <option value="">Every level</option>
          <option value="info">Info and above</option>
          <option value="warn">Warnings and errors</option>
          <option value="error">Errors</option>
        </Select>
        <Input
          aria-label="Search the logs"
          type="search"
          placeholder="Text in the message or payload…"
          value={filters.q}
          onChange={(e) => set('q', e.target.value)}
          className="col-span-2 h-8 w-full text-xs sm:w-64"
        />
      </div>
      {log.error && <ErrorNote>{log.error}</ErrorNote>}
      <Panel
        title={
          <span className="flex items-center gap-2">
            Lines <Badge className="tabular">{log.entries.length}</Badge>
            {!paused && <span className="size-1.5 rounded-full bg-emerald-400" title="live" />}
          </span>
        }
      >
        {log.entries.length === 0 && (
          <Empty icon={<ScrollText className="size-6" />} title="No log line yet">
            {filters.service || filters.level || filters.q
              ? 'None matches the filters.'
              : 'What the services log appears here as it happens.'}
          </Empty>
        )}
        <ul className="divide-y divide-zinc-800/70" aria-label="Log lines">
          {log.entries.map((e) => (
            <LogLine key={e.id} entry={e} />
          ))}
        </ul>
      </Panel>
    </div>
  );
}

function LogLine({ entry: e }: { entry: LogEntry }) {
  const head = (
    <span className="grid grid-cols-[4.5rem_minmax(0,1fr)] gap-x-2 gap-y-1 sm:grid-cols-[4.5rem_auto_minmax(0,1fr)]">
      <span className="tabular text-[11px] text-zinc-400" title={e.time}>
        {clock(e.time)}
      </span>
      <span className="flex flex-wrap items-center gap-1.5">
        <Badge tone={levelTone[e.level] ?? 'zinc'}>{e.level}</Badge>
        <Badge>{e.service}</Badge>
        {e.function && <span className="font-mono text-[11px] text-zinc-300">{e.function}</span>}
      </span>
      <span className="col-span-2 font-mono text-xs [overflow-wrap:anywhere] whitespace-pre-wrap text-zinc-200 sm:col-span-1">
        {e.message}
      </span>
    </span>
  );
  if (!e.payload) return <li className="px-3 py-1.5">{head}</li>;
  return (
    <li>
      <details className="group">
        <summary className={cn('cursor-pointer list-none px-3 py-1.5 hover:bg-zinc-800/50')}>{head}</summary>
        <pre
          tabIndex={0}
          aria-label="Payload"
          className="mx-3 mb-2 max-h-64 overflow-auto rounded-lg border border-zinc-800 bg-zinc-950/60 p-2.5 font-mono text-[11px] leading-relaxed text-zinc-300"
        >
          {jsonText(e.payload)}
        </pre>
      </details>
    </li>
  );
}
