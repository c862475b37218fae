// The Firebase JS SDK in Node against a real `loupe serve`: the full SDK
// speaks gRPC (Listen and Write streams, Commit, BatchGet, aggregations), the
// lite SDK speaks REST. Both must work unmodified.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as full from 'firebase/firestore';
import * as lite from 'firebase/firestore/lite';
import { admin, eventually } from './support/admin.mjs';
import { freePort, projectId, startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

describe('Firestore from the JS SDK in Node', () => {
  let loupe;
  let app;
  before(async () => {
    loupe = await startLoupe();
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `node-${Date.now()}`);
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  it('writes, reads, transacts, counts and listens over gRPC', async () => {
    const db = full.getFirestore(app);
    full.connectFirestoreEmulator(db, '127.0.0.1', loupe.port);
    const ref = full.doc(db, 'rooms/r1');
    await full.setDoc(ref, { name: 'Zürich 😀', n: 1, at: full.serverTimestamp() });
    const snap = await full.getDoc(ref);
    assert.equal(snap.get('name'), 'Zürich 😀');
    assert.ok(snap.get('at') instanceof full.Timestamp);

    await full.updateDoc(ref, { n: full.increment(4) });
    await full.runTransaction(db, async (tx) => {
      const cur = await tx.get(ref);
      tx.update(ref, { n: cur.get('n') * 10 });
    });
    assert.equal((await full.getDoc(ref)).get('n'), 50);

    const batch = full.writeBatch(db);
    for (const id of ['a', 'b', 'c'])
      batch.set(full.doc(db, `rooms/r1/messages/${id}`), { text: id, at: id.charCodeAt(0) });
    await batch.commit();
    const count = await full.getCountFromServer(full.collection(db, 'rooms/r1/messages'));
    assert.equal(count.data().count, 3);

    const seen = [];
    const q = full.query(full.collection(db, 'rooms/r1/messages'), full.orderBy('at', 'desc'), full.limit(2));
    const got = new Promise((resolve) => {
      const unsubscribe = full.onSnapshot(q, (s) => {
        seen.push(s.docs.map((d) => d.id).join(','));
        if (seen.at(-1) === 'z,c') {
          unsubscribe();
          resolve();
        }
      });
    });
    await new Promise((r) => setTimeout(r, 200));
    await full.setDoc(full.doc(db, 'rooms/r1/messages/z'), { text: 'z', at: 1000 });
    await got;
    assert.deepEqual(seen, ['c,b', 'z,c']);
    await full.terminate(db);
  });

  it('reports document and query changes, settles pending writes, deletes and lists over gRPC', async () => {
    const db = full.getFirestore(app);
    full.connectFirestoreEmulator(db, '127.0.0.1', loupe.port);
    const ref = full.doc(db, 'notes/n1');
    const docEvents = [];
    const queryChanges = [];
    const pending = [];
    const stops = [
      full.onSnapshot(ref, (s) => docEvents.push(s.exists() ? s.get('v') : 'missing')),
      full.onSnapshot(full.query(full.collection(db, 'notes'), full.orderBy('v', 'desc')), (s) =>
        s.docChanges().forEach((c) => queryChanges.push(`${c.type}:${c.doc.id}:${c.doc.get('v')}`)),
      ),
      full.onSnapshot(ref, { includeMetadataChanges: true }, (s) => {
        if (s.exists() && s.get('v') === 1) pending.push(s.metadata.hasPendingWrites);
      }),
    ];
    await eventually(() => docEvents.length === 1, 'the first snapshot');
    await full.setDoc(ref, { v: 1 });
    await eventually(() => pending.at(-1) === false, 'the write to settle');
    assert.equal(pending[0], true, 'the local write shows first as pending');
    await full.setDoc(full.doc(db, 'notes/n2'), { v: 5 });
    const listed = await full.getDocs(full.query(full.collection(db, 'notes'), full.orderBy('v', 'desc')));
    assert.deepEqual(
      listed.docs.map((d) => d.id),
      ['n2', 'n1'],
    );
    await full.updateDoc(ref, { v: 2 });
    await full.deleteDoc(ref);
    await eventually(() => docEvents.length === 4, 'the update and the delete');
    assert.deepEqual(docEvents, ['missing', 1, 2, 'missing']);
    await eventually(() => queryChanges.length === 4, 'the query changes');
    assert.deepEqual(queryChanges, ['added:n1:1', 'added:n2:5', 'modified:n1:2', 'removed:n1:2']);
    assert.equal((await full.getDoc(ref)).exists(), false);
    stops.forEach((stop) => stop());
    await full.terminate(db);
  });

  it('works through the lite SDK over REST', async () => {
    const liteApp = initializeApp({ projectId, apiKey: 'demo-api-key' }, `lite-${Date.now()}`);
    const db = lite.getFirestore(liteApp);
    lite.connectFirestoreEmulator(db, '127.0.0.1', loupe.port);
    await lite.setDoc(lite.doc(db, 'lite/x'), { v: 1, tags: ['a'] });
    await lite.updateDoc(lite.doc(db, 'lite/x'), { v: lite.increment(1), tags: lite.arrayUnion('b') });
    const docs = await lite.getDocs(lite.query(lite.collection(db, 'lite'), lite.where('v', '==', 2)));
    assert.deepEqual(
      docs.docs.map((d) => d.data()),
      [{ v: 2, tags: ['a', 'b'] }],
    );
    await lite.runTransaction(db, async (tx) => {
      const s = await tx.get(lite.doc(db, 'lite/x'));
      tx.set(lite.doc(db, 'lite/y'), { copied: s.get('v') });
    });
    assert.equal((await lite.getDoc(lite.doc(db, 'lite/y'))).get('copied'), 2);
    await assert.rejects(
      lite.updateDoc(lite.doc(db, 'lite/missing'), { v: 1 }),
      /not-found|No document to update/,
    );
    await deleteApp(liteApp);
  });
});

describe('a gRPC listener across a loupe restart', () => {
  it('reconnects and keeps receiving changes from the same data dir', async () => {
    const port = await freePort();
    const dataDir = path.join(scratchDir('loupe-restart-'), 'data');
    const start = () => startLoupe({ dataDir, args: ['--port', String(port)] });
    let loupe = await start();
    const app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `restart-${Date.now()}`);
    const db = full.getFirestore(app);
    full.connectFirestoreEmulator(db, '127.0.0.1', port);
    const values = [];
    const stop = full.onSnapshot(full.doc(db, 'live/one'), (s) => s.exists() && values.push(s.get('v')));
    try {
      await admin(loupe).set('live/one', { v: 1 });
      await eventually(() => values.includes(1), 'the first value');
      await loupe.stop();
      loupe = await start();
      await admin(loupe).set('live/one', { v: 2 });
      for (const deadline = Date.now() + 60_000; !values.includes(2);) {
        assert.ok(Date.now() < deadline, `the listener did not resume: ${values}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      stop();
      await deleteApp(app);
      await loupe.stop();
    }
  });
});
