import { useEffect, useRef, useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { messageOf } from '../api/client';
import { Button } from '@/components/ui/button';
import { Input } from '@/components/ui/input';
import { DraftInput, TypeSelect } from './value-editor';
import {
  elementTypes,
  fromDraft,
  retype,
  serverTimePaths,
  toDraft,
  valueTypes,
  type Draft,
  type Value,
} from './values';

/**
 * Edits a field's name, type and value; a new field when name is absent.
 * Maps and arrays are edited member by member, each with the same typed editor.
 * For one member of a field the caller names it (title, path, nameLabel "Key"),
 * fixes an array element's name, and rules out server timestamps under arrays.
 */
export function FieldEditor({
  db,
  name,
  value,
  title,
  path,
  nameLabel = 'Field name',
  nameFixed,
  noServerTime,
  onSave,
  onCancel,
}: {
  db: string;
  name?: string;
  value?: Value;
  /** The form's accessible name: "Edit {name}" or "New field" by default. */
  title?: string;
  /** How the value is named in its editors' labels: the name by default. */
  path?: string;
  nameLabel?: string;
  nameFixed?: boolean;
  noServerTime?: boolean;
  /** serverTimes: the paths under the field (as segments) set to the server's time. */
  onSave: (name: string, value: Value | 'serverTimestamp', serverTimes: string[][]) => Promise<void>;
  onCancel: () => void;
}) {
  const [field, setField] = useState(name ?? '');
  const [draft, setDraft] = useState<Draft>(() => toDraft(value));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const valueBox = useRef<HTMLDivElement>(null);
  // Editing a field puts the cursor in its value (a new field's name input
  // takes it itself).
  useEffect(() => {
    if (name !== undefined)
      valueBox.current?.querySelector<HTMLElement>('input, textarea, select, button')?.focus();
    // Only when the form opens.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <form
      aria-label={title ?? (name ? `Edit ${name}` : 'New field')}
      className="space-y-2 border-y border-brand-500/30 bg-brand-500/5 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        let v: Value | 'serverTimestamp';
        try {
          if (!field.trim()) throw new Error(`${nameLabel} is empty.`);
          v =
            draft.type === 'serverTimestamp'
              ? 'serverTimestamp'
              : fromDraft(draft, db, path ?? field.trim(), noServerTime);
        } catch (err) {
          setError(messageOf(err));
          return;
        }
        setError('');
        setBusy(true);
        try {
          await onSave(field.trim(), v, serverTimePaths(draft));
        } catch (err) {
          toast({ tone: 'error', title: 'Could not save the field', description: messageOf(err) });
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="flex gap-2">
        {nameFixed ? (
          <span className="min-w-0 flex-1 self-center font-mono text-xs text-zinc-400">{name}</span>
        ) : (
          <Input
            aria-label={nameLabel}
            placeholder={nameLabel === 'Key' ? 'key' : 'field'}
            value={field}
            onChange={(e) => setField(e.target.value)}
            className="h-8 min-w-0 flex-1 font-mono text-xs"
            autoFocus={!name}
          />
        )}
        <TypeSelect
          label="Type"
          types={noServerTime ? elementTypes : valueTypes}
          value={draft.type}
          onChange={(t) => setDraft((d) => retype(d, t, db))}
        />
      </div>
      <div ref={valueBox}>
        <DraftInput
          db={db}
          path={path ?? (field.trim() || 'field')}
          draft={draft}
          onChange={setDraft}
          label="Value"
          noServerTime={noServerTime}
        />
      </div>
      {error && <p className="text-xs text-red-300">{error}</p>}
      <div className="flex justify-end gap-2">
        <Button size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
        <Button size="sm" variant="primary" type="submit" disabled={busy}>
          Save
        </Button>
      </div>
    </form>
  );
}
