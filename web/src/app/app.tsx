import type { ReactNode } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { PageLayout } from '@/components/layout/page-layout';
import { ToastProvider } from '@/components/ui/toaster';
import { AuthPage } from '@/features/auth/components/auth-page';
import { LandingPage } from '@/features/mentors/components/landing-page';
import { MentorDirectory } from '@/features/mentors/components/mentor-directory';
import { useCategories } from '@/features/mentors/api/mentors-api';
import { NotificationsPage } from '@/features/notifications/components/notifications-page';
import { NotificationsProvider } from '@/features/notifications/components/notifications-provider';
import { ProfilePage } from '@/features/profile/components/profile-page';
import { PushSettings } from '@/features/push/components/push-settings';
import { CurrencyProvider } from '@/lib/currency/currency-provider';
import { SessionProvider, useSession } from '@/lib/session';
import { HeaderActions } from './header-actions';
import { NotFoundPage } from './routes/not-found';

function SignedIn({ children }: { children: ReactNode }) {
  const { user, loading } = useSession();
  if (loading) return null;
  return user ? children : <Navigate to="/auth" replace />;
}

function Profile() {
  const categories = useCategories();
  return <ProfilePage categories={categories} extra={<PushSettings />} />;
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
            <Route path="profile" element={<Profile />} />
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
