import { api, apiWithProgress, type Progress } from '../api/client';
import { countStage, type Stage } from './pipeline-syntax';
import { compareFieldPaths, fieldPath, valueAt, type Doc, type Fields, type Value } from './values';

/** A structured query's filter as the console builds it. */
export type Filter = { field: string; op: string; value: Value };

type Direction = 'ASCENDING' | 'DESCENDING';

/** A query over a collection: filters joined by AND or OR, an order and a page size. */
export type QuerySpec = {
  filters: Filter[];
  combine: 'AND' | 'OR';
  orderBy?: { field: string; direction: Direction };
  limit: number;
};

const base = (db: string) => `/v1/${db}/documents`;

/** The parent of a collection path: the database's documents or a document. */
function parentOf(db: string, collectionPath: string): { parent: string; id: string } {
  const segs = collectionPath.split('/');
  const id = segs.pop() ?? '';
  return { parent: [`${db}/documents`, ...segs].join('/'), id };
}

export const listDatabases = () =>
  api<{ databases: { name: string; documents: number }[] }>('/emulator/v1/firestore/databases').then(
    (r) => r.databases,
  );

/** The ids of the collections under a document path ("" for the root). */
export async function listCollections(db: string, docPath: string): Promise<string[]> {
  const res = await api<{ collectionIds?: string[] }>(
    `${base(db)}${docPath ? '/' + docPath : ''}:listCollectionIds`,
    {
      method: 'POST',
      json: {},
    },
  );
  return res.collectionIds ?? [];
}

type RunQueryResult = { document?: Doc }[];

/** One page of a collection's documents by name, after the document named after (when given). */
export async function listPage(
  db: string,
  collectionPath: string,
  limit: number,
  after?: string,
): Promise<Doc[]> {
  const { parent, id } = parentOf(db, collectionPath);
  const structuredQuery: Record<string, unknown> = {
    from: [{ collectionId: id }],
    orderBy: [{ field: { fieldPath: '__name__' }, direction: 'ASCENDING' }],
    limit,
  };
  // A filter on the name rather than a cursor: loupe seeks to it in the collection.
  if (after)
    structuredQuery.where = {
      fieldFilter: { field: { fieldPath: '__name__' }, op: 'GREATER_THAN', value: { referenceValue: after } },
    };
  const rows = await api<RunQueryResult>(`/v1/${parent}:runQuery`, {
    method: 'POST',
    json: { structuredQuery },
  });
  return rows.flatMap((r) => (r.document ? [r.document] : []));
}

/** How many documents a collection holds, or how many of them match a query's filters (its limit aside). */
export async function countDocs(db: string, collectionPath: string, q?: QuerySpec | null): Promise<number> {
  const { parent, id } = parentOf(db, collectionPath);
  const where = q ? whereOf(q) : undefined;
  const rows = await api<{ result?: { aggregateFields?: { n?: { integerValue?: string } } } }[]>(
    `/v1/${parent}:runAggregationQuery`,
    {
      method: 'POST',
      json: {
        structuredAggregationQuery: {
          structuredQuery: { from: [{ collectionId: id }], ...(where ? { where } : {}) },
          aggregations: [{ alias: 'n', count: {} }],
        },
      },
    },
  );
  return Number(rows[0]?.result?.aggregateFields?.n?.integerValue ?? 0);
}

const unary = new Set(['IS_NULL', 'IS_NOT_NULL', 'IS_NAN', 'IS_NOT_NAN']);
const inequalities = new Set([
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL',
  'NOT_EQUAL',
  'NOT_IN',
  'IS_NOT_NULL',
  'IS_NOT_NAN',
]);

/**
 * The order a query's results come in, as the SDKs normalize it: the
 * explicit order, then every inequality filter's field not already ordered
 * (lexicographically), then the document name, in the last explicit direction.
 */
export function normalizedOrder(q: QuerySpec): { field: string; direction: Direction }[] {
  const order = q.orderBy?.field ? [q.orderBy] : [];
  const direction = order.at(-1)?.direction ?? 'ASCENDING';
  const ordered = new Set(order.map((o) => o.field));
  const implicit = Array.from(
    new Set(q.filters.filter((f) => inequalities.has(f.op) && !ordered.has(f.field)).map((f) => f.field)),
  ).sort(compareFieldPaths);
  return [
    ...order,
    ...implicit.map((field) => ({ field, direction })),
    ...(ordered.has('__name__') || implicit.includes('__name__') ? [] : [{ field: '__name__', direction }]),
  ];
}

/** A query's filters as a structured query's where (none without filters). */
function whereOf(q: QuerySpec): Record<string, unknown> | undefined {
  const filters = q.filters.map((f) =>
    unary.has(f.op)
      ? { unaryFilter: { field: { fieldPath: f.field }, op: f.op } }
      : { fieldFilter: { field: { fieldPath: f.field }, op: f.op, value: f.value } },
  );
  if (filters.length === 1) return filters[0];
  if (filters.length > 1) return { compositeFilter: { op: q.combine, filters } };
  return undefined;
}

/**
 * The structured query and its parent for a query over a collection,
 * starting after the document after (a page's last) when given.
 */
function structured(db: string, collectionPath: string, q: QuerySpec, after?: Doc) {
  const { parent, id } = parentOf(db, collectionPath);
  const where = whereOf(q);
  const order = normalizedOrder(q);
  const structuredQuery: Record<string, unknown> = {
    from: [{ collectionId: id }],
    orderBy: order.map((o) => ({ field: { fieldPath: o.field }, direction: o.direction })),
    limit: q.limit,
  };
  if (where) structuredQuery.where = where;
  if (after)
    structuredQuery.startAt = {
      before: false,
      values: order.map((o) =>
        o.field === '__name__'
          ? { referenceValue: after.name }
          : (valueAt(after.fields ?? {}, o.field) ?? { nullValue: null }),
      ),
    };
  return { parent, structuredQuery };
}

type Plan = {
  explainMetrics?: { planSummary?: { indexesUsed?: { properties?: string; query_scope?: string }[] } };
}[];

/** The documents a query over a collection returns after the document after (from the start when absent). */
export async function runQuery(
  db: string,
  collectionPath: string,
  q: QuerySpec,
  after?: Doc,
): Promise<Doc[]> {
  const { parent, structuredQuery } = structured(db, collectionPath, q, after);
  const rows = await api<RunQueryResult>(`/v1/${parent}:runQuery`, {
    method: 'POST',
    json: { structuredQuery },
  });
  return rows.flatMap((r) => (r.document ? [r.document] : []));
}

/** The indexes a query over a collection reads, from its explain plan (none when it cannot be had). */
export async function queryIndexes(db: string, collectionPath: string, q: QuerySpec): Promise<string[]> {
  const { parent, structuredQuery } = structured(db, collectionPath, q);
  const plan = await api<Plan>(`/v1/${parent}:runQuery`, {
    method: 'POST',
    json: { structuredQuery, explainOptions: { analyze: false } },
  }).catch(() => [] as Plan);
  return plan
    .flatMap((r) => r.explainMetrics?.planSummary?.indexesUsed ?? [])
    .map((i) => `${i.properties ?? ''}${i.query_scope ? ` · ${i.query_scope}` : ''}`);
}

export async function getDoc(db: string, path: string): Promise<Doc | null> {
  const rows = await api<{ found?: Doc; missing?: string }[]>(`${base(db)}:batchGet`, {
    method: 'POST',
    json: { documents: [`${db}/documents/${path}`] },
  });
  return rows[0]?.found ?? null;
}

/** Documents by path, in one batchGet: each path's document, or null when it does not exist. */
export async function getDocs(db: string, paths: string[]): Promise<Map<string, Doc | null>> {
  const rows = await api<{ found?: Doc; missing?: string }[]>(`${base(db)}:batchGet`, {
    method: 'POST',
    json: { documents: paths.map((p) => `${db}/documents/${p}`) },
  });
  return new Map(
    rows.flatMap((r): [string, Doc | null][] =>
      r.found ? [[r.found.name, r.found]] : r.missing ? [[r.missing, null]] : [],
    ),
  );
}

type Write = Record<string, unknown>;

function commit(db: string, writes: Write[]) {
  return api<unknown>(`${base(db)}:commit`, { method: 'POST', json: { writes } });
}

/**
 * Sets one top-level field (or, with serverTimestamp, the server's time), and
 * the paths under it in serverTimes to the server's time, in one commit; a
 * field renamedFrom another name removes that one; with updateTime the commit
 * fails (FAILED_PRECONDITION) when the document changed since that time. The
 * document is created when absent.
 */
export function setField(
  db: string,
  path: string,
  name: string,
  value: Value | 'serverTimestamp',
  {
    serverTimes = [],
    renamedFrom,
    updateTime,
  }: { serverTimes?: string[][]; renamedFrom?: string; updateTime?: string } = {},
) {
  const stamp = value === 'serverTimestamp';
  const mask = [
    ...(renamedFrom && renamedFrom !== name ? [fieldPath(renamedFrom)] : []),
    ...(stamp ? [] : [fieldPath(name)]),
  ];
  return commit(db, [
    {
      update: { name: `${db}/documents/${path}`, fields: stamp ? {} : { [name]: value } },
      updateMask: { fieldPaths: mask },
      updateTransforms: (stamp ? [[]] : serverTimes).map((segs) => ({
        fieldPath: [name, ...segs].map(fieldPath).join('.'),
        setToServerValue: 'REQUEST_TIME',
      })),
      ...(updateTime ? { currentDocument: { updateTime } } : {}),
    },
  ]);
}

export function deleteField(db: string, path: string, name: string) {
  return commit(db, [
    {
      update: { name: `${db}/documents/${path}`, fields: {} },
      updateMask: { fieldPaths: [fieldPath(name)] },
    },
  ]);
}

/**
 * Creates a document (failing when it exists) in one commit, with the field
 * paths in serverTimes (as segments) set to the server's time.
 */
export function createDoc(db: string, path: string, fields: Fields, serverTimes: string[][] = []) {
  return commit(db, [
    {
      update: { name: `${db}/documents/${path}`, fields },
      currentDocument: { exists: false },
      ...(serverTimes.length
        ? {
            updateTransforms: serverTimes.map((segs) => ({
              fieldPath: segs.map(fieldPath).join('.'),
              setToServerValue: 'REQUEST_TIME',
            })),
          }
        : {}),
    },
  ]);
}

/** Deletes a document or collection with everything under it, telling onProgress how many are deleted as it goes. */
export function deleteTree(db: string, path: string, onProgress: (p: Progress) => void = () => undefined) {
  return apiWithProgress<{ deleted: number }>(
    `/emulator/v1/${db}/documents/${path}`,
    { method: 'DELETE' },
    onProgress,
  );
}

export function clearDatabase(db: string) {
  return api<unknown>(`/emulator/v1/${db}/documents`, { method: 'DELETE' });
}

/** A random document id, as the SDKs make them. */
export function autoId(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return Array.from(bytes, (b) => chars[b % chars.length]).join('');
}

type PipelineResult = { results?: { fields?: Fields }[] }[];

/**
 * Runs a pipeline over a collection (an Enterprise database only) and, for
 * each stage, counts the rows it puts out (the collection first): the
 * counts by stage and the last stage's rows.
 */
export async function runPipeline(
  db: string,
  collectionPath: string,
  stages: Stage[],
): Promise<{ counts: number[]; rows: Fields[] }> {
  const source: Stage = { name: 'collection', args: [{ referenceValue: `/${collectionPath}` }] };
  const execute = (ss: Stage[]) =>
    api<PipelineResult>(`/v1/${db}/documents:executePipeline`, {
      method: 'POST',
      json: { structuredPipeline: { pipeline: { stages: [source, ...ss] } } },
    }).then((r) => r.flatMap((resp) => resp.results ?? []).map((d) => d.fields ?? {}));
  const counts = await Promise.all(
    stages.map(async (_, i) => {
      const [row] = await execute([...stages.slice(0, i + 1), countStage]);
      return Number((row?.n as { integerValue?: string } | undefined)?.integerValue ?? 0);
    }),
  );
  const [sourceRow] = await execute([countStage]);
  const rows = await execute(stages);
  return {
    counts: [Number((sourceRow?.n as { integerValue?: string } | undefined)?.integerValue ?? 0), ...counts],
    rows,
  };
}
