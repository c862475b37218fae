import { Plus, X } from 'lucide-react';
import { cn } from '@/lib/cn';
import { Button, IconButton } from '@/components/ui/button';
import { Input, Select, Textarea } from '@/components/ui/input';
import {
  elementTypes,
  member,
  retype,
  toDraft,
  typeLabels,
  valueTypes,
  type Draft,
  type ValueType,
} from './values';

/** A value type picker. */
export function TypeSelect({
  label,
  types,
  value,
  onChange,
  className = 'h-8 w-32 sm:w-36',
}: {
  label: string;
  types: readonly ValueType[];
  value: ValueType;
  onChange: (t: ValueType) => void;
  className?: string;
}) {
  return (
    <Select
      aria-label={label}
      value={value}
      onChange={(e) => onChange(e.target.value as ValueType)}
      className={cn('shrink-0 text-xs', className)}
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
 * the value in labels (meta.at, tags[0]); label, when given, names a scalar's
 * input instead.
 */
export function DraftInput({
  db,
  path,
  draft,
  onChange,
  label,
  noServerTime = false,
}: {
  db: string;
  path: string;
  draft: Draft;
  onChange: (update: (d: Draft) => Draft) => void;
  label?: string;
  /** No member may be a server timestamp: the draft is in an array (at any depth) or a query's value. */
  noServerTime?: boolean;
}) {
  if (draft.type !== 'map' && draft.type !== 'array')
    return (
      <ValueInput
        label={label ?? `Value of ${path}`}
        type={draft.type}
        text={draft.text}
        setText={(text) => onChange((d) => ({ ...d, text }))}
      />
    );
  const isMap = draft.type === 'map';
  const setMembers = (f: (ms: Draft['members']) => Draft['members']) =>
    onChange((d) => ({ ...d, members: f(d.members) }));
  return (
    <div className="space-y-1.5 border-l border-zinc-700/70 pl-2.5">
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
                types={isMap && !noServerTime ? valueTypes : elementTypes}
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
            <DraftInput
              db={db}
              path={at}
              draft={m.draft}
              onChange={setMember}
              noServerTime={noServerTime || !isMap}
            />
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
      if (type === 'string' && text.includes('\n'))
        return <Textarea className="font-mono text-xs leading-relaxed" {...common} rows={3} />;
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
