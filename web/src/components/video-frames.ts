import { useCallback, useEffect, useRef, useState } from 'react';

/** The size (px) of a marker's frame thumbnail. */
export const THUMB_WIDTH = 160;
export const THUMB_HEIGHT = 90;

/**
 * Grabs frames of one clip, one at a time: a video element of its own (never
 * shown) is seeked to each asked time and drawn onto a canvas, and onThumb
 * receives a JPEG data URL. A frame that cannot be read (a clip from another
 * origin without CORS, one that does not decode) is skipped.
 */
class FrameGrabber {
  private queue: number[] = [];
  private asked = new Set<number>();
  private busy = false;
  private video: HTMLVideoElement | null = null;

  constructor(
    private readonly src: string,
    private readonly onThumb: (time: number, url: string) => void,
  ) {}

  /** Asks for the frame at `time` (once; asking again is free). */
  want(time: number) {
    if (!this.src || this.asked.has(time)) return;
    this.asked.add(time);
    this.queue.push(time);
    this.next();
  }

  /** Lets go of the clip. */
  close() {
    this.queue = [];
    this.video?.removeAttribute('src');
    this.video?.load();
    this.video = null;
  }

  private element(): HTMLVideoElement {
    if (this.video) return this.video;
    const v = document.createElement('video');
    v.crossOrigin = 'anonymous';
    v.muted = true;
    v.preload = 'auto';
    v.playsInline = true;
    v.src = this.src;
    this.video = v;
    return v;
  }

  private next() {
    if (this.busy) return;
    const time = this.queue.shift();
    if (time === undefined) return;
    this.busy = true;
    const video = this.element();
    const done = () => {
      this.busy = false;
      this.next();
    };
    const draw = () => {
      try {
        const canvas = document.createElement('canvas');
        canvas.width = THUMB_WIDTH;
        canvas.height = THUMB_HEIGHT;
        const ctx = canvas.getContext('2d');
        if (ctx && video.videoWidth > 0) {
          // Letterboxed into 16:9, as the player shows it.
          const scale = Math.min(THUMB_WIDTH / video.videoWidth, THUMB_HEIGHT / video.videoHeight);
          const w = video.videoWidth * scale;
          const h = video.videoHeight * scale;
          ctx.fillStyle = '#000';
          ctx.fillRect(0, 0, THUMB_WIDTH, THUMB_HEIGHT);
          ctx.drawImage(video, (THUMB_WIDTH - w) / 2, (THUMB_HEIGHT - h) / 2, w, h);
          this.onThumb(time, canvas.toDataURL('image/jpeg', 0.7));
        }
      } catch {
        // A tainted canvas (no CORS): no thumbnail, the preview keeps its words.
      }
      done();
    };
    const seek = () => {
      video.addEventListener('seeked', draw, { once: true });
      video.currentTime = time;
    };
    if (video.readyState >= 1) seek();
    else {
      video.addEventListener('loadedmetadata', seek, { once: true });
      video.addEventListener('error', done, { once: true });
    }
  }
}

const NONE: ReadonlyMap<number, string> = new Map();

/**
 * Thumbnails of a clip's frames, grabbed on demand: want(time) asks for one,
 * and thumbs maps each time to its picture once it is ready.
 */
export function useFrameThumbnails(src: string) {
  const [grabbed, setGrabbed] = useState<{ src: string; thumbs: ReadonlyMap<number, string> }>({
    src: '',
    thumbs: NONE,
  });
  const grabber = useRef<FrameGrabber | null>(null);
  useEffect(() => {
    const g = new FrameGrabber(src, (time, url) =>
      setGrabbed((prev) => ({ src, thumbs: new Map(prev.src === src ? prev.thumbs : NONE).set(time, url) })),
    );
    grabber.current = g;
    return () => {
      g.close();
      grabber.current = null;
    };
  }, [src]);
  const want = useCallback((time: number) => grabber.current?.want(time), []);
  return { thumbs: grabbed.src === src ? grabbed.thumbs : NONE, want };
}
