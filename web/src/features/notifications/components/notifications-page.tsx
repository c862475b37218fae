import { CheckCheck } from 'lucide-react';
import { Button, focusRing } from '@/components/ui/button';
import { markAllNotificationsRead } from '../api/notifications-api';
import { unreadCount } from '../notification-rules';
import { useOpenNotification } from '../hooks/use-open-notification';
import { NotificationItem } from './notification-item';
import { useNotifications } from './notifications-provider';

/** /notifications: every notification, mark one or all as read. */
export function NotificationsPage() {
  const { items, loading } = useNotifications();
  const open = useOpenNotification();
  const unread = unreadCount(items);
  return (
    <section className="mx-auto max-w-2xl space-y-6">
      <header className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight text-white sm:text-3xl">Notifications</h1>
          <p className="mt-1 text-sm text-zinc-400">
            {unread > 0 ? `${unread} new` : 'You are all caught up.'}
          </p>
        </div>
        {unread > 0 && (
          <Button
            onClick={() => void markAllNotificationsRead(items)}
            icon={<CheckCheck className="size-4" aria-hidden />}
          >
            Mark all as read
          </Button>
        )}
      </header>
      <div className="divide-y divide-zinc-800/70 overflow-hidden rounded-2xl border border-zinc-800 bg-zinc-900/60">
        {loading ? (
          <p className="px-4 py-10 text-center text-sm text-zinc-400">Loading…</p>
        ) : items.length === 0 ? (
          <p className="px-4 py-10 text-center text-sm text-zinc-400">You have no notifications</p>
        ) : (
          items.map((n) => (
            <button
              key={n.id}
              type="button"
              onClick={() => open(n)}
              className={`block w-full text-left hover:bg-zinc-800/40 focus-visible:-outline-offset-2 ${focusRing}`}
            >
              <NotificationItem item={n} />
            </button>
          ))
        )}
      </div>
    </section>
  );
}
