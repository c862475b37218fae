import {
  ArrowUpRight,
  Circle,
  Keyboard,
  Maximize,
  Pause,
  PenLine,
  Play,
  Square,
  Undo2,
  Volume2,
  VolumeX,
} from 'lucide-react';
import {
  useCallback,
  useEffect,
  useImperativeHandle,
  useRef,
  useState,
  type CSSProperties,
  type Ref,
} from 'react';
import { Dialog } from '@/components/ui/dialog';
import { cn } from '@/lib/cn';
import { formatVideoTime } from '@/lib/video-time';
import type { DrawnShape } from '@/types/request';
import {
  AnnotationsLayer,
  DRAW_COLORS,
  DrawingSurface,
  annotationVisible,
  frameRect,
  useBoxSize,
  type VideoAnnotation,
} from './video-drawing';
import { THUMB_HEIGHT, THUMB_WIDTH, useFrameThumbnails } from './video-frames';

/** A point of interest on the player's timeline. */
export interface VideoMarker {
  id: string;
  /** Seconds into the video. */
  time: number;
  /** Where a range ends (its out point); the scrubber shows the span. */
  end?: number | null;
  /** What the marker is, for its tooltip and accessible name. */
  label: string;
  /** What hovering or focusing it previews (a comment's words), under the label. */
  preview?: string;
}

/** What a parent can do with the player. */
export interface VideoPlayerHandle {
  /** Moves playback to `seconds` and brings the player into view. */
  seek: (seconds: number) => void;
  /** Plays from `from` (brought into view), pausing at `until` when given (a range's out point). */
  play: (from: number, until?: number | null) => void;
  /** Leaves draw mode (once the drawing has gone with a comment). */
  stopDrawing: () => void;
}

/** A marker's tap target (px): 24, the WCAG minimum, around its 12 px dot; stacked markers sit this far apart. */
const MARKER_TARGET = 24;

/** Where a marker sits on the timeline, as a percentage (0 without a known duration). */
export function markerPosition(time: number, duration: number): number {
  if (!(duration > 0) || !Number.isFinite(time)) return 0;
  return Math.min(100, Math.max(0, (time / duration) * 100));
}

/**
 * Markers with their stacking level: markers closer than `gap` percent of the
 * timeline to the one before them share its spot and stack upwards (level 0
 * on the track, 1 above it, …), so none hides another.
 */
export function stackMarkers<M extends { time: number }>(
  markers: M[],
  duration: number,
  gap = 1.5,
): (M & { position: number; level: number })[] {
  const placed = [...markers]
    .map((m) => ({ ...m, position: markerPosition(m.time, duration), level: 0 }))
    .sort((a, b) => a.position - b.position);
  let anchor = Number.NEGATIVE_INFINITY;
  let level = 0;
  for (const m of placed) {
    if (m.position - anchor < gap) level += 1;
    else {
      anchor = m.position;
      level = 0;
    }
    m.level = level;
  }
  return placed;
}

/** What a key does on the review page (Frame.io's keys). */
export type ShortcutAction =
  | 'toggle'
  | 'reverse'
  | 'pause'
  | 'forward'
  | 'back5'
  | 'ahead5'
  | 'prevFrame'
  | 'nextFrame'
  | 'prevComment'
  | 'nextComment'
  | 'comment'
  | 'markIn'
  | 'markOut'
  | 'help';

/** The shortcuts, in the order the shortcuts sheet lists them. */
export const SHORTCUTS: { keys: string[]; action: ShortcutAction; text: string }[] = [
  { keys: ['Space'], action: 'toggle', text: 'Play or pause' },
  { keys: ['J'], action: 'reverse', text: 'Play backwards (again: faster)' },
  { keys: ['K'], action: 'pause', text: 'Pause' },
  { keys: ['L'], action: 'forward', text: 'Play forwards (again: faster)' },
  { keys: ['←'], action: 'back5', text: 'Back 5 seconds' },
  { keys: ['→'], action: 'ahead5', text: 'Forward 5 seconds' },
  { keys: [','], action: 'prevFrame', text: 'Previous frame' },
  { keys: ['.'], action: 'nextFrame', text: 'Next frame' },
  { keys: ['Shift', '←'], action: 'prevComment', text: 'Previous comment' },
  { keys: ['Shift', '→'], action: 'nextComment', text: 'Next comment' },
  { keys: ['C'], action: 'comment', text: 'Comment at the current time' },
  { keys: ['I'], action: 'markIn', text: 'Set the in point of a range comment' },
  { keys: ['O'], action: 'markOut', text: 'Set the out point of a range comment' },
  { keys: ['?'], action: 'help', text: 'Show these shortcuts' },
];

const KEYS: Record<string, ShortcutAction> = {
  ' ': 'toggle',
  j: 'reverse',
  k: 'pause',
  l: 'forward',
  ArrowLeft: 'back5',
  ArrowRight: 'ahead5',
  ',': 'prevFrame',
  '.': 'nextFrame',
  c: 'comment',
  i: 'markIn',
  o: 'markOut',
  '?': 'help',
};

/** The action of a key press, or null when the key is not a shortcut; Shift+←/→ jump between comments. */
export function shortcutFor(
  e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey'> & { shiftKey?: boolean },
): ShortcutAction | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  if (e.shiftKey && e.key === 'ArrowLeft') return 'prevComment';
  if (e.shiftKey && e.key === 'ArrowRight') return 'nextComment';
  return KEYS[e.key.length === 1 ? e.key.toLowerCase() : e.key] ?? null;
}

/**
 * The moment of the next marker after `time` (direction 1) or the one
 * before it (-1), or null when there is none that way. Markers within half
 * a frame of `time` count as where the player is, so a second press moves on.
 */
export function adjacentMarkerTime(
  times: number[],
  time: number,
  direction: 1 | -1,
  frame = 1 / 24,
): number | null {
  const slack = frame / 2;
  const ahead = times.filter((t) => (direction === 1 ? t > time + slack : t < time - slack));
  if (ahead.length === 0) return null;
  return direction === 1 ? Math.min(...ahead) : Math.max(...ahead);
}

/** Whether keys typed at this element belong to it (text fields, buttons for Space). */
function ownsKey(target: EventTarget | null, key: string): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target instanceof HTMLTextAreaElement) return true;
  if (target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) return target.type !== 'range';
  if (key === ' ' && target.closest('button, a, [role="button"], [role="menuitem"], [role="tab"]'))
    return true;
  return false;
}

/** The look of a player's icon buttons. */
export const playerControl =
  'grid size-9 place-items-center rounded-lg text-zinc-300 transition hover:bg-zinc-800 hover:text-white focus-visible:outline-2 focus-visible:outline-brand-400';

const TOOLS: { kind: DrawnShape['kind']; name: string; icon: typeof PenLine }[] = [
  { kind: 'pen', name: 'Pen', icon: PenLine },
  { kind: 'arrow', name: 'Arrow', icon: ArrowUpRight },
  { kind: 'rect', name: 'Rectangle', icon: Square },
  { kind: 'ellipse', name: 'Ellipse', icon: Circle },
];

/**
 * A review player: the video with its own controls, markers on its scrubber
 * (stacked where they coincide; a range's span shown along the track; a
 * hover or focus previews the comment with a thumbnail of its frame), the
 * drawings of the comments shown over the frame at their moment, and
 * Frame.io's keyboard shortcuts while it is on the page: Space, J/K/L,
 * ←/→ 5 s, ,/. one frame, Shift+←/→ to the previous or next comment's
 * marker, C to comment (calls onCommentKey), I/O to set a
 * range's in and out points (onMarkIn, onMarkOut) and ? for the shortcuts
 * sheet. Keys typed into text fields are left alone. With onDraftChange,
 * Draw pauses and lets the person draw over the frame (draft). Reports the
 * playback position as it changes.
 */
export function VideoPlayer({
  src,
  title,
  markers = [],
  annotations = [],
  draft = [],
  onDraftChange,
  onTimeChange,
  onCommentKey,
  onMarkIn,
  onMarkOut,
  frameRate: fileFrameRate,
  onFrameRate,
  ref,
}: {
  src: string;
  title: string;
  markers?: VideoMarker[];
  /** Drawings of comments, each shown over the frame at its moment or through its range. */
  annotations?: VideoAnnotation[];
  /** The shapes being drawn for the next comment. */
  draft?: DrawnShape[];
  onDraftChange?: (shapes: DrawnShape[]) => void;
  onTimeChange?: (seconds: number) => void;
  onCommentKey?: (seconds: number) => void;
  onMarkIn?: (seconds: number) => void;
  onMarkOut?: (seconds: number) => void;
  /** The clip's frame rate as its file says, for frame steps before playback has measured it. */
  frameRate?: number | null;
  /** Reports the clip's frame rate (frames per second) once playback has measured it. */
  onFrameRate?: (fps: number) => void;
  ref?: Ref<VideoPlayerHandle>;
}) {
  const video = useRef<HTMLVideoElement>(null);
  const [duration, setDuration] = useState(0);
  const [time, setTime] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [muted, setMuted] = useState(false);
  // Playback speed: positive forwards, negative backwards (J), 0 when paused.
  const [speed, setSpeed] = useState(0);
  const [help, setHelp] = useState(false);
  const frame = useRef(1 / (fileFrameRate || 24));
  const frameRate = useRef(onFrameRate);
  useEffect(() => {
    frameRate.current = onFrameRate;
  }, [onFrameRate]);
  useEffect(() => {
    if (fileFrameRate) frame.current = 1 / fileFrameRate;
  }, [fileFrameRate]);
  // Where the comments are, for Shift+←/→.
  const markerTimes = useRef<number[]>([]);
  useEffect(() => {
    markerTimes.current = markers.map((m) => m.time);
  }, [markers]);
  const reverse = useRef<number | null>(null);
  // A range being played stops at its out point.
  const stopAt = useRef<number | null>(null);
  const outer = useRef<HTMLDivElement>(null);
  const [frameBox, box] = useBoxSize<HTMLDivElement>();
  const [natural, setNatural] = useState({ w: 0, h: 0 });
  const [drawing, setDrawing] = useState(false);
  const [tool, setTool] = useState<DrawnShape['kind']>('pen');
  const [color, setColor] = useState<string>(DRAW_COLORS[0].value);
  const frames = useFrameThumbnails(src);

  const report = useCallback(
    (seconds: number) => {
      setTime(seconds);
      onTimeChange?.(seconds);
    },
    [onTimeChange],
  );

  const stopReverse = useCallback(() => {
    if (reverse.current !== null) cancelAnimationFrame(reverse.current);
    reverse.current = null;
  }, []);

  const seekTo = useCallback(
    (seconds: number) => {
      const v = video.current;
      if (!v) return;
      const end = Number.isFinite(v.duration) ? v.duration : Number.POSITIVE_INFINITY;
      stopAt.current = null;
      v.currentTime = Math.min(end, Math.max(0, seconds));
      report(v.currentTime);
    },
    [report],
  );

  const pause = useCallback(() => {
    stopReverse();
    video.current?.pause();
    setSpeed(0);
  }, [stopReverse]);

  const playForward = useCallback(
    (rate: number) => {
      const v = video.current;
      if (!v) return;
      stopReverse();
      v.playbackRate = rate;
      setSpeed(rate);
      void v.play().catch(() => setSpeed(0));
    },
    [stopReverse],
  );

  // Browsers do not play video backwards; J steps back frame by frame instead.
  const playBackward = useCallback(
    (rate: number) => {
      const v = video.current;
      if (!v) return;
      stopReverse();
      v.pause();
      setSpeed(-rate);
      let last = performance.now();
      const step = (now: number) => {
        const next = v.currentTime - ((now - last) / 1000) * rate;
        last = now;
        if (next <= 0) {
          seekTo(0);
          reverse.current = null;
          setSpeed(0);
          return;
        }
        seekTo(next);
        reverse.current = requestAnimationFrame(step);
      };
      reverse.current = requestAnimationFrame(step);
    },
    [seekTo, stopReverse],
  );

  useEffect(() => stopReverse, [stopReverse]);

  useImperativeHandle(
    ref,
    () => ({
      seek(seconds: number) {
        seekTo(seconds);
        video.current?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
      },
      play(from: number, until?: number | null) {
        seekTo(from);
        video.current?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
        setDrawing(false);
        playForward(1);
        stopAt.current = until ?? null;
      },
      stopDrawing() {
        setDrawing(false);
      },
    }),
    [seekTo, playForward],
  );

  const act = useCallback(
    (action: ShortcutAction) => {
      const v = video.current;
      if (!v) return;
      switch (action) {
        case 'toggle':
          if (speed !== 0) pause();
          else playForward(1);
          break;
        case 'pause':
          pause();
          break;
        case 'forward':
          playForward(speed > 0 ? Math.min(speed * 2, 4) : 1);
          break;
        case 'reverse':
          playBackward(speed < 0 ? Math.min(-speed * 2, 4) : 1);
          break;
        case 'back5':
          seekTo(v.currentTime - 5);
          break;
        case 'ahead5':
          seekTo(v.currentTime + 5);
          break;
        case 'prevFrame':
          pause();
          seekTo(v.currentTime - frame.current);
          break;
        case 'nextFrame':
          pause();
          seekTo(v.currentTime + frame.current);
          break;
        case 'prevComment':
        case 'nextComment': {
          const to = adjacentMarkerTime(
            markerTimes.current,
            v.currentTime,
            action === 'nextComment' ? 1 : -1,
            frame.current,
          );
          if (to === null) break;
          pause();
          seekTo(to);
          break;
        }
        case 'comment':
          pause();
          onCommentKey?.(v.currentTime);
          break;
        case 'markIn':
          onMarkIn?.(v.currentTime);
          break;
        case 'markOut':
          onMarkOut?.(v.currentTime);
          break;
        case 'help':
          setHelp(true);
          break;
      }
    },
    [speed, pause, playForward, playBackward, seekTo, onCommentKey, onMarkIn, onMarkOut],
  );

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      const action = shortcutFor(e);
      if (!action || e.defaultPrevented || ownsKey(e.target, e.key)) return;
      if (document.querySelector('dialog[open]')) return;
      e.preventDefault();
      act(action);
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [act]);

  // Learn the frame length from the frames the browser presents while playing.
  useEffect(() => {
    const v = video.current;
    if (!v || !('requestVideoFrameCallback' in v)) return;
    let last: number | null = null;
    let handle = 0;
    const onFrame = (_: number, meta: { mediaTime: number }) => {
      if (last !== null) {
        const delta = meta.mediaTime - last;
        if (delta > 0.004 && delta < frame.current * 1.5) {
          frame.current = delta;
          frameRate.current?.(Math.round(1 / delta));
        }
      }
      last = meta.mediaTime;
      handle = v.requestVideoFrameCallback(onFrame);
    };
    handle = v.requestVideoFrameCallback(onFrame);
    return () => v.cancelVideoFrameCallback(handle);
  }, [src]);

  // The player full screen; where only the video element can go full screen (iOS Safari), the video.
  const fullScreen = () => {
    const v = video.current as (HTMLVideoElement & { webkitEnterFullscreen?: () => void }) | null;
    const whole = outer.current;
    if (whole?.requestFullscreen) void whole.requestFullscreen().catch(() => undefined);
    else v?.webkitEnterFullscreen?.();
  };
  // Drawing is for a still frame: playing ends it (the draft stays for the comment).
  const playingNow = playing || speed !== 0;
  const drawingNow = drawing && !playingNow && Boolean(onDraftChange);
  const rect = frameRect(natural.w, natural.h, box.w, box.h);
  // Escape puts the pen down (the draft stays for the comment).
  useEffect(() => {
    if (!drawingNow) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !document.querySelector('dialog[open]')) setDrawing(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [drawingNow]);
  const shown = annotations.filter((a) => annotationVisible(a, time));
  const stacked = stackMarkers(markers, duration);
  const levels = stacked.reduce((n, m) => Math.max(n, m.level + 1), 1);
  const thumb = 14;

  return (
    <div ref={outer} className="overflow-hidden rounded-2xl border border-zinc-800 bg-black">
      <div ref={frameBox} className="relative">
        <video
          ref={video}
          src={src}
          playsInline
          preload="metadata"
          aria-label={title}
          className="aspect-video w-full cursor-pointer bg-black"
          onClick={() => act('toggle')}
          onLoadedMetadata={(e) => {
            setDuration(e.currentTarget.duration);
            setNatural({ w: e.currentTarget.videoWidth, h: e.currentTarget.videoHeight });
          }}
          onDurationChange={(e) => setDuration(e.currentTarget.duration)}
          onTimeUpdate={(e) => {
            const until = stopAt.current;
            if (until !== null && e.currentTarget.currentTime >= until) {
              pause();
              seekTo(until);
              return;
            }
            report(e.currentTarget.currentTime);
          }}
          onSeeked={(e) => report(e.currentTarget.currentTime)}
          onPlay={() => setPlaying(true)}
          onPause={() => setPlaying(false)}
          onEnded={() => setSpeed(0)}
          onVolumeChange={(e) => setMuted(e.currentTarget.muted)}
        />
        <div
          className="pointer-events-none absolute"
          style={{
            left: `${rect.left}%`,
            top: `${rect.top}%`,
            width: `${rect.width}%`,
            height: `${rect.height}%`,
          }}
        >
          <AnnotationsLayer
            annotations={
              draft.length > 0 && !drawingNow
                ? [...shown, { id: 'draft', time, end: null, shapes: draft, label: 'Your drawing' }]
                : shown
            }
          />
          {drawingNow && onDraftChange && (
            <div className="pointer-events-auto absolute inset-0">
              <DrawingSurface
                tool={tool}
                color={color}
                shapes={draft}
                onAdd={(shape) => onDraftChange([...draft, shape])}
              />
            </div>
          )}
        </div>
      </div>
      {drawingNow && onDraftChange && (
        <div
          role="toolbar"
          aria-label="Drawing tools"
          className="flex flex-wrap items-center gap-1 border-t border-zinc-800 bg-zinc-950 px-3 py-1.5"
        >
          {TOOLS.map((t) => (
            <button
              key={t.kind}
              type="button"
              aria-label={t.name}
              aria-pressed={tool === t.kind}
              title={t.name}
              onClick={() => setTool(t.kind)}
              className={cn(playerControl, tool === t.kind && 'bg-zinc-800 text-white')}
            >
              <t.icon className="size-4" aria-hidden />
            </button>
          ))}
          <span className="mx-1 h-5 w-px bg-zinc-800" aria-hidden />
          {DRAW_COLORS.map((c) => (
            <button
              key={c.value}
              type="button"
              aria-label={c.name}
              aria-pressed={color === c.value}
              title={c.name}
              onClick={() => setColor(c.value)}
              className={cn(playerControl, 'size-8')}
            >
              <span
                aria-hidden
                className={cn(
                  'size-4 rounded-full',
                  color === c.value && 'ring-2 ring-white ring-offset-2 ring-offset-zinc-950',
                )}
                style={{ background: c.value }}
              />
            </button>
          ))}
          <span className="flex-1" />
          <button
            type="button"
            className={playerControl}
            aria-label="Undo the last shape"
            title="Undo"
            disabled={draft.length === 0}
            onClick={() => onDraftChange(draft.slice(0, -1))}
          >
            <Undo2 className="size-4" aria-hidden />
          </button>
          <button
            type="button"
            className="rounded-lg px-2.5 py-1 text-sm font-medium text-zinc-200 hover:bg-zinc-800"
            onClick={() => setDrawing(false)}
          >
            Done
          </button>
        </div>
      )}
      <div className="space-y-1 border-t border-zinc-800 bg-zinc-950 px-3 pt-1 pb-2">
        <div className="relative" style={{ paddingTop: `${levels * MARKER_TARGET}px` }}>
          {stacked.map((m) =>
            m.end != null && m.end > m.time ? (
              <span
                key={`range-${m.id}`}
                role="img"
                aria-label={`Range ${m.label}`}
                className="pointer-events-none absolute h-1.5 rounded-full bg-amber-400/60"
                style={{
                  left: `calc(${thumb / 2}px + (100% - ${thumb}px) * ${m.position / 100})`,
                  width: `calc((100% - ${thumb}px) * ${(markerPosition(m.end, duration) - m.position) / 100})`,
                  bottom: '4px',
                }}
              />
            ) : null,
          )}
          <div role="group" aria-label="Comment markers">
            {stacked.map((m) => (
              <button
                key={m.id}
                type="button"
                title={m.preview ? undefined : m.label}
                aria-label={`Jump to ${m.label}`}
                onClick={() => seekTo(m.time)}
                onPointerEnter={() => frames.want(m.time)}
                onFocus={() => frames.want(m.time)}
                data-level={m.level}
                className="group absolute z-10 grid size-6 -translate-x-1/2 place-items-center rounded-full focus-visible:outline-2 focus-visible:outline-brand-400"
                style={{
                  left: `calc(${thumb / 2}px + (100% - ${thumb}px) * ${m.position / 100})`,
                  bottom: `${m.level * MARKER_TARGET + 14}px`,
                }}
              >
                <span
                  aria-hidden
                  className="size-3 rounded-full bg-amber-400 ring-2 ring-zinc-950 transition group-hover:scale-125 group-hover:bg-amber-300"
                />
                {m.preview && (
                  <span
                    role="tooltip"
                    className={`pointer-events-none invisible absolute bottom-full mb-1 w-56 rounded-lg border border-zinc-700 bg-zinc-900/95 px-2.5 py-1.5 text-left text-xs text-zinc-200 shadow-xl group-hover:visible group-focus-visible:visible ${m.position < 50 ? 'left-0' : 'right-0'}`}
                  >
                    {frames.thumbs.get(m.time) ? (
                      <img
                        src={frames.thumbs.get(m.time)}
                        alt={`Frame at ${m.label.split(' · ')[0]}`}
                        width={THUMB_WIDTH}
                        height={THUMB_HEIGHT}
                        className="mb-1.5 block aspect-video w-full rounded bg-black object-contain"
                      />
                    ) : (
                      <span
                        aria-hidden
                        className="mb-1.5 block aspect-video w-full animate-pulse rounded bg-zinc-800"
                      />
                    )}
                    <span className="block font-mono text-amber-300">{m.label}</span>
                    <span className="line-clamp-3">{m.preview}</span>
                  </span>
                )}
              </button>
            ))}
          </div>
          <Scrubber label="Seek" time={time} duration={duration} onSeek={seekTo} />
        </div>
        <div className="flex items-center gap-1">
          <button
            type="button"
            className={playerControl}
            aria-label={playing || speed < 0 ? 'Pause' : 'Play'}
            onClick={() => act('toggle')}
          >
            {playing || speed < 0 ? (
              <Pause className="size-5" aria-hidden />
            ) : (
              <Play className="size-5" aria-hidden />
            )}
          </button>
          <span className="px-1 font-mono text-xs text-zinc-300 tabular-nums" aria-live="off">
            {formatVideoTime(time)} / {formatVideoTime(duration)}
          </span>
          {speed !== 0 && speed !== 1 && (
            <span className="rounded bg-zinc-800 px-1.5 py-0.5 font-mono text-xs text-zinc-200" role="status">
              {speed < 0 ? '◀ ' : ''}
              {Math.abs(speed)}×
            </span>
          )}
          <span className="flex-1" />
          {onDraftChange && (
            <button
              type="button"
              className={cn(playerControl, drawingNow && 'bg-zinc-800 text-amber-300')}
              aria-label="Draw on the frame"
              aria-pressed={drawingNow}
              title="Draw on the frame"
              onClick={() => {
                if (drawingNow) setDrawing(false);
                else {
                  pause();
                  setDrawing(true);
                }
              }}
            >
              <PenLine className="size-5" aria-hidden />
            </button>
          )}
          <button
            type="button"
            className={playerControl}
            aria-label={muted ? 'Unmute' : 'Mute'}
            onClick={() => {
              if (video.current) video.current.muted = !video.current.muted;
            }}
          >
            {muted ? <VolumeX className="size-5" aria-hidden /> : <Volume2 className="size-5" aria-hidden />}
          </button>
          <button
            type="button"
            className={playerControl}
            aria-label="Keyboard shortcuts"
            onClick={() => setHelp(true)}
          >
            <Keyboard className="size-5" aria-hidden />
          </button>
          <button type="button" className={playerControl} aria-label="Full screen" onClick={fullScreen}>
            <Maximize className="size-5" aria-hidden />
          </button>
        </div>
      </div>
      <Dialog open={help} onClose={() => setHelp(false)} title="Keyboard shortcuts">
        <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
          {SHORTCUTS.map((s) => (
            <div key={s.action} className="contents">
              <dt>
                {s.keys.map((k) => (
                  <kbd
                    key={k}
                    className="inline-block min-w-7 rounded-md border border-zinc-600 bg-zinc-800 px-1.5 py-0.5 text-center font-mono text-xs text-white"
                  >
                    {k}
                  </kbd>
                ))}
              </dt>
              <dd className="text-zinc-300">{s.text}</dd>
            </div>
          ))}
        </dl>
      </Dialog>
    </div>
  );
}

/** The seek bar under a video: a range over its length, filled up to time, read out as "0:03 of 0:08". */
export function Scrubber({
  label,
  time,
  duration,
  onSeek,
}: {
  label: string;
  time: number;
  duration: number;
  onSeek: (seconds: number) => void;
}) {
  return (
    <input
      type="range"
      aria-label={label}
      aria-valuetext={`${formatVideoTime(time)} of ${formatVideoTime(duration)}`}
      min={0}
      max={duration || 0}
      step="any"
      value={Math.min(time, duration || 0)}
      onChange={(e) => onSeek(Number(e.target.value))}
      className="scrubber block h-3.5 w-full cursor-pointer"
      style={{ '--progress': `${markerPosition(time, duration)}%` } as CSSProperties}
    />
  );
}
