import { doc, serverTimestamp, updateDoc } from 'firebase/firestore';
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { firebase } from '@/lib/firebase';
import { useSession } from '@/lib/session';
import { detectBrowserCurrency } from './detect';
import { formatAmount } from './format';
import { createRates } from './rates';

/** The storage key of a signed-out visitor's currency. */
export const CURRENCY_STORAGE_KEY = 'currency';

interface CurrencyState {
  currency: string;
  /** Changes the currency: saved to the profile when signed in, locally otherwise. */
  setCurrency: (code: string) => Promise<void>;
  /** Formats a USD amount in the chosen currency. */
  formatPrice: (usd: number) => string;
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
  const [rate, setRate] = useState<{ code: string; value: number }>({ code: 'USD', value: 1 });
  const currency = (user && profile?.preferredCurrency) || local;

  useEffect(() => {
    let live = true;
    void rates.rate('USD', currency).then((value) => live && setRate({ code: currency, value }));
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

  const value = useMemo<CurrencyState>(
    () => ({
      currency,
      setCurrency,
      formatPrice: (usd) =>
        formatAmount(
          usd * (rate.code === currency ? rate.value : 1),
          rate.code === currency ? currency : 'USD',
        ),
    }),
    [currency, setCurrency, rate],
  );
  return <CurrencyContext.Provider value={value}>{children}</CurrencyContext.Provider>;
}

/** The chosen currency and a price formatter. */
export function useCurrency(): CurrencyState {
  const value = useContext(CurrencyContext);
  if (!value) throw new Error('useCurrency must be used inside CurrencyProvider');
  return value;
}
