// Rules and data per project and per database: two test environments with
// different project ids share one `loupe serve` at the same time, as parallel
// test files do, and neither sees the other's rules or data; firebase.json's
// array form gives each named database its own rules.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fs from 'firebase/firestore';
import { assertFails, assertSucceeds, initializeTestEnvironment } from '@firebase/rules-unit-testing';
import { startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const rules = (cond) => `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} { allow read, write: if ${cond}; }
  }
}`;

describe('rules and data per project', () => {
  let loupe;
  const envs = [];
  before(async () => {
    loupe = await startLoupe();
  });
  after(async () => {
    for (const env of envs) await env.cleanup();
    await loupe?.stop();
  });

  it('two projects loading rules at once each keep their own rules and data', async () => {
    const open = async (projectId, cond) => {
      const env = await initializeTestEnvironment({
        projectId,
        firestore: { host: '127.0.0.1', port: loupe.port, rules: rules(cond) },
      });
      envs.push(env);
      return env;
    };
    // Loaded concurrently: today's last load would win for both.
    const [writers, readers] = await Promise.all([
      open('demo-writers', 'request.auth != null'),
      open('demo-readers', 'false'),
    ]);
    const note = (env) => env.authenticatedContext('alice').firestore().doc('notes/n1');
    await Promise.all([
      assertSucceeds(note(writers).set({ by: 'writers' })),
      assertFails(note(readers).set({ by: 'readers' })),
    ]);
    // The data stays in its project too.
    await readers.withSecurityRulesDisabled(async (ctx) => {
      const snap = await ctx.firestore().doc('notes/n1').get();
      assert.equal(snap.exists, false, 'demo-readers sees demo-writers’ document');
    });
    await writers.withSecurityRulesDisabled(async (ctx) => {
      const snap = await ctx.firestore().doc('notes/n1').get();
      assert.equal(snap.get('by'), 'writers');
    });
    // Clearing one project leaves the other's data.
    await readers.clearFirestore();
    await assertSucceeds(note(writers).get());
    assert.equal((await note(writers).get()).get('by'), 'writers');
  });
});

describe('rules per database from firebase.json', () => {
  let loupe;
  let app;
  before(async () => {
    const dir = scratchDir('loupe-dbrules-');
    writeFileSync(path.join(dir, 'open.rules'), rules('true'));
    writeFileSync(path.join(dir, 'closed.rules'), rules('false'));
    loupe = await startLoupe({
      config: {
        firestore: [
          { database: '(default)', rules: path.join(dir, 'open.rules') },
          { database: 'orders', rules: path.join(dir, 'closed.rules') },
        ],
      },
    });
    app = initializeApp({ projectId: 'demo-loupe', apiKey: 'demo-api-key' }, `dbrules-${Date.now()}`);
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  it('each named database answers with its own rules', async () => {
    const connect = (db) => {
      fs.connectFirestoreEmulator(db, '127.0.0.1', loupe.port, { mockUserToken: { sub: 'alice' } });
      return db;
    };
    const byDefault = connect(fs.getFirestore(app));
    const orders = connect(fs.getFirestore(app, 'orders'));
    await assertSucceeds(fs.setDoc(fs.doc(byDefault, 'notes/n1'), { n: 1 }));
    await assertFails(fs.setDoc(fs.doc(orders, 'notes/n1'), { n: 1 }));
    await assertFails(fs.getDoc(fs.doc(orders, 'notes/n1')));
  });
});

describe('rules coverage', () => {
  let loupe;
  let env;
  before(async () => {
    loupe = await startLoupe();
    env = await initializeTestEnvironment({
      projectId: 'demo-coverage',
      firestore: { host: '127.0.0.1', port: loupe.port, rules: rules("request.auth.uid == 'alice'") },
    });
  });
  after(async () => {
    await env?.cleanup();
    await loupe?.stop();
  });

  it('reports each expression with the values it gave, as JSON and as a page', async () => {
    await assertSucceeds(env.authenticatedContext('alice').firestore().doc('notes/a').set({ n: 1 }));
    await assertFails(env.authenticatedContext('bob').firestore().doc('notes/b').set({ n: 1 }));
    const base = `http://127.0.0.1:${loupe.port}/emulator/v1/projects/demo-coverage`;
    const report = await (await fetch(`${base}:ruleCoverage`)).json();
    assert.equal(report.rules.files[0].content, rules("request.auth.uid == 'alice'"));
    const [top] = report.report;
    const source = Array.from(report.rules.files[0].content);
    assert.equal(
      source.slice(top.sourcePosition.currentOffset, top.sourcePosition.endOffset + 1).join(''),
      "request.auth.uid == 'alice'",
    );
    assert.deepEqual(top.values.map((v) => [v.value.boolValue, v.count]).sort(), [
      [false, 1],
      [true, 1],
    ]);
    const page = await fetch(`${base}:ruleCoverage.html`);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    assert.match(await page.text(), /class="false"/);
  });
});
