// Firebase Auth from the JS SDK in Node against a real `loupe serve`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fa from 'firebase/auth';
import { projectId, startLoupe } from './support/loupe.mjs';

describe('Auth from the JS SDK in Node', () => {
  let loupe;
  let app;
  let auth;
  before(async () => {
    loupe = await startLoupe();
    app = initializeApp({ projectId, apiKey: 'demo-api-key' }, `auth-${Date.now()}`);
    auth = fa.getAuth(app);
    fa.connectAuthEmulator(auth, loupe.url, { disableWarnings: true });
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  it('signs up, updates the profile, signs out and in again', async () => {
    const cred = await fa.createUserWithEmailAndPassword(auth, 'Sam@Loupe.dev', 'secret1');
    assert.equal(cred.user.email, 'sam@loupe.dev');
    await fa.updateProfile(cred.user, { displayName: 'Sam Taylor', photoURL: 'https://example.com/sam.png' });
    await cred.user.reload();
    assert.equal(auth.currentUser.displayName, 'Sam Taylor');
    const token = await cred.user.getIdTokenResult();
    assert.equal(token.claims.email, 'sam@loupe.dev');
    assert.equal(token.signInProvider, 'password');
    await fa.signOut(auth);
    assert.equal(auth.currentUser, null);
    const again = await fa.signInWithEmailAndPassword(auth, 'sam@loupe.dev', 'secret1');
    assert.equal(again.user.uid, cred.user.uid);
  });

  it('reports the errors a person can act on', async () => {
    await assert.rejects(fa.signInWithEmailAndPassword(auth, 'sam@loupe.dev', 'wrong-pw'), {
      code: 'auth/wrong-password',
    });
    await assert.rejects(fa.signInWithEmailAndPassword(auth, 'ghost@loupe.dev', 'secret1'), {
      code: 'auth/user-not-found',
    });
    await assert.rejects(fa.createUserWithEmailAndPassword(auth, 'sam@loupe.dev', 'secret1'), {
      code: 'auth/email-already-in-use',
    });
    await assert.rejects(fa.createUserWithEmailAndPassword(auth, 'new@loupe.dev', '123'), {
      code: 'auth/weak-password',
    });
  });

  it('resets a password through the captured e-mail link', async () => {
    await fa.sendPasswordResetEmail(auth, 'sam@loupe.dev');
    const { oobCodes } = await (
      await fetch(`${loupe.url}/emulator/v1/projects/${projectId}/oobCodes`)
    ).json();
    const code = new URL(oobCodes.at(-1).oobLink).searchParams.get('oobCode');
    assert.equal(await fa.verifyPasswordResetCode(auth, code), 'sam@loupe.dev');
    await fa.confirmPasswordReset(auth, code, 'brand-new');
    const cred = await fa.signInWithEmailAndPassword(auth, 'sam@loupe.dev', 'brand-new');
    assert.equal(cred.user.email, 'sam@loupe.dev');
  });

  it('signs in with a Google credential, creating the account once', async () => {
    const idToken = JSON.stringify({
      sub: '123456789012345678901',
      email: 'g@loupe.dev',
      email_verified: true,
      name: 'Gee',
    });
    const first = await fa.signInWithCredential(auth, fa.GoogleAuthProvider.credential(idToken));
    assert.equal(fa.getAdditionalUserInfo(first).isNewUser, true);
    assert.equal(first.user.displayName, 'Gee');
    assert.equal(first.user.providerData[0].providerId, 'google.com');
    const second = await fa.signInWithCredential(auth, fa.GoogleAuthProvider.credential(idToken));
    assert.equal(second.user.uid, first.user.uid);
    assert.equal(fa.getAdditionalUserInfo(second).isNewUser, false);
  });
});
