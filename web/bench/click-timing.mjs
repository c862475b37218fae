// Click → content timing for the console benchmarks, measured in the page:
// from the click (or the text typed into a field) to the first animation
// frame whose DOM holds the content asked for, which the browser then
// paints. Measuring in the page keeps Playwright's own work out of the
// figures: its locators walk the whole DOM, which with thousands of rows
// would cost more than the console does.

/**
 * In `page`: clicks the innermost element whose text is `click.text` (under
 * `click.root`), or types `type.value` into the input `type.sel` as a user
 * would (React sees an input event), then waits frame by frame until the
 * element `until.sel` has text equal to `until.text`, contains
 * `until.contains`, or (an input) has the value `until.value`. Returns ms.
 * @param {import('playwright-core').Page} page
 * @param {{ click?: { root?: string, text: string }, type?: { sel: string, value: string },
 *   until: { sel: string, text?: string, contains?: string, value?: string } }} step
 */
export function clickToContent(page, step) {
  return page.evaluate(({ click, type, until }) => {
    // The innermost element whose text is `text` (descendants come after their ancestors).
    const withText = (root, text) => {
      const el = [...document.querySelectorAll(`${root ?? 'body'} *`)].findLast(
        (e) => e.textContent.trim() === text,
      );
      if (!el) throw new Error(`no element with the text ${text}`);
      return el;
    };
    const done = () => {
      for (const el of document.querySelectorAll(until.sel)) {
        if (until.text !== undefined && el.textContent.trim() === until.text) return true;
        if (until.contains !== undefined && el.textContent.includes(until.contains)) return true;
        if (until.value !== undefined && el.value === until.value) return true;
      }
      return false;
    };
    const target = click && withText(click.root, click.text);
    const t0 = performance.now();
    if (target) target.click();
    if (type) {
      const input = document.querySelector(type.sel);
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, type.value);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }
    return new Promise((resolve, reject) => {
      const tick = () => {
        if (done()) resolve(performance.now() - t0);
        else if (performance.now() - t0 > 60_000) reject(new Error(`not shown: ${JSON.stringify(until)}`));
        else requestAnimationFrame(tick);
      };
      tick();
    });
  }, step);
}

/**
 * Runs `measure` `runs` times (with `before` untimed ahead of each) and
 * returns the times it reports.
 * @param {number} runs
 * @param {{ before?: (i: number) => Promise<unknown>, measure: (i: number) => Promise<number> }} step
 */
export async function timeRuns(runs, { before, measure }) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    if (before) await before(i);
    times.push(await measure(i));
  }
  return times;
}

/** Nearest-rank percentile of a list of numbers. */
export function percentile(list, p) {
  const sorted = list.toSorted((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Prints a Markdown table of click → content times: one row per action. */
export function printClickTable(rows) {
  console.log(
    '| action | runs | p50 ms | p95 ms | slowest ms | first run ms | last run ms |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const [what, times] of rows) {
    const f = (n) => n.toFixed(0);
    console.log(
      `| ${what} | ${times.length} | ${f(percentile(times, 50))} | ${f(percentile(times, 95))} | ${f(Math.max(...times))} | ${f(times[0])} | ${f(times.at(-1))} |`,
    );
  }
}
