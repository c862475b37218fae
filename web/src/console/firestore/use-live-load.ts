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
