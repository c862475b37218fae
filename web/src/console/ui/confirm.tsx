import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { messageOf } from '../api/client';
import { Button } from './controls';

type Ask = { title: string; body?: ReactNode; action: string; danger?: boolean };
type Confirm = (ask: Ask) => Promise<boolean>;

const ConfirmContext = createContext<Confirm | null>(null);

/** Asks before destructive actions, in a modal <dialog>. */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [ask, setAsk] = useState<(Ask & { resolve: (ok: boolean) => void }) | null>(null);
  const ref = useRef<HTMLDialogElement>(null);
  const confirm = useCallback<Confirm>((a) => new Promise((resolve) => setAsk({ ...a, resolve })), []);
  useEffect(() => {
    if (ask && !ref.current?.open) ref.current?.showModal();
  }, [ask]);
  const answer = (ok: boolean) => {
    ask?.resolve(ok);
    setAsk(null);
    ref.current?.close();
  };
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      <dialog
        ref={ref}
        onCancel={() => answer(false)}
        className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-xl border border-zinc-700 bg-zinc-900 p-0 text-zinc-100 shadow-2xl shadow-black/60 backdrop:bg-black/60 backdrop:backdrop-blur-sm"
      >
        {ask && (
          <div className="space-y-4 p-5">
            <h2 className="text-base font-semibold text-white">{ask.title}</h2>
            {ask.body && <div className="text-sm text-zinc-300">{ask.body}</div>}
            <div className="flex justify-end gap-2">
              <Button onClick={() => answer(false)}>Cancel</Button>
              <Button variant={ask.danger ? 'danger' : 'primary'} onClick={() => answer(true)} autoFocus>
                {ask.action}
              </Button>
            </div>
          </div>
        )}
      </dialog>
    </ConfirmContext.Provider>
  );
}

export function useConfirm(): Confirm {
  const c = useContext(ConfirmContext);
  if (!c) throw new Error('useConfirm needs ConfirmProvider');
  return c;
}

/**
 * Asks first, then runs the action; a failure shows a toast titled failed
 * with the API's message.
 */
export function useConfirmed() {
  const confirm = useConfirm();
  const toast = useToast();
  return async (ask: Ask, run: () => Promise<void>, failed: string) => {
    if (!(await confirm(ask))) return;
    try {
      await run();
    } catch (err) {
      toast({ title: failed, description: messageOf(err) });
    }
  };
}
