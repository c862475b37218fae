import { doc, updateDoc } from 'firebase/firestore';
import { getMessaging, getToken, onMessage } from 'firebase/messaging';
import type { FirebaseEnv } from '@/config/env';
import { firebase } from '@/lib/firebase';

/** Console texts of docs/product-spec.md §8. */
export const PUSH_UNSUPPORTED = 'Push messaging is not supported in this browser.';
export const SW_FAILED = 'Service Worker registration failed:';

/** Where the service worker lives (the Messaging SDK's default). */
export const WORKER_URL = '/firebase-messaging-sw.js';

/** Local push: loupe issues tokens and streams messages (see internal/messaging). */
const localPush = {
  tokens: (project: string) => `/emulator/v1/projects/${project}/messaging/tokens`,
  stream: (project: string, token: string) =>
    `/emulator/v1/projects/${project}/messaging/stream?token=${encodeURIComponent(token)}`,
};

/** A push message as the app shows it in the foreground. */
export interface PushMessage {
  title: string;
  body: string;
  link?: string;
}

/** True where the browser has both service workers and push messaging. */
export function pushSupported(): boolean {
  return (
    typeof navigator !== 'undefined' &&
    'serviceWorker' in navigator &&
    typeof window !== 'undefined' &&
    'PushManager' in window
  );
}

/** The FIREBASE_CONFIG message the worker gets (docs/product-spec.md §4). */
export function firebaseConfigMessage(env: FirebaseEnv) {
  return {
    type: 'FIREBASE_CONFIG',
    config: {
      FIREBASE_API_KEY: env.apiKey,
      FIREBASE_AUTH_DOMAIN: env.authDomain,
      FIREBASE_PROJECT_ID: env.projectId,
      FIREBASE_STORAGE_BUCKET: env.storageBucket,
      FIREBASE_MESSAGING_SENDER_ID: env.messagingSenderId,
      FIREBASE_APP_ID: env.appId,
    },
  };
}

/** A message as loupe's stream carries it (FCM's MessagePayload, the fields the app reads). */
interface LocalPushPayload {
  notification?: { title?: string; body?: string };
  fcmOptions?: { link?: string };
}

/** Posts a message to the active push worker once there is one. */
function tellWorker(message: { type: string; url?: string }): void {
  void navigator.serviceWorker.ready.then((reg) => reg.active?.postMessage(message));
}

/**
 * Locally there is no push service to wake the worker: it reads loupe's
 * stream itself (see public/firebase-messaging-sw.js). Each minute the page
 * reminds it, which reopens the stream after the browser stopped the worker.
 */
function keepLocalPushAlive(): void {
  const ping = () => tellWorker({ type: 'LOUPE_PUSH_KEEPALIVE' });
  ping();
  window.setInterval(ping, 60_000);
}

/** Set once the page is being left (pagehide): it takes no more messages. */
let leaving = false;

/** True when this page shows pushes itself; otherwise the worker notifies. */
function inFront(): boolean {
  return !leaving && document.visibilityState === 'visible' && document.hasFocus();
}

/** Where this page shows the messages it takes from the worker; set by enablePush. */
let showInPage: ((m: PushMessage) => void) | null = null;

/**
 * Local mode: the worker reads loupe's stream and offers each message to a
 * page in front; this page takes it (and shows it) only while it is visible
 * and focused, else the worker shows it as a notification.
 */
function takeOffers(onForeground: (m: PushMessage) => void): void {
  const listening = showInPage !== null;
  showInPage = onForeground;
  if (listening) return;
  // A page being closed may still answer the worker; what it took would go with it.
  window.addEventListener('pagehide', () => (leaving = true));
  window.addEventListener('pageshow', () => (leaving = false));
  navigator.serviceWorker.addEventListener('message', (e: MessageEvent) => {
    const offer = e.data as { type?: string; payload?: LocalPushPayload } | null;
    if (offer?.type !== 'LOUPE_PUSH_MESSAGE') return;
    const taken = inFront();
    e.ports[0]?.postMessage({ taken });
    if (!taken || !offer.payload) return;
    console.log('Message received. ', offer.payload);
    showInPage?.({
      title: offer.payload.notification?.title ?? '',
      body: offer.payload.notification?.body ?? '',
      link: offer.payload.fcmOptions?.link,
    });
  });
  navigator.serviceWorker.startMessages();
}

/**
 * Registers the push worker at load, only where service workers and push are
 * supported (otherwise a warning is logged); success logs the scope, failure
 * logs an error; an active worker then gets the Firebase config.
 */
export async function registerPushWorker(env: FirebaseEnv): Promise<ServiceWorkerRegistration | null> {
  if (!pushSupported()) {
    console.warn(PUSH_UNSUPPORTED);
    return null;
  }
  try {
    const reg = await navigator.serviceWorker.register(WORKER_URL);
    console.log('Service Worker registered with scope:', reg.scope);
    reg.active?.postMessage(firebaseConfigMessage(env));
    if (env.useEmulators) keepLocalPushAlive();
    return reg;
  } catch (err) {
    console.error(SW_FAILED, err);
    return null;
  }
}

/**
 * Asks permission, obtains a push token, stores it on the profile as
 * fcmToken and delivers foreground messages to onForeground. Locally the
 * token comes from loupe and the worker reads its message stream, offering
 * each message to this page, which takes it while visible and focused (else
 * the worker notifies); in production both come from Firebase Cloud Messaging.
 */
export async function enablePush(uid: string, onForeground: (m: PushMessage) => void): Promise<void> {
  if (!pushSupported()) throw new Error(PUSH_UNSUPPORTED);
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications are blocked for this site.');
  const { app, auth, env, db } = firebase();
  let token: string;
  if (env.useEmulators) {
    // The token is the signed-in user's (loupe --strict-credentials issues only to one).
    const idToken = await auth.currentUser?.getIdToken();
    const res = await fetch(localPush.tokens(env.projectId), {
      method: 'POST',
      headers: idToken ? { Authorization: `Bearer ${idToken}` } : {},
    });
    if (!res.ok) throw new Error(`Push is not available (HTTP ${res.status}).`);
    token = ((await res.json()) as { token: string }).token;
    const stream = localPush.stream(env.projectId, token);
    takeOffers(onForeground);
    tellWorker({ type: 'LOUPE_PUSH_STREAM', url: new URL(stream, window.location.href).href });
  } else {
    const messaging = getMessaging(app);
    token = await getToken(messaging, {
      vapidKey: env.vapidKey || undefined,
      serviceWorkerRegistration: await navigator.serviceWorker.getRegistration(WORKER_URL),
    });
    onMessage(messaging, (payload) => {
      console.log('Message received. ', payload);
      onForeground({
        title: payload.notification?.title ?? '',
        body: payload.notification?.body ?? '',
        link: payload.fcmOptions?.link,
      });
    });
  }
  await updateDoc(doc(db, 'users', uid), { fcmToken: token });
}
