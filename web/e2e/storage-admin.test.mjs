// Cloud Storage from the Node Admin SDK (firebase-admin over @google-cloud/storage)
// and the Firebase /v0 API in the forms the official emulator accepts, against a
// real `loupe serve`.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cert, deleteApp, initializeApp } from 'firebase-admin/app';
import { getStorage } from 'firebase-admin/storage';
import { projectId, startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const bucketName = `${projectId}.appspot.com`;

function readAll(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

describe('Storage from the Node Admin SDK', () => {
  let loupe;
  let app;
  let bucket;
  let scratch;
  before(async () => {
    loupe = await startLoupe({ config: {} });
    process.env.FIREBASE_STORAGE_EMULATOR_HOST = loupe.host;
    // A service-account credential with a key made here: getSignedUrl signs
    // locally, as it does in production.
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    app = initializeApp(
      {
        credential: cert({
          projectId,
          clientEmail: `loupe-test@${projectId}.iam.gserviceaccount.com`,
          privateKey,
        }),
        projectId,
        storageBucket: bucketName,
      },
      `storage-admin-${Date.now()}`,
    );
    bucket = getStorage(app).bucket();
    scratch = scratchDir('storage-admin-');
  });
  after(async () => {
    await deleteApp(app);
    delete process.env.FIREBASE_STORAGE_EMULATOR_HOST;
    await loupe?.stop();
  });

  it('saves in resumable mode (one PUT of the whole body) and in multipart mode', async () => {
    await bucket.file('docs/resumable.txt').save('saved resumably', {
      resumable: true,
      contentType: 'text/plain',
      metadata: { metadata: { owner: 'sam' } },
    });
    await bucket
      .file('docs/multipart.txt')
      .save('saved in one request', { resumable: false, contentType: 'text/plain' });
    const [meta] = await bucket.file('docs/resumable.txt').getMetadata();
    assert.equal(meta.contentType, 'text/plain');
    assert.equal(meta.metadata.owner, 'sam');
    assert.equal(meta.size, String('saved resumably'.length));
    assert.equal((await bucket.file('docs/resumable.txt').download())[0].toString(), 'saved resumably');
    assert.equal((await bucket.file('docs/multipart.txt').download())[0].toString(), 'saved in one request');
  });

  it('saves in chunks when given a chunk size', async () => {
    const data = Buffer.alloc(600 * 1024).map((_, i) => i % 253);
    await bucket.file('docs/chunked.bin').save(data, { resumable: true, chunkSize: 256 * 1024 });
    const [got] = await bucket.file('docs/chunked.bin').download();
    assert.ok(got.equals(data));
  });

  it('uploads a file from disk in both modes', async () => {
    const local = path.join(scratch, 'clip.bin');
    const data = Buffer.alloc(300 * 1024).map((_, i) => (i * 7) % 256);
    writeFileSync(local, data);
    await bucket.upload(local, { destination: 'clips/resumable.bin', resumable: true });
    await bucket.upload(local, { destination: 'clips/multipart.bin', resumable: false });
    for (const name of ['clips/resumable.bin', 'clips/multipart.bin']) {
      const [got] = await bucket.file(name).download();
      assert.ok(got.equals(data), name);
    }
    const [files] = await bucket.getFiles({ prefix: 'clips/' });
    assert.deepEqual(files.map((f) => f.name).sort(), ['clips/multipart.bin', 'clips/resumable.bin']);
  });

  it('reads ranges with createReadStream', async () => {
    await bucket.file('docs/alphabet.txt').save('abcdefghijklmnopqrstuvwxyz', { resumable: false });
    const file = bucket.file('docs/alphabet.txt');
    assert.equal((await readAll(file.createReadStream({ start: 3, end: 7 }))).toString(), 'defgh');
    assert.equal((await readAll(file.createReadStream({ start: 20 }))).toString(), 'uvwxyz');
    assert.equal((await readAll(file.createReadStream())).toString(), 'abcdefghijklmnopqrstuvwxyz');
  });

  it('serves a signed read URL', async () => {
    await bucket.file('docs/signed.txt').save('signed content', { resumable: false });
    const [url] = await bucket
      .file('docs/signed.txt')
      .getSignedUrl({ action: 'read', expires: Date.now() + 60_000 });
    assert.ok(url.startsWith(loupe.url), url);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'signed content');
  });

  it('lists buckets and tells whether one exists', async () => {
    const [buckets] = await bucket.storage.getBuckets();
    assert.ok(
      buckets.some((b) => b.name === bucketName),
      JSON.stringify(buckets.map((b) => b.name)),
    );
    assert.equal((await bucket.exists())[0], true);
    assert.equal((await bucket.storage.bucket('never-used-bucket').exists())[0], false);
  });

  it('reports missing objects and deletes', async () => {
    assert.equal((await bucket.file('docs/missing.txt').exists())[0], false);
    await assert.rejects(bucket.file('docs/missing.txt').download(), { code: 404 });
    await bucket.file('docs/multipart.txt').delete();
    assert.equal((await bucket.file('docs/multipart.txt').exists())[0], false);
  });
});

describe('the Firebase /v0 API in every form the official emulator accepts', () => {
  let loupe;
  const owner = { Authorization: 'Bearer owner' };
  const v0 = (p) => `${loupe.url}/v0/b/${bucketName}/o${p}`;
  before(async () => {
    loupe = await startLoupe({ config: {} });
  });
  after(async () => {
    await loupe?.stop();
  });
  const content = async (name) => {
    const res = await fetch(v0(`/${encodeURIComponent(name)}?alt=media`), { headers: owner });
    return [res.status, await res.text()];
  };

  it('answers GET /v0/ as the emulator', async () => {
    const res = await fetch(`${loupe.url}/v0/`);
    assert.deepEqual(await res.json(), { emulator: 'storage' });
  });

  it('uploads with the name in the path or in ?name=, by POST or PUT', async () => {
    for (const [method, url, name] of [
      ['POST', v0('/path%2Fpost.txt'), 'path/post.txt'],
      ['POST', v0('?name=query%2Fpost.txt'), 'query/post.txt'],
      ['PUT', v0('/path%2Fput.txt'), 'path/put.txt'],
      ['PUT', v0('?name=query%2Fput.txt'), 'query/put.txt'],
    ]) {
      const res = await fetch(url, {
        method,
        headers: { ...owner, 'Content-Type': 'text/plain' },
        body: `body of ${name}`,
      });
      assert.equal(res.status, 200, `${method} ${url}`);
      const meta = await res.json();
      assert.equal(meta.name, name);
      assert.equal(meta.contentType, 'text/plain');
      assert.ok(meta.downloadTokens, 'an upload gets a download token');
      assert.deepEqual(await content(name), [200, `body of ${name}`]);
    }
  });

  it('runs resumable commands on PUT as on POST', async () => {
    const start = await fetch(v0('?name=resumable%2Fput.bin'), {
      method: 'PUT',
      headers: {
        ...owner,
        'X-Goog-Upload-Protocol': 'resumable',
        'X-Goog-Upload-Command': 'start',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ contentType: 'application/octet-stream' }),
    });
    assert.equal(start.status, 200);
    const uploadURL = start.headers.get('x-goog-upload-url');
    assert.ok(uploadURL.includes('upload_id='), uploadURL);
    const first = await fetch(uploadURL, {
      method: 'PUT',
      headers: { ...owner, 'X-Goog-Upload-Command': 'upload', 'X-Goog-Upload-Offset': '0' },
      body: 'first half, ',
    });
    assert.equal(first.status, 200);
    const query = await fetch(uploadURL, {
      method: 'PUT',
      headers: { ...owner, 'X-Goog-Upload-Command': 'query' },
    });
    assert.equal(query.headers.get('x-goog-upload-size-received'), String('first half, '.length));
    const last = await fetch(uploadURL, {
      method: 'PUT',
      headers: {
        ...owner,
        'X-Goog-Upload-Command': 'upload, finalize',
        'X-Goog-Upload-Offset': String('first half, '.length),
      },
      body: 'second half',
    });
    assert.equal(last.status, 200);
    assert.equal(last.headers.get('x-goog-upload-status'), 'final');
    assert.deepEqual(await content('resumable/put.bin'), [200, 'first half, second half']);
  });

  it('updates metadata by PUT with X-HTTP-Method-Override: PATCH', async () => {
    const res = await fetch(v0('/path%2Fput.txt'), {
      method: 'PUT',
      headers: { ...owner, 'X-HTTP-Method-Override': 'PATCH', 'Content-Type': 'application/json' },
      body: JSON.stringify({ cacheControl: 'no-store', metadata: { reviewed: 'yes' } }),
    });
    assert.equal(res.status, 200);
    const meta = await res.json();
    assert.equal(meta.cacheControl, 'no-store');
    assert.equal(meta.metadata.reviewed, 'yes');
    assert.deepEqual(await content('path/put.txt'), [200, 'body of path/put.txt'], 'the content stays');
  });

  it('creates and deletes download tokens for the owner only', async () => {
    const anon = await fetch(v0('/path%2Fpost.txt?create_token=true'), { method: 'POST' });
    assert.equal(anon.status, 403);
    assert.deepEqual(await anon.json(), { error: { code: 403, message: 'Missing admin credentials.' } });
    const before = (await (await fetch(v0('/path%2Fpost.txt'), { headers: owner })).json()).downloadTokens;
    const created = await (
      await fetch(v0('/path%2Fpost.txt?create_token=true'), { method: 'POST', headers: owner })
    ).json();
    const tokens = created.downloadTokens.split(',');
    assert.equal(tokens.length, 2);
    assert.equal(tokens[0], before);
    const media = await fetch(v0(`/path%2Fpost.txt?alt=media&token=${tokens[1]}`));
    assert.equal(media.status, 200, 'the new token reads');
    const deleted = await (
      await fetch(v0(`/path%2Fpost.txt?delete_token=${tokens[0]}`), { method: 'POST', headers: owner })
    ).json();
    assert.equal(deleted.downloadTokens, tokens[1]);
    const bad = await fetch(v0('/path%2Fpost.txt?create_token=yes'), { method: 'POST', headers: owner });
    assert.equal(bad.status, 400);
  });

  it('POST /internal/reset removes every object', async () => {
    const res = await fetch(`${loupe.url}/internal/reset`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'OK');
    assert.equal((await content('path/post.txt'))[0], 404);
    const list = await (await fetch(v0(''), { headers: owner })).json();
    assert.deepEqual(list.items, []);
  });
});

describe('PUT /internal/setRules as firebase-tools answers it', () => {
  let loupe;
  const put = (body) =>
    fetch(`${loupe.url}/internal/setRules`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  const open =
    "rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read; } } }";
  const closed =
    "rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read: if false; } } }";
  before(async () => {
    loupe = await startLoupe({ config: {} });
  });
  after(async () => {
    await loupe?.stop();
  });

  it('refuses bad rules and files without name or content with its messages', async () => {
    for (const [body, message] of [
      [
        {
          rules: {
            files: [
              {
                name: 'storage.rules',
                content: 'service firebase.storage { match /b/{b}/o { allow read: if ; } }',
              },
            ],
          },
        },
        'There was an error updating rules, see logs for more details',
      ],
      [
        { rules: { files: [{ content: open }] } },
        "Each member of 'rules.files' array must contain 'name' and 'content'",
      ],
      [
        { rules: { files: [{ name: 'storage.rules' }] } },
        "Each member of 'rules.files' array must contain 'name' and 'content'",
      ],
      [{ rules: {} }, "Request body must include 'rules.files' array"],
    ]) {
      const res = await put(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(await res.json(), { message });
    }
    const ok = await put({ rules: { files: [{ name: 'storage.rules', content: open }] } });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { message: 'Rules updated successfully' });
  });

  it("applies each file's rules to the bucket its resource names", async () => {
    for (const bucket of ['open-bucket', 'closed-bucket']) {
      const up = await fetch(`${loupe.url}/v0/b/${bucket}/o?name=note.txt`, {
        method: 'POST',
        headers: { Authorization: 'Bearer owner', 'Content-Type': 'text/plain' },
        body: `in ${bucket}`,
      });
      assert.equal(up.status, 200);
    }
    const res = await put({
      rules: {
        files: [
          { name: 'open.rules', content: open, resource: 'open-bucket' },
          { name: 'closed.rules', content: closed, resource: 'closed-bucket' },
        ],
      },
    });
    assert.equal(res.status, 200);
    const read = (bucket) => fetch(`${loupe.url}/v0/b/${bucket}/o/note.txt?alt=media`);
    const openRead = await read('open-bucket');
    assert.equal(openRead.status, 200);
    assert.equal(await openRead.text(), 'in open-bucket');
    const closedRead = await read('closed-bucket');
    assert.equal(closedRead.status, 403);
    assert.deepEqual(await closedRead.json(), {
      error: { code: 403, message: 'Permission denied. No READ permission.' },
    });
  });
});
