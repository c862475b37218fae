// A mentor connects payouts (issue 8 payments, issue 9's button): the app
// calls the payments function through the hosting rewrite, the function
// talks to loupe's Stripe stand-in with the real stripe-go client, and the
// signed webhook marks the profile connected. Booked and paid, the mentor sees
// the transfer to their account under payouts with its receipt (issue 31), and
// declining the request refunds it and takes the payout back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { axeSerious } from './support/axe.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { signUp } from './support/people.mjs';

describe('payouts', () => {
  let loupe;
  let browser;
  let mentor; // Mo, connected by the first journey, signed in for the next
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
    mentor = { page, uid: profile.id };
  });

  it('shows the connected mentor the payout of a paid request, its receipt, and its reversal on refund', async () => {
    assert.ok(mentor, 'Mo connected payouts in the journey before');
    // Mo keeps his earnings open while he is booked and paid.
    const page = mentor.page;
    await page.goto(`${loupe.url}/profile`);
    const earnings = page.getByRole('region', { name: 'Earnings' });
    await earnings.getByText('No payouts yet.').waitFor();
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const rae = await context.newPage();
    const { uid } = await signUp(rae, loupe, { name: 'Rae Singer', email: 'rae@loupe.dev' });
    const id = 'mo-payout-request';
    await admin(loupe).set(
      `feedbackRequests/${id}`,
      {
        requesterId: uid,
        requesterName: 'Rae Singer',
        mentorId: mentor.uid,
        mentorName: 'Mo Mentor',
        title: 'Bridge harmonies',
        description: '',
        rateCard: { duration: 'Up to 1 min', price: 45 },
        currency: 'USD',
        status: 'pending',
        paymentStatus: 'unpaid',
      },
      ['createdAt', 'updatedAt'],
    );
    await rae.goto(`${loupe.url}/requests/${id}`);
    await rae.getByRole('button', { name: 'Pay $45' }).click();
    await rae.waitForURL(/\/emulator\/stripe\/checkout\//);
    await rae.getByRole('button', { name: 'Pay USD 45.00' }).click();
    await rae.waitForURL(/\?checkout=done$/);
    await eventually(
      async () => (await admin(loupe).get(`feedbackRequests/${id}`))?.paymentStatus === 'paid',
      'the request paid',
    );
    await context.close();

    // Without a reload, Mo's earnings show the payment and the transfer Stripe made to his account, with its receipt.
    const today = new Date().toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
    await earnings.getByText('Earned $45', { exact: true }).waitFor();
    const payout = earnings.getByRole('list', { name: 'Payouts' }).getByRole('listitem');
    await payout.getByText('Transferred', { exact: true }).waitFor();
    assert.equal(await payout.count(), 1);
    await payout.getByText('$45', { exact: true }).waitFor();
    await payout.getByText(today, { exact: true }).waitFor();
    await earnings.scrollIntoViewIfNeeded();
    await screenshot(page, 'payouts-earnings-desktop');
    assert.deepEqual(await axeSerious(page), []);
    const [receipt] = await Promise.all([
      page.waitForEvent('popup'),
      payout.getByRole('link', { name: /^Receipt/ }).click(),
    ]);
    await receipt.getByRole('heading', { name: 'Receipt from Loupe' }).waitFor();
    await receipt
      .getByText('Feedback from Mo Mentor: Bridge harmonies (Up to 1 min)', { exact: true })
      .waitFor();
    await receipt.close();

    // Mo declines: the payment is refunded with its transfer reversed, and the payout says so.
    await page.goto(`${loupe.url}/requests/${id}`);
    await page.getByRole('button', { name: 'Decline' }).click();
    await page
      .getByRole('dialog', { name: 'Decline this request?' })
      .getByRole('button', { name: 'Decline request' })
      .click();
    await page.getByText(/^Refunded \$45 on /).waitFor();
    await page.setViewportSize(viewports.mobile);
    await page.goto(`${loupe.url}/profile`);
    await earnings.getByText('Earned $0', { exact: true }).waitFor();
    await payout.getByText('Taken back (refund)', { exact: true }).waitFor();
    await payout.getByText('$45', { exact: true }).waitFor();
    await earnings.scrollIntoViewIfNeeded();
    await screenshot(page, 'payouts-reversed-mobile');
    assert.deepEqual(await axeSerious(page), []);
    await page.context().close();
  });
});
