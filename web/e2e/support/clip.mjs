// Test videos made with Debian's ffmpeg.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { scratchDir } from './scratch.mjs';

/** A test-pattern MP4 of `seconds` at `fps` frames a second named `name` in a fresh temp folder, seekable (faststart). */
export function makeClip(name, seconds, fps = 10) {
  const file = path.join(scratchDir('loupe-clip-'), name);
  execFileSync('ffmpeg', [
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc=duration=${seconds}:size=320x180:rate=${fps}`,
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    file,
  ]);
  return file;
}
