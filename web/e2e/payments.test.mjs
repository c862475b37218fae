// A mentor connects payouts (issue 8 payments, issue 9's button): the app
// calls the payments function through the hosting rewrite, the function
// talks to loupe's Stripe stand-in with the real stripe-go client, and the
// signed webhook marks the profile connected.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin } from './support/admin.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { signUp } from './support/people.mjs';

describe('payouts', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe({ rules: true, functions: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('connects a mentor through Stripe onboarding and shows the profile connected', async () => {
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const page = await context.newPage();
    await signUp(page, loupe, { name: 'Mo Mentor', email: 'mo@loupe.dev' });

    await page.goto(`${loupe.url}/profile`);
    await page.getByText('Not connected yet.').waitFor();
    // Stripe's refresh URL: the link expired, the mentor is asked to start again.
    await page.goto(`${loupe.url}/profile?payouts=retry`);
    await page.getByText('Your payout setup link expired. Connect payouts to continue.').waitFor();
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
