import { Database, Download, Eraser, Upload } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { messageOf, type Progress } from '../api/client';
import { useOverview } from '../api/overview';
import { Button } from '@/components/ui/button';
import { Select } from '@/components/ui/input';
import { TabHeader } from '../ui/controls';
import { formatBytes } from '../ui/format';
import { Breadcrumbs } from '../ui/breadcrumbs';
import { useConfirmed } from '../ui/confirm';
import { clearDatabase, listDatabases, type QuerySpec } from './api';
import { CollectionsPanel } from './collections-panel';
import { DocumentPanel } from './document-panel';
import { DocumentsPanel } from './documents-panel';
import { exportArchive, importArchive } from './archive';
import { Working } from './working';

/** The Firestore tab: databases, then a path of collections and documents shown as columns. */
export function FirestoreTab() {
  const { projectId } = useOverview();
  const [params, setParams] = useSearchParams();
  const defaultDb = `projects/${projectId}/databases/(default)`;
  const db = params.get('db') ?? defaultDb;
  const path = (params.get('path') ?? '').replace(/^\/+|\/+$/g, '');
  const segs = path ? path.split('/') : [];
  const [dbs, setDbs] = useState<string[]>([defaultDb]);
  const toast = useToast();
  const confirmed = useConfirmed();
  const fileRef = useRef<HTMLInputElement>(null);
  // What the tab is doing that takes a while (export, import, clear): its buttons wait for it.
  const [busy, setBusy] = useState<string | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const working = async (what: string, run: () => Promise<void>) => {
    setBusy(what);
    try {
      await run();
    } finally {
      setBusy(null);
      setProgress(null);
    }
  };

  useEffect(() => {
    listDatabases().then(
      (list) => setDbs(Array.from(new Set([defaultDb, db, ...list.map((d) => d.name)])).sort()),
      () => undefined,
    );
  }, [db, defaultDb]);

  // A collection's query lives in the URL (?query=), with the collection it runs on.
  const query = parseQuery(params.get('query'));
  const go = (next: string, nextDb = db) => {
    const p = new URLSearchParams();
    if (nextDb !== defaultDb) p.set('db', nextDb);
    if (next) p.set('path', next);
    // The query stays while its collection stays on the path.
    if (query && nextDb === db && (next === query.on || next.startsWith(`${query.on}/`)))
      p.set('query', params.get('query') ?? '');
    setParams(p);
  };
  const setQuery = (on: string, q: QuerySpec | null) => {
    const p = new URLSearchParams(params);
    if (q) p.set('query', JSON.stringify({ on, ...q }));
    else p.delete('query');
    setParams(p);
  };

  // On a phone only the last column shows, so the row that opens the next one is hidden with its
  // own column: the focus goes on to the open column's heading instead of falling to the page.
  const grid = useRef<HTMLDivElement>(null);
  const carryFocus = useRef(false);
  const open = (next: string) => {
    carryFocus.current = !!grid.current?.contains(document.activeElement);
    go(next);
  };
  useEffect(() => {
    if (!carryFocus.current) return;
    carryFocus.current = false;
    const a = document.activeElement;
    if (a instanceof HTMLElement && a !== document.body && a.offsetParent !== null) return;
    const heading = grid.current?.lastElementChild?.querySelector('h2');
    if (heading instanceof HTMLElement) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }, [path]);

  // Columns: the root's collections, then each collection and document on the path.
  const columns: { kind: 'root' | 'collection' | 'document'; path: string }[] = [{ kind: 'root', path: '' }];
  segs.forEach((_, i) =>
    columns.push({ kind: i % 2 === 0 ? 'collection' : 'document', path: segs.slice(0, i + 1).join('/') }),
  );
  const shown = columns.slice(-3);
  const selectedAfter = (i: number) => segs[i] ?? undefined;

  return (
    <div className="flex h-full flex-col gap-4">
      <TabHeader
        title="Cloud Firestore"
        description="Browse, edit and query documents. Changes from any client appear as they happen."
        actions={
          <>
            <Select
              aria-label="Database"
              value={db}
              onChange={(e) => go('', e.target.value)}
              className="h-7 w-auto max-w-56 text-xs"
            >
              {dbs.map((d) => (
                <option key={d} value={d}>
                  {d.replace(/^projects\//, '').replace('/databases/', ' · ')}
                </option>
              ))}
            </Select>
            <Button
              size="sm"
              disabled={!!busy}
              icon={<Download className="size-3.5" />}
              onClick={() =>
                void working('Exporting…', async () => {
                  try {
                    const { name, size } = await exportArchive((n) =>
                      setBusy(`Exporting… ${formatBytes(n)} so far`),
                    );
                    toast({ title: 'Exported', description: `${name} (${formatBytes(size)})` });
                  } catch (e) {
                    toast({ tone: 'error', title: 'Export failed', description: messageOf(e) });
                  }
                })
              }
            >
              Export
            </Button>
            <Button
              size="sm"
              disabled={!!busy}
              icon={<Upload className="size-3.5" />}
              onClick={() => fileRef.current?.click()}
            >
              Import
            </Button>
            <input
              ref={fileRef}
              type="file"
              accept=".tar.gz,.tgz,application/gzip"
              className="hidden"
              aria-label="Import archive"
              onChange={async (e) => {
                const file = e.target.files?.[0];
                e.target.value = '';
                if (!file) return;
                await confirmed(
                  {
                    title: `Import ${file.name}?`,
                    body: 'Every service’s data (Firestore, the Realtime Database, Auth, Storage) is replaced by exactly the archive’s, as loupe serve --import loads it: no function trigger runs for what it restores.',
                    action: 'Import',
                  },
                  () =>
                    working(`Importing ${file.name}…`, async () => {
                      await importArchive(file, setProgress);
                      toast({ title: 'Imported', description: `${file.name}: the data is the archive’s` });
                    }),
                  'Import failed',
                );
              }}
            />
            <Button
              size="sm"
              variant="danger"
              disabled={!!busy}
              icon={<Eraser className="size-3.5" />}
              onClick={async () => {
                await confirmed(
                  {
                    title: 'Clear the database?',
                    body: `Every document of ${db} is deleted.`,
                    action: 'Clear database',
                    danger: true,
                  },
                  () =>
                    working('Clearing the database…', async () => {
                      await clearDatabase(db);
                      go('');
                      toast({ title: 'Database cleared' });
                    }),
                  'Could not clear',
                );
              }}
            >
              Clear
            </Button>
          </>
        }
      />
      {busy && <Working progress={progress}>{busy}</Working>}
      <Breadcrumbs
        label="Path"
        root={
          <>
            <Database className="size-3.5" aria-hidden />
            <span className="sr-only">Root</span>
          </>
        }
        segs={segs}
        onGo={(depth) => go(segs.slice(0, depth).join('/'))}
        placeholder="users/u1/devices"
        onPath={(typed) => {
          const r = readPath(typed, db);
          if ('error' in r) return r.error;
          go(r.path);
          return null;
        }}
      />
      <div
        ref={grid}
        className={cn(
          'grid min-h-[60vh] flex-1 grid-cols-1 gap-3',
          // An open document gets the widest column, so that its values
          // (a timestamp, say) stay on one line at 1280 px.
          shown.length >= 2 &&
            (shown.at(-1)?.kind === 'document'
              ? 'md:grid-cols-[minmax(0,1fr)_minmax(0,1.4fr)]'
              : // With no document open, the list of ids beside the
                // documents is a narrow column.
                'md:grid-cols-[minmax(12rem,18rem)_minmax(0,1fr)]'),
          shown.length === 3 &&
            (shown[2]?.kind === 'document'
              ? 'xl:grid-cols-[minmax(0,0.8fr)_minmax(0,1fr)_minmax(0,1.5fr)]'
              : 'xl:grid-cols-3'),
        )}
      >
        {shown.map((col, i) => {
          const depth = columns.length - shown.length + i; // index in columns
          // The last column always shows; the one before it from md, the one before that from xl.
          const fromEnd = shown.length - 1 - i;
          const hideSmall = cn(
            fromEnd > 0 && 'hidden',
            fromEnd === 1 && 'md:flex',
            fromEnd === 2 && 'xl:flex',
          );
          const selected = selectedAfter(depth);
          if (col.kind === 'root')
            return (
              <CollectionsPanel
                key="root"
                className={hideSmall}
                db={db}
                docPath=""
                selected={selected}
                onOpen={(id) => open(id)}
              />
            );
          if (col.kind === 'collection')
            return (
              <DocumentsPanel
                key={col.path}
                className={hideSmall}
                db={db}
                collectionPath={col.path}
                selected={selected}
                onOpen={(id) => open(`${col.path}/${id}`)}
                query={query?.on === col.path ? query.spec : null}
                onQuery={(q) => setQuery(col.path, q)}
                onDeleted={() => go(col.path.split('/').slice(0, -1).join('/'))}
              />
            );
          return (
            <DocumentPanel
              key={col.path}
              className={hideSmall}
              db={db}
              docPath={col.path}
              selected={selected}
              onOpen={(p) => open(p)}
              onDeleted={() => go(col.path.split('/').slice(0, -1).join('/'))}
            />
          );
        })}
      </div>
    </div>
  );
}

/**
 * The path a typed path means, relative to the database: slashes around it
 * and the database's own documents prefix are dropped; an odd number of
 * segments is a collection, an even one a document. Or why it is no path.
 */
function readPath(typed: string, db: string): { path: string } | { error: string } {
  let p = typed.trim().replace(/^\/+|\/+$/g, '');
  const prefix = `${db}/documents`;
  if (p === prefix) p = '';
  else if (p.startsWith(`${prefix}/`)) p = p.slice(prefix.length + 1);
  if (!p) return { path: '' };
  const segs = p.split('/');
  for (const [i, s] of segs.entries()) {
    const what = i % 2 === 0 ? 'collection id' : 'document id';
    if (!s) return { error: `Segment ${i + 1} is empty: a path reads collection/document/collection…` };
    if (s === '.' || s === '..') return { error: `A ${what} cannot be “${s}”.` };
    if (/^__.*__$/.test(s)) return { error: `“${s}”: ids of the form __…__ are reserved.` };
    if (new TextEncoder().encode(s).length > 1500)
      return { error: `Segment ${i + 1} (a ${what}) is over 1,500 bytes.` };
  }
  if (segs.length > 100) return { error: 'A path has at most 100 segments.' };
  return { path: segs.join('/') };
}

/** The query of a ?query= parameter and the collection it is on (null when absent or unreadable). */
function parseQuery(raw: string | null): { on: string; spec: QuerySpec } | null {
  if (!raw) return null;
  try {
    const { on, ...spec } = JSON.parse(raw) as QuerySpec & { on?: unknown };
    if (typeof on !== 'string' || !Array.isArray(spec.filters) || typeof spec.limit !== 'number') return null;
    return { on, spec: { ...spec, combine: spec.combine === 'OR' ? 'OR' : 'AND' } };
  } catch {
    return null;
  }
}
