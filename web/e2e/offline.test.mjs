// Bad networks in Chromium against a real `loupe serve` with the repository's
// rules and the demo marketplace (issue 31): a page whose code cannot be
// fetched offline shows an error with a retry that works once online, never a
// blank app.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { screenshot, viewports } from './support/browser.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

describe('offline', () => {
  const s = demoSuite({ viewport: viewports.desktop });

  it('shows a page whose code failed to load offline with a retry that works once online', async () => {
    await signInDemo(s.page, s.loupe, 'sam@loupe.dev');
    await s.page.getByRole('heading', { name: 'Find a mentor' }).waitFor();
    await s.context.setOffline(true);
    await s.page.getByRole('button', { name: 'Account menu' }).click();
    await s.page.getByRole('menuitem', { name: 'Profile' }).click();
    const failed = s.page.getByRole('alert').filter({ hasText: 'This page could not load' });
    await failed.getByText('You are offline, so Loupe could not fetch this page.').waitFor();
    // The header stays: the app is not blank.
    await s.page.getByRole('button', { name: 'Account menu' }).waitFor();
    await screenshot(s.page, 'offline-page-failed-desktop');
    await s.context.setOffline(false);
    await failed.getByText('Loupe could not fetch this page. Check your connection').waitFor();
    await failed.getByRole('button', { name: 'Try again' }).click();
    await s.page.getByRole('button', { name: 'Save profile' }).waitFor();
    assert.equal(await s.page.getByRole('alert').filter({ hasText: 'could not load' }).count(), 0);
  });
});
