import type { ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { PageLayout } from '@/components/layout/page-layout';
import { ToastProvider } from '@/components/ui/toaster';
import { NotificationsProvider } from '@/features/notifications/components/notifications-provider';
import { CurrencyProvider } from '@/features/currency/components/currency-provider';
import { SessionProvider } from '@/features/auth/components/session-provider';
import { useSession } from '@/lib/session';
import { signInPath } from '@/lib/sign-in';
import { HeaderActions } from './header-actions';
import { usePrefetchLinks } from './prefetch';
import { pages, retryFailedPages } from './routes/pages';

/** Its children when signed in; else the sign-in page, which comes back here. */
function SignedIn({ children }: { children: ReactNode }) {
  const { user, loading } = useSession();
  const location = useLocation();
  if (loading) return null;
  return user ? children : <Navigate to={signInPath(location.pathname + location.search)} replace />;
}

const {
  directory: { Component: MentorDirectory },
  landing: { Component: LandingPage },
  auth: { Component: AuthPage },
  profile: { Component: ProfileRoute },
  mentor: { Component: MentorRoute },
  requests: { Component: RequestsPage },
  request: { Component: RequestRoute },
  notifications: { Component: NotificationsPage },
  notFound: { Component: NotFoundPage },
} = pages;

function Shell() {
  const { user } = useSession();
  usePrefetchLinks();
  return (
    <CurrencyProvider>
      <NotificationsProvider uid={user?.uid ?? null}>
        <Routes>
          <Route element={<PageLayout actions={<HeaderActions />} onRetry={retryFailedPages} />}>
            <Route index element={<MentorDirectory />} />
            <Route path="landing/*" element={<LandingPage />} />
            <Route path="auth" element={<AuthPage />} />
            <Route
              path="profile"
              element={
                <SignedIn>
                  <ProfileRoute />
                </SignedIn>
              }
            />
            <Route path="mentors/:id" element={<MentorRoute />} />
            <Route
              path="requests"
              element={
                <SignedIn>
                  <RequestsPage />
                </SignedIn>
              }
            />
            <Route
              path="requests/:id"
              element={
                <SignedIn>
                  <RequestRoute />
                </SignedIn>
              }
            />
            <Route
              path="notifications"
              element={
                <SignedIn>
                  <NotificationsPage />
                </SignedIn>
              }
            />
            <Route path="*" element={<NotFoundPage />} />
          </Route>
        </Routes>
      </NotificationsProvider>
    </CurrencyProvider>
  );
}

/** The app: toasts, the session, currency and notifications around the routes. */
export function App() {
  return (
    <ToastProvider>
      <SessionProvider>
        <Shell />
      </SessionProvider>
    </ToastProvider>
  );
}
