// The auth page, toasts and confirmations in Chromium against a real
// `loupe serve` with the repository's rules and the demo marketplace: the
// auth page never tells whether an e-mail has an account, toasts queue three
// at a time, and declining or cancelling a request asks first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, eventually, notify } from './support/admin.mjs';
import { screenshot, viewports } from './support/browser.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

describe('auth page, toasts and confirmations', () => {
  const s = demoSuite({ viewport: viewports.desktop });

  it('answers a wrong password and an unknown e-mail alike, and resets without telling', async () => {
    await s.page.goto(`${s.loupe.url}/auth`);
    await s.page.getByRole('heading', { name: 'Welcome back' }).waitFor();
    assert.equal(await s.page.getByRole('link', { name: 'Sign In' }).count(), 0, 'no Sign In on /auth');
    const attempt = async (email, password) => {
      await s.page.getByLabel('E-mail').fill(email);
      await s.page.getByLabel('Password').fill(password);
      await s.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      return s.page.getByRole('alert').textContent();
    };
    const wrongPassword = await attempt('sam@loupe.dev', 'not-the-password');
    const unknown = await attempt('nobody-here@loupe.dev', 'not-the-password');
    assert.equal(wrongPassword, 'The e-mail or password is incorrect.');
    assert.equal(unknown, wrongPassword);

    await s.page.getByRole('button', { name: 'Forgot password?' }).click();
    const reset = async (email) => {
      await s.page.getByLabel('E-mail').fill(email);
      await s.page.getByRole('button', { name: 'Send reset link' }).click();
      const notice = s.page.getByRole('status').filter({ hasText: 'If an account exists' });
      await notice.waitFor();
      return (await notice.textContent()).replace(email, '…');
    };
    assert.equal(await reset('nobody-here@loupe.dev'), await reset('sam@loupe.dev'));
    assert.equal(await s.page.getByRole('alert').count(), 0);
    await screenshot(s.page, 'auth-reset-desktop');
  });

  it('opens sign-up from Get started', async () => {
    await s.page.goto(`${s.loupe.url}/landing`);
    await s.page.getByRole('link', { name: 'Get started' }).click();
    await s.page.getByRole('heading', { name: 'Create your account' }).waitFor();
    assert.match(s.page.url(), /\/auth\?mode=signup$/);
    await s.page.getByLabel('Name').waitFor();
  });

  it('shows three toasts at a time, queues the rest and clamps long messages', async () => {
    await signInDemo(s.page, s.loupe, 'alex@loupe.dev');
    const toasts = s.page.getByRole('region', { name: /Notifications \(F8\)/ }).getByRole('listitem');
    // The first snapshot is silent: wait until a notification toasts, then close it.
    for (let i = 0; (await toasts.count()) === 0; i++) {
      assert.ok(i < 20, 'a notification toasts');
      await notify(s.loupe, `warm-up-${i}`, 'user-alex', { title: 'Welcome back', message: 'Hello' });
      await new Promise((r) => setTimeout(r, 500));
    }
    while ((await toasts.count()) > 0) await toasts.first().getByRole('button', { name: 'Close' }).click();
    // Focus or the pointer on the toasts pauses their timers (Radix); move both back to the page.
    await s.page.locator('#main').focus();
    await s.page.mouse.move(5, 400);
    for (let i = 1; i <= 5; i++) {
      await notify(s.loupe, `burst-${i}`, 'user-alex', {
        title: `Update ${i}`,
        message: i === 1 ? `A very long message. ${'So much to say. '.repeat(30)}` : 'Short one',
      });
    }
    await eventually(async () => (await toasts.count()) === 3, 'three toasts on screen');
    assert.deepEqual(
      await toasts.evaluateAll((all) =>
        all.map((t) => t.querySelector('[class*=font-semibold]').textContent),
      ),
      ['Update 1', 'Update 2', 'Update 3'],
    );
    const long = await toasts.first().textContent();
    assert.ok(long.length < 260 && long.includes('…'), `the long message is clamped: ${long.length}`);
    await screenshot(s.page, 'toasts-desktop');
    // Closing one lets the next in the queue in, oldest first.
    const titles = () =>
      toasts.evaluateAll((all) => all.map((t) => t.querySelector('[class*=font-semibold]').textContent));
    await toasts.filter({ hasText: 'Update 1' }).getByRole('button', { name: 'Close' }).click();
    await eventually(async () => (await titles()).join() === 'Update 2,Update 3,Update 4', 'Update 4 in');
    await toasts.filter({ hasText: 'Update 2' }).getByRole('button', { name: 'Close' }).click();
    await eventually(async () => (await titles()).join() === 'Update 3,Update 4,Update 5', 'Update 5 in');
  });

  it('asks before declining or cancelling, with the action styled as destructive', async () => {
    const pending = (id, title) =>
      admin(s.loupe).set(
        `feedbackRequests/${id}`,
        {
          requesterId: 'user-alex',
          requesterName: 'Alex Kim',
          mentorId: 'mentor-priya',
          mentorName: 'Priya Raman',
          title,
          description: '',
          videoPath: 'videos/user-alex/seed-pitch.mp4',
          videoUrl: '',
          rateCard: { duration: 'Up to 1 min', price: 30 },
          currency: 'USD',
          status: 'pending',
          paymentStatus: 'unpaid',
        },
        ['createdAt', 'updatedAt'],
      );
    await pending('req-decline-me', 'Investor Q&A practice');
    await pending('req-cancel-me', 'Closing line, take 4');

    await signInDemo(s.page, s.loupe, 'priya@loupe.dev');
    await s.page.goto(`${s.loupe.url}/requests/req-decline-me`);
    const decline = s.page.getByRole('button', { name: 'Decline' });
    const colour = await decline.evaluate((b) => getComputedStyle(b).color);
    assert.match(colour, /^(rgb\(252, 165, 165\)|oklch\(0\.808)/, `Decline is red, not ${colour}`);
    await decline.click();
    const dialog = s.page.getByRole('dialog', { name: 'Decline this request?' });
    await dialog.getByText('Alex Kim will see that you declined “Investor Q&A practice”').waitFor();
    await screenshot(s.page, 'confirm-decline-desktop');
    await dialog.getByRole('button', { name: 'Keep request' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await admin(s.loupe).get('feedbackRequests/req-decline-me')).status, 'pending');
    await decline.click();
    await dialog.getByRole('button', { name: 'Decline request' }).click();
    await s.page.getByText('Declined', { exact: true }).waitFor();
    await eventually(
      async () => (await admin(s.loupe).get('feedbackRequests/req-decline-me')).status === 'declined',
      'the request declined',
    );

    const requester = await (await s.browser.newContext({ viewport: viewports.mobile })).newPage();
    await signInDemo(requester, s.loupe, 'alex@loupe.dev');
    await requester.goto(`${s.loupe.url}/requests/req-cancel-me`);
    await requester.getByRole('button', { name: 'Cancel request' }).click();
    const ask = requester.getByRole('dialog', { name: 'Cancel this request?' });
    await ask.getByRole('button', { name: 'Cancel request' }).click();
    await requester.getByText('Cancelled', { exact: true }).waitFor();
    await eventually(
      async () => (await admin(s.loupe).get('feedbackRequests/req-cancel-me')).status === 'cancelled',
      'the request cancelled',
    );
    await requester.context().close();
  });
});
