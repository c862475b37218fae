// The product's core journey (issue 10) in two browser contexts, a
// requester and a mentor, against a real `loupe serve` with the repository's
// rules and functions: a request with a video (priced on the cheapest card
// it fits, paid after a declined test card), accepted, comments pinned to
// moments, replies counted by the function, soft delete, and paging.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { makeClip } from './support/clip.mjs';
import { launchBrowser, screenshot, textWiderThanViewport, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { signUp } from './support/people.mjs';

const videoTime = (page) => page.locator('video').evaluate((v) => v.currentTime);

describe('feedback requests', () => {
  let loupe;
  let browser;
  let clip;
  before(async () => {
    clip = makeClip('my-solo.mp4', 8);
    loupe = await startLoupe({ rules: true, functions: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  it('goes from a request with a video to a live, threaded conversation at moments of it', async () => {
    const contextOf = () => browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const [mentorContext, requesterContext] = [await contextOf(), await contextOf()];
    const mentor = await mentorContext.newPage();
    const requester = await requesterContext.newPage();
    const maya = await signUp(mentor, loupe, { name: 'Maya Mentor', email: 'maya@example.com' });
    await signUp(requester, loupe, { name: 'Sam Requester', email: 'sam@example.com' });

    // The mentor waits on /requests; the request appears there live.
    await mentor.goto(`${loupe.url}/requests`);
    await mentor.getByText('No requests here yet.').waitFor();

    // Maya completes her mentor profile and connects payouts (as payments.test.mjs shows):
    // the profiles function lists her, bookable.
    await admin(loupe).update(`users/${maya.uid}`, {
      title: 'Session guitarist',
      bio: 'Timing and phrasing.',
      taxonomySelections: ['music'],
      stripeConnected: true,
    });
    await eventually(async () => (await admin(loupe).get(`mentors/${maya.uid}`))?.bookable, 'Maya listed');

    await requester.goto(`${loupe.url}/mentors/${maya.uid}`);
    await requester.getByRole('heading', { name: 'Maya Mentor' }).waitFor();
    await requester.getByLabel('Title').fill('Is my timing rushed?');
    await requester.getByLabel('Description').fill('Second chorus, going into the bridge.');
    await requester.getByLabel('Video').setInputFiles(clip);
    // The 8-second clip fits "Up to 1 min" ($20); Sam picks "1-3 mins" anyway, past the warning.
    await requester.getByRole('button', { name: 'Send and pay · $20' }).waitFor();
    await requester.getByText('1-3 mins').last().click();
    await requester.getByText('“1-3 mins” costs $15 more.').waitFor();
    await requester.getByRole('button', { name: 'Send and pay · $35' }).click();
    await requester.waitForURL(/\/emulator\/stripe\/checkout\//);
    // Stripe's declining test card is declined with Stripe's words; 4242 pays.
    await requester.getByLabel('Card number').fill('4000 0000 0000 0002');
    await requester.getByRole('button', { name: 'Pay USD 35.00' }).click();
    await requester.getByRole('alert').getByText('Your card was declined.').waitFor();
    await screenshot(requester, 'checkout-declined-desktop');
    await requester.getByLabel('Card number').fill('4242 4242 4242 4242');
    await requester.getByRole('button', { name: 'Pay USD 35.00' }).click();
    await requester.waitForURL(/\/requests\/[\w-]+\?checkout=done$/);
    const requestId = new URL(requester.url()).pathname.split('/').pop();
    const stored = await eventually(async () => {
      const r = await admin(loupe).get(`feedbackRequests/${requestId}`);
      return r.paymentStatus === 'paid' && r;
    }, 'the request paid');
    assert.equal(stored.status, 'pending');
    assert.equal(stored.mentorId, maya.uid);
    assert.deepEqual(stored.rateCard, { duration: '1-3 mins', price: 35 });
    assert.match(stored.videoPath, /^videos\/.+my-solo\.mp4$/);
    // The list's still, made in the browser from the clip and stored beside it.
    assert.match(stored.thumbnailPath, /^thumbnails\/[\w-]+\/\d+\.jpg$/);

    const row = mentor.getByRole('listitem').filter({ hasText: 'Is my timing rushed?' });
    await row.getByText('From Sam Requester').waitFor();
    await row.getByText('Pending').waitFor();
    await row.getByRole('button', { name: 'Accept' }).click();
    await row.getByText('In progress').waitFor();
    // Sam hears of it: the fanout function's notification reaches his bell, linking to the request. (It is read
    // already: his page is that request's; a toast shows only when it arrives after his page's first snapshot.)
    await requester.getByRole('button', { name: /^Notifications/ }).click();
    const accepted = requester.getByRole('menuitem', { name: /Request accepted/ });
    await accepted.getByText('Maya Mentor accepted “Is my timing rushed?” and is working on it.').waitFor();
    await screenshot(requester, 'request-accepted-bell-desktop');
    await accepted.click();
    await requester.waitForURL(new RegExp(`/requests/${requestId}$`));
    // The same at 375 px: the bell stays in the top bar and its list fits the screen.
    await requester.setViewportSize(viewports.mobile);
    await requester.getByRole('button', { name: /^Notifications/ }).click();
    await requester.getByRole('menuitem', { name: /Request accepted/ }).waitFor();
    assert.deepEqual(await textWiderThanViewport(requester), []);
    await screenshot(requester, 'request-accepted-bell-mobile');
    await requester.keyboard.press('Escape');
    await requester.setViewportSize(viewports.desktop);

    // The mentor comments at 0:03.
    await row.getByRole('link').click();
    await mentor
      .locator('video')
      .evaluate(
        (v) =>
          new Promise((done) => (v.readyState >= 1 ? done() : v.addEventListener('loadedmetadata', done))),
      );
    await mentor.locator('video').evaluate((v) => (v.currentTime = 3));
    await mentor.getByText('at 0:03').waitFor();
    await mentor.getByLabel('Add a comment…').fill('Here the eighth notes rush ahead of the click.');
    await mentor.getByRole('button', { name: 'Comment', exact: true }).click();

    // The requester sees it live; its chip seeks the player to 3 s.
    const comment = requester.getByRole('article', { name: 'Comment by Maya Mentor at 0:03' });
    await comment.getByText('Here the eighth notes rush ahead of the click.').waitFor();
    await requester.getByRole('button', { name: 'Jump to 0:03 · Maya Mentor' }).waitFor();
    await comment.getByRole('button', { name: 'Seek to 0:03' }).click();
    await eventually(async () => Math.abs((await videoTime(requester)) - 3) < 0.1, 'the player at 3 s');

    // A reply, counted by the function; then deleted, and uncounted.
    await comment.getByRole('button', { name: 'Reply' }).click();
    await requester.getByLabel('Write a reply…').fill('Got it, practising at 80 bpm.');
    await requester.getByRole('button', { name: 'Reply', exact: true }).last().click();
    const mentorComment = mentor.getByRole('article', { name: 'Comment by Maya Mentor at 0:03' });
    await mentorComment.getByRole('button', { name: '1 reply' }).waitFor({ timeout: 15_000 });
    await mentorComment.getByRole('button', { name: '1 reply' }).click();
    await mentorComment.getByText('Got it, practising at 80 bpm.').waitFor();
    await screenshot(mentor, 'request-page-desktop');

    const reply = requester.getByRole('article', { name: 'Comment by Sam Requester at 0:03' });
    await reply.getByRole('button', { name: 'Delete your comment at 0:03' }).click();
    await requester
      .getByRole('dialog', { name: 'Delete this comment?' })
      .getByRole('button', { name: 'Delete comment' })
      .click();
    await reply.getByText('[Deleted]').waitFor();
    await mentorComment.getByText('[Deleted]').waitFor();
    // The function lowers the count to 0, and the replies toggle goes away.
    await eventually(async () => {
      const [top] = await admin(loupe).where(`feedbackRequests/${requestId}/comments`, 'isReply', false);
      return top.repliesCount === 0;
    }, 'repliesCount back to 0');
    await mentorComment.getByRole('button', { name: 'Hide replies' }).waitFor({ state: 'detached' });

    // 25 top-level comments page as 20 + 5, by timecode: notes at 0:00–0:07
    // (three at each moment, four at 0:03 with Maya's) fill the first page up to Note 6.
    for (let i = 1; i <= 24; i++) {
      await admin(loupe).set(
        `feedbackRequests/${requestId}/comments/note-${String(i).padStart(2, '0')}`,
        {
          userId: maya.uid,
          userDisplayName: 'Maya Mentor',
          userProfilePicture: null,
          content: `Note ${i}`,
          mediaUrl: '',
          mediaType: 'text',
          videoTimestamp: i % 8,
          isReply: false,
          repliesCount: 0,
          deleted: false,
        },
        ['timestamp'],
      );
    }
    // Back in the requester's window, its toasts (paused while it was in the background) close.
    await requester.bringToFront();
    const topLevel = requester.locator('section[aria-label="Comments"] > div > article');
    await eventually(async () => (await topLevel.count()) === 20, '20 comments');
    // The list, not the scrubber markers' hidden previews of the same words.
    const list = requester.getByRole('region', { name: 'Comments' });
    await list.getByText('Note 6', { exact: true }).waitFor();
    assert.equal(await list.getByText('Note 14', { exact: true }).count(), 0);
    await requester.getByRole('button', { name: 'Load more comments' }).click();
    await list.getByText('Note 23', { exact: true }).waitFor();
    assert.equal(await topLevel.count(), 25);
    assert.equal(await requester.getByRole('button', { name: 'Load more comments' }).count(), 0);

    await requester.setViewportSize(viewports.mobile);
    await screenshot(requester, 'request-page-mobile');
    await mentorContext.close();
    await requesterContext.close();
  });
});
