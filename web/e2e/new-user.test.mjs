// What a new user still hit in round five (issue 42), at 375 and 1280 px in
// Chromium against a real `loupe serve` with the repository's rules and the
// demo marketplace: booking prices a clip on the cheapest card it fits;
// leaving during an upload asks first and the draft survives a reload; the
// review page knows the clip's frame rate before it plays; a mentor who
// cannot be booked is marked and listed last; long comments are counted and
// folded; draw mode ends with its comment; toasts leave the bell alone on a
// phone; the directory's filters fold on a phone; an upside-down price range
// says so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admin, eventually, notify } from './support/admin.mjs';
import { dragOnVideo, screenshot, viewports } from './support/browser.mjs';
import { makeClip } from './support/clip.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

/** Whether two boxes overlap. */
const overlap = (a, b) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describe('a new user, round five', () => {
  const s = demoSuite();
  const clip = makeClip('eight-seconds.mp4', 8, 30);

  for (const [size, viewport] of Object.entries(viewports)) {
    const open = async (who) => {
      const context = await s.browser.newContext({ viewport, locale: 'en-US' });
      const page = await context.newPage();
      if (who) await signInDemo(page, s.loupe, `${who}@loupe.dev`);
      return page;
    };

    it(`books an 8-second clip on the cheapest card it fits and warns before a dearer one (${size})`, async () => {
      const page = await open('sam');
      try {
        await page.goto(`${s.loupe.url}/mentors/mentor-maya`);
        const form = page.getByRole('form', { name: 'Request feedback' });
        // Disabled, and it says why.
        await form.getByText('To send, choose a video and give it a title.').waitFor();
        assert.equal(await form.getByRole('button', { name: /^Send and pay/ }).isDisabled(), true);
        await form.getByText('5+ mins').click();
        await form.getByLabel('Title').fill('Is my timing rushed?');
        await form.getByLabel('Video').setInputFiles(clip);
        // The clip runs 0:08: "Up to 1 min" fits it, for $25, not $90.
        await form.getByRole('button', { name: 'Send and pay · $25' }).waitFor();
        assert.equal(await form.getByRole('alert').count(), 0);
        assert.equal(await form.getByText('To send,').count(), 0);
        await form.getByText('5+ mins').click();
        const warning = form.getByRole('alert').filter({ hasText: '“Up to 1 min” covers it for $25' });
        await warning.getByText('“5+ mins” costs $65 more.').waitFor();
        await screenshot(page, `new-user-dearer-card-${size}`);
        await warning.getByRole('button', { name: 'Use “Up to 1 min” · $25' }).click();
        await form.getByRole('button', { name: 'Send and pay · $25' }).waitFor();
        assert.equal(await warning.count(), 0);
      } finally {
        await page.context().close();
      }
    });

    it(`asks before leaving during an upload and keeps the draft across a reload (${size})`, async () => {
      const page = await open('sam');
      try {
        await page.goto(`${s.loupe.url}/mentors/mentor-maya`);
        const form = page.getByRole('form', { name: 'Request feedback' });
        await form.getByText('3-5 mins').click();
        await form.getByLabel('Title').fill('Bridge voicings');
        await form.getByLabel('Description').fill('The second chorus.');
        await page.reload();
        await form.getByLabel('Title').waitFor();
        assert.equal(await form.getByLabel('Title').inputValue(), 'Bridge voicings');
        assert.equal(await form.getByLabel('Description').inputValue(), 'The second chorus.');
        assert.equal(await form.getByRole('radio', { name: /3-5 mins/ }).isChecked(), true);
        // Come to Maya's page from the directory, so Back stays in the app.
        await page.goto(`${s.loupe.url}/`);
        await page
          .getByRole('link')
          .filter({ has: page.getByRole('heading', { name: 'Maya Chen' }) })
          .click();
        await form.getByLabel('Title').waitFor();

        // The upload never finishes: storage holds its answer.
        await page.route('**/v0/b/*/o?**', (route) =>
          route.request().method() === 'POST' ? undefined : route.continue(),
        );
        await form.getByLabel('Video').setInputFiles(clip);
        await form.getByRole('button', { name: 'Send and pay · $25' }).click();
        await form.getByRole('progressbar', { name: 'Upload progress' }).waitFor();
        // Reload and closing ask (beforeunload is armed).
        assert.equal(
          await page.evaluate(() => {
            const e = new Event('beforeunload', { cancelable: true });
            window.dispatchEvent(e);
            return e.defaultPrevented;
          }),
          true,
        );
        // A link asks; Stay keeps the upload.
        await page.getByRole('link', { name: 'Loupe', exact: true }).click();
        const ask = page.getByRole('dialog', { name: 'Leave while your video uploads?' });
        await ask.waitFor();
        await screenshot(page, `new-user-leave-upload-${size}`);
        await ask.getByRole('button', { name: 'Stay' }).click();
        await ask.waitFor({ state: 'hidden' });
        assert.match(page.url(), /\/mentors\/mentor-maya$/);
        await form.getByRole('progressbar', { name: 'Upload progress' }).waitFor();
        // Back asks too; leaving cancels the upload.
        await page.evaluate(() => history.back());
        await ask.waitFor();
        await ask.getByRole('button', { name: 'Leave and cancel the upload' }).click();
        await page.getByRole('heading', { name: 'Find a mentor' }).waitFor();
        // The draft waits on the mentor's page.
        await page.goto(`${s.loupe.url}/mentors/mentor-maya`);
        assert.equal(await form.getByLabel('Title').inputValue(), 'Bridge voicings');
      } finally {
        await page.context().close();
      }
    });

    it(`knows the clip's frame rate before it plays, and stores it with the request (${size})`, async () => {
      const page = await open('sam');
      try {
        await page.goto(`${s.loupe.url}/mentors/mentor-maya`);
        const form = page.getByRole('form', { name: 'Request feedback' });
        await form.getByLabel('Title').fill(`Frames ${size}`);
        await form.getByLabel('Video').setInputFiles(clip);
        await form.getByRole('button', { name: 'Send and pay · $25' }).click();
        // Without the payments function, payment cannot start: the request page opens.
        await page.waitForURL(/\/requests\/[\w-]+$/);
        const id = new URL(page.url()).pathname.split('/').pop();
        await page.locator('option', { hasText: 'Frames at 30 fps' }).waitFor({ state: 'attached' });
        assert.equal(await page.locator('video').evaluate((v) => v.paused && v.currentTime === 0), true);
        assert.equal((await admin(s.loupe).get(`feedbackRequests/${id}`)).videoFrameRate, 30);
        // One frame is 1/30 s.
        await page
          .locator('video')
          .evaluate(
            (v) =>
              new Promise((done) =>
                v.readyState >= 1 ? done() : v.addEventListener('loadedmetadata', done),
              ),
          );
        await page.locator('video').focus();
        await page.keyboard.press('.');
        await eventually(
          async () => Math.abs((await page.locator('video').evaluate((v) => v.currentTime)) - 1 / 30) < 0.002,
          'one 30 fps frame on',
        );
      } finally {
        await page.context().close();
      }
    });

    it(`marks a mentor who cannot be booked and lists them last; folds the filters on a phone (${size})`, async () => {
      const page = await open(null);
      try {
        await page.goto(`${s.loupe.url}/`);
        const cards = page.getByRole('link').filter({ has: page.getByRole('heading', { level: 2 }) });
        await cards.first().waitFor();
        const last = cards.last();
        await last.getByRole('heading', { name: 'Tom Becker' }).waitFor();
        await last.getByText('Not taking requests yet').waitFor();
        assert.equal(await last.getByText('$').count(), 0, 'no prices on a mentor who cannot be booked');
        const sort = page.getByLabel('Sort by');
        if (size === 'mobile') {
          assert.equal(await sort.isVisible(), false);
          const top = (await cards.first().boundingBox()).y;
          assert.ok(top < 600, `the first mentor starts at ${top} px, within the first screen`);
          await screenshot(page, `new-user-directory-${size}`);
          await page.getByRole('button', { name: 'Filters' }).click();
        } else {
          assert.equal(await page.getByRole('button', { name: 'Filters' }).isVisible(), false);
        }
        await sort.selectOption('price');
        await last.getByRole('heading', { name: 'Tom Becker' }).waitFor();

        // An upside-down price range says so and offers to swap it.
        await page.goto(`${s.loupe.url}/?min=50&max=10`);
        const upside = page.getByRole('alert').filter({ hasText: 'The price range is upside down' });
        await upside.waitFor();
        assert.equal(await page.getByText('No mentors match').count(), 0);
        await screenshot(page, `new-user-upside-down-${size}`);
        await upside.getByRole('button', { name: 'Swap them' }).click();
        await page.waitForURL(/min=10&max=50/);
        await cards.first().waitFor();
      } finally {
        await page.context().close();
      }
    });

    it(`counts a long comment, never cuts it, folds it, and ends draw mode when it is posted (${size})`, async () => {
      const page = await open('sam');
      try {
        await page.goto(`${s.loupe.url}/requests/req-autumn-leaves`);
        const composer = page.getByLabel('Add a comment…');
        const post = page.getByRole('button', { name: 'Comment', exact: true });
        await composer.fill('a'.repeat(4200));
        await page.getByText('4,200 / 5,000').waitFor();
        await composer.fill('b'.repeat(5012));
        await page.getByText('12 over the 5,000-character limit').waitFor();
        assert.equal((await composer.inputValue()).length, 5012, 'nothing is cut');
        assert.equal(await post.isDisabled(), true);

        const long = `${`Long note ${size}. `.repeat(60)}The end.`;
        await page
          .locator('video')
          .evaluate(
            (v) =>
              new Promise((done) =>
                v.readyState >= 1 ? done() : v.addEventListener('loadedmetadata', done),
              ),
          );
        await page.getByRole('button', { name: 'Draw on the frame' }).click();
        await dragOnVideo(page, [0.3, 0.3], [0.6, 0.6]);
        await page.getByText('Drawing · 1 shape').waitFor();
        await composer.fill(long);
        await post.click();
        const mine = page.getByRole('article').filter({ hasText: `Long note ${size}.` });
        await mine.getByRole('button', { name: 'Show more' }).waitFor();
        assert.equal(
          await page.getByRole('button', { name: 'Draw on the frame' }).getAttribute('aria-pressed'),
          'false',
          'draw mode ended with the comment',
        );
        const words = mine.getByText(/^Long note/);
        const folded = (await words.boundingBox()).height;
        await mine.getByRole('button', { name: 'Show more' }).click();
        await mine.getByRole('button', { name: 'Show less' }).waitFor();
        const whole = (await words.boundingBox()).height;
        assert.ok(whole > folded, `unfolded ${whole} px, folded ${folded} px`);
        await screenshot(page, `new-user-long-comment-${size}`);
      } finally {
        await page.context().close();
      }
    });

    it(`shows a toast without covering the bell and the avatar (${size})`, async () => {
      const page = await open('sam');
      try {
        await page.goto(`${s.loupe.url}/requests`);
        const bell = page.getByRole('button', { name: /Notifications/ });
        const avatar = page.getByRole('button', { name: 'Account menu' });
        // Sam's notifications have loaded (the first snapshot is silent): the bell lists them.
        await bell.click();
        await page.getByRole('menu').getByRole('menuitem').first().waitFor();
        await page.keyboard.press('Escape');
        await page.getByRole('menu').waitFor({ state: 'detached' });
        await notify(s.loupe, `toast-${size}`, 'user-sam', {
          title: 'Maya commented',
          message: 'Here the eighth notes rush ahead of the click.',
          link: '/requests/req-autumn-leaves',
        });
        const toast = page
          .getByRole('region', { name: /^Notifications/ })
          .getByRole('listitem')
          .filter({ hasText: 'Maya commented' });
        await toast.waitFor();
        const box = await toast.boundingBox();
        await screenshot(page, `new-user-toast-${size}`);
        for (const [name, control] of [
          ['bell', bell],
          ['avatar', avatar],
        ])
          assert.equal(overlap(box, await control.boundingBox()), false, `the toast covers the ${name}`);
        await bell.click();
        await page.getByRole('menu').getByText('Maya commented').first().waitFor();
      } finally {
        await page.context().close();
      }
    });
  }
});
