// Journeys through the real app in Chromium against a real `loupe serve`
// enforcing the repository's security rules (issue 9): sign-up,
// notifications, currency, Google sign-in, push, password reset.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { admin, eventually, notify } from './support/admin.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { signUp as signUpThroughApp } from './support/people.mjs';

describe('the app', () => {
  let loupe;
  let browser;
  let context;
  let page;
  before(async () => {
    loupe = await startLoupe({ rules: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });
  beforeEach(async () => {
    context = await browser.newContext({
      viewport: viewports.desktop,
      locale: 'en-US',
      timezoneId: 'America/New_York',
    });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
  });

  let people = 0;
  async function signUp(name = 'Sam Taylor') {
    const email = `person${++people}@loupe.dev`;
    const { uid, profile } = await signUpThroughApp(page, loupe, { name, email });
    return { email, uid, profile };
  }

  it('signs up with the default profile and signs out to /auth', async () => {
    const { profile } = await signUp('Ana Lima');
    assert.equal(profile.isMentor, true);
    assert.equal(profile.role, 'user');
    assert.equal(profile.name, 'Ana Lima');
    assert.deepEqual(profile.rateCards, [
      { duration: 'Up to 1 min', price: 20 },
      { duration: '1-3 mins', price: 35 },
      { duration: '3-5 mins', price: 50 },
      { duration: '5+ mins', price: 75 },
    ]);
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByRole('menuitem', { name: 'Sign Out' }).click();
    await page.waitForURL(/\/auth$/);
    await page.getByRole('heading', { name: 'Welcome back' }).waitFor();
    // The sign-in page does not offer Sign In again; other pages do.
    assert.equal(await page.getByRole('link', { name: 'Sign In', exact: true }).count(), 0);
    await page.getByRole('link', { name: 'Loupe' }).click();
    await page.getByRole('link', { name: 'Sign In', exact: true }).waitFor();
  });

  it('toasts a new notification, badges it, and opening it marks it read and follows its link', async () => {
    const { uid } = await signUp();
    await page.getByRole('button', { name: 'Notifications' }).click();
    await page.getByText('You have no notifications').waitFor();
    await page.keyboard.press('Escape');
    await notify(loupe, 'n-1', uid, {
      title: 'Maya Chen left feedback',
      message: 'Nice tone at 0:03',
      link: '/profile',
    });
    const toast = page.getByRole('status').filter({ hasText: 'Maya Chen left feedback' });
    await toast.getByText('Nice tone at 0:03').waitFor();
    await screenshot(page, 'journey-toast-desktop');
    assert.equal(await page.getByTestId('unread-badge').textContent(), '1');
    await page.getByRole('button', { name: 'Notifications, 1 unread' }).click();
    await page.getByText('1 new').waitFor();
    await page.getByRole('menuitem', { name: /Maya Chen left feedback/ }).click();
    await page.waitForURL(/\/profile$/);
    await page.getByTestId('unread-badge').waitFor({ state: 'detached' });
    // The badge goes with the local write; the server has it a moment later.
    await eventually(async () => (await admin(loupe).get('notifications/n-1')).read === true, 'read stored');
  });

  it('caps the badge at 9+, lists 5, links to all, and marks all as read', async () => {
    const { uid } = await signUp();
    for (let i = 1; i <= 11; i++)
      await notify(loupe, `bulk-${uid}-${i}`, uid, { title: `Request ${i}`, message: 'Please review' });
    await page.getByTestId('unread-badge').filter({ hasText: '9+' }).waitFor();
    await page.getByRole('button', { name: 'Notifications, 11 unread' }).click();
    await page.getByText('11 new').waitFor();
    assert.equal(await page.getByRole('menuitem', { name: /Request \d+/ }).count(), 5);
    await screenshot(page, 'journey-bell-desktop');
    await page.getByRole('menuitem', { name: 'View all notifications' }).click();
    await page.waitForURL(/\/notifications$/);
    await eventually(
      async () =>
        (await page
          .getByRole('main')
          .getByRole('button', { name: /Request \d+/ })
          .count()) === 11,
      'the 11 notifications listed',
    );
    await page.getByRole('button', { name: 'Mark all as read' }).click();
    await page.getByText('You are all caught up.').waitFor();
    await page.getByTestId('unread-badge').waitFor({ state: 'detached' });
    const rows = await admin(loupe).where('notifications', 'userId', uid);
    assert.equal(rows.filter((n) => !n.read).length, 0);
  });

  it('keeps the currency locally when signed out and on the profile when signed in; USD with a note without rates', async () => {
    // This loupe runs no functions, so no exchange rates: prices stay in USD, said so.
    await admin(loupe).set('mentors/mentor-x', {
      id: 'mentor-x',
      name: 'Maya Chen',
      title: 'Session guitarist',
      bookable: true,
      rating: { average: 0, count: 0 },
      reviews: [],
      rateCards: [{ duration: 'Up to 1 min', price: 23 }],
    });
    await page.goto(`${loupe.url}/`);
    await page.getByRole('heading', { name: 'Maya Chen' }).waitFor();
    await page.getByRole('combobox', { name: 'Currency' }).click();
    await page.getByRole('option', { name: /EUR/ }).click();
    await page.getByRole('combobox', { name: 'Currency' }).filter({ hasText: 'EUR' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('currency')), 'EUR');
    await page.getByText('Prices in USD: EUR exchange rates are unavailable right now.').waitFor();
    await page.getByText('$23').waitFor();
    assert.equal(await page.getByText('€23').count(), 0, 'a price converted at the fallback rate 1');
    const { uid } = await signUp();
    await page.getByRole('combobox', { name: 'Currency' }).click();
    await page.getByRole('option', { name: /GBP/ }).click();
    await page.getByText('Prices in USD: GBP exchange rates are unavailable right now.').waitFor();
    await eventually(
      async () => (await admin(loupe).get(`users/${uid}`)).preferredCurrency === 'GBP',
      'GBP on the profile',
    );
  });

  it('signs in with Google through the local account chooser', async () => {
    await page.goto(`${loupe.url}/auth`);
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      page.getByRole('button', { name: 'Continue with Google' }).click(),
    ]);
    // The chooser fits the 480 px popup the app opens: nothing scrolls sideways.
    await popup.setViewportSize({ width: 480, height: 640 });
    await popup.getByLabel('E-mail').waitFor();
    const overflow = await popup.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the chooser scrolls sideways by ${overflow} px at 480 px`);
    await screenshot(popup, 'google-chooser-480');
    await popup.getByLabel('E-mail').fill('gina@loupe.dev');
    await popup.getByLabel('Name').fill('Gina Park');
    // The chooser closes itself on submit, which can end the click's own bookkeeping.
    await Promise.all([
      popup.waitForEvent('close'),
      popup
        .getByRole('button', { name: 'Add account and sign in' })
        .click({ noWaitAfter: true })
        .catch((err) => {
          if (!popup.isClosed()) throw err;
        }),
    ]);
    await page.getByRole('button', { name: 'Account menu' }).waitFor();
    const [user] = await eventually(() =>
      admin(loupe)
        .where('users', 'email', 'gina@loupe.dev')
        .then((r) => r.length && r),
    );
    assert.equal(user.name, 'Gina Park');
    assert.equal(user.isMentor, true);
  });

  it('turns on push and shows a message sent through FCM in the page', async () => {
    await context.grantPermissions(['notifications']);
    const { uid } = await signUp();
    await page.goto(`${loupe.url}/profile`);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').filter({ hasText: 'Push notifications are on' }).first().waitFor();
    const token = await eventually(
      async () => (await admin(loupe).get(`users/${uid}`)).fcmToken,
      'the fcmToken on the profile',
    );
    const res = await fetch(`${loupe.url}/v1/projects/${projectId}/messages:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        message: { token, notification: { title: 'Payment received', body: 'Sam paid $45' } },
      }),
    });
    assert.equal(res.status, 200);
    await page
      .getByRole('status')
      .filter({ hasText: 'Payment received' })
      .getByText('Sam paid $45')
      .waitFor();
  });

  it('resets a password through the captured e-mail link', async () => {
    const { email } = await signUp();
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByRole('menuitem', { name: 'Sign Out' }).click();
    await page.waitForURL(/\/auth$/);
    await page.getByRole('button', { name: 'Forgot password?' }).click();
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText(`If an account exists for ${email}, we sent it a link`).waitFor();
    const { oobCodes } = await (
      await fetch(`${loupe.url}/emulator/v1/projects/${projectId}/oobCodes`)
    ).json();
    const link = oobCodes.filter((c) => c.email === email).at(-1).oobLink;
    await page.goto(link);
    await page.getByLabel('New password').fill('brand-new-pw');
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByText('Password changed').waitFor();
    await page.goto(`${loupe.url}/auth`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('brand-new-pw');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Account menu' }).waitFor();
  });
});
