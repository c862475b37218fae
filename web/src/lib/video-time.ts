/** A video position as a player shows it: 0:03, 1:05, 1:02:03. */
export function formatVideoTime(seconds: number): string {
  const total = Math.max(0, Math.floor(Number.isFinite(seconds) ? seconds : 0));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** How comment timecodes read: clock time to the hundredth, or SMPTE frames at the clip's rate. */
export interface Timecode {
  mode: 'clock' | 'frames';
  /** Frames per second of the clip (for 'frames'). */
  fps: number;
}

/**
 * A moment told apart from the next frame: 'clock' gives 0:03 on a whole
 * second and 0:01.25 otherwise (hundredths); 'frames' gives 00:00:01:06,
 * the frame counted from 0 at the clip's rate.
 */
export function formatTimecode(seconds: number, timecode: Timecode): string {
  const t = Math.max(0, Number.isFinite(seconds) ? seconds : 0);
  if (timecode.mode === 'frames') {
    const fps = Math.max(1, Math.round(timecode.fps));
    const frames = Math.floor(t * fps + 1e-3);
    const pad = (n: number) => String(n).padStart(2, '0');
    const whole = Math.floor(frames / fps);
    return `${pad(Math.floor(whole / 3600))}:${pad(Math.floor((whole % 3600) / 60))}:${pad(whole % 60)}:${pad(frames % fps)}`;
  }
  const hundredths = Math.floor(t * 100 + 1e-3) % 100;
  const clock = formatVideoTime(t);
  return hundredths === 0 ? clock : `${clock}.${String(hundredths).padStart(2, '0')}`;
}
