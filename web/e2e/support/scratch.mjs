// Scratch folders for tests, removed when the test process exits (however
// its tests ended), so runs leave nothing behind in the system's temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const made = new Set();
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty folder under the system's temp dir, named after prefix. */
export function scratchDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}
