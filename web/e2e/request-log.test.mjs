// The request log the console's Requests tab reads: a write the JS SDK makes
// (over gRPC in Node, REST with the lite SDK, WebChannel in Chromium) and the
// rules deny shows up, with the caller and the rule line that decided, in the
// list and on the live event stream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fs from 'firebase/firestore';
import * as lite from 'firebase/firestore/lite';
import { assertFails, assertSucceeds } from '@firebase/rules-unit-testing';
import { launchBrowser } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null;
      allow create: if request.auth.uid == request.resource.data.owner;
    }
  }
}`;

describe('request log', () => {
  let loupe;
  let app;
  before(async () => {
    loupe = await startLoupe();
    const resp = await fetch(`${loupe.url}/emulator/v1/projects/demo-log:securityRules`, {
      method: 'PUT',
      body: JSON.stringify({ rules: { files: [{ content: rules }] } }),
    });
    assert.equal(resp.status, 200);
    app = initializeApp({ projectId: 'demo-log', apiKey: 'demo-api-key' }, `log-${Date.now()}`);
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  it('shows a denied write with its caller and the deciding rule line, live', async () => {
    const events = [];
    const controller = new AbortController();
    const stream = await fetch(`${loupe.url}/emulator/v1/requests`, {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    });
    assert.equal(stream.headers.get('content-type'), 'text/event-stream');
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of stream.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (data) events.push(JSON.parse(data.slice(6)));
        }
        if (events.length >= 2) return;
      }
    })();

    const db = fs.getFirestore(app);
    fs.connectFirestoreEmulator(db, '127.0.0.1', loupe.port, {
      mockUserToken: { sub: 'alice', email: 'alice@example.com' },
    });
    await assertSucceeds(fs.setDoc(fs.doc(db, 'notes/a'), { owner: 'alice' }));
    await assertFails(fs.setDoc(fs.doc(db, 'notes/b'), { owner: 'bob' }));

    const { requests } = await (await fetch(`${loupe.url}/emulator/v1/requests?outcome=denied`)).json();
    assert.equal(requests.length, 1);
    const [denied] = requests;
    assert.equal(denied.service, 'firestore');
    assert.equal(denied.method, 'create');
    assert.equal(denied.path, 'notes/b');
    assert.equal(denied.status, 403);
    assert.equal(denied.caller.uid, 'alice');
    assert.equal(denied.caller.claims.email, 'alice@example.com');
    assert.deepEqual(denied.request.owner, { stringValue: 'bob' });
    assert.deepEqual(denied.rules.allows, [{ line: 6, outcome: 'deny' }]);
    // Inner expressions come first; the whole condition (same start) last.
    const condition = denied.rules.expressions.findLast((e) => e.range.line === 6 && e.range.column === 24);
    assert.deepEqual(condition.value, { boolValue: false });

    await reading;
    controller.abort();
    assert.deepEqual(
      events.map((e) => [e.path, e.outcome]),
      [
        ['notes/a', 'allowed'],
        ['notes/b', 'denied'],
      ],
    );
  });

  it('logs the lite SDK’s REST writes the same way', async () => {
    const liteApp = initializeApp({ projectId: 'demo-log', apiKey: 'demo-api-key' }, `lite-${Date.now()}`);
    try {
      const db = lite.getFirestore(liteApp);
      lite.connectFirestoreEmulator(db, '127.0.0.1', loupe.port, { mockUserToken: { sub: 'carol' } });
      await assertFails(lite.setDoc(lite.doc(db, 'notes/c'), { owner: 'bob' }));
      const { requests } = await (await fetch(`${loupe.url}/emulator/v1/requests?path=notes/c`)).json();
      assert.equal(requests.length, 1);
      assert.equal(requests[0].outcome, 'denied');
      assert.equal(requests[0].caller.uid, 'carol');
      assert.deepEqual(requests[0].rules.allows, [{ line: 6, outcome: 'deny' }]);
    } finally {
      await deleteApp(liteApp);
    }
  });
});

describe('request log (Chromium, WebChannel)', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
    const resp = await fetch(`${loupe.url}/emulator/v1/projects/demo-log:securityRules`, {
      method: 'PUT',
      body: JSON.stringify({ rules: { files: [{ content: rules }] } }),
    });
    assert.equal(resp.status, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('shows the browser’s denied write with the deciding rule line', async () => {
    const page = await openSdkPage(browser, loupe.url);
    const code = await page.evaluate(async (port) => {
      const { app, firestore: f } = window.sdk;
      const db = f.getFirestore(app.initializeApp({ projectId: 'demo-log', apiKey: 'demo-api-key' }));
      f.connectFirestoreEmulator(db, '127.0.0.1', port, { mockUserToken: { sub: 'dana' } });
      try {
        await f.setDoc(f.doc(db, 'notes/d'), { owner: 'erin' });
        return 'allowed';
      } catch (e) {
        return e.code;
      }
    }, loupe.port);
    assert.equal(code, 'permission-denied');
    const { requests } = await (await fetch(`${loupe.url}/emulator/v1/requests?path=notes/d`)).json();
    assert.equal(requests.length, 1);
    assert.equal(requests[0].caller.uid, 'dana');
    assert.deepEqual(requests[0].rules.allows, [{ line: 6, outcome: 'deny' }]);
  });
});
