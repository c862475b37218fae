import { Download, FolderInput, Plus, Save, Trash2, Upload } from 'lucide-react';
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useToast } from '@/components/ui/toast-context';
import { Button, IconButton } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input, Select, Textarea } from '@/components/ui/input';
import { api, messageOf } from '../api/client';
import { usePolled } from '../api/live';
import { RulesSource } from '../rules/rules-source';
import type { Entry } from '../rules/types';
import { Badge, Empty, ErrorNote, Panel, TabHeader } from '../ui/controls';
import { Breadcrumbs } from '../ui/breadcrumbs';
import { useConfirmed } from '../ui/confirm';
import { clock } from '../ui/format';
import {
  childPath,
  exportText,
  fetchCoverage,
  fetchListing,
  fetchNamespaces,
  fetchRules,
  pageSize,
  parseTyped,
  pathOf,
  pushValue,
  related,
  removeValue,
  segments,
  setValue,
  useDatabaseChanges,
  type Listing,
} from './api';
import { LeafValue, TreeRows, type TreeState } from './tree';

/** The Realtime Database: each namespace's tree, live and editable, its rules and their requests. */
export function DatabaseTab() {
  const [params, setParams] = useSearchParams();
  const names = usePolled(fetchNamespaces, 5000);
  const ns = params.get('ns') ?? names.data?.default;
  const root = pathOf(segments(params.get('path') ?? '/'));
  const go = (patch: { ns?: string; path?: string }) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch)) {
      if (!v || (k === 'path' && v === '/') || (k === 'ns' && v === names.data?.default)) p.delete(k);
      else p.set(k, v);
    }
    setParams(p);
  };
  const all = Array.from(new Set([...(names.data?.namespaces ?? []), ...(ns ? [ns] : [])])).sort();
  return (
    <div className="space-y-4">
      <TabHeader
        title="Realtime Database"
        description="Each namespace’s JSON tree, live. Select a node to edit, add to, delete, export or import it."
        actions={
          all.length > 1 && (
            <Select
              aria-label="Namespace"
              value={ns}
              onChange={(e) => go({ ns: e.target.value, path: '/' })}
              className="h-7 w-auto max-w-64 text-xs"
            >
              {all.map((n) => (
                <option key={n}>{n}</option>
              ))}
            </Select>
          )
        }
      />
      {names.error && !names.data && <ErrorNote>{names.error}</ErrorNote>}
      {ns && <Namespace key={`${ns}\n${root}`} ns={ns} root={root} onOpen={(path) => go({ path })} />}
    </div>
  );
}

/** Keeps the listings of the expanded locations, reloading those a write touches. */
function useTree(ns: string, root: string) {
  const [listings, setListings] = useState<Record<string, Listing>>({});
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set([root]));
  const [error, setError] = useState('');
  const current = useRef(listings);
  const open = useRef(expanded);
  useEffect(() => {
    current.current = listings;
    open.current = expanded;
  });
  const load = useCallback(
    async (path: string, more = false) => {
      try {
        const had = current.current[path];
        if (more && had?.next !== undefined) {
          const page = await fetchListing(ns, path, pageSize, had.next);
          setListings((l) => ({
            ...l,
            [path]: { ...page, children: [...(l[path]?.children ?? []), ...page.children] },
          }));
          return;
        }
        // As many children as were shown, a page of at most 1,000 at a time.
        const want = Math.max(pageSize, had?.children.length ?? 0);
        let page = await fetchListing(ns, path, Math.min(1000, want));
        while (page.next !== undefined && page.children.length < want) {
          const rest = await fetchListing(ns, path, Math.min(1000, want - page.children.length), page.next);
          page = { ...rest, children: [...page.children, ...rest.children] };
        }
        setListings((l) => ({ ...l, [path]: page }));
        setError('');
      } catch (e) {
        setError(messageOf(e));
      }
    },
    [ns],
  );
  useEffect(() => {
    void load(root);
  }, [load, root]);
  // Writes name the paths they changed: each shown listing on or under one reloads, once per burst.
  const pending = useRef(new Set<string>());
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  useDatabaseChanges(ns, (paths) => {
    // A collapsed listing reloads when it is expanded again.
    for (const shown of Object.keys(current.current)) {
      if (!open.current.has(shown)) continue;
      if (paths === 'lagged' || paths.some((p) => related(p, shown))) pending.current.add(shown);
    }
    if (!pending.current.size || timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      const paths = [...pending.current];
      pending.current.clear();
      paths.forEach((p) => void load(p));
    }, 50);
  });
  const toggle = (path: string) =>
    setExpanded((s) => {
      const next = new Set(s);
      if (next.has(path)) next.delete(path);
      else {
        next.add(path);
        void load(path);
      }
      return next;
    });
  return { listings, expanded, toggle, more: (path: string) => void load(path, true), error };
}

/** What the tree knows of path: its listing when loaded, else its row in the parent's. */
function nodeOf(listings: Record<string, Listing>, path: string) {
  const own = listings[path];
  const segs = segments(path);
  const row = segs.length
    ? listings[pathOf(segs.slice(0, -1))]?.children.find((c) => c.key === segs.at(-1))
    : undefined;
  if (row) return { exists: true, leaf: row.children === undefined, value: row.value };
  if (own) return { exists: own.exists, leaf: own.value !== undefined, value: own.value };
  return undefined;
}

function Namespace({ ns, root, onOpen }: { ns: string; root: string; onOpen: (path: string) => void }) {
  const t = useTree(ns, root);
  const [selected, setSelected] = useState(root);
  const tree: TreeState = { ...t, selected, select: setSelected };
  const top = t.listings[root];
  const segs = segments(root);
  return (
    <>
      <Breadcrumbs
        label="Location"
        root={<span>{ns}</span>}
        segs={segs}
        onGo={(depth) => onOpen(pathOf(segs.slice(0, depth)))}
      />
      {t.error && <ErrorNote>{t.error}</ErrorNote>}
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-[minmax(0,1fr)_24rem]">
        <Panel
          title={
            <button
              type="button"
              onClick={() => setSelected(root)}
              aria-current={selected === root ? 'true' : undefined}
              className="font-mono text-xs hover:text-white"
            >
              {root}
            </button>
          }
          actions={top && !top.value && <Badge className="tabular">{children(top.total)}</Badge>}
          className="self-start"
        >
          <div className="overflow-x-auto py-1">
            {top && !top.exists && (
              <Empty title="No data here">Select the location above and add a child, or import JSON.</Empty>
            )}
            {top?.value !== undefined && (
              <p className="px-3 py-2 text-xs">
                <LeafValue value={top.value} />
              </p>
            )}
            {(!top || top.children.length > 0) && <TreeRows path={root} depth={0} tree={tree} />}
          </div>
        </Panel>
        <div className="order-first space-y-4 lg:order-none">
          <NodePanel
            key={selected}
            ns={ns}
            path={selected}
            root={root}
            node={nodeOf(t.listings, selected)}
            onOpen={onOpen}
            onGone={() => setSelected(root)}
          />
        </div>
      </div>
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
        <RulesPanel ns={ns} />
        <RequestsPanel ns={ns} />
      </div>
    </>
  );
}

function children(n: number) {
  return `${n.toLocaleString()} ${n === 1 ? 'child' : 'children'}`;
}

const valueHint = 'JSON (42, true, "text", {"a": 1}); anything else is saved as a string.';

/** The selected location: edit its value, add a child, delete it, export or import its JSON. */
function NodePanel({
  ns,
  path,
  root,
  node,
  onOpen,
  onGone,
}: {
  ns: string;
  path: string;
  root: string;
  node?: { exists: boolean; leaf: boolean; value: unknown };
  onOpen: (path: string) => void;
  onGone: () => void;
}) {
  const toast = useToast();
  const confirmed = useConfirmed();
  const fileRef = useRef<HTMLInputElement>(null);
  const [draft, setDraft] = useState<string | null>(null);
  const [key, setKey] = useState('');
  const [childValue, setChildValue] = useState('');
  const [busy, setBusy] = useState(false);
  const name = segments(path).at(-1) ?? ns;
  const current = node?.leaf ? JSON.stringify(node.value) : '';
  const run = async (what: string, fn: () => Promise<void>) => {
    setBusy(true);
    try {
      await fn();
    } catch (e) {
      toast({ tone: 'error', title: what, description: messageOf(e) });
    } finally {
      setBusy(false);
    }
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    void run('Could not save', async () => {
      await setValue(ns, path, parseTyped(draft ?? current));
      setDraft(null);
    });
  };
  const add = (e: FormEvent) => {
    e.preventDefault();
    void run('Could not add the child', async () => {
      const value = parseTyped(childValue);
      if (key.trim()) await setValue(ns, childPath(path, key.trim()), value);
      else await pushValue(ns, path, value);
      setKey('');
      setChildValue('');
    });
  };
  const download = () =>
    void run('Could not export', async () => {
      const text = await exportText(ns, path);
      const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      const file = `${[ns, ...segments(path)].join('-')}.json`;
      Object.assign(document.createElement('a'), { href: url, download: file }).click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const upload = async (file: File) => {
    let value: unknown;
    try {
      value = JSON.parse(await file.text());
    } catch (e) {
      toast({ tone: 'error', title: `${file.name} is not JSON`, description: messageOf(e) });
      return;
    }
    await confirmed(
      {
        title: `Import ${file.name} at ${path}?`,
        body: `What ${path} holds is replaced by the file’s JSON.`,
        action: 'Import',
        danger: true,
      },
      async () => {
        await setValue(ns, path, value);
        toast({ title: 'Imported', description: `${file.name} at ${path}` });
      },
      'Import failed',
    );
  };
  return (
    <Panel
      title={<span className="font-mono text-xs">{path}</span>}
      actions={
        <>
          {path !== root && node && !node.leaf && (
            <IconButton label={`Open ${name}`} onClick={() => onOpen(path)}>
              <FolderInput className="size-4" />
            </IconButton>
          )}
          <IconButton label={`Export ${name} as JSON`} onClick={download}>
            <Download className="size-4" />
          </IconButton>
          <IconButton label={`Import JSON into ${name}`} onClick={() => fileRef.current?.click()}>
            <Upload className="size-4" />
          </IconButton>
          <input
            ref={fileRef}
            type="file"
            accept="application/json,.json"
            className="hidden"
            aria-label="JSON file to import"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void upload(f);
              e.target.value = '';
            }}
          />
          {node?.exists && (
            <IconButton
              label={`Delete ${name}`}
              className="hover:text-red-300"
              onClick={() =>
                confirmed(
                  {
                    title: `Delete ${path}?`,
                    body: node.leaf ? undefined : 'Everything under it is deleted too.',
                    action: 'Delete',
                    danger: true,
                  },
                  async () => {
                    await removeValue(ns, path);
                    onGone();
                  },
                  'Could not delete',
                )
              }
            >
              <Trash2 className="size-4" />
            </IconButton>
          )}
        </>
      }
    >
      <div className="space-y-4 p-3">
        {node?.leaf && (
          <form aria-label={`Edit ${name}`} onSubmit={save} className="space-y-2">
            <Field size="sm" label="Value" hint={valueHint}>
              <Textarea
                rows={2}
                value={draft ?? current}
                onChange={(e) => setDraft(e.target.value)}
                className="font-mono text-xs"
              />
            </Field>
            <Button
              size="sm"
              variant="primary"
              type="submit"
              disabled={busy}
              icon={<Save className="size-3.5" />}
            >
              Save
            </Button>
          </form>
        )}
        {node?.exists === false && path !== root && (
          <p className="text-xs text-zinc-400">Nothing is here now.</p>
        )}
        {!node?.leaf && (
          <form aria-label={`Add a child to ${name}`} onSubmit={add} className="space-y-2">
            <Field size="sm" label="Key" hint="Empty: a push id, as push() makes.">
              <Input value={key} onChange={(e) => setKey(e.target.value)} className="h-8 font-mono text-xs" />
            </Field>
            <Field size="sm" label="Child value" hint={valueHint}>
              <Textarea
                rows={3}
                required
                value={childValue}
                onChange={(e) => setChildValue(e.target.value)}
                className="font-mono text-xs"
              />
            </Field>
            <Button size="sm" type="submit" disabled={busy} icon={<Plus className="size-3.5" />}>
              Add child
            </Button>
          </form>
        )}
      </div>
    </Panel>
  );
}

/** The namespace's rules source, each rule's line shaded by how it decided so far. */
function RulesPanel({ ns }: { ns: string }) {
  const rules = usePolled(() => Promise.all([fetchRules(ns), fetchCoverage(ns)]), 3000, [ns]);
  const [source, coverage] = rules.data ?? [];
  const stats = new Map<number, { t: number; f: number; err: number }>();
  for (const r of coverage ?? []) {
    const s = stats.get(r.line) ?? { t: 0, f: 0, err: 0 };
    s.t += r.hits.true;
    s.f += r.hits.false;
    s.err += r.hits.errors;
    stats.set(r.line, s);
  }
  return (
    <Panel title="Rules">
      {rules.error && <p className="px-3 py-2 text-xs text-red-300">{rules.error}</p>}
      {rules.data && !coverage && (
        <p className="border-b border-zinc-800 px-3 py-2 text-xs text-zinc-400">
          No rules are in force: every read and write is allowed. Name a rules file in firebase.json’s
          “database”, or put rules with PUT /.settings/rules.json.
        </p>
      )}
      {source !== undefined && (
        <RulesSource
          source={source}
          label={`Rules of ${ns}`}
          lineClass={(n) => {
            const s = stats.get(n);
            if (!s || !(s.t || s.f || s.err)) return undefined;
            if (s.err && !s.t) return 'bg-amber-500/15';
            return s.t ? 'bg-emerald-500/15' : 'bg-red-500/15';
          }}
          gutter={
            coverage
              ? (n) => {
                  const s = stats.get(n);
                  if (!s) return null;
                  return (
                    <span className="tabular">
                      {s.t > 0 && <span className="text-emerald-400">✓{s.t} </span>}
                      {s.f > 0 && <span className="text-red-400">✗{s.f} </span>}
                      {s.err > 0 && <span className="text-amber-400">!{s.err}</span>}
                    </span>
                  );
                }
              : undefined
          }
        />
      )}
    </Panel>
  );
}

/** The namespace's latest client requests, with a link to all of them in Requests. */
function RequestsPanel({ ns }: { ns: string }) {
  const log = usePolled(
    () =>
      api<{ requests: Entry[] }>('/emulator/v1/requests?service=database&limit=100').then((r) =>
        r.requests.filter((e) => e.database === ns).slice(0, 12),
      ),
    2000,
    [ns],
  );
  return (
    <Panel
      title="Requests"
      actions={
        <Link to="/requests?service=database" className="text-xs text-brand-300 hover:text-brand-200">
          All in Requests
        </Link>
      }
    >
      {log.data?.length === 0 && (
        <p className="px-3 py-3 text-xs text-zinc-400">
          No client request yet (the console’s own do not count).
        </p>
      )}
      <ul className="divide-y divide-zinc-800/70" aria-label="Database requests">
        {log.data?.map((e) => (
          <li key={e.id}>
            <Link
              to={`/requests?service=database&id=${e.id}`}
              className="grid grid-cols-[4.5rem_minmax(0,1fr)_auto] items-center gap-2 px-3 py-1.5 hover:bg-zinc-800/50"
            >
              <span className="tabular text-[11px] text-zinc-400">{clock(e.time)}</span>
              <span className="min-w-0 truncate font-mono text-[11px] text-zinc-300">
                <span className="font-sans font-medium text-zinc-200">{e.method}</span> {e.path}
              </span>
              <Badge tone={e.outcome === 'allowed' ? 'green' : e.outcome === 'denied' ? 'red' : 'amber'}>
                {e.outcome}
              </Badge>
            </Link>
          </li>
        ))}
      </ul>
    </Panel>
  );
}
