import { useCallback } from 'react';
import { useNavigate } from 'react-router';
import { markNotificationRead } from '../api/notifications-api';
import type { AppNotification } from '../notification-rules';

/** Opens a notification (docs/product-spec.md §2): marks it read and follows its link if it has one. */
export function useOpenNotification() {
  const navigate = useNavigate();
  return useCallback(
    (n: AppNotification) => {
      if (!n.read) void markNotificationRead(n.id);
      if (n.link) void navigate(n.link);
    },
    [navigate],
  );
}
