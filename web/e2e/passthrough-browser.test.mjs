// `loupe serve --pass-through firestore,storage --upstream` reached from a
// page in Chromium through the unmodified JS SDK: the page (served by the
// upstream loupe, so another origin than the loupe it calls) listens to a
// document over WebChannel, writes it, and uploads and downloads a file,
// every call answered by the upstream through the pass-through. Loupe's and
// the upstream's CORS headers both on an answer made the browser drop it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

// useThroughPassThrough runs in the page: Firestore and Storage of loupe at
// port; it answers what it saw, or the first error.
async function useThroughPassThrough({ projectId, port }) {
  const { app, firestore, storage } = window.sdk;
  const a = app.initializeApp({
    projectId,
    apiKey: 'demo-api-key',
    storageBucket: `${projectId}.appspot.com`,
  });
  const db = firestore.getFirestore(a);
  firestore.connectFirestoreEmulator(db, '127.0.0.1', port);
  const st = storage.getStorage(a);
  storage.connectStorageEmulator(st, '127.0.0.1', port);
  const timeout = (ms, what) =>
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms));
  try {
    const ref = firestore.doc(db, 'rooms/r1');
    const heard = new Promise((resolve, reject) => {
      // Not from the cache: the server's answer came over WebChannel.
      const stop = firestore.onSnapshot(
        ref,
        { includeMetadataChanges: true },
        (snap) => {
          if (snap.exists() && !snap.metadata.fromCache && !snap.metadata.hasPendingWrites) {
            stop();
            resolve(snap.data().topic);
          }
        },
        reject,
      );
    });
    await Promise.race([firestore.setDoc(ref, { topic: 'pass-through' }), timeout(20_000, 'setDoc')]);
    const topic = await Promise.race([heard, timeout(20_000, 'onSnapshot')]);
    const file = storage.ref(st, 'notes/hello.txt');
    await storage.uploadString(file, 'hello');
    const downloaded = await (await fetch(await storage.getDownloadURL(file))).text();
    return { ok: true, topic, downloaded };
  } catch (e) {
    return { ok: false, error: String(e && e.code ? `${e.code} ${e.message}` : e) };
  }
}

describe('pass-through from a page', () => {
  let upstream;
  let local;
  let browser;
  before(async () => {
    upstream = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
    local = await startLoupe({
      config: {},
      args: ['--only', 'auth', '--pass-through', 'firestore,storage', '--upstream', upstream.host],
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await local?.stop();
    await upstream?.stop();
  });

  it('listens over WebChannel, writes, uploads and downloads through the pass-through', async () => {
    const page = await openSdkPage(browser, upstream.url);
    const out = await page.evaluate(useThroughPassThrough, { projectId, port: local.port });
    assert.deepEqual(out, { ok: true, topic: 'pass-through', downloaded: 'hello' });
  });
});
