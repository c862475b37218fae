// Images, route prefetching and the theme key in Chromium against a real
// `loupe serve` with the repository's rules and the demo marketplace: storage images
// through /_next/image with 1× and 2× srcsets, the profile's photo preview
// and one name, route code prefetched near the viewport, the theme key.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { admin, eventually } from './support/admin.mjs';
import { screenshot, viewports } from './support/browser.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

/** A 300×300 PNG made with ffmpeg. */
const portrait = () =>
  execFileSync('ffmpeg', [
    ...['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=300x300', '-frames:v', '1'],
    ...['-f', 'image2pipe', '-c:v', 'png', '-'],
  ]);

describe('images, prefetching and the theme key', () => {
  const s = demoSuite({ viewport: viewports.mobile, deviceScaleFactor: 2 });

  it('edits one name and previews the photo through /_next/image, refusing files that are not images', async () => {
    await signInDemo(s.page, s.loupe, 'sam@loupe.dev');
    await s.page.goto(`${s.loupe.url}/profile`);
    await s.page.getByLabel('Name', { exact: true }).fill('Sam T. Taylor');
    assert.equal(await s.page.getByLabel('Display name').count(), 0, 'one name field');

    const photo = s.page.getByLabel('Photo', { exact: true });
    await photo.setInputFiles({
      name: 'notes.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from('%PDF-1.4'),
    });
    await s.page.getByRole('alert').getByText('“notes.pdf” is not an image.').waitFor();
    await photo.setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not a png') });
    await s.page.getByRole('alert').getByText('“fake.png” could not be read as an image.').waitFor();
    await photo.setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: portrait() });
    await s.page.getByRole('button', { name: 'Remove photo' }).waitFor();

    // The preview (40 px) comes from the optimiser at 48 and 96 px; a 2× screen loads
    // the 96 px image (48 CSS px at density 2).
    const preview = s.page.locator('form img[width="40"]');
    const srcset = await preview.getAttribute('srcset');
    assert.match(
      srcset,
      /^\/_next\/image\?url=%2Fv0%2Fb%2F.+&w=48&q=75 1x, \/_next\/image\?url=.+&w=96&q=75 2x$/,
    );
    await eventually(
      () =>
        preview.evaluate(
          (img) => img.complete && img.naturalWidth === 48 && img.currentSrc.includes('&w=96&'),
        ),
      'the 2× preview loaded',
    );

    // Save sits at the bottom of a phone's screen without scrolling.
    const save = s.page.getByRole('button', { name: 'Save profile' });
    const box = await save.boundingBox();
    assert.ok(box.y + box.height <= viewports.mobile.height, `Save at ${box.y} is off screen`);
    await screenshot(s.page, 'profile-photo-mobile');
    await save.click();
    await s.page.getByText('Everything is saved.').waitFor();
    const stored = await admin(s.loupe).get('users/user-sam');
    assert.equal(stored.name, 'Sam T. Taylor');
    assert.equal(stored.displayName, 'Sam T. Taylor');
    assert.match(
      stored.photoURL,
      /^\/v0\/b\/demo-loupe\.appspot\.com\/o\/avatars%2Fuser-sam%2F.+\?alt=media&token=/,
    );

    // The header's avatar (32 px) too; the optimiser answers with a resized image.
    const header = s.page.getByRole('button', { name: 'Account menu' }).locator('img');
    await eventually(async () => /&w=32&q=75 1x, .+&w=64&q=75 2x$/.test(await header.getAttribute('srcset')));
    const res = await fetch(`${s.loupe.url}${await header.getAttribute('src')}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
  });

  it("prefetches a page's code when its link comes within 200 px of the viewport", async () => {
    const chunks = [];
    s.page.on('request', (r) => /\/assets\/mentor-route-[\w-]+\.js$/.test(r.url()) && chunks.push(r.url()));
    await s.page.goto(`${s.loupe.url}/`);
    const cards = s.page.locator('main a[href^="/mentors/"]');
    await eventually(async () => (await cards.count()) === 5, 'five mentor cards');
    await eventually(
      async () => (await cards.first().getAttribute('data-prefetched')) === 'true',
      'first card',
    );
    assert.equal(chunks.length, 1, 'the mentor page code fetched before any click');
    const last = cards.last();
    const far = await last.evaluate((a) => a.getBoundingClientRect().top - window.innerHeight);
    assert.ok(far > 200, `the last card is ${far} px below the viewport`);
    assert.equal(await last.getAttribute('data-prefetched'), null);
    await s.page.evaluate((y) => window.scrollBy(0, y), far - 150);
    await eventually(async () => (await last.getAttribute('data-prefetched')) === 'true', 'the last card');
    await last.click();
    await s.page.getByRole('heading', { level: 1 }).waitFor();
    assert.equal(chunks.length, 1, 'the page opened from the prefetched code');
  });

  it('records the forced dark theme under the theme key, to no effect', async () => {
    await s.page.goto(`${s.loupe.url}/`);
    await s.page.getByRole('link', { name: 'Loupe' }).waitFor();
    assert.equal(await s.page.evaluate(() => localStorage.getItem('theme')), 'dark');
    await s.page.evaluate(() => localStorage.setItem('theme', 'light'));
    await s.page.reload();
    await s.page.getByRole('link', { name: 'Loupe' }).waitFor();
    assert.equal(await s.page.evaluate(() => document.documentElement.className), 'dark');
    const bg = await s.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.match(bg, /^(rgb\(9, 9, 11\)|oklch\(0\.141)/, `body background ${bg}`);
    assert.equal(await s.page.evaluate(() => localStorage.getItem('theme')), 'dark');
  });
});
