// Benchmark (make bench; FIREBASE_TOOLS=path/to/firebase to compare): a
// Node.js codebase's cold start, and a Firestore write → its 1st-gen
// onWrite trigger's start, p50/p99 over 200 writes, on loupe and, when
// FIREBASE_TOOLS names a firebase-tools CLI, on its functions emulator with
// the same codebase. The trigger appends the time it starts to a file.
//
// loupe: from the REST commit's send to the trigger's start. firebase-tools:
// its Firestore emulator needs a Java jar it downloads, which this machine
// cannot, so the bench posts to the functions emulator what the Firestore
// emulator posts on each commit (the legacy event, to
// /functions/projects/{p}/triggers/{key}, the key of its first load), from that post's send to the
// trigger's start: loupe's figure includes the commit, firebase-tools' does not.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loupeBin } from '../e2e/support/loupe.mjs';

const WRITES = 200;
const project = 'demo-bench';
const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../e2e/fixtures/functions');

// The codebase: one trigger that notes when it starts.
const dir = mkdtempSync(path.join(fixtures, 'bench-'));
const source = path.join(dir, 'functions');
const out = path.join(dir, 'starts.txt');
cpSync(path.join(fixtures, 'v1', 'package.json'), path.join(source, 'package.json'));
writeFileSync(
  path.join(source, 'index.js'),
  `const { appendFileSync } = require('node:fs');
const functions = require('firebase-functions/v1');
exports.noteStart = functions.firestore.document('bench/{id}').onWrite(() => {
  appendFileSync(${JSON.stringify(out)}, String(performance.timeOrigin + performance.now()) + '\\n');
  return null;
});
`,
);
writeFileSync(path.join(dir, 'firebase.json'), JSON.stringify({ functions: { source: 'functions' } }));
/** A TCP port free right now on 127.0.0.1. */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
// firebase-tools would download its Emulator UI; the bench needs none. Its
// other emulators get free ports, away from any other run on this machine.
const toolsPorts = {};
for (const name of ['functions', 'hub', 'logging', 'eventarc', 'tasks'])
  toolsPorts[name] = { port: await freePort() };
writeFileSync(
  path.join(dir, 'firebase.tools.json'),
  JSON.stringify({
    functions: { source: 'functions' },
    emulators: { ui: { enabled: false }, ...toolsPorts },
  }),
);

const starts = () =>
  existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Sends WRITES events one at a time with send(i) and returns the latencies to each trigger start. */
async function measure(send) {
  const latencies = [];
  for (let i = 0; i < WRITES; i++) {
    const seen = starts().length;
    const sent = performance.timeOrigin + performance.now();
    await send(i);
    for (let waited = 0; starts().length === seen; waited++) {
      if (waited > 20_000) throw new Error(`event ${i} never started the trigger`);
      await sleep(1);
    }
    latencies.push(starts()[seen] - sent);
  }
  latencies.sort((a, b) => a - b);
  return { p50: latencies[Math.floor(WRITES / 2)], p99: latencies[Math.floor((WRITES * 99) / 100)] };
}

function run(cmd, args, env, ready) {
  const child = spawn(cmd, args, {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const found = new Promise((resolve, reject) => {
    const look = (d) => {
      log += d;
      const m = ready(log);
      if (m) resolve(m);
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`${cmd} exited with ${code}:\n${log}`)));
  });
  return { child, found, log: () => log };
}

const ms = (v) => `${v.toFixed(1)} ms`;

async function benchLoupe() {
  rmSync(out, { force: true });
  const started = performance.now();
  const p = run(
    loupeBin,
    ['serve', '--port', '0', '--in-memory', '--project', project, '--config', 'firebase.json'],
    {},
    (l) => l.match(/Loupe is running at (\S+)/)?.[1],
  );
  const url = await p.found;
  for (;;) {
    const st = await (await fetch(`${url}/emulator/v1/functions`)).json();
    if (st.state === 'running') break;
    if (st.state === 'failed') throw new Error(st.detail);
    await sleep(5);
  }
  const cold = performance.now() - started;
  const db = `projects/${project}/databases/(default)`;
  const result = await measure((i) =>
    fetch(`${url}/v1/${db}/documents:commit`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: JSON.stringify({
        writes: [
          { update: { name: `${db}/documents/bench/d${i}`, fields: { n: { integerValue: String(i) } } } },
        ],
      }),
    }),
  );
  p.child.kill('SIGTERM');
  return { cold, ...result };
}

async function benchFirebaseTools(firebase) {
  rmSync(out, { force: true });
  const started = performance.now();
  const p = run(
    firebase,
    ['emulators:start', '--only', 'functions', '--project', project, '--config', 'firebase.tools.json'],
    {},
    (l) => /All emulators ready/.test(l),
  );
  try {
    await p.found;
  } catch (err) {
    p.child.kill('SIGINT');
    throw err;
  }
  const cold = performance.now() - started;
  const port = toolsPorts.functions.port;
  try {
    const result = await measure(async (i) => {
      const name = `projects/${project}/databases/(default)/documents/bench/d${i}`;
      const res = await fetch(
        `http://127.0.0.1:${port}/functions/projects/${project}/triggers/us-central1-noteStart-0`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            eventType: 'providers/cloud.firestore/eventTypes/document.write',
            resource: name,
            eventId: `e${i}`,
            timestamp: new Date().toISOString(),
            data: {
              value: {
                name,
                fields: { n: { integerValue: String(i) } },
                createTime: new Date().toISOString(),
                updateTime: new Date().toISOString(),
              },
            },
            params: { id: `d${i}` },
          }),
        },
      );
      if (!res.ok) throw new Error(`firebase-tools answered ${res.status}: ${await res.text()}\n${p.log()}`);
    });
    return { cold, ...result };
  } finally {
    p.child.kill('SIGINT');
    await new Promise((r) => p.child.on('exit', r));
  }
}

try {
  const rows = [['loupe', await benchLoupe()]];
  if (process.env.FIREBASE_TOOLS)
    rows.push(['firebase-tools', await benchFirebaseTools(process.env.FIREBASE_TOOLS)]);
  for (const [name, r] of rows)
    console.log(
      `${name}: Node.js codebase cold start ${ms(r.cold)}; write → trigger start p50 ${ms(r.p50)}, p99 ${ms(r.p99)} (${WRITES} writes)`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
