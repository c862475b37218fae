import { useImperativeHandle, useRef, useState, type Ref } from 'react';

/** A point of interest on the player's timeline. */
export interface VideoMarker {
  id: string;
  /** Seconds into the video. */
  time: number;
  /** What the marker is, for its tooltip and accessible name. */
  label: string;
}

/** What a parent can do with the player. */
export interface VideoPlayerHandle {
  /** Moves playback to `seconds` and brings the player into view. */
  seek: (seconds: number) => void;
}

/** Where a marker sits on the timeline, as a percentage (0 without a known duration). */
export function markerPosition(time: number, duration: number): number {
  if (!(duration > 0) || !Number.isFinite(time)) return 0;
  return Math.min(100, Math.max(0, (time / duration) * 100));
}

/**
 * A video with native controls and a marker rail beneath it: each marker
 * seeks to its moment. Reports the playback position as it changes.
 */
export function VideoPlayer({
  src,
  title,
  markers = [],
  onTimeChange,
  ref,
}: {
  src: string;
  title: string;
  markers?: VideoMarker[];
  onTimeChange?: (seconds: number) => void;
  ref?: Ref<VideoPlayerHandle>;
}) {
  const video = useRef<HTMLVideoElement>(null);
  const [duration, setDuration] = useState(0);
  useImperativeHandle(
    ref,
    () => ({
      seek(seconds: number) {
        const v = video.current;
        if (!v) return;
        v.currentTime = seconds;
        onTimeChange?.(seconds);
        v.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
      },
    }),
    [onTimeChange],
  );
  return (
    <div className="overflow-hidden rounded-2xl border border-zinc-800 bg-black">
      <video
        ref={video}
        src={src}
        controls
        playsInline
        preload="metadata"
        aria-label={title}
        className="aspect-video w-full bg-black"
        onLoadedMetadata={(e) => setDuration(e.currentTarget.duration)}
        onTimeUpdate={(e) => onTimeChange?.(e.currentTarget.currentTime)}
        onSeeked={(e) => onTimeChange?.(e.currentTarget.currentTime)}
      />
      <div
        className="relative h-7 border-t border-zinc-800 bg-zinc-950"
        aria-label="Comment markers"
        role="group"
      >
        <div className="absolute inset-x-3 top-1/2 h-1 -translate-y-1/2 rounded-full bg-zinc-800" />
        {markers.map((m) => (
          <button
            key={m.id}
            type="button"
            title={m.label}
            aria-label={`Jump to ${m.label}`}
            onClick={() => {
              if (video.current) video.current.currentTime = m.time;
              onTimeChange?.(m.time);
            }}
            className="absolute top-1/2 size-3 -translate-x-1/2 -translate-y-1/2 rounded-full bg-amber-400 ring-2 ring-zinc-950 transition hover:scale-125 focus-visible:outline-2 focus-visible:outline-brand-400"
            style={{ left: `calc(0.75rem + (100% - 1.5rem) * ${markerPosition(m.time, duration) / 100})` }}
          />
        ))}
      </div>
    </div>
  );
}
