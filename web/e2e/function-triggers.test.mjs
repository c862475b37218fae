// Background triggers switched off and on by @firebase/rules-unit-testing's
// withFunctionTriggersDisabled (the Emulator Hub's disable/enableBackgroundTriggers)
// against a real `loupe serve` running the repository's functions: data seeded
// inside it triggers nothing, a write after it does, and the console's
// endpoint reports the same switch.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { initializeTestEnvironment, withFunctionTriggersDisabled } from '@firebase/rules-unit-testing';
import { projectId, startLoupe } from './support/loupe.mjs';

let loupe;
let env;
before(async () => {
  loupe = await startLoupe({ functions: true });
  env = await initializeTestEnvironment({ projectId, firestore: { host: '127.0.0.1', port: loupe.port } });
});
after(async () => {
  await env?.cleanup();
  await loupe?.stop();
});

const paused = async () => (await (await fetch(`${loupe.url}/emulator/v1/functions`)).json()).paused;

/** The distinct events of users/{uid} delivered to the profile-public function. */
async function deliveries(uid) {
  const q = new URLSearchParams({ trigger: 'profile-public', document: `users/${uid}` });
  const { events } = await (await fetch(`${loupe.url}/emulator/v1/functions/events?${q}`)).json();
  return new Set(events.filter((e) => e.delivered).map((e) => e.eventId)).size;
}

const write = (name) =>
  env.withSecurityRulesDisabled((ctx) => ctx.firestore().doc('users/seeded').set({ displayName: name }));

test('a write seeded inside withFunctionTriggersDisabled triggers nothing; the next one does', async () => {
  const hub = { host: '127.0.0.1', port: loupe.port };
  await withFunctionTriggersDisabled(hub, async () => {
    assert.equal(await paused(), true, 'the console reports the triggers the hub disabled');
    await write('seeded while disabled');
  });
  assert.equal(await paused(), false, 'the console reports the triggers the hub enabled again');
  await write('written after');
  // One document's events reach a trigger in commit order: once the second
  // write's is delivered, the first's would have been too.
  const deadline = Date.now() + 15_000;
  while ((await deliveries('seeded')) === 0) {
    assert.ok(Date.now() < deadline, 'the write after withFunctionTriggersDisabled was never delivered');
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(
    await deliveries('seeded'),
    1,
    'only the write after withFunctionTriggersDisabled is delivered',
  );
});
