// Benchmark (make bench): a write in one Chromium context reaches an
// onSnapshot listener in another through loupe's WebChannel. Prints p50/p99
// over 200 writes in streaming and long-polling mode (issue 4 target: p50 < 10 ms).
import { launchBrowser } from '../e2e/support/browser.mjs';
import { projectId, startLoupe } from '../e2e/support/loupe.mjs';
import { openSdkPage, sdkPage } from '../e2e/support/sdk-page.mjs';

const WRITES = 200;

function initDb({ projectId, port, longPolling }) {
  const { app, firestore } = window.sdk;
  window.db = firestore.initializeFirestore(app.initializeApp({ projectId, apiKey: 'k' }), {
    experimentalForceLongPolling: longPolling,
  });
  firestore.connectFirestoreEmulator(window.db, '127.0.0.1', port);
}

const loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
const browser = await launchBrowser();
try {
  for (const longPolling of [false, true]) {
    const writer = await openSdkPage(browser, loupe.url);
    const reader = await openSdkPage(browser, loupe.url);
    for (const page of [writer, reader])
      await page.evaluate(initDb, { projectId, port: loupe.port, longPolling });
    await reader.evaluate((mode) => {
      const f = window.sdk.firestore;
      window.latencies = [];
      f.onSnapshot(f.doc(window.db, `bench/${mode}`), (s) => {
        if (!s.metadata.hasPendingWrites && s.exists() && s.get('sentAt')) {
          window.latencies.push(performance.timeOrigin + performance.now() - s.get('sentAt'));
        }
      });
    }, String(longPolling));
    for (let i = 0; i < WRITES; i++) {
      await writer.evaluate(
        ({ mode, i }) => {
          const f = window.sdk.firestore;
          return f.setDoc(f.doc(window.db, `bench/${mode}`), {
            i,
            sentAt: performance.timeOrigin + performance.now(),
          });
        },
        { mode: String(longPolling), i },
      );
      await reader.waitForFunction((n) => window.latencies.length >= n, i + 1);
    }
    const latencies = (await reader.evaluate(() => window.latencies)).sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))].toFixed(2);
    console.log(
      `BenchmarkWebChannel_WriteToOtherContextSnapshot/${longPolling ? 'long-polling' : 'streaming'}\t${latencies.length} writes\tp50 ${at(0.5)} ms\tp99 ${at(0.99)} ms`,
    );
    await writer.context().close();
    await reader.context().close();
  }
} finally {
  await browser.close();
  await loupe.stop();
}
