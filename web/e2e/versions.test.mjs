// Versions, as Frame.io has them (issue 42), in two browsers against a real
// `loupe serve` with the repository's rules and the demo marketplace: the
// requester uploads a revised take to the same request; the mentor sees v1
// and v2, compares them side by side in sync, comments on both, carries an
// open comment of v1 forward to v2 and jumps between comments with
// Shift+←/→; the request list shows the latest version's frame. At 375 and
// 1280 px.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { axeSerious } from './support/axe.mjs';
import { screenshot, textWiderThanViewport, viewports } from './support/browser.mjs';
import { makeClip } from './support/clip.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

const request = 'feedbackRequests/req-autumn-leaves';
const review = (loupe) => `${loupe.url}/requests/req-autumn-leaves`;
const near = (a, b, within = 0.15) => Math.abs(a - b) <= within;

/** Resolves once every video on the page has its metadata (duration, frame size). */
const videosLoaded = (page) =>
  page.waitForFunction(() => {
    const all = [...document.querySelectorAll('video')];
    return all.length > 0 && all.every((v) => v.readyState >= 1);
  });

/** Stored top-level comments of the request with this text. */
const storedWith = (loupe, content) =>
  eventually(async () => {
    const rows = await admin(loupe).where(`${request}/comments`, 'content', content);
    return rows.length > 0 && rows;
  }, `the comment “${content}” stored`);

for (const [size, viewport] of Object.entries(viewports)) {
  describe(`versions at ${viewport.width} px`, () => {
    const s = demoSuite();
    let clip;
    let longClip;
    before(() => {
      clip = makeClip('take-two.mp4', 10, 30);
      longClip = makeClip('take-too-long.mp4', 200, 1);
    });

    it('uploads v2 to a request, compares it with v1, comments on both and carries a comment forward', async () => {
      const open = async () => {
        const context = await s.browser.newContext({ viewport, locale: 'en-US' });
        return context.newPage();
      };
      const [sam, maya] = [await open(), await open()];
      await signInDemo(sam, s.loupe, 'sam@loupe.dev');
      await signInDemo(maya, s.loupe, 'maya@loupe.dev');

      // Sam uploads a revised take from the review page.
      await sam.goto(review(s.loupe));
      await sam.getByRole('button', { name: 'v1', exact: true, pressed: true }).waitFor();
      await sam.getByRole('button', { name: 'Upload a new version' }).click();
      const dialog = sam.getByRole('dialog', { name: 'Upload v2' });
      // The request paid for “1-3 mins”: a 3:20 take is refused, and says why.
      await dialog.getByLabel('Video').setInputFiles(longClip);
      await dialog
        .getByText(
          'This take runs 3:20, longer than the “1-3 mins” you paid for. Trim it to fit, or send a new request.',
        )
        .waitFor();
      assert.equal(await dialog.getByRole('button', { name: 'Upload v2' }).isDisabled(), true);
      await screenshot(sam, `versions-too-long-${size}`);
      await dialog.getByLabel('Video').setInputFiles(clip);
      await dialog.getByLabel('What changed (optional)').fill('Slowed the bridge down to 80 bpm.');
      assert.deepEqual(await axeSerious(sam), []);
      await screenshot(sam, `versions-upload-${size}`);
      await dialog.getByRole('button', { name: 'Upload v2' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await sam.getByRole('button', { name: 'v2', exact: true, pressed: true }).waitFor();
      await sam.getByText('Slowed the bridge down to 80 bpm.').waitFor();
      const stored = await admin(s.loupe).get(request);
      assert.equal(stored.versionCount, 2);
      assert.match(stored.latestVideoPath, /^videos\/user-sam\/\d+_take-two\.mp4$/);
      const v2 = await admin(s.loupe).get(`${request}/versions/2`);
      assert.equal(v2.number, 2);
      assert.equal(v2.videoPath, stored.latestVideoPath);
      assert.ok(near(v2.videoDuration, 10, 0.1), `v2 lasts ${v2.videoDuration} s`);
      assert.equal(v2.videoFrameRate, 30);
      // v1 is the request's video as it was.
      assert.equal(stored.videoPath, 'videos/user-sam/autumn-leaves-solo.mp4');

      // The request list shows the latest version's still: a JPEG made in the browser at upload and stored.
      assert.match(v2.thumbnailPath, /^thumbnails\/user-sam\/\d+\.jpg$/);
      assert.equal(stored.latestThumbnailPath, v2.thumbnailPath);
      await sam.goto(`${s.loupe.url}/requests`);
      const row = sam.getByRole('link', { name: /Solo on Autumn Leaves/ });
      await row.getByText('2 versions', { exact: false }).waitFor();
      const thumb = row.locator('img');
      await eventually(
        async () => decodeURIComponent((await thumb.getAttribute('src')) ?? '').includes(v2.thumbnailPath),
        'the still of v2',
      );
      await eventually(
        async () => (await thumb.evaluate((i) => i.complete && i.naturalWidth)) === 320,
        'the still drawn',
      );
      assert.equal(await row.locator('video').count(), 0);
      assert.deepEqual(await textWiderThanViewport(sam), []);
      await screenshot(sam, `versions-list-${size}`);

      // Maya sees v2 first, v1 beside it, and the open comments of v1 she may carry forward.
      await maya.goto(review(s.loupe));
      await maya.getByRole('button', { name: 'v2', exact: true, pressed: true }).waitFor();
      await maya.getByRole('button', { name: 'v1', exact: true, pressed: false }).waitFor();
      assert.equal(await maya.getByRole('button', { name: 'Upload a new version' }).count(), 0);
      const comments = maya.getByRole('region', { name: 'Comments' });
      await comments.getByRole('heading', { name: 'Comments on v2' }).waitFor();
      await comments.getByText('No comments on v2 yet.', { exact: false }).waitFor();
      const earlier = maya.getByRole('region', { name: 'Open comments of earlier versions' });
      await earlier.getByRole('heading', { name: '4 open comments from earlier versions' }).waitFor();
      await videosLoaded(maya);

      // A comment on v2, at 2 s.
      await maya.locator('video').evaluate((v) => (v.currentTime = 2));
      await comments.getByText('at 0:02').waitFor();
      await comments.getByLabel('Add a comment…').fill('Much steadier. The pickup lands now.');
      await comments.getByRole('button', { name: 'Comment', exact: true }).click();
      await comments
        .getByRole('article', { name: 'Comment by Maya Chen at 0:02' })
        .getByText('Much steadier.', { exact: false })
        .waitFor();
      const [onV2] = await storedWith(s.loupe, 'Much steadier. The pickup lands now.');
      assert.equal(onV2.version, 2);

      // A comment on v1, at 5 s: v1's thread is the one stored before versions existed.
      await maya.getByRole('button', { name: 'v1', exact: true }).click();
      await comments.getByRole('heading', { name: 'Comments on v1' }).waitFor();
      await comments.getByText('Great tone from the first note.', { exact: false }).waitFor();
      assert.equal(await comments.getByText('Much steadier.', { exact: false }).count(), 0);
      await videosLoaded(maya);
      await maya.locator('video').evaluate((v) => (v.currentTime = 5));
      await comments.getByText('at 0:05').waitFor();
      await comments.getByLabel('Add a comment…').fill('For the record: this is where v1 drifted.');
      await comments.getByRole('button', { name: 'Comment', exact: true }).click();
      await comments.getByRole('article', { name: 'Comment by Maya Chen at 0:05' }).waitFor();
      const [onV1] = await storedWith(s.loupe, 'For the record: this is where v1 drifted.');
      assert.equal(onV1.version, 1);

      // Compare: v1 and v2 side by side, played, paused and sought together.
      await maya.getByRole('button', { name: 'Compare' }).click();
      await maya.locator('video').nth(1).waitFor();
      assert.equal(await maya.locator('video').count(), 2);
      const [first, second] = [maya.locator('video').nth(0), maya.locator('video').nth(1)];
      assert.match((await first.getAttribute('aria-label')) ?? '', /\(v1\)$/);
      assert.match((await second.getAttribute('aria-label')) ?? '', /\(v2\)$/);
      await videosLoaded(maya);
      await maya.getByRole('slider', { name: 'Seek both versions' }).fill('4');
      await eventually(
        async () =>
          near(await first.evaluate((v) => v.currentTime), 4) &&
          near(await second.evaluate((v) => v.currentTime), 4),
        'both versions at 4 s',
      );
      await maya.getByRole('button', { name: 'Play both' }).click();
      await eventually(
        async () =>
          (await first.evaluate((v) => !v.paused && v.currentTime > 4.2)) &&
          (await second.evaluate((v) => !v.paused && v.currentTime > 4.2)),
        'both versions playing',
      );
      await maya.getByRole('button', { name: 'Pause both' }).click();
      await eventually(
        async () => (await first.evaluate((v) => v.paused)) && (await second.evaluate((v) => v.paused)),
        'both paused',
      );
      const [a, b] = [
        await first.evaluate((v) => v.currentTime),
        await second.evaluate((v) => v.currentTime),
      ];
      assert.ok(near(a, b, 0.3), `in sync: v1 at ${a} s, v2 at ${b} s`);
      if (size === 'desktop') {
        const [boxA, boxB] = [await first.boundingBox(), await second.boundingBox()];
        assert.ok(near(boxA.y, boxB.y, 1) && boxB.x > boxA.x, 'side by side');
      }
      // Each version's comments mark a lane of their own; a marker seeks both to its moment.
      await maya
        .getByRole('group', { name: 'Comments on v2' })
        .getByRole('button', { name: 'Jump to 0:02 · Maya Chen (v2)' })
        .waitFor();
      await maya
        .getByRole('group', { name: 'Comments on v1' })
        .getByRole('button', { name: 'Jump to 0:05 · Maya Chen (v1)' })
        .click();
      await eventually(
        async () =>
          near(await first.evaluate((v) => v.currentTime), 5) &&
          near(await second.evaluate((v) => v.currentTime), 5),
        'both versions at 5 s',
      );
      assert.deepEqual(await textWiderThanViewport(maya), []);
      await screenshot(maya, `versions-compare-${size}`);

      // Carry Maya's open note at 0:01.50 forward to v2.
      await maya.getByRole('button', { name: 'v2', exact: true }).click();
      await comments.getByRole('heading', { name: 'Comments on v2' }).waitFor();
      await earlier.getByRole('button', { name: 'Carry the comment by Maya Chen at 0:01.50 to v2' }).click();
      const carried = comments.getByRole('article', { name: 'Comment by Maya Chen at 0:01.50' });
      await carried.getByText('Carried forward').waitFor();
      await carried.getByText('Great tone from the first note.', { exact: false }).waitFor();
      await earlier.getByRole('heading', { name: '4 open comments from earlier versions' }).waitFor();
      await eventually(
        async () =>
          (await earlier.getByRole('button', { name: /at 0:01\.50 to v2$/ }).count()) === 0 &&
          (await earlier.getByRole('button', { name: /at 0:05 to v2$/ }).count()) === 1,
        'the carried comment no longer offered; the new v1 one is',
      );
      const copies = await eventually(async () => {
        const rows = await admin(s.loupe).where(`${request}/comments`, 'carriedFrom', 'c1');
        return rows.length > 0 && rows;
      }, 'the copy stored');
      assert.equal(copies.length, 1);
      assert.equal(copies[0].version, 2);
      assert.equal(copies[0].userId, 'mentor-maya');
      assert.equal(copies[0].videoTimestamp, 1.5);
      assert.deepEqual(await axeSerious(maya), []);
      assert.deepEqual(await textWiderThanViewport(maya), []);
      await screenshot(maya, `versions-carried-${size}`);

      // Shift+→ and Shift+← jump between v2's comments (0:01.50 and 0:02).
      await maya.getByRole('button', { name: 'Compare', pressed: true }).click();
      await maya.locator('video').nth(1).waitFor({ state: 'detached' });
      await videosLoaded(maya);
      const player = maya.locator('video');
      await player.evaluate((v) => (v.currentTime = 0));
      await maya.getByRole('heading', { name: /Autumn Leaves/ }).click();
      await maya.keyboard.press('Shift+ArrowRight');
      await eventually(
        async () => near(await player.evaluate((v) => v.currentTime), 1.5, 0.02),
        'at 0:01.50',
      );
      await maya.keyboard.press('Shift+ArrowRight');
      await eventually(async () => near(await player.evaluate((v) => v.currentTime), 2, 0.02), 'at 0:02');
      await maya.keyboard.press('Shift+ArrowLeft');
      await eventually(
        async () => near(await player.evaluate((v) => v.currentTime), 1.5, 0.02),
        'back at 0:01.50',
      );

      // 20 more notes on v1, all before v2's comments in timecode order: a page of v2 still holds v2's.
      for (let i = 1; i <= 20; i++) {
        await admin(s.loupe).set(
          `${request}/comments/v1-note-${String(i).padStart(2, '0')}`,
          {
            userId: 'mentor-maya',
            userDisplayName: 'Maya Chen',
            userProfilePicture: null,
            content: `v1 note ${i}`,
            mediaUrl: '',
            mediaType: 'text',
            videoTimestamp: i / 20,
            isReply: false,
            repliesCount: 0,
            deleted: false,
            version: 1,
          },
          ['timestamp'],
        );
      }

      // Sam sees both versions' comments in his browser, each under its version, 20 a page.
      await sam.goto(review(s.loupe));
      const his = sam.getByRole('region', { name: 'Comments' });
      await his.getByText('Much steadier.', { exact: false }).waitFor();
      await his.getByText('Carried forward').waitFor();
      assert.equal(await his.getByRole('button', { name: 'Load more comments' }).count(), 0);
      await sam.getByRole('button', { name: 'v1', exact: true }).click();
      // (v2's list of open comments from earlier versions shows v1's notes too: wait for v1's own thread.)
      await his.getByRole('heading', { name: 'Comments on v1' }).waitFor();
      await his.getByText('v1 note 20', { exact: true }).waitFor();
      assert.equal(await his.getByText('For the record: this is where v1 drifted.').count(), 0);
      await his.getByRole('button', { name: 'Load more comments' }).click();
      await his.getByText('For the record: this is where v1 drifted.').waitFor();
      await screenshot(sam, `versions-requester-v1-${size}`);
      await sam.context().close();
      await maya.context().close();
    });
  });
}
