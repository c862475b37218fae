import { ChevronDown, ChevronRight, FileText, Pencil, Plus, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { messageOf, type Progress } from '../api/client';
import { IconButton } from '@/components/ui/button';
import { Badge, Empty, Panel } from '../ui/controls';
import { useConfirmed } from '../ui/confirm';
import { ago } from '../ui/format';
import { deleteField, deleteTree, getDoc, setField } from './api';
import { CollectionsPanel } from './collections-panel';
import { FieldEditor } from './field-editor';
import { useLiveLoad } from './use-live-load';
import { Working } from './working';
import {
  fieldChanges,
  memberAt,
  memberLabel,
  preview,
  referencePath,
  typeOf,
  vectorOf,
  withMember,
  type Doc,
  type Fields,
  type MemberPath,
  type Value,
} from './values';

/** One document: its typed fields (editable) and its subcollections. */
export function DocumentPanel({
  db,
  docPath,
  selected,
  onOpen,
  onDeleted,
  className,
}: {
  db: string;
  docPath: string;
  selected?: string;
  /** Opens a path under the root (a subcollection, or a document in a new one). */
  onOpen: (path: string) => void;
  onDeleted: () => void;
  className?: string;
}) {
  const name = `${db}/documents/${docPath}`;
  const { data: doc, error } = useLiveLoad(
    () => getDoc(db, docPath),
    (p) => p === name,
    [db, docPath],
  );
  const [editing, setEditingField] = useState<string | null>(null); // field name, or '' for a new field
  // The document as it was when the field's edit began: the edit commits only if it is unchanged.
  const [seen, setSeen] = useState<Doc | null>(null);
  const [member, setMember] = useState<MemberEditing | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [deleteProgress, setDeleteProgress] = useState<Progress | null>(null);
  const setEditing = (f: string | null) => {
    setEditingField(f);
    setSeen(f === null ? null : (doc ?? null));
    setMember(null);
  };
  // A top-level field's edit: only over the version the edit began from; else say what changed meanwhile.
  const saveField = async (
    field: string,
    value: Value | 'serverTimestamp',
    serverTimes: string[][],
    renamedFrom?: string,
  ) => {
    try {
      await setField(db, docPath, field, value, { serverTimes, renamedFrom, updateTime: seen?.updateTime });
    } catch (err) {
      const fresh = seen?.updateTime ? await getDoc(db, docPath).catch(() => undefined) : undefined;
      if (fresh === undefined || fresh?.updateTime === seen?.updateTime) throw err;
      const what = fresh ? fieldChanges(seen?.fields ?? {}, fresh.fields ?? {}) : '';
      throw new Error(
        fresh
          ? `The document changed while you edited it${what ? `: ${what}` : ''}. Your edit was not saved; the panel shows the new values.`
          : 'The document was deleted while you edited it. Your edit was not saved.',
        { cause: err },
      );
    }
    setEditing(null);
  };
  const toast = useToast();
  const confirmed = useConfirmed();
  const fields = doc?.fields ?? {};
  const names = Object.keys(fields).sort();
  const current = async (field: string) => {
    const fresh = await getDoc(db, docPath);
    const top = fresh?.fields?.[field];
    if (!fresh || !top) throw new Error(`${field} is gone.`);
    return { top, updateTime: fresh.updateTime };
  };
  const members: MemberActions = {
    editing: member,
    start: (m) => {
      setEditingField(null);
      setMember(m);
    },
    cancel: () => setMember(null),
    // Each change reads the field afresh and commits only if the document has not changed since.
    save: async ({ field, path, adding }, key, value, serverTimes) => {
      const { top, updateTime } = await current(field);
      const last = path.at(-1);
      const here = memberAt(top, path);
      if (!here) throw new Error(`${memberLabel(field, path)} is gone.`);
      const intoArray = adding && typeOf(here) === 'array';
      const target: MemberPath = adding
        ? [...path, intoArray ? arrayLength(here) : key]
        : typeof last === 'string'
          ? [...path.slice(0, -1), key]
          : path;
      const renamed = !adding && typeof last === 'string' && key !== last;
      if ((adding && !intoArray) || renamed)
        if (memberAt(top, target)) throw new Error(`${memberLabel(field, target)} is there already.`);
      const base = renamed ? withMember(top, path, undefined) : top;
      const stamp = value === 'serverTimestamp';
      // Server timestamps are offered only where the path has no array in it.
      const segs = target.map(String);
      await setField(db, docPath, field, withMember(base, target, stamp ? undefined : value), {
        serverTimes: stamp ? [segs] : serverTimes.map((s) => [...segs, ...s]),
        updateTime,
      });
      setMember(null);
    },
    remove: async (field, path) => {
      try {
        const { top, updateTime } = await current(field);
        await setField(db, docPath, field, withMember(top, path, undefined), { updateTime });
      } catch (err) {
        toast({ tone: 'error', title: 'Could not delete the member', description: messageOf(err) });
      }
    },
  };
  const docId = docPath.split('/').at(-1);
  return (
    <Panel
      className={cn('overflow-hidden', className)}
      title={<span className="font-mono text-xs">{docId}</span>}
      actions={
        <>
          <IconButton label="Add field" onClick={() => setEditing('')}>
            <Plus className="size-4" />
          </IconButton>
          <IconButton
            label="Delete document"
            className="hover:text-red-300"
            disabled={deleting}
            onClick={async () => {
              await confirmed(
                {
                  title: `Delete ${docPath}?`,
                  body: 'The document and its subcollections are deleted.',
                  action: 'Delete document',
                  danger: true,
                },
                async () => {
                  setDeleting(true);
                  try {
                    const res = await deleteTree(db, docPath, setDeleteProgress);
                    toast({
                      title: 'Document deleted',
                      description: `${docPath} and its subcollections: ${res.deleted.toLocaleString()} ${res.deleted === 1 ? 'document' : 'documents'}`,
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
      <div className="min-h-0 flex-1 overflow-y-auto">
        {deleting && (
          <div className="border-b border-zinc-800 p-2">
            <Working progress={deleteProgress}>{`Deleting ${docPath} and its subcollections…`}</Working>
          </div>
        )}
        {error && <p className="px-3 py-2 text-xs text-red-300">{error}</p>}
        {doc === null && (
          <p className="border-b border-zinc-800 px-3 py-2 text-xs text-amber-300/90">
            This document does not exist{editing === null ? '; adding a field creates it.' : '.'}
          </p>
        )}
        {doc?.updateTime && (
          <p className="border-b border-zinc-800 px-3 py-1.5 text-[11px] text-zinc-400">
            Updated {ago(doc.updateTime)} · created {ago(doc.createTime)}
          </p>
        )}
        {editing === '' && (
          <FieldEditor
            db={db}
            onCancel={() => setEditing(null)}
            onSave={(field, value, serverTimes) => saveField(field, value, serverTimes)}
          />
        )}
        {doc && names.length === 0 && editing !== '' && (
          <Empty icon={<FileText className="size-6" />} title="No fields" />
        )}
        <ul className="py-1" aria-label="Fields">
          {names.map((f) =>
            editing === f ? (
              <li key={f}>
                <FieldEditor
                  db={db}
                  name={f}
                  value={fields[f]}
                  onCancel={() => setEditing(null)}
                  onSave={(field, value, serverTimes) => saveField(field, value, serverTimes, f)}
                />
              </li>
            ) : (
              <FieldRow
                key={f}
                db={db}
                field={f}
                path={[]}
                name={f}
                value={fields[f] as Value}
                members={members}
                onEdit={() => setEditing(f)}
                onDelete={async () => {
                  try {
                    await deleteField(db, docPath, f);
                  } catch (err) {
                    toast({
                      tone: 'error',
                      title: 'Could not delete the field',
                      description: messageOf(err),
                    });
                  }
                }}
              />
            ),
          )}
        </ul>
        <div className="border-t border-zinc-800">
          <CollectionsPanel embedded db={db} docPath={docPath} selected={selected} onOpen={onOpen} />
        </div>
      </div>
    </Panel>
  );
}

const typeTone = {
  string: 'green',
  integer: 'sky',
  double: 'sky',
  boolean: 'amber',
  null: 'zinc',
  timestamp: 'brand',
  geopoint: 'brand',
  reference: 'brand',
  bytes: 'zinc',
  map: 'zinc',
  array: 'zinc',
  vector: 'brand',
} as const;

/** The member of a field being edited, or the map or array a member is being added to. */
type MemberEditing = { field: string; path: MemberPath; adding: boolean };

/** What a field's rows do to its members: edit, add, delete, each written back as the whole field. */
type MemberActions = {
  editing: MemberEditing | null;
  start: (m: MemberEditing) => void;
  cancel: () => void;
  save: (
    m: MemberEditing,
    key: string,
    value: Value | 'serverTimestamp',
    serverTimes: string[][],
  ) => Promise<void>;
  remove: (field: string, path: MemberPath) => Promise<void>;
};

const samePath = (a: MemberPath, b: MemberPath) => a.length === b.length && a.every((x, i) => x === b[i]);
const arrayLength = (v: Value | undefined) =>
  v && 'arrayValue' in v ? (v.arrayValue.values ?? []).length : 0;

/**
 * A field, or a member of one at path: its name, its value and its type;
 * maps and arrays open to their members. Each row edits and deletes itself
 * (top-level rows through onEdit and onDelete), and a map or array row adds
 * a member.
 */
function FieldRow({
  db,
  field,
  path,
  name,
  value,
  members,
  onEdit,
  onDelete,
}: {
  db: string;
  field: string;
  path: MemberPath;
  name: string;
  value: Value;
  members: MemberActions;
  onEdit?: () => void;
  onDelete?: () => void;
}) {
  const depth = path.length;
  const label = memberLabel(field, path);
  const t = typeOf(value);
  const children: [string | number, Value][] =
    t === 'map'
      ? Object.entries((value as { mapValue: { fields?: Fields } }).mapValue.fields ?? {}).sort(([a], [b]) =>
          a.localeCompare(b),
        )
      : t === 'array'
        ? ((value as { arrayValue: { values?: Value[] } }).arrayValue.values ?? []).map((v, i) => [i, v])
        : [];
  const [open, setOpen] = useState(depth === 0 && children.length > 0 && children.length <= 8);
  const editing = members.editing;
  const here = editing && editing.field === field && samePath(editing.path, path);
  const inArray = path.some((p) => typeof p === 'number');
  const toast = useToast();
  const save = (m: MemberEditing) => async (key: string, v: Value | 'serverTimestamp', st: string[][]) => {
    try {
      await members.save(m, key, v, st);
    } catch (err) {
      toast({ tone: 'error', title: 'Could not save', description: messageOf(err) });
    }
  };
  if (here && !editing.adding && depth > 0) {
    const last = path.at(-1);
    return (
      <li>
        <FieldEditor
          db={db}
          name={String(last)}
          value={value}
          title={`Edit ${label}`}
          path={label}
          nameLabel="Key"
          nameFixed={typeof last === 'number'}
          noServerTime={inArray}
          onCancel={members.cancel}
          onSave={save(editing)}
        />
      </li>
    );
  }
  const adding = here && editing.adding;
  return (
    <li data-field={depth === 0 ? name : undefined}>
      {/* On phones the value takes a line of its own; from sm the actions float over the row's end on hover. */}
      <div
        className="group relative flex flex-wrap items-start gap-x-2 gap-y-0.5 px-3 py-1 hover:bg-zinc-800/40 sm:flex-nowrap"
        style={{ paddingLeft: 12 + depth * 16 }}
      >
        {children.length > 0 ? (
          <button
            type="button"
            aria-label={open ? `Collapse ${label}` : `Expand ${label}`}
            onClick={() => setOpen((o) => !o)}
            className="mt-0.5 text-zinc-400 hover:text-zinc-200"
          >
            {open ? <ChevronDown className="size-3.5" /> : <ChevronRight className="size-3.5" />}
          </button>
        ) : (
          <span className="w-3.5 shrink-0" />
        )}
        <span
          className="min-w-0 flex-1 truncate font-mono text-xs text-zinc-400 sm:w-28 sm:flex-none sm:shrink-0"
          title={label}
        >
          {name}
        </span>
        <span
          className="order-last min-w-0 basis-full pl-5.5 font-mono text-xs [overflow-wrap:anywhere] whitespace-pre-wrap text-zinc-100 empty:hidden sm:order-none sm:empty:block sm:flex-1 sm:basis-auto sm:pl-0"
          data-value
        >
          {t === 'reference' ? (
            <span className="text-brand-300">
              /{referencePath((value as { referenceValue: string }).referenceValue)}
            </span>
          ) : t === 'vector' ? (
            <span title={preview(value)}>
              [
              {vectorOf(value)
                ?.map((x) => +x.toFixed(4))
                .join(', ')}
              ]
            </span>
          ) : (t === 'map' || t === 'array') && open ? (
            ''
          ) : (
            preview(value)
          )}
        </span>
        <Badge tone={typeTone[t]} className="mt-0.5">
          {t}
        </Badge>
        <span className="flex gap-0.5 transition sm:absolute sm:top-0.5 sm:right-2 sm:rounded-md sm:bg-zinc-900 sm:opacity-0 sm:shadow sm:group-focus-within:opacity-100 sm:group-hover:opacity-100">
          {(t === 'map' || t === 'array') && (
            <IconButton
              label={t === 'map' ? `Add key to ${label}` : `Add element to ${label}`}
              onClick={() => {
                setOpen(true);
                members.start({ field, path, adding: true });
              }}
              className="size-6"
            >
              <Plus className="size-3.5" />
            </IconButton>
          )}
          <IconButton
            label={`Edit ${label}`}
            onClick={onEdit ?? (() => members.start({ field, path, adding: false }))}
            className="size-6"
          >
            <Pencil className="size-3.5" />
          </IconButton>
          <IconButton
            label={`Delete ${label}`}
            onClick={onDelete ?? (() => void members.remove(field, path))}
            className="size-6 hover:text-red-300"
          >
            <Trash2 className="size-3.5" />
          </IconButton>
        </span>
      </div>
      {(open || adding) && (
        <ul>
          {open &&
            children.map(([k, v]) => (
              <FieldRow
                key={k}
                db={db}
                field={field}
                path={[...path, k]}
                name={String(k)}
                value={v}
                members={members}
              />
            ))}
          {adding && (
            <li>
              <FieldEditor
                db={db}
                name={t === 'array' ? String(children.length) : undefined}
                title={t === 'map' ? `New key in ${label}` : `New element of ${label}`}
                path={t === 'map' ? `${label}.…` : `${label}[${children.length}]`}
                nameLabel="Key"
                nameFixed={t === 'array'}
                noServerTime={inArray || t === 'array'}
                onCancel={members.cancel}
                onSave={save(editing)}
              />
            </li>
          )}
        </ul>
      )}
    </li>
  );
}
