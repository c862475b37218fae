// Firestore Enterprise pipelines through the Firebase JS SDK in Node
// (firebase/firestore/pipelines) and the Node server SDK
// (@google-cloud/firestore 8, `firestore.pipeline()`), against a real
// `loupe serve` with an Enterprise database "ent" beside the Standard
// (default) one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FieldValue, Firestore as ServerFirestore, Timestamp } from '@google-cloud/firestore';
import * as np from '@google-cloud/firestore/pipelines';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectFirestoreEmulator, doc, getFirestore, setDoc, writeBatch } from 'firebase/firestore';
import {
  add,
  arrayContains,
  average,
  charLength,
  constant,
  countAll,
  descending,
  equal,
  execute,
  field,
  greaterThan,
  ifError,
  toUpper,
  variable,
} from 'firebase/firestore/pipelines';
import { projectId, startLoupe } from './support/loupe.mjs';

describe('Firestore pipelines from the JS SDK in Node', () => {
  let loupe;
  let app;
  let ent;
  let std;
  let scratch;
  before(async () => {
    // Rules apply to a client's pipeline as to its queries: books are
    // readable, secrets are not.
    scratch = mkdtempSync(path.join(tmpdir(), 'loupe-pipelines-'));
    const rules = path.join(scratch, 'ent.rules');
    writeFileSync(
      rules,
      `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /books/{id} { allow read, write: if true; }
  }
}`,
    );
    loupe = await startLoupe({
      config: { firestore: [{ database: '(default)' }, { database: 'ent', edition: 'enterprise', rules }] },
    });
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `pipelines-${Date.now()}`);
    ent = getFirestore(app, 'ent');
    std = getFirestore(app);
    for (const db of [ent, std]) connectFirestoreEmulator(db, '127.0.0.1', loupe.port);
    const batch = writeBatch(ent);
    const books = [
      ['dune', { title: 'Dune', genre: 'sf', year: 1965, tags: ['desert'] }],
      ['hobbit', { title: 'The Hobbit', genre: 'fantasy', year: 1937, tags: ['dragons'] }],
      ['lotr', { title: 'The Lord of the Rings', genre: 'fantasy', year: 1954, tags: ['dragons', 'epic'] }],
      ['neuro', { title: 'Neuromancer', genre: 'sf', year: 1984, tags: ['cyber'] }],
    ];
    for (const [id, data] of books) batch.set(doc(ent, 'books', id), data);
    await batch.commit();
    await setDoc(doc(std, 'books', 'dune'), { title: 'Dune' });
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('runs where, sort, limit and select', async () => {
    const snap = await execute(
      ent
        .pipeline()
        .collection('books')
        .where(greaterThan(field('year'), 1940))
        .sort(descending(field('year')))
        .limit(2)
        .select(field('title'), toUpper(field('title')).as('upper')),
    );
    assert.deepEqual(
      snap.results.map((r) => r.data()),
      [
        { title: 'Neuromancer', upper: 'NEUROMANCER' },
        { title: 'Dune', upper: 'DUNE' },
      ],
    );
  });

  it('aggregates with groups', async () => {
    const snap = await execute(
      ent
        .pipeline()
        .collection('books')
        .aggregate({ accumulators: [countAll().as('n'), average('year').as('avg')], groups: ['genre'] })
        .sort(field('genre').ascending()),
    );
    assert.deepEqual(
      snap.results.map((r) => r.data()),
      [
        { genre: 'fantasy', n: 2, avg: 1945.5 },
        { genre: 'sf', n: 2, avg: 1974.5 },
      ],
    );
  });

  it('evaluates functions as production: arrays, strings, arithmetic and errors', async () => {
    const snap = await execute(
      ent
        .pipeline()
        .collection('books')
        .where(arrayContains(field('tags'), 'dragons'))
        .where(equal(field('genre'), 'fantasy'))
        .sort(field('year').ascending())
        .select(
          charLength(field('title')).as('len'),
          add(field('year'), 1).as('next'),
          ifError(field('title').divide(constant(2)), constant('not a number')).as('err'),
        ),
    );
    assert.deepEqual(
      snap.results.map((r) => r.data()),
      [
        { len: 10, next: 1938, err: 'not a number' },
        { len: 21, next: 1955, err: 'not a number' },
      ],
    );
  });

  it('refuses a variable nothing binds before running, and reads the ones define and array_filter bind', async () => {
    // No row reaches the second where: production refuses the pipeline all
    // the same.
    await assert.rejects(
      execute(
        ent
          .pipeline()
          .collection('books')
          .where(equal(field('genre'), 'none'))
          .where(equal(field('title'), variable('unknownVar'))),
      ),
      (err) => {
        assert.equal(err.code, 'invalid-argument');
        assert.match(err.message, /unknown variable "unknownVar"/i);
        return true;
      },
    );
    const snap = await execute(
      ent
        .pipeline()
        .collection('books')
        .define(field('year').as('y'))
        .where(greaterThan(variable('y'), 1960))
        .sort(field('year').ascending())
        .select(
          field('tags')
            .arrayFilter('t', equal(variable('t'), 'cyber'))
            .as('cyber'),
        ),
    );
    assert.deepEqual(
      snap.results.map((r) => r.data()),
      [{ cyber: [] }, { cyber: ['cyber'] }],
    );
  });

  it('applies the security rules to a client pipeline', async () => {
    await assert.rejects(execute(ent.pipeline().collection('secrets')), (err) => {
      assert.equal(err.code, 'permission-denied');
      return true;
    });
    const snap = await execute(
      ent
        .pipeline()
        .collection('books')
        .where(equal(field('genre'), 'sf')),
    );
    assert.equal(snap.results.length, 2);
  });

  it('refuses a pipeline on a Standard database, and fails one whose output errs or passes its memory_limit', async () => {
    await assert.rejects(execute(std.pipeline().collection('books')), (err) => {
      assert.equal(err.code, 'failed-precondition');
      assert.match(err.message, /Enterprise edition/);
      return true;
    });
    await assert.rejects(
      execute(ent.pipeline().collection('books').select(field('tags').arrayGet(0).divide(0).as('x'))),
      (err) => {
        assert.equal(err.code, 'invalid-argument');
        return true;
      },
    );
    // The options production accepts: index_mode and memory_limit (the
    // pipeline holds more bytes of rows than it allows).
    const books = ent.pipeline().collection('books');
    await assert.rejects(execute({ pipeline: books, rawOptions: { memory_limit: 1 } }), (err) => {
      assert.equal(err.code, 'resource-exhausted');
      assert.match(err.message, /memory limit/);
      return true;
    });
    const allowed = await execute({
      pipeline: books,
      indexMode: 'recommended',
      rawOptions: { memory_limit: 1 << 20 },
    });
    assert.ok(allowed.results.length > 0);
  });

  // The same engine through the Node server SDK, whose pipelines are a
  // separate implementation of the protocol (gRPC ExecutePipeline with owner
  // credentials, so the rules above do not apply).
  describe('through the Node server SDK (@google-cloud/firestore 8)', () => {
    let server;
    let serverStd;
    const {
      add,
      arrayConcat,
      arrayContainsAll,
      arrayFirst,
      arrayGet,
      arrayIndexOf,
      arrayLength,
      arraySum,
      average,
      byteLength,
      coalesce,
      collectionId,
      conditional,
      constant,
      cosineDistance,
      countAll,
      countDistinct,
      countIf,
      divide,
      documentId,
      dotProduct,
      equal,
      euclideanDistance,
      equalAny,
      field,
      FunctionExpression,
      greaterThan,
      ifAbsent,
      isAbsent,
      like,
      lessThan,
      mapGet,
      mapKeys,
      maximum,
      minimum,
      mod,
      parent,
      pow,
      round,
      sqrt,
      stringConcat,
      stringIndexOf,
      stringReplaceAll,
      stringReverse,
      substring,
      sum,
      timestampAdd,
      timestampExtract,
      timestampToUnixSeconds,
      timestampTruncate,
      toUpper,
      trim,
      type,
      unixSecondsToTimestamp,
      xor,
    } = np;
    const rows = (snap) => snap.results.map((r) => r.data());
    before(async () => {
      const settings = { projectId, host: `127.0.0.1:${loupe.port}`, ssl: false };
      server = new ServerFirestore({ ...settings, databaseId: 'ent' });
      serverStd = new ServerFirestore(settings);
      const batch = server.batch();
      const novels = {
        emma: {
          title: 'Emma',
          author: 'Austen',
          year: 1815,
          rating: 4.1,
          tags: ['romance'],
          info: { pages: 474 },
        },
        persuasion: {
          title: 'Persuasion',
          author: 'Austen',
          year: 1817,
          rating: 4.3,
          tags: ['romance', 'navy'],
        },
        ubik: { title: 'Ubik', author: 'Dick', year: 1969, rating: 4.2, tags: ['sf'], info: { pages: 202 } },
        valis: { title: 'VALIS', author: 'Dick', year: 1981, rating: 3.9, tags: [] },
        ulysses: { title: 'Ulysses', author: 'Joyce', year: 1922, rating: 3.7, tags: ['modernist'] },
      };
      for (const [id, data] of Object.entries(novels)) batch.set(server.doc(`novels/${id}`), data);
      batch.set(server.doc('novels/ubik/notes/n1'), { stars: 5 });
      batch.set(server.doc('authors/dick/notes/n2'), { stars: 2 });
      await batch.commit();
    });
    after(async () => {
      await server?.terminate();
      await serverStd?.terminate();
    });

    it('runs a collection source with where, sort and limit, with refs and times', async () => {
      const snap = await server
        .pipeline()
        .collection('novels')
        .where(greaterThan(field('year'), 1816))
        .sort(field('year').descending())
        .limit(3)
        .execute();
      assert.deepEqual(
        snap.results.map((r) => r.ref.path),
        ['novels/valis', 'novels/ubik', 'novels/ulysses'],
      );
      const [valis] = snap.results;
      assert.equal(valis.id, 'valis');
      assert.equal(valis.get('title'), 'VALIS');
      assert.ok(valis.createTime instanceof Timestamp && valis.updateTime instanceof Timestamp);
      assert.ok(snap.executionTime instanceof Timestamp);
      // Query.pipeline() equivalent: a classic query turned into a pipeline.
      const fromQuery = await server
        .pipeline()
        .createFrom(server.collection('novels').where('author', '==', 'Austen').orderBy('year', 'desc'))
        .execute();
      assert.deepEqual(
        fromQuery.results.map((r) => r.id),
        ['persuasion', 'emma'],
      );
    });

    it('selects, adds and removes fields, and unnests arrays', async () => {
      const snap = await server
        .pipeline()
        .collection('novels')
        .where(equal('author', 'Dick'))
        .sort(field('year').ascending())
        .select('title', field('info.pages').as('pages'))
        .addFields(toUpper(field('title')).as('upper'), stringConcat(field('title'), '!').as('loud'))
        .removeFields('loud')
        .execute();
      assert.deepEqual(rows(snap), [
        { title: 'Ubik', pages: 202, upper: 'UBIK' },
        { title: 'VALIS', upper: 'VALIS' },
      ]);
      const unnested = await server
        .pipeline()
        .collection('novels')
        .where(equal('author', 'Austen'))
        .sort(field('year').ascending())
        .unnest(field('tags').as('tag'))
        .select('title', 'tag')
        .execute();
      assert.deepEqual(rows(unnested), [
        { title: 'Emma', tag: 'romance' },
        { title: 'Persuasion', tag: 'romance' },
        { title: 'Persuasion', tag: 'navy' },
      ]);
    });

    it('aggregates with and without groups, and distinct', async () => {
      const grouped = await server
        .pipeline()
        .collection('novels')
        .aggregate({
          accumulators: [
            countAll().as('n'),
            average('year').as('avgYear'),
            sum('year').as('years'),
            maximum('rating').as('best'),
            minimum('title').as('first'),
            countIf(greaterThan('rating', 4)).as('good'),
          ],
          groups: ['author'],
        })
        .sort(field('author').ascending())
        .execute();
      assert.deepEqual(rows(grouped), [
        { author: 'Austen', n: 2, avgYear: 1816, years: 3632, best: 4.3, first: 'Emma', good: 2 },
        { author: 'Dick', n: 2, avgYear: 1975, years: 3950, best: 4.2, first: 'Ubik', good: 1 },
        { author: 'Joyce', n: 1, avgYear: 1922, years: 1922, best: 3.7, first: 'Ulysses', good: 0 },
      ]);
      const total = await server
        .pipeline()
        .collection('novels')
        .aggregate(countAll().as('n'), countDistinct('author').as('authors'))
        .execute();
      assert.deepEqual(rows(total), [{ n: 5, authors: 3 }]);
      const distinct = await server
        .pipeline()
        .collection('novels')
        .distinct('author')
        .sort(field('author').descending())
        .execute();
      assert.deepEqual(rows(distinct), [{ author: 'Joyce' }, { author: 'Dick' }, { author: 'Austen' }]);
    });

    it('evaluates functions of each family', async () => {
      const snap = await server
        .pipeline()
        .collection('novels')
        .where(equal('title', 'Persuasion'))
        .select(
          // strings
          substring('title', 0, 4).as('sub'),
          like('title', 'Pers%').as('like'),
          byteLength('title').as('bytes'),
          stringReverse('title').as('rev'),
          trim(constant('  x ')).as('trimmed'),
          // the same string functions on bytes
          trim(constant(Uint8Array.from([0, 1, 2, 0])), constant(Uint8Array.from([0]))).as('trimmedBytes'),
          stringReplaceAll(
            constant(Uint8Array.from([1, 2, 2])),
            constant(Uint8Array.from([2])),
            constant(Uint8Array.from([3])),
          ).as('replacedBytes'),
          stringIndexOf(constant(Uint8Array.from([1, 2, 3])), constant(Uint8Array.from([3]))).as('byteIndex'),
          // arithmetic: integer division and modulo truncate; pow and sqrt are doubles
          divide(constant(7), constant(2)).as('div'),
          mod(constant(-7), constant(3)).as('mod'),
          add('year', 1).as('next'),
          pow(constant(2), constant(10)).as('pow'),
          sqrt(constant(16)).as('sqrt'),
          round('rating').as('round'),
          // arrays: out of range is absent, so the field is left out
          arrayLength('tags').as('ntags'),
          arrayGet('tags', 1).as('second'),
          arrayGet('tags', 5).as('missing'),
          arrayConcat('tags', ['x']).as('more'),
          arrayContainsAll('tags', ['navy', 'romance']).as('all'),
          arraySum(constant([1, 2, 3.5])).as('asum'),
          // maps, absence and logic
          mapGet('info', 'pages').as('pages'),
          mapKeys(constant({ b: 1, a: 2 })).as('keys'),
          isAbsent('info').as('noInfo'),
          ifAbsent('info', 'none').as('info'),
          coalesce(field('nope'), constant(null), 'fallback').as('coalesced'),
          equalAny('author', ['Austen', 'Joyce']).as('any'),
          xor(constant(true), constant(false)).as('xor'),
          conditional(lessThan('year', 1900), constant('old'), constant('new')).as('age'),
          type('year').as('type'),
          // timestamps
          timestampToUnixSeconds(unixSecondsToTimestamp(constant(86400))).as('secs'),
          timestampAdd(unixSecondsToTimestamp(constant(0)), 'day', 2).as('plus2d'),
          timestampTruncate(unixSecondsToTimestamp(constant(100000)), 'day').as('day'),
          timestampExtract(unixSecondsToTimestamp(constant(86400 * 40)), 'month').as('month'),
          // vectors, rounded as production rounds them
          cosineDistance(constant(FieldValue.vector([0.1, 0.1])), FieldValue.vector([0.5, 0.8])).as('cos'),
          dotProduct(constant(FieldValue.vector([0.1, 0.1])), FieldValue.vector([0.5, 0.8])).as('dot'),
          euclideanDistance(constant(FieldValue.vector([0.1, 0.1])), FieldValue.vector([0.5, 0.8])).as(
            'euclid',
          ),
          // references
          documentId(field('__name__')).as('id'),
          collectionId(field('__name__')).as('coll'),
        )
        .execute();
      const [row] = rows(snap);
      for (const k of ['plus2d', 'day']) {
        assert.ok(row[k] instanceof Timestamp, k);
        row[k] = row[k].seconds;
      }
      assert.deepEqual(row, {
        sub: 'Pers',
        like: true,
        bytes: 10,
        rev: 'noisausreP',
        trimmed: 'x',
        trimmedBytes: Buffer.from([1, 2]),
        replacedBytes: Buffer.from([1, 3, 3]),
        byteIndex: 2,
        div: 3,
        mod: -1,
        next: 1818,
        pow: 1024,
        sqrt: 4,
        round: 4,
        ntags: 2,
        second: 'navy',
        more: ['romance', 'navy', 'x'],
        all: true,
        asum: 6.5,
        keys: ['a', 'b'],
        noInfo: true,
        info: 'none',
        coalesced: 'fallback',
        any: true,
        xor: true,
        age: 'old',
        type: 'int64',
        secs: 86400,
        plus2d: 172800,
        day: 86400,
        month: 2,
        cos: 0.02560880430538015,
        dot: 0.13,
        euclid: 0.806225774829855,
        id: 'persuasion',
        coll: 'novels',
      });
    });

    it('nests a dotted alias as a field path and treats a missing field as production does', async () => {
      const snap = await server
        .pipeline()
        .collection('novels')
        .where(equal('title', 'Emma'))
        .select(
          'title',
          'info.pages',
          arrayFirst('nope').as('first'),
          arrayIndexOf('nope', 'x').as('index'),
          documentId(field('__path__')).as('noId'),
        )
        .execute();
      // A dotted alias sets a nested field; array functions of a missing
      // field are null, and so is the id of the reserved __path__.
      assert.deepEqual(rows(snap), [
        { title: 'Emma', info: { pages: 474 }, first: null, index: null, noId: null },
      ]);
      // The SDK turns a not-in query into not_equal_any, which on an
      // Enterprise database also matches documents without the field.
      const notIn = await server
        .pipeline()
        .createFrom(server.collection('novels').where('info.pages', 'not-in', [474]))
        .sort(field('title').ascending())
        .execute();
      assert.deepEqual(
        notIn.results.map((r) => r.id),
        ['persuasion', 'ubik', 'ulysses', 'valis'],
      );
      // Selecting __name__ keeps the result's reference, not a field; null
      // is a value array_index_of can find.
      const named = await server
        .pipeline()
        .collection('novels')
        .where(equal('title', 'Ubik'))
        .select('title', '__name__', arrayIndexOf(constant([1, null]), constant(null)).as('nullAt'))
        .execute();
      assert.deepEqual(rows(named), [{ title: 'Ubik', nullAt: 1 }]);
      assert.equal(named.results[0].ref.path, 'novels/ubik');
    });

    it('reads a collection group, a list of documents and the whole database', async () => {
      const group = await server
        .pipeline()
        .collectionGroup('notes')
        .sort(field('stars').descending())
        .select('stars', parent(field('__name__')).as('parent'))
        .execute();
      assert.deepEqual(
        group.results.map((r) => [r.ref.path, r.get('stars'), r.get('parent').path]),
        [
          ['novels/ubik/notes/n1', 5, 'novels/ubik'],
          ['authors/dick/notes/n2', 2, 'authors/dick'],
        ],
      );
      const docs = await server
        .pipeline()
        .documents([server.doc('novels/valis'), server.doc('novels/emma')])
        .select('title')
        .sort(field('title').ascending())
        .execute();
      assert.deepEqual(rows(docs), [{ title: 'Emma' }, { title: 'VALIS' }]);
      const db = await server
        .pipeline()
        .database()
        .where(equal(collectionId(field('__name__')), 'notes'))
        .aggregate(countAll().as('n'))
        .execute();
      assert.deepEqual(rows(db), [{ n: 2 }]);
      // The parent of a top-level document is the database root, as
      // production answers (the Node SDK cannot decode that reference);
      // the root's parent is null.
      const top = server.pipeline().collection('novels').where(equal('title', 'Ubik'));
      const rootRef = await top.select(parent(field('__name__')).as('p')).execute();
      assert.throws(
        () => rootRef.results[0].get('p'),
        /does not currently support decoding referenceValues for collections.*'projects\/[^/]+\/databases\/ent\/documents'/,
      );
      assert.deepEqual(rows(await top.select(parent(parent(field('__name__'))).as('p')).execute()), [
        { p: null },
      ]);
    });

    it('streams results, explains, and runs inside a transaction', async () => {
      const streamed = [];
      for await (const r of server
        .pipeline()
        .collection('novels')
        .sort(field('title').ascending())
        .select('title')
        .stream())
        streamed.push(r.get('title'));
      assert.deepEqual(streamed, ['Emma', 'Persuasion', 'Ubik', 'Ulysses', 'VALIS']);
      const pipe = server.pipeline().collection('novels').where(equal('author', 'Joyce'));
      const analyzed = await pipe.execute({ explainOptions: { mode: 'analyze' } });
      assert.equal(analyzed.results.length, 1);
      assert.ok(analyzed.explainStats.text.length > 0);
      assert.notEqual(analyzed.explainStats.text[0], '{');
      assert.equal(analyzed.explainStats.rawData.type_url, 'type.googleapis.com/google.protobuf.StringValue');
      // "execute" is the SDK's default mode: results, no stats.
      for (const mode of ['execute', undefined]) {
        const executed = await pipe.execute({ explainOptions: { mode } });
        assert.deepEqual(
          executed.results.map((r) => r.id),
          ['ulysses'],
        );
        assert.equal(executed.explainStats, undefined);
      }
      const counted = await server.runTransaction(async (tx) => {
        const snap = await tx.execute(
          server.pipeline().collection('novels').where(equal('author', 'Austen')),
        );
        tx.set(server.doc('tallies/austen'), { n: snap.results.length });
        return snap.results.length;
      });
      assert.equal(counted, 2);
      assert.deepEqual((await server.doc('tallies/austen').get()).data(), { n: 2 });
    });

    it("answers bad pipelines with production's gRPC code and message", async () => {
      // As production: err.code is the gRPC code, err.details the server's
      // message, and err.message "<code> <NAME>: <details>".
      const rejects = (pipeline, code, name, details, options) =>
        assert.rejects(pipeline.execute(options), (err) => {
          assert.equal(err.code, code);
          assert.match(err.details, details);
          assert.equal(err.message, `${code} ${name}: ${err.details}`);
          return true;
        });
      // memory_limit, as the SDK's system test sends it: an analyzed
      // pipeline's error carries the explain stats in its status details.
      const overLimit = server.pipeline().collection('novels').sort(field('year').ascending());
      const analyzeOverLimit = assert.rejects(
        overLimit.execute({ explainOptions: { mode: 'analyze' }, rawOptions: { memory_limit: 1 } }),
        (err) => {
          assert.equal(err.code, 8);
          assert.equal(err.message, `8 RESOURCE_EXHAUSTED: ${err.details}`);
          assert.ok(
            err.statusDetails.some(
              (d) => d.type_url === 'type.googleapis.com/google.firestore.v1.ExplainStats',
            ),
            JSON.stringify(err.statusDetails),
          );
          return true;
        },
      );
      const novels = server.pipeline().collection('novels');
      await Promise.all([
        rejects(
          novels.select(new FunctionExpression('no_such_fn', [field('title')]).as('x')),
          3,
          'INVALID_ARGUMENT',
          /no_such_fn/,
        ),
        // A raw stage with a wrong parameter type, as the SDK's own system test sends it and
        // quotes production's answer.
        rejects(
          novels.rawStage('select', [field('title')]),
          3,
          'INVALID_ARGUMENT',
          /^Expected fields to be MAP_VALUE, but was FIELD_REFERENCE_VALUE\.$/,
        ),
        // An expression error in the output fails the whole pipeline.
        rejects(novels.select(divide(field('year'), 0).as('x')), 3, 'INVALID_ARGUMENT', /zero/i),
        rejects(serverStd.pipeline().collection('books'), 9, 'FAILED_PRECONDITION', /Enterprise edition/),
        analyzeOverLimit,
        rejects(overLimit, 8, 'RESOURCE_EXHAUSTED', /memory limit/, { rawOptions: { memory_limit: 1 } }),
        rejects(overLimit, 3, 'INVALID_ARGUMENT', /index_mode/, { rawOptions: { index_mode: 'fastest' } }),
      ]);
      // The documented options run as without them.
      const allowed = await overLimit.execute({
        indexMode: 'recommended',
        rawOptions: { memory_limit: 1 << 20 },
      });
      assert.equal(allowed.results.length, 5);
    });
  });
});
