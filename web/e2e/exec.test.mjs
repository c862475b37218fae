// `loupe exec -- node --test FILE`, as CI runs emulator tests with
// `firebase emulators:exec`: the file finds loupe through the Emulator Hub
// alone, and loupe exec exits with the file's status.
import { spawn } from 'node:child_process';
import path from 'node:path';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loupeBin } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Runs `loupe exec` with a free hub port, in a folder without firebase.json. */
function loupeExec(...command) {
  const scratch = scratchDir('loupe-exec-');
  // Without NODE_TEST_CONTEXT the inner `node --test` runs its file as a
  // top-level run, not as a subtest of this one.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(
    loupeBin,
    ['exec', '--hub-port', '0', '--only', 'firestore,storage', '--', ...command],
    {
      cwd: scratch,
      // TMPDIR keeps the hub's locator file out of the shared temporary folder.
      env: { ...env, TMPDIR: scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe('loupe exec', () => {
  it('runs a rules-unit-testing file that finds loupe through the hub, and exits 0 when it passes', async () => {
    const { code, out } = await loupeExec(
      process.execPath,
      '--test',
      path.join(fixtures, 'hub-discovery.mjs'),
    );
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 3$/m, out);
  });

  it('exits non-zero when the test fails', async () => {
    const { code, out } = await loupeExec(
      process.execPath,
      '--test',
      path.join(fixtures, 'hub-discovery-failing.mjs'),
    );
    assert.equal(code, 1, out);
    assert.match(out, /^# fail 1$/m, out);
  });
});

/** Runs `loupe ARGS…` in a scratch folder, as a package.json script runs `firebase ARGS…`. */
function loupeRun(args) {
  const scratch = scratchDir('loupe-emulators-exec-');
  const env = { ...process.env, TMPDIR: scratch };
  for (const name of Object.keys(env)) if (name.endsWith('_EMULATOR_HOST')) delete env[name];
  const child = spawn(loupeBin, args, { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
}

describe('loupe emulators:exec', () => {
  const check = path.join(fixtures, 'admin-roundtrip.mjs');

  it('runs a script that writes and reads through the Node Admin SDK, after the ready line, and exits 0', async () => {
    const { code, out } = await loupeRun([
      'emulators:exec',
      '--only',
      'firestore',
      '--project',
      'demo-script',
      '--port',
      '0',
      `"${process.execPath}" "${check}"`,
    ]);
    assert.equal(code, 0, out);
    assert.match(
      out,
      /All emulators ready! It is now safe to connect your app\.\n[^]*wrote and read checks\/roundtrip in demo-script/,
      out,
    );
  });

  it("exits with the script's own code", async () => {
    const { code, out } = await loupeRun([
      'emulators:exec',
      '--only',
      'firestore',
      '--port',
      '0',
      `"${process.execPath}" "${check}" 3`,
    ]);
    assert.equal(code, 3, out);
    assert.match(out, /script ".*" exited with code 3/, out);
  });
});
