import { doc, serverTimestamp, updateDoc } from 'firebase/firestore';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { firebase } from '@/lib/firebase';
import { useSession } from '@/lib/session';
import { detectBrowserCurrency } from './detect';
import { formatPrice, type KnownRate } from './format';
import { createRates } from './rates';

/** The storage key of a signed-out visitor's currency. */
export const CURRENCY_STORAGE_KEY = 'currency';

interface CurrencyState {
  currency: string;
  /** Changes the currency: saved to the profile when signed in, locally otherwise. */
  setCurrency: (code: string) => Promise<void>;
  /**
   * Formats a USD amount in the chosen currency; in USD while the rate loads
   * and when rates are unavailable (never a wrong conversion).
   */
  formatPrice: (usd: number) => string;
  /** True when the chosen currency cannot be shown because rates are unavailable. */
  ratesUnavailable: boolean;
}

const CurrencyContext = createContext<CurrencyState | null>(null);
const rates = createRates();

function storedCurrency(): string | null {
  try {
    return localStorage.getItem(CURRENCY_STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Provides the chosen currency and price formatting (spec §6, §7, §9). */
export function CurrencyProvider({ children }: { children: ReactNode }) {
  const { user, profile } = useSession();
  const [local, setLocal] = useState<string>(() => storedCurrency() ?? detectBrowserCurrency());
  const [rate, setRate] = useState<KnownRate>({ code: 'USD', rate: 1, live: true });
  const currency = (user && profile?.preferredCurrency) || local;

  useEffect(() => {
    let live = true;
    void rates.quote('USD', currency).then((q) => live && setRate({ code: currency, ...q }));
    return () => {
      live = false;
    };
  }, [currency]);

  const setCurrency = useCallback(
    async (code: string) => {
      setLocal(code);
      if (!user) {
        try {
          localStorage.setItem(CURRENCY_STORAGE_KEY, code);
        } catch {
          // private mode: the choice lasts for this page
        }
        return;
      }
      try {
        await updateDoc(doc(firebase().db, 'users', user.uid), {
          preferredCurrency: code,
          updatedAt: serverTimestamp(),
        });
      } catch (err) {
        console.error('Failed to update currency preference:', err);
        throw err;
      }
    },
    [user],
  );

  const value = useMemo<CurrencyState>(() => {
    return {
      currency,
      setCurrency,
      formatPrice: (usd) => formatPrice(usd, currency, rate),
      ratesUnavailable: rate.code === currency && !rate.live,
    };
  }, [currency, setCurrency, rate]);
  return <CurrencyContext.Provider value={value}>{children}</CurrencyContext.Provider>;
}

/** The chosen currency and a price formatter. */
export function useCurrency(): CurrencyState {
  const value = useContext(CurrencyContext);
  if (!value) throw new Error('useCurrency must be used inside CurrencyProvider');
  return value;
}
