import { formatDistanceToNowStrict } from 'date-fns';

/** 1536 → "1.5 KB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** 3725 → "1h 2m". */
export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** "3 minutes ago", or "" for an absent time. */
export function ago(time: string | number | undefined): string {
  if (time === undefined || time === '') return '';
  const d = new Date(typeof time === 'string' && /^\d+$/.test(time) ? Number(time) : time);
  return Number.isNaN(d.getTime()) ? '' : `${formatDistanceToNowStrict(d)} ago`;
}

/** A time as HH:mm:ss.SSS, for logs. */
export function clock(time: string | number): string {
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return String(time);
  return (
    d.toLocaleTimeString('en-GB', { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0')
  );
}
