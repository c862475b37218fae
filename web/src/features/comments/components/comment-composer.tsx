import { Clock, Globe, Paperclip, PenLine, Send, X } from 'lucide-react';
import { useId, useRef, useState, type FormEvent, type Ref } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { addComment, addMediaComment, type CommentPlacement } from '../api/comments-api';
import {
  checkCommentMedia,
  commentLength,
  describeCommentError,
  formatCommentSpan,
  markIn,
  markOut,
  mediaKind,
  type RangeMarks,
} from '../comment-rules';
import { useTimecode } from '../timecode-context';
import type { DrawnShape } from '@/types/request';

/** The count against the comment limit as it nears, red (and polite to screen readers) past it. */
export function LengthNote({ id, length }: { id: string; length: { text: string; over: boolean } }) {
  return (
    <p
      id={id}
      role="status"
      className={
        length.over ? 'text-right text-xs font-medium text-rose-300' : 'text-right text-xs text-zinc-400'
      }
    >
      {length.text}
    </p>
  );
}

/**
 * Writes a comment (or a reply) pinned to a moment of the video, with an
 * optional attachment uploaded before the comment is stored. With
 * allowGeneral, a toggle makes it a general comment (no time). A text
 * comment clears the field at once and shows in the thread as pending until
 * it is stored (so it also waits out being offline); on failure its text
 * comes back. With range, "Set in" and "Set out" take the player's current
 * time (currentTime) as the comment's in and out points; a drawing made on
 * the player goes with the comment. onPosted clears both once it is sent.
 * Nearing the 5,000-character limit it shows the count; past it, how far
 * over, and it cannot be sent (nothing is cut).
 */
export function CommentComposer({
  requestId,
  place,
  placeholder,
  submitLabel,
  autoFocus,
  allowGeneral = false,
  textareaRef,
  onDone,
  range,
  shapes = [],
  onClearShapes,
  onPosted,
}: {
  requestId: string;
  place: CommentPlacement;
  placeholder: string;
  submitLabel: string;
  autoFocus?: boolean;
  allowGeneral?: boolean;
  textareaRef?: Ref<HTMLTextAreaElement>;
  onDone?: () => void;
  /** The range marks and how to change them (the top-level composer only). */
  range?: { marks: RangeMarks; currentTime: number; onChange: (marks: RangeMarks) => void };
  /** Shapes drawn on the frame for this comment, and how to drop them. */
  shapes?: DrawnShape[];
  onClearShapes?: () => void;
  onPosted?: () => void;
}) {
  const toast = useToast();
  const timecode = useTimecode();
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [general, setGeneral] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const countId = useId();
  const marks = range?.marks;
  const ranged: CommentPlacement =
    marks?.in != null ? { ...place, videoTimestamp: marks.in, videoEndTimestamp: marks.out } : place;
  const at: CommentPlacement = general
    ? { ...place, videoTimestamp: null }
    : { ...ranged, ...(shapes.length > 0 ? { drawing: shapes } : {}) };

  const length = commentLength(text.trim().length);

  function attach(chosen: File | undefined) {
    if (!chosen) return;
    const problem = checkCommentMedia(chosen);
    if (problem) {
      toast({ tone: 'error', title: 'Cannot attach that file', description: problem });
      return;
    }
    setFile(chosen);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy || (!text.trim() && !file) || length?.over) return;
    const content = text.trim();
    if (!file) {
      setText('');
      setGeneral(false);
      onDone?.();
      onPosted?.();
      try {
        await addComment(requestId, content, at);
      } catch (err) {
        setText((now) => now || content);
        toast({
          tone: 'error',
          title: 'Your comment was not posted',
          description: describeCommentError(err),
        });
      }
      return;
    }
    setBusy(true);
    try {
      await addMediaComment(requestId, file, mediaKind(file.type), content, at);
      setText('');
      setFile(null);
      setGeneral(false);
      onDone?.();
      onPosted?.();
    } catch (err) {
      toast({ tone: 'error', title: 'Your comment was not posted', description: describeCommentError(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      onSubmit={(e) => void submit(e)}
      className="space-y-2 rounded-xl border border-zinc-800 bg-zinc-950/70 p-3"
    >
      <textarea
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) void submit(e);
        }}
        ref={textareaRef}
        placeholder={placeholder}
        aria-label={placeholder}
        autoFocus={autoFocus}
        aria-invalid={length?.over || undefined}
        aria-describedby={length ? countId : undefined}
        rows={2}
        className="block w-full resize-y bg-transparent text-sm text-white placeholder:text-zinc-500 focus:outline-none"
      />
      {length && <LengthNote id={countId} length={length} />}
      {file && (
        <p className="flex items-center gap-2 text-xs text-zinc-300">
          <Paperclip className="size-3.5" aria-hidden />
          <span className="truncate">{file.name}</span>
          <button
            type="button"
            aria-label="Remove attachment"
            className="rounded p-0.5 text-zinc-400 hover:text-white"
            onClick={() => setFile(null)}
          >
            <X className="size-3.5" />
          </button>
        </p>
      )}
      <div className="flex items-center justify-between gap-2">
        <div className="flex flex-wrap items-center gap-2">
          <span
            className={
              at.videoTimestamp === null
                ? 'inline-flex items-center gap-1 rounded-full bg-sky-400/10 px-2 py-0.5 text-xs font-medium text-sky-300'
                : 'inline-flex items-center gap-1 rounded-full bg-amber-400/10 px-2 py-0.5 text-xs font-medium text-amber-300'
            }
          >
            {at.videoTimestamp === null ? (
              <Globe className="size-3" aria-hidden />
            ) : (
              <Clock className="size-3" aria-hidden />
            )}
            {at.videoTimestamp === null
              ? 'General comment'
              : at.videoEndTimestamp != null
                ? formatCommentSpan(at.videoTimestamp, at.videoEndTimestamp, timecode)
                : `at ${formatCommentSpan(at.videoTimestamp, null, timecode)}`}
          </span>
          {range && !general && (
            <>
              <button
                type="button"
                onClick={() => range.onChange(markIn(range.marks, range.currentTime))}
                title="Set in (I)"
                className="rounded-lg px-2 py-1 text-xs text-zinc-400 hover:bg-zinc-800 hover:text-white"
              >
                Set in
              </button>
              <button
                type="button"
                disabled={range.marks.in === null}
                onClick={() => range.onChange(markOut(range.marks, range.currentTime))}
                title="Set out (O)"
                className="rounded-lg px-2 py-1 text-xs text-zinc-400 hover:bg-zinc-800 hover:text-white disabled:cursor-not-allowed disabled:opacity-50"
              >
                Set out
              </button>
              {range.marks.in !== null && (
                <button
                  type="button"
                  aria-label="Clear the range"
                  onClick={() => range.onChange({ in: null, out: null })}
                  className="rounded p-0.5 text-zinc-400 hover:text-white"
                >
                  <X className="size-3.5" aria-hidden />
                </button>
              )}
            </>
          )}
          {shapes.length > 0 && !general && (
            <span className="inline-flex items-center gap-1 rounded-full bg-amber-400/10 px-2 py-0.5 text-xs font-medium text-amber-300">
              <PenLine className="size-3" aria-hidden />
              Drawing · {shapes.length} {shapes.length === 1 ? 'shape' : 'shapes'}
              {onClearShapes && (
                <button
                  type="button"
                  aria-label="Remove the drawing"
                  onClick={onClearShapes}
                  className="rounded text-amber-300 hover:text-white"
                >
                  <X className="size-3" aria-hidden />
                </button>
              )}
            </span>
          )}
          {allowGeneral && (
            <label className="inline-flex cursor-pointer items-center gap-1.5 rounded-lg px-2 py-1 text-xs text-zinc-400 hover:bg-zinc-800 hover:text-white">
              <input
                type="checkbox"
                className="size-3.5 accent-violet-500"
                checked={general}
                onChange={(e) => setGeneral(e.target.checked)}
              />
              No timestamp
            </label>
          )}
          <input
            ref={picker}
            type="file"
            accept="image/*,video/*,audio/*,application/pdf"
            className="hidden"
            aria-label="Attachment"
            onChange={(e) => {
              attach(e.target.files?.[0]);
              e.target.value = '';
            }}
          />
          <button
            type="button"
            onClick={() => picker.current?.click()}
            className="inline-flex items-center gap-1 rounded-lg px-2 py-1 text-xs text-zinc-400 hover:bg-zinc-800 hover:text-white"
          >
            <Paperclip className="size-3.5" aria-hidden /> Attach
          </button>
        </div>
        <button
          type="submit"
          disabled={busy || (!text.trim() && !file) || length?.over}
          className="inline-flex items-center gap-1.5 rounded-lg bg-brand-600 px-3 py-1.5 text-sm font-medium text-white transition hover:bg-brand-500 disabled:cursor-not-allowed disabled:opacity-50"
        >
          <Send className="size-3.5" aria-hidden />
          {busy ? 'Posting…' : submitLabel}
        </button>
      </div>
    </form>
  );
}
