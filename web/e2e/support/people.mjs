// Signs people up through the app's own /auth page.
import { fileURLToPath } from 'node:url';
import { admin, eventually } from './admin.mjs';

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
