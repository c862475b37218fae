import { createContext, useContext } from 'react';

/** The chosen currency and how prices read in it (features/currency provides it). */
export interface CurrencyState {
  currency: string;
  /** Changes the currency: saved to the profile when signed in, locally otherwise. */
  setCurrency: (code: string) => Promise<void>;
  /**
   * Formats a USD amount in the chosen currency; in USD while the rate loads
   * and when rates are unavailable (never a wrong conversion).
   */
  formatPrice: (usd: number) => string;
  /** A USD amount in the currency prices are shown in, and that currency's code (USD without rates). */
  shownPrice: (usd: number) => { amount: number; code: string };
  /** True when the chosen currency cannot be shown because rates are unavailable. */
  ratesUnavailable: boolean;
}

/** Where the currency provider puts the state. */
export const CurrencyContext = createContext<CurrencyState | null>(null);

/** The chosen currency and a price formatter. */
export function useCurrency(): CurrencyState {
  const value = useContext(CurrencyContext);
  if (!value) throw new Error('useCurrency must be used inside CurrencyProvider');
  return value;
}
