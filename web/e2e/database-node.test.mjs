// The Realtime Database from the JS SDK in Node and the Node Admin SDK,
// both over the WebSocket protocol, against a real `loupe serve`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as rtdb from 'firebase/database';
import * as adminApp from 'firebase-admin/app';
import { getDatabase as adminDatabase } from 'firebase-admin/database';
import { startLoupe } from './support/loupe.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Resolves with the first value of ref (or query) for which pred holds. */
function until(q, pred) {
  return new Promise((resolve) => {
    const off = rtdb.onValue(q, (snap) => {
      if (pred(snap)) {
        off();
        resolve(snap);
      }
    });
  });
}

/** The children's keys of a snapshot in the query's order. */
function keysOf(snap) {
  const keys = [];
  snap.forEach((c) => {
    keys.push(c.key);
  });
  return keys.join(',');
}

describe('Realtime Database from the JS SDK and the Admin SDK in Node', () => {
  let loupe;
  const apps = [];
  let n = 0;
  const client = (ns = 'node-test') => {
    const app = initializeApp(
      { projectId: 'demo-rtdb', databaseURL: `http://${loupe.host}?ns=${ns}` },
      `c${n++}`,
    );
    apps.push(app);
    return rtdb.getDatabase(app);
  };
  before(async () => {
    loupe = await startLoupe({ config: {} });
  });
  after(async () => {
    for (const app of apps) await deleteApp(app);
    await loupe?.stop();
  });

  it('writes and reads, with server values and priorities', async () => {
    const db = client();
    const before = Date.now();
    await rtdb.set(rtdb.ref(db, 'posts/p1'), { title: 'Hi', at: rtdb.serverTimestamp(), likes: 1 });
    await rtdb.update(rtdb.ref(db, 'posts/p1'), { likes: rtdb.increment(2), 'meta/tags/0': 'news' });
    await rtdb.setPriority(rtdb.ref(db, 'posts/p1'), 5);
    const key = rtdb.push(rtdb.ref(db, 'posts'), { title: 'Second' }).key;
    const snap = await rtdb.get(rtdb.ref(db, 'posts'));
    const p1 = snap.child('p1').val();
    assert.equal(p1.title, 'Hi');
    assert.equal(p1.likes, 3);
    assert.deepEqual(p1.meta, { tags: ['news'] });
    assert.ok(p1.at >= before - 5000 && p1.at <= Date.now() + 5000, `server timestamp ${p1.at}`);
    assert.equal(snap.child('p1').priority, 5);
    assert.equal(snap.child(key).child('title').val(), 'Second');
    await rtdb.remove(rtdb.ref(db, `posts/${key}`));
    assert.equal((await rtdb.get(rtdb.ref(db, `posts/${key}`))).exists(), false);
  });

  it('listens with every query form and sees another client write', async () => {
    const writer = client();
    const reader = client();
    const scores = rtdb.ref(writer, 'scores');
    await rtdb.set(scores, {
      ann: { s: 5, ['.priority']: 3 },
      bob: { s: 9, ['.priority']: 1 },
      cy: { s: 1 },
      dee: { s: 7, ['.priority']: 2 },
    });
    const r = rtdb.ref(reader, 'scores');
    const {
      orderByChild,
      orderByKey,
      orderByValue,
      orderByPriority,
      startAt,
      startAfter,
      endAt,
      endBefore,
      equalTo,
      limitToFirst,
      limitToLast,
      query,
    } = rtdb;
    const cases = [
      [query(r, orderByChild('s'), limitToLast(2)), 'dee,bob'],
      [query(r, orderByChild('s'), limitToFirst(2)), 'cy,ann'],
      [query(r, orderByChild('s'), startAt(5), endAt(8)), 'ann,dee'],
      [query(r, orderByChild('s'), startAfter(5)), 'dee,bob'],
      [query(r, orderByChild('s'), endBefore(5)), 'cy'],
      [query(r, orderByChild('s'), equalTo(9)), 'bob'],
      [query(r, orderByKey(), startAt('b'), endAt('d')), 'bob,cy'],
      [query(r, orderByKey(), startAfter('bob'), limitToFirst(1)), 'cy'],
      [query(r, orderByPriority(), limitToFirst(3)), 'cy,bob,dee'],
      [query(r, orderByPriority(), startAt(2)), 'dee,ann'],
    ];
    for (const [q, want] of cases) {
      const snap = await until(q, () => true);
      assert.equal(keysOf(snap), want, `initial ${q.toString()}`);
    }
    // A live window moves when another client writes.
    const top2 = query(r, orderByChild('s'), limitToLast(2));
    const events = [];
    let initial;
    const loaded = new Promise((resolve) => (initial = resolve));
    const offAdded = rtdb.onChildAdded(top2, (s) => {
      events.push(`added ${s.key}`);
      if (events.length === 2) initial();
    });
    const offRemoved = rtdb.onChildRemoved(top2, (s) => events.push(`removed ${s.key}`));
    await loaded;
    const moved = until(top2, (s) => keysOf(s) === 'bob,cy');
    await rtdb.set(rtdb.ref(writer, 'scores/cy/s'), 100);
    await moved;
    offAdded();
    offRemoved();
    assert.deepEqual(events, ['added dee', 'added bob', 'removed dee', 'added cy']);
    // By value, over leaves.
    await rtdb.set(rtdb.ref(writer, 'temps'), { mon: 20, tue: 12, wed: 31 });
    const cold = await until(
      query(rtdb.ref(reader, 'temps'), orderByValue(), endAt(20)),
      (s) => s.size === 2,
    );
    assert.equal(keysOf(cold), 'tue,mon');
  });

  it('runs transactions under contention without losing an increment', async () => {
    const dbs = [client(), client(), client()];
    await rtdb.set(rtdb.ref(dbs[0], 'counter'), { n: 0, by: {} });
    const each = 10;
    await Promise.all(
      dbs.flatMap((db, i) =>
        Array.from({ length: each }, (_, j) =>
          rtdb.runTransaction(rtdb.ref(db, 'counter'), (cur) => {
            if (cur === null) return { n: 1, by: { [`c${i}_${j}`]: true } };
            return { ...cur, n: cur.n + 1, by: { ...cur.by, [`c${i}_${j}`]: true } };
          }),
        ),
      ),
    );
    const final = (await rtdb.get(rtdb.ref(dbs[1], 'counter'))).val();
    assert.equal(final.n, dbs.length * each);
    assert.equal(Object.keys(final.by).length, dbs.length * each);
    // An aborted transaction writes nothing.
    const res = await rtdb.runTransaction(rtdb.ref(dbs[2], 'counter/n'), () => undefined);
    assert.equal(res.committed, false);
  });

  it('answers a get sent before a set with the data before the set, as the server ran them in order', async () => {
    // The SDK sends get() and set() on one socket in the order called;
    // production runs them in that order, so the get reads the old value.
    // (Loupe once applied a session's writes ahead of its reads and listens.)
    const db = client('ordered');
    const got = [];
    for (let i = 0; i < 10; i++) {
      const r = rtdb.ref(db, `g/${i}`);
      await rtdb.set(r, 'old');
      const read = rtdb.get(r);
      const write = rtdb.set(r, 'new');
      got.push((await read).val());
      await write;
    }
    assert.deepEqual(got, Array(10).fill('old'));
  });

  it('runs onDisconnect writes when a client socket drops', async () => {
    const db = client('presence');
    const status = rtdb.ref(db, 'status/u1');
    await rtdb.set(status, 'unknown');
    const url = `http://${loupe.host}?ns=presence`;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { initializeApp } from 'firebase/app';
         import { getDatabase, ref, set, onDisconnect, serverTimestamp } from 'firebase/database';
         const db = getDatabase(initializeApp({ projectId: 'demo-rtdb', databaseURL: ${JSON.stringify(url)} }));
         await onDisconnect(ref(db, 'status/u1')).set({ state: 'offline', at: serverTimestamp() });
         await onDisconnect(ref(db, 'status/u2')).set('gone');
         await onDisconnect(ref(db, 'status/u2')).cancel();
         await set(ref(db, 'status/u1'), 'online');
         console.log('ready');
         setInterval(() => {}, 1000);`,
      ],
      { cwd: webDir, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
      child.on('exit', (code) => reject(new Error(`the presence client exited with ${code}`)));
    });
    assert.equal((await rtdb.get(status)).val(), 'online');
    const offline = until(status, (s) => s.val()?.state === 'offline');
    child.kill('SIGKILL');
    const snap = await offline;
    assert.equal(typeof snap.val().at, 'number');
    assert.equal((await rtdb.get(rtdb.ref(db, 'status/u2'))).exists(), false);
  });

  it('serves the Node Admin SDK, which sees the JS SDK and manages rules', async () => {
    process.env.FIREBASE_DATABASE_EMULATOR_HOST = loupe.host;
    const app = adminApp.initializeApp(
      {
        projectId: 'demo-rtdb',
        databaseURL: 'https://node-test.firebaseio.com',
        credential: { getAccessToken: async () => ({ access_token: 'owner', expires_in: 3600 }) },
      },
      `admin${n++}`,
    );
    try {
      const adb = adminDatabase(app);
      const seen = new Promise((resolve) =>
        adb.ref('chat').on('child_added', (s) => s.val().text === 'from web' && resolve(s.key)),
      );
      const key = rtdb.push(rtdb.ref(client(), 'chat'), { text: 'from web' }).key;
      assert.equal(await seen, key);
      adb.ref('chat').off();
      await adb.ref('admin/n').set(1);
      const tx = await adb.ref('admin/n').transaction((v) => v + 1);
      assert.equal(tx.committed, true);
      assert.equal(tx.snapshot.val(), 2);
      const snap = await adb.ref('admin').once('value');
      assert.deepEqual(snap.val(), { n: 2 });
    } finally {
      await adminApp.deleteApp(app);
      delete process.env.FIREBASE_DATABASE_EMULATOR_HOST;
    }
  });
});
