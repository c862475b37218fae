// Benchmark (make bench): the Realtime Database through the JS SDK in Node,
// over the WebSocket protocol, against a loupe on disk.
//   - write → another client's listener: p50/p99 over 300 writes;
//   - 1,000 listeners (10 clients × 100 paths), each write seen by all:
//     p50/p99 fan-out latency;
//   - writes acknowledged per second, one at a time and 50 in flight;
//   - start time (spawn → healthy) and RSS after the run.
// The official emulator (a Java jar firebase-tools downloads) cannot be
// fetched on this machine, so only loupe's figures are printed.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { deleteApp, initializeApp } from 'firebase/app';
import { getDatabase, onValue, ref, set } from 'firebase/database';
import { startLoupe } from '../e2e/support/loupe.mjs';

const started = performance.now();
const loupe = await startLoupe({ config: {}, dataDir: `/tmp/loupe-db-bench-${process.pid}` });
const startMs = performance.now() - started;
const apps = [];
const client = (ns = 'bench') => {
  const app = initializeApp(
    { projectId: 'demo-bench', databaseURL: `http://${loupe.host}?ns=${ns}` },
    `b${apps.length}`,
  );
  apps.push(app);
  return getDatabase(app);
};
const pct = (xs, q) =>
  xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))].toFixed(2);

try {
  // Write → another client's listener.
  const writer = client();
  const reader = client();
  const lat = [];
  let resolveSeen;
  onValue(ref(reader, 'latency'), (s) => {
    const v = s.val();
    if (v) {
      lat.push(performance.now() - v.sentAt);
      resolveSeen?.();
    }
  });
  await set(ref(writer, 'warm'), 1);
  for (let i = 0; i < 300; i++) {
    const seen = new Promise((r) => (resolveSeen = r));
    await Promise.all([set(ref(writer, 'latency'), { i, sentAt: performance.now() }), seen]);
  }
  console.log(
    `database write → listener (JS SDK, WebSocket, on disk): p50 ${pct(lat, 0.5)} ms, p99 ${pct(lat, 0.99)} ms over ${lat.length} writes`,
  );

  // 1,000 listeners across 10 clients.
  const listeners = [];
  let pending = 0;
  let fanout = [];
  let done;
  for (let c = 0; c < 10; c++) {
    const db = client();
    for (let p = 0; p < 100; p++) {
      listeners.push(
        onValue(ref(db, `rooms/r${p}/last`), (s) => {
          const v = s.val();
          if (v && v.round >= 0) {
            fanout.push(performance.now() - v.sentAt);
            if (--pending === 0) done();
          }
        }),
      );
    }
  }
  await new Promise((r) => setTimeout(r, 1000));
  const rounds = [];
  for (let round = 0; round < 10; round++) {
    fanout = [];
    pending = 1000;
    const all = new Promise((r) => (done = r));
    const sentAt = performance.now();
    const update = {};
    for (let p = 0; p < 100; p++) update[`rooms/r${p}/last`] = { round, sentAt };
    await set(
      ref(writer, 'rooms'),
      Object.fromEntries(Object.entries(update).map(([k, v]) => [k.split('/')[1], { last: v }])),
    );
    await all;
    rounds.push(...fanout);
  }
  console.log(
    `database 1,000 listeners (10 clients × 100 paths): every write seen by all, p50 ${pct(rounds, 0.5)} ms, p99 ${pct(rounds, 0.99)} ms over ${rounds.length} deliveries`,
  );

  // Writes per second.
  const seq = client();
  let t = performance.now();
  for (let i = 0; i < 500; i++) await set(ref(seq, `seq/${i % 50}`), i);
  console.log(
    `database sequential writes: ${(500 / ((performance.now() - t) / 1000)).toFixed(0)} acknowledged/s (one client, one at a time)`,
  );
  t = performance.now();
  const inflight = [];
  for (let i = 0; i < 5000; i++) {
    inflight.push(set(ref(seq, `conc/${i % 500}`), i));
    if (inflight.length >= 50) await inflight.shift();
  }
  await Promise.all(inflight);
  console.log(
    `database concurrent writes: ${(5000 / ((performance.now() - t) / 1000)).toFixed(0)} acknowledged/s (one client, 50 in flight)`,
  );

  const rss = readFileSync(`/proc/${loupe.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1];
  console.log(
    `database start: ${startMs.toFixed(0)} ms from spawn to healthy; RSS after the run ${(rss / 1024).toFixed(0)} MiB`,
  );
} finally {
  for (const app of apps) await deleteApp(app);
  await loupe.stop();
}
