import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { messageOf } from '../api/client';
import { Button, Input } from '../ui/controls';
import { DraftInput, TypeSelect } from './value-editor';
import { fromDraft, retype, serverTimePaths, toDraft, valueTypes, type Draft, type Value } from './values';

/**
 * Edits a field's name, type and value; a new field when name is absent.
 * Maps and arrays are edited member by member, each with the same typed editor.
 */
export function FieldEditor({
  db,
  name,
  value,
  onSave,
  onCancel,
}: {
  db: string;
  name?: string;
  value?: Value;
  /** serverTimes: the paths under the field (as segments) set to the server's time. */
  onSave: (name: string, value: Value | 'serverTimestamp', serverTimes: string[][]) => Promise<void>;
  onCancel: () => void;
}) {
  const [field, setField] = useState(name ?? '');
  const [draft, setDraft] = useState<Draft>(() => toDraft(value));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  return (
    <form
      aria-label={name ? `Edit ${name}` : 'New field'}
      className="space-y-2 border-y border-brand-500/30 bg-brand-500/5 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        let v: Value | 'serverTimestamp';
        try {
          if (!field.trim()) throw new Error('The field needs a name.');
          v = draft.type === 'serverTimestamp' ? 'serverTimestamp' : fromDraft(draft, db, field.trim());
        } catch (err) {
          setError(messageOf(err));
          return;
        }
        setError('');
        setBusy(true);
        try {
          await onSave(field.trim(), v, serverTimePaths(draft));
        } catch (err) {
          toast({ title: 'Could not save the field', description: messageOf(err) });
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="flex gap-2">
        <Input
          aria-label="Field name"
          placeholder="field"
          value={field}
          onChange={(e) => setField(e.target.value)}
          className="h-8 min-w-0 flex-1 font-mono text-xs"
          autoFocus={!name}
        />
        <TypeSelect
          label="Type"
          types={valueTypes}
          value={draft.type}
          onChange={(t) => setDraft((d) => retype(d, t, db))}
        />
      </div>
      <DraftInput db={db} path={field.trim() || 'field'} draft={draft} onChange={setDraft} label="Value" />
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
