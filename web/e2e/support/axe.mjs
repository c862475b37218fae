// axe-core in a page under test.
import { createRequire } from 'node:module';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** The serious and critical axe violations on the page as it is now, as "rule: targets" lines. */
export async function axeSerious(page) {
  await page.addScriptTag({ path: axePath });
  return page.evaluate(async () =>
    (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  );
}
