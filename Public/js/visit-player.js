// The visitor web player's page: what the visitor sees and taps. It checks the signed catalog and manifest, saves a
// tour for offline use (only files whose size and SHA-256 match the signed manifest), plays it on the trail from Cache
// Storage, and updates it by fetching only the files it does not hold. What is kept and fetched is visit-store.js's;
// the offline states and their moves are visit-state.js's; this module draws them and wires the controls.
// Hooks for tests and scripts: data-offline-state, data-verified, data-action, data-stop / data-stop-order /
// data-active / data-linked (the stop a `?stop=N` link opened), audio[data-stop-audio], select[name=language], #visit-map.
import { TrustError, ed25519Supported, companionType, catalogExpiry } from './visit-trust.js';
import { TourMap, distanceMeters, DEFAULT_RADIUS } from './visit-map.js';
import { alertsFor, closureOf, severityOf } from './visit-alerts.js';
import { START, transition } from './visit-state.js';
import { VisitStore } from './visit-store.js';
import { TrailProfile } from './visit-profile.js';
import { VisitEvents, indexedDBQueue, privacyRefused, sourceOf } from './visit-events.js';

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
  tracking: false,
  alertSource: null,  // {catalog, checkedAt}: the verified catalog alerts are read from
  alerts: [],         // the alerts that apply to this tour now
};
const profile = new TrailProfile(document.getElementById('trail-facts'));
const map = new TourMap(document.getElementById('visit-map'), {
  onStop: (order, play) => openStop(order, play), nameOf: (waypoint) => text(waypoint, 'name'),
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

/** A stop opened on this visit; the tour is completed once every stop open to visitors has been opened. */
const openedStops = new Set();
function countStopOpened(waypoint) {
  if (waypoint.id == null) return; // a package made before stops had ids: nothing to name it by
  countEvent('stop-opened', { onceKey: `stop-opened:${waypoint.id}`, waypointId: waypoint.id });
  openedStops.add(waypoint.id);
  const all = state.manifest.waypoints.filter((w) => w.id != null);
  // A stop closed by an alert cannot be opened: the tour is complete without it.
  if (all.length && all.every((w) => openedStops.has(w.id) || closureOfStop(w))) countEvent('completed', { onceKey: 'completed' });
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
    for (const alert of state.alerts) countEvent('alert-shown', { onceKey: `alert-shown:${alert.id}` });
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
  map.markClosed((waypoint) => closureOfStop(waypoint));
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
  profile.render(manifest, (waypoint) => text(waypoint, 'name'));
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

/** Each stop body's fill in progress or done (fillStop), by the body. */
const fills = new WeakMap();

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
    // The stop's heading already says "Closed: <title>": the message alone, not the title again.
    why.textContent = closure.message;
    body.replaceChildren(why);
    return;
  }
  countStopOpened(waypoint);
  if (body.dataset.filledFor !== (state.language || 'default')) fills.set(body, fillStop(waypoint, body));
  // A stop opened again while its media are still being checked plays once they are there.
  await fills.get(body);
  if (play) {
    const audio = body.querySelector('audio[data-stop-audio]');
    if (audio && audio.src) audio.play().catch(() => {});
  }
}

/** Fills a stop's body: its description and one figure per asset are on screen at once; each figure's media follow
 * as their checks pass. Answers when every figure is filled (so a stop that should play has its audio then). */
function fillStop(waypoint, body) {
  body.dataset.filledFor = state.language || 'default';
  const description = document.createElement('p');
  description.textContent = text(waypoint, 'description');
  body.replaceChildren(description);
  return Promise.all(assetsFor(waypoint).map((asset) => {
    const figure = document.createElement('figure');
    if (asset.title) {
      const caption = document.createElement('figcaption');
      caption.textContent = asset.title;
      figure.append(caption);
    }
    body.append(figure);
    return fillFigure(figure, asset, waypoint);
  }));
}

async function fillFigure(figure, asset, waypoint) {
  const file = { path: asset.path, size: asset.size, sha256: asset.sha256, mimeType: asset.mimeType };
  const source = await mediaSource(file);
  if (!source) {
    const refused = document.createElement('p');
    refused.className = 'visit-error';
    refused.textContent = `${asset.title || asset.path} failed its check against the signed manifest and is not played.`;
    figure.append(refused);
    return;
  }
  if (asset.type === 'audio') {
    const audio = document.createElement('audio');
    audio.controls = true;
    audio.preload = 'metadata';
    audio.dataset.stopAudio = '';
    audio.src = source;
    audio.setAttribute('aria-label', asset.title || `Audio for ${text(waypoint, 'name')}`);
    audio.addEventListener('play', () => countStopPlayed(waypoint));
    figure.append(audio, speedControl(audio, waypoint.order));
    if (asset.transcript) await appendTranscript(figure, asset.transcript);
  } else if (asset.type === 'video') {
    const video = document.createElement('video');
    video.controls = true;
    video.preload = 'metadata';
    video.playsInline = true;
    video.src = source;
    video.setAttribute('aria-label', asset.title || `Video for ${text(waypoint, 'name')}`);
    video.addEventListener('play', () => countStopPlayed(waypoint));
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
}

function countStopPlayed(waypoint) {
  if (waypoint.id != null) countEvent('stop-played', { onceKey: `stop-played:${waypoint.id}`, waypointId: waypoint.id });
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
let watchId = null;

// The Start button is also the way to stop: while the player follows the visitor's position it says so on the button
// (`data-tracking="on"`) and a second press stops following, lets the screen sleep again, and leaves the stops to taps.
function showTracking(on) {
  const start = button('start');
  start.dataset.tracking = on ? 'on' : 'off';
  start.textContent = on ? 'Stop following my position' : 'Start the tour';
}

async function toggleTracking() {
  if (watchId !== null) stopTracking(); else await start();
}

function stopTracking() {
  if (watchId !== null) navigator.geolocation.clearWatch(watchId);
  watchId = null;
  state.tracking = false;
  wakeLock?.release().catch(() => {});
  wakeLock = null;
  showTracking(false);
  document.getElementById('location-status').textContent = 'Location is off: tap a stop to hear it, or start again.';
}

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
  showTracking(true);
  watchId = navigator.geolocation.watchPosition(onPosition, (error) => {
    status.textContent = error.code === error.PERMISSION_DENIED
      ? 'Location is turned off for this page, so stops do not open by themselves. Tap a stop to hear it.'
      : 'Your position is not known right now. Tap a stop to hear it.';
    if (error.code === error.PERMISSION_DENIED) {
      // Nothing to follow: the button offers to start again (after the visitor allowed location).
      navigator.geolocation.clearWatch(watchId);
      watchId = null;
      state.tracking = false;
      showTracking(false);
    }
  }, { enableHighAccuracy: true, maximumAge: 5000 });
}

function onPosition(position) {
  const here = { latitude: position.coords.latitude, longitude: position.coords.longitude };
  map.showPosition(here.latitude, here.longitude, position.coords.accuracy);
  profile.markPosition(here);
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
  openStop(linkedStop, false);
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
  button('start').addEventListener('click', toggleTracking);
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
    showStaleCatalog(checked.catalog, !!heldTarget);
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
