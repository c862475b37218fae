import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { App } from '@/app/app';
import { ConfigError } from '@/components/layout/config-error';
import { ErrorBoundary } from '@/components/layout/error-boundary';
import { envResult } from '@/config/env';
import { registerPushWorker } from '@/features/push/api/push-api';
import { initFirebase } from '@/lib/firebase';
import { recordForcedTheme } from '@/lib/theme';
import './index.css';

recordForcedTheme();

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');
const root = createRoot(container);

if (!envResult.ok) {
  root.render(<ConfigError missing={envResult.missing} />);
} else {
  initFirebase(envResult.env);
  void registerPushWorker(envResult.env);
  // A data router (one catch-all route; App has its own <Routes>) so a page can guard leaving it (useBlocker).
  const router = createBrowserRouter([
    {
      path: '*',
      element: (
        <ErrorBoundary>
          <App />
        </ErrorBoundary>
      ),
    },
  ]);
  root.render(
    <StrictMode>
      <RouterProvider router={router} />
    </StrictMode>,
  );
}
