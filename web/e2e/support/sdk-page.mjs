// Builds a test page that exposes the unmodified Firebase JS SDK as
// window.sdk, so browser tests can call it from page.evaluate. Built once per
// test process with Vite into e2e/.artifacts/sdk-page.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'vite';
import { artifactsDir } from './browser.mjs';

let built;

/** Builds (once) and returns the folder to serve as hosting.public. */
export function sdkPage() {
  built ??= (async () => {
    const dir = path.join(artifactsDir, 'sdk-page');
    const src = path.join(artifactsDir, 'sdk-src');
    mkdirSync(src, { recursive: true });
    writeFileSync(
      path.join(src, 'entry.js'),
      [
        "export * as app from 'firebase/app';",
        "export * as firestore from 'firebase/firestore';",
        "export * as auth from 'firebase/auth';",
        "export * as storage from 'firebase/storage';",
        "export * as database from 'firebase/database';",
      ].join('\n'),
    );
    await build({
      configFile: false,
      logLevel: 'error',
      root: src,
      build: {
        outDir: dir,
        emptyOutDir: true,
        lib: { entry: path.join(src, 'entry.js'), formats: ['es'], fileName: () => 'sdk.js' },
      },
    });
    writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><meta charset="utf-8"><title>sdk</title>' +
        '<script type="module">import * as sdk from "/sdk.js"; window.sdk = sdk; window.sdkReady = true;</script>',
    );
    return dir;
  })();
  return built;
}

/** Opens the SDK page in a new context and waits until window.sdk is there. */
export async function openSdkPage(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${url}/index.html`);
  await page.waitForFunction(() => window.sdkReady === true);
  return page;
}
