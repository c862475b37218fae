import { useEffect, useRef, useState } from 'react';
import { ownerHeaders } from './client';

/** One Firestore commit as /emulator/v1/firestore/changes streams it. */
export type Change = { time: string; paths: string[]; more?: number };

type Listener = (c: Change | 'lagged') => void;
const listeners = new Set<Listener>();
let source: EventSource | null = null;

function open() {
  source = new EventSource('/emulator/v1/firestore/changes');
  source.addEventListener('change', (e) => {
    const c = JSON.parse((e as MessageEvent<string>).data) as Change;
    listeners.forEach((l) => l(c));
  });
  source.addEventListener('lagged', () => listeners.forEach((l) => l('lagged')));
}

/**
 * Calls onChange for every Firestore commit (or 'lagged' when some were
 * dropped), over one shared event stream.
 */
export function useFirestoreChanges(onChange: Listener) {
  const ref = useRef(onChange);
  useEffect(() => {
    ref.current = onChange;
  });
  useEffect(() => {
    const l: Listener = (c) => ref.current(c);
    listeners.add(l);
    if (!source) open();
    return () => {
      listeners.delete(l);
      if (listeners.size === 0) {
        source?.close();
        source = null;
      }
    };
  }, []);
}

/**
 * State loaded by load, reloaded every intervalMs while the page is visible, whenever deps change and whenever
 * reload() is called; a load that fell while the page was hidden runs when it shows again.
 */
export function usePolled<T>(load: () => Promise<T>, intervalMs: number, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  useEffect(() => {
    let alive = true;
    let missed = false;
    const run = () => {
      missed = document.visibilityState === 'hidden';
      if (missed) return;
      loadRef.current().then(
        (d) => {
          if (!alive) return;
          setData(d);
          setError(undefined);
        },
        (e: unknown) => alive && setError(e instanceof Error ? e.message : String(e)),
      );
    };
    run();
    const timer = intervalMs > 0 ? setInterval(run, intervalMs) : undefined;
    const shown = () => {
      if (missed && document.visibilityState === 'visible') run();
    };
    document.addEventListener('visibilitychange', shown);
    return () => {
      alive = false;
      clearInterval(timer);
      document.removeEventListener('visibilitychange', shown);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [intervalMs, tick, ...deps]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

/**
 * A change counter read by long poll: url answers {"version": N} at once,
 * and with ?since=N once the counter differs (or after a while unchanged).
 * Returns the latest version (undefined until the first answer).
 */
export function useChangeCounter(url: string) {
  const [version, setVersion] = useState<number | undefined>(undefined);
  useEffect(() => {
    const ctrl = new AbortController();
    (async () => {
      let since: number | undefined;
      while (!ctrl.signal.aborted) {
        try {
          const q = since === undefined ? '' : `${url.includes('?') ? '&' : '?'}since=${since}`;
          const res = await fetch(url + q, { headers: ownerHeaders, signal: ctrl.signal });
          if (!res.ok) throw new Error(`${res.status}`);
          since = ((await res.json()) as { version: number }).version;
          setVersion(since);
        } catch {
          if (ctrl.signal.aborted) return;
          // Loupe restarting or gone: try again shortly.
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
    })();
    return () => ctrl.abort();
  }, [url]);
  return version;
}
