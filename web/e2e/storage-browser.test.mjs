// Cloud Storage from the unmodified Firebase JS SDK in Chromium against a real
// `loupe serve`: a resumable upload with progress, a download URL, and a
// <video> that plays a stored clip and seeks through Range requests.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './support/browser.mjs';
import { projectId, startLoupe } from './support/loupe.mjs';
import { openSdkPage, sdkPage } from './support/sdk-page.mjs';
import { scratchDir } from './support/scratch.mjs';

// initStorage runs in the page: one app with Storage connected to loupe.
function initStorage({ projectId, port }) {
  const { app, storage } = window.sdk;
  const a = app.initializeApp({
    projectId,
    apiKey: 'demo-api-key',
    storageBucket: `${projectId}.appspot.com`,
  });
  window.st = storage.getStorage(a);
  storage.connectStorageEmulator(window.st, '127.0.0.1', port);
}

// clip makes an 8 s 160x120 H.264 MP4 (moov first, so it plays while loading).
function clip(dir) {
  const file = path.join(dir, 'clip.mp4');
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=8:size=160x120:rate=10'],
    ...['-pix_fmt', 'yuv420p', '-movflags', '+faststart', file],
  ]);
  return readFileSync(file);
}

describe('Storage from the JS SDK in Chromium', () => {
  let loupe;
  let browser;
  let page;
  let scratch;
  before(async () => {
    scratch = scratchDir('loupe-clip-');
    loupe = await startLoupe({ config: { hosting: { public: await sdkPage() } } });
    browser = await launchBrowser();
    page = await openSdkPage(browser, loupe.url);
    await page.evaluate(initStorage, { projectId, port: loupe.port });
  });
  after(async () => {
    await browser?.close();
    await loupe?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('uploads with uploadBytesResumable, reporting growing progress, then success', async () => {
    const result = await page.evaluate(async () => {
      const s = window.sdk.storage;
      const data = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 253);
      const events = [];
      const task = s.uploadBytesResumable(s.ref(window.st, 'videos/sam/take.mp4'), data, {
        contentType: 'video/mp4',
      });
      await new Promise((resolve, reject) =>
        task.on(
          'state_changed',
          (snap) => events.push({ state: snap.state, bytes: snap.bytesTransferred, total: snap.totalBytes }),
          reject,
          resolve,
        ),
      );
      const url = await s.getDownloadURL(task.snapshot.ref);
      const body = new Uint8Array(await (await fetch(url)).arrayBuffer());
      return {
        events,
        final: task.snapshot.state,
        size: task.snapshot.metadata.size,
        url,
        same: body.length === data.length && body.every((b, i) => b === data[i]),
      };
    });
    const bytes = result.events.map((e) => e.bytes);
    assert.ok(result.events.length >= 3, `state_changed events: ${JSON.stringify(result.events)}`);
    assert.ok(
      bytes.every((b, i) => i === 0 || b >= bytes[i - 1]),
      `bytesTransferred never shrinks: ${bytes}`,
    );
    assert.ok(new Set(bytes).size >= 3, `bytesTransferred grows in steps: ${bytes}`);
    assert.equal(bytes.at(-1), 3 * 1024 * 1024);
    assert.ok(result.events.every((e) => e.total === 3 * 1024 * 1024));
    assert.equal(result.final, 'success');
    assert.equal(result.size, 3 * 1024 * 1024);
    assert.match(
      result.url,
      /\/v0\/b\/demo-loupe\.appspot\.com\/o\/videos%2Fsam%2Ftake\.mp4\?alt=media&token=/,
    );
    assert.ok(result.same, 'the download URL serves the uploaded bytes');
  });

  it('plays a stored clip in <video> and seeks to 5 s through 206 Range responses', async () => {
    const b64 = clip(scratch).toString('base64');
    const url = await page.evaluate(async (b64) => {
      const s = window.sdk.storage;
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const ref = s.ref(window.st, 'videos/sam/clip.mp4');
      await s.uploadBytes(ref, data, { contentType: 'video/mp4' });
      return s.getDownloadURL(ref);
    }, b64);
    const media = [];
    page.on('response', (res) => {
      if (res.url() === url)
        media.push({
          status: res.status(),
          range: res.request().headers().range,
          length: res.headers()['content-length'],
        });
    });
    const seek = await page.evaluate(async (url) => {
      const video = document.createElement('video');
      video.muted = true;
      video.preload = 'auto';
      document.body.append(video);
      const once = (type) =>
        new Promise((resolve, reject) => {
          video.addEventListener(type, resolve, { once: true });
          video.addEventListener(
            'error',
            () => reject(new Error(`video error ${video.error?.code}: ${video.error?.message}`)),
            {
              once: true,
            },
          );
        });
      video.src = url;
      await once('loadedmetadata');
      const duration = video.duration;
      const seeked = once('seeked');
      video.currentTime = 5;
      await seeked;
      await video.play();
      await new Promise((r) => setTimeout(r, 300));
      return { duration, currentTime: video.currentTime, width: video.videoWidth, playing: !video.paused };
    }, url);
    assert.ok(Math.abs(seek.duration - 8) < 0.2, `duration ${seek.duration}`);
    assert.ok(
      seek.currentTime >= 4.9 && seek.currentTime < 6,
      `currentTime after the seek: ${seek.currentTime}`,
    );
    assert.equal(seek.width, 160);
    assert.ok(seek.playing, 'the clip plays on from the seek');
    assert.ok(media.length >= 1, 'Chromium fetched the clip');
    for (const m of media) {
      assert.ok(m.range, `every media request asks for a range: ${JSON.stringify(media)}`);
      assert.equal(m.status, 206, JSON.stringify(media));
    }
  });
});
