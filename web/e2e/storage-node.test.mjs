// Cloud Storage from the JS SDK in Node against a real `loupe serve`.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fs from 'firebase/storage';
import { freePort, projectId, startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

describe('Storage from the JS SDK in Node', () => {
  let loupe;
  let app;
  let storage;
  before(async () => {
    loupe = await startLoupe();
    app = initializeApp(
      { projectId, apiKey: 'demo-api-key', storageBucket: `${projectId}.appspot.com` },
      `st-${Date.now()}`,
    );
    storage = fs.getStorage(app);
    fs.connectStorageEmulator(storage, '127.0.0.1', loupe.port);
  });
  after(async () => {
    await deleteApp(app);
    await loupe?.stop();
  });

  it('uploads resumably with progress, downloads by URL with ranges, lists and deletes', async () => {
    const data = new Uint8Array(700 * 1024).map((_, i) => i % 251);
    const ref = fs.ref(storage, 'videos/sam/clip.mp4');
    const progress = [];
    const task = fs.uploadBytesResumable(ref, data, {
      contentType: 'video/mp4',
      customMetadata: { title: 'Take 2' },
    });
    task.on('state_changed', (s) => progress.push(s.bytesTransferred));
    const done = await task;
    assert.equal(done.metadata.size, data.length);
    assert.equal(done.metadata.customMetadata.title, 'Take 2');
    assert.ok(progress.length >= 2 && progress.at(-1) === data.length, `progress ${progress}`);

    const url = await fs.getDownloadURL(ref);
    assert.match(url, /\/v0\/b\/demo-loupe\.appspot\.com\/o\/videos%2Fsam%2Fclip\.mp4\?alt=media&token=/);
    const res = await fetch(url, { headers: { Range: 'bytes=1000-1009' } });
    assert.equal(res.status, 206);
    assert.deepEqual([...new Uint8Array(await res.arrayBuffer())], [...data.slice(1000, 1010)]);

    await fs.uploadString(fs.ref(storage, 'videos/sam/notes.txt'), 'notes');
    const listed = await fs.listAll(fs.ref(storage, 'videos/sam'));
    assert.deepEqual(listed.items.map((i) => i.name).sort(), ['clip.mp4', 'notes.txt']);
    const meta = await fs.updateMetadata(ref, { cacheControl: 'public, max-age=60' });
    assert.equal(meta.cacheControl, 'public, max-age=60');
    await fs.deleteObject(ref);
    await assert.rejects(fs.getMetadata(ref), { code: 'storage/object-not-found' });
  });
});

describe('a resumable upload across a loupe restart', () => {
  it('carries on from the bytes loupe kept once it is back, with the same content', async () => {
    const port = await freePort();
    const dataDir = path.join(scratchDir('loupe-upload-restart-'), 'data');
    const start = () => startLoupe({ dataDir, args: ['--port', String(port)] });
    let loupe = await start();
    const app = initializeApp(
      { projectId, apiKey: 'demo-api-key', storageBucket: `${projectId}.appspot.com` },
      `restart-${Date.now()}`,
    );
    const storage = fs.getStorage(app);
    fs.connectStorageEmulator(storage, '127.0.0.1', port);
    try {
      const data = new Uint8Array(24 * 1024 * 1024).map((_, i) => (i * 7) % 256);
      const ref = fs.ref(storage, 'videos/sam/restart.mp4');
      const task = fs.uploadBytesResumable(ref, data, { contentType: 'video/mp4' });
      const progress = [];
      let restarted;
      task.on('state_changed', (s) => {
        progress.push(s.bytesTransferred);
        if (progress.length === 3)
          restarted = loupe.stop().then(async () => {
            loupe = await start();
          });
      });
      const done = await task;
      await restarted;
      assert.ok(progress.length > 3, `progress: ${progress}`);
      assert.equal(done.metadata.size, data.length);
      const md5 = createHash('md5').update(data).digest('base64');
      assert.equal(done.metadata.md5Hash, md5);
      const body = new Uint8Array(await (await fetch(await fs.getDownloadURL(ref))).arrayBuffer());
      assert.equal(createHash('md5').update(body).digest('base64'), md5);
    } finally {
      await deleteApp(app);
      await loupe.stop();
    }
  });
});
