import { initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, type Auth } from 'firebase/auth';
import { connectFirestoreEmulator, getFirestore, Timestamp, type Firestore } from 'firebase/firestore';
import { connectStorageEmulator, getStorage, type FirebaseStorage } from 'firebase/storage';
import type { FirebaseEnv } from '@/config/env';

/** The Firebase services the app uses, all from one app instance. */
export interface FirebaseServices {
  app: FirebaseApp;
  auth: Auth;
  db: Firestore;
  storage: FirebaseStorage;
  env: FirebaseEnv;
}

let services: FirebaseServices | undefined;

/**
 * Initialises Firebase once. In local mode every service connects to the
 * origin that served the page (`loupe serve` answers them all on one port);
 * in production the SDK's defaults reach real Firebase. Nothing else in the
 * app knows which one it is talking to.
 */
export function initFirebase(
  env: FirebaseEnv,
  origin: URL = new URL(window.location.href),
): FirebaseServices {
  if (services) return services;
  const app = initializeApp({
    apiKey: env.apiKey,
    authDomain: env.authDomain,
    projectId: env.projectId,
    storageBucket: env.storageBucket,
    messagingSenderId: env.messagingSenderId,
    appId: env.appId,
  });
  const auth = getAuth(app);
  const db = getFirestore(app);
  const storage = getStorage(app);
  if (env.useEmulators) {
    const port = Number(origin.port || (origin.protocol === 'https:' ? 443 : 80));
    connectAuthEmulator(auth, origin.origin, { disableWarnings: true });
    connectFirestoreEmulator(db, origin.hostname, port);
    connectStorageEmulator(storage, origin.hostname, port);
  }
  services = { app, auth, db, storage, env };
  return services;
}

/** The initialised services; main.tsx initialises them before rendering. */
export function firebase(): FirebaseServices {
  if (!services) throw new Error('Firebase is not initialised');
  return services;
}

/**
 * Turns a stored timestamp into a Date: the one place the app converts
 * Firestore Timestamps. A pending server timestamp (null) or anything that is
 * not a time gives null.
 */
export function timestampToDate(value: unknown): Date | null {
  if (value instanceof Timestamp) return value.toDate();
  if (value instanceof Date) return value;
  return null;
}
