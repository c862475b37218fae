// Firestore as production answers it (issue 28), through the Node Admin SDK
// (gRPC, and REST with preferRest), and the Firebase JS SDK in Node (gRPC),
// against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as web from 'firebase/firestore';
import { startWithSDKs } from './support/sdks.mjs';

describe('Firestore fidelity through the Node SDKs', () => {
  let db;
  let jsdb;
  let stop;
  before(async () => {
    ({ db, jsdb, stop } = await startWithSDKs('fidelity'));
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
});
