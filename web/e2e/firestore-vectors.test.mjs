// Vectors, vector search (findNearest) and query explain through the Node
// server SDK (firebase-admin, i.e. @google-cloud/firestore over gRPC) and the
// Firebase JS SDK in Node, against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp } from 'firebase-admin/app';
import { FieldValue, getFirestore as getAdminFirestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp } from 'firebase/app';
import * as full from 'firebase/firestore';
import * as lite from 'firebase/firestore/lite';
import { projectId, startLoupe } from './support/loupe.mjs';

describe('Firestore vectors, vector search and explain from Node', () => {
  let loupe;
  let adminApp;
  let db;
  let app;
  before(async () => {
    loupe = await startLoupe();
    process.env.FIRESTORE_EMULATOR_HOST = loupe.host;
    adminApp = initializeAdminApp({ projectId }, `vectors-admin-${Date.now()}`);
    db = getAdminFirestore(adminApp);
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `vectors-${Date.now()}`);
  });
  after(async () => {
    await deleteApp(app);
    await deleteAdminApp(adminApp);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await loupe?.stop();
  });

  it('stores vectors and orders them after arrays and before maps, by dimension then elements', async () => {
    const coll = db.collection('vec');
    const batch = db.batch();
    batch.set(coll.doc('arr'), { v: [9, 9, 9] });
    batch.set(coll.doc('v1'), { v: FieldValue.vector([100]) });
    batch.set(coll.doc('v12'), { v: FieldValue.vector([1, 2]) });
    batch.set(coll.doc('v13'), { v: FieldValue.vector([1, 3]) });
    batch.set(coll.doc('v000'), { v: FieldValue.vector([0, 0, 0]) });
    batch.set(coll.doc('map'), { v: { a: 1 } });
    await batch.commit();
    const back = (await coll.doc('v12').get()).get('v');
    assert.deepEqual(back.toArray(), [1, 2]);
    const asc = await coll.orderBy('v').get();
    assert.deepEqual(
      asc.docs.map((d) => d.id),
      ['arr', 'v1', 'v12', 'v13', 'v000', 'map'],
    );
    const eq = await coll.where('v', '==', FieldValue.vector([1, 3])).get();
    assert.deepEqual(
      eq.docs.map((d) => d.id),
      ['v13'],
    );
    const after13 = await coll
      .orderBy('v', 'desc')
      .startAfter(FieldValue.vector([1, 3]))
      .get();
    assert.deepEqual(
      after13.docs.map((d) => d.id),
      ['v12', 'v1', 'arr'],
    );

    // The JS SDK orders a listener's documents as the backend does.
    const web = full.getFirestore(app);
    full.connectFirestoreEmulator(web, '127.0.0.1', loupe.port);
    const seen = [];
    let first;
    const gotFirst = new Promise((resolve) => (first = resolve));
    const q = full.query(full.collection(web, 'vec'), full.orderBy('v', 'desc'), full.limit(3));
    const done = new Promise((resolve) => {
      const stop = full.onSnapshot(q, (s) => {
        seen.push(s.docs.map((d) => d.id).join(','));
        first();
        if (seen.at(-1) === 'map,v4,v000') {
          stop();
          resolve();
        }
      });
    });
    await gotFirst;
    await full.setDoc(full.doc(web, 'vec/v4'), { v: full.vector([0, 0, 0, 0]) });
    await done;
    assert.deepEqual(seen, ['map,v000,v13', 'map,v4,v000']);
    const snap = await full.getDoc(full.doc(web, 'vec/v4'));
    assert.ok(snap.get('v') instanceof full.VectorValue);
    assert.deepEqual(snap.get('v').toArray(), [0, 0, 0, 0]);
    await full.terminate(web);
  });

  it('writes, reads and orders vectors over REST (the lite SDK)', async () => {
    const web = lite.getFirestore(app);
    lite.connectFirestoreEmulator(web, '127.0.0.1', loupe.port);
    await lite.setDoc(lite.doc(web, 'litevec/a'), { v: lite.vector([2, 1]) });
    await lite.setDoc(lite.doc(web, 'litevec/b'), { v: lite.vector([1]) });
    await lite.setDoc(lite.doc(web, 'litevec/c'), { v: [5, 5] });
    const snap = await lite.getDoc(lite.doc(web, 'litevec/a'));
    assert.ok(snap.get('v') instanceof lite.VectorValue);
    assert.deepEqual(snap.get('v').toArray(), [2, 1]);
    const ordered = await lite.getDocs(
      lite.query(lite.collection(web, 'litevec'), lite.orderBy('v', 'desc')),
    );
    assert.deepEqual(
      ordered.docs.map((d) => d.id),
      ['a', 'b', 'c'],
    );
    await lite.terminate(web);
  });

  it('refuses malformed vectors with INVALID_ARGUMENT and writes nothing', async () => {
    const ref = db.doc('bad/vector');
    await assert.rejects(ref.set({ e: { __type__: '__vector__', value: 'x' } }), (err) => {
      assert.equal(err.code, 3);
      assert.match(err.message, /Vector field "e" must have a "value" field/);
      return true;
    });
    await assert.rejects(ref.set({ e: { __type__: '__other__' } }), /Field name "__type__" is reserved/);
    assert.equal((await ref.get()).exists, false);
  });

  it('finds nearest neighbours with pre-filters, thresholds and the distance returned', async () => {
    const coll = db.collection('near');
    const batch = db.batch();
    const fixture = {
      a: [1, 0],
      b: [0, 1],
      c: [1, 1],
      d: [3, 4],
      e: [-1, 0],
    };
    for (const [id, v] of Object.entries(fixture))
      batch.set(coll.doc(id), { v: FieldValue.vector(v), color: id === 'b' ? 'blue' : 'red' });
    batch.set(coll.doc('plain'), { v: [1, 0], color: 'red' });
    await batch.commit();

    const euclid = await coll
      .findNearest({
        vectorField: 'v',
        queryVector: [1, 0],
        limit: 3,
        distanceMeasure: 'EUCLIDEAN',
        distanceResultField: 'dist',
      })
      .get();
    assert.deepEqual(
      euclid.docs.map((d) => [d.id, d.get('dist')]),
      [
        ['a', 0],
        ['c', 1],
        ['b', Math.SQRT2],
      ],
    );
    const dot = await coll
      .where('color', '==', 'red')
      .findNearest({
        vectorField: 'v',
        queryVector: FieldValue.vector([1, 0]),
        limit: 10,
        distanceMeasure: 'DOT_PRODUCT',
        distanceThreshold: 1,
      })
      .get();
    assert.deepEqual(
      dot.docs.map((d) => d.id),
      ['d', 'a', 'c'],
    );
    const cosine = await coll
      .findNearest({
        vectorField: 'v',
        queryVector: [1, 0],
        limit: 10,
        distanceMeasure: 'COSINE',
        distanceThreshold: 0.5,
      })
      .get();
    assert.deepEqual(
      cosine.docs.map((d) => d.id),
      ['a', 'c', 'd'],
    );
    const none = await coll
      .findNearest({ vectorField: 'color', queryVector: [1, 0], limit: 5, distanceMeasure: 'COSINE' })
      .get();
    assert.equal(none.size, 0);
    await assert.rejects(
      coll
        .findNearest({ vectorField: 'v', queryVector: [1, 0], limit: 1001, distanceMeasure: 'EUCLIDEAN' })
        .get(),
      (err) => err.code === 3 && /limit must be a positive integer of no more than 1000/.test(err.message),
    );
  });

  it('explains queries, streamed queries, aggregations and vector queries', async () => {
    const coll = db.collection('explained');
    const batch = db.batch();
    for (let i = 0; i < 4; i++) batch.set(coll.doc(`d${i}`), { n: i, city: i % 2 ? 'x' : 'y' });
    await batch.commit();
    const q = coll.where('city', '==', 'x').orderBy('n', 'desc');

    const plan = await q.explain({ analyze: false });
    assert.equal(plan.snapshot, null);
    assert.equal(plan.metrics.executionStats, null);
    assert.deepEqual(plan.metrics.planSummary.indexesUsed, [
      { query_scope: 'Collection', properties: '(city ASC, n DESC, __name__ DESC)' },
    ]);

    const run = await q.explain({ analyze: true });
    assert.deepEqual(
      run.snapshot.docs.map((d) => d.id),
      ['d3', 'd1'],
    );
    assert.equal(run.metrics.executionStats.resultsReturned, 2);
    assert.equal(run.metrics.executionStats.readOperations, 2);
    assert.equal(run.metrics.executionStats.debugStats.documents_scanned, '2');

    // != is no index range: the x rows (d1, d3) are read and dropped before
    // the limit is met at d0; the stats count what was read.
    const scanned = await coll.where('city', '!=', 'x').limit(1).explain({ analyze: true });
    assert.deepEqual(
      scanned.snapshot.docs.map((d) => d.id),
      ['d0'],
    );
    const st = scanned.metrics.executionStats;
    assert.equal(st.resultsReturned, 1);
    assert.equal(st.readOperations, 3);
    assert.equal(st.debugStats.index_entries_scanned, '3');
    assert.equal(st.debugStats.documents_scanned, '3');

    const streamed = [];
    let metrics;
    for await (const chunk of coll.orderBy('n').explainStream({ analyze: true })) {
      if (chunk.document) streamed.push(chunk.document.id);
      if (chunk.metrics) metrics = chunk.metrics;
    }
    assert.deepEqual(streamed, ['d0', 'd1', 'd2', 'd3']);
    assert.equal(metrics.executionStats.resultsReturned, 4);
    assert.deepEqual(metrics.planSummary.indexesUsed, [
      { query_scope: 'Collection', properties: '(n ASC, __name__ ASC)' },
    ]);

    const agg = await coll.where('n', '>=', 1).count().explain({ analyze: true });
    assert.equal(agg.snapshot.data().count, 3);
    assert.equal(agg.metrics.executionStats.readOperations, 1);
    assert.equal(agg.metrics.executionStats.debugStats.index_entries_scanned, '3');
    const aggPlan = await coll.where('n', '>=', 1).count().explain();
    assert.equal(aggPlan.snapshot, null);
    assert.deepEqual(aggPlan.metrics.planSummary.indexesUsed, [
      { query_scope: 'Collection', properties: '(n ASC, __name__ ASC)' },
    ]);

    const vq = await db
      .collection('near')
      .findNearest({ vectorField: 'v', queryVector: [1, 0], limit: 2, distanceMeasure: 'EUCLIDEAN' })
      .explain({ analyze: true });
    assert.deepEqual(
      vq.snapshot.docs.map((d) => d.id),
      ['a', 'c'],
    );
    assert.equal(vq.metrics.executionStats.resultsReturned, 2);
  });
});

describe('Security rules over vector fields, from the Firebase JS SDK in Node', () => {
  let loupe;
  let app;
  before(async () => {
    // The rules the Go tests of internal/guard use too.
    const rules = fileURLToPath(new URL('../../internal/guard/testdata/vector.rules', import.meta.url));
    loupe = await startLoupe({ config: { firestore: { rules } } });
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `vector-rules-${Date.now()}`);
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  for (const [sdk, api] of [
    ['full (WebChannel)', full],
    ['lite (REST)', lite],
  ]) {
    it(`judges vectors by their elements, equality and diff (${sdk}), with the rules of internal/guard/testdata/vector.rules`, async () => {
      const fdb = api.getFirestore(app);
      api.connectFirestoreEmulator(fdb, '127.0.0.1', loupe.port);
      const ref = api.doc(fdb, 'items', `a-${sdk.split(' ')[0]}`);
      await assert.rejects(
        api.setDoc(ref, { name: 'x', embedding: api.vector([1, 2]) }),
        /permission-denied/i,
      );
      await api.setDoc(ref, { name: 'x', embedding: api.vector([1, 2, 3]) });
      await api.updateDoc(ref, { name: 'renamed' });
      await assert.rejects(api.updateDoc(ref, { embedding: api.vector([1, 2, 4]) }), /permission-denied/i);
      const back = await api.getDoc(ref);
      assert.equal(back.get('name'), 'renamed');
      assert.deepEqual(back.get('embedding').toArray(), [1, 2, 3]);
      await api.deleteDoc(ref);
      assert.equal((await api.getDoc(ref)).exists(), false);
    });
  }
});
