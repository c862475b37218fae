// A running loupe with the Firestore clients of both Node SDKs connected
// to it: the Node Admin SDK (firebase-admin) over gRPC and, in its REST
// mode (preferRest), over REST, and the Firebase JS SDK's Node build (over
// gRPC), for tests that compare what each sees.
import { deleteApp as deleteClientApp, initializeApp as initializeClientApp } from 'firebase/app';
import * as web from 'firebase/firestore';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { projectId, startLoupe } from './loupe.mjs';

/**
 * Starts loupe (with startLoupe's options) and connects both SDKs to it;
 * name keeps the apps of several test files apart. stop() closes both and
 * stops loupe.
 */
export async function startWithSDKs(name, opts) {
  const loupe = await startLoupe(opts);
  process.env.METADATA_SERVER_DETECTION = 'none';
  process.env.FIRESTORE_EMULATOR_HOST = loupe.host;
  const adminApp = initializeApp({ projectId }, `${name}-${Date.now()}`);
  const db = getFirestore(adminApp);
  const restApp = initializeApp({ projectId }, `${name}-rest-${Date.now()}`);
  const restdb = getFirestore(restApp);
  // REST mode authenticates through google-auth-library even against an
  // emulator; the SDK's own emulator credential (Bearer owner) goes along
  // as a header, so an auth client that adds nothing stands in for one.
  restdb.settings({ preferRest: true, auth: { getRequestHeaders: async () => ({}) } });
  const clientApp = initializeClientApp({ projectId, apiKey: 'demo-api-key' }, `${name}-web-${Date.now()}`);
  const jsdb = web.getFirestore(clientApp);
  web.connectFirestoreEmulator(jsdb, '127.0.0.1', loupe.port);
  const stop = async () => {
    await web.terminate(jsdb);
    await deleteClientApp(clientApp);
    await deleteApp(adminApp);
    await deleteApp(restApp);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await loupe.stop();
  };
  return { loupe, db, restdb, jsdb, stop };
}
