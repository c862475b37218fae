import { blobReader, readFrameRate } from './mp4';

/** A video the browser read: its length and frame rate (null when the file does not say) and frame size. */
export interface ProbedVideo {
  duration: number | null;
  frameRate: number | null;
  width: number;
  height: number;
}

/** What probing found: a video that plays here (perhaps with a warning), or why it cannot be sent. */
export type Probe = { ok: true; video: ProbedVideo; warning: string | null } | { ok: false; reason: string };

/** How long the browser gets to read a file's metadata. */
const PROBE_TIMEOUT_MS = 15_000;

/** Whether a file is a QuickTime movie, which iPhones record in HEVC (H.265). */
export function isQuickTime(file: { name: string; type: string }): boolean {
  return file.type === 'video/quicktime' || /\.mov$/i.test(file.name);
}

/** Why a file that did not play here cannot be sent, in words for the person. */
export function unplayableReason(file: { name: string; type: string }): string {
  return isQuickTime(file)
    ? `“${file.name}” cannot be played in this browser. QuickTime .mov files recorded in HEVC (H.265) do not play in every browser: export it as MP4 (H.264) and choose it again.`
    : `“${file.name}” cannot be played: it is not a video this browser can read. Choose an MP4 (H.264) or WebM video.`;
}

/** The warning a .mov that plays here still gets: the mentor's browser may not play HEVC. */
export const HEVC_WARNING =
  'QuickTime .mov files may be HEVC (H.265), which not every browser plays. If your mentor cannot play it, export it as MP4 (H.264).';

/**
 * Reads a video file in the browser before it is uploaded: a <video>
 * element loads its metadata, which gives its length and frame size and
 * fails for a file this browser cannot play (not a video, or a codec it
 * lacks). An audio-only file counts as unplayable. The frame rate comes
 * from the file's MP4 boxes (null for other containers).
 */
export async function probeVideo(file: File): Promise<Probe> {
  const [probe, frameRate] = await Promise.all([
    playable(file),
    readFrameRate(blobReader(file)).catch(() => null),
  ]);
  return probe.ok ? { ...probe, video: { ...probe.video, frameRate } } : probe;
}

function playable(file: File): Promise<Probe> {
  return new Promise((resolve) => {
    const video = document.createElement('video');
    const url = URL.createObjectURL(file);
    let timer = 0;
    const done = (result: Probe) => {
      window.clearTimeout(timer);
      video.removeAttribute('src');
      video.load();
      URL.revokeObjectURL(url);
      resolve(result);
    };
    timer = window.setTimeout(() => done({ ok: false, reason: unplayableReason(file) }), PROBE_TIMEOUT_MS);
    video.preload = 'metadata';
    video.muted = true;
    video.onerror = () => done({ ok: false, reason: unplayableReason(file) });
    video.onloadedmetadata = () => {
      if (!(video.videoWidth > 0)) {
        done({ ok: false, reason: unplayableReason(file) });
        return;
      }
      const duration = Number.isFinite(video.duration) && video.duration > 0 ? video.duration : null;
      done({
        ok: true,
        video: { duration, frameRate: null, width: video.videoWidth, height: video.videoHeight },
        warning: isQuickTime(file) ? HEVC_WARNING : null,
      });
    };
    video.src = url;
  });
}
