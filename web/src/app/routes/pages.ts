import { createElement, lazy, type ComponentType } from 'react';
import { matchPath } from 'react-router';

/** A route's page: its code is loaded on first render, or earlier by load() (prefetch). */
export interface Page {
  path: string;
  load: () => Promise<ComponentType>;
  Component: ComponentType;
  /** After its code failed to load (offline), lets the next render fetch it again. */
  retry: () => void;
}

function page<M>(path: string, importer: () => Promise<M>, pick: (m: M) => ComponentType): Page {
  // One fetch at a time; a failed one is forgotten so that the next load fetches again.
  let loading: Promise<ComponentType> | null = null;
  const load = () => {
    if (!loading) {
      const started = importer().then(pick);
      started.catch(() => {
        if (loading === started) loading = null;
      });
      loading = started;
    }
    return loading;
  };
  // React.lazy keeps a failure for good, so a failed page gets a new lazy component on retry.
  let failed = false;
  const fresh = () =>
    lazy(() =>
      load().then(
        (c) => ({ default: c }),
        (err: unknown) => {
          failed = true;
          throw err;
        },
      ),
    );
  let Lazy = fresh();
  return {
    path,
    load,
    Component: () => createElement(Lazy),
    retry: () => {
      if (!failed) return;
      failed = false;
      Lazy = fresh();
    },
  };
}

/**
 * Every page of the app, each in its own chunk (route-level code splitting),
 * with the path it answers (react-router patterns).
 */
export const pages = {
  directory: page(
    '/',
    () => import('@/features/mentors/components/mentor-directory'),
    (m) => m.MentorDirectory,
  ),
  landing: page(
    '/landing/*',
    () => import('@/features/mentors/components/landing-page'),
    (m) => m.LandingPage,
  ),
  auth: page(
    '/auth',
    () => import('@/features/auth/components/auth-page'),
    (m) => m.AuthPage,
  ),
  profile: page(
    '/profile',
    () => import('./profile-route'),
    (m) => m.ProfileRoute,
  ),
  mentor: page(
    '/mentors/:id',
    () => import('./mentor-route'),
    (m) => m.MentorRoute,
  ),
  requests: page(
    '/requests',
    () => import('@/features/requests/components/requests-page'),
    (m) => m.RequestsPage,
  ),
  request: page(
    '/requests/:id',
    () => import('./request-route'),
    (m) => m.RequestRoute,
  ),
  notifications: page(
    '/notifications',
    () => import('@/features/notifications/components/notifications-page'),
    (m) => m.NotificationsPage,
  ),
  notFound: page(
    '*',
    () => import('./not-found'),
    (m) => m.NotFoundPage,
  ),
};

/** Lets every page whose code failed to load fetch it again on its next render. */
export function retryFailedPages(): void {
  Object.values(pages).forEach((p) => p.retry());
}

/** The page a path shows, or null for a path outside the app's routes. */
export function pageFor(pathname: string): Page | null {
  return Object.values(pages).find((p) => p.path !== '*' && matchPath(p.path, pathname)) ?? null;
}
