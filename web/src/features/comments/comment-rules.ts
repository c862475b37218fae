import { formatTimecode, formatVideoTime, type Timecode } from '@/lib/video-time';

export { formatVideoTime };

/** Comments per page, for top-level comments and for each comment's replies (docs/product-spec.md §7). */
export const COMMENT_PAGE_SIZE = 20;

/** The longest comment, in characters (firestore.rules). */
export const COMMENT_LIMIT = 5000;

/** From how many characters the composer shows the count against the limit. */
export const COMMENT_COUNT_FROM = 4000;

/**
 * What the composer says about a comment's length: nothing while it is
 * short, "4,200 / 5,000" as it nears the limit, and how far over it is
 * (over: true, and it cannot be sent) past it.
 */
export function commentLength(length: number): { text: string; over: boolean } | null {
  const n = (v: number) => v.toLocaleString('en-US');
  if (length > COMMENT_LIMIT)
    return {
      text: `${n(length - COMMENT_LIMIT)} over the ${n(COMMENT_LIMIT)}-character limit`,
      over: true,
    };
  if (length >= COMMENT_COUNT_FROM) return { text: `${n(length)} / ${n(COMMENT_LIMIT)}`, over: false };
  return null;
}

/** Whether a comment is long enough to show folded, with "Show more": over 600 characters or 8 lines. */
export function isLongComment(content: string): boolean {
  return content.length > 600 || content.split('\n').length > 8;
}

/** What a deleted comment reads (docs/product-spec.md §4). */
export const DELETED_TEXT = '[Deleted]';

/** The errors of the comment API (docs/product-spec.md §5), thrown as Error messages. */
export const COMMENT_ERRORS = {
  requestNotFound: 'Feedback request not found',
  commentNotFound: 'Comment not found',
  signedOut: 'No user logged in',
} as const;

/** What a general comment (one about the whole video, without a time) shows instead of a time. */
export const GENERAL_LABEL = 'General';

/** Clock timecodes, what the thread shows until the person picks frames. */
export const CLOCK_TIMECODE: Timecode = { mode: 'clock', fps: 24 };

/**
 * A comment's moment as the thread shows it, to the frame (0:01.25, or
 * 00:00:01:06 in frames), or 'General' without one.
 */
export function formatCommentTime(seconds: number | null, timecode: Timecode = CLOCK_TIMECODE): string {
  return seconds === null ? GENERAL_LABEL : formatTimecode(seconds, timecode);
}

/**
 * A comment's moment or range as the thread shows it: a range reads
 * 0:01.25–0:03.00 (both ends to the hundredth, or in frames), a moment as
 * formatCommentTime.
 */
export function formatCommentSpan(
  seconds: number | null,
  end: number | null,
  timecode: Timecode = CLOCK_TIMECODE,
): string {
  if (seconds === null || end === null) return formatCommentTime(seconds, timecode);
  if (timecode.mode === 'frames')
    return `${formatTimecode(seconds, timecode)}–${formatTimecode(end, timecode)}`;
  const exact = (t: number) => {
    const text = formatTimecode(t, timecode);
    return text.includes('.') ? text : `${text}.00`;
  };
  return `${exact(seconds)}–${exact(end)}`;
}

/**
 * The in and out points a range comment is about to take, ordered: setting
 * one before the other swaps them; an out point needs an in point first.
 */
export interface RangeMarks {
  in: number | null;
  out: number | null;
}

/** Marks after setting the in point at `t` (an out point not after it is dropped). */
export function markIn(marks: RangeMarks, t: number): RangeMarks {
  return { in: t, out: marks.out !== null && marks.out > t ? marks.out : null };
}

/** Marks after setting the out point at `t` (nothing without an in point; one after t becomes the out point). */
export function markOut(marks: RangeMarks, t: number): RangeMarks {
  if (marks.in === null) return marks;
  if (t > marks.in) return { in: marks.in, out: t };
  if (t < marks.in) return { in: t, out: marks.in };
  return marks;
}

/** Storage path of a comment's media (docs/product-spec.md §7): comments/{requestId}/{userId}_{time}.{extension}. */
export function commentMediaPath(requestId: string, userId: string, time: number, fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  const ext = dot > 0 && dot < fileName.length - 1 ? fileName.slice(dot + 1).toLowerCase() : 'bin';
  return `comments/${requestId}/${userId}_${time}.${ext}`;
}

/** The media kind stored with a media comment, from the file's type. */
export function mediaKind(type: string): 'image' | 'video' | 'audio' | 'file' {
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  return 'file';
}

/** Comment media the storage rules accept: images, video, audio or PDF up to 100 MB. */
export function checkCommentMedia(file: { type: string; size: number }): string | null {
  if (!/^(image|video|audio)\/.+|^application\/pdf$/.test(file.type)) {
    return 'Attach an image, a video, an audio clip or a PDF.';
  }
  if (file.size > 100 * 1024 * 1024) return 'Attachments can be up to 100 MB.';
  return null;
}

/** Plain words for a failed comment action, shown to the person. */
export function describeCommentError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string } | null)?.code ?? '';
  if (message === COMMENT_ERRORS.requestNotFound) return 'This feedback request no longer exists.';
  if (message === COMMENT_ERRORS.commentNotFound) return 'That comment was already removed.';
  if (message === COMMENT_ERRORS.signedOut) return 'Sign in again to take part in the conversation.';
  if (code.endsWith('permission-denied') || code.endsWith('unauthorized')) {
    return 'Only the requester and the mentor can do that on this request.';
  }
  if (code.endsWith('unavailable')) return 'You seem to be offline. Try again when you are back.';
  return 'Something went wrong. Please try again.';
}
