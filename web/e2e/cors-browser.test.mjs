// An app served from another host name than this machine's (app.example.test,
// mapped to 127.0.0.1 with Chromium's --host-resolver-rules) using Auth,
// Firestore and Storage of a real `loupe serve` through the unmodified JS SDK:
// working by default, as with the official emulators, with one log line
// naming the origin; under --strict-credentials refused, with a log line that
// says how to allow it, and working once --allow-origin names the origin.
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { sdkPage } from './support/sdk-page.mjs';

const host = 'app.example.test';

// useLoupe runs in the page: sign up, write and read a document, upload and
// read back a file; it answers what worked, or the first error.
async function useLoupe({ projectId, port }) {
  const { app, auth, firestore, storage } = window.sdk;
  const a = app.initializeApp(
    { projectId, apiKey: 'demo-api-key', storageBucket: `${projectId}.appspot.com` },
    `cors-${Date.now()}`,
  );
  const au = auth.getAuth(a);
  auth.connectAuthEmulator(au, `http://127.0.0.1:${port}`, { disableWarnings: true });
  const db = firestore.getFirestore(a);
  firestore.connectFirestoreEmulator(db, '127.0.0.1', port);
  const st = storage.getStorage(a);
  storage.connectStorageEmulator(st, '127.0.0.1', port);
  try {
    const cred = await auth.createUserWithEmailAndPassword(au, `cors${Date.now()}@example.test`, 'secret-1');
    const ref = firestore.doc(db, `cors/${cred.user.uid}`);
    await firestore.setDoc(ref, { from: location.host });
    const snap = await firestore.getDoc(ref);
    const file = storage.ref(st, `cors/${cred.user.uid}.txt`);
    await storage.uploadString(file, 'hello');
    const url = await storage.getDownloadURL(file);
    return { ok: true, doc: snap.data().from, downloaded: await (await fetch(url)).text() };
  } catch (e) {
    return { ok: false, error: String(e && e.code ? e.code : e) };
  }
}

describe('pages of another host', () => {
  let site;
  let sitePort;
  let browser;
  const loupes = [];
  before(async () => {
    const dir = await sdkPage();
    site = createServer((req, res) => {
      const name = req.url === '/' ? '/index.html' : req.url.split('?')[0];
      res.setHeader('Content-Type', name.endsWith('.js') ? 'text/javascript' : 'text/html');
      createReadStream(path.join(dir, path.normalize(name)))
        .on('error', () => res.writeHead(404).end())
        .pipe(res);
    });
    await new Promise((r) => site.listen(0, '127.0.0.1', r));
    sitePort = site.address().port;
    browser = await launchBrowser([`--host-resolver-rules=MAP ${host} 127.0.0.1`]);
  });
  after(async () => {
    await browser?.close();
    site?.close();
    await Promise.all(loupes.map((l) => l.stop()));
  });

  async function run(loupe) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://${host}:${sitePort}/index.html`);
    await page.waitForFunction(() => window.sdkReady === true);
    const out = await page.evaluate(useLoupe, { projectId, port: loupe.port });
    await context.close();
    return out;
  }

  it('works by default, as with the official emulators, and the log names the origin once', async () => {
    const loupe = await startLoupe({ config: {} });
    loupes.push(loupe);
    const out = await run(loupe);
    assert.deepEqual(out, { ok: true, doc: `${host}:${sitePort}`, downloaded: 'hello' });
    const named = loupe
      .log()
      .split('\n')
      .filter((line) => line.includes(`origin=http://${host}:${sitePort}`));
    assert.equal(named.length, 1, loupe.log());
  });

  it('is refused under --strict-credentials, and the log says how to allow it', async () => {
    const loupe = await startLoupe({ config: {}, args: ['--strict-credentials'] });
    loupes.push(loupe);
    const out = await run(loupe);
    assert.equal(out.ok, false, JSON.stringify(out));
    assert.match(loupe.log(), new RegExp(`--allow-origin http://${host}:${sitePort}`));
  });

  it('works under --strict-credentials with --allow-origin', async () => {
    const origin = `http://${host}:${sitePort}`;
    const loupe = await startLoupe({ config: {}, args: ['--strict-credentials', '--allow-origin', origin] });
    loupes.push(loupe);
    const out = await run(loupe);
    assert.deepEqual(out, { ok: true, doc: `${host}:${sitePort}`, downloaded: 'hello' });
  });
});
