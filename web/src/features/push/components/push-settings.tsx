import { BellRing } from 'lucide-react';
import { useState } from 'react';
import { Button } from '@/components/ui/button';
import { useToast } from '@/components/ui/toast-context';
import { useSession } from '@/lib/session';
import { enablePush, pushSupported } from '../api/push-api';

/** The push section of /profile: a permission prompt the person starts. */
export function PushSettings() {
  const { user, profile } = useSession();
  const toast = useToast();
  const [state, setState] = useState<'idle' | 'busy' | 'on'>(profile?.fcmToken ? 'on' : 'idle');
  if (!user) return null;
  const uid = user.uid;
  async function enable() {
    setState('busy');
    try {
      await enablePush(uid, (m) => toast({ title: m.title, description: m.body }));
      setState('on');
      toast({ title: 'Push notifications are on' });
    } catch (err) {
      console.error('Push token error:', err);
      setState('idle');
      toast({
        tone: 'error',
        title: 'Could not turn on push notifications',
        description: err instanceof Error ? err.message : undefined,
      });
    }
  }
  return (
    <section className="flex flex-wrap items-center justify-between gap-3 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6">
      <span className="flex items-start gap-3">
        <BellRing className="mt-0.5 size-5 text-brand-400" aria-hidden />
        <span>
          <span className="block font-semibold text-white">Push notifications</span>
          <span className="text-sm text-zinc-400">
            {pushSupported()
              ? 'Hear about new requests and feedback even when Loupe is closed.'
              : 'This browser cannot receive push notifications.'}
          </span>
        </span>
      </span>
      {pushSupported() && (
        <Button disabled={state !== 'idle'} onClick={() => void enable()}>
          {state === 'on' ? 'Enabled' : state === 'busy' ? 'Asking…' : 'Enable'}
        </Button>
      )}
    </section>
  );
}
