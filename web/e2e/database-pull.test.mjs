// `loupe data pull --database-path` from a second loupe standing in for
// production, then the JS SDK in Chromium reads and orders what was pulled:
// the values, the first keys of a query in the database's key order, and a
// listener's first snapshot; the paths not named stay behind.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './support/browser.mjs';
import { loupeBin, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

const project = 'demo-pulled';
const ns = `${project}-default-rtdb`;

const chat = {
  rooms: { r1: { title: 'one', messages: { m1: { text: 'hi', at: 1 }, m2: { text: 'there', at: 2 } } } },
  // Keys the database orders as integers first (7 before 007, the shorter first), then as strings.
  order: { 10: 'ten', 7: 'seven', '-3': 'minus three', '007': 'zero zero seven', b: 'bee' },
};

/** Writes value at path of ns in the loupe at url over REST, as the owner. */
async function put(url, path, value) {
  const res = await fetch(`${url}/${path}.json?ns=${ns}`, {
    method: 'PUT',
    headers: { Authorization: 'Bearer owner' },
    body: JSON.stringify(value),
  });
  assert.equal(res.status, 200, await res.text());
}

// readPulled runs in the page: the pulled chat as a value and in key order,
// and a listener's first snapshot of a room.
async function readPulled({ host, ns }) {
  const { app, database } = window.sdk;
  const a = app.initializeApp({ projectId: 'demo-pulled', databaseURL: `http://${host}?ns=${ns}` });
  const db = database.getDatabase(a);
  try {
    const snap = await database.get(database.ref(db, 'chat'));
    // The first three keys, chosen by loupe's ordering (the SDK orders what it gets the same way).
    const first = await database.get(
      database.query(database.ref(db, 'chat/order'), database.orderByKey(), database.limitToFirst(3)),
    );
    const keys = [];
    first.forEach((c) => {
      keys.push(c.key);
    });
    const heard = await new Promise((resolve, reject) => {
      const off = database.onValue(
        database.ref(db, 'chat/rooms/r1/messages'),
        (s) => {
          off();
          resolve(s.val());
        },
        reject,
      );
    });
    const skipped = (await database.get(database.ref(db, 'private'))).val();
    return { ok: true, chat: snap.val(), keys, heard, skipped };
  } catch (e) {
    return { ok: false, error: String(e && e.code ? `${e.code} ${e.message}` : e) };
  }
}

describe('Realtime Database pulled into loupe, read in Chromium', () => {
  let prod;
  let local;
  let browser;
  before(async () => {
    prod = await startLoupe({ config: {}, args: ['--project', project] });
    local = await startLoupe({
      config: { hosting: { public: await sdkPage() } },
      args: ['--project', project],
    });
    await put(prod.url, 'chat', chat);
    await put(prod.url, 'private', 'stays behind');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await local?.stop();
    await prod?.stop();
  });

  it('reads what `loupe data pull --database-path` copied, in the database’s order', async () => {
    const { stderr } = await promisify(execFile)(loupeBin, [
      'data',
      'pull',
      '--from-emulator',
      prod.host,
      '--from-project',
      project,
      '--database-path',
      'chat',
      '--emulator',
      local.host,
    ]);
    assert.match(stderr, /database: copied \/chat/);
    const page = await openSdkPage(browser, local.url);
    const out = await page.evaluate(readPulled, { host: local.host, ns });
    assert.equal(out.ok, true, out.error);
    assert.deepEqual(out.chat, chat);
    assert.deepEqual(out.keys, ['-3', '7', '007']);
    assert.deepEqual(out.heard, chat.rooms.r1.messages);
    assert.equal(out.skipped, null);
  });
});
