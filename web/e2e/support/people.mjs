// People and the demo marketplace for the browser journeys: sign-up and sign-in through the app's own
// /auth page, and the hooks of a suite on the demo data.
import { after, afterEach, before, beforeEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { admin, eventually } from './admin.mjs';
import { launchBrowser } from './browser.mjs';
import { startLoupe } from './loupe.mjs';

/**
 * Creates an account through /auth in `page` and waits until its profile is
 * stored. Resolves to the new uid and profile.
 */
export async function signUp(page, loupe, { name, email, password = 'secret1' }) {
  await page.goto(`${loupe.url}/auth`);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: 'Account menu' }).waitFor();
  const [profile] = await eventually(async () => {
    const rows = await admin(loupe).where('users', 'email', email);
    return rows.length > 0 && rows;
  }, `the profile of ${email}`);
  return { uid: profile.id, profile };
}

/** The demo marketplace (emulator-data), for `startLoupe({ args: ['--import', demoData] })`. */
export const demoData = fileURLToPath(new URL('../../../emulator-data', import.meta.url));

/** Signs a demo person in through /auth (password loupe-demo) and waits for the account menu. */
export async function signInDemo(page, loupe, email) {
  await page.goto(`${loupe.url}/auth`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('loupe-demo');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Account menu' }).waitFor();
}

/**
 * Registers the hooks of a browser suite on the demo marketplace: a loupe
 * with the repository's rules and the demo data, and Chromium, for the whole
 * suite; with contextOptions, a fresh context and page for each test. Returns
 * the holder the hooks fill in (loupe, browser, context, page).
 */
export function demoSuite(contextOptions) {
  const s = {};
  before(async () => {
    s.loupe = await startLoupe({ rules: true, args: ['--import', demoData] });
    s.browser = await launchBrowser();
  });
  after(async () => {
    await s.browser?.close();
    await s.loupe?.stop();
  });
  if (contextOptions) {
    beforeEach(async () => {
      s.context = await s.browser.newContext({ locale: 'en-US', ...contextOptions });
      s.page = await s.context.newPage();
    });
    afterEach(() => s.context.close());
  }
  return s;
}
