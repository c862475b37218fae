// Benchmark (make bench): the console's Firestore tab in Chromium over a
// collection of 100,000 documents in a real `loupe serve`. It opens the
// collection, loads five more pages, opens a document from the last page,
// and prints every request the console made with its time from request to
// the end of the response. Target (issue 20): no request over 200 ms.
// Then (issue 32) it times click → content, RUNS times each: opening the
// collection, "Load 50 more", opening a document and running a query
// (`n == k` on a document no page has loaded), and prints p50 and p95.
import { launchBrowser } from '../e2e/support/browser.mjs';
import { projectId, startLoupe } from '../e2e/support/loupe.mjs';
import { clickToContent, printClickTable, timeRuns } from './click-timing.mjs';

const DOCS = 100_000;
const RUNS = Number(process.env.RUNS ?? 30);
const id = (n) => `doc${String(n).padStart(6, '0')}`;
const db = `projects/${projectId}/databases/(default)`;

const loupe = await startLoupe();
const browser = await launchBrowser();
try {
  for (let start = 0; start < DOCS; start += 500) {
    const writes = Array.from({ length: 500 }, (_, k) => ({
      update: {
        name: `${db}/documents/big/doc${String(start + k).padStart(6, '0')}`,
        fields: { n: { integerValue: String(start + k) }, title: { stringValue: `title ${start + k}` } },
      },
    }));
    const res = await fetch(`${loupe.url}/v1/${db}/documents:commit`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: JSON.stringify({ writes }),
    });
    if (!res.ok) throw new Error(`seed: ${res.status} ${await res.text()}`);
  }
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const timings = [];
  page.on('requestfinished', (req) => {
    const url = new URL(req.url());
    if (!url.pathname.startsWith('/v1/') && !url.pathname.startsWith('/emulator/')) return;
    const t = req.timing();
    timings.push({
      what: `${req.method()} ${url.pathname.split('/').at(-1)}`,
      ms: t.responseEnd - t.requestStart,
    });
  });
  await page.goto(`${loupe.url}/_/console/firestore`, { waitUntil: 'load' });
  await page.getByText('big', { exact: true }).click();
  await page.getByText('doc000049', { exact: true }).waitFor();
  await page.getByText(DOCS.toLocaleString('en-US'), { exact: true }).waitFor();
  for (let p = 2; p <= 6; p++) {
    await page.getByRole('button', { name: 'Load 50 more' }).click();
    await page.getByText(`doc${String(p * 50 - 1).padStart(6, '0')}`, { exact: true }).waitFor();
  }
  await page.getByText('doc000299', { exact: true }).click();
  await page.getByText('title 299', { exact: false }).first().waitFor();
  const byWhat = new Map();
  for (const { what, ms } of timings) byWhat.set(what, [...(byWhat.get(what) ?? []), ms]);
  console.log(`console over ${DOCS.toLocaleString('en-US')} documents: ${timings.length} requests`);
  console.log('| request | count | slowest ms | median ms |\n| --- | ---: | ---: | ---: |');
  for (const [what, list] of byWhat) {
    const sorted = list.toSorted((a, b) => a - b);
    console.log(
      `| ${what} | ${list.length} | ${sorted.at(-1).toFixed(1)} | ${sorted[sorted.length >> 1].toFixed(1)} |`,
    );
  }
  const worst = Math.max(...timings.map((t) => t.ms));
  console.log(`slowest request: ${worst.toFixed(1)} ms (target: none over 200 ms)`);

  // Click → content, measured in the page (bench/click-timing.mjs).
  const docs = 'ul[aria-label="Documents"]';
  const clicks = [];
  clicks.push([
    'open the collection (first 50 listed)',
    await timeRuns(RUNS, {
      before: async () => {
        await page.goto(`${loupe.url}/_/console/firestore`, { waitUntil: 'load' });
        await page.getByText('big', { exact: true }).waitFor();
      },
      measure: () => clickToContent(page, { click: { text: 'big' }, until: { sel: docs, contains: id(49) } }),
    }),
  ]);
  clicks.push([
    'Load 50 more',
    await timeRuns(RUNS, {
      measure: (i) =>
        clickToContent(page, {
          click: { text: 'Load 50 more' },
          until: { sel: docs, contains: id((i + 2) * 50 - 1) },
        }),
    }),
  ]);
  const loaded = (RUNS + 1) * 50;
  // Ascending numbers: the document shown before never contains the next one's title.
  const pick = (i) => (i * 37 + 11) % loaded;
  clicks.push([
    'open a document (its fields shown)',
    await timeRuns(RUNS, {
      measure: (i) =>
        clickToContent(page, {
          click: { root: docs, text: id(pick(i)) },
          until: { sel: 'ul[aria-label="Fields"]', contains: `title ${pick(i)}` },
        }),
    }),
  ]);
  await page.getByRole('button', { name: 'Query' }).click();
  const query = page.locator('form[aria-label="Query"]');
  await query.getByLabel('Filter field').fill('n');
  await query.getByLabel('Value type').selectOption('integer');
  const filterValue = query.getByLabel('Filter value');
  // Documents no page loaded.
  const far = (i) => DOCS - 1 - i * 1_777;
  clicks.push([
    'run a query (n == k, 1 of 100,000 listed)',
    await timeRuns(RUNS, {
      before: (i) => filterValue.fill(String(far(i))),
      measure: (i) =>
        clickToContent(page, {
          click: { root: 'form[aria-label="Query"]', text: 'Run' },
          until: { sel: docs, contains: id(far(i)) },
        }),
    }),
  ]);
  console.log(`\nclick → content over ${DOCS.toLocaleString('en-US')} documents (Chromium, 1280 × 800):`);
  printClickTable(clicks);
} finally {
  await browser.close();
  await loupe.stop();
}
