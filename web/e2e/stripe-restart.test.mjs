// loupe's local Stripe test mode outlives a restart: a requester pays on the
// demo data, loupe stops and starts again on the same data dir and port, and
// the request's "View receipt" link still opens the receipt; cancelling the
// request then refunds that payment (the payments function refunds it
// through the stand-in), and the receipt says so.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { freePort, startLoupe } from './support/loupe.mjs';
import { demoData, signInDemo } from './support/people.mjs';
import { scratchDir } from './support/scratch.mjs';

describe('stripe test mode across a restart', () => {
  let loupe;
  let browser;
  let dataDir;
  before(async () => {
    dataDir = scratchDir('loupe-stripe-restart-');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the receipt of a payment made before the restart, and refunds it after', async () => {
    const port = await freePort();
    const serve = (args) =>
      startLoupe({ rules: true, functions: true, dataDir, args: [...args, '--port', String(port)] });
    loupe = await serve(['--import', demoData]);
    const context = await browser.newContext({ viewport: viewports.desktop, locale: 'en-US' });
    const page = await context.newPage();
    await signInDemo(page, loupe, 'alex@loupe.dev');
    await page.goto(`${loupe.url}/requests/req-seed-pitch`);
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(/\/emulator\/stripe\/checkout\/cs_test_/);
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(/\/requests\/req-seed-pitch\?checkout=done$/);
    await page.getByText(/^Paid .+ on /).waitFor();
    const receipt = await page.getByRole('link', { name: 'View receipt' }).getAttribute('href');
    assert.match(receipt, /\/emulator\/stripe\/receipts\/ch_/);

    // Stopped and started again on the same data dir (no import: the data
    // dir's own state) and port, as `loupe serve` run again would.
    await loupe.stop();
    loupe = await serve([]);
    const receiptPage = await context.newPage();
    await receiptPage.goto(receipt);
    await receiptPage.getByRole('heading', { name: 'Receipt from Loupe' }).waitFor();
    assert.equal(await receiptPage.getByText('No such receipt').count(), 0);
    await screenshot(receiptPage, 'stripe-receipt-after-restart-desktop');
    await receiptPage.setViewportSize(viewports.mobile);
    await screenshot(receiptPage, 'stripe-receipt-after-restart-mobile');

    await page.goto(`${loupe.url}/requests/req-seed-pitch`);
    await page.getByText(/^Paid .+ on /).waitFor();
    await page.getByRole('button', { name: 'Cancel request' }).click();
    const ask = page.getByRole('dialog', { name: 'Cancel this request?' });
    await ask.getByText('The payment is refunded in full.', { exact: false }).waitFor();
    await ask.getByRole('button', { name: 'Cancel request' }).click();
    await page.getByText(/^Refunded .+ on /).waitFor({ timeout: 30_000 });
    await receiptPage.reload();
    await receiptPage.getByText('Refunded').waitFor();
  });
});
