// Click → content timing for the console benchmarks: the time from a user's
// action (a click, or typing into a field) to the content it asks for being
// on screen, as Playwright sees it from Node (it includes the few ms of the
// DevTools protocol round trips).

/**
 * Runs `act` then `shown` `runs` times (with `before` untimed ahead of each)
 * and returns the times in ms from the start of `act` to the end of `shown`.
 * @param {number} runs
 * @param {{ before?: (i: number) => Promise<void>, act: (i: number) => Promise<void>, shown: (i: number) => Promise<void> }} step
 */
export async function timeRuns(runs, { before, act, shown }) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    if (before) await before(i);
    const t0 = performance.now();
    await act(i);
    await shown(i);
    times.push(performance.now() - t0);
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
  console.log('| action | runs | p50 ms | p95 ms | slowest ms |\n| --- | ---: | ---: | ---: | ---: |');
  for (const [what, times] of rows) {
    const f = (n) => n.toFixed(0);
    console.log(
      `| ${what} | ${times.length} | ${f(percentile(times, 50))} | ${f(percentile(times, 95))} | ${f(Math.max(...times))} |`,
    );
  }
}
