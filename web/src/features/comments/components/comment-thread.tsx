import { CloudOff, FileText, MessageSquare, Trash2 } from 'lucide-react';
import { useEffect, useState, type ReactNode, type Ref } from 'react';
import { Avatar } from '@/components/ui/avatar';
import { useToast } from '@/components/ui/toast-context';
import { formatNotificationTime } from '@/lib/format-date';
import { optimisedImage } from '@/lib/image';
import type { Comment } from '@/types/request';
import { deleteComment } from '../api/comments-api';
import { DELETED_TEXT, describeCommentError, formatCommentTime } from '../comment-rules';
import { useComments } from '../hooks/use-comments';
import { CommentComposer } from './comment-composer';

function Media({ comment }: { comment: Comment }) {
  if (!comment.mediaUrl) return null;
  const frame = 'mt-2 max-h-64 w-full rounded-lg border border-zinc-800 bg-black object-contain';
  if (comment.mediaType === 'image') {
    // Shown at most 416 px wide (the thread's column).
    const img = optimisedImage(comment.mediaUrl, 416);
    return (
      <img
        src={img.src}
        srcSet={img.srcSet}
        alt={`Image attached by ${comment.userDisplayName}`}
        loading="lazy"
        className={frame}
      />
    );
  }
  if (comment.mediaType === 'video') return <video src={comment.mediaUrl} controls className={frame} />;
  if (comment.mediaType === 'audio') return <audio src={comment.mediaUrl} controls className="mt-2 w-full" />;
  return (
    <a
      href={comment.mediaUrl}
      target="_blank"
      rel="noreferrer"
      className="mt-2 inline-flex items-center gap-1.5 text-sm text-brand-300 hover:text-brand-200"
    >
      <FileText className="size-4" aria-hidden /> Open attachment
    </a>
  );
}

function CommentItem({
  comment,
  requestId,
  uid,
  onSeek,
  children,
}: {
  comment: Comment;
  requestId: string;
  uid: string;
  onSeek: (seconds: number) => void;
  children?: ReactNode;
}) {
  const toast = useToast();
  const [deleting, setDeleting] = useState(false);
  const at = formatCommentTime(comment.videoTimestamp);
  const time = comment.videoTimestamp;
  async function remove() {
    setDeleting(true);
    try {
      await deleteComment(requestId, comment.id);
    } catch (err) {
      toast({ title: 'The comment was not deleted', description: describeCommentError(err) });
    } finally {
      setDeleting(false);
    }
  }
  return (
    <article
      className="flex gap-3"
      aria-label={
        time === null
          ? `General comment by ${comment.userDisplayName}`
          : `Comment by ${comment.userDisplayName} at ${at}`
      }
    >
      <Avatar person={{ photoURL: comment.userProfilePicture, name: comment.userDisplayName }} />
      <div className="min-w-0 flex-1">
        <header className="flex items-start gap-2">
          <div className="flex min-w-0 flex-1 flex-wrap items-center gap-x-2 gap-y-1">
            <span className="text-sm font-medium text-white">{comment.userDisplayName}</span>
            <span className="text-xs text-zinc-400">{formatNotificationTime(comment.timestamp)}</span>
            {time === null ? (
              <span className="rounded-full bg-sky-400/10 px-2 py-0.5 text-xs font-medium text-sky-300">
                {at}
              </span>
            ) : (
              <button
                type="button"
                onClick={() => onSeek(time)}
                aria-label={`Seek to ${at}`}
                className="rounded-full bg-amber-400/10 px-2 py-0.5 font-mono text-xs font-medium text-amber-300 transition hover:bg-amber-400/20"
              >
                {at}
              </button>
            )}
            {comment.pending && (
              <span
                className="inline-flex items-center gap-1 text-xs text-amber-300"
                title="Saved on this device; it is sent when the connection is back."
              >
                <CloudOff className="size-3" aria-hidden /> Pending
              </span>
            )}
          </div>
          {!comment.deleted && comment.userId === uid && (
            <button
              type="button"
              disabled={deleting}
              onClick={() => void remove()}
              aria-label={`Delete your comment at ${at}`}
              title="Delete"
              className="shrink-0 rounded p-1 text-zinc-400 transition hover:bg-zinc-800 hover:text-red-300"
            >
              <Trash2 className="size-3.5" />
            </button>
          )}
        </header>
        {comment.deleted ? (
          <p className="mt-1 text-sm text-zinc-400 italic">{DELETED_TEXT}</p>
        ) : (
          <>
            {comment.content && (
              <p className="mt-1 text-sm whitespace-pre-wrap break-words text-zinc-200">{comment.content}</p>
            )}
            <Media comment={comment} />
          </>
        )}
        {children}
      </div>
    </article>
  );
}

function LoadMore({ onClick, label }: { onClick: () => void; label: string }) {
  return (
    <button
      type="button"
      onClick={onClick}
      className="w-full rounded-lg border border-zinc-800 py-2 text-sm text-zinc-300 transition hover:bg-zinc-800/60"
    >
      {label}
    </button>
  );
}

function Replies({
  parent,
  requestId,
  uid,
  onSeek,
}: {
  parent: Comment;
  requestId: string;
  uid: string;
  onSeek: (s: number) => void;
}) {
  const [open, setOpen] = useState(false);
  const [replying, setReplying] = useState(false);
  const replies = useComments(requestId, parent.id, open);
  const n = parent.repliesCount;
  return (
    <div className="mt-2 space-y-3">
      <div className="flex items-center gap-3 text-xs">
        {!parent.deleted && (
          <button
            type="button"
            onClick={() => {
              setReplying((r) => !r);
              setOpen(true);
            }}
            aria-label={`Reply to ${parent.userDisplayName}`}
            className="inline-flex items-center gap-1 text-zinc-400 hover:text-white"
          >
            <MessageSquare className="size-3" aria-hidden /> Reply
          </button>
        )}
        {n > 0 && (
          <button
            type="button"
            onClick={() => setOpen((o) => !o)}
            aria-label={
              open
                ? `Hide replies to ${parent.userDisplayName}`
                : `${n} ${n === 1 ? 'reply' : 'replies'} to ${parent.userDisplayName}`
            }
            className="font-medium text-brand-300 hover:text-brand-200"
          >
            {open ? 'Hide replies' : `${n} ${n === 1 ? 'reply' : 'replies'}`}
          </button>
        )}
      </div>
      {open && (
        <div className="space-y-3 border-l border-zinc-800 pl-3">
          {replies.data.comments.map((r) => (
            <CommentItem key={r.id} comment={r} requestId={requestId} uid={uid} onSeek={onSeek} />
          ))}
          {replies.data.hasMore && <LoadMore onClick={replies.loadMore} label="Load more replies" />}
          {replying && (
            <CommentComposer
              requestId={requestId}
              place={{ videoTimestamp: parent.videoTimestamp, parentCommentId: parent.id }}
              placeholder="Write a reply…"
              submitLabel="Reply"
              autoFocus
              onDone={() => setReplying(false)}
            />
          )}
        </div>
      )}
    </div>
  );
}

/**
 * The live conversation of a request: top-level comments by timecode
 * (general ones first), 20 at a time with "Load more", each with its
 * replies; a composer pinned to the video's current time, or general.
 * onComments reports the loaded top-level comments (for the player's
 * markers); composerRef reaches the composer's text field (the C key).
 */
export function CommentThread({
  requestId,
  uid,
  currentTime,
  onSeek,
  onComments,
  composerRef,
}: {
  requestId: string;
  uid: string;
  currentTime: number;
  onSeek: (seconds: number) => void;
  onComments?: (comments: Comment[]) => void;
  composerRef?: Ref<HTMLTextAreaElement>;
}) {
  const thread = useComments(requestId, null);
  useEffect(() => onComments?.(thread.data.comments), [thread.data.comments, onComments]);
  return (
    <section aria-label="Comments" className="flex flex-col gap-4">
      <CommentComposer
        requestId={requestId}
        place={{ videoTimestamp: currentTime }}
        placeholder="Add a comment…"
        submitLabel="Comment"
        allowGeneral
        textareaRef={composerRef}
      />
      {thread.error ? (
        <p className="rounded-xl border border-zinc-800 p-4 text-sm text-zinc-400">
          {describeCommentError(thread.error)}
        </p>
      ) : thread.loading && thread.data.comments.length === 0 ? (
        <p className="text-sm text-zinc-400">Loading comments…</p>
      ) : thread.data.comments.length === 0 ? (
        <p className="rounded-xl border border-dashed border-zinc-800 p-6 text-center text-sm text-zinc-400">
          No comments yet. Pause the video where it matters and say something.
        </p>
      ) : (
        <div className="space-y-5">
          {thread.data.comments.map((c) => (
            <CommentItem key={c.id} comment={c} requestId={requestId} uid={uid} onSeek={onSeek}>
              <Replies parent={c} requestId={requestId} uid={uid} onSeek={onSeek} />
            </CommentItem>
          ))}
          {thread.data.hasMore && <LoadMore onClick={thread.loadMore} label="Load more comments" />}
        </div>
      )}
    </section>
  );
}
