/** The sign-in page, asked to come back to `here` (a path of this app) afterwards. */
export function signInPath(here: string): string {
  if (!here || here === '/' || here.startsWith('/auth')) return '/auth';
  return `/auth?next=${encodeURIComponent(here)}`;
}

/**
 * Where to go once signed in: `next` when it is a path of this app (never
 * another site, never /auth itself), else home.
 */
export function afterSignIn(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next === '/auth' || next.startsWith('/auth?') || next.startsWith('/auth/')) return '/';
  return next;
}
