import { Plus, X } from 'lucide-react';
import { useState } from 'react';
import { Button, IconButton, Input, Select } from '../ui/controls';
import type { Filter, QuerySpec } from './api';
import { parseValue, type ValueType } from './values';

const ops: [string, string][] = [
  ['EQUAL', '=='],
  ['NOT_EQUAL', '!='],
  ['LESS_THAN', '<'],
  ['LESS_THAN_OR_EQUAL', '<='],
  ['GREATER_THAN', '>'],
  ['GREATER_THAN_OR_EQUAL', '>='],
  ['ARRAY_CONTAINS', 'array-contains'],
  ['IN', 'in'],
  ['NOT_IN', 'not-in'],
  ['ARRAY_CONTAINS_ANY', 'array-contains-any'],
  ['IS_NULL', 'is null'],
  ['IS_NOT_NULL', 'is not null'],
];

const filterTypes: ValueType[] = [
  'string',
  'integer',
  'double',
  'boolean',
  'null',
  'timestamp',
  'reference',
  'array',
];

type Row = { field: string; op: string; type: ValueType; text: string };

/** Filters (all or any of them), an order and a page size for a collection query. */
export function QueryForm({
  db,
  onRun,
  onClear,
  active,
}: {
  db: string;
  onRun: (q: QuerySpec) => void;
  onClear: () => void;
  active: boolean;
}) {
  const [rows, setRows] = useState<Row[]>([{ field: '', op: 'EQUAL', type: 'string', text: '' }]);
  const [combine, setCombine] = useState<'AND' | 'OR'>('AND');
  const [orderField, setOrderField] = useState('');
  const [direction, setDirection] = useState<'ASCENDING' | 'DESCENDING'>('ASCENDING');
  const [limit, setLimit] = useState('50');
  const [error, setError] = useState('');
  const set = (i: number, patch: Partial<Row>) =>
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <form
      aria-label="Query"
      className="space-y-2 border-b border-zinc-800 bg-zinc-950/40 p-3"
      onSubmit={(e) => {
        e.preventDefault();
        try {
          const filters: Filter[] = rows
            .filter((r) => r.field.trim())
            .map((r) => ({
              field: r.field.trim(),
              op: r.op,
              value: r.op.startsWith('IS_') ? { nullValue: null } : parseValue(r.type, r.text, db),
            }));
          const n = Number(limit);
          if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error('The limit is 1 to 1000.');
          setError('');
          onRun({
            filters,
            combine,
            orderBy: orderField.trim() ? { field: orderField.trim(), direction } : undefined,
            limit: n,
          });
        } catch (err) {
          setError(err instanceof Error ? err.message : String(err));
        }
      }}
    >
      {rows.length > 1 && (
        <label className="flex items-center gap-1.5 text-xs text-zinc-400">
          Documents matching
          <Select
            aria-label="Combine filters"
            value={combine}
            onChange={(e) => setCombine(e.target.value as 'AND' | 'OR')}
            className="h-7 w-auto text-xs"
          >
            <option value="AND">all filters (and)</option>
            <option value="OR">any filter (or)</option>
          </Select>
        </label>
      )}
      {rows.map((r, i) => (
        <div key={i} className="flex flex-wrap gap-1.5">
          <Input
            aria-label="Filter field"
            placeholder="field"
            value={r.field}
            onChange={(e) => set(i, { field: e.target.value })}
            className="h-7 min-w-24 flex-1 text-xs"
          />
          <Select
            aria-label="Operator"
            value={r.op}
            onChange={(e) => set(i, { op: e.target.value })}
            className="h-7 w-auto text-xs"
          >
            {ops.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </Select>
          {!r.op.startsWith('IS_') && (
            <>
              <Select
                aria-label="Value type"
                value={r.type}
                onChange={(e) => set(i, { type: e.target.value as ValueType })}
                className="h-7 w-auto text-xs"
              >
                {filterTypes.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </Select>
              <Input
                aria-label="Filter value"
                placeholder={r.type === 'array' ? '["a", 2]' : 'value'}
                value={r.text}
                onChange={(e) => set(i, { text: e.target.value })}
                className="h-7 min-w-24 flex-1 text-xs"
              />
            </>
          )}
          <IconButton label="Remove filter" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>
            <X className="size-3.5" />
          </IconButton>
        </div>
      ))}
      <div className="flex flex-wrap items-center gap-1.5">
        <Button
          size="sm"
          variant="ghost"
          icon={<Plus className="size-3.5" />}
          onClick={() => setRows((rs) => [...rs, { field: '', op: 'EQUAL', type: 'string', text: '' }])}
        >
          Filter
        </Button>
        <span className="ml-auto text-xs text-zinc-400">order by</span>
        <Input
          aria-label="Order by field"
          placeholder="field"
          value={orderField}
          onChange={(e) => setOrderField(e.target.value)}
          className="h-7 w-28 text-xs"
        />
        <Select
          aria-label="Direction"
          value={direction}
          onChange={(e) => setDirection(e.target.value as 'ASCENDING' | 'DESCENDING')}
          className="h-7 w-auto text-xs"
        >
          <option value="ASCENDING">asc</option>
          <option value="DESCENDING">desc</option>
        </Select>
        <span className="text-xs text-zinc-400">limit</span>
        <Input
          aria-label="Limit"
          value={limit}
          onChange={(e) => setLimit(e.target.value)}
          className="h-7 w-16 text-xs"
          inputMode="numeric"
        />
      </div>
      {error && <p className="text-xs text-red-300">{error}</p>}
      <div className="flex justify-end gap-2">
        {active && (
          <Button size="sm" variant="ghost" onClick={onClear}>
            Clear query
          </Button>
        )}
        <Button size="sm" variant="primary" type="submit">
          Run
        </Button>
      </div>
    </form>
  );
}
