import { ExternalLink, ListTree } from 'lucide-react';
import { useState } from 'react';
import { ApiError, api } from '../api/client';
import { usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { Select } from '@/components/ui/input';
import { Badge, Empty, Panel, TabHeader } from '../ui/controls';
import { CopyButton } from '../ui/copy-button';
import { ago } from '../ui/format';

/** A Firestore index definition as firestore.indexes.json holds it. */
type IndexDef = {
  collectionGroup: string;
  queryScope: 'COLLECTION' | 'COLLECTION_GROUP';
  fields: { fieldPath: string; order?: string; arrayConfig?: string; vectorConfig?: unknown }[];
};
/** GET /emulator/v1/projects/{p}/databases/{d}/indexes (docs/admin-api.md, Firestore indexes). */
type Indexes = {
  declared?: IndexDef[];
  built?: (IndexDef & { entries: number })[];
  missing?: { database: string; index: IndexDef; link?: string; queries: number; first?: string }[];
  ready?: boolean;
};

/** Declared indexes, the ones loupe built in memory, and those queries needed but nobody declared. */
export function IndexesTab() {
  const { projectId } = useOverview();
  const [database, setDatabase] = useState('(default)');
  const dbs = usePolled(
    () =>
      api<{ databases: { name: string }[] }>('/emulator/v1/firestore/databases').then((r) =>
        r.databases.map((d) => d.name.split('/').at(-1) ?? ''),
      ),
    10_000,
  );
  const ix = usePolled(
    () =>
      api<Indexes>(
        `/emulator/v1/projects/${projectId}/databases/${encodeURIComponent(database)}/indexes`,
      ).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }),
    3000,
    [database],
  );
  const missingFile = JSON.stringify(
    { indexes: (ix.data?.missing ?? []).map((m) => m.index), fieldOverrides: [] },
    null,
    2,
  );
  return (
    <div className="space-y-4">
      <TabHeader
        title="Firestore indexes"
        description="Queries that need a composite index nobody declared show here, with the definition to add."
        actions={
          <Select
            aria-label="Database"
            value={database}
            onChange={(e) => setDatabase(e.target.value)}
            className="h-7 w-auto text-xs"
          >
            {Array.from(new Set(['(default)', ...(dbs.data ?? [])])).map((d) => (
              <option key={d}>{d}</option>
            ))}
          </Select>
        }
      />
      {ix.data === null && (
        <Empty icon={<ListTree className="size-6" />} title="This loupe does not report its indexes">
          The indexes endpoint (GET /emulator/v1/projects/…/databases/…/indexes) is not served by this build.
        </Empty>
      )}
      {ix.error && <p className="text-xs text-red-300">{ix.error}</p>}
      {ix.data && (
        <div className="grid grid-cols-1 gap-4 xl:grid-cols-2">
          <Panel
            title={
              <span className="flex items-center gap-2">
                Needed, not declared{' '}
                <Badge tone={ix.data.missing?.length ? 'amber' : 'green'}>
                  {ix.data.missing?.length ?? 0}
                </Badge>
              </span>
            }
            actions={
              ix.data.missing?.length ? (
                <CopyButton text={missingFile} label="Copy as firestore.indexes.json" />
              ) : undefined
            }
            className="xl:col-span-2"
          >
            {!ix.data.missing?.length && <Empty title="Every query had the index it needed" />}
            <ul className="divide-y divide-zinc-800/70">
              {ix.data.missing?.map((m, i) => (
                <li key={i} className="space-y-2 px-3 py-3">
                  <div className="flex flex-wrap items-center gap-2">
                    <IndexLine def={m.index} />
                    <Badge className="tabular">
                      {m.queries} {m.queries === 1 ? 'query' : 'queries'}
                    </Badge>
                    {m.first && <span className="text-[11px] text-zinc-400">first {ago(m.first)}</span>}
                    {m.link && (
                      <a
                        href={m.link}
                        target="_blank"
                        rel="noreferrer"
                        className="ml-auto flex items-center gap-1 text-xs text-brand-300 hover:underline"
                      >
                        production console <ExternalLink className="size-3" />
                      </a>
                    )}
                  </div>
                  <pre
                    tabIndex={0}
                    className="overflow-x-auto rounded-lg bg-zinc-950 p-2.5 font-mono text-[11px] leading-relaxed text-zinc-300"
                  >
                    {JSON.stringify(m.index, null, 2)}
                  </pre>
                </li>
              ))}
            </ul>
          </Panel>
          <IndexList
            title="Declared"
            defs={ix.data.declared}
            badge={ix.data.ready === false ? 'building' : undefined}
            empty="No firestore.indexes.json, or no index in it."
          />
          <IndexList title="Built in memory" defs={ix.data.built} empty="No query has needed an index yet." />
        </div>
      )}
    </div>
  );
}

function IndexLine({ def }: { def: IndexDef }) {
  return (
    <span className="flex min-w-0 flex-wrap items-center gap-1.5 font-mono text-xs">
      <span className="text-zinc-100">{def.collectionGroup || 'every collection'}</span>
      {def.queryScope === 'COLLECTION_GROUP' && <Badge tone="sky">group</Badge>}
      <span className="text-zinc-400">(</span>
      {def.fields.length === 0 && <span className="text-zinc-400">__name__</span>}
      {def.fields.map((f, i) => (
        <span key={i} className="text-zinc-300">
          {f.fieldPath}
          <span className="text-zinc-400">
            {' '}
            {f.order
              ? f.order === 'ASCENDING'
                ? '↑'
                : '↓'
              : f.arrayConfig
                ? 'contains'
                : f.vectorConfig
                  ? 'vector'
                  : ''}
          </span>
          {i < def.fields.length - 1 && <span className="text-zinc-400">, </span>}
        </span>
      ))}
      <span className="text-zinc-400">)</span>
    </span>
  );
}

function IndexList({
  title,
  defs,
  badge,
  empty,
}: {
  title: string;
  defs?: (IndexDef & { entries?: number })[];
  badge?: string;
  empty: string;
}) {
  return (
    <Panel
      title={
        <span className="flex items-center gap-2">
          {title} <Badge>{defs?.length ?? 0}</Badge>
          {badge && <Badge tone="amber">{badge}</Badge>}
        </span>
      }
    >
      {!defs?.length && <p className="px-3 py-4 text-xs text-zinc-400">{empty}</p>}
      <ul className="divide-y divide-zinc-800/70">
        {defs?.map((d, i) => (
          <li key={i} className="flex items-center gap-2 px-3 py-2">
            <IndexLine def={d} />
            {d.entries !== undefined && (
              <span className="tabular ml-auto shrink-0 text-[11px] whitespace-nowrap text-zinc-400">
                {d.entries.toLocaleString()} {d.entries === 1 ? 'row' : 'rows'}
              </span>
            )}
          </li>
        ))}
      </ul>
    </Panel>
  );
}
