import { Link, Route, Routes } from 'react-router';
import { PageLayout } from '@/components/layout/page-layout';
import { NotFoundPage } from './routes/not-found';
import { PlaceholderPage } from './routes/placeholder-page';

/** The app's routes inside the shared layout. */
export function App() {
  const actions = (
    <Link
      to="/auth"
      className="rounded-lg bg-brand-600 px-4 py-2 text-sm font-medium text-white shadow-sm transition hover:bg-brand-500 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-400"
    >
      Sign In
    </Link>
  );
  return (
    <Routes>
      <Route element={<PageLayout actions={actions} />}>
        <Route
          index
          element={
            <PlaceholderPage title="Find a mentor">
              Video feedback from people who have done it.
            </PlaceholderPage>
          }
        />
        <Route path="landing/*" element={<PlaceholderPage title="Get feedback on your videos" />} />
        <Route path="auth" element={<PlaceholderPage title="Sign in" />} />
        <Route path="profile" element={<PlaceholderPage title="Profile" />} />
        <Route path="notifications" element={<PlaceholderPage title="Notifications" />} />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
