import { Save } from 'lucide-react';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link } from 'react-router';
import { Avatar } from '@/components/ui/avatar';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input, Select, Textarea } from '@/components/ui/input';
import { useToast } from '@/components/ui/toast-context';
import { validCard } from '@/lib/rate-cards';
import { useSession } from '@/lib/session';
import type { Category, UserProfile } from '@/types/user';
import { missingForListing } from '../listing';
import { saveProfile, type EditableProfile } from '../api/profile-api';
import { IntroClipField, PhotoField } from './media-fields';
import { EarningsPanel } from './earnings-panel';
import { PayoutsPanel } from './payouts-panel';
import { RateCardsEditor } from './rate-cards-editor';

/** The turnarounds a mentor may promise, in days. */
const TURNAROUNDS = [1, 2, 3, 5, 7, 10, 14];

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
    turnaroundDays: p.turnaroundDays ?? null,
    introVideoUrl: p.introVideoUrl ?? '',
    isMentor: p.isMentor ?? false,
  };
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
  const [form, setForm] = useState<EditableProfile>(() => editable(profile));
  const [busy, setBusy] = useState(false);
  const [uploads, setUploads] = useState({ photo: false, intro: false });
  const unsaved = JSON.stringify(form) !== JSON.stringify(editable(profile));
  const cardsOk = form.rateCards.every(validCard);
  const set = <K extends keyof EditableProfile>(key: K, value: EditableProfile[K]) =>
    setForm((f) => ({ ...f, [key]: value }));

  /** Saves the form; true when it was saved. */
  async function save(): Promise<boolean> {
    if (!cardsOk) {
      toast({
        tone: 'error',
        title: 'Your profile was not saved',
        description: 'Give every rate card a length and a price.',
      });
      return false;
    }
    setBusy(true);
    try {
      // One name: the display name follows it.
      await saveProfile(user, { ...form, displayName: form.name });
      toast({ title: 'Profile saved' });
      return true;
    } catch (err) {
      console.error('Profile update error:', err);
      toast({
        tone: 'error',
        title: 'Could not save your profile',
        description: err instanceof Error ? err.message : undefined,
      });
      return false;
    } finally {
      setBusy(false);
    }
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    void save();
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
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
          <Field label="Name">
            <Input
              value={form.name}
              onChange={(e) => setForm((f) => ({ ...f, name: e.target.value, displayName: e.target.value }))}
            />
          </Field>
          <Field label="Title">
            <Input
              value={form.title}
              onChange={(e) => set('title', e.target.value)}
              placeholder="Session guitarist"
            />
          </Field>
          <PhotoField
            uid={profile.id}
            url={form.photoURL}
            person={{ name: form.name, email: profile.email }}
            onChange={(url) => set('photoURL', url)}
            onBusy={(b) => setUploads((u) => ({ ...u, photo: b }))}
          />
        </div>
        <Field label="Bio">
          <Textarea className="min-h-24" value={form.bio} onChange={(e) => set('bio', e.target.value)} />
        </Field>
        <Field label="Expertise" hint="Separate with commas.">
          <Input
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
          <Input
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
                  className="flex cursor-pointer items-center gap-2 rounded-full border border-zinc-800 px-3 py-1.5 text-sm text-zinc-300 has-checked:border-brand-500 has-checked:bg-brand-500/15 has-checked:text-white has-focus-visible:outline-2 has-focus-visible:outline-brand-400"
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
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-2">
          {(
            [
              ['instagram', 'Instagram'],
              ['twitter', 'Twitter'],
              ['facebook', 'Facebook'],
              ['linkedin', 'LinkedIn'],
            ] as const
          ).map(([k, label]) => (
            <Field key={k} label={label}>
              <Input
                value={form.social[k]}
                placeholder="Handle or link"
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
        <Field
          label="Turnaround"
          hint="How soon you promise feedback once a request is paid. Past it, the requester may cancel for a full refund."
        >
          <Select
            value={form.turnaroundDays ?? ''}
            onChange={(e) => set('turnaroundDays', e.target.value ? Number(e.target.value) : null)}
          >
            <option value="">No promise</option>
            {TURNAROUNDS.map((d) => (
              <option key={d} value={d}>
                Within {d} day{d === 1 ? '' : 's'}
              </option>
            ))}
          </Select>
        </Field>
        <IntroClipField
          uid={profile.id}
          url={form.introVideoUrl ?? ''}
          onChange={(url) => set('introVideoUrl', url)}
          onBusy={(b) => setUploads((u) => ({ ...u, intro: b }))}
        />
        <RateCardsEditor cards={form.rateCards} onChange={(cards) => set('rateCards', cards)} />
        <PayoutsPanel connected={profile.stripeConnected} unsaved={unsaved} save={save} />
      </Card>
      {profile.isMentor && <EarningsPanel connected={profile.stripeConnected} />}
      {extra}
      <div className="sticky bottom-0 z-20 -mx-4 border-t border-zinc-800 bg-zinc-950/90 px-4 py-3 backdrop-blur sm:mx-0 sm:rounded-2xl sm:border sm:px-5">
        <div className="flex items-center justify-between gap-3">
          <p className="text-sm text-zinc-400" aria-live="polite">
            {busy
              ? 'Saving your profile…'
              : !cardsOk
                ? 'Give every rate card a length and a price to save.'
                : unsaved
                  ? 'You have unsaved changes.'
                  : 'Everything is saved.'}
          </p>
          <Button
            type="submit"
            variant="primary"
            size="lg"
            disabled={busy || uploads.photo || uploads.intro || !cardsOk}
            icon={<Save className="size-4" aria-hidden />}
          >
            {busy ? 'Saving…' : 'Save profile'}
          </Button>
        </div>
      </div>
    </form>
  );
}
