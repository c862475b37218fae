/** A notification as the app shows it (docs/product-spec.md §3). */
export interface AppNotification {
  id: string;
  userId: string;
  type: string;
  title: string;
  message: string;
  data: Record<string, unknown>;
  read: boolean;
  createdAt: Date | null;
  link?: string;
}

/** Items the bell's dropdown shows (docs/product-spec.md §9). */
export const BELL_LIMIT = 5;
/** Items the live query reads (docs/product-spec.md §9). */
export const QUERY_LIMIT = 50;

/** The unread badge: nothing at 0, the count up to 9, then '9+'. */
export function badgeText(unread: number): string | null {
  if (unread <= 0) return null;
  return unread > 9 ? '9+' : String(unread);
}

/** What the bell's dropdown lists and whether it links to the full list. */
export function bellView(items: AppNotification[]): { shown: AppNotification[]; viewAll: boolean } {
  return { shown: items.slice(0, BELL_LIMIT), viewAll: items.length > BELL_LIMIT };
}

/** Notifications not yet read. */
export function unreadCount(items: AppNotification[]): number {
  return items.filter((n) => !n.read).length;
}

/**
 * How many events a notification stands for: comments by one person on one
 * request within a few minutes come as one notification (data.count, set by
 * the fan-out function); 1 for any other.
 */
export function batchCount(n: Pick<AppNotification, 'data'>): number {
  const count = n.data.count;
  return typeof count === 'number' && count > 1 ? count : 1;
}
