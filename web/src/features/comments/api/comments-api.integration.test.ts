import {
  createUserWithEmailAndPassword,
  signInWithEmailAndPassword,
  signOut,
  updateProfile,
} from 'firebase/auth';
import { doc, getDoc } from 'firebase/firestore';
import { inject, vi } from 'vitest';
import { firebase, initFirebase } from '@/lib/firebase';
import { addComment, addMediaComment, deleteComment, getComments, getReplies } from './comments-api';

declare module 'vitest' {
  export interface ProvidedContext {
    loupeUrl: string;
  }
}

// The comment API (docs/product-spec.md §7) through the Firebase JS SDK in Node against a
// real `loupe serve` enforcing the repository's rules.
const url = inject('loupeUrl');
const { auth, db } = initFirebase(
  {
    apiKey: 'demo-api-key',
    authDomain: 'demo-loupe.firebaseapp.com',
    projectId: 'demo-loupe',
    storageBucket: 'demo-loupe.appspot.com',
    messagingSenderId: '0',
    appId: '1:0:web:0',
    vapidKey: '',
    useEmulators: true,
  },
  new URL(url),
);

const password = 'secret1';
let requesterId = '';
let mentorId = '';
const requestId = 'thread-1';

async function as(email: string) {
  await signInWithEmailAndPassword(auth, email, password);
}

beforeAll(async () => {
  const mentor = await createUserWithEmailAndPassword(auth, 'mentor@api.test', password);
  mentorId = mentor.user.uid;
  const requester = await createUserWithEmailAndPassword(auth, 'requester@api.test', password);
  await updateProfile(requester.user, { displayName: 'Rae Requester' });
  requesterId = requester.user.uid;
  // A paid request is written by the payments function, so the test seeds it as the owner.
  const fields = {
    requesterId: { stringValue: requesterId },
    requesterName: { stringValue: 'Rae Requester' },
    mentorId: { stringValue: mentorId },
    mentorName: { stringValue: 'Mo Mentor' },
    title: { stringValue: 'My solo' },
    status: { stringValue: 'pending' },
    paymentStatus: { stringValue: 'paid' },
    createdAt: { timestampValue: new Date().toISOString() },
  };
  const seeded = await fetch(
    `${url}/v1/projects/demo-loupe/databases/(default)/documents/feedbackRequests?documentId=${requestId}`,
    {
      method: 'POST',
      headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
      body: JSON.stringify({ fields }),
    },
  );
  expect(seeded.status).toBe(200);
});

afterEach(() => vi.restoreAllMocks());

describe('the comment API', () => {
  it("fails with 'No user logged in' when signed out, and logs the error", async () => {
    await signOut(auth);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(addComment(requestId, 'hi', { videoTimestamp: 1 })).rejects.toThrow('No user logged in');
    await expect(deleteComment(requestId, 'any')).rejects.toThrow('No user logged in');
    expect(logged).toHaveBeenCalledWith('Error adding comment:', expect.any(Error));
    expect(logged).toHaveBeenCalledWith('Error deleting comment:', expect.any(Error));
  });

  it("fails with 'Feedback request not found' for a request that does not exist", async () => {
    await as('requester@api.test');
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(addComment('no-such-request', 'hi', { videoTimestamp: 1 })).rejects.toThrow(
      'Feedback request not found',
    );
    await expect(
      addMediaComment('no-such-request', new Blob(['x'], { type: 'image/png' }), 'image', '', {
        videoTimestamp: 1,
      }),
    ).rejects.toThrow('Feedback request not found');
  });

  it('adds a text comment with the spec’s fields, and replies to it', async () => {
    await as('requester@api.test');
    const id = await addComment(requestId, 'Is the pickup rushed?', { videoTimestamp: 3.5 });
    const stored = (await getDoc(doc(db, 'feedbackRequests', requestId, 'comments', id))).data();
    expect(stored).toMatchObject({
      userId: requesterId,
      userDisplayName: 'Rae Requester',
      userProfilePicture: null,
      content: 'Is the pickup rushed?',
      mediaUrl: '',
      mediaType: 'text',
      videoTimestamp: 3.5,
      isReply: false,
      repliesCount: 0,
      deleted: false,
    });
    expect(stored?.timestamp?.toDate()).toBeInstanceOf(Date);

    await as('mentor@api.test');
    const reply = await addComment(requestId, 'A little, yes.', { videoTimestamp: 3.5, parentCommentId: id });
    const replies = await getReplies(requestId, id);
    expect(replies.comments.map((c) => [c.id, c.isReply, c.parentCommentId])).toEqual([[reply, true, id]]);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(
      addComment(requestId, 'orphan', { videoTimestamp: 1, parentCommentId: 'no-such-comment' }),
    ).rejects.toThrow('Comment not found');
  });

  it('uploads a media comment first, stores its address, and deleting clears both', async () => {
    await as('requester@api.test');
    const png = new Blob([new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])], { type: 'image/png' });
    const id = await addMediaComment(requestId, png, 'image', 'Look at my hand here', { videoTimestamp: 5 });
    const stored = (await getDoc(doc(db, 'feedbackRequests', requestId, 'comments', id))).data();
    expect(stored?.mediaType).toBe('image');
    expect(decodeURIComponent(stored?.mediaUrl)).toMatch(
      new RegExp(`/o/comments/${requestId}/${requesterId}_\\d+\\.png\\?alt=media&token=`),
    );
    const token = await firebase().auth.currentUser?.getIdToken();
    const download = await fetch(stored?.mediaUrl, { headers: { Authorization: `Firebase ${token}` } });
    expect(download.status).toBe(200);

    await deleteComment(requestId, id);
    const deleted = (await getDoc(doc(db, 'feedbackRequests', requestId, 'comments', id))).data();
    expect(deleted).toMatchObject({ deleted: true, content: '[Deleted]', mediaUrl: '' });
    expect((await fetch(stored?.mediaUrl, { headers: { Authorization: `Firebase ${token}` } })).status).toBe(
      404,
    );
  });

  it("fails with 'Comment not found' when deleting a comment that does not exist", async () => {
    await as('requester@api.test');
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await expect(deleteComment(requestId, 'no-such-comment')).rejects.toThrow('Comment not found');
    expect(logged).toHaveBeenCalledWith('Error deleting comment:', expect.any(Error));
  });

  it('lists top-level comments that are not deleted, oldest first, 20 a page', async () => {
    await as('mentor@api.test');
    for (let i = 1; i <= 21; i++) await addComment(requestId, `note ${i}`, { videoTimestamp: i });
    const first = await getComments(requestId);
    expect(first.comments).toHaveLength(20);
    expect(first.comments.every((c) => !c.isReply && !c.deleted)).toBe(true);
    expect(first.comments[0]?.content).toBe('Is the pickup rushed?');
    expect(first.next).not.toBeNull();
    const second = await getComments(requestId, 20, first.next);
    expect(second.comments.map((c) => c.content)).toEqual(['note 20', 'note 21']);
    expect(second.next).toBeNull();
  });
});
