// The console's Firestore query panel runs a pipeline typed stage by stage
// against an Enterprise database and shows each stage's output count.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, screenshot, viewports } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');

describe('console pipelines', () => {
  let loupe;
  let browser;
  before(async () => {
    loupe = await startLoupe({ config: { hosting: { public: dist }, firestore: { edition: 'enterprise' } } });
    const books = [
      ['dune', 'Dune', 4.6, 1965],
      ['hobbit', 'The Hobbit', 4.7, 1937],
      ['lotr', 'The Lord of the Rings', 4.8, 1954],
      ['neuro', 'Neuromancer', 4.1, 1984],
    ];
    const writes = books.map(([id, title, rating, year]) => ({
      update: {
        name: `projects/${projectId}/databases/(default)/documents/books/${id}`,
        fields: {
          title: { stringValue: title },
          rating: { doubleValue: rating },
          year: { integerValue: String(year) },
        },
      },
    }));
    const res = await fetch(`${loupe.url}/v1/projects/${projectId}/databases/(default)/documents:commit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
      body: JSON.stringify({ writes }),
    });
    assert.equal(res.status, 200);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
  });

  for (const [name, viewport] of Object.entries(viewports)) {
    it(`counts each stage's rows and shows the results (${name})`, async () => {
      const page = await (await browser.newContext({ viewport })).newPage();
      await page.goto(`${loupe.url}/_/console/firestore?path=books`);
      await page.getByRole('button', { name: 'Pipeline' }).click();
      await page
        .getByLabel(/Stages, one a line/)
        .fill('where rating >= 4.5\nsort year desc\nlimit 2\nselect title, year');
      await page.getByRole('button', { name: 'Run pipeline' }).click();
      const outputs = page.getByRole('list', { name: 'Stage outputs' });
      await outputs.waitFor();
      assert.deepEqual(
        (await outputs.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()),
        [
          'collection books 4',
          'where rating >= 4.5 3',
          'sort year desc 3',
          'limit 2 2',
          'select title, year 2',
        ],
      );
      assert.deepEqual(
        await page.getByRole('list', { name: 'Pipeline results' }).getByRole('listitem').allInnerTexts(),
        ['title: "Dune" · year: 1965', 'title: "The Lord of the Rings" · year: 1954'],
      );
      await screenshot(page, `console-pipeline-${name}`);
      await page.addScriptTag({ path: axePath });
      const serious = await page.evaluate(async () =>
        (await window.axe.run(document, { resultTypes: ['violations'] })).violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => v.id),
      );
      assert.deepEqual(serious, []);
      // A mistake names its line.
      await page.getByLabel(/Stages, one a line/).fill('limit 2\nfrobnicate');
      await page.getByRole('button', { name: 'Run pipeline' }).click();
      await page
        .getByRole('alert')
        .getByText(/Line 2: frobnicate is not a stage/)
        .waitFor();
      await page.context().close();
    });
  }
});
