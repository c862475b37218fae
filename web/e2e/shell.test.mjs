// The app shell served by a real `loupe serve` in Chromium: the dark sticky
// top bar with the logo, at mobile and desktop widths.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { startLoupe } from './support/loupe.mjs';

describe('app shell', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  for (const [name, viewport] of Object.entries(viewports)) {
    it(`shows the dark top bar with the logo at ${viewport.width} px`, async () => {
      const page = await browser.newPage({ viewport });
      await page.goto(`${loupe.url}/profile`);
      const logo = page.getByRole('link', { name: 'Loupe' });
      await logo.waitFor();
      assert.equal(await logo.getAttribute('href'), '/');
      const header = page.getByRole('banner');
      assert.equal(await header.evaluate((el) => getComputedStyle(el).position), 'sticky');
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.match(bg, /^(rgb\(9, 9, 11\)|oklch\(0\.141)/, `body background ${bg} is not zinc-950`);
      await screenshot(page, `shell-${name}`);
      await page.close();
    });
  }

  it('loads app routes through the SPA fallback and keeps /landing on a gradient', async () => {
    const page = await browser.newPage({ viewport: viewports.desktop });
    const res = await page.goto(`${loupe.url}/landing/mentors`);
    assert.equal(res.status(), 200);
    await page.getByRole('link', { name: 'Loupe' }).waitFor();
    const bgImage = await page
      .locator('#root > div.min-h-dvh')
      .evaluate((el) => getComputedStyle(el).backgroundImage);
    assert.match(bgImage, /gradient/);
    await page.close();
  });
});
