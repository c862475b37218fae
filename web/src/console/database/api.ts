/** The Realtime Database as the console reads and writes it (docs/admin-api.md: Realtime Database). */
import { useEffect, useRef } from 'react';
import { ApiError, api, ownerHeaders } from '../api/client';

/** One child of a listing: a leaf with its value, or an object with its number of children. */
export type Child = { key: string; value?: unknown; children?: number };

/** A location: its value when a leaf, else a page of its children in key order. */
export type Listing = {
  path: string;
  exists: boolean;
  value?: unknown;
  total: number;
  children: Child[];
  next?: string;
};

export const pageSize = 200;

const enc = encodeURIComponent;

/** The path's segments: "/a/b" → ["a", "b"]. */
export const segments = (path: string) => path.split('/').filter(Boolean);

/** The path of segments: ["a", "b"] → "/a/b". */
export const pathOf = (segs: string[]) => '/' + segs.join('/');

/** The child path of path: ("/a", "b") → "/a/b". */
export const childPath = (path: string, key: string) => pathOf([...segments(path), key]);

/** Whether a and b are the same location or one is under the other. */
export function related(a: string, b: string): boolean {
  const x = segments(a);
  const y = segments(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** The REST URL of a location in namespace ns. */
export function restUrl(ns: string, path: string, query = '') {
  const p = segments(path).map(enc).join('/');
  return `/${p}.json?ns=${enc(ns)}${query ? '&' + query : ''}`;
}

export function fetchNamespaces() {
  return api<{ default: string; namespaces: string[] }>('/emulator/v1/database/namespaces');
}

/** The first limit children of path (after startAfter). */
export function fetchListing(ns: string, path: string, limit = pageSize, startAfter?: string) {
  const q = new URLSearchParams({ ns, path, limit: String(limit) });
  if (startAfter !== undefined) q.set('startAfter', startAfter);
  return api<Listing>(`/emulator/v1/database/children?${q}`);
}

/** Replaces the data at path with value (null deletes it). */
export function setValue(ns: string, path: string, value: unknown) {
  return api(restUrl(ns, path, 'print=silent'), { method: 'PUT', json: value });
}

/** Adds value under path with a push id; answers the new key. */
export async function pushValue(ns: string, path: string, value: unknown) {
  const r = await api<{ name: string }>(restUrl(ns, path), { method: 'POST', json: value });
  return r.name;
}

export function removeValue(ns: string, path: string) {
  return api(restUrl(ns, path, 'print=silent'), { method: 'DELETE' });
}

/** The data at path as JSON text, indented (priorities with format=export). */
export async function exportText(ns: string, path: string) {
  const res = await fetch(restUrl(ns, path, 'print=pretty'), { headers: ownerHeaders });
  const text = await res.text();
  if (!res.ok) throw new ApiError(text, res.status);
  return text;
}

/** The namespace's rules source (open rules when none are in force). */
export async function fetchRules(ns: string) {
  const res = await fetch(`/.settings/rules.json?ns=${enc(ns)}`, { headers: ownerHeaders });
  const text = await res.text();
  if (!res.ok) throw new ApiError(text, res.status);
  return text;
}

/** One rule of a namespace's rules with how often it held, failed and errored. */
export type RuleCoverage = {
  path: string;
  kind: string;
  line: number;
  text: string;
  hits: { true: number; false: number; errors: number };
};

/** How the namespace's rules have been evaluated; null when no rules are in force. */
export async function fetchCoverage(ns: string): Promise<RuleCoverage[] | null> {
  try {
    return (await api<{ rules: RuleCoverage[] }>(`/.inspect/coverage?ns=${enc(ns)}`)).rules;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/**
 * Text typed as a value: JSON when it parses (42, true, "x", {"a": 1}),
 * else the text itself as a string.
 */
export function parseTyped(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type ChangeListener = (paths: string[] | 'lagged') => void;

/**
 * Calls onChange with the paths each write to ns changes ('lagged' when some
 * were dropped), over GET /emulator/v1/database/changes as the owner.
 */
export function useDatabaseChanges(ns: string, onChange: ChangeListener) {
  const ref = useRef(onChange);
  useEffect(() => {
    ref.current = onChange;
  });
  useEffect(() => {
    const ctrl = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const follow = async () => {
      try {
        const res = await fetch(`/emulator/v1/database/changes?ns=${enc(ns)}`, {
          headers: { ...ownerHeaders, Accept: 'text/event-stream' },
          signal: ctrl.signal,
        });
        if (!res.ok || !res.body) throw new Error(String(res.status));
        // Anything written while the stream was down is reloaded.
        ref.current('lagged');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let end;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, end);
            buf = buf.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event === 'change' && data) ref.current((JSON.parse(data) as { paths: string[] }).paths);
            else if (event === 'lagged') ref.current('lagged');
          }
        }
      } catch {
        if (ctrl.signal.aborted) return;
      }
      if (!ctrl.signal.aborted) retry = setTimeout(() => void follow(), 2000);
    };
    void follow();
    return () => {
      ctrl.abort();
      clearTimeout(retry);
    };
  }, [ns]);
}
