import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { CurrencyContext, type CurrencyState } from '@/lib/currency/currency-context';
import { formatPrice, shownPrice, type KnownRate } from '@/lib/currency/format';
import { useSession } from '@/lib/session';
import { savePreferredCurrency } from '../api/preference-api';
import { createRates } from '../api/rates-api';
import { detectBrowserCurrency } from '../detect';

/** The storage key of a signed-out visitor's currency. */
export const CURRENCY_STORAGE_KEY = 'currency';

const rates = createRates();

function storedCurrency(): string | null {
  try {
    return localStorage.getItem(CURRENCY_STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Provides the chosen currency and price formatting (docs/product-spec.md §6, §7, §9). */
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
      await savePreferredCurrency(user.uid, code);
    },
    [user],
  );

  const value = useMemo<CurrencyState>(() => {
    return {
      currency,
      setCurrency,
      formatPrice: (usd) => formatPrice(usd, currency, rate),
      shownPrice: (usd) => shownPrice(usd, currency, rate),
      ratesUnavailable: rate.code === currency && !rate.live,
    };
  }, [currency, setCurrency, rate]);
  return <CurrencyContext.Provider value={value}>{children}</CurrencyContext.Provider>;
}
