import {
  checkCommentMedia,
  commentLength,
  isLongComment,
  commentMediaPath,
  describeCommentError,
  formatCommentSpan,
  formatCommentTime,
  formatVideoTime,
  markIn,
  markOut,
  mediaKind,
} from './comment-rules';

describe('formatVideoTime', () => {
  it.each([
    [0, '0:00'],
    [3, '0:03'],
    [3.9, '0:03'],
    [65, '1:05'],
    [3723, '1:02:03'],
    [-4, '0:00'],
    [Number.NaN, '0:00'],
  ])('%s s reads %s', (seconds, text) => {
    expect(formatVideoTime(seconds)).toBe(text);
  });
});

describe('commentMediaPath', () => {
  it('follows comments/{requestId}/{userId}_{time}.{extension}', () => {
    expect(commentMediaPath('r1', 'u1', 1700000000000, 'Take 2.MOV')).toBe(
      'comments/r1/u1_1700000000000.mov',
    );
  });
  it('uses bin when the name has no extension', () => {
    expect(commentMediaPath('r1', 'u1', 5, 'notes')).toBe('comments/r1/u1_5.bin');
  });
});

describe('media checks', () => {
  it('names the kind of a file', () => {
    expect(mediaKind('image/png')).toBe('image');
    expect(mediaKind('video/mp4')).toBe('video');
    expect(mediaKind('audio/mpeg')).toBe('audio');
    expect(mediaKind('application/pdf')).toBe('file');
  });
  it('accepts what the storage rules accept', () => {
    expect(checkCommentMedia({ type: 'image/jpeg', size: 10 })).toBeNull();
    expect(checkCommentMedia({ type: 'application/pdf', size: 10 })).toBeNull();
    expect(checkCommentMedia({ type: 'text/html', size: 10 })).toMatch(/image, a video/);
    expect(checkCommentMedia({ type: 'video/mp4', size: 101 * 1024 * 1024 })).toBe(
      'Attachments can be up to 100 MB.',
    );
  });
});

describe('describeCommentError', () => {
  it.each([
    [new Error('Feedback request not found'), 'This feedback request no longer exists.'],
    [new Error('Comment not found'), 'That comment was already removed.'],
    [new Error('No user logged in'), 'Sign in again to take part in the conversation.'],
    [
      Object.assign(new Error('x'), { code: 'permission-denied' }),
      'Only the requester and the mentor can do that on this request.',
    ],
    [
      Object.assign(new Error('x'), { code: 'storage/unauthorized' }),
      'Only the requester and the mentor can do that on this request.',
    ],
    [new Error('boom'), 'Something went wrong. Please try again.'],
  ])('%s', (err, text) => {
    expect(describeCommentError(err)).toBe(text);
  });
});

describe('formatCommentTime', () => {
  it('reads General without a time', () => {
    expect(formatCommentTime(null)).toBe('General');
    expect(formatCommentTime(65)).toBe('1:05');
  });
});

describe('formatCommentSpan', () => {
  it.each([
    [1.25, 3, '0:01.25–0:03.00'],
    [1, 2.5, '0:01.00–0:02.50'],
    [4.5, null, '0:04.50'],
    [null, null, 'General'],
  ])('%s to %s reads %s', (from, to, text) => {
    expect(formatCommentSpan(from, to)).toBe(text);
  });
  it('counts frames in frames mode', () => {
    expect(formatCommentSpan(1.25, 3, { mode: 'frames', fps: 24 })).toBe('00:00:01:06–00:00:03:00');
  });
});

describe('range marks', () => {
  const none = { in: null, out: null };
  it('sets in, then out after it', () => {
    expect(markOut(markIn(none, 1), 3)).toEqual({ in: 1, out: 3 });
  });
  it('needs an in point before an out point', () => {
    expect(markOut(none, 3)).toEqual(none);
  });
  it('swaps an out point set before the in point', () => {
    expect(markOut({ in: 3, out: null }, 1)).toEqual({ in: 1, out: 3 });
  });
  it('drops an out point that a later in point passes', () => {
    expect(markIn({ in: 1, out: 3 }, 4)).toEqual({ in: 4, out: null });
    expect(markIn({ in: 1, out: 3 }, 2)).toEqual({ in: 2, out: 3 });
  });
});

describe('comment length', () => {
  it('counts as it nears 5,000 characters and says how far over it is', () => {
    expect(commentLength(3999)).toBeNull();
    expect(commentLength(4200)).toEqual({ text: '4,200 / 5,000', over: false });
    expect(commentLength(5000)).toEqual({ text: '5,000 / 5,000', over: false });
    expect(commentLength(5012)).toEqual({ text: '12 over the 5,000-character limit', over: true });
  });

  it('folds comments over 600 characters or 8 lines', () => {
    expect(isLongComment('a'.repeat(600))).toBe(false);
    expect(isLongComment('a'.repeat(601))).toBe(true);
    expect(isLongComment('a\n'.repeat(8))).toBe(true);
    expect(isLongComment('a\n'.repeat(7) + 'a')).toBe(false);
  });
});
