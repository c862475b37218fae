import { useState } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { messageOf } from '../api/client';
import { Button, Input, Select, Textarea } from '../ui/controls';
import { editText, parseValue, typeLabels, typeOf, valueTypes, type Value, type ValueType } from './values';

/** Edits a field's name, type and value; a new field when name is absent. */
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
  onSave: (name: string, value: Value | 'serverTimestamp') => Promise<void>;
  onCancel: () => void;
}) {
  const [field, setField] = useState(name ?? '');
  const [type, setType] = useState<ValueType>(value ? typeOf(value) : 'string');
  const [text, setText] = useState(() => editText(value, value ? typeOf(value) : 'string'));
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const changeType = (t: ValueType) => {
    setType(t);
    // Keep what was typed when it still reads as the new type.
    try {
      parseValue(t, text, db);
    } catch {
      setText(editText(value, t));
    }
  };
  const multiline = type === 'map' || type === 'array' || (type === 'string' && text.includes('\n'));
  return (
    <form
      aria-label={name ? `Edit ${name}` : 'New field'}
      className="space-y-2 border-y border-brand-500/30 bg-brand-500/5 p-3"
      onSubmit={async (e) => {
        e.preventDefault();
        let v: Value | 'serverTimestamp';
        try {
          if (!field.trim()) throw new Error('The field needs a name.');
          v = type === 'serverTimestamp' ? 'serverTimestamp' : parseValue(type, text, db);
        } catch (err) {
          setError(messageOf(err));
          return;
        }
        setBusy(true);
        try {
          await onSave(field.trim(), v);
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
          className="h-8 flex-1 font-mono text-xs"
          autoFocus={!name}
        />
        <Select
          aria-label="Type"
          value={type}
          onChange={(e) => changeType(e.target.value as ValueType)}
          className="h-8 w-36 text-xs"
        >
          {valueTypes.map((t) => (
            <option key={t} value={t}>
              {typeLabels[t]}
            </option>
          ))}
        </Select>
      </div>
      <ValueInput type={type} text={text} setText={setText} multiline={multiline} />
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

function ValueInput({
  type,
  text,
  setText,
  multiline,
}: {
  type: ValueType;
  text: string;
  setText: (s: string) => void;
  multiline: boolean;
}) {
  const common = {
    'aria-label': 'Value',
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
          <Input {...common} className="h-8 flex-1 font-mono text-xs" placeholder="2026-01-31T12:00:00Z" />
          <Button size="sm" onClick={() => setText(new Date().toISOString())}>
            Now
          </Button>
        </div>
      );
    default:
      if (multiline) return <Textarea {...common} rows={type === 'string' ? 3 : 6} />;
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
