// The Storage workload of make bench-peers, through the Node Admin SDK
// (firebase-admin's getStorage, @google-cloud/storage underneath) from
// web/node_modules: small objects up and down, one at a time and then
// `concurrency` at a time (as an app's many clients do), then large ones. The emulator is
// the one FIREBASE_STORAGE_EMULATOR_HOST names. Prints one JSON line of rates.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(fileURLToPath(new URL('../../web/package.json', import.meta.url)));
const { initializeApp } = require('firebase-admin/app');
const { getStorage } = require('firebase-admin/storage');

const [small, smallSize, large, largeSize, concurrency] = process.argv.slice(2).map(Number);
const project = process.env.GCLOUD_PROJECT;
const bucket = getStorage(
  initializeApp({
    projectId: project,
    storageBucket: `${project}.appspot.com`,
  }),
).bucket();

// Each rate runs n operations, `lanes` at a time (each lane one after another);
// a fresh object name a round.
async function rate(n, op, lanes = 1) {
  const start = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return n / ((performance.now() - start) / 1000);
}

const round = Date.now().toString(36);
const smallBody = Buffer.alloc(smallSize, 's');
const largeBody = Buffer.alloc(largeSize, 'l');
const name = (kind, i) => `peers/${round}/${kind}-${i}`;
const mb = (perSecond, size) => (perSecond * size) / 1e6;

const out = {};
out.smallUpPerSec = await rate(small, (i) => bucket.file(name('s', i)).save(smallBody, { resumable: false }));
out.smallDownPerSec = await rate(small, (i) => bucket.file(name('s', i)).download());
out.smallUpConcurrentPerSec = await rate(
  small,
  (i) => bucket.file(name('c', i)).save(smallBody, { resumable: false }),
  concurrency,
);
out.smallDownConcurrentPerSec = await rate(small, (i) => bucket.file(name('c', i)).download(), concurrency);
out.largeUpMBps = mb(await rate(large, (i) => bucket.file(name('l', i)).save(largeBody)), largeSize);
out.largeDownMBps = mb(await rate(large, (i) => bucket.file(name('l', i)).download()), largeSize);
out.largeDownNoValidationMBps = mb(
  await rate(large, (i) => bucket.file(name('l', i)).download({ validation: false })),
  largeSize,
);
console.log(JSON.stringify(out));
