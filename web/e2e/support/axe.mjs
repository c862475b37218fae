// axe-core in a page under test.
import { createRequire } from 'node:module';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * The serious and critical axe violations on the page as it is now, as "rule: targets" lines.
 * Transitions are off while axe looks: a colour half-way through one (a button fading in as it is
 * enabled, say) is no colour the page settles on, yet axe would judge its contrast.
 */
export async function axeSerious(page) {
  await page.addScriptTag({ path: axePath });
  const still = await page.addStyleTag({
    content: '*, *::before, *::after { transition: none !important; }',
  });
  try {
    return await page.evaluate(async () =>
      (await window.axe.run(document, { resultTypes: ['violations'] })).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    );
  } finally {
    await still.evaluate((style) => style.remove());
  }
}
