import { Mail, Plus, Radio, Send } from 'lucide-react';
import { useEffect, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input, Select, Textarea } from '@/components/ui/input';
import { api, messageOf } from '../api/client';
import { useChangeCounter, usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { ago, clock } from '../ui/format';

/** GET /emulator/v1/projects/{p}/pubsub (docs/admin-api.md). */
type Topic = { name: string; subscriptions: Subscription[]; recent: Message[] };
type Subscription = {
  name: string;
  topic: string;
  pushEndpoint?: string;
  detached?: boolean;
  backlog: number;
  leased: number;
  oldestUnacked?: string;
};
type Message = { data: string; messageId: string; publishTime: string; attributes?: Record<string, string> };

const lastSegment = (name: string) => name.slice(name.lastIndexOf('/') + 1);

/** Base64 of text's UTF-8 bytes, as Pub/Sub's JSON carries data. */
function encode(text: string): string {
  return btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(''));
}

/** A message's data as text (bytes that are not UTF-8 show as replacement marks). */
function decode(data: string): string {
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  } catch {
    return data;
  }
}

/** "oldest 3 minutes ago", kept current while it shows (no request: the time alone moves). */
function Ago({ time }: { time: string }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 10_000);
    return () => clearInterval(t);
  }, []);
  return <>{ago(time)}</>;
}

/**
 * Topics, their subscriptions' backlogs and recent messages, and a form to
 * publish; read again when Pub/Sub's change counter moves (a long poll, as
 * the Auth tab waits), not on a timer.
 */
export function PubSubTab() {
  const { projectId } = useOverview();
  const version = useChangeCounter(`/emulator/v1/projects/${projectId}/pubsub:changes`);
  const topics = usePolled(
    () => api<{ topics: Topic[] }>(`/emulator/v1/projects/${projectId}/pubsub`).then((r) => r.topics),
    0,
    [version],
  );
  const list = topics.data ?? [];
  const named = list.filter((t) => t.name !== '_deleted-topic_');
  const backlog = list.reduce((n, t) => n + t.subscriptions.reduce((m, s) => m + s.backlog, 0), 0);
  return (
    <div className="space-y-4">
      <TabHeader
        title="Pub/Sub"
        description={
          topics.data
            ? `${named.length} ${named.length === 1 ? 'topic' : 'topics'}, ${backlog} ${backlog === 1 ? 'message' : 'messages'} waiting in ${projectId}`
            : projectId
        }
      />
      {topics.error && <ErrorNote>{topics.error}</ErrorNote>}
      <div className="grid grid-cols-1 gap-4 xl:grid-cols-[minmax(0,1fr)_22rem]">
        <div className="order-2 space-y-4 xl:order-1">
          {topics.data && list.length === 0 && (
            <Panel>
              <Empty icon={<Radio className="size-6" />} title="No topic yet">
                Topics appear here when the app, a function or the Pub/Sub client library creates them, or add
                one here.
              </Empty>
            </Panel>
          )}
          {list.map((t) => (
            <TopicPanel key={t.name} topic={t} />
          ))}
        </div>
        <div className="order-1 space-y-4 xl:order-2">
          <PublishForm projectId={projectId} topics={named} onDone={topics.reload} />
        </div>
      </div>
    </div>
  );
}

function TopicPanel({ topic: t }: { topic: Topic }) {
  const deleted = t.name === '_deleted-topic_';
  return (
    <Panel
      title={
        <span className="flex min-w-0 items-center gap-2">
          <Radio className="size-4 shrink-0 text-zinc-400" aria-hidden />
          <span className="truncate font-mono">
            {deleted ? 'Subscriptions of deleted topics' : lastSegment(t.name)}
          </span>
        </span>
      }
    >
      <section aria-label={`Subscriptions of ${lastSegment(t.name)}`}>
        {t.subscriptions.length === 0 ? (
          <p className="px-3 py-2.5 text-xs text-zinc-400">
            No subscription: messages published here reach only the functions that trigger on this topic.
          </p>
        ) : (
          <ul className="divide-y divide-zinc-800/80">
            {t.subscriptions.map((s) => (
              <li key={s.name} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2">
                <span className="min-w-0 flex-1 basis-40 truncate font-mono text-sm text-zinc-100">
                  {lastSegment(s.name)}
                </span>
                {s.detached ? (
                  <Badge tone="red">detached</Badge>
                ) : s.pushEndpoint ? (
                  <Badge tone="sky" className="max-w-56 min-w-0">
                    <span className="truncate">push → {s.pushEndpoint}</span>
                  </Badge>
                ) : (
                  <Badge>pull</Badge>
                )}
                <span className="tabular text-xs text-zinc-300" data-backlog={s.backlog}>
                  <span className="font-semibold text-white">{s.backlog}</span> unacked
                  {s.leased > 0 && <span className="text-zinc-400"> · {s.leased} leased</span>}
                </span>
                {s.oldestUnacked && (
                  <span className="w-full text-xs text-zinc-400 sm:w-auto">
                    oldest <Ago time={s.oldestUnacked} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      {!deleted && (
        <section
          aria-label={`Recent messages of ${lastSegment(t.name)}`}
          className="border-t border-zinc-800"
        >
          <h3 className="px-3 pt-2 text-[11px] font-medium tracking-wide text-zinc-400 uppercase">
            Recent messages
          </h3>
          {t.recent.length === 0 ? (
            <p className="px-3 py-2 text-xs text-zinc-400">None published since loupe started.</p>
          ) : (
            <ul className="divide-y divide-zinc-800/60">
              {t.recent.map((m) => (
                <li key={m.messageId} className="flex items-start gap-3 px-3 py-1.5 text-xs">
                  <span className="tabular shrink-0 pt-0.5 text-zinc-400">{clock(m.publishTime)}</span>
                  <span className="min-w-0 flex-1">
                    <span className="block font-mono whitespace-pre-wrap text-zinc-200 [overflow-wrap:anywhere]">
                      {decode(m.data) || <span className="text-zinc-400">(no data)</span>}
                    </span>
                    {m.attributes && (
                      <span className="mt-1 flex flex-wrap gap-1">
                        {Object.entries(m.attributes).map(([k, v]) => (
                          <Badge key={k} className="font-mono">
                            {k}={v}
                          </Badge>
                        ))}
                      </span>
                    )}
                  </span>
                  <span className="hidden shrink-0 pt-0.5 font-mono text-zinc-400 sm:block">
                    #{m.messageId}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </Panel>
  );
}

/** Publishes a message (text data, attributes as JSON) to a topic, or creates a topic. */
function PublishForm({
  projectId,
  topics,
  onDone,
}: {
  projectId: string;
  topics: Topic[];
  onDone: () => void;
}) {
  const [topic, setTopic] = useState('');
  const [data, setData] = useState('');
  const [attrs, setAttrs] = useState('');
  const [newTopic, setNewTopic] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const chosen = topic || (topics[0] ? lastSegment(topics[0].name) : '');
  const run = async (what: () => Promise<string>) => {
    setError('');
    setStatus('');
    setBusy(true);
    try {
      setStatus(await what());
      onDone();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Panel
      title={
        <span className="flex items-center gap-2">
          <Mail className="size-4 text-zinc-400" aria-hidden /> Publish a message
        </span>
      }
    >
      <form
        aria-label="Publish a message"
        className="space-y-3 p-3"
        onSubmit={(e) => {
          e.preventDefault();
          let attributes: Record<string, string> | undefined;
          if (attrs.trim()) {
            try {
              const parsed: unknown = JSON.parse(attrs);
              if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error();
              attributes = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
            } catch {
              setError('Attributes are a JSON object of strings, e.g. {"kind": "order"}.');
              return;
            }
          }
          if (!data && !attributes) {
            setError('A message needs data or at least one attribute.');
            return;
          }
          void run(async () => {
            const r = await api<{ messageIds: string[] }>(
              `/v1/projects/${projectId}/topics/${encodeURIComponent(chosen)}:publish`,
              { method: 'POST', json: { messages: [{ data: encode(data), attributes }] } },
            );
            setData('');
            return `Published message #${r.messageIds[0]} to ${chosen}.`;
          });
        }}
      >
        <Field size="sm" label="Topic">
          <Select value={chosen} onChange={(e) => setTopic(e.target.value)} disabled={!topics.length}>
            {!topics.length && <option value="">No topic yet: create one below</option>}
            {topics.map((t) => (
              <option key={t.name} value={lastSegment(t.name)}>
                {lastSegment(t.name)}
              </option>
            ))}
          </Select>
        </Field>
        <Field size="sm" label="Data">
          <Textarea
            className="font-mono text-xs"
            rows={3}
            value={data}
            onChange={(e) => setData(e.target.value)}
            placeholder='{"orderId": "o-42"}'
          />
        </Field>
        <Field size="sm" label="Attributes (JSON)">
          <Input
            className="font-mono text-xs"
            value={attrs}
            onChange={(e) => setAttrs(e.target.value)}
            placeholder='{"kind": "order"}'
          />
        </Field>
        <div className="flex justify-end">
          <Button
            variant="primary"
            type="submit"
            icon={<Send className="size-3.5" />}
            disabled={busy || !chosen}
          >
            Publish
          </Button>
        </div>
      </form>
      <form
        aria-label="New topic"
        className="flex items-end gap-2 border-t border-zinc-800 p-3"
        onSubmit={(e) => {
          e.preventDefault();
          const id = newTopic.trim();
          if (!id) return;
          void run(async () => {
            await api(`/v1/projects/${projectId}/topics/${encodeURIComponent(id)}`, { method: 'PUT' });
            setNewTopic('');
            setTopic(id);
            return `Created topic ${id}.`;
          });
        }}
      >
        <Field size="sm" label="New topic id" className="min-w-0 flex-1">
          <Input value={newTopic} onChange={(e) => setNewTopic(e.target.value)} placeholder="orders" />
        </Field>
        <Button type="submit" icon={<Plus className="size-3.5" />} disabled={busy || !newTopic.trim()}>
          Create
        </Button>
      </form>
      {(status || error) && (
        <p
          role={error ? 'alert' : 'status'}
          className={`border-t border-zinc-800 px-3 py-2 text-xs ${error ? 'text-red-300' : 'text-emerald-300'}`}
        >
          {error || status}
        </p>
      )}
    </Panel>
  );
}
