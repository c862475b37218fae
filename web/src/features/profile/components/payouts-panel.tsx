import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { Button } from '@/components/ui/button';
import { ConfirmDialog } from '@/components/ui/dialog';
import { useToast } from '@/components/ui/toast-context';
import { useSession } from '@/lib/session';
import { startPayoutOnboarding } from '../api/profile-api';

/**
 * Payouts: connected, or a button that opens Stripe's onboarding (which
 * leaves the page). With unsaved changes it asks first, and saves them
 * (save resolves true when it did) before going.
 */
export function PayoutsPanel({
  connected,
  unsaved,
  save,
}: {
  connected: boolean;
  unsaved: boolean;
  save: () => Promise<boolean>;
}) {
  const { user } = useSession();
  const toast = useToast();
  const [params] = useSearchParams();
  const [connecting, setConnecting] = useState(false);
  const [asking, setAsking] = useState(false);

  async function connect() {
    setConnecting(true);
    try {
      window.location.assign(await startPayoutOnboarding(user));
    } catch (err) {
      console.error('Payout onboarding error:', err);
      toast({ tone: 'error', title: 'Could not open payout setup', description: 'Try again in a moment.' });
      setConnecting(false);
    }
  }

  return (
    <div className="flex flex-wrap items-center justify-between gap-3 rounded-xl bg-zinc-950/60 p-4">
      <span>
        <span className="block text-sm font-medium text-white">Payouts</span>
        <span className="text-sm text-zinc-400">
          {connected
            ? 'Connected: you can receive payments.'
            : params.get('payouts') === 'retry'
              ? 'Your payout setup link expired. Connect payouts to continue.'
              : 'Not connected yet.'}
        </span>
      </span>
      {!connected && (
        <Button disabled={connecting} onClick={() => (unsaved ? setAsking(true) : void connect())}>
          {connecting ? 'Opening Stripe…' : 'Connect payouts'}
        </Button>
      )}
      <ConfirmDialog
        open={asking}
        title="Save your changes first?"
        message="You have unsaved changes to your profile. Connecting payouts takes you to Stripe, so Loupe saves them first."
        confirmLabel="Save and connect"
        cancelLabel="Keep editing"
        onConfirm={() =>
          void save().then((saved) => {
            if (saved) void connect();
          })
        }
        onClose={() => setAsking(false)}
      />
    </div>
  );
}
