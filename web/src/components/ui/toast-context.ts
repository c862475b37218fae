import { createContext, useContext } from 'react';

/** What a toast shows. */
export interface ToastMessage {
  title: string;
  description?: string;
}

/** Shows a toast; available under ToastProvider. */
export type ShowToast = (toast: ToastMessage) => void;

/** Toast behaviour (spec §4, §9). */
export const TOAST_CONFIG = {
  durationMs: 5000,
  swipeDirection: 'right',
  swipeThreshold: 50,
  maxKept: 100,
  hotkey: ['F8'],
} as const;

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
