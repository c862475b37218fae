/** A value of a pipeline in REST's JSON: a constant, a field, a function call. */
export type PValue = Record<string, unknown>;

/** A pipeline stage as ExecutePipeline's REST form spells it. */
export type Stage = { name: string; args: PValue[] };

const field = (f: string): PValue => ({ fieldReferenceValue: f });
const call = (name: string, args: PValue[]): PValue => ({ functionValue: { name, args } });
const map = (fields: Record<string, PValue>): PValue => ({ mapValue: { fields } });
const int = (n: number): PValue => ({ integerValue: String(n) });

const comparisons: Record<string, string> = {
  '==': 'equal',
  '!=': 'not_equal',
  '<': 'less_than',
  '<=': 'less_than_or_equal',
  '>': 'greater_than',
  '>=': 'greater_than_or_equal',
};

const accumulators: Record<string, string> = {
  count: 'count',
  sum: 'sum',
  avg: 'average',
  min: 'minimum',
  max: 'maximum',
};

/** A constant typed as JSON: a number, "a string", true, false or null. */
function constant(text: string): PValue {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${text} is not a value: write a number, "a string", true, false or null.`);
  }
  if (v === null) return { nullValue: null };
  if (typeof v === 'boolean') return { booleanValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? int(v) : { doubleValue: v };
  throw new Error(`${text} is not a value: write a number, "a string", true, false or null.`);
}

const fields = (text: string) =>
  text
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);

function count(name: string, text: string): PValue {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name} takes a whole number, not ${text || 'nothing'}.`);
  return int(n);
}

/**
 * Parses the console's pipeline syntax, one stage a line after the
 * collection the panel shows:
 * `where FIELD OP VALUE` (== != < <= > >=), `sort FIELD [asc|desc], …`,
 * `limit N`, `offset N`, `select F, …`, `remove F, …`, `distinct F, …`,
 * `aggregate count(), sum(F), avg(F), min(F), max(F) [by F, …]`.
 * Blank lines and lines starting with # are skipped.
 */
export function parsePipeline(text: string): Stage[] {
  const stages: Stage[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const [, verb = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    try {
      stages.push(stage(verb.toLowerCase(), rest.trim()));
    } catch (err) {
      throw new Error(`Line ${i + 1}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  });
  return stages;
}

function stage(verb: string, rest: string): Stage {
  switch (verb) {
    case 'where': {
      const [, f = '', op = '', value = ''] = /^(\S+)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(rest) ?? [];
      const fn = comparisons[op];
      if (!fn) throw new Error('where takes FIELD OP VALUE, as in where rating >= 4.');
      return { name: 'where', args: [call(fn, [field(f), constant(value)])] };
    }
    case 'sort':
      return {
        name: 'sort',
        args: fields(rest).map((part) => {
          const [f = '', dir = 'asc'] = part.split(/\s+/);
          if (dir !== 'asc' && dir !== 'desc') throw new Error(`sort direction ${dir} is not asc or desc.`);
          return map({
            expression: field(f),
            direction: { stringValue: dir === 'asc' ? 'ascending' : 'descending' },
          });
        }),
      };
    case 'limit':
    case 'offset':
      return { name: verb, args: [count(verb, rest)] };
    case 'select':
    case 'distinct': {
      const fs = fields(rest);
      if (!fs.length) throw new Error(`${verb} takes at least one field.`);
      return { name: verb, args: [map(Object.fromEntries(fs.map((f) => [f, field(f)])))] };
    }
    case 'remove': {
      const fs = fields(rest);
      if (!fs.length) throw new Error('remove takes at least one field.');
      return { name: 'remove_fields', args: fs.map(field) };
    }
    case 'aggregate': {
      const [accText = '', byText = ''] = rest.split(/\s+by\s+/);
      const accs: Record<string, PValue> = {};
      for (const part of fields(accText)) {
        const [, acc = '', argText = ''] = /^(\w+)\(\s*([^)]*)\)$/.exec(part) ?? [];
        const fn = accumulators[acc];
        if (!fn) throw new Error(`${part} is not count(), sum(F), avg(F), min(F) or max(F).`);
        const arg = argText.trim();
        if (acc !== 'count' && !arg) throw new Error(`${acc}(…) takes a field.`);
        accs[arg ? `${acc}_${arg}` : acc] = call(fn, arg ? [field(arg)] : []);
      }
      if (!Object.keys(accs).length) throw new Error('aggregate takes at least one accumulator.');
      return {
        name: 'aggregate',
        args: [map(accs), map(Object.fromEntries(fields(byText).map((f) => [f, field(f)])))],
      };
    }
  }
  throw new Error(
    `${verb || 'an empty stage'} is not a stage: use where, sort, limit, offset, select, remove, distinct or aggregate.`,
  );
}

/** The stage that counts the rows before it. */
export const countStage: Stage = {
  name: 'aggregate',
  args: [map({ n: call('count', []) }), map({})],
};
