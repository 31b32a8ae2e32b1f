// The visitor web player's page: what the visitor sees and taps. It checks the signed catalog and manifest, saves a
// tour for offline use (only files whose size and SHA-256 match the signed manifest), plays it on the trail from Cache
// Storage, and updates it by fetching only the files it does not hold. What is kept and fetched is visit-store.js's;
// the offline states and their moves are visit-state.js's; the stops are drawn by visit-stops.js, the alerts by
// visit-alerts-view.js, and the visitor's position followed by visit-tracking.js. This module holds the page's state,
// starts the player, and draws the offline copy's state and its controls.
// Hooks for tests and scripts: data-offline-state, data-verified, data-action, data-stop / data-stop-order /
// data-active / data-linked (the stop a `?stop=N` link opened), audio[data-stop-audio], select[name=language], #visit-map.
import { TrustError, ed25519Supported } from './visit-trust.js';
import { TourMap } from './visit-map.js';
import { alertsFor, closureOf } from './visit-alerts.js';
import { markClosedStops, showAlerts, showStaleCatalog } from './visit-alerts-view.js';
import { START, transition } from './visit-state.js';
import { VisitStore } from './visit-store.js';
import { TrailProfile } from './visit-profile.js';
import { VisitEvents, indexedDBQueue, privacyRefused, sourceOf } from './visit-events.js';
import { TourStops, localizedText } from './visit-stops.js';
import { Tracking } from './visit-tracking.js';

const root = document.getElementById('player');
const packageId = root.dataset.packageId;
const $ = (selector) => root.querySelector(selector);
const button = (action) => root.querySelector(`[data-action="${action}"]`);

const store = new VisitStore({
  packageId,
  caches: globalThis.caches,
  storage: localStorage,
  fetch: (url, init) => fetch(url, init),
  storageManager: navigator.storage || null,
  pagePath: location.pathname,
  // A file fetched for playing that fails is named at once; saved files that fail are named by the start-up check.
  onFetchRefused: (file, message) => showError(message),
});

// Visitor statistics: counts per day, no identifier; nothing at all with Global Privacy Control (visit-events.js).
const events = new VisitEvents({
  queue: globalThis.indexedDB ? indexedDBQueue(globalThis.indexedDB) : null,
  fetch: (url, init) => fetch(url, init),
  refused: privacyRefused(navigator),
  isOnline: () => navigator.onLine !== false,
});
const signSource = sourceOf(location.search);

const state = {
  offline: START,     // the offline state (visit-state.js), shown in #player[data-offline-state]
  entry: null,        // this tour's entry in the verified catalog
  manifest: null,     // the verified manifest shown now
  tileIndex: Promise.resolve(null), // its checked tile index, once read (the map shows its tiles then)
  language: null,
  played: new Set(),  // stops whose audio already played on this visit
  activeStop: null,
  alertSource: null,  // {catalog, checkedAt}: the verified catalog alerts are read from
  alerts: [],         // the alerts that apply to this tour now
};

/** The closure that closes `waypoint` now, or null. */
const closureOfStop = (waypoint) => closureOf(state.alerts, waypoint?.id);
const text = (waypointOrTour, key) => localizedText(waypointOrTour, key, state.language);

const profile = new TrailProfile(document.getElementById('trail-facts'));
const map = new TourMap(document.getElementById('visit-map'), {
  onStop: (order, play) => stops.open(order, play), nameOf: (waypoint) => text(waypoint, 'name'),
});
const stops = new TourStops(document.getElementById('stops'), {
  state,
  media: { source: (file) => mediaSource(file), text: (file) => textOf(file) },
  count: (type, options) => countEvent(type, options),
  closureOf: closureOfStop,
});
const tracking = new Tracking(button('start'), document.getElementById('location-status'), {
  waypoints: () => state.manifest?.waypoints,
  closureOf: closureOfStop,
  nameOf: (waypoint) => text(waypoint, 'name'),
  played: state.played,
  openStop: (order, play) => stops.open(order, play),
  onPosition: (here, accuracy) => {
    map.showPosition(here.latitude, here.longitude, accuracy);
    profile.markPosition(here);
  },
});

// MARK: Visitor statistics

/** Counts `type` for the tour on screen (once per visit for `onceKey`), in the language shown, from the sign. */
function countEvent(type, { onceKey = null, waypointId = null } = {}) {
  const manifest = state.manifest;
  if (!manifest) return;
  const languages = manifest.languages || [];
  const event = {
    type, packageId, version: manifest.version, waypointId,
    language: languages.length ? (state.language || languages[0]) : null, source: signSource,
  };
  (onceKey ? events.recordOnce(`${onceKey}:${manifest.version}`, event) : events.record(event)).catch(() => {});
}

window.addEventListener('online', () => { events.flush(); });

// MARK: What the page says

/** Moves the offline state by `event` (a move visit-state.js does not list throws) and shows what it allows. */
function go(event, message) {
  let value;
  try {
    value = transition(state.offline, event);
  } catch (error) {
    // A move the table does not list is the player's own mistake: said in the console (the browser tests fail on any
    // console error), while the visitor keeps the page as it was rather than a half-updated one.
    console.error(error.message);
    return;
  }
  state.offline = value;
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

/// A size as people read it: "340 KB", "12.5 MB", "10 GB" (a browser's quota is often gigabytes: "10241.0 MB" read
/// as noise). Binary units, as the panel's MiB, named the way phones name them.
function megabytes(bytes) {
  if (bytes >= 1073741824) return `${Math.round(bytes / 1073741824)} GB`;
  if (bytes >= 104857600) return `${Math.round(bytes / 1048576)} MB`;
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

async function showStorage() {
  const room = await store.usage();
  if (!room) return;
  $('#storage-usage').textContent = `This browser holds ${megabytes(room.usage)} for saved tours (room for about ${megabytes(room.quota)}).`
    + (room.persisted ? ' The browser keeps it until you remove it.' : '');
}

// MARK: Files for the page

/** Whether the tour on screen is the saved copy (its files then come from Cache Storage, each checked first). */
const playsSaved = () => store.holds(state.manifest?.version);

/** A URL to play `file` from, or null when it failed its check. */
function mediaSource(file) {
  return store.mediaSource(file, { saved: playsSaved(), viaWorker: !!navigator.serviceWorker?.controller });
}

function textOf(file) {
  return store.text(file, playsSaved());
}

// MARK: Alerts and closures

/** Shows the alerts that apply now (from the last verified catalog) and closes their stops. Called at every check,
 * after every render, and every half minute, so an alert that ends while the page is open goes at once. */
function applyAlerts() {
  const source = state.alertSource;
  state.alerts = source ? alertsFor(source.catalog, packageId, Date.now()) : [];
  showAlerts(state.alerts, source?.checkedAt, (alert) => countEvent('alert-shown', { onceKey: `alert-shown:${alert.id}` }));
  markClosedStops(state.alerts, state.manifest?.waypoints);
  map.markClosed((waypoint) => closureOfStop(waypoint));
}

// MARK: The tour on screen

function render(manifest) {
  state.manifest = manifest;
  document.getElementById('tour-name').textContent = text(manifest, 'packageName');
  document.getElementById('tour-description').textContent = text(manifest, 'description');
  stops.renderLanguages(document.getElementById('language-choice'), manifest, chooseLanguage);
  profile.render(manifest, (waypoint) => text(waypoint, 'name'));
  stops.render(manifest);
  button('start').disabled = false;
  applyAlerts();
}

/** The tour shown again in the language `tag`, the open stop kept open. */
function chooseLanguage(tag) {
  state.language = tag === (state.manifest.languages || [])[0] ? null : tag;
  document.documentElement.lang = tag;
  const open = state.activeStop;
  render(state.manifest);
  map.relabel();
  if (open != null) stops.open(open, false);
}

// MARK: Start-up

/** Shows a verified manifest at once: the stops, then the map's route, zones and markers; the map's tiles follow
 * when the tile index has been checked (from the saved copy or the network), without holding up anything else. */
function show(target) {
  const { manifest } = target;
  render(manifest);  // applies the alerts known so far
  countEvent('opened', { onceKey: 'opened' });
  openLinkedStop();
  const tileURL = store.tileURL(manifest.version);
  const refusedTile = (key) => setVerified(true, `A map tile (${key}) did not match the signed tile index and is not shown.`);
  map.show(manifest, null, tileURL, refusedTile);
  state.tileIndex = store.tileIndex(manifest, playsSaved()).catch(() => null);
  state.tileIndex.then((index) => map.showTiles(manifest, index, tileURL, refusedTile));
  // The drawn map (OpenStreetMap's paths, water and woods, and contour lines), checked against the signed manifest
  // like every file, beneath the route; a map that fails its check is not drawn, and the check says so.
  if (manifest.basemap) {
    store.text({ ...manifest.basemap, mimeType: 'application/geo+json' }, playsSaved())
      .then((text) => { if (text != null) map.showBasemap(manifest, JSON.parse(text)); })
      .catch(() => setVerified(true, 'The drawn map could not be read and is not shown.'));
  }
}

/** The stop a printed QR code links to (`?stop=N`, the stop's order): opened once, the first time the stops are shown,
 * online or from the saved copy (the worker finds the saved page whatever the query). It is not played: a browser
 * plays sound only after a tap, and the visitor may be far from the stop. */
const linkedStop = (() => {
  const value = new URLSearchParams(location.search).get('stop');
  return value !== null && /^[0-9]{1,6}$/.test(value) ? Number(value) : null;
})();
let linkedStopOpened = false;

function openLinkedStop() {
  if (linkedStop === null || linkedStopOpened) return;
  linkedStopOpened = true;
  const item = document.querySelector(`[data-stop-order="${linkedStop}"]`);
  if (!item) {
    document.getElementById('location-status').textContent = `This tour has no stop ${linkedStop} now: choose a stop from the list.`;
    return;
  }
  item.dataset.linked = 'true';
  stops.open(linkedStop, false);
  item.scrollIntoView({ block: 'start' });
  item.querySelector('.visit-stop-open').focus({ preventScroll: true });
}

function registerWorker() {
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('/visit/sw.js', { scope: '/visit/', type: 'classic' }).catch(() => {});
  }
}

/** The alerts of the last fresh catalog kept on this phone, shown when its signature has been checked again; they do
 * not hold up the tour, and give way to a catalog verified meanwhile. */
function showKeptAlerts() {
  store.rememberedCatalog().then((kept) => {
    if (!kept || state.alertSource) return;
    state.alertSource = kept;
    applyAlerts();
  });
}

async function main() {
  if (/iPhone|iPad|iPod/.test(navigator.userAgent) || (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1)) {
    document.getElementById('ios-note').hidden = false;
  }
  button('start').addEventListener('click', () => tracking.toggle());
  if (!(await ed25519Supported())) {
    go('unsupported', 'This browser cannot check the tour\'s signature (it lacks Ed25519 in Web Crypto), so the tour is not shown or saved. Please use a current Chrome, Edge, Firefox or Safari.');
    setVerified(false);
    return;
  }
  registerWorker();
  events.flush();  // what an earlier visit queued offline
  showKeptAlerts();
  setInterval(applyAlerts, 30_000);
  const heldTarget = await openHeld();
  const catalog = await currentCatalog(heldTarget);
  // The alerts of the catalog just verified, or (offline, refused or stale) of the last one kept.
  applyAlerts();
  if (catalog) await followCatalog(catalog, heldTarget);
  await showStorage();
}

/** The saved copy, shown as soon as its manifest's signature holds, then every saved file hashed: {manifest, bytes,
 * signature, problem} (problem: the first file that failed, or null), or null when nothing usable is saved. */
async function openHeld() {
  const held = store.readHeld();
  if (!held) return null;
  let target;
  try {
    target = await store.loadHeld(held);
  } catch (error) {
    go('held-refused', 'The saved copy could not be checked.');
    showError(error.message, () => location.reload());
    return null;
  }
  if (!target) return null;
  const { version } = target.manifest;
  setVerified(true, `Signature checked: version ${version}, signed by this server.`);
  go('held-found', `Checking the saved copy of version ${version}…`);
  show(target);
  target.problem = await store.checkAllSaved(target.manifest);
  if (target.problem) {
    go('held-damaged', `Version ${version} is saved, but part of it failed its check.`);
    showError(`${target.problem} Save the tour again to replace it.`, () => save(target, null).then(() => location.reload()));
  } else {
    go('held-checked', `Saved on this phone: version ${version}. It works without a connection.`);
  }
  return target;
}

/** The verified, current catalog, or null: offline, refused (said so) or stale (flagged, and not acted on). */
async function currentCatalog(heldTarget) {
  try {
    const checked = await store.verifiedCatalog();
    if (checked.remembered) state.alertSource = checked.remembered;
    if (!checked.stale) return checked.catalog;
    // Past its expiresAt the catalog cannot say which version is current or whether the tour was withdrawn (a
    // replayed copy still carries a good signature): it is shown as stale and not acted on; a saved copy plays on.
    showStaleCatalog($('#offline-status'), checked.catalog, !!heldTarget);
    if (!heldTarget) { go('unavailable', 'The tour could not be checked against a current list of tours.'); setVerified(false); }
  } catch (error) {
    if (error instanceof TrustError) {
      showError(heldTarget?.problem ? `${error.message} ${heldTarget.problem}` : error.message);
      if (!heldTarget) { go('unavailable', 'The tour could not be checked.'); setVerified(false); }
    } else if (!heldTarget) {
      go('unavailable', 'You are offline and this tour is not saved on this phone yet.');
      showError('Connect to the internet and reload to save the tour.', () => location.reload());
    }
  }
  return null;
}

/** What the current catalog says of this tour: withdrawn, a newer version than the saved one, or (nothing saved)
 * the version to show and offer for saving. */
async function followCatalog(catalog, heldTarget) {
  state.entry = catalog.packages.find((p) => p.id === packageId) || null;
  if (!state.entry) {
    document.getElementById('offline-status').textContent = 'The park has withdrawn this tour: it can no longer be saved or updated.'
      + (heldTarget ? ' Your saved copy still works.' : '');
    root.dataset.withdrawn = 'true';
    if (!heldTarget) go('unavailable');
  } else if (heldTarget && state.entry.version > heldTarget.manifest.version) {
    // Offered only when every saved file checked out: a damaged copy is saved again first.
    if (!heldTarget.problem) go('update-found', `Version ${state.entry.version} is available; you have version ${heldTarget.manifest.version}.`);
    button('update').onclick = () => updateOnce(heldTarget);
  } else if (!heldTarget) {
    try {
      const target = await store.fetchManifest(state.entry.version);
      setVerified(true, `Signature checked: version ${target.manifest.version}, signed by this server.`);
      show(target);
      go('shown', 'Not saved yet: save the tour while you have signal to use it offline.');
      button('save-offline').onclick = () => save(target, null);
    } catch (error) {
      go('unavailable', 'The tour could not be checked.');
      setVerified(false);
      showError(error.message, () => location.reload());
    }
  }
}

// MARK: Saving and updating

/** Saves `target` ({manifest, bytes, signature}) for offline use; `previous` ({version, tileIndex}) is the saved
 * version an update replaces. The saved copy switches to the new version only when all of it is in. */
async function save(target, previous) {
  const { manifest } = target;
  go('save', previous ? `Updating to version ${manifest.version}…` : 'Saving the tour on this phone…');
  showError('');
  await store.persist();
  const plan = await store.planSave(manifest);
  try {
    await store.saveTour(target, previous, plan, progress);
  } catch (error) {
    const quota = error?.name === 'QuotaExceededError';
    const message = quota
      ? `This browser has no room left for the tour (${megabytes(plan.total)} needed). What was saved before is kept; free some space on the phone and try again.`
      : `${previous ? 'The update' : 'Saving'} stopped: ${reason(error)}. ${previous ? `Version ${previous.version} is kept as it was.` : ''}`;
    go('save-failed', previous ? `Version ${previous.version} is saved on this phone.` : 'The tour is not saved yet.');
    showError(message, () => save(target, previous));
    await showStorage();
    return false;
  }
  store.writeHeld({ version: manifest.version, sha256: state.entry?.sha256 || store.held?.sha256 || null });
  go('saved', `Saved on this phone: version ${manifest.version}. It works without a connection.`);
  countEvent('saved-offline');
  await showStorage();
  // Counted like an app's checked download.
  if (state.entry) store.reportDownload(state.entry);
  return true;
}

/** One update at a time: the Update and Try again buttons stay on screen while the new manifest is fetched. */
let updating = null;
function updateOnce(heldTarget) {
  updating ??= update(heldTarget).finally(() => { updating = null; });
  return updating;
}

async function update(heldTarget) {
  try {
    const target = await store.fetchManifest(state.entry.version);
    const saved = await save(target, { version: heldTarget.manifest.version, tileIndex: await state.tileIndex });
    if (saved) {
      store.forgetRefused();
      setVerified(true, `Signature checked: version ${target.manifest.version}, signed by this server.`);
      show(target);
    }
  } catch (error) {
    const kept = heldTarget.manifest.version;
    go('update-failed', `Version ${kept} is saved on this phone.`);
    showError(error instanceof TrustError
      ? `The update was refused: ${error.message} Version ${kept} is kept as it was.`
      : `The update stopped: ${reason(error)}. Version ${kept} is kept as it was.`, () => updateOnce(heldTarget));
  }
}

/** What went wrong, in a visitor's words: fetch rejects with a bare TypeError when the connection is gone. */
function reason(error) {
  return error instanceof TypeError ? 'the connection was lost' : String(error?.message || error).replace(/\.$/, '');
}

main();
