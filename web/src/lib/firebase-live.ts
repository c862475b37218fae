import {
  onSnapshot,
  type DocumentReference,
  type DocumentSnapshot,
  type FirestoreError,
  type Query,
  type QuerySnapshot,
  type Unsubscribe,
} from 'firebase/firestore';
import { useEffect, useRef, useState } from 'react';

/**
 * A live read as every hook of the app returns it: the data (its initial
 * value while loading and after an error), whether the first answer is
 * still awaited, and the error that ended the listen.
 */
export interface Live<T> {
  data: T;
  loading: boolean;
  error: Error | null;
}

/** How a live read turns snapshots into data. */
export interface LiveOptions<S, T> {
  /** Turns a snapshot into the data. */
  read: (snap: S) => T;
  /** The data before the first snapshot, without a source, and after an error. */
  initial: T;
  /** What the console says before a failed listen's error, e.g. 'Failed to load the profile:'. */
  log: string;
  /** Also report local writes becoming stored (pending writes), for offline drafts. */
  includeMetadataChanges?: boolean;
  /**
   * Reads of the same group keep showing the previous key's data (with
   * loading true) until the new key's first snapshot, so growing a page
   * does not blank the list. Defaults to the key itself.
   */
  group?: string;
}

type Listen<S> = (next: (snap: S) => void, fail: (err: FirestoreError) => void) => Unsubscribe;

interface Held<T> {
  key: string;
  group: string;
  data: T;
  error: Error | null;
}

/**
 * Follows one source while `key` names it (null: nothing to follow, e.g.
 * signed out) and resubscribes when the key changes; the source is read
 * only when subscribing, so it may be built afresh on every render.
 */
function useLive<S, T>(key: string | null, listen: Listen<S>, opts: LiveOptions<S, T>): Live<T> {
  const [held, setHeld] = useState<Held<T> | null>(null);
  const latest = useRef({ listen, opts });
  useEffect(() => {
    latest.current = { listen, opts };
  });
  const group = opts.group ?? key ?? '';
  useEffect(() => {
    if (key === null) return;
    const { listen: subscribe, opts: o } = latest.current;
    return subscribe(
      (snap) => setHeld({ key, group, data: latest.current.opts.read(snap), error: null }),
      (error) => {
        console.error(o.log, error);
        setHeld({ key, group, data: latest.current.opts.initial, error });
      },
    );
  }, [key, group]);
  if (key === null) return { data: opts.initial, loading: false, error: null };
  if (held?.key === key) return { data: held.data, loading: false, error: held.error };
  if (held?.group === group && !held.error) return { data: held.data, loading: true, error: null };
  return { data: opts.initial, loading: true, error: null };
}

/** A query, live: `query()` is subscribed while `key` (which names it) is not null. */
export function useLiveQuery<T>(
  key: string | null,
  query: () => Query,
  opts: LiveOptions<QuerySnapshot, T>,
): Live<T> {
  return useLive<QuerySnapshot, T>(
    key,
    (next, fail) =>
      onSnapshot(query(), { includeMetadataChanges: opts.includeMetadataChanges ?? false }, next, fail),
    opts,
  );
}

/** A document, live: `ref()` is subscribed while `key` (which names it) is not null. */
export function useLiveDoc<T>(
  key: string | null,
  ref: () => DocumentReference,
  opts: LiveOptions<DocumentSnapshot, T>,
): Live<T> {
  return useLive<DocumentSnapshot, T>(
    key,
    (next, fail) =>
      onSnapshot(ref(), { includeMetadataChanges: opts.includeMetadataChanges ?? false }, next, fail),
    opts,
  );
}
