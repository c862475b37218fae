import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { subscribeNotifications } from '../api/notifications-api';
import type { AppNotification } from '../notification-rules';

interface NotificationsState {
  items: AppNotification[];
  loading: boolean;
}

const NotificationsContext = createContext<NotificationsState>({ items: [], loading: false });

/**
 * Keeps the signed-in user's notifications live. The first snapshot is
 * silent; notifications that arrive later raise a toast (spec §4).
 */
export function NotificationsProvider({ uid, children }: { uid: string | null; children: ReactNode }) {
  const toast = useToast();
  const [state, setState] = useState<{ uid: string | null; items: AppNotification[] }>({
    uid: null,
    items: [],
  });

  useEffect(() => {
    if (!uid) return;
    return subscribeNotifications(
      uid,
      (items, added) => {
        setState({ uid, items });
        for (const n of added) toast({ title: n.title, description: n.message });
      },
      (err) => console.error('Failed to load notifications:', err),
    );
  }, [uid, toast]);

  const value = { items: state.uid === uid ? state.items : [], loading: !!uid && state.uid !== uid };
  return <NotificationsContext.Provider value={value}>{children}</NotificationsContext.Provider>;
}

/** The live notifications of the signed-in user. */
export function useNotifications(): NotificationsState {
  return useContext(NotificationsContext);
}
