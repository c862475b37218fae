// The console's fifth round (issue 42) in Chromium at 375 and 1280 px,
// against one real `loupe serve` running the repository's Go functions and
// the 1st-gen Node.js fixture codebase side by side: every function of every
// kind is listed with the runs it really had and each run's own log lines;
// Storage creates folders; Firestore's root list stays narrow; the forms
// take the cursor and say what is wrong beside the field; the environment
// lines are whole at any width.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { axeSerious } from './support/axe.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const docs = `projects/${projectId}/databases/(default)/documents`;

describe('console, round five', () => {
  let loupe;
  let browser;
  const owner = { authorization: 'Bearer owner', 'content-type': 'application/json' };
  const call = async (url, init = {}) => {
    const res = await fetch(`${loupe.url}${url}`, { headers: owner, ...init });
    return { status: res.status, body: await res.text() };
  };
  const commit = (writes) => call(`/v1/${docs}:commit`, { method: 'POST', body: JSON.stringify({ writes }) });

  before(async () => {
    const rewrites = JSON.parse(readFileSync(path.join(repo, 'firebase.json'), 'utf8')).hosting.rewrites;
    loupe = await startLoupe({
      config: {
        hosting: { public: path.join(repo, 'web/dist'), rewrites },
        functions: [
          { source: path.join(repo, 'functions'), codebase: 'default' },
          { source: path.join(here, 'fixtures/functions/v1'), codebase: 'v1' },
        ],
      },
    });
    // Both codebases build (a cold Go build takes a while on a busy machine).
    for (const deadline = Date.now() + 240_000; ;) {
      const st = await (await fetch(`${loupe.url}/emulator/v1/functions`)).json();
      if (st.state === 'failed') throw new Error(st.detail);
      if (st.state === 'running' && st.codebases.every((c) => c.state === 'running')) break;
      if (Date.now() > deadline) throw new Error(`the functions are still ${st.state}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  const pageAt = async (viewport) => {
    const context = await browser.newContext({
      viewport,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    return context.newPage();
  };

  it('lists every function with its calls, errors and last run, and each run with its own log lines', async () => {
    // A Firestore trigger of the Node.js codebase (it logs), an HTTP
    // function of the Go codebase through a hosting rewrite (a Cloud Run
    // service), and an onRequest function of the Node.js one.
    const write = await commit([
      {
        update: {
          name: `${docs}/orders/o1/items/i1`,
          fields: { price: { integerValue: '2' }, quantity: { integerValue: '3' } },
        },
      },
    ]);
    assert.equal(write.status, 200, write.body);
    // With no rate table loaded, the rates function answers 502: an error.
    assert.equal((await call('/api/rates/v4/latest/USD')).status, 502);
    const hello = await call(`/${projectId}/us-central1/hello`);
    assert.match(hello.body, /^Hello world/);

    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/functions`);
      const list = page.getByRole('list', { name: 'Functions' });
      const row = (fn) => list.getByRole('listitem').filter({ has: page.getByText(fn, { exact: true }) });
      // The trigger's delivery and its call agree.
      await page.getByRole('list', { name: 'Deliveries' }).getByText('orders/o1/items/i1').first().waitFor();
      await row('recomputeTotal').getByText('1 call', { exact: true }).waitFor();
      await row('recomputeTotal').getByText('0 errors', { exact: true }).waitFor();
      assert.match(await row('recomputeTotal').innerText(), /last run \d\d:\d\d:\d\d/);
      // The Go codebase's HTTP functions are listed, counted where they ran.
      await row('api/rates/v4/latest/').getByText('1 call', { exact: true }).waitFor();
      await row('api/rates/v4/latest/').getByText('1 error', { exact: true }).waitFor();
      await row('payments/checkout').getByText('0 calls', { exact: true }).waitFor();
      await row('tasks/turnaround').waitFor();
      await row('hello').getByText('1 call', { exact: true }).waitFor();
      // Every kind of the Node.js codebase: blocking, schedule, task queue, callable, triggers.
      for (const fn of [
        'beforeCreate',
        'nightly',
        'processTask',
        'whoami',
        'userChanged',
        'comment-counters',
      ])
        await row(fn).waitFor();
      // The run's own lines: loupe's start and end, and what the function logged.
      await page.getByRole('button', { name: 'Runs of recomputeTotal' }).click();
      const runs = page.getByRole('list', { name: 'Runs of recomputeTotal' });
      const run = runs.getByRole('listitem').first();
      await run.getByText('200', { exact: true }).waitFor();
      await run.getByText('order total recomputed').waitFor();
      await run.getByText(/Finished "recomputeTotal" in .* with status 200/).waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on Functions at ${name}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the Functions tab is ${overflow} px wider than the ${name} viewport`);
      await screenshot(page, `console-functions-runs-${name}`);
      // The Logs tab's functions filter has the run's lines too.
      await page.goto(`${loupe.url}/_/console/logs?service=functions`);
      await page
        .getByRole('list', { name: 'Log lines' })
        .getByText('order total recomputed')
        .first()
        .waitFor();
      await page.context().close();
    }
  });

  it('creates a folder in Storage, shown while it holds no file', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/storage`);
      await page.getByRole('button', { name: 'Create folder' }).click();
      const form = page.getByRole('form', { name: 'Create folder' });
      const input = form.getByRole('textbox', { name: 'Folder name' });
      assert.ok(await input.evaluate((el) => el === document.activeElement), 'the name takes the cursor');
      await input.fill('a/b');
      await form.getByRole('button', { name: 'Create' }).click();
      await form
        .getByRole('alert')
        .getByText(/has no “\/”/)
        .waitFor();
      await input.fill(`reports-${name}`);
      await form.getByRole('button', { name: 'Create' }).click();
      const files = page.getByRole('list', { name: 'Files' });
      await files.getByRole('button', { name: `reports-${name}/` }).waitFor();
      // Production's placeholder: a zero-byte object named after the folder.
      const placeholder = await call(
        `/storage/v1/b/${projectId}.appspot.com/o/${encodeURIComponent(`reports-${name}/`)}`,
      );
      assert.equal(placeholder.status, 200, placeholder.body);
      assert.equal(JSON.parse(placeholder.body).size, '0');
      await screenshot(page, `console-storage-folder-${name}`);
      // Inside, the placeholder is the folder, not a file in it.
      await files.getByRole('button', { name: `reports-${name}/` }).click();
      await page.getByText('Nothing here yet').waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe in the new folder at ${name}`);
      await page.context().close();
    }
  });

  it('keeps the root collections narrow while no document is open', async () => {
    await commit([{ update: { name: `${docs}/people/ann`, fields: { name: { stringValue: 'Ann' } } } }]);
    const page = await pageAt(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/firestore?path=people`);
    await page.getByRole('list', { name: 'Documents' }).getByText('ann').first().waitFor();
    const widths = await page.evaluate(() => {
      const sections = [...document.querySelectorAll('section')].filter((s) =>
        s.parentElement?.classList.contains('grid'),
      );
      return sections.map((s) => s.getBoundingClientRect().width);
    });
    assert.equal(widths.length, 2, `columns: ${widths}`);
    assert.ok(
      widths[0] <= 300 && widths[1] > 2 * widths[0],
      `root list ${widths[0]} px beside ${widths[1]} px`,
    );
    await screenshot(page, 'console-firestore-root-narrow-desktop');
    await page.setViewportSize(viewports.mobile);
    await screenshot(page, 'console-firestore-root-narrow-mobile');
    await page.context().close();
  });

  it('puts the cursor in Edit field and Add user, and says beside each field what is wrong', async () => {
    await commit([{ update: { name: `${docs}/people/bea`, fields: { name: { stringValue: 'Bea' } } } }]);
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore?path=people/bea`);
      await page.getByRole('button', { name: 'Edit name', exact: true }).click();
      const edit = page.getByRole('form', { name: 'Edit name' });
      await edit.waitFor();
      assert.ok(
        await edit.getByLabel('Value').evaluate((el) => el === document.activeElement),
        'Edit field puts the cursor in the value',
      );
      await page.keyboard.press('End');
      await page.keyboard.type(' B.');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.locator('[data-field="name"]').getByText('"Bea B."').waitFor();
      await screenshot(page, `console-edit-field-${name}`);

      await page.goto(`${loupe.url}/_/console/auth`);
      await page.getByRole('button', { name: 'Add user' }).click();
      const form = page.getByRole('form', { name: 'New user' });
      assert.ok(
        await form.getByLabel('Display name').evaluate((el) => el === document.activeElement),
        'Add user puts the cursor in the form',
      );
      await form.getByLabel('E-mail').fill('not-an-address');
      await form.getByLabel('Password').fill('123');
      await form.getByRole('button', { name: 'Add user' }).click();
      await form.getByText('Enter an e-mail address, such as ann@example.com.').waitFor();
      await form.getByText('A password has at least 6 characters.').waitFor();
      // The form's own check ran (the browser's would have stopped the
      // submit with a bubble), and the cursor is on the first wrong field.
      assert.ok(
        await form.getByLabel('E-mail').evaluate((el) => el === document.activeElement),
        'the cursor goes to the first wrong field',
      );
      assert.deepEqual(await axeSerious(page), [], `axe on the user form at ${name}`);
      await screenshot(page, `console-add-user-errors-${name}`);
      await form.getByLabel('E-mail').fill(`zoe-${name}@example.com`);
      await form.getByLabel('Password').fill('secret1');
      await form.getByRole('button', { name: 'Add user' }).click();
      await page.getByRole('list', { name: 'Users' }).getByText(`zoe-${name}@example.com`).first().waitFor();
      await page.context().close();
    }
  });

  it('shows each environment line whole, with its own copy button', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/overview`);
      const lines = page.getByRole('list', { name: 'Exports' }).getByRole('listitem');
      await lines.first().waitFor();
      const cut = await lines.evaluateAll(
        (items, width) =>
          items
            .map((li) => li.querySelector('code'))
            .filter((c) => c.scrollWidth > c.clientWidth || c.getBoundingClientRect().right > width)
            .map((c) => c.textContent),
        viewport.width,
      );
      assert.deepEqual(cut, [], `lines cut at ${name}`);
      const config = lines.filter({ hasText: 'export FIREBASE_CONFIG=' });
      await config.getByRole('button', { name: 'Copy FIREBASE_CONFIG' }).click();
      await page.waitForFunction(async () =>
        (await navigator.clipboard.readText()).startsWith('export FIREBASE_CONFIG='),
      );
      assert.equal(
        await page.evaluate(() => navigator.clipboard.readText()),
        await config.locator('code').innerText(),
      );
      assert.deepEqual(await axeSerious(page), [], `axe on Overview at ${name}`);
      await screenshot(page, `console-overview-env-${name}`);
      await page.context().close();
    }
  });
});
