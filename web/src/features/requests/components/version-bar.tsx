import { Columns2, Upload } from 'lucide-react';
import { useState, type FormEvent } from 'react';
import { Button } from '@/components/ui/button';
import { Dialog } from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input, Textarea } from '@/components/ui/input';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { formatNotificationTime } from '@/lib/format-date';
import { fits } from '@/lib/rate-cards';
import { useSession } from '@/lib/session';
import { probeVideo, type ProbedVideo } from '@/lib/video-probe';
import { formatVideoTime } from '@/lib/video-time';
import type { FeedbackRequest, VideoVersion } from '@/types/request';
import {
  addVersion,
  isCancelled,
  startVideoUpload,
  uploadPoster,
  type VideoUpload,
} from '../api/requests-api';
import { checkVideo } from '../request-rules';
import { versionLabel } from '../versions';

/**
 * The requester's form for a revised take: the video (read in the browser
 * first, as the request form does, and no longer than the paid rate card
 * covers), what changed, then the upload with its progress; the new version
 * is added once the file is stored.
 */
function NewVersionDialog({
  request,
  open,
  onClose,
  onAdded,
}: {
  request: FeedbackRequest;
  open: boolean;
  onClose: () => void;
  onAdded: (number: number) => void;
}) {
  const { user } = useSession();
  const toast = useToast();
  const [video, setVideo] = useState<{ file: File; probed: ProbedVideo } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [sending, setSending] = useState<{ upload: VideoUpload; fraction: number } | null>(null);
  const next = versionLabel(request.versionCount + 1);

  async function choose(file: File | undefined) {
    setVideo(null);
    setError(null);
    if (!file) return;
    const problem = checkVideo(file);
    if (problem) {
      setError(problem);
      return;
    }
    const probe = await probeVideo(file);
    if (!probe.ok) {
      setError(probe.reason);
      return;
    }
    // A revised take stays within the length the request was paid for.
    const { duration } = probe.video;
    if (duration !== null && !fits(request.rateCard, duration)) {
      setError(
        `This take runs ${formatVideoTime(duration)}, longer than the “${request.rateCard.duration}” you paid for. Trim it to fit, or send a new request.`,
      );
      return;
    }
    setVideo({ file, probed: probe.video });
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!video || !user || sending) return;
    const upload = startVideoUpload(user.uid, video.file, video.probed.duration);
    const thumbnail = uploadPoster(user.uid, video.file);
    setSending({ upload, fraction: 0 });
    upload.onProgress((fraction) => setSending((s) => s && { ...s, fraction }));
    try {
      await upload.done;
      const number = await addVersion(user, request, {
        videoPath: upload.path,
        videoDuration: video.probed.duration,
        videoFrameRate: video.probed.frameRate,
        note,
        thumbnailPath: await thumbnail,
      });
      setSending(null);
      setVideo(null);
      setNote('');
      onAdded(number);
      toast({ title: `${versionLabel(number)} uploaded`, description: 'Your mentor can see it now.' });
    } catch (err) {
      setSending(null);
      if (isCancelled(err)) toast({ title: 'Upload cancelled', description: 'No new version was added.' });
      else
        toast({
          tone: 'error',
          title: 'The new version was not added',
          description: 'Check your connection and try again.',
        });
    }
  }

  const percent = Math.round((sending?.fraction ?? 0) * 100);
  return (
    <Dialog
      open={open}
      onClose={() => (sending ? sending.upload.cancel() : onClose())}
      title={`Upload ${next}`}
    >
      <form className="space-y-4" onSubmit={(e) => void submit(e)}>
        <p className="text-sm text-zinc-300">
          A revised take of “<span className="break-words">{request.title}</span>”. Earlier versions and their
          comments stay, and your mentor can compare them side by side.
        </p>
        <Field label="Video" error={error}>
          <Input
            type="file"
            accept="video/*"
            disabled={Boolean(sending)}
            onChange={(e) => void choose(e.target.files?.[0])}
          />
        </Field>
        <Field label="What changed (optional)">
          <Textarea
            value={note}
            maxLength={1000}
            disabled={Boolean(sending)}
            onChange={(e) => setNote(e.target.value)}
            className="min-h-16"
          />
        </Field>
        {sending && (
          <div
            role="progressbar"
            aria-label="Upload progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            className="h-2 overflow-hidden rounded-full bg-zinc-800"
          >
            <div className="h-full bg-brand-500 transition-all" style={{ width: `${percent}%` }} />
          </div>
        )}
        <div className="flex justify-end gap-2">
          {sending ? (
            <Button variant="ghost" onClick={() => sending.upload.cancel()}>
              Cancel upload
            </Button>
          ) : (
            <Button variant="ghost" onClick={onClose}>
              Cancel
            </Button>
          )}
          <Button type="submit" variant="primary" disabled={!video || Boolean(sending)}>
            {sending ? `Uploading… ${percent}%` : `Upload ${next}`}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * The versions of a request above its player: one button per version (the
 * shown one pressed), Compare when there are two or more, and for the
 * requester of an open request, Upload a new version.
 */
export function VersionBar({
  request,
  versions,
  shown,
  comparing,
  canUpload,
  onShow,
  onCompare,
}: {
  request: FeedbackRequest;
  versions: VideoVersion[];
  shown: number;
  comparing: boolean;
  canUpload: boolean;
  onShow: (number: number) => void;
  onCompare: (on: boolean) => void;
}) {
  const [uploading, setUploading] = useState(false);
  const chip = (active: boolean) =>
    cn(
      'rounded-lg px-3 py-1.5 font-mono text-sm font-medium transition',
      active ? 'bg-zinc-800 text-white' : 'text-zinc-400 hover:text-white',
    );
  const current = versions.find((v) => v.number === shown);
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-2">
        <div
          role="group"
          aria-label="Versions"
          className="flex max-w-full gap-1 overflow-x-auto rounded-xl border border-zinc-800 bg-zinc-900/60 p-1"
        >
          {versions.map((v) => (
            <button
              key={v.number}
              type="button"
              aria-pressed={v.number === shown}
              className={chip(v.number === shown)}
              onClick={() => onShow(v.number)}
            >
              {versionLabel(v.number)}
            </button>
          ))}
        </div>
        {versions.length > 1 && (
          <Button
            size="sm"
            variant={comparing ? 'primary' : 'secondary'}
            aria-pressed={comparing}
            onClick={() => onCompare(!comparing)}
          >
            <Columns2 className="size-4" aria-hidden /> Compare
          </Button>
        )}
        <span className="flex-1" />
        {canUpload && (
          <Button size="sm" onClick={() => setUploading(true)}>
            <Upload className="size-4" aria-hidden /> Upload a new version
          </Button>
        )}
      </div>
      {current && current.number > 1 && (
        <p className="text-xs text-zinc-400">
          {versionLabel(current.number)} · uploaded {formatNotificationTime(current.createdAt)}
          {current.note && (
            <>
              {' '}
              · <span className="break-words text-zinc-300">{current.note}</span>
            </>
          )}
        </p>
      )}
      {canUpload && (
        <NewVersionDialog
          request={request}
          open={uploading}
          onClose={() => setUploading(false)}
          onAdded={(n) => {
            setUploading(false);
            onShow(n);
          }}
        />
      )}
    </div>
  );
}
