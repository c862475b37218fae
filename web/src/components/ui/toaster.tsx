import * as Toast from '@radix-ui/react-toast';
import { X } from 'lucide-react';
import { useCallback, useRef, useState, type ReactNode } from 'react';
import {
  appendToast,
  clampText,
  TOAST_CONFIG,
  TOAST_TEXT_LIMITS,
  TOASTS_VISIBLE,
  ToastContext,
  type ToastMessage,
} from './toast-context';

interface Entry extends ToastMessage {
  id: number;
  open: boolean;
}

/**
 * Toasts (Radix Toast): bottom right on desktop, at the top on mobile, below
 * the top bar so the bell and avatar stay visible and usable; they
 * close after 5 s, can be swiped right past 50 px, at most 100 are kept, and
 * F8 moves focus to them. Three show at once; the rest queue and each starts
 * its 5 s when it appears. Long titles and messages are clamped; a
 * failure's toast is marked red.
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Entry[]>([]);
  const nextId = useRef(0);

  const show = useCallback((toast: ToastMessage) => {
    nextId.current += 1;
    const entry = {
      title: clampText(toast.title, TOAST_TEXT_LIMITS.title),
      description: toast.description && clampText(toast.description, TOAST_TEXT_LIMITS.description),
      onOpen: toast.onOpen,
      tone: toast.tone,
      id: nextId.current,
      open: true,
    };
    setToasts((list) => appendToast(list, entry));
  }, []);

  const close = (id: number) => setToasts((list) => list.filter((t) => t.id !== id));

  return (
    <ToastContext.Provider value={show}>
      <Toast.Provider
        duration={TOAST_CONFIG.durationMs}
        swipeDirection={TOAST_CONFIG.swipeDirection}
        swipeThreshold={TOAST_CONFIG.swipeThreshold}
      >
        {children}
        {toasts.slice(0, TOASTS_VISIBLE).map((t) => (
          <Toast.Root
            key={t.id}
            onOpenChange={(open) => !open && close(t.id)}
            className="group pointer-events-auto relative flex w-full items-start gap-3 rounded-xl border border-zinc-700/80 bg-zinc-900/95 p-4 pr-10 shadow-2xl shadow-black/50 ring-1 ring-white/5 backdrop-blur data-[state=closed]:animate-out data-[swipe=cancel]:translate-x-0 data-[swipe=end]:translate-x-[var(--radix-toast-swipe-end-x)] data-[swipe=move]:translate-x-[var(--radix-toast-swipe-move-x)] data-[swipe=cancel]:transition-transform"
          >
            <span
              className={`mt-1.5 size-2 shrink-0 rounded-full ${t.tone === 'error' ? 'bg-red-400' : 'bg-brand-400'}`}
              data-tone={t.tone ?? 'info'}
              aria-hidden
            />
            <div className="min-w-0 flex-1 space-y-1">
              <Toast.Title className="line-clamp-1 text-sm font-semibold break-words text-white">
                {t.onOpen ? (
                  <button
                    type="button"
                    className="rounded text-left wrap-anywhere after:absolute after:inset-0 focus-visible:outline-2 focus-visible:outline-brand-400"
                    onClick={() => {
                      t.onOpen?.();
                      close(t.id);
                    }}
                  >
                    {t.title}
                  </button>
                ) : (
                  t.title
                )}
              </Toast.Title>
              {t.description && (
                <Toast.Description className="line-clamp-2 text-sm break-words text-zinc-300">
                  {t.description}
                </Toast.Description>
              )}
            </div>
            <Toast.Close
              aria-label="Close"
              className="absolute top-3 right-3 z-10 rounded-md p-1 text-zinc-400 transition hover:bg-zinc-800 hover:text-white focus-visible:outline-2 focus-visible:outline-brand-400"
            >
              <X className="size-4" aria-hidden />
            </Toast.Close>
          </Toast.Root>
        ))}
        <Toast.Viewport
          hotkey={[...TOAST_CONFIG.hotkey]}
          className="pointer-events-none fixed inset-x-0 top-16 z-[100] m-0 flex max-h-[calc(100dvh-4rem)] md:max-h-dvh list-none flex-col gap-2 p-4 outline-none md:top-auto md:right-0 md:bottom-0 md:left-auto md:w-[400px] md:flex-col-reverse md:p-6"
        />
      </Toast.Provider>
    </ToastContext.Provider>
  );
}
