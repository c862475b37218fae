// Benchmark (make bench): the app's first load over a slow link. Chromium,
// throttled through CDP to 200 KB/s down and up with 40 ms latency and no
// cache, opens the home page of a real `loupe serve` with the demo data.
// Prints the built bundle's files (raw and gzip sizes), then per run the
// first contentful paint (the loading shell of index.html), the time until
// the mentor directory shows, and the bytes transferred. Target (issue 21):
// first paint under 1.5 s.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../e2e/support/browser.mjs';
import { startLoupe } from '../e2e/support/loupe.mjs';
import { demoData } from '../e2e/support/people.mjs';

const RUNS = 5;
const KB = 1024;
const dist = fileURLToPath(new URL('../dist', import.meta.url));

const files = ['index.html', ...readdirSync(path.join(dist, 'assets')).map((f) => `assets/${f}`)]
  .filter((f) => /\.(html|js|css)$/.test(f))
  .map((f) => {
    const body = readFileSync(path.join(dist, f));
    return { f, raw: body.length, gzip: gzipSync(body).length };
  })
  .sort((a, b) => b.raw - a.raw);
console.log('| file | raw KB | gzip KB |\n| --- | ---: | ---: |');
for (const { f, raw, gzip } of files)
  console.log(
    `| ${f.replace(/-[\w-]{8}\./, '-*.')} | ${(raw / KB).toFixed(1)} | ${(gzip / KB).toFixed(1)} |`,
  );

const loupe = await startLoupe({ args: ['--import', demoData] });
const browser = await launchBrowser();
try {
  const results = [];
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 40,
      downloadThroughput: 200 * KB,
      uploadThroughput: 200 * KB,
    });
    let bytes = 0;
    cdp.on('Network.loadingFinished', (e) => (bytes += e.encodedDataLength));
    await page.goto(`${loupe.url}/`, { waitUntil: 'commit' });
    await page.getByRole('heading', { name: 'Find a mentor' }).waitFor({ timeout: 60_000 });
    const [fcp, app] = await page.evaluate(() => [
      performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      performance.now(),
    ]);
    results.push({ fcp, app, bytes });
    await context.close();
  }
  const median = (k) => results.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(RUNS / 2)];
  console.log(
    `first-paint: 200 KB/s, 40 ms, ${RUNS} runs, median: first contentful paint ${median('fcp').toFixed(0)} ms, ` +
      `directory shown ${median('app').toFixed(0)} ms, ${(median('bytes') / KB).toFixed(0)} KB transferred`,
  );
} finally {
  await browser.close();
  await loupe.stop();
}
