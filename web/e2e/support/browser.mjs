// Launches Debian's Chromium through playwright-core for browser tests.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/** Folder for screenshots and traces (ignored by git). */
export const artifactsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.artifacts');

/** Common viewport widths: mobile (375) and desktop (1280). */
export const viewports = {
  mobile: { width: 375, height: 812 },
  desktop: { width: 1280, height: 800 },
};

/**
 * The Chromium to drive: CHROMIUM_PATH, else Debian's headless shell (the
 * same engine without the browser's windows, a third less CPU per page) or,
 * for tests of window focus (the shell keeps every page focused), Debian's
 * chromium.
 * @param {boolean} windows
 */
function chromiumPath(windows) {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const shell = '/usr/bin/chromium-headless-shell';
  return !windows && existsSync(shell) ? shell : '/usr/bin/chromium';
}

/**
 * Starts headless Chromium with the flags this offline machine needs, and
 * any extra flags (such as --host-resolver-rules to serve a page from a name);
 * windows: the full browser, whose pages gain and lose focus as tabs do.
 * @param {string[]} [extraArgs]
 * @param {{ windows?: boolean }} [opts]
 */
export function launchBrowser(extraArgs = [], { windows = false } = {}) {
  return chromium.launch({
    executablePath: chromiumPath(windows),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      ...extraArgs,
    ],
  });
}

/** Saves a full-page screenshot under e2e/.artifacts and returns its path. */
export async function screenshot(page, name) {
  mkdirSync(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * The elements holding text of their own that are wider than the viewport
 * (or stick out past its right edge), as "tag: text…" lines, and the page
 * itself when it scrolls sideways: long unbroken words must wrap, not widen
 * the page. A narrower element past the right edge inside a box that scrolls
 * or clips sideways (a row of chips) is that box's business.
 */
export function textWiderThanViewport(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const found = [];
    if (document.documentElement.scrollWidth > width + 1)
      found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in ${width} px`);
    const clipped = (el) => {
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const x = getComputedStyle(p).overflowX;
        if (x !== 'visible') return p.getBoundingClientRect().right <= width + 1;
      }
      return false;
    };
    for (const el of document.body.querySelectorAll('*')) {
      const own = [...el.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent.trim())
        .join(' ')
        .trim();
      if (!own) continue;
      const box = el.getBoundingClientRect();
      if (box.width <= width + 1 && (box.right <= width + 1 || clipped(el))) continue;
      found.push(`<${el.tagName.toLowerCase()}> ${Math.round(box.width)} px: ${own.slice(0, 40)}…`);
    }
    return found;
  });
}

/** Drags the mouse across the page's video from one point to another (through via), in 0..1 of its box. */
export async function dragOnVideo(page, [x0, y0], [x1, y1], via = []) {
  const box = await page.locator('video').boundingBox();
  const at = ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
  await page.mouse.move(...at([x0, y0]));
  await page.mouse.down();
  for (const p of [...via, [x1, y1]]) await page.mouse.move(...at(p), { steps: 4 });
  await page.mouse.up();
}
