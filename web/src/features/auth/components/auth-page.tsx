import { useState, type FormEvent } from 'react';
import { Navigate, useSearchParams } from 'react-router';
import { Button, focusRing } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { useSession } from '@/lib/session';
import { afterSignIn } from '@/lib/sign-in';
import {
  authErrorMessage,
  resetNotice,
  resetPassword,
  signIn,
  signInWithGoogle,
  signUp,
} from '../api/auth-api';

type Mode = 'signin' | 'signup' | 'reset';

const MODES: Mode[] = ['signin', 'signup', 'reset'];

/** /auth: sign in, create an account (?mode=signup), Google, or reset a password (?mode=reset). */
export function AuthPage() {
  const { user, loading } = useSession();
  // A deep link that asked for sign-in (?next=/mentors/…) is where the person goes back to.
  const [params] = useSearchParams();
  const asked = params.get('mode') as Mode | null;
  const [mode, setMode] = useState<Mode>(asked && MODES.includes(asked) ? asked : 'signin');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (!loading && user) return <Navigate to={afterSignIn(params.get('next'))} replace />;

  async function run(f: () => Promise<unknown>) {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await f();
    } catch (err) {
      setError(authErrorMessage(err));
    } finally {
      setBusy(false);
    }
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    if (mode === 'signin') void run(() => signIn(email, password));
    if (mode === 'signup') void run(() => signUp(email, password, name.trim()));
    if (mode === 'reset')
      void run(async () => {
        await resetPassword(email);
        setNotice(resetNotice(email));
      });
  }

  const titles: Record<Mode, string> = {
    signin: 'Welcome back',
    signup: 'Create your account',
    reset: 'Reset your password',
  };
  return (
    <section className="mx-auto flex max-w-md flex-col gap-6 py-6 sm:py-12">
      <div className="space-y-2 text-center">
        <h1 className="text-2xl font-semibold tracking-tight text-white sm:text-3xl">{titles[mode]}</h1>
        <p className="text-sm text-zinc-400">
          {mode === 'signup'
            ? 'Get video feedback from mentors, or become one.'
            : 'Video feedback from people who have done it.'}
        </p>
      </div>
      <div className="space-y-4 rounded-2xl border border-zinc-800 bg-zinc-900/70 p-6 shadow-xl shadow-black/30">
        {mode !== 'reset' && (
          <>
            <button
              type="button"
              disabled={busy}
              onClick={() => void run(signInWithGoogle)}
              className={`flex w-full items-center justify-center gap-3 rounded-lg border border-zinc-700 bg-white px-4 py-2.5 text-sm font-semibold text-zinc-900 transition hover:bg-zinc-100 disabled:opacity-60 ${focusRing}`}
            >
              <svg viewBox="0 0 24 24" className="size-4" aria-hidden>
                <path
                  fill="#4285F4"
                  d="M23.5 12.3c0-.8-.1-1.6-.2-2.3H12v4.5h6.5a5.6 5.6 0 0 1-2.4 3.6v3h3.9c2.3-2.1 3.5-5.2 3.5-8.8z"
                />
                <path
                  fill="#34A853"
                  d="M12 24c3.2 0 6-1.1 8-2.9l-3.9-3c-1.1.7-2.5 1.2-4.1 1.2-3.1 0-5.8-2.1-6.7-5H1.3v3.1A12 12 0 0 0 12 24z"
                />
                <path fill="#FBBC05" d="M5.3 14.3a7.2 7.2 0 0 1 0-4.6V6.6h-4a12 12 0 0 0 0 10.8l4-3.1z" />
                <path
                  fill="#EA4335"
                  d="M12 4.8c1.8 0 3.3.6 4.6 1.8l3.4-3.4A12 12 0 0 0 1.3 6.6l4 3.1c.9-2.9 3.6-4.9 6.7-4.9z"
                />
              </svg>
              Continue with Google
            </button>
            <div className="flex items-center gap-3 text-xs text-zinc-400">
              <span className="h-px flex-1 bg-zinc-800" /> or <span className="h-px flex-1 bg-zinc-800" />
            </div>
          </>
        )}
        <form className="space-y-3" onSubmit={submit}>
          {mode === 'signup' && (
            <Field label="Name">
              <Input
                className="h-10"
                value={name}
                onChange={(e) => setName(e.target.value)}
                autoComplete="name"
                required
              />
            </Field>
          )}
          <Field label="E-mail">
            <Input
              className="h-10"
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoComplete="email"
              required
            />
          </Field>
          {mode !== 'reset' && (
            <Field label="Password">
              <Input
                className="h-10"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete={mode === 'signup' ? 'new-password' : 'current-password'}
                minLength={6}
                required
              />
            </Field>
          )}
          {error && (
            <p role="alert" className="rounded-lg bg-rose-500/10 px-3 py-2 text-sm text-rose-300">
              {error}
            </p>
          )}
          {notice && (
            <p role="status" className="rounded-lg bg-emerald-500/10 px-3 py-2 text-sm text-emerald-300">
              {notice}
            </p>
          )}
          <Button type="submit" variant="primary" size="lg" disabled={busy} className="w-full">
            {mode === 'signin' ? 'Sign in' : mode === 'signup' ? 'Create account' : 'Send reset link'}
          </Button>
        </form>
        <div className="flex flex-wrap justify-between gap-2 text-sm">
          {mode === 'signin' ? (
            <>
              <button
                type="button"
                className={`rounded text-zinc-400 hover:text-white ${focusRing}`}
                onClick={() => setMode('reset')}
              >
                Forgot password?
              </button>
              <button
                type="button"
                className={`rounded font-medium text-brand-400 hover:text-brand-300 ${focusRing}`}
                onClick={() => setMode('signup')}
              >
                Create an account
              </button>
            </>
          ) : (
            <button
              type="button"
              className={`rounded font-medium text-brand-400 hover:text-brand-300 ${focusRing}`}
              onClick={() => setMode('signin')}
            >
              I already have an account
            </button>
          )}
        </div>
      </div>
    </section>
  );
}
