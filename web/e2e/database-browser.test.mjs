// The Realtime Database from the unmodified Firebase JS SDK in Chromium
// against a real `loupe serve`: one page over the WebSocket, one forced onto
// long polling (forceLongPolling(), the transport the SDK falls back to),
// each seeing the other's writes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

// initDb runs in the page: the database of namespace ns, over long polling
// when asked; it records which transport the page opened.
function initDb({ host, ns, longPolling }) {
  const { app, database } = window.sdk;
  if (longPolling) database.forceLongPolling();
  else database.forceWebSockets();
  const a = app.initializeApp({ projectId: 'demo-rtdb', databaseURL: `http://${host}?ns=${ns}` });
  window.db = database.getDatabase(a);
  // until resolves with the first value at path for which the test holds.
  window.until = (path, test) =>
    new Promise((resolve) => {
      const off = database.onValue(database.ref(window.db, path), (snap) => {
        if (test(snap.val())) {
          off();
          resolve(snap.val());
        }
      });
    });
}

describe('Realtime Database in Chromium (WebSocket and long polling)', () => {
  let loupe;
  let browser;
  let ws;
  let lp;
  const ns = 'browser-test';
  before(async () => {
    loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
    browser = await launchBrowser();
    ws = await openSdkPage(browser, loupe.url);
    lp = await openSdkPage(browser, loupe.url);
    await ws.evaluate(initDb, { host: loupe.host, ns, longPolling: false });
    await lp.evaluate(initDb, { host: loupe.host, ns, longPolling: true });
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it(
    'carries reads, writes, listens and transactions both ways over long polling',
    { timeout: 60_000 },
    async () => {
      const lpRequests = [];
      lp.on('request', (r) => r.url().includes('/.lp?') && lpRequests.push(r.url()));
      // The long-polling page listens; the WebSocket page writes.
      const seen = lp.evaluate(() => window.until('rooms/r1', (v) => v?.topic === 'tea'));
      await ws.evaluate(async () => {
        const { database } = window.sdk;
        await database.set(database.ref(window.db, 'rooms/r1'), {
          topic: 'tea',
          at: database.serverTimestamp(),
        });
      });
      assert.equal((await seen).topic, 'tea');
      // A write larger than one URL's worth of segments, and a transaction.
      const big = 'x'.repeat(5000);
      const back = ws.evaluate((big) => window.until('rooms/r2/text', (v) => v === big), big);
      const result = await lp.evaluate(async (big) => {
        const { database } = window.sdk;
        const db = window.db;
        await database.set(database.ref(db, 'rooms/r2'), { text: big, n: 1 });
        const tx = await database.runTransaction(database.ref(db, 'rooms/r2/n'), (n) => (n ?? 0) + 41);
        const got = await database.get(database.ref(db, 'rooms'));
        return { n: tx.snapshot.val(), keys: Object.keys(got.val()) };
      }, big);
      assert.deepEqual(result, { n: 42, keys: ['r1', 'r2'] });
      assert.equal((await back).length, 5000);
      assert.ok(
        lpRequests.some((u) => u.includes('start=t')) && lpRequests.some((u) => /[?&]seg0=/.test(u)),
        `the page used long polling: ${lpRequests.length} requests`,
      );
    },
  );

  it('runs the onDisconnect writes of a long-polling page that goes away', { timeout: 60_000 }, async () => {
    await lp.evaluate(async () => {
      const { database } = window.sdk;
      const presence = database.ref(window.db, 'presence/lp');
      await database.set(presence, 'online');
      await database.onDisconnect(presence).set('offline');
    });
    const gone = ws.evaluate(() => window.until('presence/lp', (v) => v === 'offline'));
    await lp.context().close();
    assert.equal(await gone, 'offline');
  });
});
