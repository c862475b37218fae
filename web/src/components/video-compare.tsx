import { Pause, Play } from 'lucide-react';
import { useCallback, useEffect, useImperativeHandle, useRef, useState, type Ref } from 'react';
import { formatVideoTime } from '@/lib/video-time';
import {
  markerPosition,
  playerControl,
  Scrubber,
  type VideoMarker,
  type VideoPlayerHandle,
} from './video-player';

/** One side of a comparison: a video and what it is called. */
export interface CompareSide {
  src: string;
  /** Its short name (v1), shown over it. */
  label: string;
  /** Its accessible name. */
  title: string;
  /** Its comments' moments, shown on its own lane above the shared scrubber. */
  markers?: VideoMarker[];
}

/** The scrubber thumb's width (px): markers line up with its centre, as on the player. */
const THUMB = 14;

/**
 * One side's comment markers on a lane of the shared timeline, named after
 * its version; each seeks both videos to its moment.
 */
function MarkerLane({
  side,
  duration,
  onSeek,
}: {
  side: CompareSide;
  duration: number;
  onSeek: (seconds: number) => void;
}) {
  return (
    <div className="flex items-center gap-2">
      <span className="w-6 shrink-0 font-mono text-[10px] text-zinc-400" aria-hidden>
        {side.label}
      </span>
      <div role="group" aria-label={`Comments on ${side.label}`} className="relative h-6 flex-1">
        {(side.markers ?? []).map((m) => (
          <button
            key={m.id}
            type="button"
            title={m.preview ? `${m.label}: ${m.preview}` : m.label}
            aria-label={`Jump to ${m.label} (${side.label})`}
            onClick={() => onSeek(m.time)}
            className="group absolute top-0 grid size-6 -translate-x-1/2 place-items-center rounded-full focus-visible:outline-2 focus-visible:outline-brand-400"
            style={{
              left: `calc(${THUMB / 2}px + (100% - ${THUMB}px) * ${markerPosition(m.time, duration) / 100})`,
            }}
          >
            <span
              aria-hidden
              className="size-2.5 rounded-full bg-amber-400 ring-2 ring-zinc-950 transition group-hover:scale-125"
            />
          </button>
        ))}
      </div>
    </div>
  );
}

/** How far apart (seconds) the two videos may drift while playing before the second is put back. */
const DRIFT = 0.15;

/**
 * Two videos side by side (stacked on a phone), played, paused and sought
 * together with one set of controls: the left one leads and the right one
 * follows it (muted, so one sound track plays). Space plays or pauses.
 * Each side's comment markers sit on a lane of their own above the shared
 * scrubber. Reports the position as it changes; the handle seeks and plays
 * both.
 */
export function VideoCompare({
  left,
  right,
  onTimeChange,
  ref,
}: {
  left: CompareSide;
  right: CompareSide;
  onTimeChange?: (seconds: number) => void;
  ref?: Ref<VideoPlayerHandle>;
}) {
  const lead = useRef<HTMLVideoElement>(null);
  const follow = useRef<HTMLVideoElement>(null);
  const [time, setTime] = useState(0);
  const [durations, setDurations] = useState<[number, number]>([0, 0]);
  const [playing, setPlaying] = useState(false);
  const stopAt = useRef<number | null>(null);
  const duration = Math.max(...durations);

  const report = useCallback(
    (seconds: number) => {
      setTime(seconds);
      onTimeChange?.(seconds);
    },
    [onTimeChange],
  );
  const both = () => [lead.current, follow.current].filter((v): v is HTMLVideoElement => v !== null);
  const seek = useCallback(
    (seconds: number) => {
      stopAt.current = null;
      const to = Math.max(0, seconds);
      for (const v of [lead.current, follow.current]) {
        if (!v) continue;
        v.currentTime = Number.isFinite(v.duration) ? Math.min(v.duration, to) : to;
      }
      report(to);
    },
    [report],
  );
  const pause = useCallback(() => {
    for (const v of [lead.current, follow.current]) v?.pause();
    setPlaying(false);
  }, []);
  const play = useCallback(() => {
    const [a, b] = [lead.current, follow.current];
    if (b && a)
      b.currentTime = Math.min(a.currentTime, Number.isFinite(b.duration) ? b.duration : a.currentTime);
    for (const v of [a, b]) void v?.play().catch(() => setPlaying(false));
    setPlaying(true);
  }, []);
  const toggle = useCallback(() => (playing ? pause() : play()), [playing, pause, play]);

  useImperativeHandle(
    ref,
    () => ({
      seek,
      play(from: number, until?: number | null) {
        seek(from);
        play();
        stopAt.current = until ?? null;
      },
      stopDrawing() {},
    }),
    [seek, play],
  );

  // Space plays or pauses both, unless a field or a button has the key.
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.key !== ' ' || e.defaultPrevented || document.querySelector('dialog[open]')) return;
      const t = e.target;
      if (t instanceof HTMLElement && t.closest('input, textarea, select, button, a, [contenteditable]'))
        return;
      e.preventDefault();
      toggle();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [toggle]);

  const sides: [CompareSide, typeof lead, 0 | 1][] = [
    [left, lead, 0],
    [right, follow, 1],
  ];
  return (
    <div className="overflow-hidden rounded-2xl border border-zinc-800 bg-black">
      <div className="grid grid-cols-1 gap-px bg-zinc-800 sm:grid-cols-2">
        {sides.map(([side, el, i]) => (
          <figure key={i} className="relative bg-black">
            <video
              ref={el}
              src={side.src}
              playsInline
              muted={i === 1}
              preload="metadata"
              aria-label={side.title}
              className="aspect-video w-full cursor-pointer bg-black"
              onClick={toggle}
              onLoadedMetadata={(e) => {
                const d = e.currentTarget.duration;
                setDurations((ds) => (i === 0 ? [d, ds[1]] : [ds[0], d]));
              }}
              onTimeUpdate={(e) => {
                if (i !== 0) return;
                const now = e.currentTarget.currentTime;
                const until = stopAt.current;
                if (until !== null && now >= until) {
                  pause();
                  seek(until);
                  return;
                }
                const other = follow.current;
                if (other && !other.paused && Math.abs(other.currentTime - now) > DRIFT)
                  other.currentTime = now;
                report(now);
              }}
              onEnded={() => {
                if (both().every((v) => v.ended || v.paused)) setPlaying(false);
              }}
            />
            <figcaption className="absolute top-2 left-2 rounded-md bg-black/70 px-2 py-0.5 font-mono text-xs font-medium text-white">
              {side.label}
            </figcaption>
          </figure>
        ))}
      </div>
      <div className="space-y-1 border-t border-zinc-800 bg-zinc-950 px-3 pt-2 pb-2">
        {[left, right].some((s) => (s.markers ?? []).length > 0) && (
          <div className="space-y-0.5">
            <MarkerLane side={left} duration={duration} onSeek={seek} />
            <MarkerLane side={right} duration={duration} onSeek={seek} />
          </div>
        )}
        <div className="flex items-center gap-2">
          <span className="w-6 shrink-0" aria-hidden />
          <div className="flex-1">
            <Scrubber label="Seek both versions" time={time} duration={duration} onSeek={seek} />
          </div>
        </div>
        <div className="flex items-center gap-1">
          <button
            type="button"
            className={playerControl}
            aria-label={playing ? 'Pause both' : 'Play both'}
            onClick={toggle}
          >
            {playing ? <Pause className="size-5" aria-hidden /> : <Play className="size-5" aria-hidden />}
          </button>
          <span className="px-1 font-mono text-xs text-zinc-300 tabular-nums">
            {formatVideoTime(time)} / {formatVideoTime(duration)}
          </span>
          <span className="flex-1" />
          <span className="text-xs text-zinc-400">
            {left.label} and {right.label} play in sync
          </span>
        </div>
      </div>
    </div>
  );
}
