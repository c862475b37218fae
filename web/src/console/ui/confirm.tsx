import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';
import { ConfirmDialog } from '@/components/ui/dialog';
import { useToast } from '@/components/ui/toast-context';
import { messageOf } from '../api/client';

type Ask = { title: string; body?: ReactNode; action: string; danger?: boolean };
type Confirm = (ask: Ask) => Promise<boolean>;

const ConfirmContext = createContext<Confirm | null>(null);

/** Asks before destructive actions, in the shared ConfirmDialog. */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [ask, setAsk] = useState<(Ask & { resolve: (ok: boolean) => void }) | null>(null);
  const confirm = useCallback<Confirm>((a) => new Promise((resolve) => setAsk({ ...a, resolve })), []);
  // The dialog reports both the action and its closing: the first answer counts.
  const answer = (ok: boolean) => {
    ask?.resolve(ok);
    setAsk(null);
  };
  return (
    <ConfirmContext.Provider value={confirm}>
      {children}
      {ask && (
        <ConfirmDialog
          open
          title={ask.title}
          message={ask.body}
          confirmLabel={ask.action}
          cancelLabel="Cancel"
          destructive={ask.danger}
          onConfirm={() => answer(true)}
          onClose={() => answer(false)}
        />
      )}
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
  // Stable across renders, so memoized rows can take callbacks built on it.
  return useCallback(
    async (ask: Ask, run: () => Promise<void>, failed: string) => {
      if (!(await confirm(ask))) return;
      try {
        await run();
      } catch (err) {
        toast({ tone: 'error', title: failed, description: messageOf(err) });
      }
    },
    [confirm, toast],
  );
}
