// Realtime Database security rules through every transport: the JS SDK's
// WebSocket, REST, and @firebase/rules-unit-testing's RTDB API, with each
// decision in the request log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertFails, assertSucceeds, initializeTestEnvironment } from '@firebase/rules-unit-testing';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, signOut } from 'firebase/auth';
import {
  connectDatabaseEmulator,
  equalTo,
  get,
  getDatabase,
  onValue,
  orderByChild,
  query,
  ref,
  set,
  update,
} from 'firebase/database';
import { startLoupe } from './support/loupe.mjs';

const projectId = 'demo-rtdb-rules';

const rules = `{
  "rules": {
    "users": {
      "$uid": {
        ".read": "auth != null && auth.uid === $uid",
        ".write": "auth != null && auth.uid === $uid",
        ".validate": "newData.hasChildren(['name'])",
        "name": { ".validate": "newData.isString() && newData.val().length <= 20" }
      }
    },
    "notes": {
      ".read": "auth != null && query.orderByChild === 'owner' && query.equalTo === auth.uid",
      ".indexOn": ["owner"],
      "$id": { ".write": "auth != null && newData.child('owner').val() === auth.uid" }
    },
    "stamps": { "$id": { ".write": true, ".validate": "newData.val() <= now" } }
  }
}`;

/** A mock ID token as rules-unit-testing makes one. */
function mockToken(uid) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: uid, user_id: uid, iat: 1, aud: projectId })}.`;
}

describe('Realtime Database rules', () => {
  let loupe;
  let env;
  before(async () => {
    loupe = await startLoupe({ config: {} });
    env = await initializeTestEnvironment({
      projectId,
      database: { host: '127.0.0.1', port: loupe.port, rules },
    });
  });
  after(async () => {
    await env?.cleanup();
    await loupe?.stop();
  });

  it('allows and denies over the WebSocket, as rules-unit-testing expects', async () => {
    const alice = env.authenticatedContext('alice').database();
    const bob = env.authenticatedContext('bob').database();
    const anon = env.unauthenticatedContext().database();
    await assertSucceeds(set(ref(alice, 'users/alice'), { name: 'Alice' }));
    await assertFails(set(ref(bob, 'users/alice'), { name: 'Bob' }));
    await assertFails(get(ref(anon, 'users/alice')));
    await assertSucceeds(get(ref(alice, 'users/alice')));
    // .validate: below the write (name too long) and above it (name required).
    await assertFails(set(ref(alice, 'users/alice/name'), 'x'.repeat(21)));
    await assertFails(set(ref(bob, 'users/bob'), { age: 3 }));
    await assertSucceeds(update(ref(alice, 'users/alice'), { age: 3 }));
    // A query the rules ask for is allowed; reading the whole list is not.
    await assertSucceeds(set(ref(alice, 'notes/n1'), { owner: 'alice', text: 'mine' }));
    await assertSucceeds(set(ref(bob, 'notes/n2'), { owner: 'bob', text: 'his' }));
    const mine = await assertSucceeds(
      get(query(ref(alice, 'notes'), orderByChild('owner'), equalTo('alice'))),
    );
    assert.deepEqual(Object.keys(mine.val()), ['n1']);
    await assertFails(get(ref(alice, 'notes')));
    await assertFails(get(query(ref(alice, 'notes'), orderByChild('owner'), equalTo('bob'))));
    // A listen the rules refuse is cancelled with permission_denied.
    const cancelled = await new Promise((resolve) =>
      onValue(
        ref(anon, 'users/alice'),
        () => resolve(null),
        (err) => resolve(err),
      ),
    );
    assert.match(String(cancelled), /permission_denied/i);
    // now: a timestamp from the future is refused.
    await assertFails(set(ref(alice, 'stamps/a'), Date.now() + 3_600_000));
    await assertSucceeds(set(ref(alice, 'stamps/b'), 1));
  });

  it('revokes open listens the rules no longer allow, when they change or the user signs out', async () => {
    /** Listens at q; resolves with the listen's error once it is cancelled (after it saw data). */
    const cancelled = (q) =>
      new Promise((resolve, reject) => {
        let seen = false;
        onValue(
          q,
          () => (seen = true),
          (err) => (seen ? resolve(err) : reject(err)),
        );
      });
    const putRules = async (source) => {
      const res = await fetch(`${loupe.url}/.settings/rules.json?ns=${projectId}`, {
        method: 'PUT',
        headers: { Authorization: 'Bearer owner' },
        body: source,
      });
      assert.equal(res.status, 200, await res.text());
    };
    // A rules change: alice's listens (default and query) are revoked.
    const alice = env.authenticatedContext('alice').database();
    await assertSucceeds(set(ref(alice, 'users/alice'), { name: 'Alice' }));
    await assertSucceeds(set(ref(alice, 'notes/n1'), { owner: 'alice', text: 'mine' }));
    const whole = cancelled(ref(alice, 'users/alice'));
    const mine = cancelled(query(ref(alice, 'notes'), orderByChild('owner'), equalTo('alice')));
    await get(ref(alice, 'users/alice'));
    await putRules(
      rules
        .replace('"auth != null && auth.uid === $uid"', 'false')
        .replace('auth != null && query', 'false && query'),
    );
    try {
      assert.match(String(await whole), /permission_denied/i);
      assert.match(String(await mine), /permission_denied/i);
    } finally {
      await putRules(rules);
    }
    // A signed-in user of the JS SDK signs out: the listen that needed auth is revoked.
    const app = initializeApp(
      { projectId, apiKey: 'demo-key', databaseURL: `http://${loupe.host}?ns=${projectId}` },
      'signs-out',
    );
    try {
      const auth = getAuth(app);
      connectAuthEmulator(auth, loupe.url, { disableWarnings: true });
      const db = getDatabase(app);
      connectDatabaseEmulator(db, '127.0.0.1', loupe.port);
      const { user } = await createUserWithEmailAndPassword(auth, 'dana@example.com', 'secret-1');
      await set(ref(db, `users/${user.uid}`), { name: 'Dana' });
      const own = cancelled(ref(db, `users/${user.uid}`));
      await get(ref(db, `users/${user.uid}`));
      await signOut(auth);
      assert.match(String(await own), /permission_denied/i);
    } finally {
      await deleteApp(app);
    }
  });

  it('withSecurityRulesDisabled writes anything, and clearDatabase empties the namespace', async () => {
    await env.withSecurityRulesDisabled(async (ctx) => {
      await set(ref(ctx.database(), 'users/zed'), { age: 1 });
    });
    await env.withSecurityRulesDisabled(async (ctx) => {
      assert.deepEqual((await get(ref(ctx.database(), 'users/zed'))).val(), { age: 1 });
    });
    await env.clearDatabase();
    await env.withSecurityRulesDisabled(async (ctx) => {
      assert.equal((await get(ref(ctx.database(), '/'))).exists(), false);
    });
  });

  it('allows and denies over REST, and logs each decision with its rule', async () => {
    const base = `${loupe.url}/users/carol.json?ns=${projectId}`;
    let res = await fetch(`${base}&auth=${mockToken('carol')}`, { method: 'PUT', body: '{"name":"Carol"}' });
    assert.equal(res.status, 200);
    res = await fetch(`${base}&auth=${mockToken('dave')}`);
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'Permission denied' });
    res = await fetch(`${base}&auth=${mockToken('carol')}`);
    assert.deepEqual(await res.json(), { name: 'Carol' });
    res = await fetch(`${base}&auth=${mockToken('dave')}`, { headers: { Accept: 'text/event-stream' } });
    assert.equal(res.status, 401, 'an event stream the rules refuse');
    const log = await (await fetch(`${loupe.url}/emulator/v1/requests`)).json();
    const denied = log.requests.find(
      (e) => e.service === 'database' && e.path === '/users/carol' && e.outcome === 'denied',
    );
    assert.ok(denied, 'the denied REST read is in the request log');
    assert.equal(denied.database, projectId);
    assert.equal(denied.caller.uid, 'dave');
    const allowed = log.requests.find(
      (e) => e.service === 'database' && e.path === '/users/carol' && e.outcome === 'allowed',
    );
    assert.equal(allowed.rules.line, 5);
    // The rules read back, and a mistake names its line and column.
    res = await fetch(`${loupe.url}/.settings/rules.json?ns=${projectId}`);
    assert.equal(await res.text(), rules);
    res = await fetch(`${loupe.url}/.settings/rules.json?ns=${projectId}`, {
      method: 'PUT',
      headers: { Authorization: 'Bearer owner' },
      body: '{\n  "rules": {\n    ".read": "auth.uid ==="\n  }\n}',
    });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error, /Line 3, column 27: unexpected end of the expression/);
    const coverage = await (await fetch(`${loupe.url}/.inspect/coverage?ns=${projectId}`)).json();
    const readRule = coverage.rules.find((r) => r.path === '/users/$uid' && r.kind === '.read');
    assert.ok(readRule.hits.true > 0 && readRule.hits.false > 0, JSON.stringify(readRule));
  });
});
