import { Link, useLocation } from 'react-router';
import { CurrencyPicker } from '@/features/currency/components/currency-picker';
import { AccountMenu } from '@/features/auth/components/account-menu';
import { NotificationBell } from '@/features/notifications/components/notification-bell';
import { useNotifications } from '@/features/notifications/components/notifications-provider';
import { useCurrency } from '@/lib/currency/currency-context';
import { useSession } from '@/lib/session';
import { signInPath } from '@/lib/sign-in';

/**
 * The right side of the top bar (docs/product-spec.md §2): picker, then Sign In (except on
 * /auth itself) or bell and avatar menu.
 */
export function HeaderActions() {
  const session = useSession();
  const onAuth = useLocation().pathname === '/auth';
  const { currency, setCurrency } = useCurrency();
  const { items } = useNotifications();
  const location = useLocation();
  return (
    <>
      <CurrencyPicker value={currency} onChange={(code) => void setCurrency(code).catch(() => undefined)} />
      {session.loading ? null : session.user ? (
        <>
          <NotificationBell items={items} />
          <AccountMenu session={session} />
        </>
      ) : onAuth ? null : (
        <Link
          to={signInPath(location.pathname + location.search)}
          className="rounded-lg bg-brand-600 px-4 py-2 text-sm font-medium text-white shadow-sm transition hover:bg-brand-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-400"
        >
          Sign In
        </Link>
      )}
    </>
  );
}
