import { ChevronDown, ChevronRight, FileText, Pencil, Plus, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { messageOf } from '../api/client';
import { Badge, Empty, IconButton, Panel } from '../ui/controls';
import { useConfirmed } from '../ui/confirm';
import { ago } from '../ui/format';
import { deleteField, deleteTree, getDoc, setField } from './api';
import { CollectionsPanel } from './collections-panel';
import { FieldEditor } from './field-editor';
import { useLiveLoad } from './use-live-load';
import { preview, referencePath, typeOf, vectorOf, type Fields, type Value } from './values';

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
  onOpen: (id: string) => void;
  onDeleted: () => void;
  className?: string;
}) {
  const name = `${db}/documents/${docPath}`;
  const { data: doc, error } = useLiveLoad(
    () => getDoc(db, docPath),
    (p) => p === name,
    [db, docPath],
  );
  const [editing, setEditing] = useState<string | null>(null); // field name, or '' for a new field
  const toast = useToast();
  const confirmed = useConfirmed();
  const fields = doc?.fields ?? {};
  const names = Object.keys(fields).sort();
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
            onClick={async () => {
              await confirmed(
                {
                  title: `Delete ${docPath}?`,
                  body: 'The document and its subcollections are deleted.',
                  action: 'Delete document',
                  danger: true,
                },
                async () => {
                  await deleteTree(db, docPath);
                  onDeleted();
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
            onSave={async (field, value, serverTimes) => {
              await setField(db, docPath, field, value, serverTimes);
              setEditing(null);
            }}
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
                  onSave={async (field, value, serverTimes) => {
                    await setField(db, docPath, field, value, serverTimes, f);
                    setEditing(null);
                  }}
                />
              </li>
            ) : (
              <FieldRow
                key={f}
                name={f}
                value={fields[f] as Value}
                onEdit={() => setEditing(f)}
                onDelete={async () => {
                  try {
                    await deleteField(db, docPath, f);
                  } catch (err) {
                    toast({ title: 'Could not delete the field', description: messageOf(err) });
                  }
                }}
              />
            ),
          )}
        </ul>
        <div className="border-t border-zinc-800">
          <CollectionsPanel
            embedded
            db={db}
            docPath={docPath}
            selected={selected}
            onOpen={(p) => onOpen(p.split('/').at(-1) ?? '')}
          />
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

/** A field: its name, its value and its type; maps and arrays open to their members. */
function FieldRow({
  name,
  value,
  onEdit,
  onDelete,
  depth = 0,
}: {
  name: string;
  value: Value;
  onEdit?: () => void;
  onDelete?: () => void;
  depth?: number;
}) {
  const t = typeOf(value);
  const children: [string, Value][] =
    t === 'map'
      ? Object.entries((value as { mapValue: { fields?: Fields } }).mapValue.fields ?? {}).sort(([a], [b]) =>
          a.localeCompare(b),
        )
      : t === 'array'
        ? ((value as { arrayValue: { values?: Value[] } }).arrayValue.values ?? []).map((v, i) => [
            String(i),
            v,
          ])
        : [];
  const [open, setOpen] = useState(depth === 0 && children.length > 0 && children.length <= 8);
  return (
    <li data-field={depth === 0 ? name : undefined}>
      <div
        className="group flex items-start gap-2 px-3 py-1 hover:bg-zinc-800/40"
        style={{ paddingLeft: 12 + depth * 16 }}
      >
        {children.length > 0 ? (
          <button
            type="button"
            aria-label={open ? `Collapse ${name}` : `Expand ${name}`}
            onClick={() => setOpen((o) => !o)}
            className="mt-0.5 text-zinc-400 hover:text-zinc-200"
          >
            {open ? <ChevronDown className="size-3.5" /> : <ChevronRight className="size-3.5" />}
          </button>
        ) : (
          <span className="w-3.5 shrink-0" />
        )}
        <span className="w-28 shrink-0 truncate font-mono text-xs text-zinc-400 sm:w-36" title={name}>
          {name}
        </span>
        <span
          className="min-w-0 flex-1 font-mono text-xs [overflow-wrap:anywhere] whitespace-pre-wrap text-zinc-100"
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
        {onEdit && (
          <span className="flex gap-0.5 opacity-100 transition sm:opacity-0 sm:group-focus-within:opacity-100 sm:group-hover:opacity-100">
            <IconButton label={`Edit ${name}`} onClick={onEdit} className="size-6">
              <Pencil className="size-3.5" />
            </IconButton>
            <IconButton label={`Delete ${name}`} onClick={onDelete} className="size-6 hover:text-red-300">
              <Trash2 className="size-3.5" />
            </IconButton>
          </span>
        )}
      </div>
      {open && (
        <ul>
          {children.map(([k, v]) => (
            <FieldRow key={k} name={k} value={v} depth={depth + 1} />
          ))}
        </ul>
      )}
    </li>
  );
}
