// The review page as Frame.io users expect it (issue 21), in Chromium against
// a real `loupe serve` with the repository's rules and the demo marketplace:
// comments by timecode, markers stacked on the scrubber, keyboard shortcuts
// that seek and comment, general comments, and comments written offline.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';
import { demoData, signInDemo } from './support/people.mjs';

const thread = 'feedbackRequests/req-autumn-leaves/comments';

const videoTime = (page) => page.locator('video').evaluate((v) => v.currentTime);
const paused = (page) => page.locator('video').evaluate((v) => v.paused);
const near = (a, b, within = 0.15) => Math.abs(a - b) <= within;

describe('the review page', () => {
  let loupe;
  let browser;
  let context;
  let page;
  before(async () => {
    loupe = await startLoupe({ rules: true, args: ['--import', demoData] });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    page = await context.newPage();
    await signInDemo(page, loupe, 'sam@loupe.dev');
    await page.goto(`${loupe.url}/requests/req-autumn-leaves`);
    await page
      .locator('video')
      .evaluate(
        (v) =>
          new Promise((done) => (v.readyState >= 1 ? done() : v.addEventListener('loadedmetadata', done))),
      );
  });
  afterEach(async () => {
    await context.close();
  });

  it('orders comments by timecode, general ones first, and stacks markers that coincide', async () => {
    // A general comment and one at 0:03 posted after the others.
    const base = { userProfilePicture: null, mediaUrl: '', mediaType: 'text', isReply: false };
    await admin(loupe).set(
      `${thread}/general-1`,
      {
        ...base,
        userId: 'mentor-maya',
        userDisplayName: 'Maya Chen',
        content: 'Overall: great feel, watch the rushing.',
        videoTimestamp: null,
        repliesCount: 0,
        deleted: false,
      },
      ['timestamp'],
    );
    await admin(loupe).set(
      `${thread}/late-3`,
      {
        ...base,
        userId: 'user-sam',
        userDisplayName: 'Sam Taylor',
        content: 'Same spot: my pick hand tenses up.',
        videoTimestamp: 3,
        repliesCount: 0,
        deleted: false,
      },
      ['timestamp'],
    );
    const articles = page.locator('section[aria-label="Comments"] > div > article');
    await eventually(async () => (await articles.count()) === 6, 'six top-level comments');
    assert.deepEqual(await articles.evaluateAll((all) => all.map((a) => a.getAttribute('aria-label'))), [
      'General comment by Maya Chen',
      'Comment by Maya Chen at 0:01',
      'Comment by Maya Chen at 0:03',
      'Comment by Sam Taylor at 0:03',
      'Comment by Maya Chen at 0:06',
      'Comment by Sam Taylor at 0:07',
    ]);

    // Markers sit on the scrubber; the two at 0:03 stack, the general comment has none.
    const markers = page.getByRole('group', { name: 'Comment markers' }).getByRole('button');
    assert.equal(await markers.count(), 5);
    const mayaAt3 = page.getByRole('button', { name: 'Jump to 0:03 · Maya Chen' });
    const samAt3 = page.getByRole('button', { name: 'Jump to 0:03 · Sam Taylor' });
    const [a, b] = [await mayaAt3.boundingBox(), await samAt3.boundingBox()];
    assert.ok(Math.abs(a.x - b.x) < 1, 'markers at the same time share a spot');
    assert.ok(Math.abs(a.y - b.y) >= a.height, 'and stack instead of hiding each other');
    const scrubber = await page.getByRole('slider', { name: 'Seek' }).boundingBox();
    const at6 = await page.getByRole('button', { name: 'Jump to 0:06 · Maya Chen' }).boundingBox();
    assert.ok(at6.x > a.x && at6.x < scrubber.x + scrubber.width, 'later markers further along the scrubber');
    await samAt3.click();
    await eventually(async () => near(await videoTime(page), 3), 'the player at 3 s');
    await screenshot(page, 'review-markers-desktop');
  });

  it('plays, pauses and seeks with the keyboard, and C comments at the current moment', async () => {
    await page.getByRole('heading', { name: /Autumn Leaves/ }).click(); // focus on the page, not a field
    await page.keyboard.press('l');
    await eventually(async () => !(await paused(page)), 'playing after L');
    await page.keyboard.press('k');
    await eventually(() => paused(page), 'paused after K');
    await page.keyboard.press(' ');
    await eventually(async () => !(await paused(page)), 'playing after Space');
    await page.keyboard.press(' ');
    await eventually(() => paused(page), 'paused after Space');

    await page.locator('video').evaluate((v) => (v.currentTime = 1));
    await page.keyboard.press('ArrowRight');
    await eventually(async () => near(await videoTime(page), 6), '→ moves 5 s ahead');
    await page.keyboard.press('ArrowLeft');
    await eventually(async () => near(await videoTime(page), 1), '← moves 5 s back');
    await page.keyboard.press('.');
    await eventually(async () => near(await videoTime(page), 1 + 1 / 24, 0.02), '. moves one frame ahead');
    await page.keyboard.press(',');
    await page.keyboard.press(',');
    await eventually(async () => near(await videoTime(page), 1 - 1 / 24, 0.02), ', moves one frame back');
    await page.keyboard.press('j');
    await eventually(async () => (await videoTime(page)) < 0.9, 'J plays backwards');
    await page.keyboard.press('k');

    // Keys typed into the composer stay there.
    await page.locator('video').evaluate((v) => (v.currentTime = 4.5));
    await page.keyboard.press('c');
    const composer = page.getByLabel('Add a comment…');
    await eventually(
      () => composer.evaluate((el) => el === document.activeElement),
      'C focuses the composer',
    );
    await page.getByText('at 0:04').waitFor();
    await page.keyboard.type('Check the slide into the bridge, like this.');
    assert.ok(near(await videoTime(page), 4.5), 'typing j, k, l or spaces did not move the player');
    assert.equal(await composer.inputValue(), 'Check the slide into the bridge, like this.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page
      .getByRole('article', { name: 'Comment by Sam Taylor at 0:04' })
      .getByText('Check the slide into the bridge')
      .waitFor();
    const [stored] = await eventually(async () => {
      const rows = await admin(loupe).where(thread, 'content', 'Check the slide into the bridge, like this.');
      return rows.length > 0 && rows;
    }, 'the comment stored');
    assert.equal(stored.videoTimestamp, 4.5);

    // ? opens the shortcuts sheet.
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('?');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('Comment at the current time').waitFor();
    await screenshot(page, 'review-shortcuts-desktop');
    await page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'hidden' });
  });

  it('posts a general comment without a timestamp, listed first', async () => {
    await page.getByLabel('No timestamp').check();
    await page.getByText('General comment', { exact: true }).waitFor();
    await page.getByLabel('Add a comment…').fill('Thanks for the detailed notes!');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page
      .getByRole('article', { name: 'General comment by Sam Taylor' })
      .getByText('Thanks for the detailed notes!')
      .waitFor();
    const labels = await page
      .locator('section[aria-label="Comments"] > div > article')
      .evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')));
    const firstTimed = labels.findIndex((l) => l.startsWith('Comment by'));
    assert.ok(labels.indexOf('General comment by Sam Taylor') < firstTimed, labels.join('\n'));
    const [stored] = await eventually(async () => {
      const rows = await admin(loupe).where(thread, 'content', 'Thanks for the detailed notes!');
      return rows.length > 0 && rows;
    }, 'the general comment stored');
    assert.equal(stored.videoTimestamp, null);
  });

  it('keeps a comment written offline as pending, with a banner, and sends it when back', async () => {
    await page.getByText('Great tone from the first note.').waitFor();
    await context.setOffline(true);
    const banner = page.getByRole('status').filter({ hasText: 'You are offline.' });
    await banner.waitFor();
    await page.locator('video').evaluate((v) => (v.currentTime = 2));
    await page.getByLabel('Add a comment…').fill('Written on the train.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    const mine = page.getByRole('article', { name: 'Comment by Sam Taylor at 0:02' });
    await mine.getByText('Written on the train.').waitFor();
    await mine.getByText('Pending').waitFor();
    await screenshot(page, 'review-offline-desktop');
    assert.equal((await admin(loupe).where(thread, 'content', 'Written on the train.')).length, 0);
    await context.setOffline(false);
    await banner.waitFor({ state: 'detached' });
    await mine.getByText('Pending').waitFor({ state: 'detached', timeout: 20_000 });
    await eventually(
      async () => (await admin(loupe).where(thread, 'content', 'Written on the train.')).length === 1,
      'the offline comment stored',
    );
  });

  it('fits a phone: the controls and the thread at 375 px', async () => {
    await page.setViewportSize(viewports.mobile);
    await page.getByRole('button', { name: 'Keyboard shortcuts' }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    await screenshot(page, 'review-mobile');
  });
});
