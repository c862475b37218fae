import { ScanSearch } from 'lucide-react';
import { Link } from 'react-router';

/** The Loupe wordmark, linking home. */
export function Logo() {
  return (
    <Link
      to="/"
      className="flex items-center gap-2 rounded-md text-lg font-semibold tracking-tight text-white focus-visible:outline-2 focus-visible:outline-brand-400"
    >
      <span className="grid size-8 place-items-center rounded-lg bg-brand-600 shadow-lg shadow-brand-600/30">
        <ScanSearch className="size-5" aria-hidden />
      </span>
      Loupe
    </Link>
  );
}
