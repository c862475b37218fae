import { Plus, Save, Trash2, Upload } from 'lucide-react';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { useToast } from '@/components/ui/toast-context';
import { useCurrency } from '@/lib/currency/currency-context';
import { useSession } from '@/lib/session';
import type { Category, UserProfile } from '@/types/user';
import { missingForListing } from '../listing';
import { checkPhoto } from '../photo-rules';
import { saveProfile, startPayoutOnboarding, uploadAvatar, type EditableProfile } from '../api/profile-api';

const input =
  'w-full rounded-lg border border-zinc-700 bg-zinc-950 px-3 py-2 text-sm text-white placeholder:text-zinc-500 focus:border-brand-500 focus:ring-2 focus:ring-brand-500/30 focus:outline-none';

function editable(p: UserProfile): EditableProfile {
  return {
    name: p.name ?? '',
    displayName: p.displayName ?? '',
    photoURL: p.photoURL ?? '',
    title: p.title ?? '',
    bio: p.bio ?? '',
    expertise: p.expertise ?? [],
    taxonomySelections: p.taxonomySelections ?? [],
    previouslyWorkedWith: p.previouslyWorkedWith ?? '',
    social: {
      instagram: p.social?.instagram ?? '',
      twitter: p.social?.twitter ?? '',
      facebook: p.social?.facebook ?? '',
      linkedin: p.social?.linkedin ?? '',
    },
    rateCards: p.rateCards ?? [],
    isMentor: p.isMentor ?? false,
  };
}

function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: string }) {
  return (
    <label className="block space-y-1.5 text-sm text-zinc-300">
      <span>{label}</span>
      {children}
      {hint && <span className="block text-xs text-zinc-400">{hint}</span>}
    </label>
  );
}

function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="space-y-4 rounded-2xl border border-zinc-800 bg-zinc-900/60 p-5 sm:p-6">
      <h2 className="font-semibold text-white">{title}</h2>
      {children}
    </section>
  );
}

/** Whether the saved profile is listed in the directory, and what it still needs. */
function ListingStatus({ profile }: { profile: UserProfile }) {
  if (!profile.isMentor) {
    return <p className="text-sm text-zinc-400">Mentoring is off: you are not listed in the directory.</p>;
  }
  const missing = missingForListing(profile);
  if (missing.length === 0) {
    return (
      <p role="status" className="rounded-xl bg-emerald-400/10 p-3 text-sm text-emerald-300">
        You are listed in the directory.{' '}
        <Link to={`/mentors/${profile.id}`} className="font-medium underline underline-offset-2">
          View your mentor page
        </Link>
        {!profile.stripeConnected && ' Connect payouts below so people can book you.'}
      </p>
    );
  }
  const list =
    missing.length === 1
      ? missing[0]
      : `${missing.slice(0, -1).join(', ')} and ${missing[missing.length - 1]}`;
  return (
    <p role="status" className="rounded-xl bg-amber-400/10 p-3 text-sm text-amber-200">
      You are not listed in the directory yet. Add {list} and save, or turn mentoring off.
    </p>
  );
}

/** /profile: view and edit the signed-in person's profile. */
export function ProfilePage({ categories, extra }: { categories: Category[]; extra?: ReactNode }) {
  const { user, profile } = useSession();
  if (!user || !profile) return <p className="text-zinc-400">Loading your profile…</p>;
  return <ProfileForm key={user.uid} profile={profile} categories={categories} extra={extra} />;
}

function ProfileForm({
  profile,
  categories,
  extra,
}: {
  profile: UserProfile;
  categories: Category[];
  extra?: ReactNode;
}) {
  const { user } = useSession();
  const toast = useToast();
  const { formatPrice, currency } = useCurrency();
  const [form, setForm] = useState<EditableProfile>(() => editable(profile));
  const [busy, setBusy] = useState(false);
  const [connecting, setConnecting] = useState(false);
  const [photo, setPhoto] = useState<{ state: 'idle' | 'uploading' } | { state: 'error'; message: string }>({
    state: 'idle',
  });
  // Stripe sends the mentor back with ?payouts=retry when the onboarding link expired.
  const [params] = useSearchParams();
  const unsaved = JSON.stringify(form) !== JSON.stringify(editable(profile));
  const set = <K extends keyof EditableProfile>(key: K, value: EditableProfile[K]) =>
    setForm((f) => ({ ...f, [key]: value }));

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    try {
      // One name: the display name follows it.
      await saveProfile(user, { ...form, displayName: form.name });
      toast({ title: 'Profile saved' });
    } catch (err) {
      console.error('Profile update error:', err);
      toast({
        title: 'Could not save your profile',
        description: err instanceof Error ? err.message : undefined,
      });
    } finally {
      setBusy(false);
    }
  }

  async function connectPayouts() {
    setConnecting(true);
    try {
      window.location.assign(await startPayoutOnboarding(user));
    } catch (err) {
      console.error('Payout onboarding error:', err);
      toast({
        title: 'Could not open payout setup',
        description: 'Try again in a moment.',
      });
      setConnecting(false);
    }
  }

  async function upload(file: File | undefined) {
    if (!file || !user) return;
    const problem = checkPhoto(file);
    if (problem) {
      setPhoto({ state: 'error', message: problem });
      return;
    }
    setPhoto({ state: 'uploading' });
    try {
      // A file named like an image may still not be one: decode it first.
      await createImageBitmap(file).then((bitmap) => bitmap.close());
    } catch {
      setPhoto({
        state: 'error',
        message: `“${file.name}” could not be read as an image. Choose another photo.`,
      });
      return;
    }
    try {
      set('photoURL', await uploadAvatar(user.uid, file));
      setPhoto({ state: 'idle' });
    } catch (err) {
      console.error('Avatar upload error:', err);
      setPhoto({ state: 'error', message: 'The photo could not be uploaded. Try again in a moment.' });
    }
  }

  const toggleCategory = (id: string) =>
    set(
      'taxonomySelections',
      form.taxonomySelections.includes(id)
        ? form.taxonomySelections.filter((c) => c !== id)
        : [...form.taxonomySelections, id],
    );

  return (
    <form onSubmit={submit} className="mx-auto max-w-3xl space-y-6">
      <header className="flex flex-wrap items-center gap-4">
        <Avatar person={{ photoURL: form.photoURL, name: form.name, email: profile.email }} size="lg" />
        <div className="min-w-0 flex-1">
          <h1 className="truncate text-2xl font-semibold tracking-tight text-white sm:text-3xl">
            {form.name || 'Your profile'}
          </h1>
          <p className="truncate text-sm text-zinc-400">{profile.email}</p>
        </div>
      </header>
      <ListingStatus profile={profile} />

      <Card title="About you">
        <div className="grid gap-4 sm:grid-cols-2">
          <Field label="Name">
            <input
              className={input}
              value={form.name}
              onChange={(e) => setForm((f) => ({ ...f, name: e.target.value, displayName: e.target.value }))}
            />
          </Field>
          <Field label="Title">
            <input
              className={input}
              value={form.title}
              onChange={(e) => set('title', e.target.value)}
              placeholder="Session guitarist"
            />
          </Field>
          <div className="space-y-1.5 text-sm text-zinc-300 sm:col-span-2">
            <span id="photo-label">Photo</span>
            <div className="flex flex-wrap items-center gap-3">
              <Avatar person={{ photoURL: form.photoURL, name: form.name, email: profile.email }} size="md" />
              <label className="relative inline-flex cursor-pointer items-center gap-1.5 rounded-lg border border-zinc-700 px-3 py-2 text-sm text-zinc-200 focus-within:outline-2 focus-within:outline-brand-400 hover:bg-zinc-800">
                <Upload className="size-4" aria-hidden />
                {photo.state === 'uploading'
                  ? 'Uploading…'
                  : form.photoURL
                    ? 'Change photo'
                    : 'Upload a photo'}
                <input
                  type="file"
                  accept="image/jpeg,image/png,image/gif,image/webp"
                  aria-labelledby="photo-label"
                  aria-describedby="photo-help"
                  className="absolute inset-0 cursor-pointer opacity-0"
                  onChange={(e) => {
                    void upload(e.target.files?.[0]);
                    e.target.value = '';
                  }}
                />
              </label>
              {form.photoURL && (
                <button
                  type="button"
                  onClick={() => set('photoURL', '')}
                  className="rounded-lg px-3 py-2 text-sm text-zinc-400 hover:bg-zinc-800 hover:text-white"
                >
                  Remove photo
                </button>
              )}
            </div>
            {photo.state === 'error' ? (
              <p id="photo-help" role="alert" className="text-sm text-rose-300">
                {photo.message}
              </p>
            ) : (
              <p id="photo-help" className="text-xs text-zinc-400">
                JPEG, PNG, GIF or WebP, up to 5 MB. Saved with the profile.
              </p>
            )}
          </div>
        </div>
        <Field label="Bio">
          <textarea
            className={`${input} min-h-24`}
            value={form.bio}
            onChange={(e) => set('bio', e.target.value)}
          />
        </Field>
        <Field label="Expertise" hint="Separate with commas.">
          <input
            className={input}
            value={form.expertise.join(', ')}
            onChange={(e) =>
              set(
                'expertise',
                e.target.value
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean),
              )
            }
          />
        </Field>
        <Field label="Previously worked with">
          <input
            className={input}
            value={form.previouslyWorkedWith}
            onChange={(e) => set('previouslyWorkedWith', e.target.value)}
          />
        </Field>
        {categories.length > 0 && (
          <fieldset className="space-y-2">
            <legend className="text-sm text-zinc-300">Categories</legend>
            <div className="flex flex-wrap gap-2">
              {categories.map((c) => (
                <label
                  key={c.id}
                  className="flex cursor-pointer items-center gap-2 rounded-full border border-zinc-800 px-3 py-1.5 text-sm text-zinc-300 has-checked:border-brand-500 has-checked:bg-brand-500/15 has-checked:text-white"
                >
                  <input
                    type="checkbox"
                    className="sr-only"
                    checked={form.taxonomySelections.includes(c.id)}
                    onChange={() => toggleCategory(c.id)}
                  />
                  {c.emoji} {c.name}
                </label>
              ))}
            </div>
          </fieldset>
        )}
      </Card>

      <Card title="Social links">
        <div className="grid gap-4 sm:grid-cols-2">
          {(
            [
              ['instagram', 'Instagram'],
              ['twitter', 'Twitter'],
              ['facebook', 'Facebook'],
              ['linkedin', 'LinkedIn'],
            ] as const
          ).map(([k, label]) => (
            <Field key={k} label={label}>
              <input
                className={input}
                value={form.social[k]}
                onChange={(e) => set('social', { ...form.social, [k]: e.target.value })}
              />
            </Field>
          ))}
        </div>
      </Card>

      <Card title="Mentoring">
        <label className="flex items-center justify-between gap-4">
          <span>
            <span className="block text-sm font-medium text-white">I mentor</span>
            <span className="text-sm text-zinc-400">
              Show me in the directory and accept feedback requests.
            </span>
          </span>
          <input
            type="checkbox"
            className="size-5 accent-violet-500"
            checked={form.isMentor}
            onChange={(e) => set('isMentor', e.target.checked)}
          />
        </label>
        <div className="space-y-2">
          <p className="text-sm text-zinc-300">Rate cards (prices in USD; shown in {currency})</p>
          {form.rateCards.map((card, i) => (
            <div
              key={i}
              className="grid grid-cols-[minmax(0,1fr)_6.5rem_auto] items-center gap-2 sm:grid-cols-[minmax(0,1fr)_7rem_5rem_auto]"
            >
              <input
                aria-label="Duration"
                className={input}
                value={card.duration}
                onChange={(e) =>
                  set(
                    'rateCards',
                    form.rateCards.map((c, j) => (j === i ? { ...c, duration: e.target.value } : c)),
                  )
                }
              />
              <input
                aria-label="Price in USD"
                type="number"
                min={0}
                step="0.01"
                className={input}
                value={card.price}
                onChange={(e) =>
                  set(
                    'rateCards',
                    form.rateCards.map((c, j) => (j === i ? { ...c, price: Number(e.target.value) } : c)),
                  )
                }
              />
              <span className="hidden text-sm text-zinc-400 sm:block">{formatPrice(card.price)}</span>
              <button
                type="button"
                aria-label={`Remove ${card.duration}`}
                className="rounded-lg p-2 text-zinc-400 hover:bg-zinc-800 hover:text-white"
                onClick={() =>
                  set(
                    'rateCards',
                    form.rateCards.filter((_, j) => j !== i),
                  )
                }
              >
                <Trash2 className="size-4" aria-hidden />
              </button>
            </div>
          ))}
          <button
            type="button"
            className="inline-flex items-center gap-1.5 rounded-lg border border-dashed border-zinc-700 px-3 py-2 text-sm text-zinc-300 hover:bg-zinc-800"
            onClick={() => set('rateCards', [...form.rateCards, { duration: '', price: 0 }])}
          >
            <Plus className="size-4" aria-hidden /> Add a rate card
          </button>
        </div>
        <div className="flex flex-wrap items-center justify-between gap-3 rounded-xl bg-zinc-950/60 p-4">
          <span>
            <span className="block text-sm font-medium text-white">Payouts</span>
            <span className="text-sm text-zinc-400">
              {profile.stripeConnected
                ? 'Connected: you can receive payments.'
                : params.get('payouts') === 'retry'
                  ? 'Your payout setup link expired. Connect payouts to continue.'
                  : 'Not connected yet.'}
            </span>
          </span>
          {!profile.stripeConnected && (
            <button
              type="button"
              className="rounded-lg border border-zinc-700 px-3 py-2 text-sm font-medium text-zinc-200 hover:bg-zinc-800"
              disabled={connecting}
              onClick={() => void connectPayouts()}
            >
              {connecting ? 'Opening Stripe…' : 'Connect payouts'}
            </button>
          )}
        </div>
      </Card>
      {extra}
      <div className="sticky bottom-0 z-20 -mx-4 border-t border-zinc-800 bg-zinc-950/90 px-4 py-3 backdrop-blur sm:mx-0 sm:rounded-2xl sm:border sm:px-5">
        <div className="flex items-center justify-between gap-3">
          <p className="text-sm text-zinc-400" aria-live="polite">
            {unsaved ? 'You have unsaved changes.' : 'Everything is saved.'}
          </p>
          <button
            type="submit"
            disabled={busy || photo.state === 'uploading'}
            className="inline-flex items-center gap-2 rounded-lg bg-brand-600 px-5 py-2.5 text-sm font-semibold text-white shadow-lg shadow-brand-600/20 transition hover:bg-brand-500 disabled:opacity-60"
          >
            <Save className="size-4" aria-hidden />
            {busy ? 'Saving…' : 'Save profile'}
          </button>
        </div>
      </div>
    </form>
  );
}
