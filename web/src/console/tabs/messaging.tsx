import { BellRing, ChevronDown, ChevronRight, MessageSquare } from 'lucide-react';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import { usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { Badge, Empty, Panel, TabHeader } from '../ui/controls';
import { ago, clock } from '../ui/format';

/** A message as the messaging stand-in's inbox keeps it. */
type Sent = { name: string; token?: string; topic?: string; message: Message; sentAt: string };
type Message = {
  notification?: { title?: string; body?: string; image?: string };
  data?: Record<string, string>;
  webpush?: { fcm_options?: { link?: string } };
};

/**
 * The users whose profile holds a token: users/{uid} documents with an
 * fcmToken field, the convention the app (and many others) follow.
 */
async function tokenOwners(db: string, tokens: string[]): Promise<Record<string, string>> {
  if (!tokens.length) return {};
  const rows = await api<{ document?: { name: string; fields?: { fcmToken?: { stringValue?: string } } } }[]>(
    `/v1/${db}/documents:runQuery`,
    {
      method: 'POST',
      json: {
        structuredQuery: {
          from: [{ collectionId: 'users', allDescendants: true }],
          where: {
            fieldFilter: {
              field: { fieldPath: 'fcmToken' },
              op: 'IN',
              value: { arrayValue: { values: tokens.slice(0, 30).map((t) => ({ stringValue: t })) } },
            },
          },
        },
      },
    },
  );
  const out: Record<string, string> = {};
  for (const r of rows) {
    const t = r.document?.fields?.fcmToken?.stringValue;
    if (t && r.document) out[t] = r.document.name.replace(/^.*?\/documents\//, '');
  }
  return out;
}

/** Push messages sent, per token and the user it belongs to, with their payloads. */
export function MessagingTab() {
  const { projectId } = useOverview();
  const db = `projects/${projectId}/databases/(default)`;
  const inbox = usePolled(async () => {
    const { messages } = await api<{ messages: Sent[] }>(
      `/emulator/v1/projects/${projectId}/messaging/messages`,
    );
    const tokens = Array.from(new Set(messages.flatMap((m) => (m.token ? [m.token] : []))));
    return { messages, owners: await tokenOwners(db, tokens).catch(() => ({}) as Record<string, string>) };
  }, 2000);
  const groups = new Map<string, Sent[]>();
  for (const m of inbox.data?.messages ?? []) {
    const key = m.token ? `token:${m.token}` : `topic:${m.topic ?? ''}`;
    groups.set(key, [m, ...(groups.get(key) ?? [])]);
  }
  return (
    <div className="space-y-4">
      <TabHeader
        title="Cloud Messaging"
        description={
          inbox.data
            ? `${inbox.data.messages.length} ${inbox.data.messages.length === 1 ? 'message' : 'messages'} sent, newest first`
            : ''
        }
      />
      {inbox.data && groups.size === 0 && (
        <Empty icon={<MessageSquare className="size-6" />} title="No message sent yet">
          Messages the Admin SDK sends (FCM HTTP v1) show here with the token or topic they went to.
        </Empty>
      )}
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
        {[...groups].map(([key, msgs]) => {
          const [kind, id] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
          const owner = kind === 'token' ? inbox.data?.owners[id] : undefined;
          return (
            <Panel
              key={key}
              title={
                <span className="flex min-w-0 items-center gap-2">
                  <BellRing className="size-4 shrink-0 text-zinc-400" aria-hidden />
                  {owner ? (
                    <Link
                      to={`../firestore?path=${encodeURIComponent(owner)}`}
                      className="truncate text-brand-300 hover:underline"
                    >
                      {owner}
                    </Link>
                  ) : (
                    <span className="truncate">{kind === 'topic' ? `topic ${id}` : 'unknown user'}</span>
                  )}
                  <Badge className="tabular">{msgs.length}</Badge>
                </span>
              }
            >
              {kind === 'token' && (
                <p
                  className="truncate border-b border-zinc-800 px-3 py-1.5 font-mono text-[11px] text-zinc-400"
                  title={id}
                >
                  token {id}
                </p>
              )}
              <ul className="divide-y divide-zinc-800/70">
                {msgs.map((m) => (
                  <MessageRow key={m.name} m={m} />
                ))}
              </ul>
            </Panel>
          );
        })}
      </div>
    </div>
  );
}

function MessageRow({ m }: { m: Sent }) {
  const [open, setOpen] = useState(false);
  const n = m.message.notification;
  const data = Object.entries(m.message.data ?? {});
  return (
    <li className="px-3 py-2">
      <button
        type="button"
        onClick={() => setOpen((o) => !o)}
        className="flex w-full items-start gap-2 text-left"
        aria-expanded={open}
      >
        {open ? (
          <ChevronDown className="mt-0.5 size-3.5 text-zinc-400" />
        ) : (
          <ChevronRight className="mt-0.5 size-3.5 text-zinc-400" />
        )}
        <span className="min-w-0 flex-1">
          <span className="block truncate font-medium text-zinc-100">
            {n?.title ?? (data.length ? 'data message' : 'message')}
          </span>
          {n?.body && <span className="block truncate text-xs text-zinc-400">{n.body}</span>}
          {data.length > 0 && (
            <span className="mt-1 flex flex-wrap gap-1">
              {data.map(([k, v]) => (
                <Badge key={k} className="max-w-full min-w-0 font-mono">
                  <span className="truncate">
                    {k}={v}
                  </span>
                </Badge>
              ))}
            </span>
          )}
        </span>
        <span
          className="shrink-0 text-right text-[11px] text-zinc-400"
          title={new Date(m.sentAt).toLocaleString()}
        >
          <span className="block">{clock(m.sentAt)}</span>
          <span className="block">{ago(m.sentAt)}</span>
        </span>
      </button>
      {open && (
        <pre
          tabIndex={0}
          className="mt-2 overflow-x-auto rounded-lg bg-zinc-950 p-2.5 font-mono text-[11px] leading-relaxed text-zinc-300"
        >
          {JSON.stringify(m.message, null, 2)}
        </pre>
      )}
    </li>
  );
}
