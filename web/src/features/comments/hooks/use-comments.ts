import { useState } from 'react';
import type { Live } from '@/lib/firebase-live';
import { useThread, type ThreadPage } from '../api/comments-api';
import { COMMENT_PAGE_SIZE } from '../comment-rules';

/**
 * The first pages of a thread, live: top-level comments of a request when
 * parentCommentId is null, else one comment's replies; 20 per page, and
 * loadMore adds a page.
 */
export function useComments(
  requestId: string,
  parentCommentId: string | null,
  enabled = true,
): Live<ThreadPage> & { loadMore: () => void } {
  const key = `${requestId}/${parentCommentId ?? ''}`;
  const [pages, setPages] = useState({ key, count: COMMENT_PAGE_SIZE });
  const count = pages.key === key ? pages.count : COMMENT_PAGE_SIZE;
  const live = useThread(requestId, parentCommentId, count, enabled);
  return { ...live, loadMore: () => setPages({ key, count: count + COMMENT_PAGE_SIZE }) };
}
