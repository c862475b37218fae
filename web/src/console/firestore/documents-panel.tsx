import { FilePlus, FileText, Filter, Trash2, Workflow } from 'lucide-react';
import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { Button, IconButton } from '@/components/ui/button';
import type { Progress } from '../api/client';
import { Badge, Empty, Panel } from '../ui/controls';
import { useConfirmed } from '../ui/confirm';
import { ListRow } from '../ui/list';
import { AddDocumentDialog } from './add-document';
import { countDocs, deleteTree, getDocs, listPage, queryIndexes, runQuery, type QuerySpec } from './api';
import { PipelineForm } from './pipeline-form';
import { QueryForm } from './query-form';
import { Working } from './working';
import { useLiveLoad, useLiveWindow } from './use-live-load';
import { preview, type Doc } from './values';

const pageSize = 50;

/** A collection's documents: paged by name, or a query's results. */
export function DocumentsPanel({
  db,
  collectionPath,
  selected,
  onOpen,
  onDeleted,
  query,
  onQuery,
  className,
}: {
  db: string;
  collectionPath: string;
  selected?: string;
  onOpen: (id: string) => void;
  onDeleted: () => void;
  /** The query shown instead of the collection's pages (from the URL), and how to set or clear it. */
  query: QuerySpec | null;
  onQuery: (q: QuerySpec | null) => void;
  className?: string;
}) {
  const prefix = `${db}/documents/${collectionPath}/`;
  const inCollection = (p: string) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/');
  const [showQuery, setShowQuery] = useState(!!query);
  const [showPipeline, setShowPipeline] = useState(false);
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deleteProgress, setDeleteProgress] = useState<Progress | null>(null);
  // The query form starts again from the URL's query when that changes by other means (back, a link).
  const queryKey = query ? JSON.stringify(query) : '';
  const [form, setForm] = useState({ for: queryKey, n: 0 });
  if (form.for !== queryKey) setForm({ for: queryKey, n: form.n + 1 });
  const toast = useToast();
  const confirmed = useConfirmed();
  // The count loads apart from the pages, so a page never waits for it; with a query it counts its matches.
  const { data: count } = useLiveLoad(() => countDocs(db, collectionPath, query), inCollection, [
    db,
    collectionPath,
    queryKey,
  ]);
  const { data: indexes } = useLiveLoad(
    async () => (query ? queryIndexes(db, collectionPath, query) : undefined),
    () => false,
    [db, collectionPath, queryKey],
  );
  const size = query?.limit ?? pageSize;
  // Each page continues after the last document loaded; a commit updates the loaded documents in place.
  const { data, error, loading, loadMore } = useLiveWindow<Doc>(
    (after, limit) =>
      query
        ? runQuery(db, collectionPath, { ...query, limit }, after)
        : listPage(db, collectionPath, limit, after?.name),
    size,
    inCollection,
    async (paths, w) => {
      // A query's window is read again (in one query); a listing by name takes the changed documents alone.
      if (query) return undefined;
      const changed = await getDocs(
        db,
        paths.map((p) => p.slice(`${db}/documents/`.length)),
      );
      const last = w.docs.at(-1)?.name;
      const docs = w.docs.filter((d) => !changed.has(d.name));
      changed.forEach((d, name) => {
        if (d && (!w.more || (last !== undefined && name <= last))) docs.push(d);
      });
      return docs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    [db, collectionPath, queryKey],
  );
  const id = collectionPath.split('/').at(-1);
  return (
    <Panel
      className={cn('overflow-hidden', className)}
      title={
        <span className="flex items-center gap-2">
          <span className="truncate font-mono text-xs">{id}</span>
          {count !== undefined && (
            <Badge className="tabular" tone={query ? 'brand' : undefined}>
              {query ? `${count.toLocaleString()} matching` : count.toLocaleString()}
            </Badge>
          )}
          {query && count === undefined && <Badge tone="brand">query</Badge>}
        </span>
      }
      actions={
        <>
          <IconButton label="Add document" onClick={() => setAdding(true)}>
            <FilePlus className="size-4" />
          </IconButton>
          <IconButton
            label="Query"
            aria-pressed={showQuery}
            className={cn((showQuery || query) && 'text-brand-300')}
            onClick={() => setShowQuery((s) => !s)}
          >
            <Filter className="size-4" />
          </IconButton>
          <IconButton
            label="Pipeline"
            aria-pressed={showPipeline}
            className={cn(showPipeline && 'text-brand-300')}
            onClick={() => setShowPipeline((s) => !s)}
          >
            <Workflow className="size-4" />
          </IconButton>
          <IconButton
            label="Delete collection"
            className="hover:text-red-300"
            disabled={deleting}
            onClick={async () => {
              await confirmed(
                {
                  title: `Delete ${collectionPath}?`,
                  body: 'Every document in it, and their subcollections, is deleted.',
                  action: 'Delete collection',
                  danger: true,
                },
                async () => {
                  setDeleting(true);
                  try {
                    const res = await deleteTree(db, collectionPath, setDeleteProgress);
                    toast({
                      title: 'Collection deleted',
                      description: `${collectionPath}: ${res.deleted.toLocaleString()} documents`,
                    });
                    onDeleted();
                  } finally {
                    setDeleting(false);
                    setDeleteProgress(null);
                  }
                },
                'Could not delete',
              );
            }}
          >
            <Trash2 className="size-4" />
          </IconButton>
        </>
      }
    >
      {adding && (
        <AddDocumentDialog
          db={db}
          collectionPath={collectionPath}
          onClose={() => setAdding(false)}
          onCreated={(docId) => {
            setAdding(false);
            onOpen(docId);
          }}
        />
      )}
      {deleting && (
        <div className="border-b border-zinc-800 p-2">
          <Working progress={deleteProgress}>{`Deleting ${collectionPath} and everything under it…`}</Working>
        </div>
      )}
      {showQuery && (
        <QueryForm
          key={form.n}
          db={db}
          initial={query}
          onRun={(q) => {
            setForm({ for: JSON.stringify(q), n: form.n });
            onQuery(q);
          }}
          onClear={() => {
            setForm({ for: '', n: form.n });
            onQuery(null);
            setShowQuery(false);
          }}
          active={!!query}
        />
      )}
      {showPipeline && <PipelineForm db={db} collectionPath={collectionPath} />}
      <div className="min-h-0 flex-1 overflow-y-auto">
        {error && <p className="px-3 py-2 text-xs text-red-300">{error}</p>}
        {indexes && (
          <p
            className="border-b border-zinc-800 px-3 py-1.5 text-[11px] text-zinc-400"
            aria-label="Index used"
          >
            {indexes.length ? (
              <>
                Index used: <span className="font-mono text-zinc-200">{indexes.join('; ')}</span>
              </>
            ) : (
              'No index reported for this query.'
            )}
          </p>
        )}
        {data && data.docs.length === 0 && (
          <Empty
            icon={<FileText className="size-6" />}
            title={query ? 'No document matches' : 'No documents'}
          />
        )}
        <ul className="py-1" aria-label="Documents">
          {data?.docs.map((d) => {
            const docId = d.name.split('/').at(-1) ?? '';
            const first = Object.entries(d.fields ?? {}).sort(([a], [b]) => a.localeCompare(b))[0];
            return (
              <ListRow key={d.name} selected={docId === selected} onClick={() => onOpen(docId)}>
                <span className="min-w-0 flex-1">
                  <span className="block truncate font-mono text-xs">{docId}</span>
                  {first && (
                    <span className="block truncate text-[11px] text-zinc-400">
                      {first[0]}: {preview(first[1])}
                    </span>
                  )}
                </span>
              </ListRow>
            );
          })}
        </ul>
        {data?.more && (count === undefined || data.docs.length < count) && (
          <div className="p-2">
            <Button size="sm" variant="ghost" className="w-full" disabled={loading} onClick={loadMore}>
              {loading ? 'Loading…' : `Load ${size} more`}
            </Button>
          </div>
        )}
      </div>
    </Panel>
  );
}
