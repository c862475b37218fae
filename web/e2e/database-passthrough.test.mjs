// `loupe serve --only auth --pass-through database --upstream` with a second
// loupe standing in for production: the Node Admin SDK and the JS SDK in
// Chromium, both pointed at the local loupe, read, write and listen over
// the WebSocket protocol, every call answered by the upstream. The Admin
// SDK's owner credential only an emulator takes stays behind: the upstream
// judges its session as unauthenticated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as adminApp from 'firebase-admin/app';
import { getDatabase as adminDatabase } from 'firebase-admin/database';
import { launchBrowser } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

const ns = 'passthrough-rtdb';
const rules = { rules: { '.read': true, open: { '.write': true }, secure: { '.write': 'auth != null' } } };

// useThroughPassThrough runs in the page: the database of namespace ns at
// the loupe on host, over the WebSocket; it listens to open/rooms/r1 until
// the Admin SDK's write shows, then writes open/rooms/r2 itself.
async function useThroughPassThrough({ host, ns }) {
  const { app, database } = window.sdk;
  database.forceWebSockets();
  const a = app.initializeApp({ projectId: 'demo-rtdb', databaseURL: `http://${host}?ns=${ns}` });
  const db = database.getDatabase(a);
  const timeout = (ms, what) =>
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms));
  try {
    const heard = new Promise((resolve, reject) => {
      const off = database.onValue(
        database.ref(db, 'open/rooms/r1'),
        (snap) => {
          if (snap.val()?.topic === 'from admin') {
            off();
            resolve(snap.val().topic);
          }
        },
        reject,
      );
    });
    window.listening = true;
    const topic = await Promise.race([heard, timeout(20_000, 'onValue')]);
    await Promise.race([
      database.set(database.ref(db, 'open/rooms/r2'), { topic: 'from page' }),
      timeout(20_000, 'set'),
    ]);
    return { ok: true, topic };
  } catch (e) {
    return { ok: false, error: String(e && e.code ? `${e.code} ${e.message}` : e) };
  }
}

/** The value at path in the upstream, read over REST as the owner. */
async function upstreamValue(upstream, path) {
  const res = await fetch(`${upstream.url}/${path}.json?ns=${ns}`, {
    headers: { Authorization: 'Bearer owner' },
  });
  assert.equal(res.status, 200);
  return res.json();
}

describe('Realtime Database pass-through', () => {
  let upstream;
  let local;
  let browser;
  let admin;
  let sdk; // the page of the WebSocket test, its session still open
  before(async () => {
    upstream = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
    const res = await fetch(`${upstream.url}/.settings/rules.json?ns=${ns}`, {
      method: 'PUT',
      headers: { Authorization: 'Bearer owner' },
      body: JSON.stringify(rules),
    });
    assert.equal(res.status, 200);
    local = await startLoupe({
      config: {},
      args: ['--only', 'auth', '--pass-through', 'database', '--upstream', upstream.host],
    });
    process.env.FIREBASE_DATABASE_EMULATOR_HOST = local.host;
    admin = adminApp.initializeApp(
      {
        projectId: 'demo-rtdb',
        databaseURL: `https://${ns}.firebaseio.com`,
        credential: { getAccessToken: async () => ({ access_token: 'owner', expires_in: 3600 }) },
      },
      'passthrough-admin',
    );
    browser = await launchBrowser();
  });
  after(async () => {
    if (admin) await adminApp.deleteApp(admin).catch(() => {});
    delete process.env.FIREBASE_DATABASE_EMULATOR_HOST;
    await browser?.close();
    await local?.stop();
    await upstream?.stop();
  });

  it('serves the Admin SDK from the upstream, without its owner credential', async () => {
    const adb = adminDatabase(admin);
    await adb.ref('open/admin').set({ n: 1 });
    const tx = await adb.ref('open/admin/n').transaction((v) => (v ?? 0) + 1);
    assert.equal(tx.committed, true);
    assert.deepEqual(await upstreamValue(upstream, 'open/admin'), { n: 2 });
    // As the owner the upstream would take it; passed through, the session
    // is unauthenticated and the rules refuse it.
    await assert.rejects(adb.ref('secure/x').set(1), /permission/i);
    assert.equal(await upstreamValue(upstream, 'secure/x'), null);
    assert.match(local.log(), /was not forwarded/);
  });

  it('carries a page’s listens and writes over the WebSocket, both ways', { timeout: 60_000 }, async () => {
    const page = await openSdkPage(browser, upstream.url);
    sdk = page;
    const sockets = [];
    page.on('websocket', (ws) => sockets.push(ws.url()));
    const out = page.evaluate(useThroughPassThrough, { host: local.host, ns });
    await page.waitForFunction(() => window.listening === true);
    await adminDatabase(admin).ref('open/rooms/r1').set({ topic: 'from admin' });
    assert.deepEqual(await out, { ok: true, topic: 'from admin' });
    assert.deepEqual(await upstreamValue(upstream, 'open/rooms/r2'), { topic: 'from page' });
    assert.ok(
      sockets.length > 0 && sockets.every((u) => u.startsWith(`ws://${local.host}/.ws?`)),
      `the page's WebSockets: ${sockets}`,
    );
    // The local request log shows the sessions, marked passed through.
    const res = await fetch(`${local.url}/emulator/v1/requests?service=database`, {
      headers: { Authorization: 'Bearer owner' },
    });
    const { requests } = await res.json();
    assert.ok(
      requests.some((e) => e.passThrough && e.path === '/.ws' && e.database === ns),
      JSON.stringify(requests),
    );
  });

  it('shows the sessions in the console’s Requests tab, open while open, then ended in place', async () => {
    const page = await browser.newPage();
    await page.goto(`${local.url}/_/console/requests?service=database`);
    const list = page.getByRole('list', { name: 'Requests' });
    const openBadges = () =>
      list.evaluate((ul) => [...ul.querySelectorAll('span')].filter((s) => s.textContent === 'open').length);
    await list
      .getByRole('listitem')
      .filter({ hasText: 'WebSocket' })
      .filter({ hasText: 'passed through' })
      .filter({ has: page.getByText('open', { exact: true }) })
      .first()
      .waitFor();
    const rows = await list.getByRole('listitem').count();
    assert.ok((await openBadges()) > 0);
    // The admin session's row, opened in full, says it is still open.
    await list
      .getByRole('listitem')
      .filter({ hasText: 'WebSocket' })
      .filter({ has: page.getByText('open', { exact: true }) })
      .last()
      .click();
    await page.getByText('— still open').waitFor();
    // Both sessions end: the Admin SDK's and the page's.
    await adminApp.deleteApp(admin);
    admin = undefined;
    await sdk.close();
    await list.evaluate(
      (ul) =>
        new Promise((resolve) => {
          const done = () => ![...ul.querySelectorAll('span')].some((s) => s.textContent === 'open');
          if (done()) return resolve();
          new MutationObserver((_, obs) => done() && (obs.disconnect(), resolve())).observe(ul, {
            subtree: true,
            childList: true,
            characterData: true,
          });
        }),
    );
    assert.equal(await openBadges(), 0);
    await page.getByText(/— ended /).waitFor();
    assert.equal(
      await list.getByRole('listitem').count(),
      rows,
      'an ended session changes its row, adding none',
    );
    await page.close();
  });
});
