import { Film, Upload } from 'lucide-react';
import { useState, type ReactNode } from 'react';
import { Avatar } from '@/components/ui/avatar';
import { Button, focusRing } from '@/components/ui/button';
import { cn } from '@/lib/cn';
import { probeVideo } from '@/lib/video-probe';
import { uploadAvatar, uploadIntroClip } from '../api/profile-api';
import { checkPhoto } from '../photo-rules';

type Upload = { state: 'idle' | 'uploading' } | { state: 'error'; message: string };

/** A file chooser styled as a button, labelled by labelId and described by helpId. */
function ChooseButton({
  text,
  accept,
  labelId,
  helpId,
  onFile,
  icon,
}: {
  text: string;
  accept: string;
  labelId: string;
  helpId: string;
  onFile: (file: File | undefined) => void;
  icon: ReactNode;
}) {
  return (
    <label
      className={cn(
        'relative inline-flex h-9 cursor-pointer items-center gap-1.5 rounded-lg border border-zinc-700 px-3 text-sm text-zinc-200 hover:bg-zinc-800 has-focus-visible:outline-2 has-focus-visible:outline-offset-2 has-focus-visible:outline-brand-400',
      )}
    >
      {icon}
      {text}
      <input
        type="file"
        accept={accept}
        aria-labelledby={labelId}
        aria-describedby={helpId}
        className="absolute inset-0 cursor-pointer opacity-0"
        onChange={(e) => {
          onFile(e.target.files?.[0]);
          e.target.value = '';
        }}
      />
    </label>
  );
}

/** What a field says under itself: its error, or its help. */
function Help({ id, upload, help }: { id: string; upload: Upload; help: string }) {
  return upload.state === 'error' ? (
    <p id={id} role="alert" className="text-sm text-rose-300">
      {upload.message}
    </p>
  ) : (
    <p id={id} className="text-xs text-zinc-400">
      {help}
    </p>
  );
}

/**
 * The profile photo: upload (checked and decoded first), change or remove;
 * the URL is saved with the profile. busy reports an upload under way.
 */
export function PhotoField({
  uid,
  url,
  person,
  onChange,
  onBusy,
}: {
  uid: string;
  url: string;
  person: { name: string; email: string };
  onChange: (url: string) => void;
  onBusy: (busy: boolean) => void;
}) {
  const [upload, setUpload] = useState<Upload>({ state: 'idle' });
  const set = (u: Upload) => {
    setUpload(u);
    onBusy(u.state === 'uploading');
  };
  async function choose(file: File | undefined) {
    if (!file) return;
    const problem = checkPhoto(file);
    if (problem) return set({ state: 'error', message: problem });
    set({ state: 'uploading' });
    try {
      // A file named like an image may still not be one: decode it first.
      await createImageBitmap(file).then((bitmap) => bitmap.close());
    } catch {
      return set({
        state: 'error',
        message: `“${file.name}” could not be read as an image. Choose another photo.`,
      });
    }
    try {
      onChange(await uploadAvatar(uid, file));
      set({ state: 'idle' });
    } catch (err) {
      console.error('Avatar upload error:', err);
      set({ state: 'error', message: 'The photo could not be uploaded. Try again in a moment.' });
    }
  }
  return (
    <div className="space-y-1.5 text-sm text-zinc-300 sm:col-span-2">
      <span id="photo-label">Photo</span>
      <div className="flex flex-wrap items-center gap-3">
        <Avatar person={{ photoURL: url, ...person }} size="md" />
        <ChooseButton
          text={upload.state === 'uploading' ? 'Uploading…' : url ? 'Change photo' : 'Upload a photo'}
          accept="image/jpeg,image/png,image/gif,image/webp"
          labelId="photo-label"
          helpId="photo-help"
          icon={<Upload className="size-4" aria-hidden />}
          onFile={(f) => void choose(f)}
        />
        {url && (
          <Button variant="ghost" onClick={() => onChange('')}>
            Remove photo
          </Button>
        )}
      </div>
      <Help
        id="photo-help"
        upload={upload}
        help="JPEG, PNG, GIF or WebP, up to 5 MB. Saved with the profile."
      />
    </div>
  );
}

/**
 * A mentor's optional intro clip: a video read in the browser first (one
 * that cannot play is refused), uploaded to intros/{uid}/ and saved with
 * the profile; shown on the mentor page.
 */
export function IntroClipField({
  uid,
  url,
  onChange,
  onBusy,
}: {
  uid: string;
  url: string;
  onChange: (url: string) => void;
  onBusy: (busy: boolean) => void;
}) {
  const [upload, setUpload] = useState<Upload>({ state: 'idle' });
  const set = (u: Upload) => {
    setUpload(u);
    onBusy(u.state === 'uploading');
  };
  async function choose(file: File | undefined) {
    if (!file) return;
    if (!file.type.startsWith('video/'))
      return set({ state: 'error', message: 'Choose a video (MP4 or WebM).' });
    if (file.size > 200 * 1024 * 1024)
      return set({ state: 'error', message: 'Intro clips can be up to 200 MB.' });
    set({ state: 'uploading' });
    const probe = await probeVideo(file);
    if (!probe.ok) return set({ state: 'error', message: probe.reason });
    try {
      onChange(await uploadIntroClip(uid, file));
      set({ state: 'idle' });
    } catch (err) {
      console.error('Intro clip upload error:', err);
      set({ state: 'error', message: 'The clip could not be uploaded. Try again in a moment.' });
    }
  }
  return (
    <div className="space-y-1.5 text-sm text-zinc-300">
      <span id="intro-label">Intro clip (optional)</span>
      {url && (
        <video
          src={url}
          controls
          preload="metadata"
          aria-label="Your intro clip"
          className="max-h-48 rounded-lg bg-black"
        />
      )}
      <div className="flex flex-wrap items-center gap-3">
        <ChooseButton
          text={upload.state === 'uploading' ? 'Uploading…' : url ? 'Change clip' : 'Add an intro clip'}
          accept="video/*"
          labelId="intro-label"
          helpId="intro-help"
          icon={<Film className="size-4" aria-hidden />}
          onFile={(f) => void choose(f)}
        />
        {url && (
          <Button variant="ghost" className={focusRing} onClick={() => onChange('')}>
            Remove clip
          </Button>
        )}
      </div>
      <Help
        id="intro-help"
        upload={upload}
        help="A short video that says hello on your mentor page. MP4 or WebM, up to 200 MB."
      />
    </div>
  );
}
