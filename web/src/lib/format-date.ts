import { differenceInMilliseconds, format, formatDistance } from 'date-fns';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How a notification's time reads (docs/product-spec.md §2): 'Just now' without a timestamp,
 * relative wording such as 'about 3 hours ago' under 24 hours, otherwise a date
 * such as 'Jan 5, 2025'.
 */
export function formatNotificationTime(date: Date | null, now: Date = new Date()): string {
  if (!date) return 'Just now';
  if (differenceInMilliseconds(now, date) < DAY_MS) {
    return formatDistance(date, now, { addSuffix: true });
  }
  return format(date, 'MMM d, yyyy');
}

/** A calendar date for lists and profile details, such as 'Jan 5, 2025'. */
export function formatDate(date: Date): string {
  return format(date, 'MMM d, yyyy');
}

/** A date and time for deadlines, such as 'Jan 5, 2025, 3:04 PM'. */
export function formatDateTime(date: Date): string {
  return format(date, 'MMM d, yyyy, h:mm a');
}
