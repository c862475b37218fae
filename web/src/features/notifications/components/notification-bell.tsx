import * as DropdownMenu from '@radix-ui/react-dropdown-menu';
import { Bell } from 'lucide-react';
import { Link } from 'react-router';
import { markAllNotificationsRead } from '../api/notifications-api';
import { useOpenNotification } from '../hooks/use-open-notification';
import { badgeText, bellView, unreadCount, type AppNotification } from '../notification-rules';
import { NotificationItem } from './notification-item';

/** The bell of the top bar with its unread badge and dropdown (docs/product-spec.md §2). */
export function NotificationBell({ items }: { items: AppNotification[] }) {
  const open = useOpenNotification();
  const unread = unreadCount(items);
  const badge = badgeText(unread);
  const { shown, viewAll } = bellView(items);
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger
        aria-label={unread ? `Notifications, ${unread} unread` : 'Notifications'}
        className="relative grid size-9 place-items-center rounded-lg text-zinc-300 transition hover:bg-zinc-800 hover:text-white focus-visible:outline-2 focus-visible:outline-brand-400"
      >
        <Bell className="size-5" aria-hidden />
        {badge && (
          <span
            data-testid="unread-badge"
            className="absolute -top-0.5 -right-0.5 grid h-[18px] min-w-[18px] place-items-center rounded-full bg-rose-500 px-1 text-[10px] leading-none font-bold text-white ring-2 ring-zinc-950"
          >
            {badge}
          </span>
        )}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={8}
          collisionPadding={8}
          className="z-50 w-[min(24rem,calc(100vw-1rem))] rounded-xl border border-zinc-800 bg-zinc-900 p-1.5 shadow-2xl shadow-black/60"
        >
          <div className="flex items-center justify-between gap-2 px-3 pt-2 pb-2">
            <div className="flex items-center gap-2">
              <DropdownMenu.Label className="text-sm font-semibold text-white">
                Notifications
              </DropdownMenu.Label>
              {unread > 0 && (
                <span className="rounded-full bg-brand-500/20 px-2 py-0.5 text-xs font-medium text-brand-400">
                  {unread} new
                </span>
              )}
            </div>
            {unread > 0 && (
              <DropdownMenu.Item
                onSelect={(e) => {
                  e.preventDefault();
                  void markAllNotificationsRead(items);
                }}
                className="cursor-pointer rounded-md px-2 py-1 text-xs font-medium text-brand-400 outline-none hover:bg-zinc-800 data-[highlighted]:bg-zinc-800"
              >
                Mark all as read
              </DropdownMenu.Item>
            )}
          </div>
          <DropdownMenu.Separator className="mb-1 h-px bg-zinc-800" />
          {shown.length === 0 ? (
            <p className="px-3 py-8 text-center text-sm text-zinc-400">You have no notifications</p>
          ) : (
            shown.map((n) => (
              <DropdownMenu.Item
                key={n.id}
                onSelect={() => open(n)}
                className="cursor-pointer rounded-lg outline-none data-[highlighted]:ring-1 data-[highlighted]:ring-zinc-700"
              >
                <NotificationItem item={n} />
              </DropdownMenu.Item>
            ))
          )}
          {viewAll && (
            <>
              <DropdownMenu.Separator className="my-1 h-px bg-zinc-800" />
              <DropdownMenu.Item asChild>
                <Link
                  to="/notifications"
                  className="block rounded-lg px-3 py-2 text-center text-sm font-medium text-brand-400 outline-none data-[highlighted]:bg-zinc-800"
                >
                  View all notifications
                </Link>
              </DropdownMenu.Item>
            </>
          )}
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
