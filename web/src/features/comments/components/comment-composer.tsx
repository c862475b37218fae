import { Clock, Paperclip, Send, X } from 'lucide-react';
import { useRef, useState, type FormEvent } from 'react';
import { useToast } from '@/components/ui/toast-context';
import { addComment, addMediaComment, type CommentPlacement } from '../api/comments-api';
import { checkCommentMedia, describeCommentError, formatVideoTime, mediaKind } from '../comment-rules';

/**
 * Writes a comment (or a reply) pinned to a moment of the video, with an
 * optional attachment uploaded before the comment is stored.
 */
export function CommentComposer({
  requestId,
  place,
  placeholder,
  submitLabel,
  autoFocus,
  onDone,
}: {
  requestId: string;
  place: CommentPlacement;
  placeholder: string;
  submitLabel: string;
  autoFocus?: boolean;
  onDone?: () => void;
}) {
  const toast = useToast();
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  function attach(chosen: File | undefined) {
    if (!chosen) return;
    const problem = checkCommentMedia(chosen);
    if (problem) {
      toast({ title: 'Cannot attach that file', description: problem });
      return;
    }
    setFile(chosen);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (busy || (!text.trim() && !file)) return;
    setBusy(true);
    try {
      if (file) await addMediaComment(requestId, file, mediaKind(file.type), text.trim(), place);
      else await addComment(requestId, text.trim(), place);
      setText('');
      setFile(null);
      onDone?.();
    } catch (err) {
      toast({ title: 'Your comment was not posted', description: describeCommentError(err) });
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
        placeholder={placeholder}
        aria-label={placeholder}
        autoFocus={autoFocus}
        maxLength={5000}
        rows={2}
        className="block w-full resize-y bg-transparent text-sm text-white placeholder:text-zinc-500 focus:outline-none"
      />
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
        <div className="flex items-center gap-2">
          <span className="inline-flex items-center gap-1 rounded-full bg-amber-400/10 px-2 py-0.5 text-xs font-medium text-amber-300">
            <Clock className="size-3" aria-hidden />
            at {formatVideoTime(place.videoTimestamp)}
          </span>
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
          disabled={busy || (!text.trim() && !file)}
          className="inline-flex items-center gap-1.5 rounded-lg bg-brand-600 px-3 py-1.5 text-sm font-medium text-white transition hover:bg-brand-500 disabled:cursor-not-allowed disabled:opacity-50"
        >
          <Send className="size-3.5" aria-hidden />
          {busy ? 'Posting…' : submitLabel}
        </button>
      </div>
    </form>
  );
}
