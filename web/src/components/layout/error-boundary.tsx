import { RotateCw, WifiOff } from 'lucide-react';
import { Component, type ErrorInfo, type ReactNode } from 'react';
import { Button } from '@/components/ui/button';
import { useOnline } from './offline-banner';

/** Whether an error is a page's code that could not be fetched (offline, or a stale deploy). */
export function isChunkLoadError(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /dynamically imported module|Importing a module script failed|error loading dynamically imported module|Failed to fetch/i.test(
    message,
  );
}

/** What a failed page shows instead of itself: what happened and a way back. */
function Failed({ error, onRetry }: { error: Error; onRetry: () => void }) {
  const online = useOnline();
  const chunk = isChunkLoadError(error);
  return (
    <section role="alert" className="mx-auto max-w-md space-y-4 py-16 text-center">
      {chunk && !online ? (
        <WifiOff className="mx-auto size-8 text-amber-300" aria-hidden />
      ) : (
        <RotateCw className="mx-auto size-8 text-zinc-400" aria-hidden />
      )}
      <h1 className="text-xl font-semibold text-white">This page could not load</h1>
      <p className="text-sm text-zinc-300">
        {chunk
          ? online
            ? 'Loupe could not fetch this page. Check your connection and try again.'
            : 'You are offline, so Loupe could not fetch this page. Try again once you are back online.'
          : 'Something went wrong while showing this page. Try again, or go back home.'}
      </p>
      <div className="flex justify-center gap-2">
        <Button variant="primary" onClick={onRetry} icon={<RotateCw className="size-4" aria-hidden />}>
          Try again
        </Button>
        <Button variant="ghost" onClick={() => window.location.assign('/')}>
          Home
        </Button>
      </div>
    </section>
  );
}

/**
 * Catches what its children throw while rendering (a page's code that
 * failed to load, a crash) and shows what happened with a Try again button,
 * never a blank app. Try again calls onRetry (which lets failed pages fetch
 * their code again) and renders the children afresh; a new resetKey (the
 * next route) clears the error too.
 */
export class ErrorBoundary extends Component<
  { children: ReactNode; resetKey?: string; onRetry?: () => void },
  { error: Error | null; key?: string }
> {
  state: { error: Error | null; key?: string } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  static getDerivedStateFromProps(
    props: { resetKey?: string },
    state: { error: Error | null; key?: string },
  ): { error: Error | null; key?: string } | null {
    if (props.resetKey === state.key) return null;
    return { error: null, key: props.resetKey };
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('A page failed:', error, info.componentStack);
  }

  retry = () => {
    this.props.onRetry?.();
    this.setState({ error: null });
  };

  render() {
    if (this.state.error) return <Failed error={this.state.error} onRetry={this.retry} />;
    return this.props.children;
  }
}
