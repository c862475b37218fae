// Storage as firebase-tools' own conformance tests expect it, through the
// Node Admin SDK (firebase-admin over @google-cloud/storage) and the JS SDK in
// Node against one real `loupe serve`: metadata shapes, ACLs, signed POST
// policies, decompressive transcoding and Firebase listings.
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { cert, deleteApp as deleteAdminApp, initializeApp as initAdmin } from 'firebase-admin/app';
import { getStorage as getAdminStorage } from 'firebase-admin/storage';
import { deleteApp, initializeApp } from 'firebase/app';
import * as fs from 'firebase/storage';
import { projectId, startLoupe } from './support/loupe.mjs';
import { scratchDir } from './support/scratch.mjs';

const bucketName = `${projectId}.appspot.com`;

// get answers a GET made with Node's http module, which sends no
// Accept-Encoding, as a client that takes no compressed answers.
function get(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('Storage as firebase-tools conformance tests expect it', () => {
  let loupe;
  let admin;
  let bucket;
  let app;
  let storage;
  before(async () => {
    loupe = await startLoupe({ config: {} });
    process.env.FIREBASE_STORAGE_EMULATOR_HOST = loupe.host;
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    admin = initAdmin(
      {
        credential: cert({
          projectId,
          clientEmail: `conformance@${projectId}.iam.gserviceaccount.com`,
          privateKey,
        }),
        projectId,
        storageBucket: bucketName,
      },
      `storage-conformance-${Date.now()}`,
    );
    bucket = getAdminStorage(admin).bucket();
    app = initializeApp({ projectId, apiKey: 'demo-api-key', storageBucket: bucketName }, `sc-${Date.now()}`);
    storage = fs.getStorage(app);
    fs.connectStorageEmulator(storage, '127.0.0.1', loupe.port);
  });
  after(async () => {
    await deleteAdminApp(admin);
    await deleteApp(app);
    delete process.env.FIREBASE_STORAGE_EMULATOR_HOST;
    delete process.env.STORAGE_EMULATOR_HOST;
    await loupe?.stop();
  });

  it('answers GCS metadata with absolute, working links and every field GCS sets', async () => {
    await bucket.file('meta/empty').save('', { resumable: false });
    const [meta] = await bucket.file('meta/empty').getMetadata();
    assert.deepEqual(Object.keys(meta).sort(), [
      'bucket',
      'contentType',
      'crc32c',
      'etag',
      'generation',
      'id',
      'kind',
      'md5Hash',
      'mediaLink',
      'metageneration',
      'name',
      'selfLink',
      'size',
      'storageClass',
      'timeCreated',
      'timeStorageClassUpdated',
      'updated',
    ]);
    assert.equal(meta.contentType, 'application/octet-stream');
    assert.equal(meta.selfLink, `${loupe.url}/storage/v1/b/${bucketName}/o/meta%2Fempty`);
    assert.ok(
      meta.mediaLink.startsWith(`${loupe.url}/download/storage/v1/b/${bucketName}/o/meta%2Fempty?`),
      meta.mediaLink,
    );
    await bucket.file('meta/hello.txt').save('hello', { resumable: false });
    const [{ mediaLink }] = await bucket.file('meta/hello.txt').getMetadata();
    assert.equal((await get(mediaLink)).body.toString(), 'hello');
  });

  it('sends a download as an attachment named after the object, unless its contentDisposition says otherwise', async () => {
    await bucket.file('downloads/testFile').save('hello world', { resumable: false });
    const [{ mediaLink }] = await bucket.file('downloads/testFile').getMetadata();
    const gcs = await get(mediaLink);
    assert.equal(gcs.res.headers['content-disposition'], 'attachment; filename*=testFile');
    assert.equal(gcs.res.headers['content-type'], 'application/octet-stream');
    const url = await fs.getDownloadURL(fs.ref(storage, 'downloads/testFile'));
    const firebase = await get(url);
    assert.equal(firebase.res.headers['content-disposition'], 'attachment; filename*=testFile');
    assert.equal(firebase.body.toString(), 'hello world');
    await fs.uploadString(fs.ref(storage, "named/it's (1).txt"), 'hi');
    const named = await get(await fs.getDownloadURL(fs.ref(storage, "named/it's (1).txt")));
    assert.equal(named.res.headers['content-disposition'], 'inline; filename*=it%27s%20%281%29.txt');
  });

  it('refuses a rewrite token it never handed out as not implemented (501)', async () => {
    await bucket.file('copy/source.txt').save('source', { resumable: false });
    await assert.rejects(
      bucket.file('copy/source.txt').copy(bucket.file('copy/dest.txt'), { token: 'foo-bar' }),
      {
        code: 501,
      },
    );
    assert.equal((await bucket.file('copy/dest.txt').exists())[0], false);
  });

  it('sets custom metadata as strings, removes a key set to null, and replaces it on a copy', async () => {
    const file = bucket.file('meta/custom.txt');
    await file.save('custom', {
      resumable: false,
      metadata: { cacheControl: 'private,no-store', metadata: { hello: 'world' } },
    });
    let [meta] = await file.setMetadata({ metadata: { booleanValue: true, numberValue: -1 } });
    assert.deepEqual(meta.metadata, { hello: 'world', booleanValue: 'true', numberValue: '-1' });
    [meta] = await file.setMetadata({ metadata: { hello: null, booleanValue: null } });
    assert.deepEqual(meta.metadata, { numberValue: '-1' });

    const copy = bucket.file('meta/copy.txt');
    const [, { resource }] = await file.copy(copy, {
      metadata: { foo: 'bar', nullMetadata: null },
      cacheControl: 'no-cache',
    });
    assert.deepEqual(resource.metadata, { foo: 'bar', nullMetadata: '' });
    assert.equal(resource.cacheControl, 'no-cache');
    const [again] = await copy.getMetadata();
    assert.deepEqual(again.metadata, { foo: 'bar', nullMetadata: '' });
    await file.copy(bucket.file('meta/kept.txt'));
    assert.deepEqual((await bucket.file('meta/kept.txt').getMetadata())[0].metadata, { numberValue: '-1' });
  });

  it('answers the JS SDK metadata without unset fields, and clears fields set to null', async () => {
    await bucket.file('js/plain').save('', { resumable: false });
    const meta = await fs.getMetadata(fs.ref(storage, 'js/plain'));
    const set = Object.keys(meta).filter((k) => meta[k] !== undefined); // the SDK names every field
    assert.deepEqual(set.sort(), [
      'bucket',
      'contentEncoding',
      'contentType',
      'fullPath',
      'generation',
      'md5Hash',
      'metageneration',
      'name',
      'size',
      'timeCreated',
      'type',
      'updated',
    ]);
    await bucket.file('js/full').save('', {
      resumable: false,
      metadata: {
        cacheControl: 'hello world',
        contentDisposition: 'hello world',
        contentEncoding: 'hello world',
        contentLanguage: 'en',
        contentType: 'hello world',
        metadata: { key: 'value' },
      },
    });
    const ref = fs.ref(storage, 'js/full');
    const cleared = await fs.updateMetadata(ref, {
      cacheControl: null,
      contentDisposition: null,
      contentEncoding: null,
      contentLanguage: null,
      contentType: null,
      customMetadata: null,
    });
    for (const key of [
      'cacheControl',
      'contentDisposition',
      'contentLanguage',
      'contentType',
      'customMetadata',
    ])
      assert.equal(cleared[key], undefined, key);
    assert.equal(cleared.contentEncoding, 'identity');
    await fs.updateMetadata(ref, { customMetadata: { removeMe: 'please' } });
    const removed = await fs.updateMetadata(ref, { customMetadata: { removeMe: null } });
    assert.equal(removed.customMetadata, undefined);
  });

  it('makes a file public (an ACL entry) and uploads through a signed POST policy', async () => {
    await bucket.file('a/b').save('public bytes', { resumable: false });
    const [acl] = await bucket.file('a/b').makePublic();
    assert.equal(acl.kind, 'storage#objectAccessControl');
    assert.equal(acl.entity, 'allUsers');
    assert.equal(acl.role, 'READER');
    assert.equal(acl.id, `${bucketName}/a/b/${acl.generation}/allUsers`);
    assert.equal((await get(`${loupe.url}/${bucketName}/a/b`)).body.toString(), 'public bytes');

    const [policy] = await bucket.file('form/upload.txt').generateSignedPostPolicyV4({
      expires: Date.now() + 60_000,
      fields: { 'x-goog-meta-color': 'blue', 'Cache-Control': 'public, max-age=60' },
    });
    const form = new FormData();
    for (const [k, v] of Object.entries(policy.fields)) form.append(k, v);
    form.append('file', new Blob(['hello world'], { type: 'text/plain' }), 'upload.txt');
    const res = await fetch(policy.url, { method: 'POST', body: form });
    assert.equal(res.status, 204, await res.text());
    const [meta] = await bucket.file('form/upload.txt').getMetadata();
    assert.equal(meta.contentType, 'text/plain');
    assert.equal(meta.cacheControl, 'public, max-age=60');
    assert.deepEqual(meta.metadata, { color: 'blue' });
    assert.equal((await bucket.file('form/upload.txt').download())[0].toString(), 'hello world');

    const forged = new FormData();
    for (const [k, v] of Object.entries(policy.fields))
      forged.append(k, k === 'key' ? 'form/elsewhere.txt' : v);
    forged.append('file', new Blob(['not allowed'], { type: 'text/plain' }), 'x.txt');
    const refused = await fetch(policy.url, { method: 'POST', body: forged });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /InvalidPolicyDocument/);
  });

  it('serves a gzip-stored object decompressed to a client that takes no gzip', async () => {
    const file = bucket.file('gzip/hello.txt');
    await file.save('hello world', { gzip: true, contentType: 'text/plain' });
    assert.equal(file.metadata.contentEncoding, 'gzip');
    const plain = await get(`${loupe.url}/download/storage/v1/b/${bucketName}/o/gzip%2Fhello.txt?alt=media`);
    assert.equal(plain.body.toString(), 'hello world');
    assert.equal(plain.res.headers['content-encoding'], undefined);
    assert.equal(plain.res.headers['content-length'], undefined);
    assert.equal(plain.res.headers['x-goog-stored-content-encoding'], 'gzip');
    const v0 = await get(`${loupe.url}/v0/b/${bucketName}/o/gzip%2Fhello.txt?alt=media`);
    assert.equal(v0.body.toString(), 'hello world');
    const res = await fetch(`${loupe.url}/${bucketName}/gzip/hello.txt`, {
      headers: { 'Accept-Encoding': 'gzip' },
    });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    assert.equal(await res.text(), 'hello world', 'fetch decompresses what it asked compressed');
    assert.equal((await file.download())[0].toString(), 'hello world');
    const [raw] = await file.download({ decompress: false });
    assert.equal(gunzipSync(raw).toString(), 'hello world', 'decompress: false gets the stored gzip bytes');
  });

  it('stores object names of up to 1,024 bytes of UTF-8', async () => {
    const long = `testing/${'long'.repeat(180)}image.png`;
    const ref = fs.ref(storage, long);
    await fs.uploadString(ref, 'a long name');
    assert.equal(new TextDecoder().decode(await fs.getBytes(ref)), 'a long name');
    const utf8 = `utf8/${'é'.repeat(509)}`; // 1,023 bytes
    await bucket.file(utf8).save('two bytes a letter', { resumable: false });
    assert.equal((await bucket.file(utf8).download())[0].toString(), 'two bytes a letter');
    const [files] = await bucket.getFiles({ prefix: 'testing/' });
    assert.deepEqual(
      files.map((f) => f.name),
      [long],
    );
    await assert.rejects(bucket.file(`${utf8}é`).save('1,025 bytes', { resumable: false }), { code: 400 });
  });

  it('lists through the JS SDK only names Firebase can address', async () => {
    for (const name of ['listAll/abc/', 'listAll//foo', 'listAll/bar//', 'listAll/baz//qux', 'listAll/item'])
      await bucket.file(name).save('', { resumable: false });
    const names = async (path) => {
      const list = await fs.listAll(fs.ref(storage, path));
      return { prefixes: list.prefixes.map((p) => p.name), items: list.items.map((i) => i.name) };
    };
    assert.deepEqual(await names('listAll/'), { prefixes: ['abc', 'bar', 'baz'], items: ['item'] });
    assert.deepEqual(await names('listAll/abc/'), { prefixes: [], items: [] });
  });
});

describe('Storage imports and deploy targets as firebase-tools reads them', () => {
  // jsStorage is the JS SDK's Storage for bucket on loupe, signed in as nobody.
  const jsStorage = (loupe, bucket) => {
    const app = initializeApp(
      { projectId, apiKey: 'demo-api-key', storageBucket: bucket },
      `t-${bucket}-${Date.now()}`,
    );
    const storage = fs.getStorage(app);
    fs.connectStorageEmulator(storage, '127.0.0.1', loupe.port);
    return { storage, close: () => deleteApp(app) };
  };

  it('imports an export written on Windows with its names separated by slashes', async () => {
    const dir = scratchDir('windows-export-');
    const bucket = `${projectId}.appspot.com`;
    writeFileSync(
      path.join(dir, 'firebase-export-metadata.json'),
      JSON.stringify({ version: '13.0.0', storage: { version: '13.0.0', path: 'storage_export' } }),
    );
    mkdirSync(path.join(dir, 'storage_export', 'metadata'), { recursive: true });
    mkdirSync(path.join(dir, 'storage_export', 'blobs'), { recursive: true });
    writeFileSync(
      path.join(dir, 'storage_export', 'buckets.json'),
      JSON.stringify({ buckets: [{ id: bucket }] }),
    );
    const content = Buffer.from('written on Windows');
    // firebase-tools on Windows names each file by encodeURIComponent(bucket\\name).
    const disk = encodeURIComponent(`${bucket}\\folder\\nested.txt`);
    writeFileSync(path.join(dir, 'storage_export', 'blobs', disk), content);
    writeFileSync(
      path.join(dir, 'storage_export', 'metadata', `${disk}.json`),
      JSON.stringify({
        name: 'folder\\nested.txt',
        bucket,
        contentType: 'text/plain',
        metageneration: 1,
        generation: 1648084940926,
        downloadTokens: ['c3c71086-95a8-445d-96e7-f625972de4b0'],
        timeCreated: '2022-03-24T01:22:20.926Z',
        updated: '2022-03-24T01:22:20.926Z',
        size: content.length,
        md5Hash: createHash('md5').update(content).digest('base64'),
        crc32c: '0',
      }),
    );
    const loupe = await startLoupe({ config: {}, args: ['--import', dir] });
    const { storage, close } = jsStorage(loupe, bucket);
    try {
      const listed = await fs.listAll(fs.ref(storage, 'folder'));
      assert.deepEqual(
        listed.items.map((i) => i.fullPath),
        ['folder/nested.txt'],
      );
      const url = await fs.getDownloadURL(fs.ref(storage, 'folder/nested.txt'));
      assert.equal(await (await fetch(url)).text(), 'written on Windows');
    } finally {
      await close();
      await loupe.stop();
    }
  });

  it("resolves firebase.json's storage deploy targets through .firebaserc", async () => {
    const project = 'fake-project-id';
    const dir = scratchDir('targets-');
    const allow = (what) =>
      `rules_version = '2';\nservice firebase.storage { match /b/{b}/o { match /{f=**} { allow read, write: if ${what}; } } }`;
    writeFileSync(path.join(dir, 'allowAll.rules'), allow('true'));
    writeFileSync(path.join(dir, 'allowNone.rules'), allow('false'));
    writeFileSync(
      path.join(dir, 'firebase.json'),
      JSON.stringify({
        storage: [
          { target: 'allowNone', rules: 'allowNone.rules' },
          { target: 'allowAll', rules: 'allowAll.rules' },
        ],
      }),
    );
    writeFileSync(
      path.join(dir, '.firebaserc'),
      JSON.stringify({
        projects: {},
        targets: {
          [project]: {
            storage: { allowNone: [`${project}.appspot.com`], allowAll: [`${project}-2.appspot.com`] },
          },
        },
      }),
    );
    // The last --config wins: the folder with .firebaserc beside firebase.json.
    const loupe = await startLoupe({
      args: ['--project', project, '--config', path.join(dir, 'firebase.json')],
    });
    const none = jsStorage(loupe, `${project}.appspot.com`);
    const all = jsStorage(loupe, `${project}-2.appspot.com`);
    try {
      await assert.rejects(fs.uploadString(fs.ref(none.storage, 'test_upload.txt'), 'x'), {
        code: 'storage/unauthorized',
      });
      const done = await fs.uploadBytesResumable(
        fs.ref(all.storage, 'test_upload.txt'),
        new Uint8Array([1, 2, 3]),
      );
      assert.equal(done.metadata.size, 3);
    } finally {
      await none.close();
      await all.close();
      await loupe.stop();
    }
  });
});
