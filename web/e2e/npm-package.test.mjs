// The npm packages as a Firebase team installs them: `make dist`'s packing
// (go run ./internal/dist) for this machine's platform, installed from the
// tarballs into an empty project with npm offline, then `npx loupe` runs the
// Node Admin SDK against the emulator. firebase-admin is web/'s own (NODE_PATH),
// as no package outside the tarballs may come from the network.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { scratchDir } from './support/scratch.mjs';

const web = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.join(web, '..');
const version = '0.0.0-npmtest';

// check.mjs writes a document through the Admin SDK and reads it back, as a
// team's test would under `loupe exec` (FIRESTORE_EMULATOR_HOST set by it).
const check = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { initializeApp } = require('firebase-admin/app');
const { getFirestore } = require('firebase-admin/firestore');
const db = getFirestore(initializeApp({ projectId: 'demo-npm' }));
await db.doc('films/npm').set({ title: 'Installed from npm' });
const snap = await db.doc('films/npm').get();
console.log('read back:', snap.get('title'));
process.exit(0);
`;

/** Runs a command in dir, returning its status and output; throws when it cannot start. */
function run(dir, command, args, env = {}) {
  const r = spawnSync(command, args, { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { code: r.status, signal: r.signal, out: r.stdout + r.stderr };
}

describe('the npm package', () => {
  let project;
  const nodeEnv = { NODE_PATH: path.join(web, 'node_modules'), npm_config_update_notifier: 'false' };

  /** Runs `npx loupe ARGS` in the project, offline, as a team's script would. */
  const loupe = (...args) => run(project, 'npx', ['--offline', 'loupe', ...args], nodeEnv);

  before(() => {
    const out = scratchDir('loupe-dist-');
    const dist = run(repo, 'go', [
      'run',
      './internal/dist',
      '-platforms',
      'host',
      '-out',
      out,
      '-version',
      version,
      '-commit',
      'npmtest',
    ]);
    assert.equal(dist.code, 0, dist.out);
    const tarballs = readdirSync(path.join(out, 'npm')).map((f) => path.join(out, 'npm', f));
    assert.equal(tarballs.length, 2, `want the main and this platform's package: ${tarballs}`);

    project = scratchDir('loupe-npm-project-');
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'team-app', private: true }));
    writeFileSync(path.join(project, 'check.mjs'), check);
    // A cache of its own, empty: nothing can come from a cache either.
    const cache = scratchDir('loupe-npm-cache-');
    const install = run(project, 'npm', [
      'install',
      '--offline',
      '--no-audit',
      '--no-fund',
      '--cache',
      cache,
      '--save-dev',
      ...tarballs,
    ]);
    assert.equal(install.code, 0, install.out);
  });

  it('runs loupe emulators:exec: the Admin SDK writes and reads a document', () => {
    const r = loupe('emulators:exec', '--only', 'firestore', 'node check.mjs');
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /read back: Installed from npm/);
  });

  it('prints the version it was packed with', () => {
    const r = loupe('--version');
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`^loupe version ${version} \\(commit npmtest, go`));
  });

  it("exits with the command's status", () => {
    const r = loupe('emulators:exec', '--only', 'firestore', 'node -e "process.exit(7)"');
    assert.equal(r.code, 7, r.out);
  });

  it('passes SIGTERM on to loupe, which stops cleanly', async () => {
    const shim = spawn(
      path.join(project, 'node_modules', '.bin', 'loupe'),
      ['serve', '--in-memory', '--port', '0', '--only', 'firestore'],
      {
        cwd: project,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    shim.stderr.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => shim.on('exit', (code, signal) => resolve({ code, signal })));
    await new Promise((resolve, reject) => {
      shim.stdout.on('data', (d) => {
        out += d;
        if (out.includes('Loupe is running at')) resolve();
      });
      shim.on('exit', () => reject(new Error(`loupe exited before serving:\n${out}`)));
    });
    shim.kill('SIGTERM');
    // Without forwarding, node dies of the signal and leaves loupe running.
    assert.deepEqual(await exited, { code: 0, signal: null }, out);
  });
});
