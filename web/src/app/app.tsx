import type { ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation, useParams } from 'react-router';
import { PageLayout } from '@/components/layout/page-layout';
import { ToastProvider } from '@/components/ui/toaster';
import { AuthPage } from '@/features/auth/components/auth-page';
import { LandingPage } from '@/features/mentors/components/landing-page';
import { MentorDirectory } from '@/features/mentors/components/mentor-directory';
import { MentorPage } from '@/features/mentors/components/mentor-page';
import { useCategories } from '@/features/mentors/api/mentors-api';
import { NotificationsPage } from '@/features/notifications/components/notifications-page';
import { NotificationsProvider } from '@/features/notifications/components/notifications-provider';
import { ProfilePage } from '@/features/profile/components/profile-page';
import { PushSettings } from '@/features/push/components/push-settings';
import { RequestForm } from '@/features/requests/components/request-form';
import { RequestsPage } from '@/features/requests/components/requests-page';
import { CurrencyProvider } from '@/features/currency/components/currency-provider';
import { SessionProvider } from '@/features/auth/components/session-provider';
import { useSession } from '@/lib/session';
import { signInPath } from '@/lib/sign-in';
import { HeaderActions } from './header-actions';
import { NotFoundPage } from './routes/not-found';
import { RequestRoute } from './routes/request-route';

/** Its children when signed in; else the sign-in page, which comes back here. */
function SignedIn({ children }: { children: ReactNode }) {
  const { user, loading } = useSession();
  const location = useLocation();
  if (loading) return null;
  return user ? children : <Navigate to={signInPath(location.pathname + location.search)} replace />;
}

function Profile() {
  const categories = useCategories();
  return <ProfilePage categories={categories} extra={<PushSettings />} />;
}

function Mentor() {
  const { id = '' } = useParams();
  const categories = useCategories();
  return <MentorPage id={id} categories={categories} action={(mentor) => <RequestForm mentor={mentor} />} />;
}

function Shell() {
  const { user } = useSession();
  return (
    <CurrencyProvider>
      <NotificationsProvider uid={user?.uid ?? null}>
        <Routes>
          <Route element={<PageLayout actions={<HeaderActions />} />}>
            <Route index element={<MentorDirectory />} />
            <Route path="landing/*" element={<LandingPage />} />
            <Route path="auth" element={<AuthPage />} />
            <Route
              path="profile"
              element={
                <SignedIn>
                  <Profile />
                </SignedIn>
              }
            />
            <Route path="mentors/:id" element={<Mentor />} />
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
