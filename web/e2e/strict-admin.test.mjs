// --strict-credentials through the Node Admin SDK: pointed at loupe's admin
// port as at an emulator, firebase-admin manages accounts and writes
// documents; pointed at the main port, its owner credential is refused, and
// so is a client that lists accounts without credentials.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getAuth } from 'firebase-admin/auth';
import { getFirestore } from 'firebase-admin/firestore';
import { projectId, startLoupe } from './support/loupe.mjs';

describe('strict mode and the Node Admin SDK', () => {
  let loupe;
  const apps = [];
  const app = (name) => {
    const a = initializeApp({ projectId }, `${name}-${Date.now()}`);
    apps.push(a);
    return a;
  };
  before(async () => {
    loupe = await startLoupe({ args: ['--strict-credentials'], config: {} });
  });
  after(async () => {
    await Promise.all(apps.map((a) => deleteApp(a)));
    delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await loupe?.stop();
  });

  it('manages accounts through the admin port and is refused on the main port', async () => {
    process.env.FIREBASE_AUTH_EMULATOR_HOST = loupe.adminHost;
    const auth = getAuth(app('admin-port'));
    const user = await auth.createUser({ email: 'ada@strict.test', password: 'secret-1' });
    await auth.setCustomUserClaims(user.uid, { role: 'editor' });
    const { users } = await auth.listUsers();
    assert.deepEqual(
      users.map((u) => [u.email, u.customClaims?.role]),
      [['ada@strict.test', 'editor']],
    );

    process.env.FIREBASE_AUTH_EMULATOR_HOST = loupe.host;
    await assert.rejects(getAuth(app('main-port')).listUsers());
    const res = await fetch(
      `${loupe.url}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:batchGet`,
    );
    assert.equal(res.status, 400);
    assert.doesNotMatch(await res.text(), /ada@strict\.test/);
  });

  it('writes documents through the admin port and is refused on the main port', async () => {
    process.env.FIRESTORE_EMULATOR_HOST = loupe.adminHost;
    const db = getFirestore(app('fs-admin'));
    await db.doc('notes/n1').set({ by: 'admin' });
    assert.equal((await db.doc('notes/n1').get()).get('by'), 'admin');

    process.env.FIRESTORE_EMULATOR_HOST = loupe.host;
    const refused = getFirestore(app('fs-main'));
    await assert.rejects(refused.doc('notes/n1').get(), /UNAUTHENTICATED|Invalid authorization/);
  });
});
