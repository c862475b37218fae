// Owner-level access to a running loupe for tests: what an Admin SDK does,
// over the same REST endpoints (Authorization: Bearer owner).
import { projectId } from './loupe.mjs';

const db = `projects/${projectId}/databases/(default)/documents`;

function toValue(v) {
  if (v === null) return { nullValue: null };
  if (typeof v === 'boolean') return { booleanValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { integerValue: String(v) } : { doubleValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (v instanceof Date) return { timestampValue: v.toISOString() };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(toValue) } };
  return { mapValue: { fields: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toValue(x)])) } };
}

function fromValue(v) {
  if ('nullValue' in v) return null;
  if ('booleanValue' in v) return v.booleanValue;
  if ('integerValue' in v) return Number(v.integerValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('stringValue' in v) return v.stringValue;
  if ('timestampValue' in v) return new Date(v.timestampValue);
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(fromValue);
  if ('mapValue' in v)
    return Object.fromEntries(Object.entries(v.mapValue.fields ?? {}).map(([k, x]) => [k, fromValue(x)]));
  return undefined;
}

/** An owner client for the Firestore of a running loupe. */
export function admin(loupe) {
  const call = async (path, body, method = 'POST') => {
    const res = await fetch(`${loupe.url}/v1/${path}`, {
      method,
      headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    if (!res.ok && res.status !== 404) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.status === 404 ? null : res.json();
  };
  return {
    /** Sets a document; `serverTime` names fields set to the commit time. */
    async set(path, data, serverTime = []) {
      await call(`${db}:commit`, {
        writes: [
          {
            update: { name: `${db}/${path}`, fields: toValue(data).mapValue.fields },
            updateTransforms: serverTime.map((f) => ({ fieldPath: f, setToServerValue: 'REQUEST_TIME' })),
          },
        ],
      });
    },
    /** Sets the given top-level fields of an existing document, leaving the others. */
    async update(path, data) {
      await call(`${db}:commit`, {
        writes: [
          {
            update: { name: `${db}/${path}`, fields: toValue(data).mapValue.fields },
            updateMask: { fieldPaths: Object.keys(data) },
            currentDocument: { exists: true },
          },
        ],
      });
    },
    /** Reads a document as plain data, or null. */
    async get(path) {
      const doc = await call(`${db}/${path}`, undefined, 'GET');
      return doc && fromValue({ mapValue: { fields: doc.fields ?? {} } });
    },
    /** Runs an equality query on one field of a collection (a path such as `a/b/c` for subcollections). */
    async where(collection, field, value) {
      const parent = collection.includes('/')
        ? `${db}/${collection.slice(0, collection.lastIndexOf('/'))}`
        : db;
      const rows = await call(`${parent}:runQuery`, {
        structuredQuery: {
          from: [{ collectionId: collection.split('/').pop() }],
          where: { fieldFilter: { field: { fieldPath: field }, op: 'EQUAL', value: toValue(value) } },
        },
      });
      return rows
        .filter((r) => r.document)
        .map((r) => ({
          id: r.document.name.split('/').pop(),
          ...fromValue({ mapValue: { fields: r.document.fields ?? {} } }),
        }));
    },
  };
}

/**
 * Polls f every 50 ms until it returns a truthy value. The 60 s limit only bounds how long a
 * failing test takes to say so: a passing one returns as soon as f does, and a loaded CI machine
 * (a service worker woken by a push took over 5 s there) is never the reason to fail.
 */
export async function eventually(f, what = 'condition') {
  for (let i = 0; i < 1200; i++) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Sends a notification to a user from outside the app, as the fan-out function does. */
export function notify(loupe, id, userId, { type = 'feedback_received', title, message, link }) {
  return admin(loupe).set(
    `notifications/${id}`,
    { userId, type, title, message, read: false, data: {}, ...(link ? { link } : {}) },
    ['createdAt'],
  );
}
