import { Plus, X } from 'lucide-react';
import { useState } from 'react';
import { Button, IconButton } from '@/components/ui/button';
import { Input, Select } from '@/components/ui/input';
import type { Filter, QuerySpec } from './api';
import { DraftInput, TypeSelect } from './value-editor';
import { elementTypes, fromDraft, retype, toDraft, type Draft } from './values';

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

/** Operators whose value is a list of values. */
const listOps = new Set(['IN', 'NOT_IN', 'ARRAY_CONTAINS_ANY']);

type Row = { field: string; op: string; draft: Draft };

const newRow = (): Row => ({ field: '', op: 'EQUAL', draft: toDraft(undefined) });

/** Filters (all or any of them), an order and a page size for a collection query. */
export function QueryForm({
  db,
  onRun,
  onClear,
  active,
  initial,
}: {
  db: string;
  /** The query the form starts from. */
  initial?: QuerySpec | null;
  onRun: (q: QuerySpec) => void;
  onClear: () => void;
  active: boolean;
}) {
  const [rows, setRows] = useState<Row[]>(() =>
    initial?.filters.length
      ? initial.filters.map((f) => ({
          field: f.field,
          op: f.op,
          draft: f.op.startsWith('IS_') ? toDraft(undefined) : toDraft(f.value),
        }))
      : [newRow()],
  );
  const [combine, setCombine] = useState<'AND' | 'OR'>(initial?.combine ?? 'AND');
  const [orderField, setOrderField] = useState(initial?.orderBy?.field ?? '');
  const [direction, setDirection] = useState<'ASCENDING' | 'DESCENDING'>(
    initial?.orderBy?.direction ?? 'ASCENDING',
  );
  const [limit, setLimit] = useState(String(initial?.limit ?? 50));
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
              value: r.op.startsWith('IS_')
                ? { nullValue: null }
                : fromDraft(r.draft, db, `The value of ${r.field.trim()}`),
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
      {rows.map((r, i) => {
        const container = r.draft.type === 'map' || r.draft.type === 'array';
        const value = (
          <DraftInput
            db={db}
            path={r.field.trim() || 'value'}
            draft={r.draft}
            onChange={(f) => set(i, { draft: f(r.draft) })}
            label="Filter value"
            noServerTime
          />
        );
        return (
          <div key={i} className="space-y-1.5">
            <div className="flex flex-wrap gap-1.5">
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
                onChange={(e) => {
                  const op = e.target.value;
                  // A list operator takes an array: the value typed so far becomes its first element.
                  set(i, { op, draft: listOps.has(op) ? retype(r.draft, 'array', db) : r.draft });
                }}
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
                  <TypeSelect
                    label="Value type"
                    types={elementTypes}
                    value={r.draft.type}
                    onChange={(t) => set(i, { draft: retype(r.draft, t, db) })}
                    className="h-7 w-auto"
                  />
                  {!container && <div className="min-w-24 flex-1">{value}</div>}
                </>
              )}
              <IconButton label="Remove filter" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>
                <X className="size-3.5" />
              </IconButton>
            </div>
            {!r.op.startsWith('IS_') && container && value}
          </div>
        );
      })}
      <div className="flex flex-wrap items-center gap-1.5">
        <Button
          size="sm"
          variant="ghost"
          icon={<Plus className="size-3.5" />}
          onClick={() => setRows((rs) => [...rs, newRow()])}
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
