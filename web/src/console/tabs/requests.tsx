import { Activity, Pause, Play, Trash2 } from 'lucide-react';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { cn } from '@/lib/cn';
import { api } from '../api/client';
import { usePolled } from '../api/live';
import { DecidedBy, DecisionView } from '../rules/decision-view';
import { plain, type Entry } from '../rules/types';
import { Button } from '@/components/ui/button';
import { Input, Select } from '@/components/ui/input';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { clock } from '../ui/format';
import { jsonText } from '../ui/json';

const maxShown = 500;

/**
 * Keeps a live list of request log entries matching filters, newest first;
 * while paused, new entries are held (and counted), and resume() shows them.
 */
function useRequestLog(filters: Record<string, string>, paused: boolean) {
  const [log, setLog] = useState<{ entries: Entry[]; held: Entry[] }>({ entries: [], held: [] });
  const [error, setError] = useState('');
  const key = new URLSearchParams(Object.entries(filters).filter(([, v]) => v)).toString();
  const pausedRef = useRef(paused);
  useEffect(() => {
    pausedRef.current = paused;
  });
  useEffect(() => {
    let alive = true;
    let cleanup = () => {};
    const query = new URLSearchParams(key);
    query.set('limit', String(maxShown));
    // The newest entries first, then a stream of those after.
    api<{ requests: Entry[]; latest: number }>(`/emulator/v1/requests?${query}`).then(
      (r) => {
        if (!alive) return;
        setLog({ entries: r.requests, held: [] });
        setError('');
        query.delete('limit');
        query.set('after', String(r.latest));
        const es = new EventSource(`/emulator/v1/requests?${query}`);
        // An entry already listed is an update (a stream that ended): it changes in place.
        es.addEventListener('request', (e) => {
          const entry = JSON.parse((e as MessageEvent<string>).data) as Entry;
          setLog((s) => {
            if (s.entries.some((x) => x.id === entry.id))
              return { ...s, entries: replaced(s.entries, entry) };
            if (s.held.some((x) => x.id === entry.id)) return { ...s, held: replaced(s.held, entry) };
            return pausedRef.current
              ? { ...s, held: [entry, ...s.held].slice(0, maxShown) }
              : { ...s, entries: [entry, ...s.entries].slice(0, maxShown) };
          });
        });
        cleanup = () => es.close();
      },
      (e: unknown) => alive && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      alive = false;
      cleanup();
    };
  }, [key]);
  return {
    entries: log.entries,
    held: log.held.length,
    error,
    clear: () => setLog({ entries: [], held: [] }),
    resume: () => {
      pausedRef.current = false;
      setLog((s) => ({
        entries: [...s.held, ...s.entries.filter((x) => !s.held.some((h) => h.id === x.id))].slice(
          0,
          maxShown,
        ),
        held: [],
      }));
    },
  };
}

/** list with the entry of entry's id replaced by entry. */
function replaced(list: Entry[], entry: Entry): Entry[] {
  return list.map((x) => (x.id === entry.id ? entry : x));
}

const outcomeTone = { allowed: 'green', denied: 'red', error: 'amber' } as const;

/** The filters picked from a list: the query parameter, its label, and its choices as [value, text]. */
const choiceFilters = [
  {
    key: 'service',
    label: 'Service',
    all: 'All services',
    options: [
      ['firestore', 'Firestore'],
      ['database', 'Realtime Database'],
      ['storage', 'Storage'],
      ['auth', 'Auth'],
    ],
  },
  {
    key: 'method',
    label: 'Method',
    all: 'All methods',
    options: ['get', 'list', 'create', 'update', 'delete'].map((m) => [m, m]),
  },
  {
    key: 'outcome',
    label: 'Outcome',
    all: 'All outcomes',
    options: [
      ['allowed', 'Allowed'],
      ['denied', 'Denied'],
      ['error', 'Error'],
    ],
  },
] as const satisfies readonly {
  key: string;
  label: string;
  all: string;
  options: readonly (readonly [string, string])[];
}[];

/** Every client request to Firestore, the Realtime Database, Storage and Auth, and every call passed through, live, with why the rules allowed or denied it. */
export function RequestsTab() {
  const [params, setParams] = useSearchParams();
  const filters = {
    service: params.get('service') ?? '',
    method: params.get('method') ?? '',
    outcome: params.get('outcome') ?? '',
    path: params.get('path') ?? '',
  };
  const selected = Number(params.get('id') ?? 0);
  const [paused, setPaused] = useState(false);
  const log = useRequestLog(filters, paused);
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: true });
  };
  return (
    <div className="space-y-4">
      <TabHeader
        title="Requests"
        description="Client requests (not the owner’s), newest first, with the rules that decided each."
        actions={
          <>
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
            <Button
              size="sm"
              icon={<Trash2 className="size-3.5" />}
              onClick={async () => {
                await api('/emulator/v1/requests', { method: 'DELETE' });
                log.clear();
              }}
            >
              Clear
            </Button>
          </>
        }
      />
      <div className="grid grid-cols-2 gap-2 sm:flex sm:flex-wrap" role="group" aria-label="Filters">
        {choiceFilters.map(({ key, label, all, options }) => (
          <Select
            key={key}
            aria-label={label}
            value={filters[key]}
            onChange={(e) => set(key, e.target.value)}
            className="h-8 w-full text-xs sm:w-auto"
          >
            <option value="">{all}</option>
            {options.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </Select>
        ))}
        <Input
          aria-label="Path prefix"
          placeholder="Path starts with…"
          value={filters.path}
          onChange={(e) => set('path', e.target.value)}
          className="h-8 w-full font-mono text-xs sm:w-56"
        />
      </div>
      {log.error && <ErrorNote>{log.error}</ErrorNote>}
      <div
        className={cn('grid grid-cols-1 gap-4', selected > 0 && 'xl:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]')}
      >
        <Panel
          title={
            <span className="flex items-center gap-2">
              Log <Badge className="tabular">{log.entries.length}</Badge>
              {!paused && <span className="size-1.5 rounded-full bg-emerald-400" title="live" />}
            </span>
          }
          className={cn(selected > 0 && 'hidden xl:flex')}
        >
          {log.entries.length === 0 && (
            <Empty icon={<Activity className="size-6" />} title="No request yet">
              Use the app: its Firestore, Storage and Auth calls appear here as they happen.
            </Empty>
          )}
          <ul className="divide-y divide-zinc-800/70" aria-label="Requests">
            {log.entries.map((e) => (
              <li key={e.id}>
                <button
                  type="button"
                  onClick={() => set('id', String(e.id))}
                  aria-current={e.id === selected ? 'true' : undefined}
                  className={cn(
                    'grid w-full grid-cols-[4.5rem_minmax(0,1fr)_auto] items-center gap-2 px-3 py-1.5 text-left hover:bg-zinc-800/50',
                    e.id === selected && 'bg-brand-500/10',
                  )}
                >
                  <span className="tabular text-[11px] text-zinc-400">{clock(e.time)}</span>
                  <span className="min-w-0">
                    <span className="flex items-center gap-1.5">
                      <Badge>{e.service}</Badge>
                      {e.passThrough && <Badge tone="sky">passed through</Badge>}
                      {e.open && <Badge tone="amber">open</Badge>}
                      <span className="text-xs font-medium text-zinc-200">{e.method}</span>
                      {e.caller?.uid && (
                        <span className="truncate text-[11px] text-zinc-400" title={e.caller.uid}>
                          as {callerName(e)}
                        </span>
                      )}
                    </span>
                    <span className="block truncate font-mono text-[11px] text-zinc-400">
                      {e.path || '—'}
                    </span>
                  </span>
                  <Badge tone={outcomeTone[e.outcome]}>{e.outcome}</Badge>
                </button>
              </li>
            ))}
          </ul>
        </Panel>
        {selected > 0 && (
          <RequestDetail
            id={selected}
            ended={log.entries.find((e) => e.id === selected)?.ended}
            onClose={() => set('id', '')}
          />
        )}
      </div>
    </div>
  );
}

/** One entry in full, read again when the list says its stream ended. */
function RequestDetail({ id, ended, onClose }: { id: number; ended?: string; onClose: () => void }) {
  const { data: e, error } = usePolled(() => api<Entry>(`/emulator/v1/requests/${id}`), 0, [id, ended]);
  return (
    <Panel
      title={
        <span className="flex items-center gap-2">
          Request #{id}
          {e && <Badge tone={outcomeTone[e.outcome]}>{e.outcome}</Badge>}
          {e?.passThrough && <Badge tone="sky">passed through</Badge>}
          {e?.open && <Badge tone="amber">open</Badge>}
        </span>
      }
      actions={
        <Button size="sm" variant="ghost" onClick={onClose}>
          Close
        </Button>
      }
    >
      {error && <p className="px-3 py-2 text-xs text-red-300">{error}</p>}
      {e && (
        <div className="space-y-4 p-3">
          {e.rules?.source && <DecidedBy decision={e.rules} source={e.rules.source} />}
          <dl className="grid grid-cols-[6rem_minmax(0,1fr)] gap-x-3 gap-y-1.5 text-xs">
            <dt className="text-zinc-400">Call</dt>
            <dd className="text-zinc-200">
              {e.service} <span className="font-medium">{e.method}</span>{' '}
              <span className="font-mono break-all">{e.path}</span>
            </dd>
            <dt className="text-zinc-400">Where</dt>
            <dd className="font-mono text-zinc-300">
              {[e.project, e.database ?? e.bucket].filter(Boolean).join(' · ')}
            </dd>
            <dt className="text-zinc-400">When</dt>
            <dd className="text-zinc-300">
              {new Date(e.time).toLocaleString()}
              {e.ended && ` — ended ${new Date(e.ended).toLocaleString()}`}
              {e.open && ' — still open'}
            </dd>
            <dt className="text-zinc-400">Status</dt>
            <dd className="text-zinc-300">
              {e.status}{' '}
              {e.message && <span className="whitespace-pre-wrap text-zinc-400">{e.message.trim()}</span>}
            </dd>
            <dt className="text-zinc-400">Caller</dt>
            <dd className="text-zinc-200">
              {e.caller ? (
                <span className="font-mono">{e.caller.uid}</span>
              ) : (
                <span className="text-zinc-400">nobody signed in</span>
              )}
            </dd>
          </dl>
          {e.rules?.source ? (
            <section className="space-y-1.5">
              <h3 className="text-xs font-semibold text-zinc-400">
                Rules: <span className="font-mono">{e.rules.file}</span>
                {e.rules.line ? ` — allowed by line ${e.rules.line}` : ' — no allow granted it'}
              </h3>
              <ScrollToDecision className="max-h-[28rem] overflow-auto rounded-lg border border-zinc-800 bg-zinc-950/60">
                <DecisionView decision={e.rules} source={e.rules.source} />
              </ScrollToDecision>
            </section>
          ) : (
            e.service !== 'auth' && (
              <p className="text-xs text-zinc-400">No rules were in force: the request was allowed.</p>
            )
          )}
          {e.caller?.claims && <JsonBlock title="Token claims" value={e.caller.claims} />}
          {e.request !== undefined && (
            <JsonBlock
              title={e.service === 'auth' ? 'Request body' : 'Request data (request.resource)'}
              value={e.service === 'auth' ? e.request : plain(e.request)}
            />
          )}
          {e.resource !== undefined && <JsonBlock title="Stored data (resource)" value={plain(e.resource)} />}
        </div>
      )}
    </Panel>
  );
}

/** A scrolling box that brings the first decided allow line into view. */
function ScrollToDecision({ className, children }: { className: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    const line = el?.querySelector('[data-decision]')?.closest('li');
    if (el && line instanceof HTMLElement) el.scrollTop = Math.max(0, line.offsetTop - el.clientHeight / 3);
  });
  return (
    <div ref={box} className={cn('relative', className)}>
      {children}
    </div>
  );
}

function JsonBlock({ title, value }: { title: string; value: unknown }) {
  return (
    <details className="group space-y-1">
      <summary className="cursor-pointer text-xs font-semibold text-zinc-400 hover:text-zinc-200">
        {title}
      </summary>
      <pre
        tabIndex={0}
        className="max-h-64 overflow-auto rounded-lg border border-zinc-800 bg-zinc-950/60 p-2.5 font-mono text-[11px] leading-relaxed text-zinc-300"
      >
        {jsonText(value)}
      </pre>
    </details>
  );
}

/** Who made a request, as a person reads it: the token's e-mail, else the uid. */
function callerName(e: Entry): string {
  const email = e.caller?.claims?.email;
  return typeof email === 'string' && email ? email : (e.caller?.uid ?? '');
}
