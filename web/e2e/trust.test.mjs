// A marketplace people trust (issue 31), in Chromium on the demo data with the
// repository's rules and functions: a mentor cannot save a blank rate card,
// connecting payouts with unsaved edits saves them first, and the turnaround
// they promise shows on their card; the directory searches, sorts and filters
// by price from the URL; booking refuses a file that does not play and a clip
// longer than its card, waits for the network offline and can be cancelled;
// a paid request past its due date is cancelled by the requester and refunded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { makeClip } from './support/clip.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { demoData, signInDemo, signUp } from './support/people.mjs';

describe('trust', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe({ rules: true, functions: true, args: ['--import', demoData] });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('a mentor saves only bookable rate cards, saves before payouts, and the directory finds them', async () => {
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const tom = await context.newPage();
    await signInDemo(tom, loupe, 'tom@loupe.dev');
    await tom.goto(`${loupe.url}/profile`);
    const save = tom.getByRole('button', { name: 'Save profile' });
    await save.waitFor();

    // A blank card says what it lacks and the profile does not save.
    await tom.getByRole('button', { name: 'Add a rate card' }).click();
    await tom.getByText('Give this rate card a length, e.g. “Up to 1 min”.').waitFor();
    await tom.getByText('Give every rate card a length and a price to save.').waitFor();
    assert.equal(await save.isDisabled(), true);
    await tom.getByLabel('Duration').last().fill('Over 10 min');
    await tom.getByText('Give this rate card a price above 0.').waitFor();
    await screenshot(tom, 'trust-rate-card-blank-desktop');
    await tom.getByRole('button', { name: 'Remove Over 10 min' }).click();

    // An unsaved turnaround is saved before Stripe's onboarding takes the page away.
    await tom.getByLabel('Turnaround').selectOption('3');
    await tom.getByText('You have unsaved changes.').waitFor();
    await tom.getByRole('button', { name: 'Connect payouts' }).click();
    const ask = tom.getByRole('dialog', { name: 'Save your changes first?' });
    await ask.waitFor();
    await screenshot(tom, 'trust-payouts-ask-desktop');
    await ask.getByRole('button', { name: 'Save and connect' }).click();
    await tom.waitForURL((url) => !url.pathname.startsWith('/profile'));
    assert.equal((await admin(loupe).get('users/mentor-tom')).turnaroundDays, 3);
    await eventually(
      async () => (await admin(loupe).get('mentors/mentor-tom'))?.turnaroundDays === 3,
      'listed',
    );

    // The directory: search, sort and a price range, all in the URL.
    const visitor = await (
      await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' })
    ).newPage();
    const names = () => visitor.getByRole('main').getByRole('heading', { level: 2 }).allTextContents();
    await visitor.goto(`${loupe.url}/`);
    await visitor.getByLabel('Search mentors').fill('footwork');
    await visitor.waitForURL(/\?q=footwork$/);
    await eventually(async () => (await names()).join() === 'Aisha Bello', 'search by expertise');
    await visitor.goto(`${loupe.url}/?sort=price&max=20`);
    await eventually(
      async () => (await names()).join() === 'Aisha Bello,Diego Alvarez,Tom Becker',
      'sorted by price, up to $20',
    );
    assert.equal(await visitor.getByLabel('Sort by').inputValue(), 'price');
    assert.equal(await visitor.getByLabel('To (USD)').inputValue(), '20');
    const tomCard = visitor
      .getByRole('link')
      .filter({ has: visitor.getByRole('heading', { name: 'Tom Becker' }) });
    await tomCard.getByText('Feedback within 3 days').waitFor();
    await visitor.getByLabel('Search mentors').fill('nobody like this');
    await visitor.getByText('No mentors match.').waitFor();
    await visitor.getByRole('link', { name: 'Clear the search' }).click();
    await visitor.waitForURL(`${loupe.url}/`);
    await eventually(async () => (await names()).length === 5, 'every mentor again');
    await screenshot(visitor, 'trust-directory-desktop');
    await visitor.setViewportSize(viewports.mobile);
    await screenshot(visitor, 'trust-directory-mobile');
    await context.close();
    await visitor.context().close();
  });

  it('booking refuses what cannot play or is too long, waits offline, and an overdue request is refunded', async () => {
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const page = await context.newPage();
    const { uid } = await signUp(page, loupe, { name: 'Rui Costa', email: 'rui@example.com' });
    await page.goto(`${loupe.url}/mentors/mentor-maya`);
    const form = page.getByRole('form', { name: 'Request feedback' });
    const send = form.getByRole('button', { name: /^Send and pay/ });
    await form.getByLabel('Title').fill('Comping behind a singer');

    // A file named .mp4 that is not a video is refused before anything is uploaded.
    await form.getByLabel('Video').setInputFiles({
      name: 'notes.mp4',
      mimeType: 'video/mp4',
      buffer: Buffer.from('these are not frames'),
    });
    await form
      .getByText('“notes.mp4” cannot be played: it is not a video this browser can read.', { exact: false })
      .waitFor();
    assert.equal(await send.isDisabled(), true);

    // A 70 s clip moves the booking to the cheapest card it fits; the 1-minute card refuses it.
    await form.getByText('Up to 1 min', { exact: true }).click();
    await form.getByLabel('Video').setInputFiles(makeClip('long-take.mp4', 70));
    await form.getByText('1:10', { exact: true }).waitFor();
    await form.getByRole('button', { name: 'Send and pay · $45' }).waitFor();
    assert.equal(await form.getByRole('radio', { name: /1-3 mins/ }).isChecked(), true);
    await form.getByText('Up to 1 min', { exact: true }).click();
    await form.getByText('Your clip runs 1:10, longer than “Up to 1 min” covers. Choose 1-3 mins.').waitFor();
    assert.equal(await send.isDisabled(), true);
    await screenshot(page, 'trust-clip-too-long-desktop');
    await form.getByText('1-3 mins', { exact: true }).click();

    // Offline, the upload says it waits for the network, and cancelling sends nothing.
    await context.setOffline(true);
    await send.click();
    await form.getByText(/^Waiting for the network…/).waitFor();
    await screenshot(page, 'trust-upload-offline-desktop');
    await form.getByRole('button', { name: 'Cancel upload' }).click();
    await page.getByRole('status').filter({ hasText: 'Upload cancelled' }).waitFor();
    await context.setOffline(false);
    assert.deepEqual(await admin(loupe).where('feedbackRequests', 'requesterId', uid), []);

    // Online, it is sent and paid at the price of its length.
    await send.click();
    await page.waitForURL(/\/emulator\/stripe\/checkout\//);
    await page.getByRole('button', { name: 'Pay USD 45.00' }).click();
    await page.waitForURL(/\/requests\/[\w-]+\?checkout=done$/);
    const id = new URL(page.url()).pathname.split('/').pop();
    const stored = await eventually(async () => {
      const r = await admin(loupe).get(`feedbackRequests/${id}`);
      return r?.paymentStatus === 'paid' && r;
    }, 'the request paid');
    assert.deepEqual(stored.rateCard, { duration: '1-3 mins', price: 45 });
    assert.ok(Math.abs(stored.videoDuration - 70) < 0.5, `videoDuration ${stored.videoDuration}`);

    // Maya accepted it and promised it by yesterday: the requester may cancel for a refund.
    await admin(loupe).update(`feedbackRequests/${id}`, {
      status: 'accepted',
      dueAt: new Date(Date.now() - 24 * 60 * 60 * 1000),
    });
    await page.goto(`${loupe.url}/requests/${id}`);
    await page
      .getByText(/^Feedback was due by .*Maya Chen has not sent it: you can cancel for a full refund\.$/)
      .waitFor();
    await page.getByRole('button', { name: 'Cancel for a refund' }).click();
    const confirm = page.getByRole('dialog', { name: 'Cancel this request?' });
    await confirm.getByText('The payment is refunded in full.', { exact: false }).waitFor();
    await screenshot(page, 'trust-overdue-cancel-desktop');
    await confirm.getByRole('button', { name: 'Cancel request' }).click();
    await page.getByText(/^Refunded \$45 on /).waitFor();
    await page.setViewportSize(viewports.mobile);
    await screenshot(page, 'trust-overdue-refunded-mobile');
    await context.close();

    // Maya's earnings: the payments she received (the refunded one says so) and what she kept.
    const mentorContext = await browser.newContext({ viewport: viewports.mobile, locale: 'en-US' });
    const maya = await mentorContext.newPage();
    await signInDemo(maya, loupe, 'maya@loupe.dev');
    // Opening the request marks what she was notified about it read (its request and its payment).
    const about = async () =>
      (await admin(loupe).where('notifications', 'userId', 'mentor-maya')).filter(
        (n) => n.data?.requestId === id,
      );
    const unread = await eventually(async () => {
      const list = await about();
      return list.length >= 2 && list.every((n) => !n.read) && list;
    }, 'her unread notifications about the request');
    await maya.goto(`${loupe.url}/requests/${id}`);
    await maya.getByRole('heading', { name: 'Comping behind a singer' }).waitFor();
    await eventually(async () => {
      const now = await about();
      return now.length >= unread.length && now.every((n) => n.read);
    }, `${unread.length} notifications read`);
    await maya.goto(`${loupe.url}/profile`);
    const earnings = maya.getByRole('region', { name: 'Earnings' });
    await earnings.getByText('Earned $70', { exact: true }).waitFor();
    const received = earnings.getByRole('list', { name: 'Payments received' }).getByRole('listitem');
    await eventually(async () => (await received.count()) === 3, 'three payments');
    await received.first().getByText('Refunded', { exact: true }).waitFor();
    await received.first().getByText('$45', { exact: true }).waitFor();
    assert.equal(
      await received.first().getByRole('link', { name: 'Request' }).getAttribute('href'),
      `/requests/${id}`,
    );
    await earnings.getByText('No payouts yet.').waitFor();
    await earnings.scrollIntoViewIfNeeded();
    await screenshot(maya, 'trust-earnings-mobile');
    await mentorContext.close();
  });
});
