// The marketplace's security rules, checked with @firebase/rules-unit-testing
// against a real `loupe serve` (Firestore over gRPC, Storage over REST): for
// every collection and storage path, what is allowed and what is denied.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import { assertFails, assertSucceeds, initializeTestEnvironment } from '@firebase/rules-unit-testing';
import { projectId, startLoupe } from './support/loupe.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const profile = (uid, extra = {}) => ({
  id: uid,
  name: uid,
  role: 'user',
  isMentor: true,
  stripeConnected: false,
  ...extra,
});

describe('marketplace rules (rules-unit-testing)', () => {
  let loupe;
  let env;
  const as = (uid, claims) => (uid ? env.authenticatedContext(uid, claims) : env.unauthenticatedContext());
  const db = (uid, claims) => as(uid, claims).firestore();
  const seed = (f) => env.withSecurityRulesDisabled((ctx) => f(ctx.firestore()));

  before(async () => {
    loupe = await startLoupe();
    env = await initializeTestEnvironment({
      projectId,
      firestore: {
        host: '127.0.0.1',
        port: loupe.port,
        rules: readFileSync(path.join(repo, 'firestore.rules'), 'utf8'),
      },
      storage: {
        host: '127.0.0.1',
        port: loupe.port,
        rules: readFileSync(path.join(repo, 'storage.rules'), 'utf8'),
      },
    });
  });
  afterEach(async () => {
    await env.clearFirestore();
  });
  after(async () => {
    await env?.cleanup();
    await loupe?.stop();
  });

  it('users: owners write their profile but never role or stripeConnected; signed-in people read', async () => {
    await assertSucceeds(db('alice').doc('users/alice').set(profile('alice')));
    await assertFails(db('alice').doc('users/bob').set(profile('bob')));
    await assertFails(
      db('carol')
        .doc('users/carol')
        .set(profile('carol', { role: 'admin' })),
    );
    await assertFails(
      db('carol')
        .doc('users/carol')
        .set(profile('carol', { stripeConnected: true })),
    );
    await assertSucceeds(
      db('alice').doc('users/alice').update({ title: 'Guitarist', updatedAt: new Date() }),
    );
    await assertFails(db('alice').doc('users/alice').update({ role: 'admin' }));
    await assertFails(db('alice').doc('users/alice').update({ stripeConnected: true }));
    await assertSucceeds(db('bob').doc('users/alice').get());
    await assertSucceeds(db('bob').collection('users').where('isMentor', '==', true).get());
    await assertFails(db(null).doc('users/alice').get());
    await assertFails(db('alice').doc('users/alice').delete());
  });

  it('notifications: read and marked read by their owner only; created only for oneself', async () => {
    await seed((f) =>
      f
        .doc('notifications/n1')
        .set({ userId: 'alice', type: 'feedback_request', title: 't', message: 'm', read: false }),
    );
    await assertSucceeds(
      db('alice')
        .collection('notifications')
        .where('userId', '==', 'alice')
        .orderBy('createdAt', 'desc')
        .limit(50)
        .get(),
    );
    await assertFails(db('alice').collection('notifications').get());
    await assertFails(db('bob').doc('notifications/n1').get());
    await assertSucceeds(db('alice').doc('notifications/n1').update({ read: true }));
    await assertFails(db('alice').doc('notifications/n1').update({ title: 'changed' }));
    await assertFails(db('bob').doc('notifications/n1').update({ read: true }));
    await assertSucceeds(
      db('alice')
        .collection('notifications')
        .add({ userId: 'alice', type: 'x', title: 't', message: 'm', read: false, data: {} }),
    );
    await assertFails(
      db('alice')
        .collection('notifications')
        .add({ userId: 'bob', type: 'x', title: 't', message: 'm', read: false, data: {} }),
    );
  });

  it('categories: public to read, written by admins', async () => {
    await assertSucceeds(db(null).collection('categories').get());
    await assertFails(db('alice').doc('categories/music').set({ name: 'Music' }));
    await assertSucceeds(db('root', { role: 'admin' }).doc('categories/music').set({ name: 'Music' }));
  });

  it('feedback requests: parties read; the requester creates; each party moves the status it owns', async () => {
    const request = {
      requesterId: 'alice',
      mentorId: 'bob',
      title: 'Solo',
      status: 'pending',
      paymentStatus: 'unpaid',
    };
    await assertSucceeds(db('alice').doc('feedbackRequests/r1').set(request));
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r2')
        .set({ ...request, status: 'accepted' }),
    );
    await assertFails(db('carol').doc('feedbackRequests/r3').set(request));
    await assertSucceeds(db('bob').doc('feedbackRequests/r1').get());
    await assertFails(db('carol').doc('feedbackRequests/r1').get());
    await assertSucceeds(
      db('alice').collection('feedbackRequests').where('requesterId', '==', 'alice').get(),
    );
    await assertSucceeds(db('bob').collection('feedbackRequests').where('mentorId', '==', 'bob').get());
    await assertFails(db('alice').doc('feedbackRequests/r1').update({ status: 'accepted' }));
    await assertSucceeds(
      db('bob').doc('feedbackRequests/r1').update({ status: 'accepted', updatedAt: new Date() }),
    );
    await assertFails(db('bob').doc('feedbackRequests/r1').update({ status: 'accepted', title: 'Other' }));
    await assertSucceeds(db('bob').doc('feedbackRequests/r1').update({ status: 'completed' }));
    await seed((f) => f.doc('feedbackRequests/r4').set(request));
    await assertSucceeds(db('alice').doc('feedbackRequests/r4').update({ status: 'cancelled' }));
  });

  it('comments: the parties write as themselves; only the author soft-deletes; repliesCount stays the server’s', async () => {
    await seed((f) =>
      f.doc('feedbackRequests/r1').set({ requesterId: 'alice', mentorId: 'bob', status: 'accepted' }),
    );
    const comment = {
      userId: 'bob',
      content: 'Timing rushes here',
      mediaUrl: '',
      mediaType: 'text',
      isReply: false,
      deleted: false,
      repliesCount: 0,
      videoTimestamp: 3,
    };
    const comments = (uid) => db(uid).collection('feedbackRequests/r1/comments');
    await assertSucceeds(comments('bob').doc('c1').set(comment));
    await assertFails(
      comments('carol')
        .doc('c2')
        .set({ ...comment, userId: 'carol' }),
    );
    await assertFails(comments('alice').doc('c3').set(comment));
    await assertFails(
      comments('bob')
        .doc('c4')
        .set({ ...comment, repliesCount: 1 }),
    );
    await assertFails(
      comments('bob')
        .doc('c5')
        .set({ ...comment, content: 'x'.repeat(5001) }),
    );
    await assertSucceeds(comments('alice').doc('c1').get());
    await assertFails(comments('carol').doc('c1').get());
    await assertFails(comments('bob').doc('c1').update({ repliesCount: 5 }));
    await assertFails(
      comments('alice').doc('c1').update({ deleted: true, content: '[Deleted]', mediaUrl: '' }),
    );
    await assertFails(comments('bob').doc('c1').update({ deleted: true, content: 'hidden' }));
    await assertSucceeds(
      comments('bob').doc('c1').update({ deleted: true, content: '[Deleted]', mediaUrl: '' }),
    );
  });

  it('storage: avatars, videos and comment media by their owner, with size and type limits', async () => {
    const st = (uid) => as(uid).storage();
    const png = new Uint8Array(1024);
    await assertSucceeds(st('alice').ref('avatars/alice/me.png').put(png, { contentType: 'image/png' }));
    await assertFails(st('alice').ref('avatars/bob/me.png').put(png, { contentType: 'image/png' }));
    await assertFails(st('alice').ref('avatars/alice/me.txt').put(png, { contentType: 'text/plain' }));
    await assertFails(
      st('alice')
        .ref('avatars/alice/big.png')
        .put(new Uint8Array(5 * 1024 * 1024 + 1), { contentType: 'image/png' }),
    );
    await assertSucceeds(st(null).ref('avatars/alice/me.png').getMetadata());
    await assertSucceeds(st('alice').ref('videos/alice/take.mp4').put(png, { contentType: 'video/mp4' }));
    await assertFails(st('bob').ref('videos/alice/take2.mp4').put(png, { contentType: 'video/mp4' }));
    await assertFails(st(null).ref('videos/alice/take.mp4').getMetadata());
    await assertSucceeds(st('bob').ref('videos/alice/take.mp4').getMetadata());
    await assertSucceeds(
      st('alice').ref('comments/r1/alice_1700000000.png').put(png, { contentType: 'image/png' }),
    );
    await assertFails(
      st('alice').ref('comments/r1/bob_1700000000.png').put(png, { contentType: 'image/png' }),
    );
    await assertFails(
      st('alice')
        .ref('comments/r1/alice_1700000001.exe')
        .put(png, { contentType: 'application/x-msdownload' }),
    );
  });
});
