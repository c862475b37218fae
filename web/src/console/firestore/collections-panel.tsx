import { FolderPlus, Folder } from 'lucide-react';
import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { messageOf } from '../api/client';
import { Button, IconButton } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { Empty, Panel } from '../ui/controls';
import { ListRow } from '../ui/list';
import { autoId, createDoc, listCollections } from './api';
import { useLiveLoad } from './use-live-load';

/** The collections under the database root or a document, with "start collection". */
export function CollectionsPanel({
  db,
  docPath,
  selected,
  onOpen,
  className,
  embedded,
}: {
  db: string;
  docPath: string;
  selected?: string;
  onOpen: (path: string) => void;
  className?: string;
  embedded?: boolean;
}) {
  const prefix = `${db}/documents/${docPath ? docPath + '/' : ''}`;
  const { data: ids, error } = useLiveLoad(
    () => listCollections(db, docPath),
    (p) => p.startsWith(prefix),
    [db, docPath],
  );
  const [adding, setAdding] = useState(false);
  const add = (
    <IconButton label="Start collection" onClick={() => setAdding((a) => !a)}>
      <FolderPlus className="size-4" />
    </IconButton>
  );
  const body = (
    <>
      {adding && (
        <StartCollection
          onCancel={() => setAdding(false)}
          onCreate={async (coll, doc) => {
            const path = `${docPath ? docPath + '/' : ''}${coll}/${doc}`;
            await createDoc(db, path, {});
            setAdding(false);
            onOpen(path);
          }}
        />
      )}
      {error && <p className="px-3 py-2 text-xs text-red-300">{error}</p>}
      {ids && ids.length === 0 && !adding && (
        <Empty icon={<Folder className="size-6" />} title="No collections">
          {docPath ? 'This document has no subcollections.' : 'Start a collection, or write from the app.'}
        </Empty>
      )}
      <ul className="py-1">
        {ids?.map((id) => (
          <ListRow
            key={id}
            selected={id === selected}
            onClick={() => onOpen(`${docPath ? docPath + '/' : ''}${id}`)}
          >
            <Folder className="size-3.5 shrink-0 text-zinc-400" aria-hidden />
            <span className="truncate font-mono text-xs">{id}</span>
          </ListRow>
        ))}
      </ul>
    </>
  );
  if (embedded)
    return (
      <div>
        <div className="flex items-center px-3 pt-2">
          <h3 className="flex-1 text-xs font-semibold tracking-wide text-zinc-400 uppercase">Collections</h3>
          {add}
        </div>
        {body}
      </div>
    );
  return (
    <Panel
      className={cn('overflow-hidden', className)}
      title={<span className="font-mono text-xs">{docPath ? docPath : '(root)'}</span>}
      actions={add}
    >
      <div className="min-h-0 flex-1 overflow-y-auto">{body}</div>
    </Panel>
  );
}

function StartCollection({
  onCreate,
  onCancel,
}: {
  onCreate: (coll: string, doc: string) => Promise<void>;
  onCancel: () => void;
}) {
  const [coll, setColl] = useState('');
  const [doc, setDoc] = useState(autoId);
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  return (
    <form
      className="space-y-2 border-b border-zinc-800 bg-zinc-950/40 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await onCreate(coll.trim(), doc.trim());
        } catch (err) {
          toast({ tone: 'error', title: 'Could not create', description: messageOf(err) });
        } finally {
          setBusy(false);
        }
      }}
    >
      <Input
        aria-label="Collection id"
        placeholder="Collection id"
        value={coll}
        onChange={(e) => setColl(e.target.value)}
        autoFocus
        required
      />
      <Input
        aria-label="First document id"
        placeholder="Document id"
        value={doc}
        onChange={(e) => setDoc(e.target.value)}
        required
        className="font-mono text-xs"
      />
      <div className="flex justify-end gap-2">
        <Button size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
        <Button size="sm" variant="primary" type="submit" disabled={busy || !coll.trim() || !doc.trim()}>
          Create
        </Button>
      </div>
    </form>
  );
}
