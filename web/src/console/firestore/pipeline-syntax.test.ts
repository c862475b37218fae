import { describe, expect, it } from 'vitest';
import { parsePipeline } from './pipeline-syntax';

describe('console pipeline syntax', () => {
  it('turns lines into stages', () => {
    const stages = parsePipeline('where rating >= 4.5\n# comment\nsort year desc, title\nlimit 10');
    expect(stages.map((s) => s.name)).toEqual(['where', 'sort', 'limit']);
    expect(stages[0]?.args[0]).toEqual({
      functionValue: {
        name: 'greater_than_or_equal',
        args: [{ fieldReferenceValue: 'rating' }, { doubleValue: 4.5 }],
      },
    });
    expect(stages[2]?.args[0]).toEqual({ integerValue: '10' });
  });

  it('builds aggregates with groups', () => {
    const [agg] = parsePipeline('aggregate count(), avg(year) by genre');
    expect(agg?.args[0]).toEqual({
      mapValue: {
        fields: {
          count: { functionValue: { name: 'count', args: [] } },
          avg_year: { functionValue: { name: 'average', args: [{ fieldReferenceValue: 'year' }] } },
        },
      },
    });
    expect(agg?.args[1]).toEqual({ mapValue: { fields: { genre: { fieldReferenceValue: 'genre' } } } });
  });

  it('names the line of a mistake', () => {
    expect(() => parsePipeline('limit 3\nwhere year')).toThrow(/^Line 2: where takes FIELD OP VALUE/);
    expect(() => parsePipeline('frobnicate')).toThrow(/frobnicate is not a stage/);
    expect(() => parsePipeline('where a == maybe')).toThrow(/maybe is not a value/);
  });
});
