// Background push in local mode, in Chromium against a real `loupe serve`:
// the app's service worker reads loupe's message stream itself, so a message
// sent through the FCM v1 endpoint becomes a system notification when no page
// of the app is focused, or when every page is closed; a focused page shows it
// as a toast instead.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { launchBrowser, viewports } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { signUp } from './support/people.mjs';

describe('push through the service worker (local mode)', () => {
  let loupe;
  let browser;
  let context;
  let page;
  let worker;
  let token;
  before(async () => {
    loupe = await startLoupe({ rules: true });
    browser = await launchBrowser([], { windows: true }); // a page loses focus to another tab
    context = await browser.newContext({ viewport: viewports.desktop });
    await context.grantPermissions(['notifications']);
    page = await context.newPage();
    const { uid } = await signUp(page, loupe, { name: 'Mia Chen', email: 'mia@loupe.dev' });
    await page.goto(`${loupe.url}/profile`);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').filter({ hasText: 'Push notifications are on' }).first().waitFor();
    token = await eventually(async () => (await admin(loupe).get(`users/${uid}`)).fcmToken, 'the fcmToken');
    worker =
      context.serviceWorkers().find((w) => w.url().endsWith('/firebase-messaging-sw.js')) ??
      (await context.waitForEvent('serviceworker'));
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  // send posts an FCM v1 message to the page's token, as the Admin SDK does.
  async function send(title, body, link) {
    const res = await fetch(`${loupe.url}/v1/projects/${projectId}/messages:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer owner' },
      body: JSON.stringify({
        message: { token, notification: { title, body }, webpush: link && { fcm_options: { link } } },
      }),
    });
    assert.equal(res.status, 200, await res.text());
  }

  // shown lists the notifications the worker has shown (registration.getNotifications()).
  const shown = () =>
    worker.evaluate(async () =>
      (await self.registration.getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        link: n.data?.link,
      })),
    );

  async function waitShown(title) {
    return eventually(
      async () => (await shown()).find((n) => n.title === title),
      `a notification "${title}"`,
    );
  }

  it('leaves a message to the focused page: a toast, no system notification', async () => {
    await send('Feedback received', 'Ana commented at 0:42');
    await page
      .getByRole('status')
      .filter({ hasText: 'Feedback received' })
      .getByText('Ana commented at 0:42')
      .waitFor();
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(await shown(), []);
  });

  it('shows a system notification when the page is open but not focused', async () => {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
    const other = await context.newPage(); // another tab takes the focus
    await other.bringToFront();
    assert.equal(await page.evaluate(() => document.hasFocus()), false);
    await send('New feedback request', 'Sam asked about a 3 min clip', '/requests');
    assert.deepEqual(await waitShown('New feedback request'), {
      title: 'New feedback request',
      body: 'Sam asked about a 3 min clip',
      link: '/requests',
    });
    assert.equal(await page.getByRole('status').filter({ hasText: 'New feedback request' }).count(), 0);
    await other.close();
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: true });
  });

  it('shows a system notification after every page of the app is closed', async () => {
    await page.close();
    await send('Payment received', 'Sam paid $45');
    assert.deepEqual(await waitShown('Payment received'), {
      title: 'Payment received',
      body: 'Sam paid $45',
      link: '/notifications',
    });
  });
});
