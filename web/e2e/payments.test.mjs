// A mentor connects payouts (issue 8 payments, issue 9's button): the app
// calls the payments function through the hosting rewrite, the function
// talks to loupe's Stripe stand-in with the real stripe-go client, and the
// signed webhook marks the profile connected.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('payouts', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe({
      rules: true,
      config: {
        functions: { source: path.join(repo, 'functions') },
        hosting: {
          public: path.join(repo, 'web/dist'),
          rewrites: [
            { source: '/api/payments/**', run: { serviceId: 'payments' } },
            { source: '**', destination: '/index.html' },
          ],
        },
      },
    });
    // loupe builds the functions module first: allow a cold Go build.
    for (const deadline = Date.now() + 240_000; ;) {
      const state = await (await fetch(`${loupe.url}/emulator/v1/functions`)).json();
      assert.notEqual(state.state, 'failed', state.detail);
      if (state.state === 'running') break;
      assert.ok(Date.now() < deadline, `functions still ${state.state}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('connects a mentor through Stripe onboarding and shows the profile connected', async () => {
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${loupe.url}/auth`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Name').fill('Mo Mentor');
    await page.getByLabel('E-mail').fill('mo@loupe.dev');
    await page.getByLabel('Password').fill('secret1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('button', { name: 'Account menu' }).waitFor();
    await eventually(
      async () => (await admin(loupe).where('users', 'email', 'mo@loupe.dev')).length,
      'the profile',
    );

    await page.goto(`${loupe.url}/profile`);
    await page.getByText('Not connected yet.').waitFor();
    await page.getByRole('button', { name: 'Connect payouts' }).click();
    await page.waitForURL(/\/emulator\/stripe\/connect\//);
    await page.getByText('mo@loupe.dev').waitFor();
    await screenshot(page, 'stripe-onboarding-desktop');
    await page.getByRole('button', { name: 'Complete onboarding' }).click();

    await page.waitForURL(/\/profile\?payouts=done$/);
    await page.getByText('Connected: you can receive payments.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Connect payouts' }).count(), 0);
    const [profile] = await admin(loupe).where('users', 'email', 'mo@loupe.dev');
    assert.equal(profile.stripeConnected, true);
    assert.match(profile.stripeAccountId, /^acct_/);
    await context.close();
  });
});
