// Corners of production Firestore that the SDKs' own tests pin down (issue
// 18), through the Node Admin SDK (firebase-admin, i.e. @google-cloud/firestore)
// and the Firebase JS SDK in Node, against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as web from 'firebase/firestore';
import { AggregateField, FieldPath } from 'firebase-admin/firestore';
import firestorePkg from '@google-cloud/firestore';
import gax from 'google-gax';
import { projectId } from './support/loupe.mjs';
import { startWithSDKs } from './support/sdks.mjs';

describe('Firestore corners from the Node Admin SDK and the JS SDK', () => {
  let loupe;
  let db;
  let jsdb;
  let stop;
  before(async () => {
    ({ loupe, db, jsdb, stop } = await startWithSDKs('corners'));
  });
  after(async () => {
    await stop?.();
  });

  const seed = async (collection, docs) => {
    const batch = db.batch();
    for (const [id, data] of Object.entries(docs)) batch.set(db.collection(collection).doc(id), data);
    await batch.commit();
  };
  const adminIds = async (query) => (await query.get()).docs.map((d) => d.id).join(',');
  const webIds = async (query) => (await web.getDocs(query)).docs.map((d) => d.id).join(',');

  it('accepts numeric document ids and sorts them first, by number', async () => {
    await seed('legacy', { a: {}, B: {}, __id10__: {}, __id7__: {}, '__id-3__': {} });
    const byName = '__id-3__,__id7__,__id10__,B,a';
    assert.equal(await adminIds(db.collection('legacy').orderBy(FieldPath.documentId())), byName);
    assert.equal(await adminIds(db.collection('legacy')), byName);
    assert.equal(
      await webIds(web.query(web.collection(jsdb, 'legacy'), web.orderBy(web.documentId()))),
      byName,
    );
    assert.equal(
      await adminIds(db.collection('legacy').where(FieldPath.documentId(), '>', db.doc('legacy/__id7__'))),
      '__id10__,B,a',
    );
    await assert.rejects(db.doc('legacy/__idx__').set({ x: 1 }), { code: 3, message: /reserved/ });
    await assert.rejects(web.setDoc(web.doc(jsdb, 'legacy/__other__'), { x: 1 }), {
      code: 'invalid-argument',
    });
  });

  it('keeps null, missing and NaN out of != and not-in', async () => {
    await seed('vals', {
      one: { v: 1 },
      two: { v: 2 },
      null: { v: null },
      nan: { v: NaN },
      missing: {},
      text: { v: 'x' },
    });
    const col = db.collection('vals');
    assert.equal(await adminIds(col.where('v', '!=', 1)), 'nan,two,text');
    assert.equal(await adminIds(col.where('v', '!=', NaN)), 'one,two,text');
    assert.equal(await adminIds(col.where('v', '!=', null)), 'nan,one,two,text');
    assert.equal(await adminIds(col.where('v', 'not-in', [NaN])), 'one,two,text');
    assert.equal(await adminIds(col.where('v', 'not-in', [null])), '');
    assert.equal(await adminIds(col.where('v', 'not-in', [1, null])), '');
    const wcol = web.collection(jsdb, 'vals');
    assert.equal(await webIds(web.query(wcol, web.where('v', '!=', NaN))), 'one,two,text');
    assert.equal(await webIds(web.query(wcol, web.where('v', 'not-in', [NaN, 2]))), 'one,text');
  });

  it('orders inequalities on several fields by field, with the name last', async () => {
    await seed('ranked', { d1: { a: 3, b: 1 }, d2: { a: 1, b: 2 }, d3: { a: 2, b: 1 }, d4: { a: 2, b: 0 } });
    const col = db.collection('ranked');
    assert.equal(
      await adminIds(col.where(FieldPath.documentId(), '>=', db.doc('ranked/d1')).where('a', '>', 0)),
      'd2,d3,d4,d1',
    );
    assert.equal(
      await webIds(
        web.query(
          web.collection(jsdb, 'ranked'),
          web.where(web.documentId(), '>=', 'd1'),
          web.where('b', '>=', 0),
        ),
      ),
      'd4,d1,d3,d2',
    );
  });

  it('aggregates as production: exact sums, only documents with every field, integer overflow', async () => {
    const weights = [1.5, 2.6, 3.7, 4.8, 5.9, 6.0, 7.1, 8.2];
    await seed('weights', Object.fromEntries(weights.map((w, i) => [`w${i}`, { weight: w }])));
    const tail = db.collection('weights').where('weight', '>=', 2.6).orderBy('weight').startAfter(3.7);
    const got = (
      await tail
        .aggregate({
          count: AggregateField.count(),
          sum: AggregateField.sum('weight'),
          avg: AggregateField.average('weight'),
        })
        .get()
    ).data();
    assert.deepEqual(got, { count: 5, sum: 32, avg: 6.4 });
    const wtail = web.query(
      web.collection(jsdb, 'weights'),
      web.where('weight', '>=', 2.6),
      web.orderBy('weight'),
      web.startAfter(3.7),
    );
    const wgot = (
      await web.getAggregateFromServer(wtail, { sum: web.sum('weight'), avg: web.average('weight') })
    ).data();
    assert.deepEqual(wgot, { sum: 32, avg: 6.4 });

    await seed('books', {
      a: { pages: 100, year: 1980 },
      b: { pages: 50, year: 2020 },
      c: { pages: 150, year: 2021 },
      d: { pages: 50 },
    });
    const books = (
      await db
        .collection('books')
        .aggregate({
          sum: AggregateField.sum('pages'),
          avg: AggregateField.average('pages'),
          year: AggregateField.average('year'),
          count: AggregateField.count(),
        })
        .get()
    ).data();
    assert.deepEqual(books, { sum: 300, avg: 100, year: 2007, count: 3 });

    await seed('big', {
      a: { n: Number.MAX_SAFE_INTEGER, m: 2 ** 62 },
      b: { n: 1, m: 2 ** 62 },
      c: { n: -101, m: 2 ** 62 },
    });
    const big = (
      await db
        .collection('big')
        .aggregate({ n: AggregateField.sum('n'), m: AggregateField.sum('m') })
        .get()
    ).data();
    assert.deepEqual(big, { n: Number.MAX_SAFE_INTEGER - 100, m: 3 * 2 ** 62 });
  });

  it("answers a delete's write with no update time", async () => {
    const client = new firestorePkg.v1.FirestoreClient({
      servicePath: '127.0.0.1',
      port: loupe.port,
      sslCreds: gax.grpc.credentials.createInsecure(),
      projectId,
    });
    const database = `projects/${projectId}/databases/(default)`;
    try {
      const [res] = await client.commit({
        database,
        writes: [
          { update: { name: `${database}/documents/gone/a`, fields: { x: { integerValue: 1 } } } },
          { delete: `${database}/documents/gone/a` },
        ],
      });
      assert.ok(res.writeResults[0].updateTime, 'the set has an update time');
      assert.equal(res.writeResults[1].updateTime, null);
    } finally {
      await client.close();
    }
    const wr = await db.doc('gone/b').delete();
    assert.ok(wr.writeTime, 'the Admin SDK reports the commit time for a delete');
  });

  it('locks what an Admin SDK transaction reads: concurrent increments wait rather than abort', async () => {
    const ref = db.doc('counters/admin');
    await ref.set({ n: 0 });
    let attempts = 0;
    const worker = async () => {
      for (let i = 0; i < 20; i++) {
        await db.runTransaction(async (tx) => {
          attempts++;
          const snap = await tx.get(ref);
          tx.set(ref, { n: snap.get('n') + 1 });
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.equal((await ref.get()).get('n'), 160);
    assert.equal(attempts, 160, 'no transaction was aborted and retried');
  });

  it('pages by document id both ways and lists documents and collections, missing parents included', async () => {
    const ids = [
      '__id2__',
      '__id11__',
      ...Array.from({ length: 23 }, (_, i) => `p${String(i).padStart(2, '0')}`),
    ];
    await seed('pages', Object.fromEntries(ids.map((id, i) => [id, { i }])));
    await db.doc('pages/p03/notes/n1').set({ x: 1 });
    await db.doc('pages/ghost/notes/n1').set({ x: 1 }); // "ghost" exists only as a parent
    await db.doc('pages/p05/notes/n1/deep/d1').set({ x: 1 });

    const all = [...ids]; // numeric ids first, by number, then strings
    const pagesWeb = async (dir) => {
      const seen = [];
      let last;
      for (;;) {
        const parts = [web.orderBy(web.documentId(), dir), web.limit(4)];
        if (last) parts.push(web.startAfter(last));
        const snap = await web.getDocs(web.query(web.collection(jsdb, 'pages'), ...parts));
        seen.push(...snap.docs.map((d) => d.id));
        if (snap.size < 4) return seen;
        last = snap.docs.at(-1);
      }
    };
    assert.deepEqual(await pagesWeb('asc'), all);
    assert.deepEqual(await pagesWeb('desc'), [...all].reverse());
    const admin = await db
      .collection('pages')
      .orderBy(FieldPath.documentId())
      .startAt('p10')
      .endBefore('p14')
      .get();
    assert.deepEqual(
      admin.docs.map((d) => d.id),
      ['p10', 'p11', 'p12', 'p13'],
    );
    assert.equal((await db.collection('pages').count().get()).data().count, ids.length);

    const listed = await db.collection('pages').listDocuments();
    assert.deepEqual(
      listed.map((r) => r.id),
      [...all.slice(0, 2), 'ghost', ...all.slice(2)],
    );
    assert.deepEqual(
      (await db.doc('pages/p05').listCollections()).map((c) => c.id),
      ['notes'],
    );
    assert.deepEqual(
      (await db.doc('pages/p05/notes/n1').listCollections()).map((c) => c.id),
      ['deep'],
    );
    assert.deepEqual(
      (await db.doc('pages/p04').listCollections()).map((c) => c.id),
      [],
    );
    const root = (await db.listCollections()).map((c) => c.id);
    assert.ok(root.includes('pages') && root.includes('legacy'), root.join());
    assert.deepEqual(root, [...root].sort());
  });
});
