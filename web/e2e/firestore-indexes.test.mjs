// Composite-index enforcement (`loupe serve --enforce-indexes`) as the Node
// Admin SDK and the Firebase JS SDK in Node see it: a query needing an index
// firestore.indexes.json does not declare fails with production's
// FAILED_PRECONDITION and console link; declared ones run.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp } from 'firebase-admin/app';
import { getFirestore as getAdminFirestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp } from 'firebase/app';
import * as full from 'firebase/firestore';
import { projectId, startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const link = `The query requires an index. You can create it here: https://console.firebase.google.com/v1/r/project/${projectId}/firestore/indexes?create_composite=`;

describe('Composite-index enforcement from Node', () => {
  let loupe;
  let adminApp;
  let app;
  let dir;
  before(async () => {
    dir = scratchDir('loupe-indexes-');
    const indexes = path.join(dir, 'firestore.indexes.json');
    writeFileSync(
      indexes,
      JSON.stringify({
        indexes: [
          {
            collectionGroup: 'posts',
            queryScope: 'COLLECTION',
            fields: [
              { fieldPath: 'author', order: 'ASCENDING' },
              { fieldPath: 'at', order: 'DESCENDING' },
            ],
          },
        ],
        fieldOverrides: [],
      }),
    );
    loupe = await startLoupe({ config: { firestore: { indexes } }, args: ['--enforce-indexes'] });
    process.env.FIRESTORE_EMULATOR_HOST = loupe.host;
    adminApp = initializeAdminApp({ projectId }, `indexes-admin-${Date.now()}`);
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `indexes-${Date.now()}`);
    const db = getAdminFirestore(adminApp);
    const batch = db.batch();
    for (let i = 0; i < 4; i++)
      batch.set(db.doc(`posts/p${i}`), { author: i % 2 ? 'ann' : 'bob', topic: 'go', at: i });
    await batch.commit();
  });
  after(async () => {
    await deleteApp(app);
    await deleteAdminApp(adminApp);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await loupe?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses an undeclared composite index through the Admin SDK and runs a declared one', async () => {
    const db = getAdminFirestore(adminApp);
    const ok = await db.collection('posts').where('author', '==', 'ann').orderBy('at', 'desc').get();
    assert.deepEqual(
      ok.docs.map((d) => d.id),
      ['p3', 'p1'],
    );
    await assert.rejects(
      db.collection('posts').where('topic', '==', 'go').orderBy('at', 'desc').get(),
      (err) => {
        assert.equal(err.code, 9);
        assert.ok(err.details.startsWith(link), err.details);
        return true;
      },
    );
  });

  it('refuses it to the JS SDK, in getDocs and in listeners', async () => {
    const db = full.getFirestore(app);
    full.connectFirestoreEmulator(db, '127.0.0.1', loupe.port);
    const q = full.query(full.collection(db, 'posts'), full.where('topic', '==', 'go'), full.orderBy('at'));
    await assert.rejects(full.getDocs(q), (err) => {
      assert.equal(err.code, 'failed-precondition');
      assert.ok(err.message.startsWith(link), err.message);
      return true;
    });
    const listened = await new Promise((resolve) => {
      const stop = full.onSnapshot(
        q,
        () => {},
        (err) => {
          stop();
          resolve(err);
        },
      );
    });
    assert.equal(listened.code, 'failed-precondition');
    await assert.rejects(
      full.getDocs(full.query(full.collectionGroup(db, 'posts'), full.where('author', '==', 'ann'))),
      (err) => {
        assert.equal(err.code, 'failed-precondition');
        assert.ok(
          err.message.startsWith(
            `The query requires a COLLECTION_GROUP_ASC index for collection posts and field author. You can create it here: https://console.firebase.google.com/v1/r/project/${projectId}/firestore/indexes?create_exemption=`,
          ),
          err.message,
        );
        return true;
      },
    );
    const declared = await full.getDocs(
      full.query(full.collection(db, 'posts'), full.where('author', '==', 'bob'), full.orderBy('at', 'desc')),
    );
    assert.deepEqual(
      declared.docs.map((d) => d.id),
      ['p2', 'p0'],
    );
    await full.terminate(db);
  });
});
