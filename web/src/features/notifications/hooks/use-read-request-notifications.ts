import { useEffect } from 'react';
import { markAllNotificationsRead } from '../api/notifications-api';
import { useNotifications } from '../components/notifications-provider';

/**
 * While a request's page is open, marks read the signed-in user's unread
 * notifications about it (data.requestId, or a link to it), those that
 * arrive while it is open included: what they say is on the page.
 */
export function useReadRequestNotifications(requestId: string | null): void {
  const { items } = useNotifications();
  useEffect(() => {
    if (!requestId) return;
    const about = items.filter(
      (n) => !n.read && (n.data.requestId === requestId || n.link === `/requests/${requestId}`),
    );
    if (about.length > 0) void markAllNotificationsRead(about);
  }, [requestId, items]);
}
