// The review page as Frame.io users expect it (issue 21), in Chromium against
// a real `loupe serve` with the repository's rules and the demo marketplace:
// comments by timecode, markers stacked on the scrubber, keyboard shortcuts
// that seek and comment, general comments, comments written offline, range
// comments and drawings on the frame.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { beforeEach, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { dragOnVideo, screenshot, viewports } from './support/browser.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

const thread = 'feedbackRequests/req-autumn-leaves/comments';

const videoTime = (page) => page.locator('video').evaluate((v) => v.currentTime);
const paused = (page) => page.locator('video').evaluate((v) => v.paused);
const near = (a, b, within = 0.15) => Math.abs(a - b) <= within;
const seekVideo = (page, t) => page.locator('video').evaluate((v, to) => (v.currentTime = to), t);

/** The serious and critical axe violations on the page as it is now. */
async function axeProblems(page) {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  return page.evaluate(async () =>
    (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  );
}

describe('the review page', () => {
  const s = demoSuite({ viewport: viewports.desktop });
  beforeEach(async () => {
    await signInDemo(s.page, s.loupe, 'sam@loupe.dev');
    await s.page.goto(`${s.loupe.url}/requests/req-autumn-leaves`);
    await s.page
      .locator('video')
      .evaluate(
        (v) =>
          new Promise((done) => (v.readyState >= 1 ? done() : v.addEventListener('loadedmetadata', done))),
      );
  });

  it('orders comments by timecode, general ones first, and stacks markers that coincide', async () => {
    // A general comment and one at 0:03 posted after the others.
    const base = { userProfilePicture: null, mediaUrl: '', mediaType: 'text', isReply: false };
    await admin(s.loupe).set(
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
    await admin(s.loupe).set(
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
    const articles = s.page.locator('section[aria-label="Comments"] > div > article');
    await eventually(async () => (await articles.count()) === 6, 'six top-level comments');
    assert.deepEqual(await articles.evaluateAll((all) => all.map((a) => a.getAttribute('aria-label'))), [
      'General comment by Maya Chen',
      'Comment by Maya Chen at 0:01.50',
      'Comment by Maya Chen at 0:03',
      'Comment by Sam Taylor at 0:03',
      'Comment by Maya Chen at 0:06.25',
      'Comment by Sam Taylor at 0:07',
    ]);

    // Markers sit on the scrubber; the two at 0:03 stack, the general comment has none.
    const markers = s.page.getByRole('group', { name: 'Comment markers' }).getByRole('button');
    assert.equal(await markers.count(), 5);
    const mayaAt3 = s.page.getByRole('button', { name: 'Jump to 0:03 · Maya Chen' });
    const samAt3 = s.page.getByRole('button', { name: 'Jump to 0:03 · Sam Taylor' });
    const [a, b] = [await mayaAt3.boundingBox(), await samAt3.boundingBox()];
    assert.ok(Math.abs(a.x - b.x) < 1, 'markers at the same time share a spot');
    assert.ok(Math.abs(a.y - b.y) >= a.height, 'and stack instead of hiding each other');
    const scrubber = await s.page.getByRole('slider', { name: 'Seek' }).boundingBox();
    const at6 = await s.page.getByRole('button', { name: 'Jump to 0:06.25 · Maya Chen' }).boundingBox();
    assert.ok(at6.x > a.x && at6.x < scrubber.x + scrubber.width, 'later markers further along the scrubber');
    // Hovering a marker previews its comment.
    await s.page.getByRole('button', { name: 'Jump to 0:06.25 · Maya Chen' }).hover();
    const tip = s.page.getByRole('tooltip').filter({ hasText: 'Lovely resolution.' });
    await tip.waitFor();
    // with a thumbnail of the frame there, grabbed from the clip.
    const thumb = tip.getByRole('img', { name: 'Frame at 0:06.25' });
    await thumb.waitFor();
    assert.deepEqual(
      await thumb.evaluate((img) => [img.src.slice(0, 15), img.naturalWidth, img.naturalHeight]),
      ['data:image/jpeg', 160, 90],
    );
    await screenshot(s.page, 'review-marker-preview-desktop');
    await samAt3.click();
    await eventually(async () => near(await videoTime(s.page), 3), 'the player at 3 s');
    await screenshot(s.page, 'review-markers-desktop');
  });

  it('plays, pauses and seeks with the keyboard, and C comments at the current moment', async () => {
    await s.page.getByRole('heading', { name: /Autumn Leaves/ }).click(); // focus on the s.page, not a field
    await s.page.keyboard.press('l');
    await eventually(async () => !(await paused(s.page)), 'playing after L');
    await s.page.keyboard.press('k');
    await eventually(() => paused(s.page), 'paused after K');
    await s.page.keyboard.press(' ');
    await eventually(async () => !(await paused(s.page)), 'playing after Space');
    await s.page.keyboard.press(' ');
    await eventually(() => paused(s.page), 'paused after Space');

    await s.page.locator('video').evaluate((v) => (v.currentTime = 1));
    await s.page.keyboard.press('ArrowRight');
    await eventually(async () => near(await videoTime(s.page), 6), '→ moves 5 s ahead');
    await s.page.keyboard.press('ArrowLeft');
    await eventually(async () => near(await videoTime(s.page), 1), '← moves 5 s back');
    await s.page.keyboard.press('.');
    await eventually(async () => near(await videoTime(s.page), 1 + 1 / 24, 0.02), '. moves one frame ahead');
    await s.page.keyboard.press(',');
    await s.page.keyboard.press(',');
    await eventually(async () => near(await videoTime(s.page), 1 - 1 / 24, 0.02), ', moves one frame back');
    await s.page.keyboard.press('j');
    await eventually(async () => (await videoTime(s.page)) < 0.9, 'J plays backwards');
    await s.page.keyboard.press('k');

    // Keys typed into the composer stay there.
    await s.page.locator('video').evaluate((v) => (v.currentTime = 4.5));
    await s.page.keyboard.press('c');
    const composer = s.page.getByLabel('Add a comment…');
    await eventually(
      () => composer.evaluate((el) => el === document.activeElement),
      'C focuses the composer',
    );
    await s.page.getByText('at 0:04.50').waitFor();
    await s.page.keyboard.type('Check the slide into the bridge, like this.');
    assert.ok(near(await videoTime(s.page), 4.5), 'typing j, k, l or spaces did not move the player');
    assert.equal(await composer.inputValue(), 'Check the slide into the bridge, like this.');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    await s.page
      .getByRole('article', { name: 'Comment by Sam Taylor at 0:04.50' })
      .getByText('Check the slide into the bridge')
      .waitFor();
    const [stored] = await eventually(async () => {
      const rows = await admin(s.loupe).where(
        thread,
        'content',
        'Check the slide into the bridge, like this.',
      );
      return rows.length > 0 && rows;
    }, 'the comment stored');
    assert.equal(stored.videoTimestamp, 4.5);

    // ? opens the shortcuts sheet.
    await s.page.locator('body').click({ position: { x: 5, y: 300 } });
    await s.page.keyboard.press('?');
    const sheet = s.page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await sheet.getByText('Comment at the current time').waitFor();
    await screenshot(s.page, 'review-shortcuts-desktop');
    await s.page.keyboard.press('Escape');
    await sheet.waitFor({ state: 'hidden' });
  });

  it('posts a general comment without a timestamp, listed first', async () => {
    await s.page.getByLabel('No timestamp').check();
    await s.page.getByText('General comment', { exact: true }).waitFor();
    await s.page.getByLabel('Add a comment…').fill('Thanks for the detailed notes!');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    await s.page
      .getByRole('article', { name: 'General comment by Sam Taylor' })
      .getByText('Thanks for the detailed notes!')
      .waitFor();
    const labels = await s.page
      .locator('section[aria-label="Comments"] > div > article')
      .evaluateAll((all) => all.map((a) => a.getAttribute('aria-label')));
    const firstTimed = labels.findIndex((l) => l.startsWith('Comment by'));
    assert.ok(labels.indexOf('General comment by Sam Taylor') < firstTimed, labels.join('\n'));
    const [stored] = await eventually(async () => {
      const rows = await admin(s.loupe).where(thread, 'content', 'Thanks for the detailed notes!');
      return rows.length > 0 && rows;
    }, 'the general comment stored');
    assert.equal(stored.videoTimestamp, null);
  });

  it('keeps a comment written offline as pending, with a banner, and sends it when back', async () => {
    await s.page
      .getByRole('region', { name: 'Comments' })
      .getByText('Great tone from the first note.')
      .waitFor();
    await s.context.setOffline(true);
    const banner = s.page.getByRole('status').filter({ hasText: 'You are offline.' });
    await banner.waitFor();
    await s.page.locator('video').evaluate((v) => (v.currentTime = 2));
    // The composer takes the player's time once it has moved there.
    await s.page.getByText('at 0:02').waitFor();
    await s.page.getByLabel('Add a comment…').fill('Written on the train.');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    const mine = s.page.getByRole('article', { name: 'Comment by Sam Taylor at 0:02' });
    await mine.getByText('Written on the train.').waitFor();
    await mine.getByText('Pending').waitFor();
    await screenshot(s.page, 'review-offline-desktop');
    assert.equal((await admin(s.loupe).where(thread, 'content', 'Written on the train.')).length, 0);
    await s.context.setOffline(false);
    await banner.waitFor({ state: 'detached' });
    await mine.getByText('Pending').waitFor({ state: 'detached', timeout: 20_000 });
    await eventually(
      async () => (await admin(s.loupe).where(thread, 'content', 'Written on the train.')).length === 1,
      'the offline comment stored',
    );
  });

  it('edits a comment, resolves and reopens one, and deletes only after confirming', async () => {
    await s.page.locator('video').evaluate((v) => (v.currentTime = 5));
    await s.page.getByText('at 0:05').waitFor();
    await s.page.getByLabel('Add a comment…').fill('Bar 9 drags.');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    const mine = s.page.getByRole('article', { name: 'Comment by Sam Taylor at 0:05' });
    await mine.getByText('Bar 9 drags.').waitFor();
    await mine.getByText('Pending').waitFor({ state: 'detached' });

    // Edit: the text changes for both, marked (edited).
    await mine.getByRole('button', { name: 'Edit your comment at 0:05' }).click();
    await mine.getByRole('textbox', { name: 'Edit your comment' }).fill('Bar 9 drags behind the click.');
    await mine.getByRole('button', { name: 'Save', exact: true }).click();
    await mine.getByText('Bar 9 drags behind the click.').waitFor();
    await mine.getByText('(edited)').waitFor();
    const [edited] = await eventually(async () => {
      const rows = await admin(s.loupe).where(thread, 'content', 'Bar 9 drags behind the click.');
      return rows.length > 0 && rows;
    }, 'the edit stored');
    assert.ok(edited.editedAt instanceof Date);

    // Resolve Maya's first note, then reopen it.
    const hers = s.page.getByRole('article', { name: /^Comment by Maya Chen at / }).first();
    await hers.getByRole('button', { name: /^Resolve the comment at / }).click();
    await hers.getByText('Resolved', { exact: true }).waitFor();
    const content = await hers.locator('p').first().textContent();
    const [resolved] = await eventually(async () => {
      const rows = (await admin(s.loupe).where(thread, 'content', content)).filter((c) => c.resolved);
      return rows.length > 0 && rows;
    }, 'resolved stored');
    assert.equal(resolved.resolvedBy, 'user-sam');
    await screenshot(s.page, 'review-resolved-desktop');
    await hers.getByRole('button', { name: /^Reopen the comment at / }).click();
    await hers.getByText('Resolved', { exact: true }).waitFor({ state: 'detached' });

    // Delete asks first; keeping it keeps it.
    await mine.getByRole('button', { name: 'Delete your comment at 0:05' }).click();
    const ask = s.page.getByRole('dialog', { name: 'Delete this comment?' });
    await ask.getByRole('button', { name: 'Keep comment' }).click();
    await mine.getByText('Bar 9 drags behind the click.').waitFor();
    await mine.getByRole('button', { name: 'Delete your comment at 0:05' }).click();
    await ask.getByRole('button', { name: 'Delete comment' }).click();
    await mine.getByText('[Deleted]').waitFor();
  });

  it('writes timecodes to the frame, in seconds or in frames, so comments a frame apart differ', async () => {
    const post = async (seconds, text) => {
      await s.page.locator('video').evaluate((v, t) => (v.currentTime = t), seconds);
      await s.page.getByLabel('Add a comment…').fill(text);
      await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    };
    await post(2 + 1 / 24, 'Frame one: the pick lands.');
    await post(2 + 2 / 24, 'Frame two: the string speaks.');
    const one = s.page.getByRole('article', { name: 'Comment by Sam Taylor at 0:02.04' });
    const two = s.page.getByRole('article', { name: 'Comment by Sam Taylor at 0:02.08' });
    await one.getByText('Frame one: the pick lands.').waitFor();
    await two.getByText('Frame two: the string speaks.').waitFor();
    await s.page.getByLabel('Timecode').selectOption('frames');
    await s.page
      .getByRole('article', { name: 'Comment by Sam Taylor at 00:00:02:01' })
      .getByText('Frame one: the pick lands.')
      .waitFor();
    await s.page
      .getByRole('article', { name: 'Comment by Sam Taylor at 00:00:02:02' })
      .getByText('Frame two: the string speaks.')
      .waitFor();
    await screenshot(s.page, 'review-frames-desktop');
    // The setting stays on this device.
    await s.page.reload();
    assert.equal(await s.page.getByLabel('Timecode').inputValue(), 'frames');
  });

  it('a range comment: in and out points, shown as a range on the scrubber and in the list; it plays from in', async () => {
    await seekVideo(s.page, 1.25);
    await s.page.getByText('at 0:01.25').waitFor();
    await s.page.getByRole('button', { name: 'Set in' }).click();
    await seekVideo(s.page, 3);
    await s.page.getByRole('heading', { name: /Autumn Leaves/ }).click(); // keys go to the page
    await s.page.keyboard.press('o'); // O: the out point, as in Frame.io
    await s.page.getByText('0:01.25–0:03.00', { exact: true }).waitFor();
    await s.page.getByLabel('Add a comment…').fill('The whole run into the bridge rushes.');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    const mine = s.page.getByRole('article', { name: 'Comment by Sam Taylor at 0:01.25–0:03.00' });
    await mine.getByText('The whole run into the bridge rushes.').waitFor();
    await s.page.getByText('at 0:03').waitFor(); // the composer is back to a moment
    const [stored] = await eventually(async () => {
      const rows = await admin(s.loupe).where(thread, 'content', 'The whole run into the bridge rushes.');
      return rows.length > 0 && rows;
    }, 'the range comment stored');
    assert.deepEqual([stored.videoTimestamp, stored.videoEndTimestamp], [1.25, 3]);

    // On the scrubber: a span from its marker to the out point.
    const span = await s.page.getByRole('img', { name: 'Range 0:01.25–0:03.00 · Sam Taylor' }).boundingBox();
    const marker = await s.page
      .getByRole('button', { name: 'Jump to 0:01.25–0:03.00 · Sam Taylor' })
      .boundingBox();
    const duration = await s.page.locator('video').evaluate((v) => v.duration);
    const track = await s.page.getByRole('slider', { name: 'Seek' }).boundingBox();
    assert.ok(Math.abs(span.x - (marker.x + marker.width / 2)) < 2, 'the span starts at the marker');
    assert.ok(near(span.width, ((track.width - 14) * 1.75) / duration, 2), `span ${span.width} px wide`);
    await screenshot(s.page, 'review-range-desktop');

    // Its timecode plays the range from the in point and stops at the out point.
    await seekVideo(s.page, 6);
    await mine.getByRole('button', { name: 'Play 0:01.25–0:03.00' }).click();
    await eventually(async () => !(await paused(s.page)), 'playing');
    await eventually(
      async () => (await paused(s.page)) && near(await videoTime(s.page), 3, 0.05),
      'paused at the out point',
    );
  });

  it('draws on the paused frame; the drawing is stored with the comment and shown at its moment', async () => {
    await seekVideo(s.page, 2);
    await s.page.getByText('at 0:02').waitFor();
    await s.page.getByRole('button', { name: 'Draw on the frame' }).click();
    const tools = s.page.getByRole('toolbar', { name: 'Drawing tools' });
    await tools.getByRole('button', { name: 'Rectangle' }).click();
    await dragOnVideo(s.page, [0.3, 0.3], [0.6, 0.7]);
    await tools.getByRole('button', { name: 'Red' }).click();
    await tools.getByRole('button', { name: 'Arrow' }).click();
    await dragOnVideo(s.page, [0.85, 0.15], [0.62, 0.32]);
    await tools.getByRole('button', { name: 'Pen' }).click();
    await dragOnVideo(
      s.page,
      [0.1, 0.8],
      [0.4, 0.85],
      [
        [0.2, 0.9],
        [0.3, 0.8],
      ],
    );
    await s.page.getByText('Drawing · 3 shapes').waitFor();
    await screenshot(s.page, 'review-drawing-desktop');
    assert.deepEqual(await axeProblems(s.page), [], 'axe, while drawing');
    await tools.getByRole('button', { name: 'Done' }).click();
    await s.page.getByLabel('Add a comment…').fill('Watch your wrist here.');
    await s.page.getByRole('button', { name: 'Comment', exact: true }).click();
    await s.page
      .getByRole('article', { name: 'Comment by Sam Taylor at 0:02' })
      .getByText('Watch your wrist here.')
      .waitFor();
    await s.page.getByText('Drawing · 3 shapes').waitFor({ state: 'detached' });
    const [stored] = await eventually(async () => {
      const rows = await admin(s.loupe).where(thread, 'content', 'Watch your wrist here.');
      return rows.length > 0 && rows;
    }, 'the drawing stored');
    const shapes = stored.drawing.shapes;
    assert.deepEqual(
      shapes.map((d) => [d.kind, d.color]),
      [
        ['rect', '#facc15'],
        ['arrow', '#ef4444'],
        ['pen', '#ef4444'],
      ],
    );
    assert.ok(
      shapes[0].points.every((n, i) => near(n, [0.3, 0.3, 0.6, 0.7][i], 0.02)),
      `${shapes[0].points}`,
    );
    assert.ok(shapes[2].points.length >= 8 && shapes[2].points.every((n) => n >= 0 && n <= 1));

    // Shown over the video at its moment, gone elsewhere, back when the player returns.
    const drawing = s.page.getByRole('img', { name: 'Drawing by Sam Taylor at 0:02' });
    await seekVideo(s.page, 6);
    await drawing.waitFor({ state: 'detached' });
    await seekVideo(s.page, 2);
    await drawing.waitFor();
    assert.equal(await drawing.locator('rect, line, polyline').count(), 4); // rect, arrow (2), pen
    const video = await s.page.locator('video').boundingBox();
    const rect = await drawing.locator('rect').boundingBox();
    assert.ok(near(rect.x, video.x + 0.3 * video.width, 4) && near(rect.width, 0.3 * video.width, 4));
    await screenshot(s.page, 'review-drawing-shown-desktop');
  });

  it('fits a phone: the controls and the thread at 375 px', async () => {
    await s.page.setViewportSize(viewports.mobile);
    await s.page.getByRole('button', { name: 'Keyboard shortcuts' }).waitFor();
    const overflow = await s.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
    // Markers are 24 px tap targets, and the full-screen button is there on a phone too.
    const marker = await s.page.getByRole('button', { name: 'Jump to 0:06.25 · Maya Chen' }).boundingBox();
    assert.ok(marker.width >= 24 && marker.height >= 24, `marker ${marker.width}×${marker.height}`);
    await s.page.getByRole('button', { name: 'Full screen' }).waitFor();
    await screenshot(s.page, 'review-mobile');
    // The drawing tools fit too.
    await s.page.getByRole('button', { name: 'Draw on the frame' }).click();
    await s.page.getByRole('toolbar', { name: 'Drawing tools' }).waitFor();
    await s.page.getByRole('button', { name: 'Set in' }).waitFor();
    assert.ok((await s.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0);
    await screenshot(s.page, 'review-drawing-mobile');
    assert.deepEqual(await axeProblems(s.page), [], 'axe, drawing on a phone');
    await s.page.keyboard.press('Escape'); // puts the pen down
    await s.page.getByRole('toolbar', { name: 'Drawing tools' }).waitFor({ state: 'detached' });
  });
});
