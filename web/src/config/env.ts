/** The Firebase web configuration, read once from Vite's env (VITE_FIREBASE_*). */
export interface FirebaseEnv {
  apiKey: string;
  authDomain: string;
  projectId: string;
  storageBucket: string;
  messagingSenderId: string;
  appId: string;
  vapidKey: string;
  /** True when the app talks to `loupe serve` on its own origin instead of real Firebase. */
  useEmulators: boolean;
}

export type EnvResult = { ok: true; env: FirebaseEnv } | { ok: false; missing: string[] };

/**
 * Reads and validates the configuration. The app refuses to start without an
 * API key or a project id (docs/product-spec.md §5); the result names what is missing.
 */
export function readEnv(source: Record<string, string | undefined>): EnvResult {
  const env: FirebaseEnv = {
    apiKey: source.VITE_FIREBASE_API_KEY?.trim() ?? '',
    authDomain: source.VITE_FIREBASE_AUTH_DOMAIN?.trim() ?? '',
    projectId: source.VITE_FIREBASE_PROJECT_ID?.trim() ?? '',
    storageBucket: source.VITE_FIREBASE_STORAGE_BUCKET?.trim() ?? '',
    messagingSenderId: source.VITE_FIREBASE_MESSAGING_SENDER_ID?.trim() ?? '',
    appId: source.VITE_FIREBASE_APP_ID?.trim() ?? '',
    vapidKey: source.VITE_FIREBASE_VAPID_KEY?.trim() ?? '',
    useEmulators: source.VITE_USE_EMULATORS === 'true',
  };
  const missing = [
    ...(env.apiKey ? [] : ['VITE_FIREBASE_API_KEY']),
    ...(env.projectId ? [] : ['VITE_FIREBASE_PROJECT_ID']),
  ];
  return missing.length > 0 ? { ok: false, missing } : { ok: true, env };
}

/** The validated configuration of this build. */
export const envResult = readEnv(import.meta.env as Record<string, string | undefined>);
