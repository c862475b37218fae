import { useEffect, useState } from 'react';
import type { Comment } from '@/types/request';
import { subscribeComments } from '../api/comments-api';
import { COMMENT_PAGE_SIZE } from '../comment-rules';

/** A live page of a thread that grows by a page at a time. */
export interface LiveComments {
  comments: Comment[];
  loading: boolean;
  error: Error | null;
  hasMore: boolean;
  loadMore: () => void;
}

/**
 * The first pages of a thread, live: top-level comments of a request when
 * parentCommentId is null, else one comment's replies. Oldest first, 20 per page.
 */
export function useComments(requestId: string, parentCommentId: string | null, enabled = true): LiveComments {
  const key = `${requestId}/${parentCommentId ?? ''}`;
  const [count, setCount] = useState({ key, count: COMMENT_PAGE_SIZE });
  const shown = count.key === key ? count.count : COMMENT_PAGE_SIZE;
  const [state, setState] = useState<Omit<LiveComments, 'loadMore'> & { key: string }>({
    key,
    comments: [],
    loading: true,
    error: null,
    hasMore: false,
  });
  useEffect(() => {
    if (!enabled) return;
    return subscribeComments(
      requestId,
      parentCommentId,
      shown,
      (comments, hasMore) => setState({ key, comments, hasMore, loading: false, error: null }),
      (error) => setState({ key, comments: [], hasMore: false, loading: false, error }),
    );
  }, [requestId, parentCommentId, shown, enabled, key]);
  const current = state.key === key ? state : { comments: [], loading: true, error: null, hasMore: false };
  return { ...current, loadMore: () => setCount({ key, count: shown + COMMENT_PAGE_SIZE }) };
}
