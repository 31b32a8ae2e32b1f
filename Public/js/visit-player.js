// The visitor web player: checks the signed catalog and manifest, saves a tour for offline use (only files whose
// size and SHA-256 match the signed manifest), plays it on the trail from Cache Storage, and updates it by fetching
// only the files it does not hold. Hooks for tests and scripts: data-offline-state, data-verified, data-action,
// data-stop / data-stop-order / data-active, audio[data-stop-audio], select[name=language], #visit-map.
import {
  TrustError, ed25519Supported, importPublicKey, requireFile, requireSignature, listedFiles, companionType, checkCatalog,
  catalogExpiry,
} from './visit-trust.js';
import { TourMap, distanceMeters, DEFAULT_RADIUS } from './visit-map.js';
import { alertsFor, closureOf, severityOf } from './visit-alerts.js';

const FILES = 'trail-files';   // verified files by SHA-256, tiles by version URL, signed manifests
const PAGES = 'trail-pages';   // the saved tours' player pages
const API = '/api/v1';
const root = document.getElementById('player');
const packageId = root.dataset.packageId;
const $ = (selector) => root.querySelector(selector);
const button = (action) => root.querySelector(`[data-action="${action}"]`);
const fileURL = (sha256) => `${API}/files/${sha256}`;
const tileURL = (version) => (z, x, y) => `${API}/packages/${encodeURIComponent(packageId)}/versions/${version}/tiles/${z}/${x}/${y}`;
const manifestURL = (version) => `${API}/packages/${encodeURIComponent(packageId)}/versions/${version}/manifest`;
const storageKey = `trail.tour.${packageId}`;
// The last fresh catalog this browser verified (its exact text, signature and when it was checked), kept for its
// alerts: offline, the visitor sees what was known at the last check.
const LAST_CATALOG = 'trail.lastCatalog';

const state = {
  key: null,          // CryptoKey of the pinned signing key
  entry: null,        // this tour's entry in the verified catalog
  held: null,         // {version, sha256}: the saved copy
  manifest: null,     // the verified manifest shown now
  tileIndex: null,
  refused: new Set(), // paths that failed their check: never played
  language: null,
  played: new Set(),  // stops whose audio already played on this visit
  activeStop: null,
  tracking: false,
  alertSource: null,  // {catalog, checkedAt}: the verified catalog alerts are read from
  alerts: [],         // the alerts that apply to this tour now
};
const map = new TourMap(document.getElementById('visit-map'), {
  onStop: (order, play) => openStop(order, play), nameOf: (waypoint) => text(waypoint, 'name'),
});

// MARK: What the page says

function setState(value, message) {
  root.dataset.offlineState = value;
  if (message) $('#offline-status').textContent = message;
  button('save-offline').hidden = ['ready', 'update-available', 'saving', 'checking'].includes(value);
  button('save-offline').disabled = !state.manifest || value === 'saving';
  button('update').hidden = value !== 'update-available';
  $('#save-progress').hidden = value !== 'saving';
}

function showError(message, retry) {
  const box = $('#offline-error');
  box.textContent = message;
  box.hidden = !message;
  button('retry').hidden = !retry;
  button('retry').onclick = retry || null;
}

function setVerified(verified, text) {
  root.dataset.verified = verified ? 'true' : 'false';
  $('#trust-status').textContent = text || '';
}

function progress(done, total) {
  const bar = $('#save-progress-bar');
  bar.max = Math.max(total, 1);
  bar.value = Math.min(done, bar.max);
  $('#save-progress-text').textContent = `${megabytes(done)} of ${megabytes(total)}`;
}

function megabytes(bytes) {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

async function showStorage() {
  if (!navigator.storage?.estimate) return;
  const { usage, quota } = await navigator.storage.estimate();
  const persisted = navigator.storage.persisted ? await navigator.storage.persisted() : false;
  $('#storage-usage').textContent = `This browser holds ${megabytes(usage || 0)} for saved tours (room for about ${megabytes(quota || 0)}).`
    + (persisted ? ' The browser keeps it until you remove it.' : '');
}

// MARK: Held copy (localStorage) and the highest verified catalog

function readHeld() {
  try { return JSON.parse(localStorage.getItem(storageKey)); } catch { return null; }
}
function writeHeld(held) { localStorage.setItem(storageKey, JSON.stringify(held)); state.held = held; }

// MARK: Signed documents

/** The key this phone pinned the first time it saw the server, or the published one, pinned now. With a key pinned
 * nothing waits for the network, so a saved tour opens at once on a slow link or none; `checkPublishedKey` compares
 * it with what the server publishes before any new catalog is trusted. */
async function signingKey() {
  if (state.key) return state.key;
  let pinned = localStorage.getItem('trail.signingKey');
  if (!pinned) {
    pinned = await publishedKey();
    if (!pinned) throw new Error('the signing key could not be fetched');
    localStorage.setItem('trail.signingKey', pinned);
  }
  state.key = await importPublicKey(pinned);
  return state.key;
}

/** The key the server publishes, or null offline. */
async function publishedKey() {
  try {
    const response = await fetch(`${API}/signing-key`, { cache: 'no-cache' });
    return response.ok ? (await response.json()).publicKey : null;
  } catch {
    return null;
  }
}

async function checkPublishedKey() {
  const pinned = localStorage.getItem('trail.signingKey');
  const published = await publishedKey();
  if (pinned && published && published !== pinned) {
    throw new TrustError('The server now publishes a different signing key than the one this phone trusts; nothing was changed.');
  }
}

/** The catalog, signature checked, not older than the newest one this browser verified: {catalog, stale}. A stale
 * one (past its expiresAt) still raises the version kept here, since its signature holds, but nothing is decided from it. */
async function verifiedCatalog() {
  const [response] = await Promise.all([fetch(`${API}/catalog`, { cache: 'no-cache' }), checkPublishedKey()]);
  if (!response.ok) throw new Error(`the catalog answered HTTP ${response.status}`);
  const bytes = await response.arrayBuffer();
  const signature = response.headers.get('Catalog-Signature');
  const checked = await checkCatalog(await signingKey(), signature, bytes, localStorage.getItem('trail.catalogVersion'));
  localStorage.setItem('trail.catalogVersion', String(checked.catalog.catalogVersion));
  if (!checked.stale) rememberCatalog(bytes, signature);
  return checked;
}

function rememberCatalog(bytes, signature) {
  const checkedAt = new Date().toISOString();
  try {
    localStorage.setItem(LAST_CATALOG, JSON.stringify({ body: new TextDecoder().decode(bytes), signature, checkedAt }));
  } catch { /* a full localStorage: the alerts of this visit are still shown */ }
  state.alertSource = { catalog: JSON.parse(new TextDecoder().decode(bytes)), checkedAt };
}

/** The catalog kept by `rememberCatalog`, its signature checked again (localStorage is not trusted on its own), or null. */
async function rememberedCatalog() {
  try {
    const kept = JSON.parse(localStorage.getItem(LAST_CATALOG));
    if (!kept?.body) return null;
    const bytes = new TextEncoder().encode(kept.body);
    await requireSignature(await signingKey(), kept.signature, bytes, 'saved catalog');
    return { catalog: JSON.parse(kept.body), checkedAt: kept.checkedAt };
  } catch {
    return null;
  }
}

// MARK: Alerts and closures

const formatTime = (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const SEVERITY_LABEL = { closure: 'Closure', warning: 'Warning', info: 'Information' };

/** One alert as the visitor sees it: every text set as text. */
function alertItem(alert, checkedAt) {
  const item = document.createElement('div');
  item.className = 'visit-alert';
  item.dataset.alert = String(alert.id);
  item.dataset.severity = severityOf(alert);
  const title = document.createElement('h2');
  title.className = 'visit-alert-title';
  // Text only, always: the message is the ranger's plain text, never markup.
  title.textContent = `${SEVERITY_LABEL[severityOf(alert)]}: ${alert.title}`;
  const message = document.createElement('p');
  message.className = 'visit-alert-message';
  message.textContent = alert.message;
  const when = document.createElement('p');
  when.className = 'visit-alert-when';
  when.dataset.asOf = checkedAt;
  when.textContent = `Until ${formatTime(Date.parse(alert.endsAt))}. As of ${formatTime(Date.parse(checkedAt))}, when this phone last checked with the park.`;
  item.append(title, message, when);
  return item;
}

/** Shows the alerts that apply now (from the last verified catalog) and closes their stops. Called at every check,
 * after every render, and every half minute, so an alert that ends while the page is open goes at once. */
function applyAlerts() {
  const source = state.alertSource;
  state.alerts = source ? alertsFor(source.catalog, packageId, Date.now()) : [];
  let box = document.getElementById('visit-alerts');
  if (!box) {
    box = document.createElement('section');
    box.id = 'visit-alerts';
    box.className = 'visit-alerts';
    box.setAttribute('aria-label', 'Alerts for this tour');
    box.setAttribute('aria-live', 'polite');
    document.getElementById('tour-description').after(box);
  }
  box.hidden = state.alerts.length === 0;
  // Only a change is written: the box is a live region, and the half-minute check must not read it out again.
  const shown = JSON.stringify([source?.checkedAt, state.alerts.map((alert) => alert.id)]);
  if (box.dataset.shown !== shown) {
    box.dataset.shown = shown;
    box.replaceChildren(...state.alerts.map((alert) => alertItem(alert, source.checkedAt)));
  }
  for (const item of document.querySelectorAll('[data-stop]')) {
    const waypoint = state.manifest?.waypoints.find((w) => String(w.order) === item.dataset.stopOrder);
    const closure = closureOf(state.alerts, waypoint?.id);
    item.querySelector('.visit-stop-closed')?.remove();
    if (closure) {
      item.dataset.closed = 'true';
      delete item.dataset.active;
      const note = document.createElement('p');
      note.className = 'visit-stop-closed';
      note.textContent = `Closed: ${closure.title}`;
      item.querySelector('h3').after(note);
      const body = item.querySelector('.visit-stop-body');
      if (!body.hidden && body.dataset.filledFor !== 'closed') body.hidden = true;
      body.querySelectorAll('audio, video').forEach((media) => media.pause());
    } else {
      delete item.dataset.closed;
    }
  }
}

/** The closure that closes `waypoint` now, or null. */
const closureOfStop = (waypoint) => closureOf(state.alerts, waypoint?.id);

/** Says, in a visitor's words, that the catalog is past its expiry date and was not used. The notice is made only
 * then, so `[data-notice="stale-catalog"]` exists exactly when the player met a stale catalog. */
function showStaleCatalog(catalog, saved) {
  const expiry = catalogExpiry(catalog);
  const when = Number.isNaN(expiry) ? 'has no expiry date' : `ran out on ${new Date(expiry).toLocaleString(undefined, { dateStyle: 'long', timeStyle: 'short' })}`;
  const notice = document.createElement('p');
  notice.className = 'visit-note';
  notice.dataset.notice = 'stale-catalog';
  notice.setAttribute('role', 'status');
  notice.textContent = `The list of tours this phone received from the park's server is out of date (it ${when}), so it may be an old copy. `
    + (saved
      ? 'It was not used to look for updates. Your saved tour still works.'
      : 'The tour was not saved from it.')
    + ' If this keeps happening, check that the phone\'s date and time are right, then reload the page where there is signal.';
  root.querySelector('[data-notice="stale-catalog"]')?.remove();
  $('#offline-status').after(notice);
}

/** A version's manifest from `response`, checked: signature, package id and version. Answers {manifest, bytes, signature}. */
async function verifiedManifest(response, version) {
  const bytes = await response.arrayBuffer();
  const signature = response.headers.get('Manifest-Signature');
  await requireSignature(await signingKey(), signature, bytes, 'tour manifest');
  const manifest = JSON.parse(new TextDecoder().decode(bytes));
  if (manifest.packageId !== packageId || manifest.version !== version) {
    throw new TrustError(`The manifest is for ${manifest.packageId} version ${manifest.version}, not version ${version} of this tour.`);
  }
  return { manifest, bytes, signature };
}

async function fetchManifest(version) {
  const response = await fetch(manifestURL(version));
  if (!response.ok) throw new Error(`the tour's manifest answered HTTP ${response.status}`);
  return verifiedManifest(response, version);
}

// MARK: Files

async function fetchVerified(file) {
  const response = await fetch(fileURL(file.sha256));
  if (!response.ok) throw new Error(`${file.path} could not be fetched (HTTP ${response.status})`);
  const bytes = await response.arrayBuffer();
  await requireFile(bytes, file);
  return bytes;
}

function storedResponse(bytes, type, extra = {}) {
  return new Response(bytes, { headers: { 'Content-Type': type, 'Content-Length': String(bytes.byteLength), 'Accept-Ranges': 'bytes', ...extra } });
}

/** Whether the saved copy of `file` has the size and SHA-256 the signed manifest lists. The stops are shown as soon
 * as the saved manifest's signature is checked; each file is hashed once, in the background or first when a stop
 * asks for it, and nothing is played before its own check passed. */
const savedChecks = new Map();
function checkSaved(file) {
  if (!savedChecks.has(file.sha256)) {
    savedChecks.set(file.sha256, (async () => {
      try {
        const stored = await (await caches.open(FILES)).match(fileURL(file.sha256));
        if (!stored) throw new TrustError(`${file.path} is missing from the saved copy.`);
        await requireFile(await stored.arrayBuffer(), file);
        return null;
      } catch (error) {
        return error.message;
      }
    })());
  }
  return savedChecks.get(file.sha256).then((problem) => {
    if (problem) state.refused.add(file.path);
    return problem;
  });
}

/** Checks every file of the saved copy; answers the first problem, or null. */
async function checkAllSaved(manifest) {
  let first = null;
  for (const file of listedFiles(manifest)) {
    const problem = await checkSaved(file);
    first = first || problem;
  }
  return first;
}

const playsSaved = () => state.held && state.held.version === state.manifest.version;

/** The checked bytes of a listed file: from the saved copy (once its check passed), else fetched and checked now.
 * Null when the file failed its check. */
const verifiedData = new Map();
async function verifiedBytes(file) {
  if (playsSaved()) await checkSaved(file);
  if (state.refused.has(file.path)) return null;
  if (playsSaved()) {
    const stored = await (await caches.open(FILES)).match(fileURL(file.sha256));
    if (stored) return stored.arrayBuffer();
  }
  if (!verifiedData.has(file.sha256)) {
    try {
      verifiedData.set(file.sha256, await fetchVerified(file));
    } catch (error) {
      state.refused.add(file.path);
      showError(error.message);
      return null;
    }
  }
  return verifiedData.get(file.sha256);
}

/** A media file for playing: from the saved copy (the service worker answers, Range requests included), else its
 * checked bytes from memory. Null when the file failed its check. */
const blobURLs = new Map();
async function mediaSource(file) {
  if (playsSaved()) await checkSaved(file);
  if (state.refused.has(file.path)) return null;
  if (playsSaved() && navigator.serviceWorker?.controller) return fileURL(file.sha256);
  if (!blobURLs.has(file.sha256)) {
    const bytes = await verifiedBytes(file);
    if (!bytes) return null;
    blobURLs.set(file.sha256, URL.createObjectURL(new Blob([bytes], { type: file.mimeType })));
  }
  return blobURLs.get(file.sha256);
}

async function textOf(file) {
  const bytes = await verifiedBytes(file);
  return bytes ? new TextDecoder().decode(bytes) : null;
}

async function loadTileIndex(manifest) {
  const index = manifest.tiles?.index;
  if (!index) return null;
  const text = await textOf({ ...index, mimeType: 'application/json' });
  return text == null ? null : JSON.parse(text);
}

// MARK: Saving and updating

/** Saves `target` ({manifest, bytes, signature}) into Cache Storage: every listed file and tile not held yet,
 * each checked before it is put; the held copy switches to it only when all of it is in. */
async function save(target, previous) {
  const { manifest } = target;
  setState('saving', previous ? `Updating to version ${manifest.version}…` : 'Saving the tour on this phone…');
  showError('');
  if (navigator.storage?.persist) await navigator.storage.persist().catch(() => false);
  const cache = await caches.open(FILES);
  const files = listedFiles(manifest);
  const missing = [];
  // Fetched: what is not held, and what is held but failed its check (it is replaced).
  for (const file of files) {
    if (state.refused.has(file.path) || !(await cache.match(fileURL(file.sha256)))) missing.push(file);
  }
  const seen = new Set();
  const fetchList = missing.filter((f) => !seen.has(f.sha256) && seen.add(f.sha256));
  const tileBytes = manifest.tiles && manifest.tiles.index ? Number(manifest.tiles.size || 0) : 0;
  const total = fetchList.reduce((sum, f) => sum + Number(f.size), 0) + tileBytes;
  let done = 0;
  progress(done, total);
  try {
    for (const file of fetchList) {
      const bytes = await fetchVerified(file);
      await cache.put(fileURL(file.sha256), storedResponse(bytes, file.mimeType));
      done += bytes.byteLength;
      progress(done, total);
    }
    if (manifest.tiles?.index) {
      const index = JSON.parse(new TextDecoder().decode(await (await cache.match(fileURL(manifest.tiles.index.sha256))).arrayBuffer()));
      const oldIndex = previous?.tileIndex?.tiles || {};
      const keys = Object.keys(index.tiles || {});
      const perTile = keys.length ? tileBytes / keys.length : 0;
      const url = tileURL(manifest.version);
      let next = 0;
      const worker = async () => {
        while (next < keys.length) {
          const key = keys[next++];
          const [z, x, y] = key.split('/');
          const target = url(z, x, y);
          if (!(await cache.match(target))) {
            const held = oldIndex[key] === index.tiles[key] ? await cache.match(tileURL(previous.version)(z, x, y)) : null;
            if (held) {
              await cache.put(target, held);
            } else {
              const response = await fetch(target);
              if (!response.ok) throw new Error(`map tile ${key} could not be fetched (HTTP ${response.status})`);
              const bytes = await response.arrayBuffer();
              await requireFile(bytes, { path: `map tile ${key}`, sha256: index.tiles[key] });
              await cache.put(target, storedResponse(bytes, response.headers.get('Content-Type') || 'image/png'));
            }
          }
          done += perTile;
          progress(done, total);
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
    }
    for (const file of fetchList) savedChecks.set(file.sha256, Promise.resolve(null));
    await cache.put(manifestURL(manifest.version), storedResponse(target.bytes, 'application/json', { 'Manifest-Signature': target.signature }));
    const pages = await caches.open(PAGES);
    await pages.put(location.pathname, await fetch(location.pathname, { cache: 'no-cache' }));
  } catch (error) {
    const quota = error?.name === 'QuotaExceededError';
    const message = quota
      ? `This browser has no room left for the tour (${megabytes(total)} needed). What was saved before is kept; free some space on the phone and try again.`
      : `${previous ? 'The update' : 'Saving'} stopped: ${reason(error)}. ${previous ? `Version ${previous.version} is kept as it was.` : ''}`;
    setState('failed', previous ? `Version ${previous.version} is saved on this phone.` : 'The tour is not saved yet.');
    showError(message, () => save(target, previous));
    await showStorage();
    return false;
  }
  writeHeld({ version: manifest.version, sha256: state.entry?.sha256 || state.held?.sha256 || null });
  setState('ready', `Saved on this phone: version ${manifest.version}. It works without a connection.`);
  await showStorage();
  // Counted like an app's checked download.
  if (state.entry) {
    fetch(`${API}/packages/${encodeURIComponent(packageId)}/verify`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ sha256: state.entry.sha256, version: state.entry.version }),
    }).catch(() => {});
  }
  return true;
}

/** The saved copy's manifest, its signature checked again (its files are checked by `checkSaved`). */
async function loadHeld(held) {
  const cache = await caches.open(FILES);
  const response = await cache.match(manifestURL(held.version));
  if (!response) return null;
  let target;
  try {
    target = await verifiedManifest(response, held.version);
  } catch (error) {
    // A saved manifest that fails its check can never be used; it goes, so the next fetch asks the server (the
    // service worker would otherwise keep answering with it).
    if (error instanceof TrustError) await cache.delete(manifestURL(held.version));
    throw error;
  }
  return target;
}

// MARK: The tour on screen

function text(waypointOrTour, key) {
  const localized = state.language && waypointOrTour.localized?.[state.language];
  return (localized && localized[key]) || waypointOrTour[key];
}

function render(manifest) {
  state.manifest = manifest;
  document.getElementById('tour-name').textContent = text(manifest, 'packageName');
  document.getElementById('tour-description').textContent = text(manifest, 'description');
  renderLanguages(manifest);
  const list = document.getElementById('stops');
  list.replaceChildren();
  for (const waypoint of [...manifest.waypoints].sort((a, b) => a.order - b.order)) {
    const item = document.createElement('li');
    item.dataset.stop = '';
    item.dataset.stopOrder = String(waypoint.order);
    const heading = document.createElement('h3');
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'visit-stop-open';
    open.textContent = `${waypoint.order}. ${text(waypoint, 'name')}`;
    open.setAttribute('aria-expanded', 'false');
    open.addEventListener('click', () => openStop(waypoint.order, true));
    heading.append(open);
    const body = document.createElement('div');
    body.className = 'visit-stop-body';
    body.hidden = true;
    item.append(heading, body);
    list.append(item);
  }
  button('start').disabled = false;
  applyAlerts();
}

function renderLanguages(manifest) {
  const holder = document.getElementById('language-choice');
  const languages = manifest.languages || [];
  if (languages.length < 2) { holder.replaceChildren(); return; }
  if (holder.querySelector('select')) return;
  const label = document.createElement('label');
  label.htmlFor = 'language';
  label.textContent = 'Language';
  const select = document.createElement('select');
  select.name = 'language';
  select.id = 'language';
  const names = new Intl.DisplayNames([navigator.language || 'en'], { type: 'language' });
  for (const tag of languages) {
    const option = document.createElement('option');
    option.value = tag;
    option.lang = tag;
    option.textContent = new Intl.DisplayNames([tag], { type: 'language' }).of(tag) || names.of(tag) || tag;
    select.append(option);
  }
  select.value = state.language || languages[0];
  select.addEventListener('change', () => {
    state.language = select.value === languages[0] ? null : select.value;
    document.documentElement.lang = select.value;
    const open = state.activeStop;
    render(state.manifest);
    map.relabel();
    if (open != null) openStop(open, false);
  });
  holder.replaceChildren(label, select);
}

function assetsFor(waypoint) {
  const languages = state.manifest.languages || [];
  const chosen = state.language || languages[0];
  return waypoint.assets.filter((asset) => !asset.language || !chosen || asset.language === chosen);
}

async function openStop(order, play) {
  const waypoint = state.manifest?.waypoints.find((w) => w.order === order);
  const item = document.querySelector(`[data-stop-order="${order}"]`);
  if (!waypoint || !item) return;
  for (const other of document.querySelectorAll('[data-stop]')) {
    if (other !== item) {
      other.querySelector('.visit-stop-body').hidden = true;
      other.querySelector('.visit-stop-open').setAttribute('aria-expanded', 'false');
      other.querySelectorAll('audio, video').forEach((media) => media.pause());
    }
  }
  state.activeStop = order;
  const body = item.querySelector('.visit-stop-body');
  item.querySelector('.visit-stop-open').setAttribute('aria-expanded', 'true');
  body.hidden = false;
  const closure = closureOfStop(waypoint);
  if (closure) {
    // A closed stop opens only to say why: nothing of it is shown or played.
    body.dataset.filledFor = 'closed';
    const why = document.createElement('p');
    why.className = 'visit-stop-closed-why';
    why.textContent = `This stop is closed: ${closure.title}. ${closure.message}`;
    body.replaceChildren(why);
    return;
  }
  if (body.dataset.filledFor !== (state.language || 'default')) await fillStop(waypoint, body);
  if (play) {
    const audio = body.querySelector('audio[data-stop-audio]');
    if (audio && audio.src) audio.play().catch(() => {});
  }
}

async function fillStop(waypoint, body) {
  body.dataset.filledFor = state.language || 'default';
  body.replaceChildren();
  const description = document.createElement('p');
  description.textContent = text(waypoint, 'description');
  body.append(description);
  for (const asset of assetsFor(waypoint)) {
    const file = { path: asset.path, size: asset.size, sha256: asset.sha256, mimeType: asset.mimeType };
    const figure = document.createElement('figure');
    if (asset.title) {
      const caption = document.createElement('figcaption');
      caption.textContent = asset.title;
      figure.append(caption);
    }
    const source = await mediaSource(file);
    if (!source) {
      const refused = document.createElement('p');
      refused.className = 'visit-error';
      refused.textContent = `${asset.title || asset.path} failed its check against the signed manifest and is not played.`;
      figure.append(refused);
      body.append(figure);
      continue;
    }
    if (asset.type === 'audio') {
      const audio = document.createElement('audio');
      audio.controls = true;
      audio.preload = 'metadata';
      audio.dataset.stopAudio = '';
      audio.src = source;
      audio.setAttribute('aria-label', asset.title || `Audio for ${text(waypoint, 'name')}`);
      figure.append(audio, speedControl(audio, waypoint.order));
      if (asset.transcript) await appendTranscript(figure, asset.transcript);
    } else if (asset.type === 'video') {
      const video = document.createElement('video');
      video.controls = true;
      video.preload = 'metadata';
      video.playsInline = true;
      video.src = source;
      video.setAttribute('aria-label', asset.title || `Video for ${text(waypoint, 'name')}`);
      if (asset.captions) {
        const captions = await mediaSource({ ...asset.captions, mimeType: 'text/vtt' });
        if (captions) {
          const track = document.createElement('track');
          track.kind = 'captions';
          track.src = captions;
          track.srclang = asset.captions.language || asset.language || (state.manifest.languages || ['en'])[0];
          track.label = 'Captions';
          track.default = true;
          video.append(track);
        }
      }
      figure.append(video, speedControl(video, waypoint.order));
      if (asset.transcript) await appendTranscript(figure, asset.transcript);
    } else if (asset.type === 'image') {
      const image = document.createElement('img');
      image.src = source;
      image.alt = asset.altText || '';
      image.loading = 'lazy';
      figure.append(image);
    } else if (asset.type === 'text') {
      const words = document.createElement('div');
      words.className = 'visit-text';
      words.textContent = await textOf(file) ?? '';
      figure.append(words);
    }
    body.append(figure);
  }
}

function speedControl(media, order) {
  const label = document.createElement('label');
  label.className = 'visit-speed';
  label.textContent = 'Speed ';
  const select = document.createElement('select');
  select.setAttribute('aria-label', `Playback speed, stop ${order}`);
  for (const speed of [0.75, 1, 1.25, 1.5, 2]) {
    const option = document.createElement('option');
    option.value = String(speed);
    option.textContent = `${speed}×`;
    option.selected = speed === 1;
    select.append(option);
  }
  select.addEventListener('change', () => { media.playbackRate = Number(select.value); });
  label.append(select);
  return label;
}

async function appendTranscript(figure, transcript) {
  const words = await textOf({ ...transcript, mimeType: companionType(transcript.path) });
  if (words == null) return;
  const details = document.createElement('details');
  const summary = document.createElement('summary');
  summary.textContent = 'Transcript';
  const content = document.createElement('div');
  content.className = 'visit-transcript';
  content.textContent = transcript.path.endsWith('.vtt') ? plainCues(words) : words;
  details.append(summary, content);
  figure.append(details);
}

/** The text of a WebVTT file without its header, cue ids and timings. */
function plainCues(vtt) {
  return vtt.split(/\r?\n/).filter((line, i, lines) => line && !line.startsWith('WEBVTT') && !line.includes('-->')
    && !(/^\S+$/.test(line) && (lines[i + 1] || '').includes('-->')) && !/^(NOTE|STYLE|REGION)\b/.test(line)).join('\n');
}

// MARK: On the trail

let wakeLock = null;
async function start() {
  if ('wakeLock' in navigator) {
    try { wakeLock = await navigator.wakeLock.request('screen'); } catch { wakeLock = null; }
  }
  const status = document.getElementById('location-status');
  if (!navigator.geolocation) {
    status.textContent = 'This browser cannot tell where you are. Tap a stop to hear it.';
    return;
  }
  status.textContent = 'Finding where you are…';
  state.tracking = true;
  navigator.geolocation.watchPosition(onPosition, (error) => {
    status.textContent = error.code === error.PERMISSION_DENIED
      ? 'Location is turned off for this page, so stops do not open by themselves. Tap a stop to hear it.'
      : 'Your position is not known right now. Tap a stop to hear it.';
  }, { enableHighAccuracy: true, maximumAge: 5000 });
}

function onPosition(position) {
  const here = { latitude: position.coords.latitude, longitude: position.coords.longitude };
  map.showPosition(here.latitude, here.longitude, position.coords.accuracy);
  let inside = null;
  let closedHere = null;
  for (const waypoint of state.manifest?.waypoints || []) {
    const distance = distanceMeters(here, waypoint.coordinates);
    if (distance > (waypoint.triggerRadiusMeters || DEFAULT_RADIUS)) continue;
    // A closed stop does not open or play when the visitor walks into its zone.
    if (closureOfStop(waypoint)) {
      if (!closedHere || distance < closedHere.distance) closedHere = { waypoint, distance };
    } else if (!inside || distance < inside.distance) {
      inside = { waypoint, distance };
    }
  }
  document.getElementById('location-status').textContent = inside
    ? `You are at stop ${inside.waypoint.order}, ${text(inside.waypoint, 'name')}.`
    : closedHere
      ? `Stop ${closedHere.waypoint.order}, ${text(closedHere.waypoint, 'name')}, is closed: ${closureOfStop(closedHere.waypoint).title}.`
      : 'Location is on: stops open as you reach them.';
  for (const item of document.querySelectorAll('[data-stop]')) {
    if (inside && item.dataset.stopOrder === String(inside.waypoint.order)) item.dataset.active = ''; else delete item.dataset.active;
  }
  if (inside && !state.played.has(inside.waypoint.order)) {
    state.played.add(inside.waypoint.order);
    openStop(inside.waypoint.order, true);
  }
}

document.addEventListener('visibilitychange', async () => {
  if (wakeLock && document.visibilityState === 'visible' && 'wakeLock' in navigator) {
    try { wakeLock = await navigator.wakeLock.request('screen'); } catch { /* not granted again */ }
  }
});

// MARK: Start-up

async function show(target) {
  render(target.manifest);  // applies the alerts known so far
  state.tileIndex = await loadTileIndex(target.manifest);
  map.show(target.manifest, state.tileIndex, tileURL(target.manifest.version), (key) => {
    setVerified(true, `A map tile (${key}) did not match the signed tile index and is not shown.`);
  });
}

async function main() {
  if (/iPhone|iPad|iPod/.test(navigator.userAgent) || (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1)) {
    document.getElementById('ios-note').hidden = false;
  }
  button('start').addEventListener('click', start);
  if (!(await ed25519Supported())) {
    setState('failed', 'This browser cannot check the tour\'s signature (it lacks Ed25519 in Web Crypto), so the tour is not shown or saved. Please use a current Chrome, Edge, Firefox or Safari.');
    setVerified(false);
    return;
  }
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('/visit/sw.js', { scope: '/visit/', type: 'classic' }).catch(() => {});
  }
  state.alertSource = await rememberedCatalog();
  setInterval(applyAlerts, 30_000);
  state.held = readHeld();
  let heldTarget = null;
  if (state.held) {
    try {
      heldTarget = await loadHeld(state.held);
    } catch (error) {
      setState('failed', 'The saved copy could not be checked.');
      showError(error.message, () => location.reload());
    }
    if (heldTarget) {
      setVerified(true, `Signature checked: version ${heldTarget.manifest.version}, signed by this server.`);
      setState('checking', `Checking the saved copy of version ${heldTarget.manifest.version}…`);
      await show(heldTarget);
      heldTarget.problem = await checkAllSaved(heldTarget.manifest);
      if (heldTarget.problem) {
        setState('failed', `Version ${heldTarget.manifest.version} is saved, but part of it failed its check.`);
        showError(`${heldTarget.problem} Save the tour again to replace it.`, () => save(heldTarget, null).then(() => location.reload()));
      } else {
        setState('ready', `Saved on this phone: version ${heldTarget.manifest.version}. It works without a connection.`);
      }
    }
  }
  let catalog = null;
  try {
    const checked = await verifiedCatalog();
    if (checked.stale) {
      // Past its expiresAt the catalog cannot say which version is current or whether the tour was withdrawn (a
      // replayed copy still carries a good signature): it is shown as stale and not acted on; a saved copy plays on.
      showStaleCatalog(checked.catalog, !!heldTarget);
      if (!heldTarget) { setState('failed', 'The tour could not be checked against a current list of tours.'); setVerified(false); }
    } else {
      catalog = checked.catalog;
    }
  } catch (error) {
    if (error instanceof TrustError) {
      showError(heldTarget?.problem ? `${error.message} ${heldTarget.problem}` : error.message);
      if (!heldTarget) { setState('failed', 'The tour could not be checked.'); setVerified(false); }
    } else if (!heldTarget) {
      setState('failed', 'You are offline and this tour is not saved on this phone yet.');
      showError('Connect to the internet and reload to save the tour.', () => location.reload());
    }
  }
  // The alerts of the catalog just verified, or (offline, refused or stale) of the last one kept.
  applyAlerts();
  if (catalog) {
    state.entry = catalog.packages.find((p) => p.id === packageId) || null;
    if (!state.entry) {
      document.getElementById('offline-status').textContent = 'The park has withdrawn this tour: it can no longer be saved or updated.'
        + (heldTarget ? ' Your saved copy still works.' : '');
      root.dataset.withdrawn = 'true';
      if (!heldTarget) { setState('failed'); }
    } else if (heldTarget && state.entry.version > heldTarget.manifest.version) {
      if (!heldTarget.problem) setState('update-available', `Version ${state.entry.version} is available; you have version ${heldTarget.manifest.version}.`);
      button('update').onclick = () => update(heldTarget);
    } else if (!heldTarget) {
      try {
        const target = await fetchManifest(state.entry.version);
        setVerified(true, `Signature checked: version ${target.manifest.version}, signed by this server.`);
        await show(target);
        setState('online-only', 'Not saved yet: save the tour while you have signal to use it offline.');
        button('save-offline').onclick = () => save(target, null);
      } catch (error) {
        setState('failed', 'The tour could not be checked.');
        setVerified(false);
        showError(error.message, () => location.reload());
      }
    }
  }
  await showStorage();
}

async function update(heldTarget) {
  try {
    const target = await fetchManifest(state.entry.version);
    const saved = await save(target, { version: heldTarget.manifest.version, tileIndex: state.tileIndex });
    if (saved) {
      state.refused.clear();
      setVerified(true, `Signature checked: version ${target.manifest.version}, signed by this server.`);
      await show(target);
    }
  } catch (error) {
    const kept = heldTarget.manifest.version;
    setState('failed', `Version ${kept} is saved on this phone.`);
    showError(error instanceof TrustError
      ? `The update was refused: ${error.message} Version ${kept} is kept as it was.`
      : `The update stopped: ${reason(error)}. Version ${kept} is kept as it was.`, () => update(heldTarget));
  }
}

/** What went wrong, in a visitor's words: fetch rejects with a bare TypeError when the connection is gone. */
function reason(error) {
  return error instanceof TypeError ? 'the connection was lost' : String(error?.message || error).replace(/\.$/, '');
}

main();
