// The console's second round (issue 32) in Chromium at 375 and 1280 px,
// against one real `loupe serve` whose firebase.json asks for what cannot
// be had (a port another process holds, a rules file that is not there, a
// functions codebase that does not build): what the console shows must be
// the truth, and what it writes must lose nobody's work.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { axeSerious } from './support/axe.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { freePort, loupeBin, projectId, startLoupe } from './support/loupe.mjs';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const docs = `projects/${projectId}/databases/(default)/documents`;

/** An unsigned ID token for uid, which loupe accepts outside strict mode (as the emulators do). */
function userToken(uid) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({
    iss: `https://securetoken.google.com/${projectId}`,
    aud: projectId,
    sub: uid,
    user_id: uid,
    iat: now,
    exp: now + 3600,
    firebase: { sign_in_provider: 'password' },
  })}.`;
}

describe('console, round two', () => {
  let loupe;
  let browser;
  let scratch;
  let holder; // holds the port firebase.json gives Firestore
  let takenPort;
  let storageRules;
  let configPath;
  const call = async (url, body, token = 'owner') => {
    const res = await fetch(`${loupe.url}${url}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const commit = (writes, token) => call(`/v1/${docs}:commit`, { writes }, token);

  before(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'console-fixes-'));
    holder = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => holder.once('listening', r));
    takenPort = holder.address().port;
    // A Go codebase that does not compile.
    const broken = path.join(scratch, 'broken');
    mkdirSync(broken);
    writeFileSync(path.join(broken, 'go.mod'), 'module example.com/broken\n\ngo 1.22\n');
    writeFileSync(path.join(broken, 'main.go'), 'package main\n\nfunc main() { this is not Go }\n');
    writeFileSync(
      path.join(scratch, 'firestore.rules'),
      `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /open/{id} {
      allow read, write: if true;
    }
    match /owned/{uid} {
      allow write: if request.resource.data.owner == request.auth.uid;
    }
  }
}
`,
    );
    storageRules = path.join(scratch, 'storage.rules');
    const config = {
      hosting: { public: dist },
      firestore: { rules: path.join(scratch, 'firestore.rules') },
      storage: { rules: storageRules },
      functions: { source: broken },
      emulators: {
        firestore: { port: takenPort },
        hub: { port: await freePort() },
        ui: { enabled: false },
        functions: { port: await freePort() },
      },
    };
    configPath = path.join(scratch, 'firebase.json');
    writeFileSync(configPath, JSON.stringify(config));
    loupe = await startLoupe({ config, args: ['--only', 'firestore,auth,storage,functions'] });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
    holder?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  /** A fresh page at a viewport, with the clipboard readable. */
  const pageAt = async (viewport) => {
    const context = await browser.newContext({
      viewport,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    return context.newPage();
  };

  it('shows each service’s real state on Overview, live, and copies --print-env’s exports', async () => {
    const printed = execFileSync(
      loupeBin,
      [
        'serve',
        '--print-env',
        '--port',
        String(loupe.port),
        '--project',
        projectId,
        '--config',
        configPath,
        '--only',
        'firestore,auth,storage,functions',
      ],
      { env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'FIREBASE_CONFIG')) },
    ).toString();
    assert.match(printed, /export FIREBASE_CONFIG='\{"/, 'print-env quotes the JSON');
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/overview`);
      const row = (label) => page.getByRole('link', { name: new RegExp(label) });
      await row('Cloud Firestore').getByText('degraded', { exact: true }).waitFor();
      assert.match(
        await page.getByTestId('firestore-detail').innerText(),
        new RegExp(`port ${takenPort} could not be bound`),
      );
      await row('Functions').getByText('failed', { exact: true }).waitFor({ timeout: 60_000 });
      await row('Cloud Storage').getByText('degraded', { exact: true }).waitFor();
      assert.match(await page.getByTestId('storage-detail').innerText(), /storage\.rules does not exist/);
      await row('Authentication').getByText('running', { exact: true }).waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on Overview at ${name}`);
      await screenshot(page, `console-overview-states-${name}`);

      await page.getByRole('button', { name: 'Copy the exports' }).click();
      await page.waitForFunction(async () => (await navigator.clipboard.readText()).length > 0);
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), printed);
      await page.context().close();
    }
    // The rules file appears: Storage runs, and the open page shows it without a reload.
    const page = await pageAt(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/overview`);
    await page
      .getByRole('link', { name: /Cloud Storage/ })
      .getByText('degraded', { exact: true })
      .waitFor();
    writeFileSync(
      storageRules,
      "rules_version = '2';\nservice firebase.storage { match /b/{bucket}/o { match /{all=**} { allow read; } } }\n",
    );
    await page
      .getByRole('link', { name: /Cloud Storage/ })
      .getByText('running', { exact: true })
      .waitFor();
    // Loupe stops answering: the console says so over what it last showed, and no longer "live".
    await page.setViewportSize(viewports.mobile);
    const live = page.getByRole('navigation').getByText('live', { exact: true });
    await live.waitFor();
    await page.route('**/emulator/v1/overview*', (r) => r.abort());
    await page
      .getByRole('alert')
      .getByText(/^Loupe does not answer .*out of date/)
      .waitFor();
    await page.getByRole('navigation').getByText('offline', { exact: true }).waitFor();
    assert.equal(await live.count(), 0, 'a console that cannot reach loupe says "live"');
    assert.deepEqual(await axeSerious(page), [], 'axe with loupe not answering');
    await screenshot(page, 'console-offline-mobile');
    await page.unroute('**/emulator/v1/overview*');
    await live.waitFor();
    assert.equal(await page.getByText(/Loupe does not answer/).count(), 0);
    await page.context().close();
  });

  it('shows 64-bit integers exactly and geopoints with their hemispheres', async () => {
    const fields = {
      big: { integerValue: '9007199254740993' },
      max: { integerValue: '9223372036854775807' },
      min: { integerValue: '-9223372036854775808' },
      where: { geoPointValue: { latitude: -33.87, longitude: -151.21 } },
    };
    assert.equal((await commit([{ update: { name: `${docs}/ints/a`, fields } }])).status, 200);
    // A client writes one too, so the request log holds it.
    const client = await commit(
      [{ update: { name: `${docs}/open/n`, fields: { n: { integerValue: '9007199254740993' } } } }],
      userToken('ann'),
    );
    assert.equal(client.status, 200, JSON.stringify(client.body));
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore?path=ints/a`);
      const value = (f) => page.locator(`[data-field="${f}"] [data-value]`);
      await value('big').getByText('9007199254740993', { exact: true }).waitFor();
      assert.equal(await value('max').innerText(), '9223372036854775807');
      assert.equal(await value('min').innerText(), '-9223372036854775808');
      assert.equal(await value('where').innerText(), '33.87° S, 151.21° W');
      await screenshot(page, `console-int64-${name}`);
      // The collection's list previews the first field: exact too.
      await page.goto(`${loupe.url}/_/console/firestore?path=ints`);
      await page.getByRole('list', { name: 'Documents' }).getByText('big: 9007199254740993').waitFor();
      // A query's results, by that value.
      await page.getByRole('button', { name: 'Query' }).click();
      const query = page.getByRole('form', { name: 'Query' });
      await query.getByLabel('Filter field').fill('big');
      await query.getByLabel('Value type').selectOption('integer');
      await query.getByLabel('Filter value').fill('9007199254740993');
      await query.getByRole('button', { name: 'Run' }).click();
      await page.getByRole('list', { name: 'Documents' }).getByText('big: 9007199254740993').waitFor();
      // The request log's JSON.
      await page.goto(`${loupe.url}/_/console/requests?path=open/n`);
      await page.getByRole('list', { name: 'Requests' }).getByText('open/n').first().click();
      await page.getByText('Request data (request.resource)').click();
      await page.getByText('"n": 9007199254740993').waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on Requests at ${name}`);
      await page.context().close();
    }
  });

  it('starts a collection inside a document at that document’s path', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const user = `u-${name}`;
      assert.equal((await commit([{ update: { name: `${docs}/users/${user}`, fields: {} } }])).status, 200);
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore?path=users/${user}`);
      await page.getByRole('heading', { name: 'Collections' }).waitFor();
      await page.getByRole('button', { name: 'Start collection' }).last().click();
      await page.getByLabel('Collection id').fill('devices');
      await page.getByLabel('First document id').fill('phone1');
      assert.deepEqual(await axeSerious(page), [], `axe on Start collection at ${name}`);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await page.waitForURL((u) => u.searchParams.get('path') === `users/${user}/devices/phone1`);
      await page.getByRole('button', { name: 'Add field' }).last().waitFor();
      const created = await call(`/v1/${docs}/users/${user}/devices/phone1`);
      assert.equal(created.status, 200, 'the document is where the path says');
      await screenshot(page, `console-start-collection-${name}`);
      await page.context().close();
    }
  });

  it('saves a field only over the version it began from, naming what changed meanwhile', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const doc = `people/p-${name}`;
      await commit([{ update: { name: `${docs}/${doc}`, fields: { name: { stringValue: 'Ann' } } } }]);
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore?path=${doc}`);
      await page.locator('[data-field="name"]').getByText('"Ann"').waitFor();
      await page.getByRole('button', { name: 'Edit name', exact: true }).click();
      const edit = page.getByRole('form', { name: 'Edit name' });
      await edit.getByLabel('Value').fill('Ann from the console');
      // Meanwhile someone else changes the name and adds a field.
      await commit([
        {
          update: {
            name: `${docs}/${doc}`,
            fields: { name: { stringValue: 'Ann B.' }, age: { integerValue: '40' } },
          },
        },
      ]);
      await page.locator('[data-field="age"]').waitFor();
      await edit.getByRole('button', { name: 'Save' }).click();
      const toast = page
        .getByText(/The document changed while you edited it: name changed, age was added/)
        .first();
      await toast.waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on the conflict at ${name}`);
      await screenshot(page, `console-conflict-${name}`);
      const stored = await call(`/v1/${docs}/${doc}`);
      assert.equal(stored.body.fields.name.stringValue, 'Ann B.', 'the other change is kept');
      // Saved again, from the version now shown, it goes through.
      await edit.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Edit name', exact: true }).click();
      await page.getByRole('form', { name: 'Edit name' }).getByLabel('Value').fill('Ann, again');
      await page.getByRole('form', { name: 'Edit name' }).getByRole('button', { name: 'Save' }).click();
      await page.locator('[data-field="name"]').getByText('"Ann, again"').waitFor();
      await page.context().close();
    }
  });

  it('shows the expression that decided a denial first, wrapped', async () => {
    const denied = await commit(
      [{ update: { name: `${docs}/owned/bob`, fields: { owner: { stringValue: 'someone-else' } } } }],
      userToken('bob'),
    );
    assert.equal(denied.status, 403);
    for (const [name, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/requests?outcome=denied&path=owned/bob`);
      await page.getByRole('list', { name: 'Requests' }).getByText('owned/bob').first().click();
      const steps = page.getByRole('list', { name: 'Deciding expressions' });
      const first = steps.locator('li').first();
      await first.waitFor();
      assert.match(
        await first.innerText(),
        /request\.resource\.data\.owner == request\.auth\.uid\s*→\s*false/,
      );
      const box = await first.boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= viewport.width, `the expression fits the ${name} width`);
      // It comes before the rest of the detail.
      const order = await page.evaluate(() => {
        const list = document.querySelector('[aria-label="Deciding expressions"]');
        const dl = list?.parentElement?.querySelector('dl');
        return !!(list && dl && list.compareDocumentPosition(dl) & Node.DOCUMENT_POSITION_FOLLOWING);
      });
      assert.ok(order, 'the deciding expression is shown first');
      assert.deepEqual(await axeSerious(page), [], `axe on the decision at ${name}`);
      await screenshot(page, `console-decision-${name}`);
      await page.context().close();
    }
  });

  it('holds the requests that arrive while Requests is paused, and shows them on Follow', async () => {
    const write = async (id) =>
      assert.equal(
        (
          await commit(
            [{ update: { name: `${docs}/open/${id}`, fields: { n: { integerValue: '1' } } } }],
            userToken('ann'),
          )
        ).status,
        200,
      );
    const page = await pageAt(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/requests?path=open/held`);
    const list = page.getByRole('list', { name: 'Requests' });
    await write('held1');
    await list.getByText('open/held1').waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await write('held2');
    await write('held3');
    await page.getByRole('button', { name: 'Follow (2 new)' }).waitFor();
    assert.equal(await list.getByText('open/held2').count(), 0, 'paused, the list stays as it was');
    await page.getByRole('button', { name: 'Follow (2 new)' }).click();
    await list.getByText('open/held3').waitFor();
    const shown = await list.locator(':scope > li').allInnerTexts();
    assert.deepEqual(
      shown.map((t) => t.match(/open\/held\d/)?.[0]),
      ['open/held3', 'open/held2', 'open/held1'],
      'the held requests come back in order, newest first',
    );
    await page.context().close();
  });

  it('does not count the console’s queries among the indexes clients need', async () => {
    await commit([
      {
        update: {
          name: `${docs}/open/car1`,
          fields: { make: { stringValue: 'x' }, year: { integerValue: '1' } },
        },
      },
    ]);
    const missing = async () =>
      (await call(`/emulator/v1/projects/${projectId}/databases/(default)/indexes`)).body.missing ?? [];
    for (const [, viewport] of Object.entries(viewports)) {
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore?path=open`);
      await page.getByRole('button', { name: 'Query' }).click();
      const query = page.getByRole('form', { name: 'Query' });
      await query.getByLabel('Filter field').fill('make');
      await query.getByLabel('Filter value').fill('x');
      await query.getByLabel('Order by field').fill('year');
      await query.getByRole('button', { name: 'Run' }).click();
      await page.getByRole('list', { name: 'Documents' }).getByText('car1', { exact: true }).waitFor();
      await page.context().close();
    }
    assert.deepEqual(await missing(), [], 'the console’s queries are not recorded');
    // The same query from a client is.
    const res = await call(
      `/v1/${docs}:runQuery`,
      {
        structuredQuery: {
          from: [{ collectionId: 'open' }],
          where: { fieldFilter: { field: { fieldPath: 'make' }, op: 'EQUAL', value: { stringValue: 'x' } } },
          orderBy: [{ field: { fieldPath: 'year' } }],
        },
      },
      userToken('carl'),
    );
    assert.equal(res.status, 200);
    assert.equal((await missing()).length, 1, 'the client’s query is recorded');
  });

  it('shows every service’s log lines in Logs, filtered by the URL’s query, live, and streams them to scripts', async () => {
    const deny = (id) =>
      commit(
        [{ update: { name: `${docs}/owned/${id}`, fields: { owner: { stringValue: 'x' } } } }],
        userToken(id),
      );
    // A script follows the rules' lines over GET /emulator/v1/logs?follow=1.
    const ctrl = new AbortController();
    const res = await fetch(`${loupe.url}/emulator/v1/logs?follow=1&service=rules&q=owned/logs-script`, {
      signal: ctrl.signal,
    });
    assert.equal(res.status, 200);
    assert.equal((await deny('logs-script')).status, 403);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n{') && !text.startsWith('{')) text += (await reader.read()).value;
    ctrl.abort();
    const line = JSON.parse(text.trim().split('\n')[0]);
    assert.equal(line.service, 'rules');
    assert.equal(line.level, 'WARN');
    assert.match(line.message, /firestore create owned\/logs-script denied/);
    assert.equal((await fetch(`${loupe.url}/emulator/v1/logs?level=loud`)).status, 400);

    for (const [name, viewport] of Object.entries(viewports)) {
      const id = `logs-${name}`;
      assert.equal((await deny(`${id}-before`)).status, 403);
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/logs?service=rules&level=warn&q=owned/${id}`);
      const lines = page.getByRole('list', { name: 'Log lines' });
      await lines.getByText(`firestore create owned/${id}-before denied`).waitFor();
      assert.equal(await page.getByLabel('Service').inputValue(), 'rules', 'the filters come from the URL');
      // A line logged while the page is open appears without a reload.
      assert.equal((await deny(`${id}-live`)).status, 403);
      await lines.getByText(`firestore create owned/${id}-live denied`).waitFor();
      assert.equal(await lines.locator('li').count(), 2, 'only the matching lines');
      // Its payload opens.
      await lines.locator('li').first().locator('summary').click();
      await lines.getByLabel('Payload').first().getByText('"uid": ').waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on Logs at ${name}`);
      await screenshot(page, `console-logs-${name}`);
      // Errors only: a denial is a warning; the filter goes to the URL.
      await page.getByLabel('Level').selectOption('error');
      await page.waitForURL((u) => u.searchParams.get('level') === 'error');
      await page.getByText('None matches the filters.').waitFor();
      await page.context().close();
    }
  });
  it('pages by cursor, patches live changes into the loaded window, keeps the query in the URL', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const coll = `many-${name}`;
      const id = (i) => `m${String(i).padStart(3, '0')}`;
      const writes = Array.from({ length: 60 }, (_, i) => ({
        update: { name: `${docs}/${coll}/${id(i)}`, fields: { n: { integerValue: String(i) } } },
      }));
      assert.equal((await commit(writes)).status, 200);
      const page = await pageAt(viewport);
      const queries = [];
      page.on('request', (r) => r.url().endsWith(':runQuery') && queries.push(r.postDataJSON()));
      await page.goto(`${loupe.url}/_/console/firestore?path=${coll}`);
      const list = page.getByRole('list', { name: 'Documents' });
      const rows = list.locator(':scope > li');
      await list.getByText(id(49)).waitFor();
      await page.getByText('60', { exact: true }).waitFor();
      // Load more reads one page after the last document shown, not every page again.
      queries.length = 0;
      await page.getByRole('button', { name: 'Load 50 more' }).click();
      await list.getByText(id(59)).waitFor();
      assert.equal(queries.length, 1, 'one query for the next page');
      assert.match(JSON.stringify(queries[0].structuredQuery.where), new RegExp(`${coll}/${id(49)}`));
      assert.equal(await rows.count(), 60);
      // A change to a loaded document, and a new one, arrive without reading the window again.
      queries.length = 0;
      await commit([
        { update: { name: `${docs}/${coll}/${id(5)}`, fields: { n: { stringValue: 'changed' } } } },
        { update: { name: `${docs}/${coll}/m005a`, fields: { n: { integerValue: '-1' } } } },
        { delete: `${docs}/${coll}/${id(7)}` },
      ]);
      await list.getByText('n: "changed"').waitFor();
      await list.getByText('m005a').waitFor();
      await list.getByText(id(7)).waitFor({ state: 'detached' });
      assert.equal(
        await rows
          .nth(6)
          .innerText()
          .then((t) => t.split('\n')[0]),
        'm005a',
        'in name order',
      );
      assert.equal(queries.length, 0, 'no page was read again');

      // A query goes to the URL; the count follows it; a reload restores both.
      await page.getByRole('button', { name: 'Query' }).click();
      const query = page.getByRole('form', { name: 'Query' });
      await query.getByLabel('Filter field').fill('n');
      await query.getByLabel('Operator').selectOption('GREATER_THAN_OR_EQUAL');
      await query.getByLabel('Value type').selectOption('integer');
      await query.getByLabel('Filter value').fill('50');
      await query.getByLabel('Order by field').fill('n');
      await query.getByLabel('Direction').selectOption('DESCENDING');
      await query.getByLabel('Limit').fill('4');
      await query.getByRole('button', { name: 'Run' }).click();
      await page.waitForURL((u) => u.searchParams.has('query'));
      await page.getByText('10 matching').waitFor();
      await list.getByText(id(59)).waitFor();
      assert.equal(await rows.count(), 4);
      await page.reload();
      await page.getByText('10 matching').waitFor();
      assert.equal(
        await rows
          .first()
          .innerText()
          .then((t) => t.split('\n')[0]),
        id(59),
      );
      assert.equal(await page.getByLabel('Filter field').inputValue(), 'n', 'the form shows the query');
      assert.equal(await page.getByLabel('Direction').inputValue(), 'DESCENDING');
      assert.deepEqual(await axeSerious(page), [], `axe on the query from the URL at ${name}`);
      await screenshot(page, `console-query-url-${name}`);
      // Back: the collection without the query.
      await page.goBack();
      await page.getByText('60', { exact: true }).waitFor();
      assert.equal(await page.getByText('10 matching').count(), 0);

      // Export, then delete the collection: the buttons wait, a line says what is under way, then the result.
      let release;
      const held = new Promise((r) => (release = r));
      await page.route('**/emulator/v1/export/archive', async (route) => {
        await held;
        await route.continue();
      });
      await page.getByRole('button', { name: 'Export' }).click();
      await page.getByRole('status').filter({ hasText: 'Exporting…' }).waitFor();
      assert.ok(await page.getByRole('button', { name: 'Export' }).isDisabled(), 'Export waits');
      assert.ok(await page.getByRole('button', { name: 'Import' }).isDisabled(), 'Import waits');
      assert.deepEqual(await axeSerious(page), [], `axe while exporting at ${name}`);
      await screenshot(page, `console-exporting-${name}`);
      release();
      await page
        .getByText(/loupe.*\.tar\.gz \(/)
        .first()
        .waitFor();
      assert.ok(await page.getByRole('button', { name: 'Export' }).isEnabled(), 'Export is back');

      // Deleting the collection says how far it is: 600 documents, the last of them locked by a
      // read-write transaction, so that the delete waits after its first commit of 500.
      const more = Array.from({ length: 540 }, (_, i) => ({
        update: { name: `${docs}/${coll}/z${String(i).padStart(3, '0')}`, fields: {} },
      }));
      assert.equal((await commit(more.slice(0, 500))).status, 200);
      assert.equal((await commit(more.slice(500))).status, 200);
      const began = await call(`/v1/${docs}:beginTransaction`, { options: { readWrite: {} } });
      const read = await call(`/v1/${docs}:batchGet`, {
        documents: [`${docs}/${coll}/z539`],
        transaction: began.body.transaction,
      });
      assert.ok(read.body[0]?.found, 'the transaction reads z539');
      await page.getByRole('button', { name: 'Delete collection' }).click();
      await page.getByRole('button', { name: 'Delete collection' }).last().click();
      // The bar carries the count; the live status says only what is under way (read out once).
      const deleting = page.getByRole('progressbar', { name: `Deleting ${coll} and everything under it…` });
      await deleting.and(page.locator('[aria-valuetext="83% (500 of 600 documents)"]')).waitFor();
      assert.equal(await deleting.getAttribute('aria-valuenow'), '83');
      await page.getByText(`Deleting ${coll} and everything under it… 83% (500 of 600 documents)`).waitFor();
      assert.equal(
        await page
          .getByRole('status')
          .filter({ hasText: `Deleting ${coll}` })
          .innerText(),
        `Deleting ${coll} and everything under it…`,
      );
      assert.ok(await page.getByRole('button', { name: 'Delete collection' }).isDisabled());
      assert.deepEqual(await axeSerious(page), [], `axe while deleting at ${name}`);
      await screenshot(page, `console-deleting-${name}`);
      // (Past 10 s of silence loupe takes the transaction for abandoned and frees its lock: either way the delete ends.)
      await call(`/v1/${docs}:rollback`, { transaction: began.body.transaction });
      await page.getByText(`${coll}: 600 documents`).first().waitFor();

      // Deleting a document with its subcollections, and importing an archive, wait the same way.
      const doc = `${coll}-home/d`;
      await commit([
        { update: { name: `${docs}/${doc}`, fields: {} } },
        { update: { name: `${docs}/${doc}/sub/x`, fields: {} } },
      ]);
      await page.goto(`${loupe.url}/_/console/firestore?path=${doc}`);
      let releaseDoc;
      const docHeld = new Promise((r) => (releaseDoc = r));
      await page.route(`**/documents/${doc}`, async (route) => {
        if (route.request().method() === 'DELETE') await docHeld;
        await route.continue();
      });
      await page.getByRole('button', { name: 'Delete document' }).click();
      await page.getByRole('button', { name: 'Delete document' }).last().click();
      await page
        .getByRole('status')
        .filter({ hasText: `Deleting ${doc} and its subcollections…` })
        .waitFor();
      assert.ok(await page.getByRole('button', { name: 'Delete document' }).isDisabled());
      releaseDoc();
      await page.getByText(`${doc} and its subcollections: 2 documents`).first().waitFor();

      // Importing a real archive (what loupe holds, with 1,000 more documents) says how far it is;
      // the answer trickles in as on a slow connection, so that its progress lines are seen one by one.
      const bulk = (from) =>
        Array.from({ length: 500 }, (_, i) => ({
          update: {
            name: `${docs}/bulk-${name}/b${from + i}`,
            fields: { n: { integerValue: String(from + i) } },
          },
        }));
      assert.equal((await commit(bulk(0))).status, 200);
      assert.equal((await commit(bulk(500))).status, 200);
      const exported = await fetch(`${loupe.url}/emulator/v1/export/archive`, {
        headers: { authorization: 'Bearer owner' },
      });
      const archive = Buffer.from(await exported.arrayBuffer());
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: 2000,
        uploadThroughput: -1,
      });
      await page.getByLabel('Import archive').setInputFiles({
        name: 'backup.tar.gz',
        mimeType: 'application/gzip',
        buffer: archive,
      });
      await page.getByRole('button', { name: 'Import', exact: true }).last().click();
      await page.getByText(/Importing backup\.tar\.gz… [1-9]\d*% \([\d,]+ of [\d,]+ documents\)/).waitFor();
      const bar = page.getByRole('progressbar', { name: 'Importing backup.tar.gz…' });
      assert.match((await bar.getAttribute('aria-valuenow')) ?? '', /^\d+$/);
      assert.match((await bar.getAttribute('aria-valuetext')) ?? '', /^\d+% \([\d,]+ of [\d,]+ documents\)$/);
      assert.ok(await page.getByRole('button', { name: 'Import', exact: true }).isDisabled(), 'Import waits');
      assert.ok(await page.getByRole('button', { name: 'Clear' }).isDisabled(), 'Clear waits');
      assert.deepEqual(await axeSerious(page), [], `axe while importing at ${name}`);
      await screenshot(page, `console-importing-${name}`);
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      await page.getByText('backup.tar.gz: the data is the archive’s').first().waitFor();
      await page.context().close();
    }
  });

  it('goes to a typed path and adds a document with its fields in one dialog', async () => {
    for (const [name, viewport] of Object.entries(viewports)) {
      const coll = `shelf-${name}`;
      const page = await pageAt(viewport);
      await page.goto(`${loupe.url}/_/console/firestore`);
      const typed = page.getByLabel('Path, typed');
      // A path that is no path says why and goes nowhere; Escape puts the links back.
      await page.getByRole('button', { name: 'Edit path' }).click();
      await typed.fill(`${coll}//b1`);
      await typed.press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Segment 2 is empty' }).waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on the typed path at ${name}`);
      await screenshot(page, `console-path-invalid-${name}`);
      await typed.press('Escape');
      await page.getByRole('button', { name: 'Edit path' }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('path'), null, 'Escape goes nowhere');
      // One segment is a collection.
      await page.getByRole('button', { name: 'Edit path' }).click();
      await typed.fill(`/${coll}`);
      await typed.press('Enter');
      await page.waitForURL((u) => u.searchParams.get('path') === coll);

      // Add document: the id, then typed fields; an unreadable value is said in the dialog.
      await page.getByRole('button', { name: 'Add document' }).click();
      const dialog = page.getByRole('dialog', { name: `Add a document to ${coll}` });
      await dialog.getByLabel('Document id').fill('b1');
      await dialog.getByLabel('Name of field 1').fill('title');
      await dialog.getByLabel('Value of field 1').fill('Dune');
      await dialog.getByRole('button', { name: 'Add a field' }).click();
      await dialog.getByLabel('Name of field 2').fill('pages');
      await dialog.getByLabel('Type of field 2').selectOption('integer');
      await dialog.getByLabel('Value of field 2').fill('four hundred');
      await dialog.getByRole('button', { name: 'Add a field' }).click();
      await dialog.getByLabel('Name of field 3').fill('added');
      await dialog.getByLabel('Type of field 3').selectOption('serverTimestamp');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.getByRole('alert').filter({ hasText: 'pages:' }).waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on Add document at ${name}`);
      await screenshot(page, `console-add-document-${name}`);
      await dialog.getByLabel('Value of field 2').fill('412');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL((u) => u.searchParams.get('path') === `${coll}/b1`);
      await page.locator('[data-field="pages"]').waitFor();
      const stored = await call(`/v1/${docs}/${coll}/b1`);
      assert.equal(stored.body.fields.title.stringValue, 'Dune');
      assert.equal(stored.body.fields.pages.integerValue, '412');
      assert.ok(stored.body.fields.added.timestampValue, 'the server stamped the time');

      // The same id again: the server's refusal shows in the dialog, which stays open.
      await page.getByRole('navigation', { name: 'Path' }).getByRole('button', { name: coll }).click();
      await page.waitForURL((u) => u.searchParams.get('path') === coll);
      await page.getByRole('list', { name: 'Documents' }).getByText('b1', { exact: true }).waitFor();
      await screenshot(page, `console-added-document-${name}`);
      await page.getByRole('button', { name: 'Add document' }).click();
      await dialog.getByLabel('Document id').fill('b1');
      await dialog.getByRole('button', { name: 'Remove field 1' }).click();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog
        .getByRole('alert')
        .filter({ hasText: /already exists/i })
        .waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();

      // Two segments are a document.
      await commit([{ update: { name: `${docs}/${coll}/b2`, fields: { title: { stringValue: 'Emma' } } } }]);
      await page.getByRole('navigation', { name: 'Path' }).click({ position: { x: 3, y: 3 } });
      await typed.fill(`${coll}/b2`);
      await typed.press('Enter');
      await page.waitForURL((u) => u.searchParams.get('path') === `${coll}/b2`);
      await page.locator('[data-field="title"]').getByText('"Emma"').waitFor();
      await page.context().close();
    }
  });
});
