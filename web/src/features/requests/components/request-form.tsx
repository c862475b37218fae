import { Film, TriangleAlert, Upload } from 'lucide-react';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useBlocker, useLocation, useNavigate } from 'react-router';
import { useOnline } from '@/components/layout/offline-banner';
import { Button } from '@/components/ui/button';
import { ConfirmDialog } from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input, Textarea } from '@/components/ui/input';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { useCurrency } from '@/lib/currency/currency-context';
import { PriceNote } from '@/components/price-note';
import { useSession } from '@/lib/session';
import { cheapestFit, fits, validCard } from '@/lib/rate-cards';
import { signInPath } from '@/lib/sign-in';
import { formatVideoTime } from '@/lib/video-time';
import { probeVideo } from '@/lib/video-probe';
import type { PublicMentor } from '@/types/user';
import {
  createFeedbackRequest,
  isCancelled,
  startCheckout,
  startVideoUpload,
  uploadPoster,
  type VideoUpload,
} from '../api/requests-api';
import { checkVideo } from '../request-rules';

const panel = 'rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 text-sm';

/** The chosen video, as the browser read it. */
interface Chosen {
  file: File;
  /** Its length in seconds and frame rate; null when the file does not say. */
  duration: number | null;
  frameRate: number | null;
  warning: string | null;
}

/** An upload under way: how far it is, and whether it waits for the network. */
interface Sending {
  upload: VideoUpload;
  fraction: number;
}

/** What the form keeps across a reload (sessionStorage): the words typed and the card chosen. */
interface Draft {
  title: string;
  description: string;
  /** The chosen card's label. */
  card: string;
}

const draftKey = (mentorId: string) => `loupe.request-draft.${mentorId}`;

function readDraft(mentorId: string): Draft {
  try {
    const d = JSON.parse(sessionStorage.getItem(draftKey(mentorId)) ?? '{}') as Partial<Draft>;
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    return { title: text(d.title), description: text(d.description), card: text(d.card) };
  } catch {
    return { title: '', description: '', card: '' };
  }
}

/** Why "Send and pay" cannot be pressed yet, in words, or null when it can. */
function notReady(p: { card: boolean; video: boolean; title: boolean; probing: boolean }): string | null {
  if (p.probing) return 'Checking your video…';
  const missing = [!p.video && 'choose a video', !p.title && 'give it a title'].filter(Boolean);
  if (!p.card) return 'This mentor has no rate card that can be booked.';
  if (missing.length === 0) return null;
  const said = missing.join(' and ');
  return `To send, ${said}.`;
}

/**
 * Request feedback from a mentor: a rate card, a video, a title and a
 * description; sending it uploads the video (resumable: offline it says it
 * waits for the network and goes on when the network is back, and it can be
 * cancelled) and opens Stripe Checkout to pay the rate card in the chosen
 * currency. The video is read in the browser first: one that cannot play is
 * refused, its frame rate is read from its boxes, and the form picks the
 * cheapest card its length fits (and warns when a dearer one is chosen).
 * While the video uploads, leaving (a link, Back, reload) asks first; the
 * title, description and card survive a reload. "Send and pay" says what it
 * still needs. Signed-out visitors are asked to sign in (and come back
 * here); a mentor who cannot take payments cannot be booked.
 */
export function RequestForm({ mentor }: { mentor: PublicMentor }) {
  const { user, profile } = useSession();
  const { currency, formatPrice } = useCurrency();
  const toast = useToast();
  const location = useLocation();
  const navigate = useNavigate();
  const online = useOnline();
  const cards = (mentor.rateCards ?? []).filter(validCard);
  const [draft] = useState(() => readDraft(mentor.id));
  const [card, setCard] = useState(() =>
    Math.max(
      0,
      cards.findIndex((c) => c.duration === draft.card),
    ),
  );
  const [title, setTitle] = useState(draft.title);
  const [description, setDescription] = useState(draft.description);
  const [video, setVideo] = useState<Chosen | null>(null);
  const [videoError, setVideoError] = useState<string | null>(null);
  const [probing, setProbing] = useState(false);
  const [sending, setSending] = useState<Sending | null>(null);

  // While the video uploads, leaving asks first: in-app links and Back (the blocker), reload and closing (beforeunload).
  const uploading = useRef(false);
  const blocker = useBlocker(() => uploading.current);
  useEffect(() => {
    const ask = (e: BeforeUnloadEvent) => {
      if (!uploading.current) return;
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, []);

  // The draft survives a reload; it is dropped once the request is created.
  const cardLabel = cards[card]?.duration ?? '';
  useEffect(() => {
    sessionStorage.setItem(draftKey(mentor.id), JSON.stringify({ title, description, card: cardLabel }));
  }, [mentor.id, title, description, cardLabel]);

  // Offline, the upload pauses (it would only retry into the void); back online it resumes.
  const upload = sending?.upload;
  useEffect(() => {
    if (!upload) return;
    if (online) upload.resume();
    else upload.pause();
  }, [online, upload]);

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
  const chosen = cards[card];
  const length = video?.duration ?? null;
  const tooLong = chosen && length !== null && !fits(chosen, length);
  const fitting = length === null ? -1 : cheapestFit(cards, length);
  const best = cards[fitting];
  const cheaper = !tooLong && chosen && best && best.price < chosen.price ? best : null;
  const why = notReady({ card: !!chosen, video: !!video, title: !!title.trim(), probing });

  async function choose(file: File | undefined) {
    if (!file) return;
    setVideoError(null);
    const problem = checkVideo(file);
    if (problem) {
      setVideoError(problem);
      return;
    }
    setProbing(true);
    const probe = await probeVideo(file);
    setProbing(false);
    if (!probe.ok) {
      setVideo(null);
      setVideoError(probe.reason);
      return;
    }
    const { duration, frameRate } = probe.video;
    setVideo({ file, duration, frameRate, warning: probe.warning });
    // Priced by its real length: the cheapest card the clip fits.
    const best = duration === null ? -1 : cheapestFit(cards, duration);
    if (best >= 0) setCard(best);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!chosen || !video || !user || sending || tooLong) return;
    const upload = startVideoUpload(user.uid, video.file, video.duration);
    // The list's still is made and stored beside the upload.
    const thumbnail = uploadPoster(user.uid, video.file);
    uploading.current = true;
    setSending({ upload, fraction: 0 });
    upload.onProgress((fraction) => setSending((s) => s && { ...s, fraction }));
    let id: string;
    try {
      await upload.done;
      id = await createFeedbackRequest(user, {
        mentor,
        requesterName: profile?.name || user.displayName || user.email || 'Someone',
        rateCard: chosen,
        currency,
        title,
        description,
        videoPath: upload.path,
        videoDuration: video.duration,
        videoFrameRate: video.frameRate,
        thumbnailPath: await thumbnail,
      });
    } catch (err) {
      uploading.current = false;
      setSending(null);
      if (isCancelled(err)) {
        toast({ title: 'Upload cancelled', description: 'Nothing was sent or charged.' });
      } else {
        toast({
          tone: 'error',
          title: 'Your request was not sent',
          description: 'Check your connection and try again.',
        });
      }
      return;
    }
    uploading.current = false;
    sessionStorage.removeItem(draftKey(mentor.id));
    try {
      window.location.assign(await startCheckout(user, id));
    } catch (err) {
      toast({
        tone: 'error',
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
      <Field label="Title">
        <Input
          required
          maxLength={120}
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          placeholder="What should they look at?"
        />
      </Field>
      <Field label="Description">
        <Textarea
          className="min-h-24"
          maxLength={2000}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          placeholder="Context, what you are working on, what kind of feedback helps"
        />
      </Field>
      <div className="space-y-2">
        <label
          className={cn(
            'flex cursor-pointer items-center gap-3 rounded-xl border border-dashed px-4 py-4 text-sm text-zinc-300 hover:border-zinc-600 hover:bg-zinc-900 has-focus-visible:ring-2 has-focus-visible:ring-brand-500/40',
            videoError ? 'border-rose-500/60' : 'border-zinc-700',
          )}
        >
          {video ? (
            <Film className="size-5 text-brand-400" aria-hidden />
          ) : (
            <Upload className="size-5" aria-hidden />
          )}
          <span className="min-w-0 flex-1 truncate">
            {probing ? 'Checking the video…' : video ? video.file.name : 'Choose a video (up to 1 GB)'}
          </span>
          {video?.duration != null && (
            <span className="font-mono text-xs text-zinc-400">{formatVideoTime(video.duration)}</span>
          )}
          <input
            type="file"
            accept="video/*"
            aria-label="Video"
            className="sr-only"
            disabled={sending !== null}
            onChange={(e) => {
              void choose(e.target.files?.[0]);
              e.target.value = '';
            }}
          />
        </label>
        {videoError && (
          <p role="alert" className="text-sm text-rose-300">
            {videoError}
          </p>
        )}
        {video?.warning && (
          <p role="note" className="flex gap-1.5 text-xs text-amber-200">
            <TriangleAlert className="mt-0.5 size-3.5 shrink-0" aria-hidden />
            {video.warning}
          </p>
        )}
        {tooLong && (
          <p role="alert" className="text-sm text-rose-300">
            {fitting >= 0
              ? `Your clip runs ${formatVideoTime(length)}, longer than “${chosen.duration}” covers. Choose ${cards[fitting]?.duration}.`
              : `Your clip runs ${formatVideoTime(length)}, longer than any of ${name}’s rate cards. Trim it, or ask for a longer one.`}
          </p>
        )}
        {cheaper && chosen && length !== null && (
          <div
            role="alert"
            className="space-y-2 rounded-xl border border-amber-400/40 bg-amber-400/10 p-3 text-sm text-amber-100"
          >
            <p>
              Your clip runs {formatVideoTime(length)}: “{cheaper.duration}” covers it for{' '}
              {formatPrice(cheaper.price)}. “{chosen.duration}” costs{' '}
              {formatPrice(chosen.price - cheaper.price)} more.
            </p>
            <Button size="sm" onClick={() => setCard(fitting)}>
              Use “{cheaper.duration}” · {formatPrice(cheaper.price)}
            </Button>
          </div>
        )}
      </div>
      {sending && (
        <div className="space-y-2">
          <div
            role="progressbar"
            aria-label="Upload progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={Math.round(sending.fraction * 100)}
            className="h-2 overflow-hidden rounded-full bg-zinc-800"
          >
            <div
              className={cn('h-full transition-all', online ? 'bg-brand-500' : 'bg-amber-400')}
              style={{ width: `${sending.fraction * 100}%` }}
            />
          </div>
          <div className="flex items-center justify-between gap-3">
            <p role="status" className="text-xs text-zinc-300">
              {online
                ? `Uploading… ${Math.round(sending.fraction * 100)}%`
                : `Waiting for the network… ${Math.round(sending.fraction * 100)}% sent. The upload goes on when you are back online.`}
            </p>
            <Button size="sm" variant="ghost" onClick={() => sending.upload.cancel()}>
              Cancel upload
            </Button>
          </div>
        </div>
      )}
      <Button
        type="submit"
        variant="primary"
        size="lg"
        disabled={!!why || sending !== null || !!tooLong}
        aria-describedby={why ? 'send-needs' : undefined}
        className="w-full"
      >
        {chosen ? `Send and pay · ${formatPrice(chosen.price)}` : 'Send and pay'}
      </Button>
      {why && !sending && (
        <p id="send-needs" className="text-center text-xs text-zinc-400">
          {why}
        </p>
      )}
      <ConfirmDialog
        open={blocker.state === 'blocked'}
        destructive
        title="Leave while your video uploads?"
        message="Leaving cancels the upload: nothing is sent or charged. Your title, description and card stay here for when you come back."
        confirmLabel="Leave and cancel the upload"
        cancelLabel="Stay"
        onConfirm={() => {
          uploading.current = false;
          sending?.upload.cancel();
          blocker.proceed?.();
        }}
        onClose={() => {
          if (uploading.current) blocker.reset?.();
        }}
      />
    </form>
  );
}
