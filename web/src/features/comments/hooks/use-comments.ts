import { useMemo, useState } from 'react';
import type { Live } from '@/lib/firebase-live';
import type { Comment } from '@/types/request';
import { useThread, type ThreadPage } from '../api/comments-api';
import { COMMENT_PAGE_SIZE } from '../comment-rules';
import { commentsOfVersion } from '../versions';

/** A thread's pages as useComments gives them. */
export type CommentPages = Live<ThreadPage> & {
  /** Every comment read, of every version (data.comments holds the version asked for). */
  all: Comment[];
  loadMore: () => void;
};

/**
 * The first pages of a thread, live: top-level comments of a request when
 * parentCommentId is null, else one comment's replies; 20 per page, and
 * loadMore adds a page. With a version, data.comments are that version's
 * alone, and a page holds 20 of them: the thread is read further while the
 * comments of other versions fill what was read.
 */
export function useComments(
  requestId: string,
  parentCommentId: string | null,
  enabled = true,
  version?: number,
): CommentPages {
  const key = `${requestId}/${parentCommentId ?? ''}/${version ?? ''}`;
  const first = { key, wanted: COMMENT_PAGE_SIZE, read: COMMENT_PAGE_SIZE };
  const [pages, setPages] = useState(first);
  const current = pages.key === key ? pages : first;
  const live = useThread(requestId, parentCommentId, current.read, enabled);
  const all = live.data.comments;
  const kept = useMemo(() => (version === undefined ? all : commentsOfVersion(all, version)), [all, version]);
  // What was read is a full page (not a smaller one still shown) with more beyond, and too few are this
  // version's: read a page further (set during render, so React renders again before painting).
  if (live.data.hasMore && all.length >= current.read && kept.length < current.wanted) {
    setPages({ ...current, read: current.read + COMMENT_PAGE_SIZE });
  }
  return {
    ...live,
    // A page holds what was asked for, also when more was read (for another version, or before).
    data: {
      comments: kept.slice(0, current.wanted),
      hasMore: live.data.hasMore || kept.length > current.wanted,
    },
    all,
    loadMore: () =>
      setPages({ key, wanted: current.wanted + COMMENT_PAGE_SIZE, read: current.read + COMMENT_PAGE_SIZE }),
  };
}
