// Firestore as production answers it (issue 28), through the Node Admin SDK
// (gRPC, and REST with preferRest), and the Firebase JS SDK in Node (gRPC),
// against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as web from 'firebase/firestore';
import { Timestamp } from 'firebase-admin/firestore';
import { startWithSDKs } from './support/sdks.mjs';

describe('Firestore fidelity through the Node SDKs', () => {
  let db;
  let restdb;
  let jsdb;
  let stop;
  before(async () => {
    ({ db, restdb, jsdb, stop } = await startWithSDKs('fidelity'));
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
});
