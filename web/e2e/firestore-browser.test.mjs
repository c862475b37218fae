// The unmodified Firebase JS SDK in Chromium against a real `loupe serve`
// over WebChannel, in streaming and in forced long-polling mode.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { admin } from './support/admin.mjs';
import { launchBrowser } from './support/browser.mjs';
import { freePort, projectId, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';
import { scratchDir } from './support/scratch.mjs';

// initDb runs in the page: one app per page, Firestore connected to loupe.
function initDb({ projectId, port, longPolling, persistent = false }) {
  const { app, firestore } = window.sdk;
  const a = app.initializeApp({ projectId, apiKey: 'demo-api-key' });
  window.db = firestore.initializeFirestore(a, {
    experimentalForceLongPolling: longPolling,
    ...(persistent ? { localCache: firestore.persistentLocalCache() } : {}),
  });
  firestore.connectFirestoreEmulator(window.db, '127.0.0.1', port);
}

for (const longPolling of [false, true]) {
  describe(`Firestore in Chromium (${longPolling ? 'long polling' : 'streaming'})`, () => {
    let loupe;
    let browser;
    let pageA;
    let pageB;
    before(async () => {
      loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
      browser = await launchBrowser();
      pageA = await openSdkPage(browser, loupe.url);
      pageB = await openSdkPage(browser, loupe.url);
      for (const page of [pageA, pageB])
        await page.evaluate(initDb, { projectId, port: loupe.port, longPolling });
    });
    after(async () => {
      await browser?.close();
      await loupe?.stop();
    });

    it('writes and reads documents, batches, transactions, transforms and counts', async () => {
      const result = await pageA.evaluate(async () => {
        const f = window.sdk.firestore;
        const db = window.db;
        const ref = f.doc(db, 'cities/zrh');
        await f.setDoc(ref, { name: 'Zürich 😀', pop: 1, at: f.serverTimestamp() });
        await f.updateDoc(ref, { pop: f.increment(41) });
        const b = f.writeBatch(db);
        b.set(f.doc(db, 'cities/ber'), { name: 'Berlin', pop: 3 });
        b.delete(f.doc(db, 'cities/nowhere'));
        await b.commit();
        await f.runTransaction(db, async (tx) => {
          const s = await tx.get(ref);
          tx.update(ref, { pop: s.get('pop') * 2 });
        });
        const snap = await f.getDoc(ref);
        const all = await f.getDocs(f.query(f.collection(db, 'cities'), f.orderBy('pop', 'desc')));
        const count = await f.getCountFromServer(f.collection(db, 'cities'));
        await f.deleteDoc(f.doc(db, 'cities/ber'));
        const gone = await f.getDoc(f.doc(db, 'cities/ber'));
        return {
          name: snap.get('name'),
          pop: snap.get('pop'),
          hasTime: snap.get('at') instanceof f.Timestamp,
          order: all.docs.map((d) => d.id),
          count: count.data().count,
          goneExists: gone.exists(),
        };
      });
      assert.deepEqual(result, {
        name: 'Zürich 😀',
        pop: 84,
        hasTime: true,
        order: ['zrh', 'ber'],
        count: 2,
        goneExists: false,
      });
    });

    it('delivers a write in one tab to a query listener in another', async () => {
      await pageB.evaluate(() => {
        const f = window.sdk.firestore;
        window.seen = [];
        const q = f.query(f.collection(window.db, 'feed'), f.orderBy('n', 'desc'), f.limit(2));
        f.onSnapshot(q, (s) => {
          window.seen.push({
            ids: s.docs.map((d) => d.id).join(','),
            changes: s
              .docChanges()
              .map((c) => `${c.type}:${c.doc.id}`)
              .join(' '),
          });
        });
      });
      await pageB.waitForFunction(() => window.seen.length === 1);
      const write = (id, n) =>
        pageA.evaluate(
          ({ id, n }) =>
            window.sdk.firestore.setDoc(window.sdk.firestore.doc(window.db, `feed/${id}`), { n }),
          { id, n },
        );
      await write('a', 1);
      await pageB.waitForFunction(() => window.seen.at(-1).ids === 'a');
      await write('b', 2);
      await pageB.waitForFunction(() => window.seen.at(-1).ids === 'b,a');
      await write('c', 3);
      await pageB.waitForFunction(() => window.seen.at(-1).ids === 'c,b');
      assert.equal(await pageB.evaluate(() => window.seen.at(-1).changes), 'removed:a added:c');
      await pageA.evaluate(() =>
        window.sdk.firestore.deleteDoc(window.sdk.firestore.doc(window.db, 'feed/c')),
      );
      await pageB.waitForFunction(() => window.seen.at(-1).ids === 'b,a');
    });

    it('reports added, modified and removed changes and settles pending writes', async () => {
      await pageB.evaluate(() => {
        const f = window.sdk.firestore;
        window.docEvents = [];
        window.queryChanges = [];
        f.onSnapshot(f.doc(window.db, 'notes/n1'), (s) =>
          window.docEvents.push(s.exists() ? s.get('v') : 'missing'),
        );
        f.onSnapshot(f.query(f.collection(window.db, 'notes'), f.orderBy('v', 'desc')), (s) =>
          s.docChanges().forEach((c) => window.queryChanges.push(`${c.type}:${c.doc.id}:${c.doc.get('v')}`)),
        );
      });
      await pageB.waitForFunction(() => window.docEvents.length === 1);
      const pending = await pageA.evaluate(async () => {
        const f = window.sdk.firestore;
        const ref = f.doc(window.db, 'notes/n1');
        const states = [];
        const settled = new Promise((resolve) => {
          const stop = f.onSnapshot(ref, { includeMetadataChanges: true }, (s) => {
            if (!s.exists()) return;
            states.push(s.metadata.hasPendingWrites);
            if (!s.metadata.hasPendingWrites) {
              stop();
              resolve();
            }
          });
        });
        await f.setDoc(ref, { v: 1 });
        await settled;
        return states;
      });
      assert.equal(pending[0], true, 'the local write shows first as pending');
      assert.equal(pending.at(-1), false, 'then the server confirms it');
      const edit = (fn) => pageA.evaluate(fn);
      await pageB.waitForFunction(() => window.docEvents.includes(1));
      await edit(() =>
        window.sdk.firestore.updateDoc(window.sdk.firestore.doc(window.db, 'notes/n1'), { v: 2 }),
      );
      await pageB.waitForFunction(() => window.docEvents.includes(2));
      await edit(() => window.sdk.firestore.deleteDoc(window.sdk.firestore.doc(window.db, 'notes/n1')));
      await pageB.waitForFunction(() => window.docEvents.length === 4);
      assert.deepEqual(await pageB.evaluate(() => window.docEvents), ['missing', 1, 2, 'missing']);
      assert.deepEqual(await pageB.evaluate(() => window.queryChanges), [
        'added:n1:1',
        'modified:n1:2',
        'removed:n1:2',
      ]);
    });
  });
}

for (const longPolling of [false, true]) {
  describe(`Firestore in Chromium across a loupe restart (${longPolling ? 'long polling' : 'streaming'})`, () => {
    it('keeps a listener alive and syncs offline edits from a persistent cache', async () => {
      const port = await freePort();
      const dataDir = path.join(scratchDir('loupe-restart-'), 'data');
      const hosting = { hosting: { public: await sdkPage() } };
      const start = () =>
        startLoupe({ dataDir, args: ['--port', String(port)], config: structuredClone(hosting) });
      let loupe = await start();
      const browser = await launchBrowser();
      try {
        const listener = await openSdkPage(browser, loupe.url);
        const offline = await openSdkPage(browser, loupe.url);
        await listener.evaluate(initDb, { projectId, port, longPolling });
        await offline.evaluate(initDb, { projectId, port, longPolling, persistent: true });
        await listener.evaluate(() => {
          const f = window.sdk.firestore;
          window.values = [];
          f.onSnapshot(f.doc(window.db, 'live/one'), (s) => s.exists() && window.values.push(s.get('v')));
        });
        await admin(loupe).set('live/one', { v: 1 });
        await listener.waitForFunction(() => window.values.includes(1));
        await offline.evaluate(() =>
          window.sdk.firestore.getDoc(window.sdk.firestore.doc(window.db, 'live/one')),
        );

        await loupe.stop();
        // While loupe is down, the persistent page edits; the write waits in IndexedDB.
        await offline.evaluate(() => {
          const f = window.sdk.firestore;
          window.synced = f.setDoc(f.doc(window.db, 'live/two'), { v: 'written offline' }).then(() => true);
        });
        const cached = await offline.evaluate(async () => {
          const f = window.sdk.firestore;
          return (await f.getDocFromCache(f.doc(window.db, 'live/two'))).get('v');
        });
        assert.equal(cached, 'written offline');

        loupe = await start();
        await admin(loupe).set('live/one', { v: 2 });
        await listener.waitForFunction(() => window.values.includes(2), undefined, { timeout: 60_000 });
        assert.equal(await offline.evaluate(() => window.synced), true);
        assert.deepEqual(await admin(loupe).get('live/two'), { v: 'written offline' });
      } finally {
        await browser.close();
        await loupe.stop();
      }
    });
  });
}

describe('Firestore rules in Chromium (WebChannel)', () => {
  let loupe;
  let browser;
  let page;
  before(async () => {
    loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } }, rules: true });
    browser = await launchBrowser();
    page = await openSdkPage(browser, loupe.url);
    await page.evaluate(
      ({ projectId, port }) => {
        const { app, firestore } = window.sdk;
        window.db = firestore.getFirestore(app.initializeApp({ projectId, apiKey: 'demo-api-key' }));
        firestore.connectFirestoreEmulator(window.db, '127.0.0.1', port, { mockUserToken: { sub: 'alice' } });
      },
      { projectId, port: loupe.port },
    );
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('allows what the rules allow and rejects the rest with permission-denied', async () => {
    const outcome = await page.evaluate(async () => {
      const f = window.sdk.firestore;
      const attempt = (p) =>
        p.then(
          () => 'ok',
          (e) => e.code,
        );
      return {
        own: await attempt(f.setDoc(f.doc(window.db, 'users/alice'), { name: 'Alice', role: 'user' })),
        others: await attempt(f.setDoc(f.doc(window.db, 'users/bob'), { name: 'Bob' })),
        admin: await attempt(f.updateDoc(f.doc(window.db, 'users/alice'), { role: 'admin' })),
        listAll: await attempt(f.getDocs(f.collection(window.db, 'notifications'))),
        listOwn: await attempt(
          f.getDocs(f.query(f.collection(window.db, 'notifications'), f.where('userId', '==', 'alice'))),
        ),
      };
    });
    assert.deepEqual(outcome, {
      own: 'ok',
      others: 'permission-denied',
      admin: 'permission-denied',
      listAll: 'permission-denied',
      listOwn: 'ok',
    });
  });
});
