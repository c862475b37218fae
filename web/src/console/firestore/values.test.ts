import {
  compareFieldPaths,
  editText,
  fieldPath,
  fromDraft,
  member,
  memberLabel,
  parseValue,
  preview,
  retype,
  serverTimePaths,
  toDraft,
  typeOf,
  valueAt,
  withMember,
  vectorOf,
  type Draft,
  type Value,
} from './values';

const db = 'projects/p/databases/(default)';

describe('console Firestore values', () => {
  it('reads every value type of the REST API, vectors included', () => {
    const cases: [Value, string][] = [
      [{ nullValue: null }, 'null'],
      [{ booleanValue: true }, 'boolean'],
      [{ integerValue: '9007199254740993' }, 'integer'],
      [{ doubleValue: 1.5 }, 'double'],
      [{ timestampValue: '2026-01-31T12:00:00.123456Z' }, 'timestamp'],
      [{ stringValue: 'x' }, 'string'],
      [{ bytesValue: 'AAE=' }, 'bytes'],
      [{ referenceValue: `${db}/documents/users/a` }, 'reference'],
      [{ geoPointValue: { latitude: 1, longitude: 2 } }, 'geopoint'],
      [{ arrayValue: { values: [{ integerValue: '1' }] } }, 'array'],
      [{ mapValue: { fields: { a: { stringValue: 'b' } } } }, 'map'],
      [
        {
          mapValue: {
            fields: {
              __type__: { stringValue: '__vector__' },
              value: { arrayValue: { values: [{ doubleValue: 0.5 }, { doubleValue: 1 }] } },
            },
          },
        },
        'vector',
      ],
    ];
    for (const [v, t] of cases) expect(typeOf(v)).toBe(t);
    expect(preview({ referenceValue: `${db}/documents/users/a` })).toBe('/users/a');
    expect(vectorOf(parseValue('vector', '0.5, 1', db))).toEqual([0.5, 1]);
  });

  it('parses what an editor holds into the typed value, keeping 64-bit integers exact', () => {
    expect(parseValue('integer', '9007199254740993', db)).toEqual({ integerValue: '9007199254740993' });
    expect(parseValue('double', '42', db)).toEqual({ doubleValue: 42 });
    expect(parseValue('double', 'NaN', db)).toEqual({ doubleValue: 'NaN' });
    expect(parseValue('reference', '/users/a/', db)).toEqual({ referenceValue: `${db}/documents/users/a` });
    expect(parseValue('geopoint', '48.85, 2.35', db)).toEqual({
      geoPointValue: { latitude: 48.85, longitude: 2.35 },
    });
    for (const [t, text] of [
      ['integer', '1.5'],
      ['integer', '9223372036854775808'],
      ['double', 'abc'],
      ['reference', 'users'],
      ['geopoint', '91, 0'],
      ['vector', ''],
      ['timestamp', 'yesterday'],
    ] as const)
      expect(() => parseValue(t, text, db)).toThrow();
  });

  it('converts a value to another type’s editor text where it can', () => {
    expect(editText({ stringValue: '7' }, 'integer')).toBe('7');
    expect(editText({ integerValue: '7' }, 'string')).toBe('7');
    expect(editText({ integerValue: '9007199254740993' }, 'integer')).toBe('9007199254740993');
    expect(editText({ booleanValue: true }, 'boolean')).toBe('true');
  });

  it('edits maps and arrays member by member and writes back each member’s own type', () => {
    const v: Value = {
      mapValue: {
        fields: {
          at: { timestampValue: '2026-01-31T12:00:00.123456Z' },
          where: { geoPointValue: { latitude: 48.85, longitude: 2.35 } },
          who: { referenceValue: `${db}/documents/users/a` },
          raw: { bytesValue: 'AAE=' },
          none: { nullValue: null },
          big: { integerValue: '9007199254740993' },
          list: {
            arrayValue: {
              values: [
                { timestampValue: '2026-02-01T00:00:00Z' },
                { mapValue: { fields: { x: { doubleValue: 1.5 } } } },
              ],
            },
          },
          vec: parseValue('vector', '0.5, 1', db),
        },
      },
    };
    const d = toDraft(v);
    expect(d.members.map((m) => m.key)).toEqual(['at', 'big', 'list', 'none', 'raw', 'vec', 'where', 'who']);
    expect(d.members.find((m) => m.key === 'at')?.draft).toEqual({
      type: 'timestamp',
      text: '2026-01-31T12:00:00.123456Z',
      members: [],
    });
    expect(fromDraft(d, db)).toEqual(v);

    // A new key holding a timestamp is written as a timestamp, not a string.
    const added: Draft = {
      ...d,
      members: [
        ...d.members,
        member('due', { type: 'timestamp', text: '2026-03-01T09:30:00Z', members: [] }),
      ],
    };
    const out = fromDraft(added, db) as { mapValue: { fields: Record<string, Value> } };
    expect(out.mapValue.fields.due).toEqual({ timestampValue: '2026-03-01T09:30:00Z' });
  });

  it('changes a member’s type keeping what still reads as the new type', () => {
    const text = (t: string): Draft => ({ type: 'string', text: t, members: [] });
    expect(retype(text('2026-01-31T12:00:00Z'), 'timestamp', db).text).toBe('2026-01-31T12:00:00Z');
    expect(retype(text('7'), 'integer', db).text).toBe('7');
    expect(retype({ type: 'integer', text: '7', members: [] }, 'string', db).text).toBe('7');
    const wrapped = retype(text('a'), 'array', db);
    expect(fromDraft(wrapped, db)).toEqual({ arrayValue: { values: [{ stringValue: 'a' }] } });
    expect(retype(text(''), 'array', db).members).toEqual([]);
    const asMap = retype(wrapped, 'map', db);
    expect(fromDraft(asMap, db)).toEqual({ mapValue: { fields: { '0': { stringValue: 'a' } } } });
    expect(retype(asMap, 'string', db)).toEqual({ type: 'string', text: '', members: [] });
  });

  it('leaves server timestamps in maps to transforms, and refuses them in arrays', () => {
    const stamp: Draft = { type: 'serverTimestamp', text: '', members: [] };
    const d: Draft = {
      type: 'map',
      text: '',
      members: [
        member('seen', stamp),
        member('n', { type: 'integer', text: '1', members: [] }),
        member('deep', { type: 'map', text: '', members: [member('a.b', stamp)] }),
      ],
    };
    expect(fromDraft(d, db)).toEqual({
      mapValue: { fields: { n: { integerValue: '1' }, deep: { mapValue: { fields: {} } } } },
    });
    expect(serverTimePaths(d)).toEqual([['seen'], ['deep', 'a.b']]);
    const arr: Draft = { type: 'array', text: '', members: [member('0', stamp)] };
    expect(() => fromDraft(arr, db, 'l')).toThrow('l[0]: A server timestamp cannot be in an array.');
    expect(serverTimePaths(arr)).toEqual([]);
    const below: Draft = {
      type: 'array',
      text: '',
      members: [member('0', { type: 'map', text: '', members: [member('at', stamp)] })],
    };
    expect(() => fromDraft(below, db, 'l')).toThrow('l[0].at: A server timestamp cannot be in an array.');
  });

  it('says where a map or array member is wrong', () => {
    const map = (...ms: ReturnType<typeof member>[]): Draft => ({ type: 'map', text: '', members: ms });
    const int = (t: string): Draft => ({ type: 'integer', text: t, members: [] });
    expect(() => fromDraft(map(member('', int('1'))), db, 'meta')).toThrow('meta: A map key is empty.');
    expect(() => fromDraft(map(member('a', int('1')), member('a', int('2'))), db, 'meta')).toThrow(
      'meta: The key “a” is there twice.',
    );
    expect(() => fromDraft(map(member('n', int('1.5'))), db, 'meta')).toThrow(/^meta\.n: An integer/);
    const nested: Draft = {
      type: 'array',
      text: '',
      members: [member('0', { type: 'array', text: '', members: [] })],
    };
    expect(() => fromDraft(nested, db, 'tags')).toThrow(/^tags\[0\]: An array cannot hold an array/);
  });

  it('quotes field names that are not simple identifiers', () => {
    expect(fieldPath('name')).toBe('name');
    expect(fieldPath('a.b')).toBe('`a.b`');
    expect(fieldPath('it`s')).toBe('`it\\`s`');
  });

  it('reads a document’s value at a field path, backquoted segments included', () => {
    const fields = {
      a: { mapValue: { fields: { 'b.c': { integerValue: '1' }, d: { stringValue: 'x' } } } },
    };
    expect(valueAt(fields, 'a.d')).toEqual({ stringValue: 'x' });
    expect(valueAt(fields, 'a.`b.c`')).toEqual({ integerValue: '1' });
    expect(valueAt(fields, 'a.d.e')).toBeUndefined();
    expect(valueAt(fields, 'missing')).toBeUndefined();
    expect(['b', 'a.b', '`a.b`', 'a'].sort(compareFieldPaths)).toEqual(['a', 'a.b', '`a.b`', 'b']);
  });

  it('replaces, adds and removes one member deep in a value', () => {
    const v: Value = {
      mapValue: {
        fields: {
          note: { stringValue: 'x' },
          tags: {
            arrayValue: {
              values: [{ stringValue: 'a' }, { mapValue: { fields: { k: { nullValue: null } } } }],
            },
          },
        },
      },
    };
    const at: Value = { timestampValue: '2026-01-31T12:00:00Z' };
    expect(withMember(v, ['tags', 1, 'k'], at)).toEqual({
      mapValue: {
        fields: {
          note: { stringValue: 'x' },
          tags: { arrayValue: { values: [{ stringValue: 'a' }, { mapValue: { fields: { k: at } } }] } },
        },
      },
    });
    expect(withMember(v, ['tags', 0], undefined)).toEqual({
      mapValue: {
        fields: {
          note: { stringValue: 'x' },
          tags: { arrayValue: { values: [{ mapValue: { fields: { k: { nullValue: null } } } }] } },
        },
      },
    });
    expect(withMember(v, ['new'], at)).toEqual({
      mapValue: {
        fields: { ...(v as { mapValue: { fields: Record<string, Value> } }).mapValue.fields, new: at },
      },
    });
    expect((v as { mapValue: { fields: Record<string, Value> } }).mapValue.fields.new).toBeUndefined();
    expect(() => withMember(v, ['note', 0], at)).toThrow('Not an array at 0.');
    expect(memberLabel('meta', ['tags', 1, 'k'])).toBe('meta.tags[1].k');
  });
});
