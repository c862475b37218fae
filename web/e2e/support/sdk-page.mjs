// Builds a test page that exposes the unmodified Firebase JS SDK as
// window.sdk, so browser tests can call it from page.evaluate. Built once per
// test process with Vite into a folder of that process's own under
// e2e/.artifacts (test files run side by side), removed when it exits.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'vite';
import { artifactsDir } from './browser.mjs';

let built;

/** Builds (once) and returns the folder to serve as hosting.public. */
export function sdkPage() {
  built ??= (async () => {
    const own = path.join(artifactsDir, `sdk-page-${process.pid}`);
    const dir = path.join(own, 'page');
    const src = path.join(own, 'src');
    mkdirSync(src, { recursive: true });
    process.on('exit', () => rmSync(own, { recursive: true, force: true }));
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
