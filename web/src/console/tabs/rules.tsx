import { FlaskConical, ShieldCheck } from 'lucide-react';
import { useState } from 'react';
import { cn } from '@/lib/cn';
import { api, messageOf } from '../api/client';
import { usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { DecisionView } from '../rules/decision-view';
import { RulesSource } from '../rules/rules-source';
import type { Coverage, CoverageNode, Decision } from '../rules/types';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input, Select, Textarea } from '@/components/ui/input';
import { Badge, Empty, Panel, TabHeader } from '../ui/controls';

type LineStats = { exprs: number; ran: number; t: number; f: number; err: number };

/** Per source line: how many expressions start there, how many ran, and their true/false/error counts. */
function lineStats(report: CoverageNode[] | undefined): Map<number, LineStats> {
  const out = new Map<number, LineStats>();
  const walk = (n: CoverageNode) => {
    const s = out.get(n.sourcePosition.line) ?? { exprs: 0, ran: 0, t: 0, f: 0, err: 0 };
    s.exprs++;
    if (n.values?.length) s.ran++;
    for (const v of n.values ?? []) {
      if ('boolValue' in v.value) {
        if (v.value.boolValue) s.t += v.count;
        else s.f += v.count;
      } else if ('undefined' in v.value) s.err += v.count;
    }
    out.set(n.sourcePosition.line, s);
    n.children?.forEach(walk);
  };
  report?.forEach(walk);
  return out;
}

/** The rules in force with per-line coverage, and a playground to try a request against them. */
export function RulesTab() {
  const { projectId } = useOverview();
  const [service, setService] = useState<'firestore' | 'storage'>('firestore');
  const coverage = usePolled(
    () =>
      api<Coverage>(
        `/emulator/v1/projects/${projectId}:ruleCoverage${service === 'storage' ? '?service=storage' : ''}`,
      ),
    3000,
    [service],
  );
  const file = coverage.data?.rules.files[0];
  const stats = lineStats(coverage.data?.report);
  return (
    <div className="space-y-4">
      <TabHeader
        title="Security rules"
        description="Shaded lines ran since the rules were loaded: green gave true, red only false, amber an error."
        actions={
          <div className="flex rounded-lg border border-zinc-700 p-0.5" role="tablist" aria-label="Rules of">
            {(['firestore', 'storage'] as const).map((s) => (
              <button
                key={s}
                type="button"
                role="tab"
                aria-selected={service === s}
                onClick={() => setService(s)}
                className={cn(
                  'rounded-md px-3 py-1 text-xs font-medium',
                  service === s ? 'bg-zinc-800 text-white' : 'text-zinc-400 hover:text-zinc-200',
                )}
              >
                {s === 'firestore' ? 'Firestore' : 'Storage'}
              </button>
            ))}
          </div>
        }
      />
      <div className="grid grid-cols-1 gap-4 xl:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <Panel
          title={
            <span className="flex items-center gap-2">
              <ShieldCheck className="size-4 text-zinc-400" /> {file?.name.split('/').at(-1) ?? 'No rules'}
            </span>
          }
        >
          {coverage.error && <p className="px-3 py-2 text-xs text-red-300">{coverage.error}</p>}
          {coverage.data && !file && (
            <Empty title="No rules in force">
              Every request is allowed. Name a rules file in firebase.json, or load rules through the API.
            </Empty>
          )}
          {file && (
            <RulesSource
              label="Rules coverage"
              source={file.content}
              lineClass={(n) => {
                const s = stats.get(n);
                if (!s) return undefined;
                if (s.ran === 0) return 'bg-zinc-800/30';
                if (s.err && !s.t) return 'bg-amber-500/15';
                if (s.t) return 'bg-emerald-500/15';
                return 'bg-red-500/15';
              }}
              gutter={(n) => {
                const s = stats.get(n);
                if (!s) return null;
                if (s.ran === 0)
                  return (
                    <span className="text-zinc-400">
                      <span className="sm:hidden" title="never ran">
                        –
                      </span>
                      <span className="hidden sm:inline">never ran</span>
                    </span>
                  );
                return (
                  <span className="tabular">
                    {s.t > 0 && <span className="text-emerald-400">✓{s.t} </span>}
                    {s.f > 0 && <span className="text-red-400">✗{s.f} </span>}
                    {s.err > 0 && <span className="text-amber-400">!{s.err}</span>}
                    {!s.t && !s.f && !s.err && <span className="text-zinc-400">ran</span>}
                  </span>
                );
              }}
            />
          )}
        </Panel>
        <Playground service={service} projectId={projectId} />
      </div>
    </div>
  );
}

type PlayResult = Decision & { allowed: boolean; outcome: string; message?: string; source?: string };

function Playground({ service, projectId }: { service: 'firestore' | 'storage'; projectId: string }) {
  const [method, setMethod] = useState('get');
  const [path, setPath] = useState('');
  const [uid, setUid] = useState('');
  const [claims, setClaims] = useState('');
  const [resource, setResource] = useState('');
  const [data, setData] = useState('');
  const [result, setResult] = useState<PlayResult | null>(null);
  const [error, setError] = useState('');
  const json = (label: string, text: string): unknown => {
    if (!text.trim()) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${label} is not valid JSON.`);
    }
  };
  return (
    <Panel
      title={
        <span className="flex items-center gap-2">
          <FlaskConical className="size-4 text-zinc-400" /> Playground
        </span>
      }
      className="self-start"
    >
      <form
        aria-label="Rules playground"
        className="grid gap-3 p-3 sm:grid-cols-2"
        onSubmit={async (e) => {
          e.preventDefault();
          setError('');
          try {
            const body: Record<string, unknown> = { service, method, path: path.trim() };
            body.auth = uid.trim() ? { uid: uid.trim(), token: json('Token claims', claims) ?? {} } : null;
            const res = json('Stored data', resource);
            if (res !== undefined) body.resource = res;
            const d = json('Request data', data);
            if (d !== undefined) body.data = d;
            setResult(
              await api<PlayResult>(`/emulator/v1/projects/${projectId}:rulesPlayground`, {
                method: 'POST',
                json: body,
              }),
            );
          } catch (err) {
            setResult(null);
            setError(messageOf(err));
          }
        }}
      >
        <Field size="sm" label="Method">
          <Select value={method} onChange={(e) => setMethod(e.target.value)}>
            {['get', 'list', 'create', 'update', 'delete'].map((m) => (
              <option key={m}>{m}</option>
            ))}
          </Select>
        </Field>
        <Field size="sm" label={service === 'firestore' ? 'Document path' : 'Object name'}>
          <Input
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder={service === 'firestore' ? 'users/alice' : 'videos/alice/clip.mp4'}
            className="font-mono text-xs"
            required
          />
        </Field>
        <Field size="sm" label="Signed in as (uid)" hint="Empty: nobody signed in.">
          <Input
            value={uid}
            onChange={(e) => setUid(e.target.value)}
            placeholder="alice"
            className="font-mono text-xs"
          />
        </Field>
        <Field size="sm" label="Token claims (JSON)">
          <Input
            value={claims}
            onChange={(e) => setClaims(e.target.value)}
            placeholder='{"admin": true}'
            className="font-mono text-xs"
            disabled={!uid.trim()}
          />
        </Field>
        <Field size="sm" label="Stored data (resource)" hint="Empty: as stored now.">
          <Textarea
            className="font-mono text-xs leading-relaxed"
            rows={3}
            value={resource}
            onChange={(e) => setResource(e.target.value)}
            placeholder='{"owner": "alice"}'
          />
        </Field>
        <Field size="sm" label="Request data" hint="The document as the write leaves it.">
          <Textarea
            className="font-mono text-xs leading-relaxed"
            rows={3}
            value={data}
            onChange={(e) => setData(e.target.value)}
            placeholder='{"owner": "alice"}'
          />
        </Field>
        {error && (
          <p className="text-xs text-red-300 sm:col-span-2" role="alert">
            {error}
          </p>
        )}
        <div className="flex items-center gap-2 sm:col-span-2">
          {result && (
            <Badge
              tone={result.allowed ? 'green' : result.outcome === 'error' ? 'amber' : 'red'}
              className="px-2 py-1 text-xs"
            >
              {result.outcome}
              {result.line ? ` by line ${result.line}` : ''}
            </Badge>
          )}
          <Button type="submit" variant="primary" className="ml-auto">
            Evaluate
          </Button>
        </div>
      </form>
      {result?.message && (
        <p className="border-t border-zinc-800 px-3 py-2 text-xs whitespace-pre-wrap text-zinc-400">
          {result.message.trim()}
        </p>
      )}
      {result?.source && (
        <div className="border-t border-zinc-800">
          <DecisionView decision={result} source={result.source} />
        </div>
      )}
    </Panel>
  );
}
