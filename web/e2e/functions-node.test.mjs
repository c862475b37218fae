// Node.js functions as a Firebase team writes them (fixtures/functions: a
// 1st-gen JavaScript codebase, a 2nd-gen TypeScript one, and one whose
// module fails to load), run by `loupe exec` as by `firebase
// emulators:exec`: each checks file asserts what the team's own tests would,
// through the Admin SDK, the JS SDK and @firebase/rules-unit-testing.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loupeBin } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'functions');

/** Runs `loupe exec --config CONFIG -- node --test CHECKS` in the fixtures folder. */
function loupeExec(config, checks, ...flags) {
  const env = { ...process.env, TMPDIR: scratchDir('loupe-functions-') };
  // Without NODE_TEST_CONTEXT the inner `node --test` runs its file as a
  // top-level run, not as a subtest of this one.
  delete env.NODE_TEST_CONTEXT;
  for (const name of Object.keys(env)) if (name.endsWith('_EMULATOR_HOST')) delete env[name];
  const child = spawn(
    loupeBin,
    ['exec', '--config', config, '--hub-port', '0', ...flags, '--', process.execPath, '--test', checks],
    { cwd: fixtures, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe('Node.js functions under loupe exec', () => {
  it('runs the 1st-gen codebase: triggers, blocking, storage, database, schedules, HTTPS, callable, tasks', async () => {
    const { code, out } = await loupeExec('firebase.v1.json', 'v1-checks.mjs');
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 14$/m, out);
    // The start-up report, before the command runs: each function as
    // firebase-tools announces it, the codebase that failed to load with
    // its error, then the ready line.
    const ready = out.indexOf('All emulators ready! It is now safe to connect your app.');
    const checksRan = out.indexOf('# pass 14');
    assert.ok(ready >= 0 && ready < checksRan, out);
    assert.match(
      out,
      /functions\[us-central1-hello\]: http function initialized \(http:\/\/127\.0\.0\.1:\d+\/demo-loupe\/us-central1\/hello\)\./,
      out,
    );
    assert.match(out, /functions\[us-central1-recomputeTotal\]: firestore function initialized\./, out);
    const failed = out.indexOf('Functions codebase "broken"');
    assert.ok(failed >= 0 && failed < ready, out);
    assert.match(out.slice(failed, ready), /inventory is not configured: set INVENTORY_URL/);
    // A process warning is a warning, not an error.
    assert.match(out, /level=WARN msg="MetadataLookupWarning: received unexpected error/, out);
    assert.doesNotMatch(out, /level=ERROR msg=".*MetadataLookupWarning/, out);
    // The machine's node against the codebase's engines.node (20), as firebase-tools says it.
    assert.match(
      out,
      new RegExp(
        `Using node@${process.versions.node.split('.')[0]} from host\\.|Your requested \\\\"node\\\\" version \\\\"20\\\\"`,
      ),
      out,
    );
  });

  it('under --strict, a codebase that fails to load fails the run before the command', async () => {
    const { code, out } = await loupeExec('firebase.v1.json', 'v1-checks.mjs', '--strict');
    assert.equal(code, 1, out);
    assert.match(
      out,
      /functions codebase "broken" failed to load, and --strict runs the command only when every codebase loads/,
      out,
    );
    assert.doesNotMatch(out, /^# pass/m, out);
  });

  it('builds the 2nd-gen TypeScript codebase with its own build script, then runs it', async () => {
    rmSync(path.join(fixtures, 'v2', 'lib'), { recursive: true, force: true });
    const { code, out } = await loupeExec('firebase.v2.json', 'v2-checks.mjs');
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 15$/m, out);
  });
});
