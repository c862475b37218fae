// Accessibility (issue 21): axe-core runs on every page of the app, signed
// out and signed in, at 375 and 1280 px, in Chromium against a real `loupe
// serve` with the demo marketplace. No serious or critical violation is
// allowed (colour contrast included); screenshots of each page are kept.
// The same walk checks that what people write wraps (issue 42): with long
// unbroken words in a comment, titles, names and a notification, no element
// holding text is wider than the viewport.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { before, describe, it } from 'node:test';
import { admin, notify } from './support/admin.mjs';
import { screenshot, textWiderThanViewport, viewports } from './support/browser.mjs';
import { demoSuite, signInDemo } from './support/people.mjs';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Every route, who sees it, and what shows once it has loaded. */
const routes = [
  { path: '/', as: null, ready: (p) => p.getByRole('heading', { name: 'Find a mentor' }) },
  { path: '/landing', as: null, ready: (p) => p.getByRole('link', { name: 'Get started' }) },
  { path: '/auth', as: null, ready: (p) => p.getByRole('heading', { name: 'Welcome back' }) },
  {
    path: '/auth?mode=signup',
    as: null,
    ready: (p) => p.getByRole('heading', { name: 'Create your account' }),
  },
  { path: '/mentors/mentor-maya', as: null, ready: (p) => p.getByRole('heading', { name: 'Maya Chen' }) },
  {
    path: '/no-such-page',
    as: null,
    ready: (p) => p.getByRole('heading', { name: 'This page does not exist' }),
  },
  { path: '/', as: 'sam', ready: (p) => p.getByRole('heading', { name: 'Find a mentor' }) },
  { path: '/mentors/mentor-maya', as: 'sam', ready: (p) => p.getByRole('heading', { name: 'Maya Chen' }) },
  { path: '/profile', as: 'sam', ready: (p) => p.getByRole('button', { name: 'Save profile' }) },
  { path: '/requests', as: 'sam', ready: (p) => p.getByRole('link', { name: /Solo on Autumn Leaves/ }) },
  {
    path: '/requests/req-autumn-leaves',
    as: 'sam',
    ready: (p) => p.getByRole('region', { name: 'Comments' }).getByText('Great tone from the first note.'),
  },
  { path: '/notifications', as: 'sam', ready: (p) => p.getByRole('heading', { name: 'Notifications' }) },
  {
    path: '/requests/req-autumn-leaves-take2',
    as: 'sam',
    ready: (p) => p.getByText('Take two, after your notes'),
  },
  {
    path: '/requests/req-autumn-leaves',
    as: 'maya',
    ready: (p) => p.getByRole('region', { name: 'Comments' }).getByText('Great tone from the first note.'),
  },
  { path: '/requests', as: 'maya', ready: (p) => p.getByRole('link', { name: /Solo on Autumn Leaves/ }) },
  { path: '/profile', as: 'maya', ready: (p) => p.getByRole('button', { name: 'Save profile' }) },
];

/** The serious and critical violations axe finds on the page, as readable lines. */
async function violations(page) {
  await page.addScriptTag({ path: axePath });
  const found = await page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: v.impact,
        nodes: v.nodes.map(
          (n) => `${n.target.join(' ')}: ${n.failureSummary.split('\n').slice(1, 2).join('')}`,
        ),
      }));
  });
  return found.map((v) => `${v.impact} ${v.id}\n    ${v.nodes.slice(0, 5).join('\n    ')}`);
}

describe('accessibility', () => {
  const s = demoSuite();
  // Long unbroken words wherever people write, seen by Sam and Maya on the pages below.
  before(async () => {
    const db = admin(s.loupe);
    await db.set(
      'feedbackRequests/req-autumn-leaves/comments/long-word',
      {
        userId: 'user-sam',
        userDisplayName: `Sam ${'N'.repeat(80)}`,
        userProfilePicture: null,
        content: 'X'.repeat(400),
        mediaUrl: '',
        mediaType: 'text',
        videoTimestamp: 2,
        isReply: false,
        repliesCount: 0,
        deleted: false,
      },
      ['timestamp'],
    );
    await db.update('feedbackRequests/req-autumn-leaves-take2', {
      title: `Take two, after your notes ${'Y'.repeat(200)}`,
    });
    await db.update('mentors/mentor-tom', { name: `Tom ${'B'.repeat(120)}`, title: 'T'.repeat(300) });
    await db.update('mentors/mentor-maya', { bio: `Timing ${'M'.repeat(300)}` });
    await notify(s.loupe, 'long-word', 'user-sam', {
      title: 'Z'.repeat(200),
      message: 'W'.repeat(400),
      link: '/requests/req-autumn-leaves',
    });
  });

  for (const [size, viewport] of Object.entries(viewports)) {
    it(`has no serious or critical axe violation and no text wider than the screen on any page at ${viewport.width} px`, async () => {
      const contexts = {};
      const pageAs = async (who) => {
        if (!contexts[who ?? '']) {
          const context = await s.browser.newContext({ viewport, locale: 'en-US' });
          const page = await context.newPage();
          if (who) await signInDemo(page, s.loupe, `${who}@loupe.dev`);
          contexts[who ?? ''] = page;
        }
        return contexts[who ?? ''];
      };
      const problems = [];
      try {
        for (const route of routes) {
          const page = await pageAs(route.as);
          await page.goto(`${s.loupe.url}${route.path}`);
          await route.ready(page).first().waitFor();
          await page.evaluate(() => document.fonts.ready);
          const found = await violations(page);
          const wide = await textWiderThanViewport(page);
          const where =
            route.path === '/' ? 'home' : route.path.replace(/[^\w]+/g, '-').replace(/^-|-$/g, '');
          const name = `a11y-${route.as ?? 'visitor'}-${where}-${size}`;
          await screenshot(page, name);
          if (found.length > 0)
            problems.push(`${route.path} (${route.as ?? 'visitor'}):\n  ${found.join('\n  ')}`);
          if (wide.length > 0)
            problems.push(
              `${route.path} (${route.as ?? 'visitor'}) is wider than the screen:\n  ${wide.join('\n  ')}`,
            );
        }
      } finally {
        await Promise.all(Object.values(contexts).map((p) => p.context().close()));
      }
      assert.equal(problems.length, 0, `found:\n${problems.join('\n')}`);
    });
  }
});
