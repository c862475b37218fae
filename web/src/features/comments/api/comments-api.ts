import {
  addDoc,
  collection,
  doc,
  getDoc,
  getDocs,
  limit,
  orderBy,
  query,
  serverTimestamp,
  setDoc,
  startAfter,
  updateDoc,
  where,
  type DocumentData,
  type QueryConstraint,
  type QueryDocumentSnapshot,
} from 'firebase/firestore';
import { deleteObject, getDownloadURL, ref, uploadBytes } from 'firebase/storage';
import { firebase, timestampToDate } from '@/lib/firebase';
import { useLiveQuery, type Live } from '@/lib/firebase-live';
import { portableUrl } from '@/lib/image';
import type { Comment, DrawnShape } from '@/types/request';
import { COMMENT_ERRORS, COMMENT_PAGE_SIZE, DELETED_TEXT, commentMediaPath } from '../comment-rules';

/** Where a new comment sits: its video position (null for a general comment) and, for a reply, its parent. */
export interface CommentPlacement {
  videoTimestamp: number | null;
  /** A range comment's out point, after videoTimestamp. */
  videoEndTimestamp?: number | null;
  /** Shapes drawn on the frame, stored as {shapes} with the comment. */
  drawing?: DrawnShape[];
  parentCommentId?: string;
  /** The version of the video it is about; 1 when not given. */
  version?: number;
}

/** One page of comments and the cursor of the next page (null when none is left). */
export interface CommentPage {
  comments: Comment[];
  next: QueryDocumentSnapshot | null;
}

const SHAPES = new Set<DrawnShape['kind']>(['pen', 'arrow', 'rect', 'ellipse']);

/** The shapes of a stored drawing ({shapes: [{kind, color, points}]}), leaving out any it cannot draw. */
function readDrawing(value: unknown): DrawnShape[] {
  const shapes = (value as { shapes?: unknown } | null)?.shapes;
  if (!Array.isArray(shapes)) return [];
  return shapes.flatMap((s: Partial<DrawnShape>) =>
    s && SHAPES.has(s.kind as DrawnShape['kind']) && Array.isArray(s.points) && s.points.length >= 4
      ? [
          {
            kind: s.kind as DrawnShape['kind'],
            color: String(s.color ?? '#facc15'),
            points: s.points.map(Number),
          },
        ]
      : [],
  );
}

function fromDoc(id: string, d: DocumentData, pending = false): Comment {
  return {
    id,
    userId: d.userId ?? '',
    userDisplayName: d.userDisplayName ?? '',
    userProfilePicture: d.userProfilePicture ?? null,
    content: d.content ?? '',
    mediaUrl: d.mediaUrl ?? '',
    mediaType: d.mediaType ?? 'text',
    timestamp: timestampToDate(d.timestamp),
    videoTimestamp: typeof d.videoTimestamp === 'number' ? d.videoTimestamp : null,
    videoEndTimestamp: typeof d.videoEndTimestamp === 'number' ? d.videoEndTimestamp : null,
    drawing: readDrawing(d.drawing),
    resolved: d.resolved === true,
    editedAt: timestampToDate(d.editedAt),
    version: Number.isInteger(d.version) && d.version > 1 ? d.version : 1,
    carriedFrom: typeof d.carriedFrom === 'string' && d.carriedFrom ? d.carriedFrom : null,
    isReply: d.isReply === true,
    parentCommentId: d.parentCommentId || undefined,
    repliesCount: typeof d.repliesCount === 'number' ? Math.max(0, d.repliesCount) : 0,
    deleted: d.deleted === true,
    ...(pending ? { pending } : {}),
  };
}

const commentsOf = (requestId: string) =>
  collection(firebase().db, 'feedbackRequests', requestId, 'comments');

/** Logs a failed call and rethrows it (docs/product-spec.md §8). */
async function logged<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    console.error(`Error ${what}:`, err);
    throw err;
  }
}

function signedInUser() {
  const user = firebase().auth.currentUser;
  if (!user) throw new Error(COMMENT_ERRORS.signedOut);
  return user;
}

/**
 * Whether a document exists for the signed-in person. The rules deny reading
 * a request that is missing (or not theirs), so a denial counts as missing,
 * as a private page answers "not found".
 */
async function visible(path: string, ...segments: string[]): Promise<boolean> {
  try {
    return (await getDoc(doc(firebase().db, path, ...segments))).exists();
  } catch (err) {
    if ((err as { code?: string }).code === 'permission-denied') return false;
    throw err;
  }
}

/** Fails with 'Feedback request not found' (and, for a reply, 'Comment not found'). */
async function checkPlace(requestId: string, parentCommentId?: string): Promise<void> {
  if (!(await visible('feedbackRequests', requestId))) throw new Error(COMMENT_ERRORS.requestNotFound);
  if (parentCommentId && !(await visible('feedbackRequests', requestId, 'comments', parentCommentId))) {
    throw new Error(COMMENT_ERRORS.commentNotFound);
  }
}

async function store(
  requestId: string,
  fields: { content: string; mediaUrl: string; mediaType: string },
  place: CommentPlacement,
): Promise<string> {
  const user = signedInUser();
  const added = await addDoc(commentsOf(requestId), {
    userId: user.uid,
    userDisplayName: user.displayName || user.email || 'Someone',
    userProfilePicture: user.photoURL ? portableUrl(user.photoURL) : null,
    ...fields,
    timestamp: serverTimestamp(),
    videoTimestamp: place.videoTimestamp,
    ...(place.videoTimestamp !== null && place.videoEndTimestamp != null
      ? { videoEndTimestamp: place.videoEndTimestamp }
      : {}),
    ...(place.drawing?.length ? { drawing: { shapes: place.drawing } } : {}),
    isReply: Boolean(place.parentCommentId),
    ...(place.parentCommentId ? { parentCommentId: place.parentCommentId } : {}),
    version: place.version ?? 1,
    repliesCount: 0,
    deleted: false,
  });
  return added.id;
}

/**
 * Carries an earlier version's comment forward to version `target`: a copy
 * with its author, words, attachment, moment and drawing, naming the
 * original in carriedFrom (the rules check that it matches), stored as
 * {original}-v{target} so it is carried there once. Replies stay with the
 * original. Resolves to the copy's id.
 */
export function carryForward(requestId: string, comment: Comment, target: number): Promise<string> {
  return logged('carrying a comment forward', async () => {
    signedInUser();
    const copy = doc(commentsOf(requestId), `${comment.id}-v${target}`);
    await setDoc(copy, {
      userId: comment.userId,
      userDisplayName: comment.userDisplayName,
      userProfilePicture: comment.userProfilePicture,
      content: comment.content,
      mediaUrl: comment.mediaUrl,
      mediaType: comment.mediaType,
      timestamp: serverTimestamp(),
      videoTimestamp: comment.videoTimestamp,
      ...(comment.videoTimestamp !== null && comment.videoEndTimestamp !== null
        ? { videoEndTimestamp: comment.videoEndTimestamp }
        : {}),
      ...(comment.drawing.length ? { drawing: { shapes: comment.drawing } } : {}),
      isReply: false,
      version: target,
      carriedFrom: comment.id,
      repliesCount: 0,
      deleted: false,
    });
    return copy.id;
  });
}

/** Adds a text comment (docs/product-spec.md §7) and returns its id. */
export function addComment(requestId: string, content: string, place: CommentPlacement): Promise<string> {
  return logged('adding comment', async () => {
    signedInUser();
    await checkPlace(requestId, place.parentCommentId);
    return store(requestId, { content, mediaUrl: '', mediaType: 'text' }, place);
  });
}

/**
 * Adds a media comment (docs/product-spec.md §7): the file is uploaded first to
 * comments/{requestId}/{userId}_{time}.{extension}, then the comment stores
 * its download address. mediaType is the caller's kind ('image', 'video', …).
 */
export function addMediaComment(
  requestId: string,
  file: File | Blob,
  mediaType: string,
  content: string,
  place: CommentPlacement,
): Promise<string> {
  return logged('adding media comment', async () => {
    const user = signedInUser();
    await checkPlace(requestId, place.parentCommentId);
    const name = file instanceof File ? file.name : `media.${file.type.split('/')[1] ?? 'bin'}`;
    const target = ref(firebase().storage, commentMediaPath(requestId, user.uid, Date.now(), name));
    await uploadBytes(target, file, { contentType: file.type });
    return store(requestId, { content, mediaUrl: await getDownloadURL(target), mediaType }, place);
  });
}

async function page(
  requestId: string,
  constraints: QueryConstraint[],
  pageSize: number,
  after?: QueryDocumentSnapshot | null,
) {
  const snap = await getDocs(
    query(
      commentsOf(requestId),
      ...constraints,
      where('deleted', '==', false),
      orderBy('timestamp', 'asc'),
      ...(after ? [startAfter(after)] : []),
      limit(pageSize + 1),
    ),
  );
  const docs = snap.docs.slice(0, pageSize);
  return {
    comments: docs.map((d) => fromDoc(d.id, d.data())),
    next: snap.docs.length > pageSize ? (docs[docs.length - 1] ?? null) : null,
  };
}

/** Lists top-level comments that are not deleted, oldest first, a page at a time (docs/product-spec.md §7). */
export function getComments(
  requestId: string,
  pageSize = COMMENT_PAGE_SIZE,
  after?: QueryDocumentSnapshot | null,
): Promise<CommentPage> {
  return logged('getting comments', () => page(requestId, [where('isReply', '==', false)], pageSize, after));
}

/** Lists the replies of a comment that are not deleted, oldest first, a page at a time (docs/product-spec.md §7). */
export function getReplies(
  requestId: string,
  parentCommentId: string,
  pageSize = COMMENT_PAGE_SIZE,
  after?: QueryDocumentSnapshot | null,
): Promise<CommentPage> {
  return logged('getting replies', () =>
    page(requestId, [where('parentCommentId', '==', parentCommentId)], pageSize, after),
  );
}

/** The storage path inside a download URL (…/o/{path}?alt=media…), or null. */
function storagePathOf(url: string): string | null {
  const match = /\/o\/([^?]+)/.exec(url);
  return match?.[1] ? decodeURIComponent(match[1]) : null;
}

/**
 * Soft-deletes a comment (docs/product-spec.md §4): its text becomes '[Deleted]' and its
 * media address is cleared (the file is removed too, best effort). The
 * parent's repliesCount is the server's to lower. Fails with 'Comment not found'.
 */
export function deleteComment(requestId: string, commentId: string): Promise<void> {
  return logged('deleting comment', async () => {
    signedInUser();
    if (!(await visible('feedbackRequests', requestId))) throw new Error(COMMENT_ERRORS.requestNotFound);
    const target = doc(commentsOf(requestId), commentId);
    const snap = await getDoc(target);
    if (!snap.exists()) throw new Error(COMMENT_ERRORS.commentNotFound);
    const mediaUrl = String(snap.get('mediaUrl') ?? '');
    await updateDoc(target, { deleted: true, content: DELETED_TEXT, mediaUrl: '' });
    const path = mediaUrl && storagePathOf(mediaUrl);
    if (path) {
      await deleteObject(ref(firebase().storage, path)).catch((err: unknown) =>
        console.error('Error deleting comment media:', err),
      );
    }
  });
}

/**
 * Changes the text of the signed-in author's comment (firestore.rules: the
 * author only, at most 5000 characters); editedAt records when.
 */
export function editComment(requestId: string, commentId: string, content: string): Promise<void> {
  return logged('editing comment', async () => {
    signedInUser();
    await updateDoc(doc(commentsOf(requestId), commentId), {
      content: content.trim(),
      editedAt: serverTimestamp(),
    });
  });
}

/** Resolves a comment, or reopens it (either party, as themself, now). */
export function resolveComment(requestId: string, commentId: string, resolved: boolean): Promise<void> {
  return logged(resolved ? 'resolving comment' : 'reopening comment', async () => {
    const user = signedInUser();
    await updateDoc(doc(commentsOf(requestId), commentId), {
      resolved,
      resolvedBy: user.uid,
      resolvedAt: serverTimestamp(),
    });
  });
}

/** A live page of a thread: its comments and whether more exist. */
export interface ThreadPage {
  comments: Comment[];
  hasMore: boolean;
}

/**
 * The first `count` comments of a thread, live: top-level comments when
 * parentCommentId is null, ordered by timecode (general comments, whose
 * videoTimestamp is null, first; then oldest first at each moment), else
 * that comment's replies, oldest first. Deleted comments stay in the live
 * thread (reading '[Deleted]') so replies keep their place. A comment written
 * but not yet stored (offline) comes with pending true. Nothing is read
 * while enabled is false; a larger count keeps the smaller page shown until
 * it arrives.
 */
export function useThread(
  requestId: string,
  parentCommentId: string | null,
  count: number,
  enabled = true,
): Live<ThreadPage> {
  const thread = `comments/${requestId}/${parentCommentId ?? ''}`;
  return useLiveQuery(
    enabled ? `${thread}/${count}` : null,
    () =>
      query(
        commentsOf(requestId),
        ...(parentCommentId
          ? [where('parentCommentId', '==', parentCommentId), orderBy('timestamp', 'asc')]
          : [where('isReply', '==', false), orderBy('videoTimestamp', 'asc'), orderBy('timestamp', 'asc')]),
        limit(count + 1),
      ),
    {
      read: (snap) => ({
        comments: snap.docs
          .slice(0, count)
          .map((d) => fromDoc(d.id, d.data({ serverTimestamps: 'estimate' }), d.metadata.hasPendingWrites)),
        hasMore: snap.docs.length > count,
      }),
      initial: { comments: [], hasMore: false },
      log: 'Error reading comments:',
      includeMetadataChanges: true,
      group: thread,
    },
  );
}
