import { createContext, useContext, useEffect, useRef, type ReactNode } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { useNotificationList } from '../api/notifications-api';
import { batchCount, type AppNotification } from '../notification-rules';
import { useOpenNotification } from '../hooks/use-open-notification';

interface NotificationsState {
  items: AppNotification[];
  loading: boolean;
}

const NotificationsContext = createContext<NotificationsState>({ items: [], loading: false });

/**
 * Keeps the signed-in user's notifications live. The first snapshot is
 * silent; a notification that arrives later raises a toast (docs/product-spec.md §4), and so
 * does an unread batch that grows (another comment joined it). Clicking a
 * toast opens its notification, as clicking it in the bell does.
 */
export function NotificationsProvider({ uid, children }: { uid: string | null; children: ReactNode }) {
  const toast = useToast();
  const open = useOpenNotification();
  const { data: items, loading } = useNotificationList(uid);
  // What the previous snapshot held for this uid: id → batch size.
  const seen = useRef<{ uid: string; counts: Map<string, number> } | null>(null);

  useEffect(() => {
    if (!uid || loading) return;
    const before = seen.current?.uid === uid ? seen.current.counts : null;
    seen.current = { uid, counts: new Map(items.map((n) => [n.id, batchCount(n)])) };
    if (!before) return;
    // Oldest first, as they arrived.
    for (const n of [...items].reverse()) {
      const was = before.get(n.id);
      if (n.read || (was !== undefined && was >= batchCount(n))) continue;
      toast({ title: n.title, description: n.message, onOpen: () => open(n) });
    }
  }, [uid, loading, items, toast, open]);

  return <NotificationsContext.Provider value={{ items, loading }}>{children}</NotificationsContext.Provider>;
}

/** The live notifications of the signed-in user. */
export function useNotifications(): NotificationsState {
  return useContext(NotificationsContext);
}
