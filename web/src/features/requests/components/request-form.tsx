import { Film, Upload } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { PriceNote } from '@/components/price-note';
import { useSession } from '@/lib/session';
import { signInPath } from '@/lib/sign-in';
import type { PublicMentor } from '@/types/user';
import { createFeedbackRequest, startCheckout } from '../api/requests-api';
import { checkVideo } from '../request-rules';

const input =
  'w-full rounded-lg border border-zinc-700 bg-zinc-950 px-3 py-2 text-sm text-white placeholder:text-zinc-500 focus:border-brand-500 focus:ring-2 focus:ring-brand-500/30 focus:outline-none';

const panel = 'rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 text-sm';

/**
 * Request feedback from a mentor: a rate card, a video, a title and a
 * description; sending it opens Stripe Checkout to pay the rate card in the
 * chosen currency. Signed-out visitors are asked to sign in (and come back
 * here); a mentor who cannot take payments cannot be booked.
 */
export function RequestForm({ mentor }: { mentor: PublicMentor }) {
  const { user, profile } = useSession();
  const { currency, formatPrice } = useCurrency();
  const toast = useToast();
  const location = useLocation();
  const navigate = useNavigate();
  const [card, setCard] = useState(0);
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [video, setVideo] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);

  const name = mentor.name || mentor.displayName;
  if (user && user.uid === mentor.id) {
    return (
      <p className={`${panel} text-zinc-300`}>
        This is your mentor page: people request feedback from you here.
      </p>
    );
  }
  if (!mentor.bookable) {
    return (
      <p className={`${panel} text-zinc-300`}>
        {name} has not set up payouts yet, so they cannot take paid requests. Check back soon.
      </p>
    );
  }
  if (!user) {
    return (
      <div className={`${panel} space-y-3 text-zinc-300`}>
        <h2 className="font-semibold text-white">Request feedback</h2>
        <p>Sign in or create an account to send {name} a video. You will come right back here.</p>
        <Link
          to={signInPath(location.pathname)}
          className="block rounded-lg bg-brand-600 px-4 py-2.5 text-center font-medium text-white transition hover:bg-brand-500"
        >
          Sign in to request feedback
        </Link>
      </div>
    );
  }
  const cards = mentor.rateCards ?? [];
  const chosen = cards[card];

  function choose(file: File | undefined) {
    if (!file) return;
    const problem = checkVideo(file);
    if (problem) {
      toast({ title: 'That video cannot be sent', description: problem });
      return;
    }
    setVideo(file);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!chosen || !video || progress !== null) return;
    setProgress(0);
    let id: string;
    try {
      id = await createFeedbackRequest(
        user,
        {
          mentor,
          requesterName: profile?.name || user?.displayName || user?.email || 'Someone',
          rateCard: chosen,
          currency,
          title,
          description,
          video,
        },
        setProgress,
      );
    } catch {
      setProgress(null);
      toast({ title: 'Your request was not sent', description: 'Check your connection and try again.' });
      return;
    }
    try {
      window.location.assign(await startCheckout(user, id));
    } catch (err) {
      toast({
        title: 'Your request is saved, but payment could not start',
        description: err instanceof Error ? err.message : 'Pay from the request page.',
      });
      navigate(`/requests/${id}`);
    }
  }

  return (
    <form
      onSubmit={(e) => void submit(e)}
      aria-label="Request feedback"
      className="space-y-5 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6"
    >
      <h2 className="font-semibold text-white">Request feedback</h2>
      <fieldset className="space-y-2">
        <legend className="mb-2 text-sm text-zinc-300">Video length</legend>
        <div className="grid grid-cols-2 gap-2">
          {cards.map((c, i) => (
            <label
              key={c.duration}
              className={cn(
                'cursor-pointer rounded-xl border px-3 py-2.5 transition has-focus-visible:ring-2 has-focus-visible:ring-brand-500/40',
                i === card ? 'border-brand-500 bg-brand-500/10' : 'border-zinc-800 hover:border-zinc-700',
              )}
            >
              <input
                type="radio"
                name="rate-card"
                className="sr-only"
                checked={i === card}
                onChange={() => setCard(i)}
              />
              <span className="block text-xs text-zinc-400">{c.duration}</span>
              <span className="block font-semibold text-white">{formatPrice(c.price)}</span>
            </label>
          ))}
        </div>
        <PriceNote />
      </fieldset>
      <label className="block space-y-1.5 text-sm text-zinc-300">
        <span>Title</span>
        <input
          className={input}
          required
          maxLength={120}
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          placeholder="What should they look at?"
        />
      </label>
      <label className="block space-y-1.5 text-sm text-zinc-300">
        <span>Description</span>
        <textarea
          className={cn(input, 'min-h-24')}
          maxLength={2000}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          placeholder="Context, what you are working on, what kind of feedback helps"
        />
      </label>
      <label className="flex cursor-pointer items-center gap-3 rounded-xl border border-dashed border-zinc-700 px-4 py-4 text-sm text-zinc-300 hover:border-zinc-600 hover:bg-zinc-900">
        {video ? (
          <Film className="size-5 text-brand-400" aria-hidden />
        ) : (
          <Upload className="size-5" aria-hidden />
        )}
        <span className="min-w-0 flex-1 truncate">{video ? video.name : 'Choose a video (up to 1 GB)'}</span>
        <input
          type="file"
          accept="video/*"
          aria-label="Video"
          className="sr-only"
          onChange={(e) => choose(e.target.files?.[0])}
        />
      </label>
      {progress !== null && (
        <div className="space-y-1">
          <div
            role="progressbar"
            aria-label="Upload progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={Math.round(progress * 100)}
            className="h-2 overflow-hidden rounded-full bg-zinc-800"
          >
            <div className="h-full bg-brand-500 transition-all" style={{ width: `${progress * 100}%` }} />
          </div>
          <p className="text-xs text-zinc-400">Uploading… {Math.round(progress * 100)}%</p>
        </div>
      )}
      <button
        type="submit"
        disabled={!chosen || !video || !title.trim() || progress !== null}
        className="w-full rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white transition hover:bg-brand-500 disabled:cursor-not-allowed disabled:opacity-50"
      >
        {chosen ? `Send and pay · ${formatPrice(chosen.price)}` : 'Send and pay'}
      </button>
    </form>
  );
}
