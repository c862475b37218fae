import { Bell, Check, DollarSign, UserRound, type LucideIcon } from 'lucide-react';
import { cn } from '@/lib/cn';
import { formatNotificationTime } from '@/lib/format-date';
import type { AppNotification } from '../notification-rules';

const icons: Record<string, { icon: LucideIcon; tone: string }> = {
  feedback_request: { icon: UserRound, tone: 'bg-sky-500/15 text-sky-300' },
  feedback_received: { icon: Check, tone: 'bg-emerald-500/15 text-emerald-300' },
  payment_received: { icon: DollarSign, tone: 'bg-amber-500/15 text-amber-300' },
};
const fallback = { icon: Bell, tone: 'bg-zinc-700/60 text-zinc-300' };

/** One notification: icon by type, title, two-line message, time, unread dot (docs/product-spec.md §2). */
export function NotificationItem({ item, now }: { item: AppNotification; now?: Date }) {
  const { icon: Icon, tone } = icons[item.type] ?? fallback;
  return (
    <div
      data-unread={!item.read}
      className={cn(
        'flex w-full items-start gap-3 rounded-lg px-3 py-3 text-left transition',
        item.read ? 'bg-transparent' : 'bg-brand-500/10',
      )}
    >
      <span
        className={cn('mt-0.5 grid size-9 shrink-0 place-items-center rounded-full', tone)}
        data-icon={item.type}
      >
        <Icon className="size-4" aria-hidden />
      </span>
      <span className="min-w-0 flex-1">
        <span className="block truncate text-sm font-medium text-white">{item.title}</span>
        <span className="line-clamp-2 text-sm text-zinc-400">{item.message}</span>
        <span className="mt-1 block text-xs text-zinc-400">
          {formatNotificationTime(item.createdAt, now)}
        </span>
      </span>
      {!item.read && <span className="mt-2 size-2 shrink-0 rounded-full bg-brand-400" aria-label="Unread" />}
    </div>
  );
}
