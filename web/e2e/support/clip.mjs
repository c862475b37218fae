// Test videos made with Debian's ffmpeg.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { scratchDir } from './scratch.mjs';

/** A test-pattern MP4 of `seconds` named `name` in a fresh temp folder, seekable (faststart). */
export function makeClip(name, seconds) {
  const file = path.join(scratchDir('loupe-clip-'), name);
  execFileSync('ffmpeg', [
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc=duration=${seconds}:size=320x180:rate=10`,
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    file,
  ]);
  return file;
}
