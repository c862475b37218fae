// Open listeners follow the rules, as in production: a listened document that
// changes so that the rules deny it, and a listened query the rules deny once
// they are reloaded, end the listener with permission-denied (a target
// removal with a cause), through the unmodified JS SDK in Node (gRPC) and in
// Chromium (WebChannel).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fs from 'firebase/firestore';
import { launchBrowser } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

const rules = (posts) => `rules_version = '2';
service cloud.firestore {
  match /databases/{d}/documents {
    match /docs/{id} { allow read: if resource.data.public == true; allow write: if true; }
    match /posts/{id} { allow read, write: if ${posts}; }
  }
}`;

async function putRules(loupe, source) {
  const res = await fetch(`${loupe.url}/emulator/v1/projects/${projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }),
  });
  assert.equal(res.status, 200, await res.text());
}

// scenario runs in Node or in the page: it listens to a public document and
// to a collection as alice, makes the document private, asks for the rules
// to deny the collection, and reports what each listener's callbacks saw.
async function scenario(f, db, denyPosts) {
  const listen = (target) => {
    const seen = { snapshots: 0, error: null };
    let first;
    const ready = new Promise((resolve) => (first = resolve));
    let failed;
    seen.failed = new Promise((resolve) => (failed = resolve));
    f.onSnapshot(
      target,
      () => {
        seen.snapshots++;
        first();
      },
      (err) => {
        seen.error = err.code;
        failed();
      },
    );
    return { seen, ready };
  };
  const timeout = (p, what) =>
    Promise.race([
      p,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), 15_000)),
    ]);
  await f.setDoc(f.doc(db, 'docs/d1'), { public: true });
  await f.setDoc(f.doc(db, 'posts/p1'), { title: 'hello' });
  const doc = listen(f.doc(db, 'docs/d1'));
  const posts = listen(f.collection(db, 'posts'));
  await timeout(Promise.all([doc.ready, posts.ready]), 'first snapshots');
  await f.setDoc(f.doc(db, 'docs/d1'), { public: false, secret: 's' });
  await timeout(doc.seen.failed, 'the document listener to fail');
  await denyPosts();
  await timeout(posts.seen.failed, 'the query listener to fail');
  return { doc: doc.seen.error, posts: posts.seen.error };
}

describe('Open listeners follow the rules', () => {
  let loupe;
  before(async () => {
    loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
  });
  after(async () => {
    await loupe?.stop();
  });

  it('the JS SDK in Node (gRPC) gets permission-denied', async () => {
    await putRules(loupe, rules('true'));
    const app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `listener-rules-${Date.now()}`);
    try {
      const db = fs.getFirestore(app);
      fs.connectFirestoreEmulator(db, '127.0.0.1', loupe.port, { mockUserToken: { sub: 'alice' } });
      const got = await scenario(fs, db, () => putRules(loupe, rules('false')));
      assert.deepEqual(got, { doc: 'permission-denied', posts: 'permission-denied' });
    } finally {
      await deleteApp(app);
    }
  });

  it('the JS SDK in Chromium (WebChannel) gets permission-denied', async () => {
    await putRules(loupe, rules('true'));
    const browser = await launchBrowser();
    try {
      const page = await openSdkPage(browser, loupe.url);
      await page.exposeFunction('denyPosts', () => putRules(loupe, rules('false')));
      const got = await page.evaluate(
        async ({ projectId, port, source }) => {
          const { app, firestore } = window.sdk;
          const db = firestore.getFirestore(app.initializeApp({ projectId, apiKey: 'demo-api-key' }));
          firestore.connectFirestoreEmulator(db, '127.0.0.1', port, { mockUserToken: { sub: 'alice' } });
          // The scenario's source, run in the page.
          const run = new Function(`return (${source})`)();
          return run(firestore, db, () => window.denyPosts());
        },
        { projectId, port: loupe.port, source: scenario.toString() },
      );
      assert.deepEqual(got, { doc: 'permission-denied', posts: 'permission-denied' });
    } finally {
      await browser.close();
    }
  });
});
