import {
  Ban,
  Download,
  File,
  FileImage,
  FileVideo,
  Folder,
  FolderPlus,
  HardDrive,
  KeyRound,
  Trash2,
  Upload,
  X,
} from 'lucide-react';
import { useRef, useState, type DragEvent } from 'react';
import { useSearchParams } from 'react-router';
import { cn } from '@/lib/cn';
import { useToast } from '@/components/ui/toast-context';
import { api, messageOf, ownerHeaders } from '../api/client';
import { usePolled } from '../api/live';
import { useOverview } from '../api/overview';
import { Button, IconButton } from '@/components/ui/button';
import { Input, Select } from '@/components/ui/input';
import { Badge, Empty, Panel, TabHeader } from '../ui/controls';
import { Breadcrumbs } from '../ui/breadcrumbs';
import { useConfirmed } from '../ui/confirm';
import { CopyButton } from '../ui/copy-button';
import { ago, formatBytes } from '../ui/format';

/** An object as the GCS JSON API lists it. */
type Item = { name: string; size: string; contentType?: string; updated: string; generation: string };
/** An object's metadata as the Firebase Storage API returns it. */
type Meta = Item & {
  md5Hash?: string;
  downloadTokens?: string;
  timeCreated?: string;
  cacheControl?: string;
  metadata?: Record<string, string>;
};
type Uploading = { name: string; loaded: number; total: number; error?: string };

const enc = encodeURIComponent;

/** Buckets and folders; upload by drag and drop, download, delete, metadata, previews. */
export function StorageTab() {
  const { projectId } = useOverview();
  const [params, setParams] = useSearchParams();
  const defaultBucket = `${projectId}.appspot.com`;
  const bucket = params.get('bucket') ?? defaultBucket;
  const prefix = params.get('prefix') ?? '';
  const selected = params.get('object');
  const confirmed = useConfirmed();
  const fileRef = useRef<HTMLInputElement>(null);
  const [uploads, setUploads] = useState<Uploading[]>([]);
  const [dragging, setDragging] = useState(false);
  const [creating, setCreating] = useState(false);

  const buckets = usePolled(
    () =>
      api<{ items?: { name: string }[] }>(`/storage/v1/b?project=${projectId}`).then((r) =>
        (r.items ?? []).map((b) => b.name),
      ),
    10_000,
  );
  const listing = usePolled(
    () =>
      api<{ items?: Item[]; prefixes?: string[] }>(
        `/storage/v1/b/${enc(bucket)}/o?delimiter=/&prefix=${enc(prefix)}`,
      ),
    2500,
    [bucket, prefix],
  );

  const go = (patch: { bucket?: string; prefix?: string; object?: string | null }) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === undefined || v === '' || (k === 'bucket' && v === defaultBucket)) p.delete(k);
      else p.set(k, v);
    }
    setParams(p);
  };

  const upload = (files: FileList | File[]) => {
    for (const file of Array.from(files)) {
      const name = prefix + file.name;
      setUploads((u) => [...u.filter((x) => x.name !== name), { name, loaded: 0, total: file.size }]);
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `/v0/b/${enc(bucket)}/o?name=${enc(name)}`);
      xhr.setRequestHeader('Authorization', ownerHeaders.Authorization);
      xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
      const set = (patch: Partial<Uploading>) =>
        setUploads((u) => u.map((x) => (x.name === name ? { ...x, ...patch } : x)));
      xhr.upload.onprogress = (e) => set({ loaded: e.loaded, total: e.total });
      xhr.onload = () => {
        if (xhr.status >= 300) {
          set({ error: `failed: ${xhr.status}` });
          return;
        }
        setUploads((u) => u.filter((x) => x.name !== name));
        listing.reload();
        buckets.reload();
      };
      xhr.onerror = () => set({ error: 'failed: network error' });
      xhr.send(file);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (e.dataTransfer.files.length) upload(e.dataTransfer.files);
  };

  // The folder's own placeholder (the zero-byte "folder/" object that
  // Create folder writes) is the folder, not a file in it, as the Firebase
  // and Cloud consoles show it.
  const files = (listing.data?.items ?? []).filter((o) => !(o.name === prefix && o.size === '0'));
  const segs = prefix.split('/').filter(Boolean);
  const all = Array.from(new Set([defaultBucket, bucket, ...(buckets.data ?? [])])).sort();
  return (
    <div className="space-y-4">
      <TabHeader
        title="Cloud Storage"
        description="Drop files anywhere on the list to upload them into the open folder."
        actions={
          <>
            <Select
              aria-label="Bucket"
              value={bucket}
              onChange={(e) => go({ bucket: e.target.value, prefix: '', object: null })}
              className="h-7 w-auto max-w-64 text-xs"
            >
              {all.map((b) => (
                <option key={b}>{b}</option>
              ))}
            </Select>
            <Button
              size="sm"
              variant="secondary"
              icon={<FolderPlus className="size-3.5" />}
              onClick={() => setCreating(true)}
              aria-expanded={creating}
            >
              Create folder
            </Button>
            <Button
              size="sm"
              variant="primary"
              icon={<Upload className="size-3.5" />}
              onClick={() => fileRef.current?.click()}
            >
              Upload
            </Button>
            <input
              ref={fileRef}
              type="file"
              multiple
              className="hidden"
              aria-label="Files to upload"
              onChange={(e) => {
                if (e.target.files) upload(e.target.files);
                e.target.value = '';
              }}
            />
          </>
        }
      />
      <Breadcrumbs
        label="Folder"
        root={
          <>
            <HardDrive className="size-3.5" aria-hidden /> gs://{bucket}
          </>
        }
        segs={segs}
        onGo={(depth) => go({ prefix: depth ? segs.slice(0, depth).join('/') + '/' : '', object: null })}
      />
      <div className={cn('grid grid-cols-1 gap-4', selected && 'lg:grid-cols-[minmax(0,1fr)_24rem]')}>
        <div
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
          className={cn(
            'rounded-xl transition',
            dragging && 'ring-2 ring-brand-400 ring-offset-4 ring-offset-zinc-950',
          )}
          data-testid="dropzone"
        >
          <Panel
            title={prefix || 'All files'}
            actions={
              listing.data && (
                <Badge className="tabular">
                  {[
                    listing.data.prefixes?.length ? plural(listing.data.prefixes.length, 'folder') : '',
                    plural(files.length, 'file'),
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </Badge>
              )
            }
          >
            {uploads.length > 0 && (
              <ul className="space-y-2 border-b border-zinc-800 p-3" aria-label="Uploads">
                {uploads.map((u) => (
                  <li key={u.name} className="space-y-1 text-xs">
                    <div className="flex justify-between gap-2">
                      <span className="truncate text-zinc-300">{u.name}</span>
                      <span className={cn('tabular shrink-0', u.error ? 'text-red-300' : 'text-zinc-400')}>
                        {u.error ?? `${Math.round((u.loaded / Math.max(u.total, 1)) * 100)}%`}
                      </span>
                    </div>
                    <div className="h-1 overflow-hidden rounded bg-zinc-800">
                      <div
                        className={cn('h-full', u.error ? 'bg-red-500' : 'bg-brand-500')}
                        style={{ width: `${(u.loaded / Math.max(u.total, 1)) * 100}%` }}
                      />
                    </div>
                  </li>
                ))}
              </ul>
            )}
            {creating && (
              <CreateFolder
                bucket={bucket}
                prefix={prefix}
                taken={listing.data?.prefixes ?? []}
                onDone={(created) => {
                  setCreating(false);
                  if (created) listing.reload();
                }}
              />
            )}
            {listing.data && !files.length && !listing.data.prefixes?.length && (
              <Empty icon={<Upload className="size-6" />} title="Nothing here yet">
                Drop files here, or use Upload.
              </Empty>
            )}
            <ul className="divide-y divide-zinc-800/70" aria-label="Files">
              {listing.data?.prefixes?.map((p) => (
                <li key={p}>
                  <button
                    type="button"
                    onClick={() => go({ prefix: p, object: null })}
                    className="flex w-full items-center gap-3 px-3 py-2 text-left hover:bg-zinc-800/50"
                  >
                    <Folder className="size-4 text-brand-300" aria-hidden />
                    <span className="truncate text-zinc-200">{p.slice(prefix.length)}</span>
                  </button>
                </li>
              ))}
              {files.map((o) => (
                <li key={o.name}>
                  <button
                    type="button"
                    onClick={() => go({ object: o.name })}
                    aria-current={o.name === selected ? 'true' : undefined}
                    className={cn(
                      'flex w-full items-center gap-3 px-3 py-2 text-left hover:bg-zinc-800/50',
                      o.name === selected && 'bg-brand-500/10',
                    )}
                  >
                    <FileIcon type={o.contentType} />
                    <span className="min-w-0 flex-1 truncate text-zinc-200">
                      {o.name.slice(prefix.length)}
                    </span>
                    <span className="hidden text-xs text-zinc-400 sm:block">{o.contentType}</span>
                    <span className="tabular w-16 text-right text-xs text-zinc-400">
                      {formatBytes(Number(o.size))}
                    </span>
                    <span className="hidden w-24 text-right text-xs text-zinc-400 md:block">
                      {ago(o.updated)}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </Panel>
        </div>
        {selected && (
          <ObjectDetail
            key={selected}
            bucket={bucket}
            name={selected}
            onClose={() => go({ object: null })}
            onDelete={async () => {
              await confirmed(
                { title: `Delete ${selected}?`, action: 'Delete file', danger: true },
                async () => {
                  await api(`/storage/v1/b/${enc(bucket)}/o/${enc(selected)}`, { method: 'DELETE' });
                  go({ object: null });
                  listing.reload();
                },
                'Could not delete',
              );
            }}
          />
        )}
      </div>
    </div>
  );
}

/** Why a folder name cannot be used, or null. */
function folderNameError(name: string, taken: boolean): string | null {
  if (!name) return 'Name the folder.';
  if (name.includes('/')) return 'A folder name has no “/”: open the folder first to create one inside it.';
  if (name === '.' || name === '..') return `A folder cannot be called “${name}”.`;
  if (taken) return 'A folder of that name is here already.';
  return null;
}

/**
 * Creates a folder in the open one as the Firebase console does: a
 * zero-byte object named "name/" marks it, so it lists (and stays) while it
 * holds no file.
 */
function CreateFolder({
  bucket,
  prefix,
  taken,
  onDone,
}: {
  bucket: string;
  prefix: string;
  taken: string[];
  onDone: (created: boolean) => void;
}) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      aria-label="Create folder"
      noValidate
      className="space-y-2 border-b border-zinc-800 bg-zinc-950/40 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        const trimmed = name.trim();
        const folder = `${prefix}${trimmed}/`;
        const invalid = folderNameError(trimmed, taken.includes(folder));
        setError(invalid);
        if (invalid) return;
        setBusy(true);
        try {
          await api(`/v0/b/${enc(bucket)}/o?name=${enc(folder)}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/octet-stream' },
            body: new Blob([]),
          });
          onDone(true);
        } catch (err) {
          setError(messageOf(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="flex flex-wrap items-start gap-2">
        <label className="min-w-0 flex-1 basis-48">
          <span className="sr-only">Folder name</span>
          <Input
            autoFocus
            value={name}
            placeholder="Folder name"
            aria-invalid={!!error}
            aria-describedby={error ? 'create-folder-error' : undefined}
            onChange={(e) => {
              setName(e.target.value);
              setError(null);
            }}
            className="h-8 w-full text-sm"
          />
        </label>
        <Button size="sm" variant="ghost" onClick={() => onDone(false)}>
          Cancel
        </Button>
        <Button size="sm" variant="primary" type="submit" disabled={busy}>
          Create
        </Button>
      </div>
      {error && (
        <p id="create-folder-error" role="alert" className="text-xs text-red-300">
          {error}
        </p>
      )}
    </form>
  );
}

function FileIcon({ type }: { type?: string }) {
  if (type?.startsWith('image/')) return <FileImage className="size-4 text-emerald-300" aria-hidden />;
  if (type?.startsWith('video/')) return <FileVideo className="size-4 text-sky-300" aria-hidden />;
  return <File className="size-4 text-zinc-400" aria-hidden />;
}

/** One object: a preview (images, seekable video), its metadata and download tokens. */
function ObjectDetail({
  bucket,
  name,
  onClose,
  onDelete,
}: {
  bucket: string;
  name: string;
  onClose: () => void;
  onDelete: () => void;
}) {
  const meta = usePolled(() => api<Meta>(`/v0/b/${enc(bucket)}/o/${enc(name)}`), 5000, [bucket, name]);
  const m = meta.data;
  const token = m?.downloadTokens?.split(',')[0];
  const url = token ? `/v0/b/${enc(bucket)}/o/${enc(name)}?alt=media&token=${token}` : undefined;
  const type = m?.contentType ?? '';
  return (
    <Panel
      title={<span className="font-mono text-xs">{name.split('/').at(-1)}</span>}
      actions={
        <>
          {url && (
            <a
              href={url}
              download={name.split('/').at(-1)}
              aria-label="Download"
              title="Download"
              className="inline-flex size-7 items-center justify-center rounded-md text-zinc-400 hover:bg-zinc-800 hover:text-white"
            >
              <Download className="size-4" />
            </a>
          )}
          <IconButton label="Delete file" onClick={onDelete} className="hover:text-red-300">
            <Trash2 className="size-4" />
          </IconButton>
          <IconButton label="Close" onClick={onClose}>
            <X className="size-4" />
          </IconButton>
        </>
      }
      className="self-start"
    >
      {meta.error && <p className="px-3 py-2 text-xs text-red-300">{meta.error}</p>}
      {url && type.startsWith('image/') && (
        <div className="grid place-items-center border-b border-zinc-800 bg-[repeating-conic-gradient(#18181b_0%_25%,#09090b_0%_50%)] bg-[length:16px_16px] p-3">
          <img src={url} alt={`Preview of ${name}`} className="max-h-72 rounded object-contain" />
        </div>
      )}
      {url && type.startsWith('video/') && (
        <div className="border-b border-zinc-800 bg-black">
          <video
            src={url}
            controls
            preload="metadata"
            className="max-h-72 w-full"
            aria-label={`Preview of ${name}`}
          />
        </div>
      )}
      {m && (
        <dl className="grid grid-cols-[7rem_minmax(0,1fr)] gap-x-3 gap-y-1.5 px-3 py-3 text-xs">
          <Row k="Path" v={`gs://${bucket}/${name}`} mono />
          <Row k="Type" v={type} />
          <Row k="Size" v={`${formatBytes(Number(m.size))} (${Number(m.size).toLocaleString()} bytes)`} />
          <Row k="Created" v={m.timeCreated ? new Date(m.timeCreated).toLocaleString() : ''} />
          <Row k="Updated" v={new Date(m.updated).toLocaleString()} />
          <Row k="Generation" v={m.generation} mono />
          <Row k="MD5" v={m.md5Hash ?? ''} mono />
          {m.cacheControl && <Row k="Cache-Control" v={m.cacheControl} />}
          {Object.entries(m.metadata ?? {}).map(([k, v]) => (
            <Row key={k} k={k} v={v} mono />
          ))}
          <dt className="text-zinc-400">Download tokens</dt>
          <dd>
            <DownloadTokens bucket={bucket} name={name} tokens={m.downloadTokens} onChange={meta.reload} />
          </dd>
        </dl>
      )}
    </Panel>
  );
}

/**
 * An object's download tokens, each with its download URL to copy and a
 * revoke button, and a button that creates another, as the Firebase console
 * does (POST to the object with create_token / delete_token).
 */
function DownloadTokens({
  bucket,
  name,
  tokens,
  onChange,
}: {
  bucket: string;
  name: string;
  tokens?: string;
  onChange: () => void;
}) {
  const confirmed = useConfirmed();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const object = `/v0/b/${enc(bucket)}/o/${enc(name)}`;
  const list = tokens ? tokens.split(',') : [];
  const create = async () => {
    setBusy(true);
    try {
      await api(`${object}?create_token=true`, { method: 'POST' });
      onChange();
    } catch (err) {
      toast({ tone: 'error', title: 'Could not create a token', description: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="space-y-1.5">
      {list.length > 0 && (
        <ul aria-label="Download tokens" className="space-y-1">
          {list.map((t) => (
            <li key={t} className="flex items-center gap-1">
              <code className="min-w-0 flex-1 rounded bg-zinc-950 break-all px-1.5 py-0.5 font-mono text-[11px] text-zinc-300">
                {t}
              </code>
              <CopyButton
                label="Copy download URL"
                text={`${location.origin}${object}?alt=media&token=${t}`}
              />
              <IconButton
                label="Revoke token"
                className="hover:text-red-300"
                onClick={() =>
                  confirmed(
                    {
                      title: 'Revoke this download token?',
                      body: 'Links made with it stop working.',
                      action: 'Revoke token',
                      danger: true,
                    },
                    async () => {
                      await api(`${object}?delete_token=${enc(t)}`, { method: 'POST' });
                      onChange();
                    },
                    'Could not revoke the token',
                  )
                }
              >
                <Ban className="size-3.5" />
              </IconButton>
            </li>
          ))}
        </ul>
      )}
      {list.length === 0 && <p className="text-zinc-400">none</p>}
      <Button size="sm" icon={<KeyRound className="size-3.5" />} onClick={create} disabled={busy}>
        Create token
      </Button>
    </div>
  );
}

function Row({ k, v, mono }: { k: string; v: string; mono?: boolean }) {
  return (
    <>
      <dt className="text-zinc-400">{k}</dt>
      <dd className={cn('break-all text-zinc-200', mono && 'font-mono text-[11px]')}>{v}</dd>
    </>
  );
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;
}
