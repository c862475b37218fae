import {
  Check,
  CloudOff,
  CornerDownRight,
  FileText,
  MessageSquare,
  Pencil,
  PenLine,
  RotateCcw,
  Trash2,
} from 'lucide-react';
import { useEffect, useId, useState, type ReactNode, type Ref } from 'react';
import { Avatar } from '@/components/ui/avatar';
import { Button, IconButton } from '@/components/ui/button';
import { ConfirmDialog } from '@/components/ui/dialog';
import { Textarea } from '@/components/ui/input';
import { useToast } from '@/components/ui/toast-context';
import { cn } from '@/lib/cn';
import { formatNotificationTime } from '@/lib/format-date';
import { optimisedImage } from '@/lib/image';
import type { Comment, DrawnShape } from '@/types/request';
import { carryForward, deleteComment, editComment, resolveComment } from '../api/comments-api';
import {
  commentLength,
  DELETED_TEXT,
  describeCommentError,
  formatCommentSpan,
  isLongComment,
  type RangeMarks,
} from '../comment-rules';
import { useComments } from '../hooks/use-comments';
import { useTimecode } from '../timecode-context';
import { carryCandidates } from '../versions';
import { CommentComposer, LengthNote } from './comment-composer';
import { TimecodeSetting } from './timecode';

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

/** The author's inline editor of a comment's text: Save (or Ctrl/⌘+Enter) and Cancel (or Escape). */
function EditForm({
  comment,
  requestId,
  onDone,
}: {
  comment: Comment;
  requestId: string;
  onDone: () => void;
}) {
  const toast = useToast();
  const [text, setText] = useState(comment.content);
  const [saving, setSaving] = useState(false);
  const countId = useId();
  const length = commentLength(text.trim().length);
  async function save() {
    if (length?.over) return;
    if (!text.trim() || text.trim() === comment.content) {
      onDone();
      return;
    }
    setSaving(true);
    try {
      await editComment(requestId, comment.id, text);
      onDone();
    } catch (err) {
      toast({ tone: 'error', title: 'The comment was not changed', description: describeCommentError(err) });
      setSaving(false);
    }
  }
  return (
    <form
      className="mt-1 space-y-2"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Textarea
        aria-label="Edit your comment"
        autoFocus
        aria-invalid={length?.over || undefined}
        aria-describedby={length ? countId : undefined}
        value={text}
        className="min-h-16"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') onDone();
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) void save();
        }}
      />
      {length && <LengthNote id={countId} length={length} />}
      <div className="flex gap-2">
        <Button type="submit" size="sm" variant="primary" disabled={saving || !text.trim() || length?.over}>
          Save
        </Button>
        <Button size="sm" variant="ghost" onClick={onDone}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

/** A comment's words; a long one shows folded to 8 lines with "Show more". */
function CommentText({ content }: { content: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const long = isLongComment(content);
  return (
    <>
      <p
        id={id}
        className={cn('mt-1 text-sm whitespace-pre-wrap text-zinc-200', long && !open && 'line-clamp-8')}
      >
        {content}
      </p>
      {long && (
        <button
          type="button"
          aria-expanded={open}
          aria-controls={id}
          onClick={() => setOpen((o) => !o)}
          className="mt-1 text-xs font-medium text-brand-300 hover:text-brand-200"
        >
          {open ? 'Show less' : 'Show more'}
        </button>
      )}
    </>
  );
}

function CommentItem({
  comment,
  requestId,
  uid,
  onSeek,
  onPlay = onSeek,
  children,
}: {
  comment: Comment;
  requestId: string;
  uid: string;
  onSeek: (seconds: number) => void;
  /** Plays a range comment from its in point to its out point. */
  onPlay?: (from: number, until: number) => void;
  children?: ReactNode;
}) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const timecode = useTimecode();
  const at = formatCommentSpan(comment.videoTimestamp, comment.videoEndTimestamp, timecode);
  const time = comment.videoTimestamp;
  const end = comment.videoEndTimestamp;
  const mine = !comment.deleted && comment.userId === uid;
  async function act(run: () => Promise<void>, failed: string) {
    setBusy(true);
    try {
      await run();
    } catch (err) {
      toast({ tone: 'error', title: failed, description: describeCommentError(err) });
    } finally {
      setBusy(false);
    }
  }
  const remove = () => act(() => deleteComment(requestId, comment.id), 'The comment was not deleted');
  const toggleResolved = () =>
    act(
      () => resolveComment(requestId, comment.id, !comment.resolved),
      comment.resolved ? 'The comment was not reopened' : 'The comment was not resolved',
    );
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
      <div className={cn('min-w-0 flex-1', comment.resolved && !editing && 'opacity-70')}>
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
                onClick={() => (end === null ? onSeek(time) : onPlay(time, end))}
                aria-label={end === null ? `Seek to ${at}` : `Play ${at}`}
                className="rounded-full bg-amber-400/10 px-2 py-0.5 font-mono text-xs font-medium text-amber-300 transition hover:bg-amber-400/20"
              >
                {at}
              </button>
            )}
            {comment.carriedFrom && (
              <span className="inline-flex items-center gap-1 text-xs text-zinc-400">
                <CornerDownRight className="size-3" aria-hidden /> Carried forward
              </span>
            )}
            {comment.drawing.length > 0 && !comment.deleted && (
              <span className="inline-flex items-center gap-1 text-xs text-amber-300">
                <PenLine className="size-3" aria-hidden /> Drawing
              </span>
            )}
            {comment.resolved && !comment.deleted && (
              <span className="inline-flex items-center gap-1 rounded-full bg-emerald-400/10 px-2 py-0.5 text-xs font-medium text-emerald-300">
                <Check className="size-3" aria-hidden /> Resolved
              </span>
            )}
            {comment.editedAt && !comment.deleted && <span className="text-xs text-zinc-400">(edited)</span>}
            {comment.pending && (
              <span
                className="inline-flex items-center gap-1 text-xs text-amber-300"
                title="Saved on this device; it is sent when the connection is back."
              >
                <CloudOff className="size-3" aria-hidden /> Pending
              </span>
            )}
          </div>
          {!comment.deleted && !comment.isReply && (
            <IconButton
              disabled={busy || comment.pending}
              onClick={() => void toggleResolved()}
              label={comment.resolved ? `Reopen the comment at ${at}` : `Resolve the comment at ${at}`}
              className={comment.resolved ? 'text-emerald-300' : undefined}
            >
              {comment.resolved ? (
                <RotateCcw className="size-3.5" aria-hidden />
              ) : (
                <Check className="size-3.5" aria-hidden />
              )}
            </IconButton>
          )}
          {mine && (
            <IconButton
              disabled={busy || comment.pending || editing}
              onClick={() => setEditing(true)}
              label={`Edit your comment at ${at}`}
            >
              <Pencil className="size-3.5" aria-hidden />
            </IconButton>
          )}
          {mine && (
            <IconButton
              disabled={busy}
              onClick={() => setConfirming(true)}
              label={`Delete your comment at ${at}`}
              className="hover:text-red-300"
            >
              <Trash2 className="size-3.5" aria-hidden />
            </IconButton>
          )}
        </header>
        {comment.deleted ? (
          <p className="mt-1 text-sm text-zinc-400 italic">{DELETED_TEXT}</p>
        ) : editing ? (
          <EditForm comment={comment} requestId={requestId} onDone={() => setEditing(false)} />
        ) : (
          <>
            {comment.content && <CommentText content={comment.content} />}
            <Media comment={comment} />
          </>
        )}
        {children}
      </div>
      <ConfirmDialog
        open={confirming}
        destructive
        title="Delete this comment?"
        message="It reads “[Deleted]” for both of you, here and in notifications. This cannot be undone."
        confirmLabel="Delete comment"
        cancelLabel="Keep comment"
        onConfirm={() => void remove()}
        onClose={() => setConfirming(false)}
      />
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
              place={{
                videoTimestamp: parent.videoTimestamp,
                parentCommentId: parent.id,
                version: parent.version,
              }}
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
 * The unresolved comments of earlier versions that can be carried forward
 * to `version`, each with its own button and one for all; nothing when
 * there are none.
 */
function CarryForward({
  requestId,
  comments,
  version,
}: {
  requestId: string;
  comments: Comment[];
  version: number;
}) {
  const toast = useToast();
  const timecode = useTimecode();
  const [busy, setBusy] = useState(false);
  const candidates = carryCandidates(comments, version);
  if (candidates.length === 0) return null;
  const target = `v${version}`;
  async function carry(chosen: Comment[]) {
    setBusy(true);
    try {
      for (const c of chosen) await carryForward(requestId, c, version);
    } catch (err) {
      toast({ tone: 'error', title: 'Not carried forward', description: describeCommentError(err) });
    } finally {
      setBusy(false);
    }
  }
  return (
    <section
      aria-label="Open comments of earlier versions"
      className="space-y-3 rounded-xl border border-zinc-800 bg-zinc-900/60 p-3"
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-medium text-white">
          {candidates.length} open {candidates.length === 1 ? 'comment' : 'comments'} from earlier versions
        </h3>
        {candidates.length > 1 && (
          <Button size="sm" disabled={busy} onClick={() => void carry(candidates)}>
            Carry all to {target}
          </Button>
        )}
      </div>
      <ul className="space-y-2">
        {candidates.map((c) => {
          const at = formatCommentSpan(c.videoTimestamp, c.videoEndTimestamp, timecode);
          return (
            <li key={c.id} className="flex items-start gap-2 text-sm">
              <div className="min-w-0 flex-1 space-y-0.5">
                <p className="flex flex-wrap items-center gap-x-2 text-xs text-zinc-400">
                  <span className="rounded-full bg-zinc-800 px-2 py-0.5 font-mono text-zinc-300">
                    v{c.version} · {at}
                  </span>
                  <span className="break-words">{c.userDisplayName}</span>
                </p>
                <p className="line-clamp-2 break-words text-zinc-300">{c.content}</p>
              </div>
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                aria-label={`Carry the comment by ${c.userDisplayName} at ${at} to ${target}`}
                onClick={() => void carry([c])}
              >
                <CornerDownRight className="size-4" aria-hidden /> {target}
              </Button>
            </li>
          );
        })}
      </ul>
    </section>
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
  onPlay,
  onComments,
  composerRef,
  marks,
  onMarks,
  shapes,
  onShapes,
  onPosted,
  version = 1,
  versionCount = 1,
}: {
  requestId: string;
  uid: string;
  /** The version of the video shown: the thread lists its comments and new comments are about it. */
  version?: number;
  /** How many versions the request has (more than one shows each comment's version). */
  versionCount?: number;
  currentTime: number;
  onSeek: (seconds: number) => void;
  /** Plays a range from its in point, stopping at its out point. */
  onPlay?: (from: number, until: number) => void;
  /** Hears every top-level comment read, of every version. */
  onComments?: (comments: Comment[]) => void;
  composerRef?: Ref<HTMLTextAreaElement>;
  /** The next comment's in and out points (set in the composer or with I/O). */
  marks?: RangeMarks;
  onMarks?: (marks: RangeMarks) => void;
  /** The shapes drawn on the player for the next comment. */
  shapes?: DrawnShape[];
  onShapes?: (shapes: DrawnShape[]) => void;
  /** Called once a top-level comment is sent (its range and drawing are cleared). */
  onPosted?: () => void;
}) {
  const thread = useComments(requestId, null, true, version);
  const { all } = thread;
  const shown = thread.data.comments;
  useEffect(() => onComments?.(all), [all, onComments]);
  return (
    <section aria-label="Comments" className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center justify-end gap-2">
        {versionCount > 1 && (
          <h2 className="mr-auto text-sm font-medium whitespace-nowrap text-white">Comments on v{version}</h2>
        )}
        <TimecodeSetting />
      </div>
      <CommentComposer
        requestId={requestId}
        place={{ videoTimestamp: currentTime, version }}
        placeholder="Add a comment…"
        submitLabel="Comment"
        allowGeneral
        textareaRef={composerRef}
        range={marks && onMarks ? { marks, currentTime, onChange: onMarks } : undefined}
        shapes={shapes}
        onClearShapes={onShapes && (() => onShapes([]))}
        onPosted={() => {
          onMarks?.({ in: null, out: null });
          onShapes?.([]);
          onPosted?.();
        }}
      />
      {version > 1 && <CarryForward requestId={requestId} comments={all} version={version} />}
      {thread.error ? (
        <p className="rounded-xl border border-zinc-800 p-4 text-sm text-zinc-400">
          {describeCommentError(thread.error)}
        </p>
      ) : thread.loading && thread.data.comments.length === 0 ? (
        <p className="text-sm text-zinc-400">Loading comments…</p>
      ) : shown.length === 0 ? (
        <p className="rounded-xl border border-dashed border-zinc-800 p-6 text-center text-sm text-zinc-400">
          {versionCount > 1 ? `No comments on v${version} yet.` : 'No comments yet.'} Pause the video where it
          matters and say something.
        </p>
      ) : (
        <div className="space-y-5">
          {shown.map((c) => (
            <CommentItem
              key={c.id}
              comment={c}
              requestId={requestId}
              uid={uid}
              onSeek={onSeek}
              onPlay={onPlay}
            >
              <Replies parent={c} requestId={requestId} uid={uid} onSeek={onSeek} />
            </CommentItem>
          ))}
          {thread.data.hasMore && <LoadMore onClick={thread.loadMore} label="Load more comments" />}
        </div>
      )}
    </section>
  );
}
