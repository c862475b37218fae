// Firestore as production answers it (issue 28), through the Node Admin SDK
// (gRPC, and REST with preferRest), and the Firebase JS SDK in Node (gRPC),
// against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as web from 'firebase/firestore';
import { Firestore } from '@google-cloud/firestore';
import { GeoPoint, Timestamp } from 'firebase-admin/firestore';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { projectId } from './support/loupe.mjs';
import { startWithSDKs } from './support/sdks.mjs';

describe('Firestore fidelity through the Node SDKs', () => {
  let loupe;
  let db;
  let restdb;
  let jsdb;
  let stop;
  before(async () => {
    ({ loupe, db, restdb, jsdb, stop } = await startWithSDKs('fidelity'));
  });
  after(async () => {
    await stop?.();
  });

  it('commits every write the JS SDK sends over gRPC, a verify of what a transaction only read among them', async () => {
    await db.doc('verify/read').set({ n: 1 });
    await db.doc('verify/updated').set({ n: 1 });
    await db.doc('verify/deleted').set({ n: 1 });
    const seen = await web.runTransaction(jsdb, async (tx) => {
      const snap = await tx.get(web.doc(jsdb, 'verify/read'));
      tx.set(web.doc(jsdb, 'verify/written'), { from: snap.get('n') });
      tx.update(web.doc(jsdb, 'verify/updated'), { n: web.increment(2), at: web.serverTimestamp() });
      tx.delete(web.doc(jsdb, 'verify/deleted'));
      return snap.get('n');
    });
    assert.equal(seen, 1);
    assert.deepEqual((await db.doc('verify/written').get()).data(), { from: 1 });
    const updated = (await db.doc('verify/updated').get()).data();
    assert.equal(updated.n, 3);
    assert.ok(updated.at.toMillis() > 0);
    assert.equal((await db.doc('verify/deleted').get()).exists, false);
    // A verify still checks its precondition: a change between the read and
    // the commit makes the SDK retry, and the retry reads the new value.
    let attempts = 0;
    const got = await web.runTransaction(jsdb, async (tx) => {
      attempts++;
      const snap = await tx.get(web.doc(jsdb, 'verify/read'));
      if (attempts === 1) await db.doc('verify/read').set({ n: 2 });
      return snap.get('n');
    });
    assert.equal(got, 2);
    assert.equal(attempts, 2);
  });

  it('keeps timestamps to the microsecond: stored values, queries and read times, over gRPC and REST', async () => {
    const wrote = await db.doc('stamps/admin').set({ t: new Timestamp(100, 123456789) });
    assert.equal(wrote.writeTime.nanoseconds % 1000, 0);
    await restdb.doc('stamps/rest').set({ t: new Timestamp(100, 123456789), list: [new Timestamp(1, 1)] });
    await web.setDoc(web.doc(jsdb, 'stamps/js'), { t: new web.Timestamp(100, 123456789) });
    for (const [how, client] of [
      ['gRPC', db],
      ['REST', restdb],
    ]) {
      const rest = (await client.doc('stamps/rest').get()).data();
      assert.equal(rest.t.nanoseconds, 123456000, how);
      assert.equal(rest.list[0].nanoseconds, 0, how);
      const hits = await client.collection('stamps').where('t', '==', new Timestamp(100, 123456001)).get();
      assert.deepEqual(hits.docs.map((d) => d.id).sort(), ['admin', 'js', 'rest'], how);
      assert.equal(hits.readTime.nanoseconds % 1000, 0, how);
    }
    const js = await web.getDocs(
      web.query(
        web.collection(jsdb, 'stamps'),
        web.orderBy('t'),
        web.startAt(new web.Timestamp(100, 123456999)),
      ),
    );
    assert.deepEqual(
      js.docs.map((d) => d.get('t').nanoseconds),
      [123456000, 123456000, 123456000],
    );
    // A read-only transaction at a read time with nanoseconds reads at its microsecond.
    const now = (await db.doc('stamps/admin').get()).readTime;
    const readTime = new Timestamp(now.seconds, now.nanoseconds + 789);
    const seen = await db.runTransaction((tx) => tx.get(db.collection('stamps')), {
      readOnly: true,
      readTime,
    });
    assert.equal(seen.size, 3);
    assert.equal(seen.readTime.nanoseconds, now.nanoseconds);
  });

  it('refuses an update after a delete of the same document in one transaction with invalid-argument', async () => {
    const ref = web.doc(web.collection(jsdb, 'tester'));
    await web.setDoc(ref, { foo: 'bar0' });
    await assert.rejects(
      web.runTransaction(jsdb, async (tx) => {
        tx.delete(ref);
        tx.update(ref, { foo: 'bar2' });
      }),
      { code: 'invalid-argument' },
    );
    assert.deepEqual((await web.getDoc(ref)).data(), { foo: 'bar0' });
    await assert.rejects(
      web.runTransaction(jsdb, async (tx) => {
        tx.update(web.doc(web.collection(jsdb, 'tester')), { foo: 'bar1' });
      }),
      { code: 'not-found' },
    );
  });

  it('matches nothing with null in an in or array-contains-any list', async () => {
    await db.doc('nulls/null').set({ v: null, a: [null] });
    await db.doc('nulls/one').set({ v: 1, a: [1, null] });
    const col = web.collection(jsdb, 'nulls');
    const webIds = async (...constraints) =>
      (await web.getDocs(web.query(col, ...constraints))).docs.map((d) => d.id).join(',');
    // The JS SDK matches null itself in its cache (as production does not),
    // so a query run after another cached a document it would match
    // waits for that document to leave limbo: query from a cold cache first.
    assert.equal(await webIds(web.where('v', 'in', [null])), '');
    assert.equal(await webIds(web.where('a', 'array-contains-any', [null])), '');
    assert.equal(await webIds(web.where('v', 'in', [null, 1])), 'one');
    assert.equal(await webIds(web.where('v', '==', null)), 'null');
    assert.equal((await restdb.collection('nulls').where('a', 'array-contains-any', [null]).get()).size, 0);
  });

  it("serves the Admin SDK's REST mode: transactions begun by their first read, batch writes, field masks", async () => {
    await db.doc('rest/a').set({ n: 1, secret: 's' });
    await db.doc('rest/b').set({ n: 2 });
    const ref = restdb.doc('rest/a');
    // Each read begins the transaction (newTransaction) and must hand its id back.
    for (const [what, read, want] of [
      ['a document', (tx) => tx.get(ref).then((snap) => snap.get('n')), 1],
      ['a query', (tx) => tx.get(restdb.collection('rest').where('n', '==', 1)).then((q) => q.size), 1],
      ['an aggregation', (tx) => tx.get(restdb.collection('rest').count()).then((a) => a.data().count), 2],
    ]) {
      await db.doc('rest/a').set({ n: 1, secret: 's' });
      const seen = await restdb.runTransaction(async (tx) => {
        const n = await read(tx);
        tx.update(ref, { n: n + 10 });
        return n;
      });
      assert.equal(seen, want, what);
      assert.equal((await db.doc('rest/a').get()).get('n'), want + 10, what);
    }
    const [masked] = await restdb.getAll(ref, { fieldMask: ['n'] });
    assert.deepEqual(Object.keys(masked.data()), ['n']);

    const writer = restdb.bulkWriter();
    writer.onWriteError(() => false);
    const created = writer.create(restdb.doc('rest/c'), { n: 3 });
    const refused = writer.create(restdb.doc('rest/b'), { n: 9 });
    await writer.close();
    assert.ok((await created).writeTime);
    await assert.rejects(refused, { code: 6 });
    assert.equal((await db.doc('rest/c').get()).get('n'), 3);
    assert.equal((await db.doc('rest/b').get()).get('n'), 2);

    // A write that is invalid whatever is stored (a reserved id) fails the
    // whole batch with INVALID_ARGUMENT, as production and the official
    // emulator answer, over REST and gRPC: the valid write beside it is not
    // applied.
    for (const [how, client] of [
      ['REST', restdb],
      ['gRPC', db],
    ]) {
      const bulk = client.bulkWriter();
      bulk.onWriteError(() => false);
      const valid = bulk.create(client.doc(`reserved/${how}`), { n: 1 });
      const reserved = bulk.create(client.doc('reserved/__doc__'), { n: 1 });
      await bulk.close();
      await assert.rejects(
        reserved,
        { code: 3, message: /"__doc__" is invalid because it is reserved/ },
        how,
      );
      await assert.rejects(valid, { code: 3 }, how);
      assert.equal((await db.doc(`reserved/${how}`).get()).exists, false, how);
    }
  });

  // The Cloud client 8.x signs its own JWT with the key over REST, where
  // firebase-admin's 7.x sends the emulator's Bearer owner.
  it("takes the Node client's REST transport with a service account key (a self-signed JWT) as an administrator", async () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const keyed = new Firestore({
      projectId,
      preferRest: true,
      credentials: {
        client_email: `loupe-test@${projectId}.iam.gserviceaccount.com`,
        private_key: privateKey,
      },
    });
    try {
      await keyed.doc('keyed/a').set({ n: 1 });
      assert.deepEqual((await keyed.doc('keyed/a').get()).data(), { n: 1 });
      assert.equal((await db.doc('keyed/a').get()).get('n'), 1);
    } finally {
      await keyed.terminate();
    }
  });

  it('partitions a collection group into the partitions asked for, each document in one', async () => {
    const total = 1000;
    for (let start = 0; start < total; start += 500) {
      const batch = db.batch();
      for (let i = start; i < start + 500; i++) batch.set(db.doc(`shelves/s${i % 7}/books/b${i}`), { i });
      await batch.commit();
    }
    for (const [how, client] of [
      ['gRPC', db],
      ['REST', restdb],
    ]) {
      const partitions = [];
      for await (const partition of client.collectionGroup('books').getPartitions(4))
        partitions.push(partition);
      assert.equal(partitions.length, 4, how);
      const seen = new Set();
      let read = 0;
      for (const partition of partitions) {
        const snap = await partition.toQuery().get();
        read += snap.size;
        for (const d of snap.docs) seen.add(d.ref.path);
      }
      assert.equal(read, total, how);
      assert.equal(seen.size, total, how);
    }
  });

  it("refuses what production refuses with production's messages: the key in multiple-inequality queries, six aggregations", async () => {
    const col = web.collection(jsdb, 'refused');
    await web.setDoc(web.doc(col, 'doc1'), { key: 1, pages: 10 });
    await assert.rejects(
      web.getDocs(web.query(col, web.where('key', '!=', 42), web.orderBy(web.documentId()))),
      {
        code: 'invalid-argument',
        message: /order by clause cannot contain more fields after the key/i,
      },
    );
    await assert.rejects(
      web.getDocs(web.query(col, web.where('key', '!=', 42), web.where(web.documentId(), '==', 'doc1'))),
      {
        code: 'invalid-argument',
        message:
          /Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities\./,
      },
    );
    await assert.rejects(
      web.getAggregateFromServer(col, {
        a: web.sum('pages'),
        b: web.average('pages'),
        c: web.count(),
        d: web.sum('pages'),
        e: web.average('pages'),
        f: web.count(),
      }),
      { code: 'invalid-argument', message: /maximum number of aggregations/ },
    );
    // Within the limits the same shapes run.
    assert.equal((await web.getDocs(web.query(col, web.where('key', '!=', 42), web.orderBy('key')))).size, 1);
    assert.equal((await web.getAggregateFromServer(col, { c: web.count() })).data().c, 1);
  });

  it('names no server folder in the errors the SDKs see', async () => {
    const failures = [
      () => db.doc('paths/a').update({ x: 1 }),
      () => restdb.doc('paths/a').set({ at: new GeoPoint(0, 0), big: 'x'.repeat(1 << 20) }),
      () =>
        web.getDocs(
          web.query(web.collection(jsdb, 'paths'), web.where('a', '!=', 1), web.orderBy(web.documentId())),
        ),
      () => db.doc('paths/__reserved__').set({ x: 1 }),
    ];
    for (const failure of failures) {
      const err = await failure().then(
        () => assert.fail('expected a refusal'),
        (e) => e,
      );
      for (const dir of [loupe.dataDir, tmpdir()]) assert.ok(!String(err.message).includes(dir), err.message);
    }
  });
});
