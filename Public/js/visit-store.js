// The player's offline store: what this browser keeps for a tour and how it gets there. Cache Storage (verified files
// by SHA-256, tiles by versioned URL, signed manifests, the saved pages), localStorage (the pinned signing key, the
// highest catalog version, the last fresh catalog, the held version) and the network. Data in, data out: no DOM, and
// every browser service comes in through the constructor, so Node runs it (Tests/js) with small in-memory stand-ins.
// Nothing is kept or used before visit-trust.js checked it against a signature.
import {
  TrustError, importPublicKey, requireFile, requireSignature, listedFiles, checkCatalog,
} from './visit-trust.js';

/** The Cache Storage names. The service worker (visit-sw.js, a classic script the server prefixes with its version)
 * cannot import this module, so it repeats them; Tests/js/visit-store.test.mjs fails when the two differ. */
export const CACHE_NAMES = Object.freeze({
  files: 'trail-files',        // verified files by SHA-256, tiles by version URL, signed manifests
  pages: 'trail-pages',        // the saved tours' player pages
  shellPrefix: 'trail-shell-', // + the player version: the player's own files and Leaflet (the worker's alone)
});

/** The localStorage keys; `tour` is followed by the package id. */
export const STORAGE_KEYS = Object.freeze({
  signingKey: 'trail.signingKey',
  catalogVersion: 'trail.catalogVersion',
  // The last fresh catalog this browser verified (its exact text, signature and when it was checked), kept for its
  // alerts: offline, the visitor sees what was known at the last check.
  lastCatalog: 'trail.lastCatalog',
  tour: 'trail.tour.',
});

export const API = '/api/v1';

/** Tiles fetched at once while saving: enough to hide each request's round trip, few enough not to crowd the files. */
export const TILE_WORKERS = 4;

/** Runs `work(item)` for every item with at most `size` running at once. The first failure rejects and stops the
 * others taking new items, so a save that already failed does not go on fetching behind its error message. */
export async function pool(items, size, work) {
  let next = 0;
  let failed = false;
  async function worker() {
    while (!failed && next < items.length) {
      const item = items[next];
      next += 1;
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}

/** An answer as Cache Storage keeps it: the exact bytes with their length, so the worker can cut Range requests. */
export function storedResponse(bytes, type, extra = {}) {
  return new Response(bytes, {
    headers: { 'Content-Type': type, 'Content-Length': String(bytes.byteLength), 'Accept-Ranges': 'bytes', ...extra },
  });
}

const defaultObjectURL = (bytes, type) => URL.createObjectURL(new Blob([bytes], { type }));

export class VisitStore {
  /**
   * @param {object} services
   * @param {string} services.packageId the tour this page plays
   * @param {CacheStorage} services.caches
   * @param {Storage} services.storage localStorage
   * @param {(url: string, init?: object) => Promise<Response>} services.fetch
   * @param {StorageManager} [services.storageManager] navigator.storage, when the browser has it
   * @param {string} [services.pagePath] the player page's path, saved with the tour so it opens offline
   * @param {(bytes: ArrayBuffer, type: string) => string} [services.objectURL] a URL for checked bytes held in memory
   * @param {(file: object, message: string) => void} [services.onFetchRefused] a file fetched for playing failed
   */
  constructor({
    packageId, caches, storage, fetch, storageManager = null, pagePath = null, objectURL = defaultObjectURL,
    onFetchRefused = () => {},
  }) {
    Object.assign(this, { packageId, caches, storage, storageManager, pagePath, objectURL, onFetchRefused });
    // Called on its own, never as a method of the store: the browser's fetch refuses any other `this`.
    this.fetch = (url, init) => fetch(url, init);
    this.key = null;              // promise of the CryptoKey of the pinned signing key
    this.held = null;             // {version, sha256}: the saved copy
    this.refused = new Set();     // paths that failed their check: never played
    this.savedChecks = new Map(); // sha256 → promise of the saved copy's problem, or null: each file is hashed once
    this.fetched = new Map();     // sha256 → checked bytes fetched for playing an unsaved tour
    this.objectURLs = new Map();  // sha256 → URL of those bytes
  }

  // MARK: Where things are

  fileURL(sha256) { return `${API}/files/${sha256}`; }

  packageURL() { return `${API}/packages/${encodeURIComponent(this.packageId)}`; }

  manifestURL(version) { return `${this.packageURL()}/versions/${version}/manifest`; }

  /** A function (z, x, y) → the URL of one tile of `version`. */
  tileURL(version) {
    const base = `${this.packageURL()}/versions/${version}/tiles`;
    return (z, x, y) => `${base}/${z}/${x}/${y}`;
  }

  // MARK: The held copy (localStorage)

  readHeld() {
    try {
      this.held = JSON.parse(this.storage.getItem(STORAGE_KEYS.tour + this.packageId));
    } catch {
      this.held = null;
    }
    return this.held;
  }

  writeHeld(held) {
    this.storage.setItem(STORAGE_KEYS.tour + this.packageId, JSON.stringify(held));
    this.held = held;
  }

  /** Whether the tour shown (`version`) is the saved copy, so its files come from Cache Storage. */
  holds(version) {
    return !!this.held && this.held.version === version;
  }

  // MARK: Signed documents

  /** The key this phone pinned the first time it saw the server, or the published one, pinned now. With a key pinned
   * nothing waits for the network, so a saved tour opens at once on a slow link or none; `checkPublishedKey`
   * compares it with what the server publishes before any new catalog is trusted. */
  signingKey() {
    // One promise for every caller: the saved copy and the kept catalog are checked side by side at start, and
    // a phone without a pinned key must fetch and pin it once. A failure is forgotten, so the next call tries again.
    this.key ??= this.pinnedKey().catch((error) => {
      this.key = null;
      throw error;
    });
    return this.key;
  }

  async pinnedKey() {
    let pinned = this.storage.getItem(STORAGE_KEYS.signingKey);
    if (!pinned) {
      pinned = await this.publishedKey();
      if (!pinned) throw new Error('the signing key could not be fetched');
      this.storage.setItem(STORAGE_KEYS.signingKey, pinned);
    }
    return importPublicKey(pinned);
  }

  /** The key the server publishes, or null offline. */
  async publishedKey() {
    try {
      const response = await this.fetch(`${API}/signing-key`, { cache: 'no-cache' });
      return response.ok ? (await response.json()).publicKey : null;
    } catch {
      return null;
    }
  }

  async checkPublishedKey() {
    const pinned = this.storage.getItem(STORAGE_KEYS.signingKey);
    const published = await this.publishedKey();
    if (pinned && published && published !== pinned) {
      throw new TrustError('The server now publishes a different signing key than the one this phone trusts; nothing was changed.');
    }
  }

  /** The catalog, signature checked, not older than the newest one this browser verified: {catalog, stale,
   * remembered}. A stale one (past its expiresAt) still raises the version kept here, since its signature holds, but
   * nothing is decided from it; a fresh one is kept for its alerts, and `remembered` is {catalog, checkedAt}. */
  async verifiedCatalog() {
    const [response] = await Promise.all([this.fetch(`${API}/catalog`, { cache: 'no-cache' }), this.checkPublishedKey()]);
    if (!response.ok) throw new Error(`the catalog answered HTTP ${response.status}`);
    const bytes = await response.arrayBuffer();
    const signature = response.headers.get('Catalog-Signature');
    const checked = await checkCatalog(await this.signingKey(), signature, bytes, this.storage.getItem(STORAGE_KEYS.catalogVersion));
    this.storage.setItem(STORAGE_KEYS.catalogVersion, String(checked.catalog.catalogVersion));
    return { ...checked, remembered: checked.stale ? null : this.rememberCatalog(bytes, signature) };
  }

  rememberCatalog(bytes, signature) {
    const checkedAt = new Date().toISOString();
    const body = new TextDecoder().decode(bytes);
    try {
      this.storage.setItem(STORAGE_KEYS.lastCatalog, JSON.stringify({ body, signature, checkedAt }));
    } catch { /* a full localStorage: the alerts of this visit are still shown */ }
    return { catalog: JSON.parse(body), checkedAt };
  }

  /** The catalog kept by `rememberCatalog`, its signature checked again (localStorage is not trusted on its own):
   * {catalog, checkedAt}, or null. */
  async rememberedCatalog() {
    try {
      const kept = JSON.parse(this.storage.getItem(STORAGE_KEYS.lastCatalog));
      if (!kept?.body) return null;
      const bytes = new TextEncoder().encode(kept.body);
      await requireSignature(await this.signingKey(), kept.signature, bytes, 'saved catalog');
      return { catalog: JSON.parse(kept.body), checkedAt: kept.checkedAt };
    } catch {
      return null;
    }
  }

  /** A version's manifest from `response`, checked: signature, package id and version. Answers {manifest, bytes, signature}. */
  async verifiedManifest(response, version) {
    const bytes = await response.arrayBuffer();
    const signature = response.headers.get('Manifest-Signature');
    await requireSignature(await this.signingKey(), signature, bytes, 'tour manifest');
    const manifest = JSON.parse(new TextDecoder().decode(bytes));
    if (manifest.packageId !== this.packageId || manifest.version !== version) {
      throw new TrustError(`The manifest is for ${manifest.packageId} version ${manifest.version}, not version ${version} of this tour.`);
    }
    return { manifest, bytes, signature };
  }

  async fetchManifest(version) {
    const response = await this.fetch(this.manifestURL(version));
    if (!response.ok) throw new Error(`the tour's manifest answered HTTP ${response.status}`);
    return this.verifiedManifest(response, version);
  }

  /** The saved copy's manifest, its signature checked again (its files are checked by `checkSaved`), or null when
   * none is saved for `held`. */
  async loadHeld(held) {
    const cache = await this.caches.open(CACHE_NAMES.files);
    const response = await cache.match(this.manifestURL(held.version));
    if (!response) return null;
    try {
      return await this.verifiedManifest(response, held.version);
    } catch (error) {
      // A saved manifest that fails its check can never be used; it goes, so the next fetch asks the server (the
      // service worker would otherwise keep answering with it).
      if (error instanceof TrustError) await cache.delete(this.manifestURL(held.version));
      throw error;
    }
  }

  // MARK: Files

  async fetchVerified(file) {
    const response = await this.fetch(this.fileURL(file.sha256));
    if (!response.ok) throw new Error(`${file.path} could not be fetched (HTTP ${response.status})`);
    const bytes = await response.arrayBuffer();
    await requireFile(bytes, file);
    return bytes;
  }

  /** The problem with the saved copy of `file` (missing, or not the size and SHA-256 the signed manifest lists), or
   * null. The stops are shown as soon as the saved manifest's signature is checked; each file is hashed once, in the
   * background or first when a stop asks for it, and nothing is played before its own check passed. */
  checkSaved(file) {
    if (!this.savedChecks.has(file.sha256)) this.savedChecks.set(file.sha256, this.hashSaved(file));
    return this.savedChecks.get(file.sha256).then((problem) => {
      if (problem) this.refused.add(file.path);
      return problem;
    });
  }

  async hashSaved(file) {
    try {
      const stored = await (await this.caches.open(CACHE_NAMES.files)).match(this.fileURL(file.sha256));
      if (!stored) throw new TrustError(`${file.path} is missing from the saved copy.`);
      await requireFile(await stored.arrayBuffer(), file);
      return null;
    } catch (error) {
      return error.message;
    }
  }

  /** Checks every file of the saved copy; answers the first problem, or null. */
  async checkAllSaved(manifest) {
    let first = null;
    for (const file of listedFiles(manifest)) {
      const problem = await this.checkSaved(file);
      first = first || problem;
    }
    return first;
  }

  /** The checked bytes of a listed file: from the saved copy (`saved`, once its check passed), else fetched and
   * checked now. Null when the file failed its check. */
  async verifiedBytes(file, saved) {
    if (saved) await this.checkSaved(file);
    if (this.refused.has(file.path)) return null;
    if (saved) {
      const stored = await (await this.caches.open(CACHE_NAMES.files)).match(this.fileURL(file.sha256));
      if (stored) return stored.arrayBuffer();
    }
    if (!this.fetched.has(file.sha256)) {
      try {
        this.fetched.set(file.sha256, await this.fetchVerified(file));
      } catch (error) {
        this.refused.add(file.path);
        this.onFetchRefused(file, error.message);
        return null;
      }
    }
    return this.fetched.get(file.sha256);
  }

  /** A URL to play a media file from: the saved copy's own URL when the service worker answers it (Range requests
   * included), else its checked bytes held in memory. Null when the file failed its check. */
  async mediaSource(file, { saved, viaWorker }) {
    if (saved) await this.checkSaved(file);
    if (this.refused.has(file.path)) return null;
    if (saved && viaWorker) return this.fileURL(file.sha256);
    if (!this.objectURLs.has(file.sha256)) {
      const bytes = await this.verifiedBytes(file, saved);
      if (!bytes) return null;
      this.objectURLs.set(file.sha256, this.objectURL(bytes, file.mimeType));
    }
    return this.objectURLs.get(file.sha256);
  }

  async text(file, saved) {
    const bytes = await this.verifiedBytes(file, saved);
    return bytes ? new TextDecoder().decode(bytes) : null;
  }

  /** The parsed, checked tiles/index.json of `manifest`, or null (none listed, or it failed its check). */
  async tileIndex(manifest, saved) {
    const index = manifest.tiles?.index;
    if (!index) return null;
    const text = await this.text({ ...index, mimeType: 'application/json' }, saved);
    return text == null ? null : JSON.parse(text);
  }

  /** After an update: the files refused in the older version are the newer one's to check again. */
  forgetRefused() {
    this.refused.clear();
  }

  // MARK: Saving

  /** Asks the browser to keep what is saved (answered by the browser; refused quietly). */
  async persist() {
    if (this.storageManager?.persist) await this.storageManager.persist().catch(() => false);
  }

  /** What saving `manifest` will fetch: {files, tileBytes, total}. Fetched is what is not held, and what is held but
   * failed its check (it is replaced), each SHA-256 once. */
  async planSave(manifest) {
    const cache = await this.caches.open(CACHE_NAMES.files);
    const missing = [];
    for (const file of listedFiles(manifest)) {
      if (this.refused.has(file.path) || !(await cache.match(this.fileURL(file.sha256)))) missing.push(file);
    }
    const seen = new Set();
    const files = missing.filter((file) => !seen.has(file.sha256) && seen.add(file.sha256));
    const tileBytes = manifest.tiles?.index ? Number(manifest.tiles.size || 0) : 0;
    const total = files.reduce((sum, file) => sum + Number(file.size), 0) + tileBytes;
    return { files, tileBytes, total };
  }

  /** Saves `target` ({manifest, bytes, signature}) by `plan` (`planSave`): every file and tile not held yet, each
   * checked before it is put, then the signed manifest and the page. `previous` ({version, tileIndex}) is the held
   * version an update replaces: its tiles that did not change are copied, not fetched. `onProgress(done, total)`
   * follows the bytes. Throws on the first failure; what was put before it stays (checked, and used by the next try). */
  async saveTour(target, previous, plan, onProgress = () => {}) {
    const { manifest } = target;
    const cache = await this.caches.open(CACHE_NAMES.files);
    let done = 0;
    const advance = (bytes) => { done += bytes; onProgress(done, plan.total); };
    onProgress(done, plan.total);
    for (const file of plan.files) {
      const bytes = await this.fetchVerified(file);
      await cache.put(this.fileURL(file.sha256), storedResponse(bytes, file.mimeType));
      advance(bytes.byteLength);
    }
    if (manifest.tiles?.index) await this.saveTiles(cache, manifest, previous, plan.tileBytes, advance);
    for (const file of plan.files) this.savedChecks.set(file.sha256, Promise.resolve(null));
    await cache.put(this.manifestURL(manifest.version),
      storedResponse(target.bytes, 'application/json', { 'Manifest-Signature': target.signature }));
    if (this.pagePath) {
      const pages = await this.caches.open(CACHE_NAMES.pages);
      await pages.put(this.pagePath, await this.fetch(this.pagePath, { cache: 'no-cache' }));
    }
  }

  /** Every tile the (already saved) tile index lists, by the version's URL: copied from `previous` when its hash is
   * unchanged, else fetched and checked against the index. */
  async saveTiles(cache, manifest, previous, tileBytes, advance) {
    const stored = await cache.match(this.fileURL(manifest.tiles.index.sha256));
    const index = JSON.parse(new TextDecoder().decode(await stored.arrayBuffer()));
    const tiles = index.tiles || {};
    const oldTiles = previous?.tileIndex?.tiles || {};
    const keys = Object.keys(tiles);
    const perTile = keys.length ? tileBytes / keys.length : 0;
    const url = this.tileURL(manifest.version);
    const oldURL = previous ? this.tileURL(previous.version) : null;
    await pool(keys, TILE_WORKERS, async (key) => {
      const [z, x, y] = key.split('/');
      const target = url(z, x, y);
      if (!(await cache.match(target))) {
        const held = oldURL && oldTiles[key] === tiles[key] ? await cache.match(oldURL(z, x, y)) : null;
        if (held) {
          await cache.put(target, held);
        } else {
          const response = await this.fetch(target);
          if (!response.ok) throw new Error(`map tile ${key} could not be fetched (HTTP ${response.status})`);
          const bytes = await response.arrayBuffer();
          await requireFile(bytes, { path: `map tile ${key}`, sha256: tiles[key] });
          await cache.put(target, storedResponse(bytes, response.headers.get('Content-Type') || 'image/png'));
        }
      }
      advance(perTile);
    });
  }

  /** Counts a completed save like an app's checked download (`entry` is the tour's entry in the verified catalog). */
  reportDownload(entry) {
    this.fetch(`${this.packageURL()}/verify`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ sha256: entry.sha256, version: entry.version }),
    }).catch(() => {});
  }

  /** {usage, quota, persisted} of this browser's storage for the site, or null when the browser does not say. */
  async usage() {
    if (!this.storageManager?.estimate) return null;
    const { usage, quota } = await this.storageManager.estimate();
    const persisted = this.storageManager.persisted ? await this.storageManager.persisted() : false;
    return { usage: usage || 0, quota: quota || 0, persisted };
  }
}
