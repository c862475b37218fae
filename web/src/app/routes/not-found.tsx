import { Link } from 'react-router';

/** Any unknown path. */
export function NotFoundPage() {
  return (
    <section className="space-y-3 py-16 text-center">
      <p className="text-sm font-medium text-brand-400">404</p>
      <h1 className="text-2xl font-semibold text-white">This page does not exist</h1>
      <Link to="/" className="text-brand-400 underline-offset-4 hover:underline">
        Back home
      </Link>
    </section>
  );
}
