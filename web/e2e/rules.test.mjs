// The marketplace's security rules, checked with @firebase/rules-unit-testing
// against a real `loupe serve` (Firestore over gRPC, Storage over REST): for
// every collection and storage path, what is allowed and what is denied.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import { assertFails, assertSucceeds, initializeTestEnvironment } from '@firebase/rules-unit-testing';
import firebase from 'firebase/compat/app';
import 'firebase/compat/firestore';
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

/** Bob's top-level text comment at 0:03, with the given fields on top. */
const bobsTextComment = (fields) => ({
  userId: 'bob',
  mediaUrl: '',
  mediaType: 'text',
  isReply: false,
  deleted: false,
  repliesCount: 0,
  videoTimestamp: 3,
  ...fields,
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

  it('users: private to their owner, who never writes role, Stripe fields or reviews', async () => {
    await assertSucceeds(
      db('alice')
        .doc('users/alice')
        .set(profile('alice', { reviews: [] })),
    );
    await assertFails(db('alice').doc('users/bob').set(profile('bob')));
    for (const extra of [
      { role: 'admin' },
      { stripeConnected: true },
      { stripeAccountId: 'acct_1' },
      { reviews: [{ rating: 5 }] },
    ]) {
      await assertFails(db('carol').doc('users/carol').set(profile('carol', extra)));
    }
    await assertSucceeds(
      db('alice').doc('users/alice').update({ title: 'Guitarist', updatedAt: new Date() }),
    );
    await assertFails(db('alice').doc('users/alice').update({ role: 'admin' }));
    await assertFails(db('alice').doc('users/alice').update({ stripeConnected: true }));
    await assertFails(db('alice').doc('users/alice').update({ stripeAccountId: 'acct_2' }));
    await assertFails(
      db('alice')
        .doc('users/alice')
        .update({ reviews: [{ rating: 5 }] }),
    );
    // Rate cards need a label and a positive price; a turnaround is 1 to 30 days.
    for (const rateCards of [
      [{ duration: '', price: 20 }],
      [{ duration: 'Up to 1 min', price: 0 }],
      [
        { duration: 'Up to 1 min', price: 20 },
        { duration: '1-3 mins', price: -5 },
      ],
      [{ duration: 'Up to 1 min' }],
    ]) {
      await assertFails(db('alice').doc('users/alice').update({ rateCards }));
    }
    await assertSucceeds(
      db('alice')
        .doc('users/alice')
        .update({ rateCards: [{ duration: 'Up to 1 min', price: 19.5 }], turnaroundDays: 3 }),
    );
    await assertFails(db('alice').doc('users/alice').update({ turnaroundDays: 0 }));
    await assertFails(db('alice').doc('users/alice').update({ turnaroundDays: 2.5 }));
    await assertFails(
      db('dan')
        .doc('users/dan')
        .set(profile('dan', { rateCards: [{ duration: 'Free', price: 0 }] })),
    );
    await assertSucceeds(db('alice').doc('users/alice').get());
    // E-mail, push token, Stripe and role are never readable by others, signed in or not.
    await assertFails(db('bob').doc('users/alice').get());
    await assertFails(db('bob').collection('users').where('isMentor', '==', true).get());
    await assertFails(db(null).doc('users/alice').get());
    await assertFails(db('alice').doc('users/alice').delete());
  });

  it('mentors: the public projection is readable by anyone and written by no client', async () => {
    await seed((f) => f.doc('mentors/alice').set({ id: 'alice', name: 'Alice', bookable: true }));
    await assertSucceeds(db(null).doc('mentors/alice').get());
    await assertSucceeds(db(null).collection('mentors').get());
    await assertSucceeds(db('bob').doc('mentors/alice').get());
    await assertFails(db('alice').doc('mentors/alice').set({ id: 'alice', name: 'Alice', bookable: true }));
    await assertFails(db('alice').doc('mentors/alice').update({ bookable: false }));
    await assertFails(db(null).doc('mentors/mallory').set({ name: 'Mallory' }));
  });

  it('payments: read by the two parties of the request, written by no client', async () => {
    await seed((f) =>
      f.doc('payments/pi_1').set({ requesterId: 'alice', mentorId: 'bob', amount: 4500, currency: 'USD' }),
    );
    await assertSucceeds(db('alice').doc('payments/pi_1').get());
    await assertSucceeds(db('bob').doc('payments/pi_1').get());
    await assertFails(db('carol').doc('payments/pi_1').get());
    await assertFails(db(null).doc('payments/pi_1').get());
    await assertFails(db('alice').doc('payments/pi_2').set({ requesterId: 'alice', mentorId: 'bob' }));
    // A mentor lists the payments they received (their earnings), a requester those they made.
    await assertSucceeds(db('bob').collection('payments').where('mentorId', '==', 'bob').get());
    await assertSucceeds(db('alice').collection('payments').where('requesterId', '==', 'alice').get());
    await assertFails(db('carol').collection('payments').where('mentorId', '==', 'bob').get());
  });

  it('reviews: one per completed request, by its requester, rated 1 to 5; public to read', async () => {
    await seed(async (f) => {
      await f
        .doc('feedbackRequests/done')
        .set({ requesterId: 'alice', mentorId: 'bob', status: 'completed' });
      await f.doc('feedbackRequests/open').set({ requesterId: 'alice', mentorId: 'bob', status: 'accepted' });
    });
    const review = (extra = {}) => ({
      requesterId: 'alice',
      mentorId: 'bob',
      reviewerName: 'Alice',
      rating: 5,
      text: 'Spot on.',
      createdAt: firebase.firestore.FieldValue.serverTimestamp(),
      ...extra,
    });
    await assertFails(db('alice').doc('reviews/open').set(review()));
    await assertFails(
      db('carol')
        .doc('reviews/done')
        .set(review({ requesterId: 'carol' })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ mentorId: 'dave' })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ rating: 6 })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ rating: 0 })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ rating: 4.5 })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ text: 'x'.repeat(1001) })),
    );
    await assertFails(
      db('alice')
        .doc('reviews/done')
        .set(review({ verified: true })),
    );
    await assertSucceeds(db('alice').doc('reviews/done').set(review()));
    await assertFails(db('alice').doc('reviews/done').update({ rating: 1 }));
    await assertSucceeds(db(null).doc('reviews/done').get());
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

  it('feedback requests: parties read; the requester creates for a bookable mentor; each party moves the status it owns', async () => {
    const card = { duration: 'Up to 1 min', price: 25 };
    await seed(async (f) => {
      await f.doc('mentors/bob').set({ id: 'bob', bookable: true, rateCards: [card] });
      await f.doc('mentors/dave').set({ id: 'dave', bookable: false, rateCards: [card] });
    });
    const request = {
      requesterId: 'alice',
      mentorId: 'bob',
      title: 'Solo',
      status: 'pending',
      paymentStatus: 'unpaid',
      rateCard: card,
    };
    await assertSucceeds(db('alice').doc('feedbackRequests/r1').set(request));
    // Only one of the mentor's listed cards, at its price; the due date is the server's.
    for (const change of [
      { rateCard: { duration: 'Up to 1 min', price: 1 } },
      { rateCard: { duration: 'Up to 1 min', price: 0 } },
      { rateCard: { duration: '', price: 25 } },
      { rateCard: null },
      { dueAt: new Date(0) },
      { paymentId: 'pi_1' },
    ]) {
      await assertFails(
        db('alice')
          .doc('feedbackRequests/r2')
          .set({ ...request, ...change }),
      );
    }
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r2')
        .set({ ...request, status: 'accepted' }),
    );
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r2')
        .set({ ...request, paymentStatus: 'paid' }),
    );
    // A mentor without payouts, or not listed, cannot be booked; nor can oneself.
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r2')
        .set({ ...request, mentorId: 'dave' }),
    );
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r2')
        .set({ ...request, mentorId: 'erin' }),
    );
    await assertFails(
      db('bob')
        .doc('feedbackRequests/r2')
        .set({ ...request, requesterId: 'bob' }),
    );
    await assertFails(db('carol').doc('feedbackRequests/r3').set(request));
    await assertSucceeds(db('bob').doc('feedbackRequests/r1').get());
    await assertFails(db('carol').doc('feedbackRequests/r1').get());
    await assertSucceeds(
      db('alice').collection('feedbackRequests').where('requesterId', '==', 'alice').get(),
    );
    await assertSucceeds(db('bob').collection('feedbackRequests').where('mentorId', '==', 'bob').get());
    // Unpaid: the mentor cannot accept it yet, and no client marks it paid.
    await assertFails(
      db('bob').doc('feedbackRequests/r1').update({ status: 'accepted', updatedAt: new Date() }),
    );
    await assertFails(db('alice').doc('feedbackRequests/r1').update({ paymentStatus: 'paid' }));
    await seed((f) => f.doc('feedbackRequests/r1').update({ paymentStatus: 'paid' }));
    await assertFails(db('alice').doc('feedbackRequests/r1').update({ status: 'accepted' }));
    await assertSucceeds(
      db('bob').doc('feedbackRequests/r1').update({ status: 'accepted', updatedAt: new Date() }),
    );
    await assertFails(db('bob').doc('feedbackRequests/r1').update({ status: 'accepted', title: 'Other' }));
    await assertFails(db('bob').doc('feedbackRequests/r1').update({ paymentStatus: 'refunded' }));
    await assertSucceeds(db('bob').doc('feedbackRequests/r1').update({ status: 'completed' }));
    await seed((f) => f.doc('feedbackRequests/r4').set({ ...request, paymentStatus: 'paid' }));
    await assertSucceeds(db('bob').doc('feedbackRequests/r4').update({ status: 'declined' }));
    await seed((f) => f.doc('feedbackRequests/r5').set(request));
    await assertSucceeds(db('alice').doc('feedbackRequests/r5').update({ status: 'cancelled' }));
    // In progress, the requester may cancel only once its due date has passed (refunded by the payments function).
    const inProgress = { ...request, status: 'accepted', paymentStatus: 'paid' };
    await seed(async (f) => {
      await f.doc('feedbackRequests/r6').set({ ...inProgress, dueAt: new Date(Date.now() + 86_400_000) });
      await f.doc('feedbackRequests/r7').set({ ...inProgress, dueAt: new Date(Date.now() - 60_000) });
      await f.doc('feedbackRequests/r8').set(inProgress);
    });
    await assertFails(db('alice').doc('feedbackRequests/r6').update({ status: 'cancelled' }));
    await assertFails(db('alice').doc('feedbackRequests/r8').update({ status: 'cancelled' }));
    await assertFails(db('bob').doc('feedbackRequests/r7').update({ status: 'cancelled' }));
    await assertSucceeds(db('alice').doc('feedbackRequests/r7').update({ status: 'cancelled' }));
  });

  it('comments: the parties write as themselves; only the author soft-deletes; repliesCount stays the server’s', async () => {
    await seed((f) =>
      f.doc('feedbackRequests/r1').set({ requesterId: 'alice', mentorId: 'bob', status: 'accepted' }),
    );
    const comment = bobsTextComment({ content: 'Timing rushes here' });
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
    // Ranges end after they start; drawings hold 1 to 20 shapes.
    const shape = { kind: 'arrow', color: '#facc15', points: [0.1, 0.1, 0.5, 0.5] };
    await assertSucceeds(
      comments('bob')
        .doc('c6')
        .set({ ...comment, videoEndTimestamp: 4.5, drawing: { shapes: [shape] } }),
    );
    await assertFails(
      comments('bob')
        .doc('c7')
        .set({ ...comment, videoEndTimestamp: 2 }),
    );
    await assertFails(
      comments('bob')
        .doc('c7')
        .set({ ...comment, drawing: { shapes: [] } }),
    );
    // Each shape is checked: a known kind, a #rrggbb colour, two points (a pen stroke 2 to 200).
    const pen = {
      kind: 'pen',
      color: '#ef4444',
      points: Array.from({ length: 400 }, (_, i) => (i % 10) / 10),
    };
    await assertSucceeds(
      comments('bob')
        .doc('c8')
        .set({ ...comment, drawing: { shapes: [shape, pen] } }),
    );
    for (const bad of [
      { ...shape, kind: 'text' },
      { ...shape, color: 'red' },
      { ...shape, points: [0.1, 0.1, 0.5] },
      { ...shape, points: [0.1, 0.1, 0.5, 0.5, 0.6, 0.6] },
      { ...pen, points: [...pen.points, 0.5, 0.5] },
      { ...shape, label: 'x' },
    ]) {
      await assertFails(
        comments('bob')
          .doc('c7')
          .set({ ...comment, drawing: { shapes: [shape, bad] } }),
      );
    }
    await assertFails(
      comments('bob')
        .doc('c7')
        .set({ ...comment, drawing: { shapes: Array(21).fill(shape) } }),
    );
    // A range stays within the clip when the request knows its length; times are never negative.
    await seed((f) =>
      f
        .doc('feedbackRequests/r2')
        .set({ requesterId: 'alice', mentorId: 'bob', status: 'accepted', videoDuration: 10 }),
    );
    const timed = db('bob').collection('feedbackRequests/r2/comments');
    await assertSucceeds(timed.doc('c1').set({ ...comment, videoEndTimestamp: 10 }));
    await assertFails(timed.doc('c2').set({ ...comment, videoEndTimestamp: 10.5 }));
    await assertFails(timed.doc('c2').set({ ...comment, videoTimestamp: -1 }));
    await assertFails(
      comments('bob')
        .doc('c7')
        .set({ ...comment, resolved: true }),
    );
    // The author edits the text, now; either party resolves, as themself, now.
    const now = firebase.firestore.FieldValue.serverTimestamp();
    await assertSucceeds(comments('bob').doc('c6').update({ content: 'Rushes here, bar 9', editedAt: now }));
    await assertFails(comments('alice').doc('c6').update({ content: 'Mine now', editedAt: now }));
    await assertFails(
      comments('bob')
        .doc('c6')
        .update({ content: 'x', editedAt: new Date(0) }),
    );
    await assertSucceeds(
      comments('alice').doc('c6').update({ resolved: true, resolvedBy: 'alice', resolvedAt: now }),
    );
    await assertFails(
      comments('alice').doc('c6').update({ resolved: false, resolvedBy: 'bob', resolvedAt: now }),
    );
    await assertFails(
      comments('carol').doc('c6').update({ resolved: false, resolvedBy: 'carol', resolvedAt: now }),
    );
    await assertSucceeds(
      comments('bob').doc('c1').update({ deleted: true, content: '[Deleted]', mediaUrl: '' }),
    );
    await assertFails(comments('bob').doc('c1').update({ content: 'Back again', editedAt: now }));
  });

  it('versions: the requester adds the next take of an open request; the parties read it; comments name their version or carry one forward', async () => {
    const open = { requesterId: 'alice', mentorId: 'bob', status: 'accepted', videoDuration: 10 };
    await seed(async (f) => {
      await f.doc('feedbackRequests/r1').set(open);
      await f.doc('feedbackRequests/r2').set({ ...open, status: 'completed' });
    });
    const now = firebase.firestore.FieldValue.serverTimestamp();
    const take = (uid, n, extra = {}) => ({
      number: n,
      videoPath: `videos/${uid}/${n}_take.mp4`,
      videoUrl: 'https://example.test/take.mp4',
      videoDuration: 12,
      createdAt: now,
      ...extra,
    });
    // The version and the request's count go together, in one batch.
    const addVersion = (
      uid,
      request,
      n,
      version = take(uid, n),
      count = n,
      still = version.thumbnailPath ?? null,
    ) => {
      const f = db(uid);
      const batch = f.batch();
      batch.set(f.doc(`feedbackRequests/${request}/versions/${n}`), version);
      batch.update(f.doc(`feedbackRequests/${request}`), {
        versionCount: count,
        latestVideoPath: version.videoPath,
        latestThumbnailPath: still,
        updatedAt: now,
      });
      return batch.commit();
    };
    await assertFails(addVersion('bob', 'r1', 2));
    await assertFails(addVersion('alice', 'r1', 3));
    await assertFails(addVersion('alice', 'r1', 2, take('alice', 2), 3));
    await assertFails(addVersion('alice', 'r1', 2, take('bob', 2)));
    await assertFails(addVersion('alice', 'r1', 2, take('alice', 2, { createdAt: new Date(0) })));
    await assertFails(addVersion('alice', 'r1', 2, take('alice', 2, { status: 'completed' })));
    await assertFails(addVersion('alice', 'r2', 2));
    // Alone, neither half is allowed.
    await assertFails(db('alice').doc('feedbackRequests/r1/versions/2').set(take('alice', 2)));
    await assertFails(
      db('alice')
        .doc('feedbackRequests/r1')
        .update({ versionCount: 2, latestVideoPath: 'videos/alice/2_take.mp4', updatedAt: now }),
    );
    // Its still lies in the requester's own thumbnails/ folder, and the request names that one.
    const still = { thumbnailPath: 'thumbnails/alice/2.jpg' };
    await assertFails(
      addVersion('alice', 'r1', 2, take('alice', 2, { thumbnailPath: 'thumbnails/bob/2.jpg' })),
    );
    await assertFails(addVersion('alice', 'r1', 2, take('alice', 2, still), 2, 'thumbnails/alice/other.jpg'));
    await assertSucceeds(addVersion('alice', 'r1', 2, take('alice', 2, still)));
    await assertFails(addVersion('alice', 'r1', 2));
    await assertSucceeds(db('bob').doc('feedbackRequests/r1/versions/2').get());
    await assertSucceeds(db('alice').collection('feedbackRequests/r1/versions').get());
    await assertFails(db('carol').doc('feedbackRequests/r1/versions/2').get());
    await assertFails(db('alice').doc('feedbackRequests/r1/versions/2').update({ videoDuration: 1 }));
    await assertFails(db('alice').doc('feedbackRequests/r1/versions/2').delete());

    // Comments name a version the request has (none means v1); a range fits that version's clip.
    const comment = bobsTextComment({ userDisplayName: 'Bob', content: 'Rushes here' });
    const comments = (uid) => db(uid).collection('feedbackRequests/r1/comments');
    await assertSucceeds(comments('bob').doc('v1').set(comment));
    await assertSucceeds(
      comments('bob')
        .doc('v1b')
        .set({ ...comment, version: 1 }),
    );
    await assertSucceeds(
      comments('bob')
        .doc('v2')
        .set({ ...comment, version: 2, videoEndTimestamp: 11.5 }),
    );
    await assertFails(
      comments('bob')
        .doc('v1c')
        .set({ ...comment, version: 1, videoEndTimestamp: 11.5 }),
    );
    await assertFails(
      comments('bob')
        .doc('v3')
        .set({ ...comment, version: 3 }),
    );
    await assertFails(
      comments('bob')
        .doc('v0')
        .set({ ...comment, version: 0 }),
    );
    await assertFails(
      comments('bob')
        .doc('vs')
        .set({ ...comment, version: '2' }),
    );
    // Either party carries an earlier comment forward, once, as {original}-v{version}; it keeps its
    // author, words and attachment.
    const copy = { ...comment, version: 2, carriedFrom: 'v1b' };
    const carry = (uid, id, change = {}) =>
      comments(uid)
        .doc(id)
        .set({ ...copy, ...change });
    await assertFails(carry('carol', 'v1b-v2'));
    await assertFails(carry('alice', 'v1b-v2', { content: 'Alice says Bob said' }));
    await assertFails(carry('alice', 'v1b-v2', { userDisplayName: 'Someone' }));
    await assertFails(carry('alice', 'v1b-v2', { mediaUrl: 'https://x/y.png' }));
    await assertFails(carry('alice', 'v1b-v2', { isReply: true }));
    await assertFails(carry('alice', 'copy'));
    await assertSucceeds(carry('alice', 'v1b-v2'));
    await assertFails(carry('bob', 'v1b-v2'));
    await assertSucceeds(carry('bob', 'v1-v2', { carriedFrom: 'v1' }));
    await assertFails(carry('alice', 'v1-v1', { carriedFrom: 'v1', version: 1 }));
    await assertFails(carry('alice', 'missing-v2', { carriedFrom: 'missing' }));
    // Not from the same or a later version, nor a deleted comment.
    await assertFails(carry('alice', 'v2-v2', { carriedFrom: 'v2' }));
    await seed((f) =>
      f.doc('feedbackRequests/r1/comments/gone').set({ ...comment, deleted: true, content: '[Deleted]' }),
    );
    await assertFails(carry('alice', 'gone-v2', { content: '[Deleted]', carriedFrom: 'gone' }));
    // A comment of one's own cannot pretend to be carried.
    await assertFails(
      comments('bob')
        .doc('v2-v2')
        .set({ ...comment, version: 2, carriedFrom: 'v2' }),
    );
    // At most 50 versions.
    await seed((f) => f.doc('feedbackRequests/r3').set({ ...open, versionCount: 50 }));
    await assertFails(addVersion('alice', 'r3', 51));
  });

  it('storage: avatars, videos, intro clips and comment media by their owner, with size and type limits', async () => {
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
    // Stills for lists: the owner's JPEGs up to 1 MB, read by signed-in users.
    await assertSucceeds(st('alice').ref('thumbnails/alice/1.jpg').put(png, { contentType: 'image/jpeg' }));
    await assertFails(st('bob').ref('thumbnails/alice/2.jpg').put(png, { contentType: 'image/jpeg' }));
    await assertFails(st('alice').ref('thumbnails/alice/3.png').put(png, { contentType: 'image/png' }));
    await assertFails(
      st('alice')
        .ref('thumbnails/alice/4.jpg')
        .put(new Uint8Array(1024 * 1024 + 1), { contentType: 'image/jpeg' }),
    );
    await assertFails(st(null).ref('thumbnails/alice/1.jpg').getMetadata());
    await assertSucceeds(st('bob').ref('thumbnails/alice/1.jpg').getMetadata());
    await assertSucceeds(st('alice').ref('intros/alice/hello.mp4').put(png, { contentType: 'video/mp4' }));
    await assertFails(st('bob').ref('intros/alice/hello.mp4').put(png, { contentType: 'video/mp4' }));
    await assertFails(st('alice').ref('intros/alice/hello.png').put(png, { contentType: 'image/png' }));
    await assertSucceeds(st(null).ref('intros/alice/hello.mp4').getMetadata());
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
