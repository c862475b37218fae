import { WifiOff } from 'lucide-react';
import { useSyncExternalStore } from 'react';

function subscribe(onChange: () => void) {
  window.addEventListener('online', onChange);
  window.addEventListener('offline', onChange);
  return () => {
    window.removeEventListener('online', onChange);
    window.removeEventListener('offline', onChange);
  };
}

/** Whether the browser says it is online, live. */
export function useOnline(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => navigator.onLine,
    () => true,
  );
}

/** A strip under the top bar while the browser is offline: what still works and what waits. */
export function OfflineBanner() {
  if (useOnline()) return null;
  return (
    <div
      role="status"
      className="sticky top-16 z-30 border-b border-amber-400/20 bg-amber-950/90 text-amber-100 backdrop-blur"
    >
      <p className="mx-auto flex max-w-7xl items-center gap-2 px-4 py-2 text-sm sm:px-6 lg:px-8">
        <WifiOff className="size-4 shrink-0" aria-hidden />
        <span>
          <strong className="font-semibold">You are offline.</strong> Comments you write are kept on this
          device and sent when you reconnect.
        </span>
      </p>
    </div>
  );
}
