/** Firestore values in the REST API's JSON form, and how the console shows and edits them. */

export type Value =
  | { nullValue: null }
  | { booleanValue: boolean }
  | { integerValue: string }
  | { doubleValue: number | string }
  | { timestampValue: string }
  | { stringValue: string }
  | { bytesValue: string }
  | { referenceValue: string }
  | { geoPointValue: { latitude?: number; longitude?: number } }
  | { arrayValue: { values?: Value[] } }
  | { mapValue: { fields?: Record<string, Value> } };

export type Fields = Record<string, Value>;

/** A document as the REST API returns it. */
export type Doc = { name: string; fields?: Fields; createTime?: string; updateTime?: string };

export const valueTypes = [
  'string',
  'integer',
  'double',
  'boolean',
  'null',
  'timestamp',
  'serverTimestamp',
  'geopoint',
  'reference',
  'bytes',
  'map',
  'array',
  'vector',
] as const;

export type ValueType = (typeof valueTypes)[number];

export const typeLabels: Record<ValueType, string> = {
  string: 'string',
  integer: 'integer',
  double: 'double',
  boolean: 'boolean',
  null: 'null',
  timestamp: 'timestamp',
  serverTimestamp: 'server timestamp',
  geopoint: 'geopoint',
  reference: 'reference',
  bytes: 'bytes',
  map: 'map',
  array: 'array',
  vector: 'vector',
};

/** The vector a map value encodes ({__type__: "__vector__", value: [doubles]}), or null. */
export function vectorOf(v: Value): number[] | null {
  if (!('mapValue' in v)) return null;
  const f = v.mapValue.fields ?? {};
  const t = f.__type__;
  const arr = f.value;
  if (!t || !('stringValue' in t) || t.stringValue !== '__vector__' || !arr || !('arrayValue' in arr))
    return null;
  return (arr.arrayValue.values ?? []).map((x) => Number(scalar(x)));
}

export function typeOf(v: Value): Exclude<ValueType, 'serverTimestamp'> {
  if ('nullValue' in v) return 'null';
  if ('booleanValue' in v) return 'boolean';
  if ('integerValue' in v) return 'integer';
  if ('doubleValue' in v) return 'double';
  if ('timestampValue' in v) return 'timestamp';
  if ('stringValue' in v) return 'string';
  if ('bytesValue' in v) return 'bytes';
  if ('referenceValue' in v) return 'reference';
  if ('geoPointValue' in v) return 'geopoint';
  if ('arrayValue' in v) return 'array';
  return vectorOf(v) ? 'vector' : 'map';
}

function scalar(v: Value): string | number | boolean | null {
  if ('integerValue' in v) return Number(v.integerValue);
  if ('doubleValue' in v) return typeof v.doubleValue === 'string' ? Number(v.doubleValue) : v.doubleValue;
  if ('stringValue' in v) return v.stringValue;
  if ('booleanValue' in v) return v.booleanValue;
  return null;
}

/** The document path of a reference value (without projects/…/documents/). */
export function referencePath(name: string): string {
  const i = name.indexOf('/documents/');
  return i < 0 ? name : name.slice(i + '/documents/'.length);
}

/** A geopoint as people read one: 33.87° S, 151.21° W. */
export function geoText(g: { latitude?: number; longitude?: number }): string {
  const lat = g.latitude ?? 0;
  const lng = g.longitude ?? 0;
  return `${Math.abs(lat)}° ${lat < 0 ? 'S' : 'N'}, ${Math.abs(lng)}° ${lng < 0 ? 'W' : 'E'}`;
}

/** A one-line rendering of a value. */
export function preview(v: Value): string {
  switch (typeOf(v)) {
    case 'null':
      return 'null';
    case 'string':
      return JSON.stringify((v as { stringValue: string }).stringValue);
    case 'timestamp':
      return new Date((v as { timestampValue: string }).timestampValue).toISOString();
    case 'reference':
      return '/' + referencePath((v as { referenceValue: string }).referenceValue);
    case 'geopoint':
      return geoText((v as { geoPointValue: { latitude?: number; longitude?: number } }).geoPointValue);
    case 'integer':
      // Exactly: an int64 above 2^53 would round as a JavaScript number.
      return (v as { integerValue: string }).integerValue;
    case 'bytes':
      return `bytes(${(v as { bytesValue: string }).bytesValue})`;
    case 'vector':
      return `vector(${vectorOf(v)?.join(', ')})`;
    case 'array':
      return `[${((v as { arrayValue: { values?: Value[] } }).arrayValue.values ?? []).map(preview).join(', ')}]`;
    case 'map': {
      const f = (v as { mapValue: { fields?: Fields } }).mapValue.fields ?? {};
      return `{${Object.keys(f)
        .sort()
        .map((k) => `${k}: ${preview(f[k] as Value)}`)
        .join(', ')}}`;
    }
    default:
      return String(scalar(v));
  }
}

/**
 * The text a scalar editor of type t starts with for value v (converted where
 * it can be); maps and arrays are edited member by member (see Draft).
 */
export function editText(v: Value | undefined, t: ValueType): string {
  if (t === 'map' || t === 'array') return '';
  if (!v) return t === 'timestamp' ? new Date().toISOString() : '';
  const from = typeOf(v);
  if (t === 'vector') return from === 'vector' ? (vectorOf(v) ?? []).join(', ') : '';
  if (t === 'geopoint') {
    const g =
      from === 'geopoint'
        ? (v as { geoPointValue: { latitude?: number; longitude?: number } }).geoPointValue
        : {};
    return `${g.latitude ?? 0}, ${g.longitude ?? 0}`;
  }
  if (t === 'timestamp')
    return from === 'timestamp' ? (v as { timestampValue: string }).timestampValue : new Date().toISOString();
  if (t === 'reference')
    return from === 'reference' ? referencePath((v as { referenceValue: string }).referenceValue) : '';
  if (t === 'bytes') return from === 'bytes' ? (v as { bytesValue: string }).bytesValue : '';
  // Integers keep all 64 bits: they are text in the API and would round as numbers.
  if ('integerValue' in v && (t === 'integer' || t === 'string' || t === 'double')) return v.integerValue;
  const s = scalar(v);
  if (t === 'boolean') return s === true || s === 'true' ? 'true' : 'false';
  if (s === null) return '';
  return String(s);
}

/**
 * The value a scalar editor's text means for type t; throws with a message
 * saying what is wrong. serverTimestamp has no value (it is a transform).
 */
export function parseValue(t: ValueType, text: string, database: string): Value {
  const s = text.trim();
  switch (t) {
    case 'string':
      return { stringValue: text };
    case 'integer':
      if (!/^-?\d+$/.test(s)) throw new Error('An integer is whole digits, e.g. 42.');
      if (BigInt(s) > 9223372036854775807n || BigInt(s) < -9223372036854775808n)
        throw new Error('Out of the 64-bit range.');
      return { integerValue: s };
    case 'double': {
      if (s === 'NaN' || s === 'Infinity' || s === '-Infinity') return { doubleValue: s };
      const n = Number(s);
      if (s === '' || Number.isNaN(n)) throw new Error('A double is a number, e.g. 3.14 (or NaN, Infinity).');
      return { doubleValue: n };
    }
    case 'boolean':
      return { booleanValue: s === 'true' };
    case 'null':
      return { nullValue: null };
    case 'timestamp': {
      const d = new Date(s);
      if (Number.isNaN(d.getTime()))
        throw new Error('A timestamp is a date and time, e.g. 2026-01-31T12:00:00Z.');
      return { timestampValue: /\.\d{4,}/.test(s) || s.endsWith('Z') ? s : d.toISOString() };
    }
    case 'geopoint': {
      const [lat, lng, ...rest] = s.split(',').map((x) => Number(x.trim()));
      if (
        lat === undefined ||
        lng === undefined ||
        rest.length ||
        Number.isNaN(lat) ||
        Number.isNaN(lng) ||
        Math.abs(lat) > 90 ||
        Math.abs(lng) > 180
      )
        throw new Error('A geopoint is latitude, longitude, e.g. 48.85, 2.35.');
      return { geoPointValue: { latitude: lat, longitude: lng } };
    }
    case 'reference': {
      const path = s.replace(/^\/+|\/+$/g, '');
      if (!path || path.split('/').length % 2 !== 0)
        throw new Error('A reference is a document path, e.g. users/alice.');
      return { referenceValue: `${database}/documents/${path}` };
    }
    case 'bytes':
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new Error('Bytes are given in base64.');
      return { bytesValue: s };
    case 'map':
    case 'array':
      throw new Error('Maps and arrays are edited member by member (see Draft).');
    case 'vector': {
      const nums = s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
        .map(Number);
      if (!nums.length || nums.some((n) => Number.isNaN(n)))
        throw new Error('A vector is numbers separated by commas.');
      return {
        mapValue: {
          fields: {
            __type__: { stringValue: '__vector__' },
            value: { arrayValue: { values: nums.map((n) => ({ doubleValue: n })) } },
          },
        },
      };
    }
    case 'serverTimestamp':
      throw new Error('A server timestamp is set by the server.');
  }
}

/** A field name as a field path segment: backquoted unless it is a simple identifier. */
export function fieldPath(name: string): string {
  return /^[A-Za-z_][A-Za-z_0-9]*$/.test(name)
    ? name
    : '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`';
}

/**
 * What a value editor holds: a type and, for scalars, the text typed; for
 * maps and arrays, their members, each edited with the same editor.
 */
export type Draft = { type: ValueType; text: string; members: Member[] };

/** A map entry (key) or array element (key unused) in a Draft; id keys it in lists. */
export type Member = { id: number; key: string; draft: Draft };

/** The types an array element can take: any but a server timestamp, which Firestore sets only in maps. */
export const elementTypes = valueTypes.filter((t) => t !== 'serverTimestamp');

let lastMemberId = 0;

/** A member holding draft, with a fresh id. */
export function member(key: string, draft: Draft): Member {
  return { id: ++lastMemberId, key, draft };
}

/** The draft an editor starts with for v, as type t (v's own type by default). */
export function toDraft(v: Value | undefined, t: ValueType = v ? typeOf(v) : 'string'): Draft {
  const draft: Draft = { type: t, text: '', members: [] };
  if (t === 'map' && v && 'mapValue' in v && typeOf(v) === 'map')
    draft.members = Object.keys(v.mapValue.fields ?? {})
      .sort()
      .map((k) => member(k, toDraft((v.mapValue.fields ?? {})[k])));
  else if (t === 'array' && v && 'arrayValue' in v)
    draft.members = (v.arrayValue.values ?? []).map((x, i) => member(String(i), toDraft(x)));
  else draft.text = editText(v, t);
  return draft;
}

/**
 * The draft d turned into type t, keeping what still reads as t: map and
 * array members carry over (array indexes become keys), a scalar becomes an
 * array's one element, and a scalar's text is kept or converted.
 */
export function retype(d: Draft, t: ValueType, database: string): Draft {
  if (t === d.type) return d;
  const container = d.type === 'map' || d.type === 'array';
  if (t === 'map' || t === 'array') {
    if (container)
      return {
        type: t,
        text: '',
        members: d.members.map((m, i) => (t === 'map' && d.type === 'array' ? { ...m, key: String(i) } : m)),
      };
    return {
      type: t,
      text: '',
      members: t === 'array' && d.type !== 'serverTimestamp' && d.text.trim() ? [member('0', d)] : [],
    };
  }
  if (!container && d.type !== 'serverTimestamp') {
    try {
      parseValue(t, d.text, database);
      return { type: t, text: d.text, members: [] };
    } catch {
      // Not readable as t: convert the value instead.
    }
  }
  let v: Value | undefined;
  try {
    v = fromDraft(d, database);
  } catch {
    v = undefined;
  }
  return { type: t, text: editText(v, t), members: [] };
}

/**
 * The Firestore value a draft means, leaving out map members that are server
 * timestamps (see serverTimePaths); throws saying where and what is wrong (an
 * empty or repeated key, an array directly in an array, a server timestamp
 * in an array or below one (inArray), a bad scalar).
 */
export function fromDraft(d: Draft, database: string, where = '', inArray = false): Value {
  const at = (msg: string) => new Error(where ? `${where}: ${msg}` : msg);
  const noStamp = 'A server timestamp cannot be in an array.';
  if (d.type === 'map') {
    const fields: Fields = {};
    const seen = new Set<string>();
    for (const m of d.members) {
      if (!m.key) throw at('A map key is empty.');
      if (seen.has(m.key)) throw at(`The key “${m.key}” is there twice.`);
      seen.add(m.key);
      const w = where ? `${where}.${m.key}` : m.key;
      if (m.draft.type === 'serverTimestamp') {
        // A transform's path cannot pass through an array.
        if (inArray) throw new Error(`${w}: ${noStamp}`);
        continue;
      }
      fields[m.key] = fromDraft(m.draft, database, w, inArray);
    }
    return { mapValue: { fields } };
  }
  if (d.type === 'array') {
    return {
      arrayValue: {
        values: d.members.map((m, i) => {
          const w = `${where}[${i}]`;
          if (m.draft.type === 'array')
            throw new Error(`${w}: An array cannot hold an array directly; put it in a map.`);
          if (m.draft.type === 'serverTimestamp') throw new Error(`${w}: ${noStamp}`);
          return fromDraft(m.draft, database, w, true);
        }),
      },
    };
  }
  try {
    return parseValue(d.type, d.text, database);
  } catch (err) {
    throw at(err instanceof Error ? err.message : String(err));
  }
}

/** The segments of a field path (a.b, `odd.name`.c); backquotes quote, backslash escapes inside them. */
export function pathSegments(path: string): string[] {
  const segs: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (quoted && c === '\\' && i + 1 < path.length) cur += path[++i];
    else if (c === '`') quoted = !quoted;
    else if (c === '.' && !quoted) {
      segs.push(cur);
      cur = '';
    } else cur += c;
  }
  segs.push(cur);
  return segs;
}

/** The value at a field path of a document's fields, or undefined when it has none. */
export function valueAt(fields: Fields, path: string): Value | undefined {
  let v: Value | undefined = { mapValue: { fields } };
  for (const seg of pathSegments(path)) {
    if (!v || !('mapValue' in v)) return undefined;
    v = v.mapValue.fields?.[seg];
  }
  return v;
}

/** Orders field paths segment by segment, as Firestore orders them. */
export function compareFieldPaths(a: string, b: string): number {
  const x = pathSegments(a);
  const y = pathSegments(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const xi = x[i] as string;
    const yi = y[i] as string;
    if (xi !== yi) return xi < yi ? -1 : 1;
  }
  return x.length - y.length;
}

/** The paths (as segments) of a map draft's members, at any depth of maps, that are server timestamps. */
export function serverTimePaths(d: Draft): string[][] {
  if (d.type !== 'map') return [];
  return d.members.flatMap((m) =>
    m.draft.type === 'serverTimestamp' ? [[m.key]] : serverTimePaths(m.draft).map((rest) => [m.key, ...rest]),
  );
}

/** Where a member sits in a field's value: map keys and array indexes, outermost first. */
export type MemberPath = (string | number)[];

/** How a member is named to people: meta.note, tags[0]. */
export function memberLabel(field: string, path: MemberPath): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : `${s}.${p}`), field);
}

/**
 * v with the member at path set to next, or removed when next is undefined
 * (an array closes the gap); v itself is left as it was. Throws when the
 * path does not lead through maps and arrays of v.
 */
export function withMember(v: Value, path: MemberPath, next: Value | undefined): Value {
  const [head, ...rest] = path;
  if (head === undefined) throw new Error('A member path is not empty.');
  const inner = (child: Value | undefined) => {
    if (!rest.length) return next;
    if (!child) throw new Error(`No member ${String(head)}.`);
    return withMember(child, rest, next);
  };
  if (typeof head === 'number') {
    if (!('arrayValue' in v)) throw new Error(`Not an array at ${head}.`);
    const values = [...(v.arrayValue.values ?? [])];
    const child = inner(values[head]);
    if (child) values[head] = child;
    else values.splice(head, 1);
    return { arrayValue: { values } };
  }
  if (!('mapValue' in v)) throw new Error(`Not a map at ${head}.`);
  const { [head]: old, ...others } = v.mapValue.fields ?? {};
  const child = inner(old);
  return { mapValue: { fields: child ? { ...others, [head]: child } : others } };
}

/** The member of v at path, or undefined when there is none. */
export function memberAt(v: Value, path: MemberPath): Value | undefined {
  let cur: Value | undefined = v;
  for (const p of path) {
    if (!cur) return undefined;
    if (typeof p === 'number') cur = 'arrayValue' in cur ? cur.arrayValue.values?.[p] : undefined;
    else cur = 'mapValue' in cur ? cur.mapValue.fields?.[p] : undefined;
  }
  return cur;
}

/** Whether two values are the same value (maps compared key by key, in any order). */
export function sameValue(a: Value | undefined, b: Value | undefined): boolean {
  if (!a || !b) return a === b;
  const ta = typeOf(a);
  if (ta !== typeOf(b)) return false;
  if (ta === 'map' || ta === 'vector') {
    const fa = (a as { mapValue: { fields?: Fields } }).mapValue.fields ?? {};
    const fb = (b as { mapValue: { fields?: Fields } }).mapValue.fields ?? {};
    const ka = Object.keys(fa);
    return ka.length === Object.keys(fb).length && ka.every((k) => sameValue(fa[k], fb[k]));
  }
  if (ta === 'array') {
    const va = (a as { arrayValue: { values?: Value[] } }).arrayValue.values ?? [];
    const vb = (b as { arrayValue: { values?: Value[] } }).arrayValue.values ?? [];
    return va.length === vb.length && va.every((x, i) => sameValue(x, vb[i]));
  }
  if (ta === 'timestamp')
    return (
      new Date((a as { timestampValue: string }).timestampValue).getTime() ===
        new Date((b as { timestampValue: string }).timestampValue).getTime() &&
      preciseNanos(a) === preciseNanos(b)
    );
  return JSON.stringify(a) === JSON.stringify(b);
}

const preciseNanos = (v: Value) =>
  /\.(\d+)/.exec((v as { timestampValue: string }).timestampValue)?.[1]?.padEnd(9, '0');

/**
 * What changed in a document's fields between two versions, as a sentence
 * naming the fields ("name and age changed, tags was added"), or '' when
 * none did (only the update time moved).
 */
export function fieldChanges(before: Fields, after: Fields): string {
  const changed: string[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  for (const k of Object.keys({ ...before, ...after }).sort()) {
    if (!(k in before)) added.push(k);
    else if (!(k in after)) removed.push(k);
    else if (!sameValue(before[k], after[k])) changed.push(k);
  }
  const list = (names: string[]) =>
    names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return [
    changed.length && `${list(changed)} changed`,
    added.length && `${list(added)} ${added.length > 1 ? 'were' : 'was'} added`,
    removed.length && `${list(removed)} ${removed.length > 1 ? 'were' : 'was'} deleted`,
  ]
    .filter(Boolean)
    .join(', ');
}
