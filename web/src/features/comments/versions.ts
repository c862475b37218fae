import type { Comment } from '@/types/request';

/** The top-level comments about one version of the video (a comment without a version is v1's). */
export function commentsOfVersion(comments: Comment[], version: number): Comment[] {
  return comments.filter((c) => c.version === version);
}

/**
 * The comments of earlier versions that can be carried forward to `target`
 * (Frame.io's "carry over"): top-level, unresolved, not deleted, from a
 * version before it, and not carried already: once a comment has a copy in
 * a version up to `target`, the copy stands for it (and is the one to carry
 * further). In thread order.
 */
export function carryCandidates(comments: Comment[], target: number): Comment[] {
  const carried = new Set(
    comments.flatMap((c) => (c.carriedFrom !== null && c.version <= target ? [c.carriedFrom] : [])),
  );
  return comments.filter(
    (c) => !c.isReply && !c.deleted && !c.resolved && !c.pending && c.version < target && !carried.has(c.id),
  );
}
