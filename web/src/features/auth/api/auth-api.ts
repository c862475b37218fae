import {
  createUserWithEmailAndPassword,
  GoogleAuthProvider,
  sendPasswordResetEmail,
  signInWithCredential,
  signInWithEmailAndPassword,
  signInWithPopup,
  signOut,
  updateProfile,
  type User,
} from 'firebase/auth';
import { doc, getDoc, serverTimestamp, setDoc, updateDoc } from 'firebase/firestore';
import { firebase } from '@/lib/firebase';
import { defaultProfile, missingFields } from './profile-defaults';

/**
 * Creates the profile of a new user with the defaults of docs/product-spec.md §6, §7, or fills in
 * the fields a returning user's profile lacks, never overwriting any.
 */
export async function ensureProfile(user: User): Promise<void> {
  const ref = doc(firebase().db, 'users', user.uid);
  const defaults = defaultProfile(user);
  const snap = await getDoc(ref);
  if (!snap.exists()) {
    await setDoc(ref, { ...defaults, updatedAt: serverTimestamp() });
    return;
  }
  // role, stripeConnected and reviews are the server's to set on an existing profile.
  const fillable: Record<string, unknown> = { ...defaults };
  delete fillable.role;
  delete fillable.stripeConnected;
  delete fillable.reviews;
  const missing = missingFields(snap.data(), fillable);
  if (Object.keys(missing).length > 0) await updateDoc(ref, { ...missing, updatedAt: serverTimestamp() });
}

async function logged<T>(what: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    console.error(`${what} error:`, err);
    throw err;
  }
}

/** Signs up with e-mail and password and creates the default profile. */
export function signUp(email: string, password: string, name: string): Promise<User> {
  return logged('Sign up', async () => {
    const { user } = await createUserWithEmailAndPassword(firebase().auth, email, password);
    if (name) await updateProfile(user, { displayName: name });
    await ensureProfile(user);
    return user;
  });
}

/** Signs in with e-mail and password. */
export function signIn(email: string, password: string): Promise<User> {
  return logged('Login', async () => {
    const { user } = await signInWithEmailAndPassword(firebase().auth, email, password);
    await ensureProfile(user).catch((err) => console.error('Failed to complete the profile:', err));
    return user;
  });
}

/** The message loupe's local Google account chooser posts back (see internal/auth). */
export const LOCAL_GOOGLE_CHOOSER = {
  path: '/emulator/auth/handler?providerId=google.com&mode=loupe-chooser&origin=',
  messageType: 'loupe-google-id-token',
} as const;

/** Opens loupe's local account chooser and resolves with the Google id_token it returns. */
function chooseLocalGoogleAccount(): Promise<string> {
  return new Promise((resolve, reject) => {
    const popup = window.open(
      LOCAL_GOOGLE_CHOOSER.path + encodeURIComponent(window.location.origin),
      'loupe-google',
      'width=480,height=640',
    );
    if (!popup) {
      reject(new Error('The sign-in window was blocked. Allow pop-ups for this site.'));
      return;
    }
    const onMessage = (e: MessageEvent) => {
      if (e.origin !== window.location.origin || e.data?.type !== LOCAL_GOOGLE_CHOOSER.messageType) return;
      window.removeEventListener('message', onMessage);
      clearInterval(closed);
      resolve(String(e.data.idToken));
    };
    const closed = setInterval(() => {
      if (popup.closed) {
        clearInterval(closed);
        window.removeEventListener('message', onMessage);
        reject(
          Object.assign(new Error('The sign-in window was closed.'), { code: 'auth/popup-closed-by-user' }),
        );
      }
    }, 300);
    window.addEventListener('message', onMessage);
  });
}

/**
 * Google sign-in: the popup in production; locally loupe's own account
 * chooser, whose token signs in through signInWithCredential.
 */
export function signInWithGoogle(): Promise<User> {
  return logged('Google login', async () => {
    const { auth, env } = firebase();
    const result = env.useEmulators
      ? await signInWithCredential(auth, GoogleAuthProvider.credential(await chooseLocalGoogleAccount()))
      : await signInWithPopup(auth, new GoogleAuthProvider());
    await ensureProfile(result.user);
    return result.user;
  });
}

/** Signs out. */
export function signOutUser(): Promise<void> {
  return logged('Logout', () => signOut(firebase().auth));
}

/**
 * Sends a password-reset e-mail. An e-mail without an account resolves too,
 * as production does with e-mail enumeration protection, so the page says the
 * same either way; other failures are logged and rethrown.
 */
export async function resetPassword(email: string): Promise<void> {
  try {
    await logged('Password reset', () => sendPasswordResetEmail(firebase().auth, email));
  } catch (err) {
    if ((err as { code?: string }).code !== 'auth/user-not-found') throw err;
  }
}

/**
 * Words for a failed sign-in, sign-up or reset, shown to the person. Like
 * production with e-mail enumeration protection (on by default since
 * September 2023), they never tell whether an e-mail has an account: a wrong
 * password and an unknown e-mail read the same.
 */
export function authErrorMessage(err: unknown): string {
  const code = (err as { code?: string })?.code ?? '';
  const messages: Record<string, string> = {
    'auth/email-already-in-use':
      'We could not create an account with this e-mail. If it is yours, sign in or reset your password.',
    'auth/invalid-email': 'That e-mail address does not look right.',
    'auth/weak-password': 'Choose a password of at least 6 characters.',
    'auth/wrong-password': INVALID_LOGIN,
    'auth/invalid-credential': INVALID_LOGIN,
    'auth/invalid-login-credentials': INVALID_LOGIN,
    'auth/user-not-found': INVALID_LOGIN,
    'auth/user-disabled': 'This account has been disabled.',
    'auth/too-many-requests': 'Too many attempts. Try again in a minute.',
    'auth/popup-closed-by-user': 'The sign-in window was closed.',
    'auth/network-request-failed': 'We could not reach the server. Check your connection.',
  };
  return (
    messages[code] ??
    (err instanceof Error && !code ? err.message : 'Something went wrong. Please try again.')
  );
}

/** What a failed e-mail sign-in reads, whatever was wrong. */
export const INVALID_LOGIN = 'The e-mail or password is incorrect.';

/** What a password reset request reads, whether or not the e-mail has an account. */
export function resetNotice(email: string): string {
  return `If an account exists for ${email}, we sent it a link to reset the password. Check your inbox.`;
}
