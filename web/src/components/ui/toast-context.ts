import { createContext, useContext } from 'react';

/** What a toast shows. */
export interface ToastMessage {
  title: string;
  description?: string;
  /** What clicking the toast does (e.g. open the notification it shows); the toast then closes. */
  onOpen?: () => void;
  /** 'error' for something that failed: a red mark instead of the brand one. */
  tone?: 'error';
}

/** Shows a toast; available under ToastProvider. */
export type ShowToast = (toast: ToastMessage) => void;

/** Toast behaviour (docs/product-spec.md §4, §9). */
export const TOAST_CONFIG = {
  durationMs: 5000,
  swipeDirection: 'right',
  swipeThreshold: 50,
  maxKept: 100,
  hotkey: ['F8'],
} as const;

/** Toasts on screen at once; the others wait their turn, oldest first. */
export const TOASTS_VISIBLE = 3;

/** Longest title and message a toast shows (in characters); longer ones end in an ellipsis. */
export const TOAST_TEXT_LIMITS = { title: 80, description: 160 } as const;

/** Cuts text to `max` characters, ending in an ellipsis when it was longer. */
export function clampText(text: string, max: number): string {
  const chars = [...text.trim()];
  return chars.length <= max
    ? chars.join('')
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

export const ToastContext = createContext<ShowToast | null>(null);

/** The function that shows a toast. */
export function useToast(): ShowToast {
  const show = useContext(ToastContext);
  if (!show) throw new Error('useToast must be used inside ToastProvider');
  return show;
}

/** Appends a toast, keeping only the newest maxKept. */
export function appendToast<T>(list: T[], toast: T, maxKept: number = TOAST_CONFIG.maxKept): T[] {
  const next = [...list, toast];
  return next.length > maxKept ? next.slice(next.length - maxKept) : next;
}
