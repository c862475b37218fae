import { normalizedOrder, type QuerySpec } from './api';

const q = (over: Partial<QuerySpec>): QuerySpec => ({ filters: [], combine: 'AND', limit: 10, ...over });
const f = (field: string, op: string) => ({ field, op, value: { nullValue: null } });

describe('console Firestore query order', () => {
  it('orders by name alone when nothing else orders', () => {
    expect(normalizedOrder(q({ filters: [f('tag', 'EQUAL')] }))).toEqual([
      { field: '__name__', direction: 'ASCENDING' },
    ]);
  });

  it('adds inequality fields after the explicit order, lexicographically, in its direction', () => {
    const order = normalizedOrder(
      q({
        combine: 'OR',
        filters: [f('z', 'GREATER_THAN'), f('a.b', 'NOT_IN'), f('n', 'LESS_THAN'), f('a', 'IS_NOT_NULL')],
        orderBy: { field: 'n', direction: 'DESCENDING' },
      }),
    );
    expect(order).toEqual([
      { field: 'n', direction: 'DESCENDING' },
      { field: 'a', direction: 'DESCENDING' },
      { field: 'a.b', direction: 'DESCENDING' },
      { field: 'z', direction: 'DESCENDING' },
      { field: '__name__', direction: 'DESCENDING' },
    ]);
  });

  it('does not order by name twice', () => {
    expect(normalizedOrder(q({ orderBy: { field: '__name__', direction: 'DESCENDING' } }))).toEqual([
      { field: '__name__', direction: 'DESCENDING' },
    ]);
  });

  it('does not order by name twice when the name has an inequality', () => {
    expect(normalizedOrder(q({ filters: [f('__name__', 'GREATER_THAN'), f('a', 'LESS_THAN')] }))).toEqual([
      { field: '__name__', direction: 'ASCENDING' },
      { field: 'a', direction: 'ASCENDING' },
    ]);
  });
});
