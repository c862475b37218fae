import { editText, fieldPath, parseValue, preview, typeOf, vectorOf, type Value } from './values';

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
    expect(parseValue('map', '{"n": 1, "f": 1.5, "l": [true]}', db)).toEqual({
      mapValue: {
        fields: {
          n: { integerValue: '1' },
          f: { doubleValue: 1.5 },
          l: { arrayValue: { values: [{ booleanValue: true }] } },
        },
      },
    });
    for (const [t, text] of [
      ['integer', '1.5'],
      ['integer', '9223372036854775808'],
      ['double', 'abc'],
      ['reference', 'users'],
      ['geopoint', '91, 0'],
      ['map', '[1]'],
      ['array', '{'],
      ['vector', ''],
      ['timestamp', 'yesterday'],
    ] as const)
      expect(() => parseValue(t, text, db)).toThrow();
  });

  it('converts a value to another type’s editor text where it can', () => {
    expect(editText({ stringValue: '7' }, 'integer')).toBe('7');
    expect(editText({ integerValue: '7' }, 'string')).toBe('7');
    expect(editText({ booleanValue: true }, 'boolean')).toBe('true');
    expect(editText({ stringValue: 'x' }, 'map')).toBe('{}');
  });

  it('quotes field names that are not simple identifiers', () => {
    expect(fieldPath('name')).toBe('name');
    expect(fieldPath('a.b')).toBe('`a.b`');
    expect(fieldPath('it`s')).toBe('`it\\`s`');
  });
});
