import { useCallback, useEffect, useRef, useState } from 'react';
import { messageOf } from '../api/client';
import { useFirestoreChanges } from '../api/live';

/**
 * Loads with load() and loads again, debounced, after every commit that
 * touches() says concerns it (and after a lagged stream).
 */
export function useLiveLoad<T>(load: () => Promise<T>, touches: (path: string) => boolean, deps: unknown[]) {
  // Data is kept with the deps it was loaded for, so other deps show nothing stale.
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; data: T } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const loadRef = useRef(load);
  const touchRef = useRef(touches);
  useEffect(() => {
    loadRef.current = load;
    touchRef.current = touches;
  });
  const seq = useRef(0);
  const keyRef = useRef(key);
  useEffect(() => {
    keyRef.current = key;
  });
  const reload = useCallback(() => {
    const n = ++seq.current;
    const k = keyRef.current;
    loadRef.current().then(
      (d) => {
        if (n !== seq.current) return;
        setState({ key: k, data: d });
        setError(undefined);
      },
      (e: unknown) => n === seq.current && setError(messageOf(e)),
    );
  }, []);
  useEffect(() => {
    keyRef.current = key;
    reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useFirestoreChanges((c) => {
    if (c !== 'lagged' && !c.paths.some((p) => touchRef.current(p)) && !c.more) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, 120);
  });
  return { data: state?.key === key ? state.data : undefined, error, reload };
}

/** A window of documents loaded page by page, kept current as commits land. */
export type LiveWindow<D> = {
  docs: D[];
  /** Whether a page may follow the last loaded document. */
  more: boolean;
};

/**
 * A window of documents (first a page of size, then a page more after the
 * last document at each loadMore), kept current without re-reading it page
 * by page: after commits that touch() its documents, patch(paths, docs)
 * brings the window up to date with the changed documents alone when it
 * can (returning the new docs), and otherwise (undefined, or a lagged
 * stream) the window is read again in one query of as many documents as
 * were loaded.
 */
export function useLiveWindow<D>(
  page: (after: D | undefined, limit: number) => Promise<D[]>,
  size: number,
  touches: (path: string) => boolean,
  patch: (paths: string[], w: LiveWindow<D>) => Promise<D[] | undefined>,
  deps: unknown[],
) {
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ key: string; limit: number; w: LiveWindow<D> } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const fns = useRef({ page, touches, patch });
  useEffect(() => {
    fns.current = { page, touches, patch };
  });
  const keyRef = useRef(key);
  const stateRef = useRef(state);
  useEffect(() => {
    stateRef.current = state;
  });
  const seq = useRef(0);
  // Reads the first limit documents again, as one query.
  const reread = useCallback((limit: number) => {
    const n = ++seq.current;
    const k = keyRef.current;
    fns.current.page(undefined, limit).then(
      (docs) => {
        if (n !== seq.current) return;
        setState({ key: k, limit, w: { docs, more: docs.length === limit } });
        setError(undefined);
      },
      (e: unknown) => n === seq.current && setError(messageOf(e)),
    );
  }, []);
  useEffect(() => {
    keyRef.current = key;
    reread(size);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  const loadMore = useCallback(() => {
    const s = stateRef.current;
    if (!s || s.key !== keyRef.current) return;
    const n = ++seq.current;
    setLoading(true);
    fns.current
      .page(s.w.docs.at(-1), size)
      .then(
        (batch) => {
          if (n !== seq.current) return;
          setState({
            key: s.key,
            limit: s.limit + size,
            w: { docs: [...s.w.docs, ...batch], more: batch.length === size },
          });
          setError(undefined);
        },
        (e: unknown) => n === seq.current && setError(messageOf(e)),
      )
      .finally(() => setLoading(false));
  }, [size]);
  // Changed paths gather over a short debounce, then update the window once.
  const pending = useRef<{ paths: Set<string>; all: boolean }>({ paths: new Set(), all: false });
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const flush = useCallback(() => {
    const { paths, all } = pending.current;
    pending.current = { paths: new Set(), all: false };
    const s = stateRef.current;
    if (!s || s.key !== keyRef.current) return;
    if (all) return reread(s.limit);
    const n = ++seq.current;
    fns.current.patch(Array.from(paths), s.w).then(
      (docs) => {
        if (n !== seq.current) return;
        if (docs === undefined) return reread(s.limit);
        setState({ key: s.key, limit: s.limit, w: { docs, more: s.w.more } });
      },
      () => n === seq.current && reread(s.limit),
    );
  }, [reread]);
  useFirestoreChanges((c) => {
    if (c === 'lagged' || c.more) pending.current.all = true;
    else {
      const mine = c.paths.filter((p) => fns.current.touches(p));
      if (!mine.length) return;
      mine.forEach((p) => pending.current.paths.add(p));
    }
    clearTimeout(timer.current);
    timer.current = setTimeout(flush, 120);
  });
  return { data: state?.key === key ? state.w : undefined, error, loading, loadMore };
}
