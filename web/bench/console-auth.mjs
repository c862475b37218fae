// Benchmark (make bench, issue 32): the console's Authentication tab in
// Chromium over 100,000 users created through the Admin API's batchCreate
// (1,000 a request) in a real `loupe serve`. It times click → content, RUNS
// times each: opening the tab (its first 100 users listed), "Load 100 more",
// a search by e-mail (typed into the box: this includes the tab's 200 ms
// pause for typing to stop), and opening a user (the edit form filled; the
// list renders only the rows in view, so the user is scrolled to first,
// untimed), and prints p50 and p95. Target (issue 32): list and search under 300 ms.
import { launchBrowser } from '../e2e/support/browser.mjs';
import { projectId, startLoupe } from '../e2e/support/loupe.mjs';
import { clickToContent, printClickTable, timeRuns } from './click-timing.mjs';

const USERS = 100_000;
const BATCH = 1_000;
const RUNS = Number(process.env.RUNS ?? 30);
const n6 = (i) => String(i).padStart(6, '0');
const total = USERS.toLocaleString('en-US');

const loupe = await startLoupe();
const browser = await launchBrowser();
try {
  const t0 = performance.now();
  for (let start = 0; start < USERS; start += BATCH) {
    const users = Array.from({ length: BATCH }, (_, k) => ({
      localId: `u${n6(start + k)}`,
      email: `user${n6(start + k)}@example.com`,
      displayName: `User ${n6(start + k)}`,
    }));
    const res = await fetch(
      `${loupe.url}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:batchCreate`,
      {
        method: 'POST',
        headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
        body: JSON.stringify({ users }),
      },
    );
    const body = await res.json();
    if (!res.ok || body.error?.length)
      throw new Error(`seed: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  }
  console.log(
    `batchCreate of ${total} users (${USERS / BATCH} requests): ${(performance.now() - t0).toFixed(0)} ms`,
  );

  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const users = 'ul[aria-label="Users"]';
  const status = '[role="status"]';
  await page.goto(`${loupe.url}/_/console/overview`, { waitUntil: 'load' });
  const clicks = [];
  clicks.push([
    'open the tab (first 100 listed)',
    await timeRuns(RUNS, {
      before: async () => {
        await page.getByRole('navigation').getByRole('link', { name: 'Overview', exact: true }).click();
        await page.waitForURL((u) => u.pathname.endsWith('/overview'));
      },
      measure: () =>
        clickToContent(page, {
          click: { root: 'nav', text: 'Authentication' },
          until: { sel: status, text: `100 of ${total} shown` },
        }),
    }),
  ]);
  clicks.push([
    'Load 100 more',
    await timeRuns(RUNS, {
      measure: (i) =>
        clickToContent(page, {
          click: { text: 'Load 100 more' },
          until: { sel: status, text: `${((i + 2) * 100).toLocaleString('en-US')} of ${total} shown` },
        }),
    }),
  ]);
  // Users no page loaded.
  const far = (i) => USERS - 1 - i * 3_271;
  clicks.push([
    'search by e-mail (typed → the one match listed)',
    await timeRuns(RUNS, {
      measure: (i) =>
        clickToContent(page, {
          type: { sel: 'input[aria-label="Search users"]', value: `user${n6(far(i))}@example.com` },
          until: { sel: users, contains: `User ${n6(far(i))}` },
        }),
    }),
  ]);
  await page.locator('input[aria-label="Search users"]').fill('');
  await page.locator(status).getByText(`100 of ${total} shown`, { exact: true }).waitFor();
  const pick = (i) => (i * 7) % 100;
  clicks.push([
    'open a user (edit form filled)',
    await timeRuns(RUNS, {
      // The list renders only the rows in view: scroll to the user first, untimed, as a user would.
      before: (i) =>
        page.evaluate(
          async (text) => {
            const list = document.querySelector('ul[aria-label="Users"]');
            const scroller = list.parentElement;
            const row = () => [...list.children].find((li) => li.textContent.includes(text));
            const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
            scroller.scrollTop = 0;
            await frame();
            while (!row()) {
              if (scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight)
                throw new Error(`${text} not listed`);
              scroller.scrollTop += scroller.clientHeight / 2;
              await frame();
            }
            row().scrollIntoView({ block: 'nearest' });
            await frame();
          },
          `User ${n6(pick(i))}`,
        ),
      measure: (i) =>
        clickToContent(page, {
          click: { root: users, text: `User ${n6(pick(i))}` },
          until: {
            sel: 'form[aria-label="Edit user"] input[type="email"]',
            value: `user${n6(pick(i))}@example.com`,
          },
        }),
    }),
  ]);
  console.log(`\nclick → content, Authentication tab, ${total} users (Chromium, 1280 × 800):`);
  printClickTable(clicks);
} finally {
  await browser.close();
  await loupe.stop();
}
