// Starts a real `loupe serve` for JS-side tests (Firebase JS SDK in Node and in
// Chromium) and stops it. The binary is $LOUPE_BIN or ../bin/loupe, which
// `make test` builds first.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Path of the loupe binary under test. */
export const loupeBin = process.env.LOUPE_BIN ?? path.resolve(webDir, '../bin/loupe');

/** The demo project the web build is configured for (web/.env). */
export const projectId = 'demo-loupe';

/**
 * Starts `loupe serve` on a free port, serving the built app from web/dist,
 * in memory unless dataDir is given. Resolves once /healthz answers 200.
 * With rules: true the repository's firestore.rules and storage.rules are enforced.
 * With functions: true loupe also builds and runs the repository's functions
 * (with the hosting rewrites of firebase.json), and this waits until they run.
 * @param {{ dataDir?: string, args?: string[], config?: object, env?: Record<string,string>, rules?: boolean, functions?: boolean }} [opts]
 * @returns {Promise<{ url: string, host: string, port: number, pid: number, dataDir: string, adminHost: string, log: () => string, stop: () => Promise<void> }>}
 */
export async function startLoupe(opts = {}) {
  const scratch = mkdtempSync(path.join(tmpdir(), 'loupe-e2e-'));
  const config = opts.config ?? { hosting: { public: path.join(webDir, 'dist') } };
  if (opts.functions) {
    const repo = JSON.parse(readFileSync(path.resolve(webDir, '../firebase.json'), 'utf8'));
    config.functions = { source: path.resolve(webDir, '../functions') };
    config.hosting = { ...config.hosting, rewrites: repo.hosting.rewrites };
  }
  if (opts.rules) {
    config.firestore = { rules: path.resolve(webDir, '../firestore.rules') };
    config.storage = { rules: path.resolve(webDir, '../storage.rules') };
  }
  const configPath = path.join(scratch, 'firebase.json');
  writeFileSync(configPath, JSON.stringify(config));
  const dataDir = opts.dataDir ?? path.join(scratch, 'data');
  const args = [
    'serve',
    '--port',
    '0',
    '--project',
    projectId,
    '--config',
    configPath,
    '--data-dir',
    dataDir,
  ];
  if (!opts.dataDir) args.push('--in-memory');
  const child = spawn(loupeBin, [...args, ...(opts.args ?? [])], {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const strict = (opts.args ?? []).includes('--strict-credentials');
  let adminHost = '';
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`loupe serve did not start:\n${log}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      log += d;
      const m = out.match(/Loupe is running at (\S+)/);
      const admin = out.match(/Admin port [^\n]*http:\/\/(\S+)/);
      if (admin) adminHost = admin[1];
      if (m && (!strict || admin)) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`loupe serve exited with ${code}:\n${log}`));
    });
  });
  await waitHealthy(url);
  if (opts.functions) await waitForFunctions(url);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    url,
    host: new URL(url).host,
    port: Number(new URL(url).port),
    pid: child.pid,
    dataDir,
    /** With --strict-credentials: host:port of the admin port, where the Admin SDKs' owner credential is the admin. */
    adminHost,
    log: () => log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

async function waitHealthy(url) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`loupe serve at ${url} never became healthy`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// loupe builds the functions module before running it: allow a cold Go build.
async function waitForFunctions(url) {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const state = await (await fetch(`${url}/emulator/v1/functions`)).json();
    if (state.state === 'failed') throw new Error(`the functions failed: ${state.detail}`);
    if (state.state === 'running') return;
    if (Date.now() > deadline) throw new Error(`the functions are still ${state.state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A TCP port free right now on 127.0.0.1, for a loupe that must keep its port across restarts. */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
