// The loupe console in Chromium, against a real `loupe serve` with the
// repository's rules and functions; "the app" is the unmodified Firebase JS
// SDK in another page, as the web app uses it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { Filter, GeoPoint, Timestamp, getFirestore } from 'firebase-admin/firestore';
import { admin } from './support/admin.mjs';
import { axeSerious } from './support/axe.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';
import { scratchDir } from './support/scratch.mjs';

function initApp({ projectId, port }) {
  const { app, firestore, auth } = window.sdk;
  const a = app.initializeApp({ projectId, apiKey: 'demo-api-key' });
  window.db = firestore.getFirestore(a);
  firestore.connectFirestoreEmulator(window.db, '127.0.0.1', port);
  window.auth = auth.getAuth(a);
  auth.connectAuthEmulator(window.auth, `http://127.0.0.1:${port}`, { disableWarnings: true });
}

describe('loupe console', () => {
  let loupe;
  let browser;
  let app; // the Firebase JS SDK page
  let page; // the console
  let adminApp; // firebase-admin (@google-cloud/firestore over gRPC)
  before(async () => {
    loupe = await startLoupe({
      config: { hosting: { public: await sdkPage() } },
      rules: true,
      functions: true,
    });
    browser = await launchBrowser();
    app = await openSdkPage(browser, loupe.url);
    await app.evaluate(initApp, { projectId, port: loupe.port });
    page = await (await browser.newContext({ viewport: viewports.desktop })).newPage();
    process.env.FIRESTORE_EMULATOR_HOST = loupe.host;
    adminApp = initializeApp({ projectId }, `console-${Date.now()}`);
  });
  after(async () => {
    if (adminApp) await deleteApp(adminApp);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await browser?.close();
    await loupe?.stop();
  });

  it('adds a document the app’s listener sees, and changes a field’s type', async () => {
    // The app listens to the public categories collection.
    await app.evaluate(() => {
      const f = window.sdk.firestore;
      window.seen = [];
      f.onSnapshot(f.collection(window.db, 'categories'), (s) =>
        window.seen.push(s.docs.map((d) => ({ id: d.id, ...d.data() }))),
      );
    });
    await page.goto(`${loupe.url}/_/console/firestore`);
    await page.getByRole('button', { name: 'Start collection' }).first().click();
    await page.getByLabel('Collection id').fill('categories');
    await page.getByLabel('First document id').fill('chess');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('button', { name: 'Add field' }).click();
    const form = page.getByRole('form', { name: 'New field' });
    await form.getByLabel('Field name').fill('order');
    await form.getByLabel('Value').fill('7');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.locator('[data-field="order"]').getByText('"7"').waitFor();
    await app.waitForFunction(() => window.seen.at(-1)?.some((d) => d.id === 'chess' && d.order === '7'));

    await page.getByRole('button', { name: 'Edit order' }).click();
    const edit = page.getByRole('form', { name: 'Edit order' });
    await edit.getByLabel('Type').selectOption('integer');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.locator('[data-field="order"]').getByText('integer').waitFor();
    await app.waitForFunction(() => window.seen.at(-1)?.some((d) => d.id === 'chess' && d.order === 7));
    assert.deepEqual(await admin(loupe).get('categories/chess'), { order: 7 });

    // The query panel finds it by its new type and names the index it read.
    await page.getByRole('button', { name: 'Query' }).click();
    const query = page.getByRole('form', { name: 'Query' });
    await query.getByLabel('Filter field').fill('order');
    await query.getByLabel('Value type').selectOption('integer');
    await query.getByLabel('Filter value').fill('7');
    await query.getByRole('button', { name: 'Run' }).click();
    await page.getByLabel('Index used').getByText('order ASC').waitFor();
  });

  it('edits a map member by member, keeping and writing typed values', async () => {
    const doc = getFirestore(adminApp).doc('categories/chess');
    const created = Timestamp.fromDate(new Date('2025-12-24T18:00:00.250Z'));
    await doc.update({ meta: { created, note: 'draft', where: new GeoPoint(48.85, 2.35) } });
    await page.goto(`${loupe.url}/_/console/firestore?path=categories/chess`);
    await page.locator('[data-field="meta"]').getByText('2025-12-24T18:00:00.250Z').waitFor();

    await page.getByRole('button', { name: 'Edit meta', exact: true }).click();
    const edit = page.getByRole('form', { name: 'Edit meta', exact: true });
    await edit.getByLabel('Value of meta.note', { exact: true }).fill('final');
    await edit.getByRole('button', { name: 'Add key to meta', exact: true }).click();
    await edit.getByLabel('Key in meta', { exact: true }).last().fill('due');
    await edit.getByLabel('Type of meta.due', { exact: true }).selectOption('timestamp');
    await edit.getByLabel('Value of meta.due', { exact: true }).fill('2026-03-01T09:30:00Z');
    // A nested value's type changes too: a list of one timestamp.
    await edit.getByRole('button', { name: 'Add key to meta', exact: true }).click();
    await edit.getByLabel('Key in meta', { exact: true }).last().fill('slots');
    await edit.getByLabel('Type of meta.slots', { exact: true }).selectOption('array');
    await edit.getByRole('button', { name: 'Add element to meta.slots', exact: true }).click();
    await edit.getByLabel('Type of meta.slots[0]', { exact: true }).selectOption('timestamp');
    await edit.getByLabel('Value of meta.slots[0]', { exact: true }).fill('2026-03-02T10:00:00Z');
    assert.deepEqual(await axeSerious(page), [], 'axe on the nested editor');
    // And a member set to the server's time.
    await edit.getByRole('button', { name: 'Add key to meta', exact: true }).click();
    await edit.getByLabel('Key in meta', { exact: true }).last().fill('seen');
    await edit.getByLabel('Type of meta.seen', { exact: true }).selectOption('serverTimestamp');
    const saved = Date.now();
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'detached' });

    const meta = (await doc.get()).get('meta');
    assert.ok(meta.seen instanceof Timestamp, 'meta.seen is a Timestamp');
    assert.ok(Math.abs(meta.seen.toMillis() - saved) < 60_000, 'meta.seen is the server’s time');
    assert.ok(meta.due instanceof Timestamp, `meta.due is a Timestamp, not ${typeof meta.due}`);
    assert.equal(meta.due.toDate().toISOString(), '2026-03-01T09:30:00.000Z');
    assert.ok(meta.slots[0] instanceof Timestamp, 'meta.slots[0] is a Timestamp');
    assert.ok(meta.created instanceof Timestamp && meta.created.isEqual(created), 'meta.created is kept');
    assert.ok(meta.where instanceof GeoPoint && meta.where.latitude === 48.85, 'meta.where stays a geopoint');
    assert.equal(meta.note, 'final');

    // One member at a time, from the document's rows: retype and rename, add an element, delete.
    await page.getByRole('button', { name: 'Edit meta.note', exact: true }).click();
    const note = page.getByRole('form', { name: 'Edit meta.note' });
    await note.getByLabel('Key', { exact: true }).fill('noted');
    await note.getByLabel('Type', { exact: true }).selectOption('timestamp');
    await note.getByLabel('Value', { exact: true }).fill('2026-04-01T08:00:00Z');
    await note.getByRole('button', { name: 'Save' }).click();
    await note.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Add element to meta.slots', exact: true }).click();
    const slot = page.getByRole('form', { name: 'New element of meta.slots' });
    await slot.getByLabel('Type', { exact: true }).selectOption('geopoint');
    await slot.getByLabel('Value', { exact: true }).fill('1.5, 2.5');
    await slot.getByRole('button', { name: 'Save' }).click();
    await slot.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete meta.where', exact: true }).click();
    await page.getByRole('button', { name: 'Delete meta.where', exact: true }).waitFor({ state: 'detached' });
    const after = (await doc.get()).get('meta');
    assert.ok(after.noted instanceof Timestamp, 'meta.noted is a Timestamp');
    assert.equal(after.noted.toDate().toISOString(), '2026-04-01T08:00:00.000Z');
    assert.equal(after.note, undefined, 'the old key is gone');
    assert.ok(
      after.slots[1] instanceof GeoPoint && after.slots[1].longitude === 2.5,
      'slots[1] is a geopoint',
    );
    assert.ok(after.slots[0] instanceof Timestamp, 'slots[0] stays a Timestamp');
    assert.equal(after.where, undefined, 'meta.where is deleted');
    assert.ok(after.created.isEqual(created), 'the other members are kept');
  });

  it('queries with OR filters and pages past the limit', async () => {
    const db = admin(loupe);
    for (let n = 1; n <= 9; n++) await db.set(`scores/p${n}`, { n, tag: n % 2 ? 'odd' : 'even' });
    await page.goto(`${loupe.url}/_/console/firestore?path=scores`);
    const docs = page.getByRole('list', { name: 'Documents' });
    const ids = () => docs.locator('li .font-mono').allInnerTexts();
    const shows = async (want) => {
      await page
        .waitForFunction(
          (want) =>
            JSON.stringify(
              [...document.querySelectorAll('ul[aria-label="Documents"] li .font-mono')].map(
                (e) => e.textContent,
              ),
            ) === JSON.stringify(want),
          want,
        )
        .catch(async () => assert.deepEqual(await ids(), want));
    };
    await shows(['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9']);
    // At 1280 px the root's collections show beside the open collection.
    assert.ok(await page.getByRole('heading', { name: '(root)' }).isVisible(), 'the root column shows');
    await page.getByRole('button', { name: 'Query' }).click();
    const query = page.getByRole('form', { name: 'Query' });
    await query.getByRole('button', { name: 'Filter', exact: true }).click();
    await query.getByLabel('Filter field').nth(0).fill('n');
    await query.getByLabel('Value type').nth(0).selectOption('integer');
    await query.getByLabel('Filter value').nth(0).fill('3');
    await query.getByLabel('Filter field').nth(1).fill('tag');
    await query.getByLabel('Filter value').nth(1).fill('even');
    await query.getByLabel('Combine filters').selectOption('OR');
    await query.getByLabel('Order by field').fill('n');
    await query.getByLabel('Limit').fill('2');
    await query.getByRole('button', { name: 'Run' }).click();
    // n == 3 OR tag == "even", two at a time, each page continuing after the last.
    await shows(['p2', 'p3']);
    assert.deepEqual(await axeSerious(page), [], 'axe on the query panel');
    await page.getByRole('button', { name: 'Load 2 more' }).click();
    await shows(['p2', 'p3', 'p4', 'p6']);
    await page.getByRole('button', { name: 'Load 2 more' }).click();
    await shows(['p2', 'p3', 'p4', 'p6', 'p8']);
    assert.equal(
      await page.getByRole('button', { name: 'Load 2 more' }).count(),
      0,
      'no page after the last',
    );
    // The same query through the Admin SDK's Filter.or() pages the same way.
    const q = getFirestore(adminApp)
      .collection('scores')
      .where(Filter.or(Filter.where('n', '==', 3), Filter.where('tag', '==', 'even')))
      .orderBy('n')
      .limit(2);
    const sdkPages = [];
    for (let snap = await q.get(); snap.size; snap = await q.startAfter(snap.docs.at(-1)).get())
      sdkPages.push(...snap.docs.map((d) => d.id));
    assert.deepEqual(sdkPages, await ids());

    // An inequality with no order pages by that field, then the name, as the SDKs do.
    await query.getByRole('button', { name: 'Remove filter' }).nth(1).click();
    await query.getByLabel('Operator').selectOption('GREATER_THAN');
    await query.getByLabel('Filter value').fill('5');
    await query.getByLabel('Order by field').fill('');
    await query.getByRole('button', { name: 'Run' }).click();
    await shows(['p6', 'p7']);
    await page.getByRole('button', { name: 'Load 2 more' }).click();
    await shows(['p6', 'p7', 'p8', 'p9']);
    await page.getByLabel('Index used').getByText('n ASC').waitFor();

    // An `in` filter's list holds typed values: timestamps match timestamps.
    const scores = getFirestore(adminApp).collection('scores');
    await scores.doc('p4').update({ at: Timestamp.fromDate(new Date('2026-05-01T10:00:00Z')) });
    await scores.doc('p7').update({ at: Timestamp.fromDate(new Date('2026-05-02T10:00:00Z')) });
    await scores.doc('p8').update({ at: '2026-05-01T10:00:00Z' });
    await query.getByLabel('Filter field').fill('at');
    await query.getByLabel('Operator').selectOption('IN');
    await query.getByLabel('Type of at[0]', { exact: true }).selectOption('timestamp');
    await query.getByLabel('Value of at[0]', { exact: true }).fill('2026-05-01T10:00:00Z');
    await query.getByRole('button', { name: 'Add element to at', exact: true }).click();
    await query.getByLabel('Type of at[1]', { exact: true }).selectOption('timestamp');
    await query.getByLabel('Value of at[1]', { exact: true }).fill('2026-05-02T10:00:00Z');
    await query.getByLabel('Limit').fill('10');
    await query.getByRole('button', { name: 'Run' }).click();
    await shows(['p4', 'p7']);
  });

  it('creates a user with a custom claim the app signs in with', async () => {
    await page.goto(`${loupe.url}/_/console/auth`);
    await page.getByRole('button', { name: 'Add user' }).click();
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Display name').fill('Rita Admin');
    await form.getByLabel('E-mail').fill('rita@example.com');
    await form.getByLabel('Password').fill('secret1');
    await form.getByLabel('Custom claims (JSON)').fill('{"role": "admin", "org": "acme-international"}');
    await form.getByRole('button', { name: 'Add user' }).click();
    await page.getByRole('list', { name: 'Users' }).getByText('Rita Admin').waitFor();
    const claims = await app.evaluate(async () => {
      const a = window.sdk.auth;
      const cred = await a.signInWithEmailAndPassword(window.auth, 'rita@example.com', 'secret1');
      return (await cred.user.getIdTokenResult()).claims;
    });
    assert.equal(claims.role, 'admin');
    assert.equal(claims.email, 'rita@example.com');
    // At 375 px the claims badge leaves the name readable, and the user's form shows the uid.
    await page.setViewportSize(viewports.mobile);
    const name = page.getByRole('list', { name: 'Users' }).getByText('Rita Admin', { exact: true });
    assert.ok(
      await name.evaluate((el) => el.scrollWidth <= el.clientWidth),
      'the name is cut off by the claims badge at 375 px',
    );
    await name.click();
    await page.getByRole('form', { name: 'Edit user' }).getByText(claims.user_id, { exact: true }).waitFor();
    await page.setViewportSize(viewports.desktop);
  });

  it('shows a denied write from the app in Requests with the deciding rule line', async () => {
    await admin(loupe).set('users/someone-else', { name: 'Someone' });
    const denied = await app.evaluate(async () => {
      const f = window.sdk.firestore;
      try {
        await f.updateDoc(f.doc(window.db, 'users/someone-else'), { name: 'Rita was here' });
        return null;
      } catch (e) {
        return e.code;
      }
    });
    assert.equal(denied, 'permission-denied');
    await page.goto(`${loupe.url}/_/console/requests?outcome=denied`);
    await page.getByRole('list', { name: 'Requests' }).getByText('users/someone-else').first().click();
    const rules = page.getByRole('figure', { name: 'Rules source' });
    const line = rules.locator('li', { has: page.locator('[data-decision="deny"]') }).first();
    await line.waitFor();
    assert.match(await line.innerText(), /allow update: if isUser\(uid\)/);
    const shade = await line.evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.notEqual(shade, 'rgba(0, 0, 0, 0)', 'the deciding line is highlighted');
    // The caller is the signed-in user, with her claims.
    await page.getByText('Token claims').click();
    await page.getByText('"role": "admin"').waitFor();
  });

  it('uploads an image by drag and drop and previews it', async () => {
    const dir = scratchDir('console-e2e-');
    const png = path.join(dir, 'frame.png');
    execFileSync('ffmpeg', [
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x180:rate=1',
      '-frames:v',
      '1',
      png,
    ]);
    const { readFileSync } = await import('node:fs');
    const bytes = [...readFileSync(png)];
    await page.goto(`${loupe.url}/_/console/storage`);
    const drop = await page.evaluateHandle((data) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(data)], 'frame.png', { type: 'image/png' }));
      return dt;
    }, bytes);
    await page.dispatchEvent('[data-testid="dropzone"]', 'drop', { dataTransfer: drop });
    await page.getByRole('list', { name: 'Files' }).getByText('frame.png').click();
    const img = page.getByRole('img', { name: 'Preview of frame.png' });
    await img.waitFor();
    await page.waitForFunction(
      () => document.querySelector('img[alt="Preview of frame.png"]')?.naturalWidth === 320,
    );
    // A folder beside it: the listing's count names both, not "1 file" over two rows.
    const put = await fetch(`${loupe.url}/v0/b/${projectId}.appspot.com/o?name=clips/intro.txt`, {
      method: 'POST',
      headers: { Authorization: 'Bearer owner', 'Content-Type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(put.status, 200, await put.text());
    await page.goto(`${loupe.url}/_/console/storage`);
    await page.getByRole('list', { name: 'Files' }).getByText('clips/').waitFor();
    await page.getByText('1 folder · 1 file', { exact: true }).waitFor();
  });

  it('creates a download token that serves the file, and revokes one', async () => {
    await page.goto(`${loupe.url}/_/console/storage?object=frame.png`);
    const tokens = page.getByRole('list', { name: 'Download tokens' }).locator('li');
    await tokens.first().waitFor();
    assert.equal(await tokens.count(), 1);
    const old = await tokens.first().innerText();
    await page.getByRole('button', { name: 'Create token' }).click();
    await tokens.nth(1).waitFor();
    const fresh = await tokens.nth(1).innerText();
    assert.notEqual(fresh, old);
    const media = (token) =>
      fetch(`${loupe.url}/v0/b/${projectId}.appspot.com/o/frame.png?alt=media&token=${token}`);
    const res = await media(fresh);
    assert.equal(res.status, 200, 'the new token’s download URL serves the file');
    const served = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(served, Buffer.from(await (await media(old)).arrayBuffer()));
    assert.equal(served.subarray(1, 4).toString(), 'PNG');

    await tokens.filter({ hasText: old }).getByRole('button', { name: 'Revoke token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await page.waitForFunction(
      () => document.querySelectorAll('ul[aria-label="Download tokens"] li').length === 1,
    );
    assert.equal(await tokens.first().innerText(), fresh);
    assert.equal((await media(old)).status, 403, 'a revoked token no longer reads');
    assert.equal((await media(fresh)).status, 200);
  });

  it('shows the trigger delivery after a comment is added', async () => {
    const db = admin(loupe);
    await db.set('feedbackRequests/r1', {
      requesterId: 'sam',
      mentorId: 'maya',
      title: 'Solo',
      status: 'pending',
    });
    await db.set('feedbackRequests/r1/comments/c1', {
      userId: 'maya',
      content: 'Nice',
      isReply: false,
      deleted: false,
      repliesCount: 0,
    });
    await page.goto(`${loupe.url}/_/console/functions`);
    const deliveries = page.getByRole('list', { name: 'Deliveries' });
    await deliveries.getByText('feedbackRequests/r1/comments/c1').first().waitFor({ timeout: 20_000 });
    await deliveries.getByText('comment-fanout').first().waitFor();

    // Paused from the console, a write triggers nothing; resumed, the next one is delivered.
    await page.getByRole('button', { name: 'Pause triggers' }).click();
    await page.getByText('background triggers paused').waitFor();
    const hub = await fetch(`${loupe.url}/functions/disableBackgroundTriggers`, { method: 'PUT' });
    assert.deepEqual(await hub.json(), { enabled: false }, 'the hub reports the console’s pause');
    await db.set('feedbackRequests/r1/comments/c2', {
      userId: 'maya',
      content: 'While paused',
      isReply: false,
      deleted: false,
      repliesCount: 0,
    });
    await page.getByRole('button', { name: 'Resume triggers' }).click();
    await page.getByText('background triggers paused').waitFor({ state: 'detached' });
    await db.set('feedbackRequests/r1/comments/c3', {
      userId: 'maya',
      content: 'After',
      isReply: false,
      deleted: false,
      repliesCount: 0,
    });
    await deliveries.getByText('feedbackRequests/r1/comments/c3').first().waitFor({ timeout: 20_000 });
    assert.equal(await deliveries.getByText('feedbackRequests/r1/comments/c2').count(), 0);
  });

  it('imports an archive exactly, firing no trigger, and says so', async () => {
    const db = admin(loupe);
    const deliveries = async (resource) =>
      (await (await fetch(`${loupe.url}/emulator/v1/functions/events?resource=${resource}`)).json()).events
        .length;
    const before = await deliveries('feedbackRequests/r1/comments/c1');
    assert.ok(before > 0, 'the comment was delivered once already');
    for (const [name, size] of Object.entries(viewports)) {
      await page.setViewportSize(size);
      await page.goto(`${loupe.url}/_/console/firestore?path=feedbackRequests/r1/comments`);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export' }).click(),
      ]);
      const archive = await download.path();
      await page.setInputFiles('input[aria-label="Import archive"]', archive);
      const dialog = page.getByRole('dialog');
      await dialog.getByText('no function trigger runs').waitFor();
      assert.deepEqual(await axeSerious(page), [], `axe on the import dialog at ${name}`);
      await screenshot(page, `console-import-${name}`);
      await dialog.getByRole('button', { name: 'Import' }).click();
      await page.getByText('Imported', { exact: true }).waitFor();
      // A write after the import is delivered; by then an import's events would have been too.
      const probe = `probe-${name}`;
      await db.set(`feedbackRequests/r1/comments/${probe}`, {
        userId: 'maya',
        content: 'After the import',
        isReply: false,
        deleted: false,
        repliesCount: 0,
      });
      await page.waitForFunction(
        async (url) => (await (await fetch(url)).json()).events.length > 0,
        `${loupe.url}/emulator/v1/functions/events?resource=feedbackRequests/r1/comments/${probe}`,
        { timeout: 30_000, polling: 100 },
      );
      assert.equal(
        await deliveries('feedbackRequests/r1/comments/c1'),
        before,
        `the import at ${name} fired no trigger for the documents it restored`,
      );
      assert.deepEqual(
        (await db.get('feedbackRequests/r1/comments/c1'))?.content,
        'Nice',
        'the data came back',
      );
    }
  });

  it('pages Auth users by cursor, searches them on the server, and refreshes by change', async () => {
    const owner = (path, body, method = 'POST') =>
      fetch(`${loupe.url}${path}`, {
        method,
        headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
        body: body && JSON.stringify(body),
      }).then(async (r) => (assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`), r.json()));
    const idt = `/identitytoolkit.googleapis.com/v1/projects/${projectId}`;
    await owner(`/emulator/v1/projects/${projectId}/accounts`, undefined, 'DELETE');
    const n = (i) => String(i).padStart(3, '0');
    const users = Array.from({ length: 300 }, (_, i) => ({
      localId: `page-${n(i)}`,
      email: `page${n(i)}@example.com`,
      displayName: `Pager ${n(i)}`,
    }));
    await owner(`${idt}/accounts:batchCreate`, { users });
    await page.setViewportSize(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/auth`);
    const list = page.getByRole('list', { name: 'Users' });
    const rows = list.locator(':scope > li');
    await page.getByText('100 of 300 shown').waitFor();
    // One page is loaded, and of it only the rows in view are rendered, each
    // saying where it stands among the users that match.
    const rendered = await rows.count();
    assert.ok(rendered > 0 && rendered < 100, `${rendered} of the 100 loaded rows are rendered`);
    assert.match(await rows.first().innerText(), /Pager 000/);
    assert.equal(await rows.first().getAttribute('aria-posinset'), '1');
    assert.equal(await rows.first().getAttribute('aria-setsize'), '300');
    // At both widths the rows stand one under the other at their own heights: none overlaps the next.
    for (const [name, size] of Object.entries(viewports)) {
      await page.setViewportSize(size);
      await page.waitForFunction(() => {
        const lis = [...document.querySelectorAll('ul[aria-label="Users"] > li')];
        const boxes = lis.map((li) => li.getBoundingClientRect());
        return (
          lis.length > 1 &&
          lis.every((li) => li.scrollHeight <= li.clientHeight + 1) &&
          boxes.slice(1).every((b, i) => Math.abs(b.top - boxes[i].bottom) < 1)
        );
      });
      assert.deepEqual(await axeSerious(page), [], `axe on the users list at ${name}`);
      if (name === 'mobile') {
        // On a phone the list's own scroller ends on screen, its count and Load more under it:
        // scrolling the rows never leaves the list's end below the fold.
        await page.evaluate(() => window.scrollTo(0, 0));
        const more = page.getByRole('button', { name: 'Load 100 more' });
        const bottom = await more.evaluate((b) => b.getBoundingClientRect().bottom);
        assert.ok(bottom <= size.height, `Load more ends at ${bottom}px, below the ${size.height}px screen`);
      }
      await screenshot(page, `console-auth-users-${name}`);
    }
    await page.setViewportSize(viewports.desktop);
    // The keyboard reaches the last row loaded, which then is rendered: End from the first row.
    await rows.first().getByRole('button').first().focus();
    await page.keyboard.press('End');
    const focused = list.locator('li:has(:focus)');
    await list.locator('li[aria-posinset="100"]:has(:focus)').waitFor();
    assert.match(await focused.innerText(), /Pager 099/);
    // Load more asks for the page after the last uid shown.
    const [next] = await Promise.all([
      page.waitForRequest((r) => r.url().includes('/users?') && r.url().includes('pageToken=page-099')),
      page.getByRole('button', { name: 'Load 100 more' }).click(),
    ]);
    assert.ok(next);
    await page.getByText('200 of 300 shown').waitFor();
    // ↓ from the last row of the first page goes on to the first of the next.
    await list.locator('li[aria-posinset="100"]').getByRole('button').first().focus();
    await page.keyboard.press('ArrowDown');
    await list.locator('li[aria-posinset="101"]:has(:focus)').waitFor();
    assert.match(await focused.innerText(), /Pager 100/);
    // The search runs on the server: a user on no loaded page is found by e-mail.
    await page.getByLabel('Search users').fill('PAGE250@example.com');
    await page.getByText('1 of 1 matching').waitFor();
    assert.match(await rows.first().innerText(), /Pager 250/);
    // A user created meanwhile shows up without a reload: the tab waits for Auth's changes.
    await owner(`${idt}/accounts:batchCreate`, {
      users: [{ localId: 'page-2500', email: 'page250@example.com.au', displayName: 'Late Pager' }],
    });
    await list.getByText('Late Pager').waitFor();
    await page.getByText('2 of 2 matching').waitFor();
  });

  it('lists Pub/Sub topics with backlogs and recent messages, and publishes one', async () => {
    const rest = (path, body, method = 'POST') =>
      fetch(`${loupe.url}/v1/projects/${projectId}/${path}`, {
        method,
        headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
        body: body && JSON.stringify(body),
      }).then(async (r) => (assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`), r.json()));
    // With no topic yet, the publish form says what to do instead of showing an empty picker.
    await page.setViewportSize(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/pubsub`);
    await page.getByText('No topic yet', { exact: true }).waitFor();
    const picker = page.getByRole('form', { name: 'Publish a message' }).getByLabel('Topic');
    assert.equal((await picker.innerText()).trim(), 'No topic yet: create one below');
    await rest('topics/orders', undefined, 'PUT');
    await rest('subscriptions/billing', { topic: `projects/${projectId}/topics/orders` }, 'PUT');
    await rest('topics/orders:publish', {
      messages: [{ data: Buffer.from('{"order":"o1"}').toString('base64'), attributes: { kind: 'new' } }],
    });
    await page.setViewportSize(viewports.desktop);
    await page.goto(`${loupe.url}/_/console/pubsub`);
    const subs = page.getByRole('region', { name: 'Subscriptions of orders' });
    await subs.getByText('billing').waitFor();
    await subs.locator('[data-backlog="1"]').waitFor();
    const recent = page.getByRole('region', { name: 'Recent messages of orders' });
    await recent.getByText('{"order":"o1"}').waitFor();
    await recent.getByText('kind=new').waitFor();

    // Idle, the tab asks nothing: it waits on Pub/Sub's change counter (one
    // long poll held open) instead of reading the topics every 2 s.
    const asked = [];
    const onRequest = (r) => r.url().includes('/pubsub') && asked.push(r.url());
    page.on('request', onRequest);
    await page.waitForTimeout(4500);
    page.off('request', onRequest);
    assert.deepEqual(
      asked.filter((u) => !u.includes('pubsub:changes')),
      [],
      'an idle Pub/Sub tab read the topics',
    );
    // A message another client publishes shows without a poll interval.
    await rest('topics/orders:publish', {
      messages: [{ data: Buffer.from('from the REST API').toString('base64') }],
    });
    await recent.locator('li').first().getByText('from the REST API').waitFor();
    await subs.locator('[data-backlog="2"]').waitFor();

    const form = page.getByRole('form', { name: 'Publish a message' });
    await form.getByLabel('Topic').selectOption('orders');
    await form.getByLabel('Data').fill('hello from the console');
    await form.getByLabel('Attributes (JSON)').fill('{"source": "console"}');
    await form.getByRole('button', { name: 'Publish' }).click();
    await page
      .getByRole('status')
      .getByText(/Published message #\d+ to orders/)
      .waitFor();
    await recent.locator('li').first().getByText('hello from the console').waitFor();
    await subs.locator('[data-backlog="3"]').waitFor();
    // The subscriber gets what the console published; what it holds shows as leased.
    const pulled = await rest('subscriptions/billing:pull', { maxMessages: 10 });
    assert.deepEqual(
      pulled.receivedMessages.map((m) => Buffer.from(m.message.data, 'base64').toString()),
      ['{"order":"o1"}', 'from the REST API', 'hello from the console'],
    );
    assert.deepEqual(pulled.receivedMessages[2].message.attributes, { source: 'console' });
    await subs.getByText('3 leased').waitFor();
    await rest('subscriptions/billing:acknowledge', { ackIds: pulled.receivedMessages.map((m) => m.ackId) });
    await subs.locator('[data-backlog="0"]').waitFor();
  });

  it('shows a Realtime Database value the app writes, live, then edits and deletes it', async () => {
    const ns = `${projectId}-default-rtdb`;
    await app.evaluate(
      ({ host, ns, projectId }) => {
        const { app: firebase, database } = window.sdk;
        const a = firebase.initializeApp({ projectId, databaseURL: `http://${host}?ns=${ns}` }, 'rtdb');
        window.rtdb = database.getDatabase(a);
        window.said = [];
        database.onValue(database.ref(window.rtdb, 'chat/m1/text'), (s) => window.said.push(s.val()));
        window.put = (path, value) => database.set(database.ref(window.rtdb, path), value);
      },
      { host: loupe.host, ns, projectId },
    );
    const owner = { Authorization: 'Bearer owner' };
    const rules = { rules: { chat: { '.read': true, '.write': true } } };
    for (const [url, body] of [
      [`/.settings/rules.json?ns=${ns}`, JSON.stringify(rules, null, 2)],
      ['/hello.json?ns=demo-loupe-extra', '"there"'],
    ]) {
      const res = await fetch(loupe.url + url, { method: 'PUT', headers: owner, body });
      assert.equal(res.status, 200, `PUT ${url}: ${await res.text()}`);
    }
    await page.goto(`${loupe.url}/_/console/database`);
    await page.getByText('No data here').waitFor();
    await app.evaluate(() => window.put('chat/m1', { text: 'hello', by: 'ann' }));
    await page.getByRole('button', { name: 'Expand chat' }).click();
    await page.getByRole('button', { name: 'Expand m1' }).click();
    const text = page.locator('[data-path="/chat/m1/text"]');
    await text.getByText('"hello"').waitFor();
    // The app changes it while the console shows it.
    await app.evaluate(() => window.put('chat/m1/text', 'hello again'));
    await text.getByText('"hello again"').waitFor();

    await text.getByRole('button').click();
    const form = page.getByRole('form', { name: 'Edit text' });
    await form.getByLabel('Value').fill('"bye"');
    await form.getByRole('button', { name: 'Save' }).click();
    await app.waitForFunction(() => window.said.at(-1) === 'bye');
    await text.getByText('"bye"').waitFor();
    // A write the rules deny shows with its outcome; the rule that allowed the others is shaded.
    assert.equal(await app.evaluate(() => window.put('secret', 1).catch((e) => e.code)), 'PERMISSION_DENIED');
    const requests = page.getByRole('list', { name: 'Database requests' });
    await requests.locator('li', { hasText: '/secret' }).getByText('denied').waitFor();
    const write = page
      .getByRole('figure', { name: `Rules of ${ns}` })
      .locator('li', { hasText: '".write": true' });
    await write.locator('.text-emerald-400').waitFor();
    assert.match((await write.getAttribute('class')) ?? '', /bg-emerald/);
    // A long sentence wraps between its words at 375 px, not inside them; a long token still wraps.
    await app.evaluate(() =>
      window.put(
        'chat/m1/note',
        'Realtime values wrap between words, not inside them. '.repeat(4) + 'z'.repeat(90),
      ),
    );
    const note = page.locator('[data-path="/chat/m1/note"]');
    await note.getByText(/zzzz"$/).waitFor();
    for (const [name, size] of Object.entries(viewports)) {
      await page.setViewportSize(size);
      if (name === 'mobile') {
        const split = await note.evaluate((el) => {
          const out = [];
          const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            for (const m of n.data.matchAll(/[A-Za-z,.]+/g)) {
              const r = document.createRange();
              r.setStart(n, m.index);
              r.setEnd(n, m.index + m[0].length);
              if (new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size > 1) out.push(m[0]);
            }
          }
          return out;
        });
        assert.deepEqual(
          split.filter((w) => !/^z+$/.test(w)),
          [],
          'words split across lines',
        );
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - innerWidth), 0);
      }
      await screenshot(page, `console-database-edit-${name}`);
      assert.deepEqual(await axeSerious(page), [], `axe on the database tab at ${name}`);
    }
    await page.setViewportSize(viewports.desktop);

    await page.locator('[data-path="/chat/m1"]').getByRole('button', { name: /^m1 / }).click();
    await page.getByRole('button', { name: 'Delete m1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await app.waitForFunction(() => window.said.at(-1) === null);
    await page.getByText('No data here').waitFor();
    assert.equal(await page.locator('[data-path="/chat/m1"]').count(), 0);

    await page.getByLabel('Namespace').selectOption('demo-loupe-extra');
    await page.locator('[data-path="/hello"]').getByText('"there"').waitFor();
  });

  it('shades the rules lines that ran; every tab passes axe and is screenshot', async () => {
    await page.goto(`${loupe.url}/_/console/rules`);
    const source = page.getByRole('figure', { name: 'Rules coverage' });
    await source.locator('li').first().waitFor();
    const shaded = (tone) =>
      source
        .locator('li')
        .evaluateAll(
          (lis, tone) => lis.filter((li) => li.className.includes(`bg-${tone}`)).map((li) => li.innerText),
          tone,
        );
    // signedIn() ran true for Rita's denied update; isUser(uid) gave false.
    const green = await shaded('emerald');
    const red = await shaded('red');
    assert.ok(
      green.some((t) => t.includes('return request.auth != null;')),
      `lines that gave true: ${green}`,
    );
    assert.ok(
      red.some((t) => t.includes('allow update: if isUser(uid)')),
      `lines that gave only false: ${red}`,
    );
    assert.ok(
      [...green, ...red].every((t) => /[✓✗]\d/.test(t)),
      'each shaded line shows its counts',
    );
    const unshaded = await source
      .locator('li', { hasText: 'allow create: if isRequester(request.resource.data)' })
      .getAttribute('class');
    assert.doesNotMatch(unshaded ?? '', /bg-(emerald|red)/, 'a rule no request reached is not shaded as run');

    // A message whose data is longer than a phone is wide.
    const sent = await fetch(`${loupe.url}/v1/projects/${projectId}/messages:send`, {
      method: 'POST',
      headers: { Authorization: 'Bearer owner', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        message: {
          topic: 'news',
          notification: { title: 'Shipped' },
          data: { url: 'https://example.com/orders/o-42/details/with/a/long/path/and/more/segments' },
        },
      }),
    });
    assert.equal(sent.status, 200, await sent.text());
    const wide = [];
    const clipped = [];
    for (const [name, size] of Object.entries(viewports)) {
      await page.setViewportSize(size);
      for (const tab of [
        'overview',
        'firestore?path=categories/chess',
        'database',
        'requests',
        'auth',
        'storage?object=frame.png',
        'functions',
        'messaging',
        'pubsub',
        'rules',
        'indexes',
      ]) {
        await page.goto(`${loupe.url}/_/console/${tab}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForTimeout(400); // the tab's first data
        await screenshot(page, `console-${tab.replace(/\W.*$/, '')}-${name}`);
        if (tab.startsWith('firestore') && name === 'desktop') {
          // The open document has the room: its timestamps stay on one line at 1280 px.
          const heights = await page
            .locator('[data-value]')
            .evaluateAll((els) =>
              els
                .filter((e) => /^\d{4}-\d\d-\d\dT/.test(e.textContent ?? ''))
                .map((e) => e.getBoundingClientRect().height),
            );
          assert.ok(heights.length >= 3 && heights.every((h) => h < 24), `timestamp heights ${heights}`);
        }
        if (tab.startsWith('firestore') && name === 'mobile') {
          // At 375 px opening a document from the keyboard hides its list: the focus moves on to the
          // open document's heading, and Tab goes on inside it.
          await page.goto(`${loupe.url}/_/console/firestore?path=categories`);
          await page.locator('li > button', { hasText: /^chess/ }).focus();
          await page.keyboard.press('Enter');
          await page.waitForURL(/path=categories%2Fchess/);
          await page.waitForFunction(() => document.activeElement?.tagName === 'H2');
          assert.match(await page.evaluate(() => document.activeElement.textContent), /chess/);
          await page.goBack();
          await page.locator('main h1').first().waitFor();
        }
        if (tab === 'overview' && name === 'desktop') {
          // Pub/Sub is named like the other services and opens its tab.
          await page
            .locator('main')
            .getByRole('link', { name: /^Cloud Pub\/Sub/ })
            .click();
          await page.getByRole('heading', { name: 'Pub/Sub', exact: true }).waitFor();
          await page.goBack();
          await page.locator('main h1').first().waitFor();
        }
        if (tab.startsWith('firestore') && name === 'desktop') {
          // A document row reached by Tab shows the same focus ring as every other control.
          await page.locator('li > button[aria-current="true"]', { hasText: /^chess/ }).focus();
          await page.keyboard.press('Shift+Tab');
          await page.keyboard.press('Tab');
          const ring = await page.evaluate(() => {
            const s = getComputedStyle(document.activeElement);
            return `${document.activeElement.textContent}: ${s.outlineStyle} ${s.outlineWidth}`;
          });
          assert.match(ring, /^chess.*: solid [1-9]/, 'the focused document row has an outline');
        }
        if (tab === 'functions' && name === 'mobile') {
          // At 375 px each function's name and trigger are read whole, not cut off.
          const cut = await page
            .locator('ul[aria-label="Functions"] > li > span:first-child > span')
            .evaluateAll((els) =>
              els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent),
            );
          assert.ok(
            cut.length === 0 && (await page.locator('ul[aria-label="Functions"] > li').count()) > 0,
            `cut off: ${cut}`,
          );
          const names = await page
            .locator('ul[aria-label="Functions"] > li > span:first-child > span:first-child')
            .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
          assert.ok(
            names.every((h) => h < 24),
            `function names wrap: ${names}`,
          );
        }
        // What is cut short ends in an ellipsis: text cut inside a flex box shows none.
        for (const cut of await page.locator('main').evaluate((main) =>
          [...main.querySelectorAll('*')]
            .filter((e) => {
              const s = getComputedStyle(e);
              return (
                s.textOverflow === 'ellipsis' && /flex|grid/.test(s.display) && e.scrollWidth > e.clientWidth
              );
            })
            .map((e) => e.textContent),
        ))
          clipped.push(`${tab} at ${name}: ${cut}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 0) wide.push(`${tab} at ${name} is ${overflow}px wider than the window`);
        assert.deepEqual(await axeSerious(page), [], `axe on ${tab} at ${name}`);
      }
    }
    assert.deepEqual(wide, [], 'no tab scrolls sideways');
    assert.deepEqual(clipped, [], 'text cut off without an ellipsis');
  });
});
