import { Plus, X } from 'lucide-react';
import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { messageOf } from '../api/client';
import { Button, IconButton, Input, Select, Textarea } from '../ui/controls';
import {
  elementTypes,
  fromDraft,
  member,
  retype,
  serverTimePaths,
  toDraft,
  typeLabels,
  valueTypes,
  type Draft,
  type Value,
  type ValueType,
} from './values';

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
      <DraftInput db={db} path={field.trim() || 'field'} draft={draft} onChange={setDraft} topLevel />
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

function TypeSelect({
  label,
  types,
  value,
  onChange,
}: {
  label: string;
  types: readonly ValueType[];
  value: ValueType;
  onChange: (t: ValueType) => void;
}) {
  return (
    <Select
      aria-label={label}
      value={value}
      onChange={(e) => onChange(e.target.value as ValueType)}
      className="h-8 w-32 shrink-0 text-xs sm:w-36"
    >
      {types.map((t) => (
        <option key={t} value={t}>
          {typeLabels[t]}
        </option>
      ))}
    </Select>
  );
}

/**
 * The editor of one draft: a scalar's input, or a map's entries (key, type,
 * value) and an array's elements, each a DraftInput of its own. path names
 * the value in labels (meta.at, tags[0]).
 */
function DraftInput({
  db,
  path,
  draft,
  onChange,
  topLevel,
}: {
  db: string;
  path: string;
  draft: Draft;
  onChange: (update: (d: Draft) => Draft) => void;
  topLevel?: boolean;
}) {
  if (draft.type !== 'map' && draft.type !== 'array')
    return (
      <ValueInput
        label={topLevel ? 'Value' : `Value of ${path}`}
        type={draft.type}
        text={draft.text}
        setText={(text) => onChange((d) => ({ ...d, text }))}
      />
    );
  const isMap = draft.type === 'map';
  const setMembers = (f: (ms: Draft['members']) => Draft['members']) =>
    onChange((d) => ({ ...d, members: f(d.members) }));
  return (
    <div className={cn('space-y-1.5', !topLevel && 'border-l border-zinc-700/70 pl-2.5')}>
      {draft.members.length === 0 && (
        <p className="text-xs text-zinc-400">{isMap ? 'An empty map.' : 'An empty array.'}</p>
      )}
      {draft.members.map((m, i) => {
        const at = isMap ? `${path}.${m.key}` : `${path}[${i}]`;
        const setMember = (f: (d: Draft) => Draft) =>
          setMembers((ms) => ms.map((x) => (x.id === m.id ? { ...x, draft: f(x.draft) } : x)));
        return (
          <div key={m.id} role="group" aria-label={at} className="space-y-1.5">
            <div className="flex items-center gap-1.5">
              {isMap ? (
                <Input
                  aria-label={`Key in ${path}`}
                  placeholder="key"
                  value={m.key}
                  onChange={(e) =>
                    setMembers((ms) => ms.map((x) => (x.id === m.id ? { ...x, key: e.target.value } : x)))
                  }
                  className="h-8 min-w-0 flex-1 font-mono text-xs"
                />
              ) : (
                <span className="min-w-0 flex-1 font-mono text-xs text-zinc-400">{i}</span>
              )}
              <TypeSelect
                label={`Type of ${at}`}
                types={isMap ? valueTypes : elementTypes}
                value={m.draft.type}
                onChange={(t) => setMember((d) => retype(d, t, db))}
              />
              <IconButton
                label={`Remove ${at}`}
                className="hover:text-red-300"
                onClick={() => setMembers((ms) => ms.filter((x) => x.id !== m.id))}
              >
                <X className="size-3.5" />
              </IconButton>
            </div>
            <DraftInput db={db} path={at} draft={m.draft} onChange={setMember} />
          </div>
        );
      })}
      <Button
        size="sm"
        variant="ghost"
        icon={<Plus className="size-3.5" />}
        onClick={() =>
          setMembers((ms) => [...ms, member(isMap ? '' : String(ms.length), toDraft(undefined))])
        }
      >
        {isMap ? `Add key to ${path}` : `Add element to ${path}`}
      </Button>
    </div>
  );
}

function ValueInput({
  label,
  type,
  text,
  setText,
}: {
  label: string;
  type: ValueType;
  text: string;
  setText: (s: string) => void;
}) {
  const common = {
    'aria-label': label,
    value: text,
    onChange: (e: { target: { value: string } }) => setText(e.target.value),
  };
  switch (type) {
    case 'null':
      return <p className="text-xs text-zinc-400">null has no value.</p>;
    case 'serverTimestamp':
      return <p className="text-xs text-zinc-400">Set to the server’s time when saved.</p>;
    case 'boolean':
      return (
        <Select {...common} className="h-8 text-xs">
          <option value="true">true</option>
          <option value="false">false</option>
        </Select>
      );
    case 'timestamp':
      return (
        <div className="flex gap-2">
          <Input
            {...common}
            className="h-8 min-w-0 flex-1 font-mono text-xs"
            placeholder="2026-01-31T12:00:00Z"
          />
          <Button size="sm" onClick={() => setText(new Date().toISOString())}>
            Now
          </Button>
        </div>
      );
    default:
      if (type === 'string' && text.includes('\n')) return <Textarea {...common} rows={3} />;
      return (
        <Input
          {...common}
          className="h-8 font-mono text-xs"
          inputMode={type === 'integer' || type === 'double' ? 'decimal' : undefined}
          placeholder={placeholders[type]}
        />
      );
  }
}

const placeholders: Partial<Record<ValueType, string>> = {
  string: 'text',
  integer: '42',
  double: '3.14',
  geopoint: 'latitude, longitude',
  reference: 'collection/document',
  bytes: 'base64',
  vector: '0.1, 0.2, 0.3',
};
