import { act, renderHook } from '@testing-library/react';
import type { Query } from 'firebase/firestore';
import { useLiveQuery } from './firebase-live';

// onSnapshot, recorded: each listen keeps its callbacks and whether it was stopped.
const listens: { next: (snap: unknown) => void; fail: (err: Error) => void; stopped: boolean }[] = [];
vi.mock('firebase/firestore', () => ({
  onSnapshot: (_q: unknown, _o: unknown, next: (s: unknown) => void, fail: (e: Error) => void) => {
    const l = { next, fail, stopped: false };
    listens.push(l);
    return () => {
      l.stopped = true;
    };
  },
}));

/** The first listen, which every test starts. */
function listen() {
  const l = listens[0];
  if (!l) throw new Error('nothing listens');
  return l;
}

const source = () => ({}) as Query;
const opts = (group?: string) => ({
  read: (snap: unknown) => snap as string[],
  initial: [] as string[],
  log: 'Failed to load the list:',
  group,
});

describe('useLiveQuery', () => {
  beforeEach(() => {
    listens.length = 0;
  });

  it('loads, shows each snapshot, and reads nothing without a key', () => {
    const { result, rerender } = renderHook(({ key }) => useLiveQuery(key, source, opts()), {
      initialProps: { key: 'a' as string | null },
    });
    expect(result.current).toEqual({ data: [], loading: true, error: null });
    act(() => listen().next(['x']));
    expect(result.current).toEqual({ data: ['x'], loading: false, error: null });
    rerender({ key: null });
    expect(listen().stopped).toBe(true);
    expect(result.current).toEqual({ data: [], loading: false, error: null });
  });

  it('logs a failed listen and gives the error with the initial data', () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { result } = renderHook(() => useLiveQuery('a', source, opts()));
    const err = new Error('permission-denied');
    act(() => listen().fail(err));
    expect(result.current).toEqual({ data: [], loading: false, error: err });
    expect(log).toHaveBeenCalledWith('Failed to load the list:', err);
    log.mockRestore();
  });

  it('shows nothing of another key, but keeps its group shown while the next page loads', () => {
    const { result, rerender } = renderHook(({ key, group }) => useLiveQuery(key, source, opts(group)), {
      initialProps: { key: 'page/20', group: 'page' as string | undefined },
    });
    act(() => listen().next(['first']));
    rerender({ key: 'page/40', group: 'page' });
    expect(result.current).toEqual({ data: ['first'], loading: true, error: null });
    rerender({ key: 'other', group: undefined });
    expect(result.current).toEqual({ data: [], loading: true, error: null });
  });
});
