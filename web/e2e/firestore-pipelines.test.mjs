// Firestore Enterprise pipelines through the Firebase JS SDK in Node
// (firebase/firestore/pipelines), against a real `loupe serve` with an
// Enterprise database "ent" beside the Standard (default) one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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

  it('refuses a pipeline on a Standard database, and fails one whose output errs', async () => {
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
  });
});
