// The web player's offline store (Public/js/visit-store.js) under Node's own test runner, with small in-memory
// stand-ins for Cache Storage, localStorage and the network passed in, and Node's Web Crypto for the checks.
// Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { CACHE_NAMES, STORAGE_KEYS, TILE_WORKERS, VisitStore, pool } from '../../Public/js/visit-store.js';
import { TrustError } from '../../Public/js/visit-trust.js';

const PACKAGE = 'p-falls';
const utf8 = (text) => new TextEncoder().encode(text);
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const toBase64 = (bytes) => Buffer.from(bytes).toString('base64');
const pathOf = (url) => new URL(url, 'http://phone.test').pathname;

/** Cache Storage as the store uses it: named caches of answers by URL path; each match is a fresh copy. */
class FakeCaches {
  constructor() { this.named = new Map(); }
  async open(name) {
    if (!this.named.has(name)) this.named.set(name, new FakeCache());
    return this.named.get(name);
  }
}
class FakeCache {
  constructor() { this.entries = new Map(); }
  async match(url) {
    const kept = this.entries.get(pathOf(url));
    return kept ? new Response(kept.bytes.slice(0), { status: kept.status, headers: kept.headers }) : undefined;
  }
  async put(url, response) {
    this.entries.set(pathOf(url), { bytes: await response.arrayBuffer(), status: response.status, headers: [...response.headers] });
  }
  async delete(url) { return this.entries.delete(pathOf(url)); }
  paths() { return [...this.entries.keys()].sort(); }
}

/** localStorage: strings by key. */
class FakeStorage {
  constructor(items = {}) { this.items = new Map(Object.entries(items)); }
  getItem(key) { return this.items.has(key) ? this.items.get(key) : null; }
  setItem(key, value) { this.items.set(key, String(value)); }
}

/** The server: answers by path from `routes` (path → () => Response), counts what was asked, 404 for the rest. An
 * `offline` server rejects as fetch does when the connection is gone. */
class FakeServer {
  constructor() { this.routes = new Map(); this.asked = []; this.offline = false; }
  serve(path, bytes, headers = {}) { this.routes.set(path, () => new Response(bytes.slice(0), { headers })); }
  fetch = async (url) => {
    this.asked.push(pathOf(url));
    if (this.offline) throw new TypeError('Failed to fetch');
    const route = this.routes.get(pathOf(url));
    return route ? route() : new Response('not here', { status: 404 });
  };
  count(fragment) { return this.asked.filter((path) => path.includes(fragment)).length; }
}

async function signer() {
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const publicKey = toBase64(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)));
  const sign = async (bytes) => toBase64(new Uint8Array(await crypto.subtle.sign('Ed25519', pair.privateKey, bytes)));
  return { publicKey, sign };
}

/** A released version on `server`: two media files (one with a transcript), a tile index and its tiles. */
async function release(server, key, version, { transcript = 'The river runs.', tiles = { '13/1/2': 'tile A', '13/1/3': 'tile B' } } = {}) {
  const files = {};
  const ref = (path, text) => {
    const bytes = utf8(text);
    files[path] = bytes;
    server.serve(`/api/v1/files/${sha256(bytes)}`, bytes);
    return { path, size: bytes.byteLength, sha256: sha256(bytes) };
  };
  const tileHashes = {};
  for (const [at, text] of Object.entries(tiles)) {
    tileHashes[at] = sha256(utf8(text));
    server.serve(`/api/v1/packages/${PACKAGE}/versions/${version}/tiles/${at}`, utf8(text), { 'Content-Type': 'image/png' });
  }
  const manifest = {
    packageId: PACKAGE, version,
    waypoints: [{ order: 1, assets: [{ ...ref('media/river.wav', 'RIFF river'), mimeType: 'audio/wav', transcript: ref('media/river.txt', transcript) }] },
      { order: 2, assets: [{ ...ref('media/falls.png', 'PNG falls'), mimeType: 'image/png' }] }],
    tiles: { index: ref('tiles/index.json', JSON.stringify({ tiles: tileHashes })), size: 200, tileCount: Object.keys(tiles).length },
  };
  const bytes = utf8(JSON.stringify(manifest));
  const signature = await key.sign(bytes);
  server.serve(`/api/v1/packages/${PACKAGE}/versions/${version}/manifest`, bytes, { 'Manifest-Signature': signature });
  return { manifest, bytes, signature, files };
}

async function phone({ pagePath = null } = {}) {
  const key = await signer();
  const server = new FakeServer();
  server.serve('/api/v1/signing-key', utf8(JSON.stringify({ publicKey: key.publicKey })));
  const caches = new FakeCaches();
  const storage = new FakeStorage();
  const refusedFetches = [];
  const store = new VisitStore({
    packageId: PACKAGE, caches, storage, fetch: server.fetch, pagePath,
    objectURL: (bytes, type) => `blob:${type}:${bytes.byteLength}`, onFetchRefused: (file, message) => refusedFetches.push(message),
  });
  return { key, server, caches, storage, store, refusedFetches };
}

async function saveAll(store, target, previous = null) {
  const plan = await store.planSave(target.manifest);
  const seen = [];
  await store.saveTour(target, previous, plan, (done, total) => seen.push([done, total]));
  return { plan, seen };
}

test('the cache names are written once here, and the service worker uses the same', () => {
  const worker = readFileSync(new URL('../../Public/js/visit-sw.js', import.meta.url), 'utf8');
  const literal = (name) => worker.match(new RegExp(`^const ${name} = ['\`]([^'\`$]*)`, 'm'))?.[1];
  assert.equal(literal('FILES'), CACHE_NAMES.files);
  assert.equal(literal('PAGES'), CACHE_NAMES.pages);
  assert.equal(literal('SHELL'), CACHE_NAMES.shellPrefix, 'the shell cache is the prefix and the player version');
  assert.ok(worker.includes(`name.startsWith('${CACHE_NAMES.shellPrefix}')`), 'older shells are found by the same prefix');
});

test('saving puts every listed file, tile and the signed manifest, and the page; progress ends at the total', async () => {
  const { key, server, caches, store } = await phone({ pagePath: `/visit/${PACKAGE}` });
  server.serve(`/visit/${PACKAGE}`, utf8('<!doctype html>'), { 'Content-Type': 'text/html' });
  const v1 = await release(server, key, 1);
  const target = await store.fetchManifest(1);
  const { plan, seen } = await saveAll(store, target);
  assert.equal(plan.files.length, 4);
  assert.equal(plan.total, Object.values(v1.files).reduce((sum, bytes) => sum + bytes.byteLength, 0) + 200);
  assert.deepEqual(seen.at(-1), [plan.total, plan.total]);
  const files = await caches.open(CACHE_NAMES.files);
  assert.deepEqual(files.paths(), [
    ...Object.values(v1.files).map((bytes) => `/api/v1/files/${sha256(bytes)}`),
    `/api/v1/packages/${PACKAGE}/versions/1/manifest`,
    `/api/v1/packages/${PACKAGE}/versions/1/tiles/13/1/2`, `/api/v1/packages/${PACKAGE}/versions/1/tiles/13/1/3`,
  ].sort());
  const manifest = await files.match(`/api/v1/packages/${PACKAGE}/versions/1/manifest`);
  assert.equal(manifest.headers.get('Manifest-Signature'), v1.signature);
  assert.deepEqual((await caches.open(CACHE_NAMES.pages)).paths(), [`/visit/${PACKAGE}`]);
  assert.equal((await store.planSave(target.manifest)).files.length, 0, 'nothing left to fetch');
});

test('the held copy: written and read back in localStorage, and loaded with its signature checked again', async () => {
  const { key, server, caches, storage, store } = await phone();
  assert.equal(store.readHeld(), null);
  const target = await store.fetchManifest((await release(server, key, 1)).manifest.version);
  await saveAll(store, target);
  store.writeHeld({ version: 1, sha256: 'c'.repeat(64) });
  assert.deepEqual(JSON.parse(storage.getItem(`${STORAGE_KEYS.tour}${PACKAGE}`)), { version: 1, sha256: 'c'.repeat(64) });
  assert.ok(store.holds(1) && !store.holds(2));

  // A fresh page (a new store over the same storage): the pinned key checks the saved manifest, offline.
  server.offline = true;
  const again = new VisitStore({ packageId: PACKAGE, caches, storage, fetch: server.fetch });
  const held = again.readHeld();
  assert.equal((await again.loadHeld(held)).manifest.version, 1);
  assert.equal(await again.checkAllSaved(target.manifest), null, 'every saved file matches');
  assert.equal(await again.loadHeld({ version: 7 }), null, 'a version not saved');

  storage.setItem(`${STORAGE_KEYS.tour}${PACKAGE}`, '{not json');
  assert.equal(again.readHeld(), null);
});

test('a saved manifest that no longer matches its signature is refused and removed', async () => {
  const { key, server, caches, store } = await phone();
  const v1 = await release(server, key, 1);
  await saveAll(store, await store.fetchManifest(1));
  const files = await caches.open(CACHE_NAMES.files);
  const url = `/api/v1/packages/${PACKAGE}/versions/1/manifest`;
  await files.put(url, new Response(new TextDecoder().decode(v1.bytes).replace('river', 'rover'), { headers: { 'Manifest-Signature': v1.signature } }));
  await assert.rejects(store.loadHeld({ version: 1 }), TrustError);
  assert.equal(await files.match(url), undefined);
});

test('a saved file changed in Cache Storage is named, refused, and fetched again by the next save', async () => {
  const { key, server, caches, store } = await phone();
  const v1 = await release(server, key, 1);
  const target = await store.fetchManifest(1);
  await saveAll(store, target);
  const files = await caches.open(CACHE_NAMES.files);
  const audio = `/api/v1/files/${sha256(v1.files['media/river.wav'])}`;
  await files.put(audio, new Response('RIFF rivex'));

  const fresh = new VisitStore({ packageId: PACKAGE, caches, storage: new FakeStorage(), fetch: server.fetch });
  assert.match(await fresh.checkAllSaved(target.manifest), /media\/river\.wav does not match its SHA-256/);
  assert.equal(await fresh.mediaSource({ path: 'media/river.wav', sha256: sha256(v1.files['media/river.wav']) }, { saved: true, viaWorker: true }), null);
  assert.equal(await fresh.text(target.manifest.waypoints[0].assets[0].transcript, true), 'The river runs.', 'the others still play');
  const plan = await fresh.planSave(target.manifest);
  assert.deepEqual(plan.files.map((file) => file.path), ['media/river.wav']);
  await fresh.saveTour(target, null, plan);
  fresh.forgetRefused();
  assert.equal(await fresh.checkAllSaved(target.manifest), null);
});

test('a file that does not match the manifest is not put; what was put before it stays', async () => {
  const { key, server, caches, store } = await phone();
  const v1 = await release(server, key, 1);
  server.serve(`/api/v1/files/${sha256(v1.files['media/river.txt'])}`, utf8('The river ran.')); // same size, other bytes
  const target = await store.fetchManifest(1);
  await assert.rejects(saveAll(store, target), (error) => error instanceof TrustError && /media\/river\.txt/.test(error.message));
  const files = await caches.open(CACHE_NAMES.files);
  assert.deepEqual(files.paths(), [`/api/v1/files/${sha256(v1.files['media/river.wav'])}`]);
});

test('an unsaved tour plays from checked bytes in memory; a file that fails is reported once and not played', async () => {
  const { key, server, store, refusedFetches } = await phone();
  const v1 = await release(server, key, 1);
  const image = { path: 'media/falls.png', size: 9, sha256: sha256(v1.files['media/falls.png']), mimeType: 'image/png' };
  assert.equal(await store.mediaSource(image, { saved: false, viaWorker: true }), 'blob:image/png:9');
  assert.equal(await store.mediaSource(image, { saved: false, viaWorker: true }), 'blob:image/png:9');
  assert.equal(server.count('/api/v1/files/'), 1, 'fetched once');
  const broken = { path: 'media/gone.wav', size: 3, sha256: 'd'.repeat(64), mimeType: 'audio/wav' };
  assert.equal(await store.mediaSource(broken, { saved: false, viaWorker: false }), null);
  assert.equal(await store.mediaSource(broken, { saved: false, viaWorker: false }), null);
  assert.deepEqual(refusedFetches, ['media/gone.wav could not be fetched (HTTP 404)']);
  assert.equal((await store.tileIndex(v1.manifest, false)).tiles['13/1/2'], sha256(utf8('tile A')));
});

test('an update copies the tiles that did not change and fetches only the changed files and tiles', async () => {
  const { key, server, caches, store } = await phone();
  await release(server, key, 1);
  const v1 = await store.fetchManifest(1);
  await saveAll(store, v1);
  const oldIndex = await store.tileIndex(v1.manifest, true);
  await release(server, key, 2, { transcript: 'The river runs high.', tiles: { '13/1/2': 'tile A', '13/1/3': 'tile C' } });
  const v2 = await store.fetchManifest(2);
  server.asked = [];
  const { plan } = await saveAll(store, v2, { version: 1, tileIndex: oldIndex });
  assert.deepEqual(plan.files.map((file) => file.path), ['media/river.txt', 'tiles/index.json']);
  assert.deepEqual(server.asked.filter((path) => path.includes('/tiles/')), [`/api/v1/packages/${PACKAGE}/versions/2/tiles/13/1/3`]);
  const tile = await (await caches.open(CACHE_NAMES.files)).match(`/api/v1/packages/${PACKAGE}/versions/2/tiles/13/1/2`);
  assert.equal(await tile.text(), 'tile A', 'copied from version 1');
});

test('a tile the server lacks stops the save with its name', async () => {
  const { key, server, store } = await phone();
  await release(server, key, 1);
  server.routes.delete(`/api/v1/packages/${PACKAGE}/versions/1/tiles/13/1/3`);
  await assert.rejects(saveAll(store, await store.fetchManifest(1)), { message: 'map tile 13/1/3 could not be fetched (HTTP 404)' });
});

test('the tile pool runs at most its size at once, does every item, and stops taking items after a failure', async () => {
  let running = 0;
  let most = 0;
  const done = [];
  await pool([...Array(10).keys()], TILE_WORKERS, async (item) => {
    running += 1;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 2));
    running -= 1;
    done.push(item);
  });
  assert.equal(most, TILE_WORKERS);
  assert.deepEqual(done.sort((a, b) => a - b), [...Array(10).keys()]);

  const started = [];
  await assert.rejects(pool([...Array(20).keys()], 2, async (item) => {
    started.push(item);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (item === 3) throw new Error('tile 3');
  }), /tile 3/);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(started.length <= 5, `no new item after the failure: ${started}`);
  await pool([], 4, async () => assert.fail('no items, no work'));
});

test('the catalog: signed and kept for its alerts; an older one is refused; the kept one is checked again', async () => {
  const { key, server, storage, store } = await phone();
  const catalog = (version) => utf8(JSON.stringify({ catalogVersion: version, expiresAt: new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z'), packages: [{ id: PACKAGE, version: 1 }] }));
  const serveCatalog = async (bytes) => server.serve('/api/v1/catalog', bytes, { 'Catalog-Signature': await key.sign(bytes) });
  await serveCatalog(catalog(5));
  const checked = await store.verifiedCatalog();
  assert.equal(checked.stale, false);
  assert.equal(checked.remembered.catalog.catalogVersion, 5);
  assert.equal(storage.getItem(STORAGE_KEYS.catalogVersion), '5');
  assert.equal(storage.getItem(STORAGE_KEYS.signingKey), key.publicKey, 'the key is pinned at first sight');
  assert.equal((await store.rememberedCatalog()).catalog.catalogVersion, 5);

  await serveCatalog(catalog(4));
  await assert.rejects(store.verifiedCatalog(), /older than catalog 5/);

  const kept = JSON.parse(storage.getItem(STORAGE_KEYS.lastCatalog));
  storage.setItem(STORAGE_KEYS.lastCatalog, JSON.stringify({ ...kept, body: kept.body.replace('"version":1', '"version":9') }));
  assert.equal(await store.rememberedCatalog(), null, 'an edited kept catalog is not used');
});

test('a different published key is refused, not adopted', async () => {
  const { key, server, storage, store } = await phone();
  storage.setItem(STORAGE_KEYS.signingKey, (await signer()).publicKey);
  const bytes = utf8(JSON.stringify({ catalogVersion: 1, packages: [] }));
  server.serve('/api/v1/catalog', bytes, { 'Catalog-Signature': await key.sign(bytes) });
  await assert.rejects(store.verifiedCatalog(), (error) => error instanceof TrustError && /different signing key/.test(error.message));
});
