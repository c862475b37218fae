// Launches Debian's Chromium through playwright-core for browser tests.
import { mkdirSync } from 'node:fs';
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
 * Starts headless Chromium with the flags this offline machine needs, and
 * any extra flags (such as --host-resolver-rules to serve a page from a name).
 * @param {string[]} [extraArgs]
 */
export function launchBrowser(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
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
