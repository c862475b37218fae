/** How long capturePoster waits for the browser to decode a frame. */
const POSTER_TIMEOUT_MS = 10_000;

/**
 * A still of a video file for lists: the frame at `at` seconds (or at the
 * middle of a shorter clip) as a JPEG at most `width` px wide; null when the
 * browser cannot decode it within ten seconds.
 */
export function capturePoster(file: Blob, at = 1, width = 480): Promise<Blob | null> {
  const url = URL.createObjectURL(file);
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  video.preload = 'auto';
  return new Promise<Blob | null>((resolve) => {
    const timer = window.setTimeout(() => resolve(null), POSTER_TIMEOUT_MS);
    const done = (blob: Blob | null) => {
      window.clearTimeout(timer);
      resolve(blob);
    };
    video.onerror = () => done(null);
    video.onloadeddata = () => {
      const d = Number.isFinite(video.duration) ? video.duration : 0;
      video.currentTime = Math.min(at, d / 2);
    };
    video.onseeked = () => {
      const scale = Math.min(1, width / (video.videoWidth || width));
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(video.videoWidth * scale));
      canvas.height = Math.max(1, Math.round(video.videoHeight * scale));
      const ctx = canvas.getContext('2d');
      if (!ctx) return done(null);
      ctx.drawImage(video, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(done, 'image/jpeg', 0.8);
    };
    video.src = url;
  }).finally(() => {
    video.removeAttribute('src');
    video.load();
    URL.revokeObjectURL(url);
  });
}
