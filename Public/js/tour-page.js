// The tour map: frame editor (rectangle with corner handles, synced with the N/S/E/W inputs),
// click-to-add (a name, a description and files) and drag-to-move waypoints, a panel beside the map that writes a
// stop's text and its files' texts, drag-and-drop reordering, each waypoint's trigger zone as a circle (on the
// waypoint page its edge can be dragged to set the radius). After each change the page re-reads its checklist and
// duration. Every action also works without this script through the plain forms and the waypoint pages.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { postForm, sendJSON, confirmButtons } from './panel.js';
import { uploadFiles } from './uploader.js';
import { addBasemap } from './visit-basemap.js';

// Where a tour without a frame or waypoints opens when its site has no home area and no framed tour yet: a district
// of the demo park, close enough to frame by hand.
const DEFAULT_VIEW = { center: [44.4, -122.1], zoom: 10 };
const mapElement = document.getElementById('tour-map');
confirmButtons(document);
if (mapElement) {
  setUpMap(mapElement, JSON.parse(mapElement.dataset.map || '{}'));
}
setUpSortable();
setUpTileEstimate();
setUpSkipLink();

/// The skip link past the map puts the focus in the typed form's first field (a fragment alone only scrolls there).
function setUpSkipLink() {
  const link = document.querySelector('[data-skip-to-form]');
  link?.addEventListener('click', (event) => {
    const field = document.getElementById('wp-name');
    if (!field) return;
    event.preventDefault();
    field.scrollIntoView({ block: 'center' });
    field.focus({ preventScroll: true });
  });
}

function setUpMap(element, data) {
  const map = L.map(element, { zoomSnap: 0.25 });
  element.leafletMap = map;
  const base = baseLayer(data.tileURL, data).addTo(map);
  setUpDrawnMap(map, base, data);
  const inputs = Object.fromEntries(['north', 'south', 'east', 'west'].map((k) => [k, document.getElementById(k)]));
  const frameEditable = data.editable && inputs.north && !inputs.north.disabled;
  let frame = null;
  if (data.frame) {
    frame = frameLayer(map, data.frame, frameEditable ? inputs : null);
    map.fitBounds(frame.rectangle.getBounds(), { padding: [20, 20] });
  } else if (data.waypoints.length) {
    map.fitBounds(L.latLngBounds(data.waypoints.map((w) => [w.latitude, w.longitude])).pad(0.3));
  } else if (data.home) {
    // A new tour opens over its site's home area (or the frame of the site's first tour).
    map.fitBounds([[data.home.south, data.home.west], [data.home.north, data.home.east]]);
  } else {
    // A site with neither: close enough to frame a park by hand (about 40 km across), never on a continent.
    map.setView(DEFAULT_VIEW.center, DEFAULT_VIEW.zoom);
  }
  setUpPlaceSearch(map, data);
  if (frameEditable) {
    if (!frame) {
      addFrameButton(map, (button) => {
        button.remove();
        const b = map.getBounds().pad(-0.2);
        const visible = { north: b.getNorth(), south: b.getSouth(), east: b.getEast(), west: b.getWest() };
        // Refused here rather than by the server after a round trip: the ranger zooms in and tries again.
        if (data.maxAreaKm2 && frameAreaKm2(visible) > data.maxAreaKm2) {
          frameMessage(`The visible area is about ${Math.round(frameAreaKm2(visible)).toLocaleString('en-US')} km², over the ${data.maxAreaKm2.toLocaleString('en-US')} km² limit: zoom in on the park, then frame it again.`);
          return;
        }
        frameMessage('');
        button.remove();
        frame = frameLayer(map, visible, inputs);
        frame.writeInputs();
      });
    }
    // Typing the edges moves the rectangle and, once the ranger pauses, fits the map to it.
    let fitTimer = null;
    const typed = () => {
      const values = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, parseFloat(el.value)]));
      if (Object.values(values).some((v) => Number.isNaN(v)) || values.north <= values.south || values.east <= values.west) return;
      if (!frame) frame = frameLayer(map, values, inputs);
      else frame.setFrame(values);
      clearTimeout(fitTimer);
      fitTimer = setTimeout(() => map.fitBounds(frame.rectangle.getBounds(), { padding: [20, 20] }), 300);
    };
    for (const input of Object.values(inputs)) {
      input.addEventListener('input', typed);
      input.addEventListener('change', (event) => { if (event.isTrusted) typed(); });
    }
    guardFrameForm(inputs.north.form, inputs, data.maxAreaKm2);
  }

  const route = setUpRoute(map, data);

  const markers = new Map();
  const addMarker = (waypoint) => {
    const marker = L.marker([waypoint.latitude, waypoint.longitude], {
      icon: numberIcon(waypoint.order), draggable: data.editable, title: waypoint.name, keyboard: true, alt: waypoint.name,
    }).addTo(map);
    // A stable hook for scripts and tests: which waypoint this marker is.
    marker.getElement()?.setAttribute('data-waypoint-id', String(waypoint.id));
    marker.bindTooltip(escapeText(waypoint.name));
    const zone = triggerZone(map, waypoint, element.dataset.pick === 'true');
    marker.on('drag', () => zone.moveTo(marker.getLatLng()));
    if (data.editable) {
      // Saves the place; the marker, its zone and its row follow only once the server has it.
      const moveTo = async (lat, lng) => {
        const result = await postForm(data.moveURLTemplate.replace('{id}', waypoint.id), { latitude: lat.toFixed(7), longitude: lng.toFixed(7) });
        if (result.ok) {
          waypoint.latitude = result.data.latitude ?? lat; waypoint.longitude = result.data.longitude ?? lng;
          const row = document.querySelector(`#waypoint-${waypoint.id} .small`);
          if (row) row.textContent = `${waypoint.latitude.toFixed(6)}, ${waypoint.longitude.toFixed(6)}`;
        } else {
          showMessage(result.message);
        }
        marker.setLatLng([waypoint.latitude, waypoint.longitude]);
        zone.moveTo(marker.getLatLng());
        if (result.ok) refreshStatus();
        return result.ok;
      };
      marker.on('dragend', async () => {
        const before = [waypoint.latitude, waypoint.longitude];
        const { lat, lng } = marker.getLatLng();
        if (await moveTo(lat, lng)) {
          mapStatus(`“${waypoint.name}” moved.`, 'Undo', async () => {
            if (await moveTo(...before)) mapStatus(`“${waypoint.name}” is back where it was.`);
          });
        }
      });
    } else if (element.dataset.pick === 'true') {
      marker.options.draggable = true;
      marker.dragging?.enable();
      marker.on('dragend', () => fillCoordinates(marker.getLatLng()));
    }
    if (data.editable) marker.on('click', () => editor?.open(waypoint.id));
    marker.waypoint = waypoint;
    markers.set(String(waypoint.id), marker);
    // The waypoint page shows the place up close: the zone fills about a third of the map, its handle in reach.
    if (element.dataset.pick === 'true') map.fitBounds(zone.bounds().pad(1));
  };
  const editor = data.editable && data.apiTourURL ? waypointEditor(data, markers) : null;
  data.waypoints.forEach(addMarker);
  mapElement.markers = markers;
  if (editor) setUpRowEditing(editor);

  map.on('click', (event) => {
    if (route.editing()) { route.add(event.latlng); return; }
    if (element.dataset.pick === 'true') {
      const marker = markers.values().next().value;
      if (marker) { marker.setLatLng(event.latlng); marker.fire('drag'); }
      fillCoordinates(event.latlng);
      return;
    }
    offerAt(event.latlng, false);
  });

  // The keyboard's way to the same form: Enter on the focused map offers it at the map's centre.
  element.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.target !== element || route.editing() || element.dataset.pick === 'true') return;
    event.preventDefault();
    offerAt(map.getCenter(), true);
  });

  function offerAt(latlng, byKeyboard) {
    if (!data.editable || !document.getElementById('waypoint-form')) return;
    const bounds = frame?.rectangle.getBounds();
    if (!bounds || !bounds.contains(latlng)) {
      L.popup().setLatLng(latlng).setContent(bounds ? 'This place is outside the frame.' : 'Save the frame first.').openOn(map);
      return;
    }
    offerNewWaypoint(map, latlng, data, (waypoint, files) => {
      addMarker({ ...waypoint, url: '', overlaps: false });
      const row = addWaypointRow(waypoint, data, editor);
      resetWaypointForm();
      refreshStatus();
      // The new row has the focus, so a keyboard goes on from the stop it made (the map's pointer users keep their view).
      row?.querySelector('a.waypoint-name')?.focus({ preventScroll: !byKeyboard });
      if (files.length) {
        uploadFiles(files, uploadTarget(data, waypoint.id, document.getElementById('map-uploads')), (upload) => {
          if (upload.finished) mapStatus(`“${upload.file.name}” uploaded to “${waypoint.name}”: it is being scanned for malware.`);
          refreshStatus();
          editor?.refreshFiles(waypoint.id);
        });
      }
    });
  }
}

/// The place search above the map: a typed "latitude, longitude" moves the map there, and a name is looked up in the
/// server's OpenStreetMap extract (a search form with no script would have nothing to move, so it shows only with one).
function setUpPlaceSearch(map, data) {
  const form = document.getElementById('place-search-form');
  const input = form?.querySelector('[data-place-search]');
  if (!input) return;
  const message = document.getElementById('place-search-message');
  form.hidden = false;
  const results = document.getElementById('place-search-results');
  const refuse = (text) => {
    message.textContent = text;
    message.classList.add('text-danger');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  };
  const goTo = (lat, lng, label) => {
    input.removeAttribute('aria-invalid');
    message.classList.remove('text-danger');
    map.setView([lat, lng], Math.max(map.getZoom(), 14));
    message.textContent = `The map is over ${label}.`;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    results?.replaceChildren();
    const typed = input.value.trim();
    const parts = typed.split(/[\s,;]+/).filter(Boolean).map(Number);
    const [lat, lng] = parts;
    if (parts.length === 2 && parts.every(Number.isFinite)) {
      if (Math.abs(lat) > 90 || Math.abs(lng) > 180) {
        refuse('Type a latitude and a longitude in decimal degrees, like 44.40, -122.10.');
        return;
      }
      goTo(lat, lng, `${lat.toFixed(5)}, ${lng.toFixed(5)}`);
      return;
    }
    // A name: the server's OpenStreetMap extract knows the places of its region.
    if (typed.length < 2 || !data.placesURL) {
      refuse('Type a place\'s name, or a latitude and a longitude in decimal degrees, like 44.40, -122.10.');
      return;
    }
    message.classList.remove('text-danger');
    message.textContent = 'Searching…';
    let answer;
    try {
      const response = await fetch(`${data.placesURL}?q=${encodeURIComponent(typed)}`, { headers: { Accept: 'application/json' } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      answer = await response.json();
    } catch {
      refuse('The place search did not answer. Type a latitude and a longitude instead, like 44.40, -122.10.');
      return;
    }
    if (!answer.searched) {
      refuse('Type a latitude and a longitude, like 44.40, -122.10: this server has no map data to look names up in.');
      return;
    }
    const places = answer.places || [];
    if (!places.length) {
      refuse(`No place named like “${typed}” in the server's map data. Try another name, or a latitude and a longitude.`);
      return;
    }
    if (places.length === 1) {
      goTo(places[0].latitude, places[0].longitude, places[0].name);
      return;
    }
    input.removeAttribute('aria-invalid');
    message.textContent = `${places.length} places found: choose one.`;
    for (const place of places) {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'btn btn-link btn-sm p-0';
      button.textContent = `${place.name} (${place.kind})`;
      button.addEventListener('click', () => { results.replaceChildren(); goTo(place.latitude, place.longitude, place.name); });
      item.append(button);
      results.append(item);
    }
    results.querySelector('button')?.focus();
  });
}

/// Where the tour page's uploads go: a waypoint of this tour, with the server's limit, shown in `list`.
function uploadTarget(data, waypointId, list) {
  const tour = data.apiTourURL.split('/').pop();
  return { tour, waypoint: String(waypointId), maxBytes: data.maxUploadBytes, maxSize: data.maxUploadSize, list };
}

/// The lower "Add a waypoint" form, emptied after an add on the map (its coordinates were the clicked place's).
function resetWaypointForm() {
  const form = document.getElementById('waypoint-form');
  if (!form) return;
  for (const field of form.querySelectorAll('input:not([type=hidden]), textarea')) {
    field.value = '';
    field.classList.remove('is-invalid');
  }
  form.querySelectorAll('.invalid-feedback').forEach((feedback) => feedback.remove());
}

/// Re-reads the tour page's duration and publishing card (`GET /tours/{id}/status`, rendered by the same server code
/// as the page) and puts them in place of the stale ones.
let statusRequest = Promise.resolve();
function refreshStatus() {
  const url = JSON.parse(mapElement?.dataset.map || '{}').statusURL;
  if (!url) return statusRequest;
  statusRequest = statusRequest.then(async () => {
    const response = await fetch(url, { credentials: 'same-origin', cache: 'no-store' }).catch(() => null);
    if (!response?.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
    for (const selector of ['[data-duration]', '[data-download-size]', '[data-trail-facts-view]', '[data-publishing]']) {
      const next = fresh.querySelector(selector);
      const current = document.querySelector(selector);
      if (next && current) {
        const adopted = document.importNode(next, true);
        current.replaceWith(adopted);
        confirmButtons(adopted);
      }
    }
    document.dispatchEvent(new CustomEvent('tour-status-refreshed'));
  });
  return statusRequest;
}

/// A small form at the clicked place: a name, a description and files, then "Add" saves the waypoint with no page
/// load and uploads its files (each with its progress below the map). The full form below the list (coordinates
/// filled in too, for a ranger who prefers it or has no script) stays.
function offerNewWaypoint(map, latlng, data, added) {
  fillCoordinates(latlng);
  // The last form's popup fades out for a moment after it closes: its form goes at once, so the page never holds
  // two forms with the same field ids (a screen reader, a label or a test could reach the old one).
  for (const old of document.querySelectorAll('#tour-map form[data-new-waypoint]')) old.remove();
  const form = document.createElement('form');
  form.setAttribute('data-new-waypoint', '');
  form.className = 'd-flex flex-column gap-1';
  form.innerHTML = `<label class="form-label small mb-0" for="new-waypoint-name">New waypoint here</label>
    <input class="form-control form-control-sm" id="new-waypoint-name" name="name" maxlength="120" required autocomplete="off">
    <label class="form-label small mb-0" for="new-waypoint-description">What visitors read here</label>
    <textarea class="form-control form-control-sm" id="new-waypoint-description" name="description" rows="3"></textarea>
    <label class="form-label small mb-0" for="new-waypoint-files">Files (audio, video, images)</label>
    <input class="form-control form-control-sm" type="file" id="new-waypoint-files" name="file" multiple>
    <div class="small text-danger" data-new-waypoint-error role="alert" hidden></div>
    <button type="submit" class="btn btn-primary btn-sm">Add waypoint</button>`;
  // The form is taller than the map's margin above most places, so Leaflet pans the map to show it; once it closes,
  // the map goes back to where the ranger had it (unless they moved it meanwhile), so the next place is where it was.
  const view = map.getCenter();
  let moved = false;
  const movedByHand = () => { moved = true; };
  map.on('dragstart zoomstart', movedByHand);
  // Panned into view at once, not animated: the form stands still from the moment it shows, so typing (or a
  // screen reader's cursor) never chases a moving field.
  const popup = L.popup({ minWidth: 220, maxWidth: 280, autoPan: false }).setLatLng(latlng).setContent(form);
  popup.on('remove', () => {
    map.off('dragstart zoomstart', movedByHand);
    if (!moved) map.panTo(view, { animate: false });
  });
  popup.openOn(map);
  const box = popup.getElement()?.getBoundingClientRect();
  const frameBox = map.getContainer().getBoundingClientRect();
  if (box) {
    const pad = 12;
    const dx = box.left < frameBox.left + pad ? box.left - frameBox.left - pad
      : box.right > frameBox.right - pad ? box.right - frameBox.right + pad : 0;
    const dy = box.top < frameBox.top + pad ? box.top - frameBox.top - pad : 0;
    if (dx || dy) map.panBy([dx, dy], { animate: false });
  }
  const name = form.querySelector('input[name="name"]');
  name.focus({ preventScroll: true });
  // Enter in the name adds at once; in the description it starts a new line, as in any text box.
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = form.querySelector('[data-new-waypoint-error]');
    if (!name.value.trim()) { error.textContent = 'Enter a name.'; error.hidden = false; name.focus(); return; }
    const button = form.querySelector('button');
    button.disabled = true;
    const description = form.querySelector('textarea[name="description"]').value;
    const files = [...form.querySelector('input[type="file"]').files];
    const result = await postForm(data.newWaypointURL, {
      name: name.value.trim(), description, latitude: latlng.lat.toFixed(7), longitude: latlng.lng.toFixed(7),
    });
    button.disabled = false;
    if (!result.ok) { error.textContent = result.message; error.hidden = false; name.focus(); return; }
    map.closePopup(popup);
    mapStatus(`Waypoint “${result.data.name}” added${files.length ? `; uploading ${files.length === 1 ? 'its file' : `its ${files.length} files`}` : ''}.`);
    added(result.data, files);
  });
}

/// The new waypoint's row at the end of the list, with the same links and buttons the page renders.
function addWaypointRow(waypoint, data, editor) {
  const list = document.getElementById('waypoint-list');
  if (!list) return null;
  document.getElementById('no-waypoints')?.remove();
  const csrf = document.querySelector('#waypoint-form input[name="_csrf"]')?.value ?? '';
  const base = data.newWaypointURL;
  const name = escapeText(waypoint.name);
  const form = (action, label, text, extra = '') => `<form method="post" action="${base}/${waypoint.id}/${action}" class="d-inline">
      <input type="hidden" name="_csrf" value="${escapeText(csrf)}">
      <button type="submit" class="btn btn-sm ${action === 'delete' ? 'btn-outline-danger' : 'btn-outline-secondary'}" ${extra} aria-label="${label}">${text}</button></form>`;
  const previous = list.lastElementChild;
  previous?.querySelector('button[aria-label$=" down"]')?.removeAttribute('disabled');
  const li = document.createElement('li');
  li.className = 'list-group-item d-flex align-items-center gap-2';
  li.id = `waypoint-${waypoint.id}`;
  li.dataset.id = String(waypoint.id);
  li.innerHTML = `<span class="drag-handle text-muted" aria-hidden="true" title="Drag to reorder">⠿</span>
    <div class="me-auto">
      <a href="${base}/${waypoint.id}" class="waypoint-name">${name}</a>
      <div class="small text-muted">${waypoint.latitude.toFixed(6)}, ${waypoint.longitude.toFixed(6)}</div>
      <small class="d-block text-muted"><span class="zone-radius">${Number(waypoint.triggerRadiusMeters)} m trigger zone</span></small>
    </div>
    ${form('up', `Move ${name} up`, '↑', previous ? '' : 'disabled')}
    ${form('down', `Move ${name} down`, '↓', 'disabled')}
    ${form('delete', `Delete ${name}`, '✕', `data-confirm="Delete the waypoint “${name}”?"`)}`;
  list.append(li);
  confirmButtons(li);
  editor?.addButton(li);
  return li;
}

/// Each row of the list opens the panel beside the map: a click on the row (not on its link or buttons), or its
/// "Edit here" button for the keyboard. The name's link still opens the waypoint's own page.
function setUpRowEditing(editor) {
  const list = document.getElementById('waypoint-list');
  if (!list) return;
  list.querySelectorAll(':scope > li[data-id]').forEach((li) => editor.addButton(li));
  list.addEventListener('click', (event) => {
    if (event.target.closest('a, button, form, input, textarea')) return;
    const li = event.target.closest('li[data-id]');
    if (li) editor.open(li.dataset.id);
  });
}

/// The panel beside the map (`form[data-edit-waypoint]`): a stop's name and description, its files with their
/// title, alt text, captions and transcript, more files, and "Next stop". It reads the tour from the management API
/// and saves through its waypoint and asset routes, with no page load; the waypoint's own page stays for the rest
/// (translations, the trigger radius, the files' order).
function waypointEditor(data, markers) {
  const box = document.getElementById('waypoint-editor');
  if (!box) return null;
  let current = null;
  let tour = null;

  async function load() {
    const result = await sendJSON('GET', data.apiTourURL);
    if (!result.ok) { showMessage(result.message); return null; }
    tour = result.data;
    return tour;
  }

  function orderedIds() {
    return [...document.querySelectorAll('#waypoint-list > li[data-id]')].map((li) => li.dataset.id);
  }

  async function open(id, { focus = true } = {}) {
    if (!(await load())) return;
    const waypoint = tour.waypoints.find((w) => String(w.id) === String(id));
    if (!waypoint) return;
    current = waypoint;
    render(waypoint);
    box.hidden = false;
    if (focus) {
      box.scrollIntoView({ block: 'nearest' });
      box.querySelector('input[name="name"]').focus({ preventScroll: true });
    }
  }

  function render(waypoint) {
    const ids = orderedIds();
    const index = ids.indexOf(String(waypoint.id));
    const nextId = index >= 0 && index < ids.length - 1 ? ids[index + 1] : null;
    const files = (waypoint.assets || []).filter((asset) => asset.companionOf == null);
    box.innerHTML = `<div class="card-body">
      <div class="d-flex align-items-start gap-2 mb-2">
        <h2 class="h5 mb-0 me-auto" id="waypoint-editor-title">Stop ${Number(index + 1)}: <span data-editor-name>${escapeText(waypoint.name)}</span></h2>
        <button type="button" class="btn-close" data-action="close-editor" aria-label="Close the stop's panel"></button>
      </div>
      <form data-edit-waypoint novalidate>
        <div class="mb-2">
          <label class="form-label" for="edit-waypoint-name">Name</label>
          <input class="form-control" id="edit-waypoint-name" name="name" maxlength="120" required value="${escapeText(waypoint.name)}">
        </div>
        <div class="mb-2">
          <label class="form-label" for="edit-waypoint-description">Description</label>
          <textarea class="form-control" id="edit-waypoint-description" name="description" rows="5">${escapeText(waypoint.description)}</textarea>
        </div>
        <h3 class="h6 mt-3">Files</h3>
        ${files.length ? files.map(fileFields).join('') : '<p class="small text-muted" data-no-files>No files yet.</p>'}
        <div class="mb-2">
          <label class="form-label small mb-0" for="edit-waypoint-files">Add files (audio, video, images; up to ${escapeText(data.maxUploadSize || '')} each)</label>
          <input class="form-control form-control-sm" type="file" id="edit-waypoint-files" name="file" multiple>
        </div>
        <div class="small mb-2" data-editor-status role="status" aria-live="polite"></div>
        <div class="d-flex flex-wrap gap-2">
          <button type="submit" class="btn btn-primary btn-sm">Save stop</button>
          <button type="button" class="btn btn-outline-primary btn-sm" data-action="next-waypoint" ${nextId ? '' : 'disabled'}>${nextId ? 'Save and open the next stop' : 'This is the last stop'}</button>
          <a class="btn btn-link btn-sm" href="${escapeText(data.newWaypointURL)}/${Number(waypoint.id)}">Its page: languages, trigger zone, file order</a>
        </div>
      </form>
      <ul class="list-unstyled mt-2 mb-0" data-editor-uploads aria-label="Uploads of this stop's files"></ul>
    </div>`;
    const form = box.querySelector('form[data-edit-waypoint]');
    box.querySelector('[data-action="close-editor"]').addEventListener('click', close);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      await save(form);
    });
    box.querySelector('[data-action="next-waypoint"]').addEventListener('click', async () => {
      if (nextId && await save(form)) await open(nextId);
    });
  }

  /// One file's texts: its title; an image's alt text; a video's captions (WebVTT); an audio or video file's transcript.
  function fileFields(asset) {
    const id = Number(asset.id);
    const name = escapeText(asset.originalName);
    const takesTranscript = asset.kind === 'audio' || asset.kind === 'video';
    const companion = (file) => file ? `${escapeText(file.originalName ?? 'a file')} (${escapeText(file.scanStatus ?? '')})` : 'none yet';
    return `<fieldset class="border rounded p-2 mb-2" data-asset-id="${id}">
      <legend class="fs-6 mb-1 text-break">${name} <span class="badge bg-light text-dark border">${escapeText(asset.kind)}</span>
        <span class="badge text-bg-${asset.scanStatus === 'clean' ? 'success' : asset.scanStatus === 'pending' ? 'secondary' : 'danger'}" data-scan-status>${escapeText(asset.scanStatus)}</span></legend>
      <label class="form-label small mb-0" for="edit-title-${id}">Title shown in the app</label>
      <input class="form-control form-control-sm mb-1" id="edit-title-${id}" name="title" maxlength="200" value="${escapeText(asset.title ?? '')}" data-saved="${escapeText(asset.title ?? '')}">
      ${asset.kind === 'image' ? `<label class="form-label small mb-0" for="edit-alt-${id}">Alt text (what the image shows)</label>
      <textarea class="form-control form-control-sm mb-1" id="edit-alt-${id}" name="altText" rows="2" maxlength="1000" data-saved="${escapeText(asset.altText ?? '')}">${escapeText(asset.altText ?? '')}</textarea>` : ''}
      ${asset.kind === 'video' ? `<label class="form-label small mb-0" for="edit-captions-${id}">Captions (WebVTT, .vtt): ${companion(asset.captions)}</label>
      <input class="form-control form-control-sm mb-1" type="file" id="edit-captions-${id}" name="captions" accept=".vtt,text/vtt">` : ''}
      ${takesTranscript ? `<label class="form-label small mb-0" for="edit-transcript-${id}">Transcript: ${companion(asset.transcript)}. Type or paste ${asset.transcript ? 'a new one' : 'it'}</label>
      <textarea class="form-control form-control-sm mb-1" id="edit-transcript-${id}" name="transcript" rows="2"></textarea>` : ''}
    </fieldset>`;
  }

  /// Saves what changed: the waypoint, then each file's texts, then starts the new files' uploads. True when all saved.
  async function save(form) {
    const status = form.querySelector('[data-editor-status]');
    const say = (text, failed = false) => {
      status.textContent = text;
      status.classList.toggle('text-danger', failed);
      if (failed) { status.tabIndex = -1; status.focus(); }
    };
    const name = form.elements.name.value.trim();
    if (!name) { say('Enter a name.', true); form.elements.name.focus(); return false; }
    const waypointURL = `${data.apiTourURL}/waypoints/${current.id}`;
    const saved = await sendJSON('PATCH', waypointURL, { name, description: form.elements.description.value });
    if (!saved.ok) { say(saved.message, true); return false; }
    for (const fieldset of form.querySelectorAll('fieldset[data-asset-id]')) {
      const assetURL = `/api/v1/manage/assets/${fieldset.dataset.assetId}`;
      const patch = {};
      for (const field of fieldset.querySelectorAll('[name="title"], [name="altText"]')) {
        if (field.value !== field.dataset.saved) patch[field.name] = field.value;
      }
      if (Object.keys(patch).length) {
        const result = await sendJSON('PATCH', assetURL, patch);
        if (!result.ok) { say(result.message, true); return false; }
        for (const field of fieldset.querySelectorAll('[data-saved]')) field.dataset.saved = field.value;
      }
      const transcript = fieldset.querySelector('[name="transcript"]');
      if (transcript?.value.trim()) {
        const result = await sendJSON('POST', `${assetURL}/transcript`, { text: transcript.value });
        if (!result.ok) { say(result.message, true); return false; }
        transcript.value = '';
      }
      const captions = fieldset.querySelector('[name="captions"]');
      if (captions?.files.length) {
        const body = new FormData();
        body.append('file', captions.files[0]);
        const result = await sendJSON('POST', `${assetURL}/captions`, body);
        if (!result.ok) { say(result.message, true); return false; }
        captions.value = '';
      }
    }
    current = { ...current, ...saved.data };
    renamed(saved.data);
    const files = [...form.querySelector('input[name="file"]').files];
    form.querySelector('input[name="file"]').value = '';
    if (files.length) {
      const waypointId = current.id;
      uploadFiles(files, uploadTarget(data, waypointId, box.querySelector('[data-editor-uploads]')), () => {
        refreshStatus();
        refreshFiles(waypointId);
      });
    }
    say(`“${saved.data.name}” saved.`);
    mapStatus(`“${saved.data.name}” saved.`);
    refreshStatus();
    return true;
  }

  /// The new name on the marker, its row and the panel's heading.
  function renamed(waypoint) {
    const marker = markers.get(String(waypoint.id));
    if (marker) {
      marker.waypoint.name = waypoint.name;
      marker.setTooltipContent(escapeText(waypoint.name));
      marker.getElement()?.setAttribute('title', waypoint.name);
      marker.getElement()?.setAttribute('alt', waypoint.name);
    }
    const link = document.querySelector(`#waypoint-${waypoint.id} a.waypoint-name`);
    if (link) link.textContent = waypoint.name;
    const heading = box.querySelector('[data-editor-name]');
    if (heading) heading.textContent = waypoint.name;
  }

  /// After an upload ends: the open panel lists the stop's files again, with what was typed and the focus kept.
  async function refreshFiles(waypointId) {
    if (box.hidden || !current || String(current.id) !== String(waypointId)) return;
    const typed = new Map([...box.querySelectorAll('input[id]:not([type=file]), textarea[id]')].map((field) => [field.id, field.value]));
    const focused = box.contains(document.activeElement) ? document.activeElement.id : null;
    const uploads = [...box.querySelector('[data-editor-uploads]').children];
    await open(waypointId, { focus: false });
    for (const [id, value] of typed) {
      const field = document.getElementById(id);
      if (field && box.contains(field)) field.value = value;
    }
    if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
    box.querySelector('[data-editor-uploads]').append(...uploads);
  }

  function close() {
    const id = current?.id;
    box.hidden = true;
    box.replaceChildren();
    current = null;
    document.querySelector(`#waypoint-${id} [data-action="edit-waypoint"]`)?.focus();
  }

  function addButton(li) {
    if (li.querySelector('[data-action="edit-waypoint"]')) return;
    const name = li.querySelector('.waypoint-name')?.textContent ?? '';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-sm btn-outline-primary';
    button.dataset.action = 'edit-waypoint';
    button.textContent = 'Edit here';
    button.setAttribute('aria-label', `Edit ${name} beside the map`);
    button.addEventListener('click', () => open(li.dataset.id));
    li.querySelector(':scope > .me-auto')?.insertAdjacentElement('afterend', button);
  }

  return { open, refreshFiles, addButton };
}

/// One line in the map's status region (read out by screen readers), with an optional action such as "Undo".
function mapStatus(text, actionLabel, action) {
  const status = document.getElementById('map-status');
  if (!status) return;
  status.replaceChildren(document.createTextNode(text));
  if (actionLabel) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'btn btn-link btn-sm p-0 ms-2 align-baseline';
    button.dataset.action = 'undo';
    button.textContent = actionLabel;
    button.addEventListener('click', () => { button.disabled = true; action(); });
    status.append(button);
  }
}

/// Square kilometres of a frame: the same formula as the server's `Frame.areaKm2`.
export function frameAreaKm2(f) {
  const radius = 6371.0088;
  return radius * radius * ((f.east - f.west) * Math.PI / 180) * (Math.sin(f.north * Math.PI / 180) - Math.sin(f.south * Math.PI / 180));
}

/// Width and height in km of a frame, measured across its middle.
function frameSides(f) {
  const middle = (f.north + f.south) / 2;
  const width = 111.32 * Math.cos(middle * Math.PI / 180) * (f.east - f.west);
  const height = 110.57 * (f.north - f.south);
  return [width, height];
}

/// The frame's reason, beside the fields (an empty message hides it); announced by screen readers.
function frameMessage(message) {
  let box = document.getElementById('frame-message');
  const anchor = document.getElementById('north')?.closest('fieldset');
  if (!box && anchor) {
    box = document.createElement('div');
    box.id = 'frame-message';
    box.className = 'alert alert-warning mt-2';
    box.setAttribute('role', 'status');
    box.setAttribute('aria-live', 'polite');
    // After the legend, which must stay the fieldset's first child to name it.
    const legend = anchor.querySelector(':scope > legend');
    if (legend) legend.insertAdjacentElement('afterend', box); else anchor.insertAdjacentElement('afterbegin', box);
  }
  if (!box) return;
  box.textContent = message;
  box.hidden = !message;
}

/// Before the frame is saved: one over the limit is refused with its reason; a tiny or sliver-thin one (under
/// 0.05 km² or thinner than 1:20, usually a slip of a handle or a typo) asks first.
function guardFrameForm(form, inputs, maxAreaKm2) {
  if (!form) return;
  form.addEventListener('submit', (event) => {
    const f = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, parseFloat(el.value)]));
    if (Object.values(f).some(Number.isNaN) || f.north <= f.south || f.east <= f.west) return; // the server explains
    const area = frameAreaKm2(f);
    if (maxAreaKm2 && area > maxAreaKm2) {
      event.preventDefault();
      frameMessage(`This frame is about ${Math.round(area).toLocaleString('en-US')} km², over the ${maxAreaKm2.toLocaleString('en-US')} km² limit: not saved. Make it smaller.`);
      return;
    }
    const [width, height] = frameSides(f);
    const ratio = Math.min(width, height) / Math.max(width, height);
    if (area < 0.05 || ratio < 1 / 20) {
      const size = `${(width * 1000).toFixed(0)} m × ${(height * 1000).toFixed(0)} m`;
      const why = area < 0.05 ? 'very small' : 'very thin';
      if (!window.confirm(`This frame is ${why} (${size}). Save it anyway?`)) {
        event.preventDefault();
        frameMessage(`Not saved: the frame is ${why} (${size}).`);
      }
    }
  });
}

function fillCoordinates({ lat, lng }) {
  document.getElementById('wp-latitude').value = lat.toFixed(6);
  document.getElementById('wp-longitude').value = lng.toFixed(6);
}

/// The configured tile server, or a plain grid drawn in the browser: no request leaves this server.
/// The frame's map drawn from the server's open data (the same the package will carry), when the editor has no tiles or
/// they do not load (agency networks often block tile servers): after the third failed tile, once.
function setUpDrawnMap(map, base, data) {
  if (!data.basemapURL) return;
  let asked = false;
  const draw = async () => {
    if (asked) return;
    asked = true;
    try {
      const response = await fetch(data.basemapURL, { headers: { Accept: 'application/geo+json' } });
      if (!response.ok) return;  // nothing to draw here: the grid stays
      const geojson = await response.json();
      addBasemap(L, map, geojson, geojson.attribution);
      map.getContainer().dataset.basemap = 'ready';
    } catch {
      asked = false;
    }
  };
  // A package's own drawn map (the review page) is drawn as the player draws it, over the tiles.
  if (!data.tileURL || data.basemapShips) { draw(); return; }
  let failures = 0;
  base.on('tileerror', () => { if (++failures >= 3) draw(); });
}

function baseLayer(template, data = {}) {
  if (template) {
    // A package's own tiles exist only in its zoom range: Leaflet stretches the nearest level beyond it.
    const options = { maxZoom: 20, crossOrigin: true };
    if (Number.isInteger(data.tileMinZoom)) options.minNativeZoom = data.tileMinZoom;
    if (Number.isInteger(data.tileMaxZoom)) options.maxNativeZoom = data.tileMaxZoom;
    if (data.tileAttribution) {
      options.attribution = data.tileAttributionURL
        ? `<a href="${escapeText(data.tileAttributionURL)}" rel="noopener">${escapeText(data.tileAttribution)}</a>`
        : escapeText(data.tileAttribution);
    }
    return L.tileLayer(template, options);
  }
  const Grid = L.GridLayer.extend({
    createTile(coords) {
      const tile = document.createElement('canvas');
      const size = this.getTileSize();
      tile.width = size.x; tile.height = size.y;
      const ctx = tile.getContext('2d');
      ctx.fillStyle = '#eef3ea';
      ctx.fillRect(0, 0, size.x, size.y);
      ctx.strokeStyle = '#c5d3bf';
      ctx.strokeRect(0.5, 0.5, size.x - 1, size.y - 1);
      return tile;
    },
  });
  return new Grid({ maxZoom: 20 });
}

/// The frame rectangle with four draggable corner handles; moving a corner moves the two edges it joins.
function frameLayer(map, f, inputs) {
  const rectangle = L.rectangle([[f.south, f.west], [f.north, f.east]], { color: '#2f6f3e', weight: 2, fillOpacity: 0.06, interactive: false }).addTo(map);
  const handles = {};
  const layer = { rectangle, setFrame, writeInputs };
  if (inputs) {
    for (const corner of ['nw', 'ne', 'sw', 'se']) {
      const handle = L.marker(cornerLatLng(corner), {
        draggable: true, keyboard: false, title: `Frame corner ${corner.toUpperCase()}`,
        icon: L.divIcon({ className: `frame-handle frame-handle-${corner}`, iconSize: [14, 14] }),
      }).addTo(map);
      handle.on('drag', () => {
        const { lat, lng } = handle.getLatLng();
        if (corner.startsWith('n')) f.north = lat; else f.south = lat;
        if (corner.endsWith('w')) f.west = lng; else f.east = lng;
        normalise();
        rectangle.setBounds([[f.south, f.west], [f.north, f.east]]);
        writeInputs();
      });
      handle.on('dragend', placeHandles);
      handles[corner] = handle;
    }
  }
  function cornerLatLng(corner) {
    return [corner.startsWith('n') ? f.north : f.south, corner.endsWith('w') ? f.west : f.east];
  }
  function normalise() {
    if (f.north < f.south) [f.north, f.south] = [f.south, f.north];
    if (f.east < f.west) [f.east, f.west] = [f.west, f.east];
  }
  function placeHandles() {
    for (const [corner, handle] of Object.entries(handles)) handle.setLatLng(cornerLatLng(corner));
  }
  function setFrame(values) {
    Object.assign(f, values);
    rectangle.setBounds([[f.south, f.west], [f.north, f.east]]);
    placeHandles();
  }
  function writeInputs() {
    if (!inputs) return;
    for (const key of ['north', 'south', 'east', 'west']) {
      inputs[key].value = f[key].toFixed(6);
      inputs[key].dispatchEvent(new Event('change'));
    }
  }
  return layer;
}

function addFrameButton(map, onClick) {
  const Control = L.Control.extend({
    onAdd() {
      const button = L.DomUtil.create('button', 'btn btn-light btn-sm border');
      button.type = 'button';
      button.textContent = 'Frame the visible area';
      L.DomEvent.disableClickPropagation(button);
      button.addEventListener('click', () => onClick(button));
      return button;
    },
  });
  new Control({ position: 'topright' }).addTo(map);
}

/// The circle within which an app plays the stop (orange when it overlaps another stop's). With `editable` (the
/// waypoint page), a handle on its east edge sets the radius by dragging, kept in step with the number field
/// `wp-radius` both ways; the field is the keyboard's way to the same value.
function triggerZone(map, waypoint, editable) {
  const colour = waypoint.overlaps ? '#b35c00' : '#1565c0';
  const circle = L.circle([waypoint.latitude, waypoint.longitude], {
    radius: waypoint.triggerRadiusMeters, color: colour, weight: 2, fillOpacity: 0.08, interactive: false,
    className: waypoint.overlaps ? 'trigger-zone trigger-zone-overlap' : 'trigger-zone',
  }).addTo(map);
  const field = editable ? document.getElementById('wp-radius') : null;
  let handle = null;
  const edgeOf = () => {
    const centre = circle.getLatLng();
    const metresPerDegree = 111320 * Math.cos(centre.lat * Math.PI / 180);
    return L.latLng(centre.lat, centre.lng + circle.getRadius() / metresPerDegree);
  };
  if (field && !field.disabled) {
    handle = L.marker(edgeOf(), {
      draggable: true, keyboard: false, title: 'Drag to set the trigger radius',
      icon: L.divIcon({ className: 'zone-handle', iconSize: [16, 16], iconAnchor: [8, 8] }),
    }).addTo(map);
    handle.on('drag', () => {
      const metres = Math.min(500, Math.max(5, Math.round(map.distance(circle.getLatLng(), handle.getLatLng()))));
      circle.setRadius(metres);
      field.value = String(metres);
    });
    handle.on('dragend', () => handle.setLatLng(edgeOf()));
    field.addEventListener('input', () => {
      const metres = Number(field.value);
      if (Number.isInteger(metres) && metres >= 5 && metres <= 500) { circle.setRadius(metres); handle.setLatLng(edgeOf()); }
    });
  }
  return {
    moveTo(latlng) { circle.setLatLng(latlng); if (handle) handle.setLatLng(edgeOf()); },
    bounds() { return L.latLng(circle.getLatLng()).toBounds(circle.getRadius() * 2); },
  };
}

function numberIcon(order) {
  return L.divIcon({ className: 'waypoint-marker', html: `<span>${Number(order)}</span>`, iconSize: [28, 28], iconAnchor: [14, 14] });
}

/// Text made safe for HTML, in element content and in quoted attribute values alike.
function escapeText(text) {
  const span = document.createElement('span');
  span.textContent = text;
  return span.innerHTML.replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

function showMessage(message) {
  const alert = document.createElement('div');
  alert.className = 'alert alert-danger';
  alert.setAttribute('role', 'alert');
  alert.textContent = message;
  mapElement.insertAdjacentElement('beforebegin', alert);
  setTimeout(() => alert.remove(), 8000);
}

function setUpSortable() {
  const list = document.getElementById('waypoint-list');
  if (!list || list.dataset.sortable !== 'true' || !window.Sortable) return;
  const url = JSON.parse(mapElement?.dataset.map || '{}').orderURL;
  window.Sortable.create(list, {
    handle: '.drag-handle',
    animation: 150,
    onEnd: async () => {
      const ids = [...list.children].map((li) => li.dataset.id);
      const result = await postForm(url, { ids });
      if (!result.ok) { showMessage(result.message); return; }
      ids.forEach((id, index) => {
        const marker = mapElement.markers?.get(id);
        if (marker) marker.setIcon(numberIcon(index + 1));
      });
      list.querySelectorAll('li').forEach((li, index, all) => {
        li.querySelector('button[aria-label^="Move"][aria-label$=" up"]')?.toggleAttribute('disabled', index === 0);
        li.querySelector('button[aria-label^="Move"][aria-label$=" down"]')?.toggleAttribute('disabled', index === all.length - 1);
      });
      refreshStatus();
    },
  });
}

/// The trail line: drawn from the tour's route; in edit mode a click adds a vertex and vertices drag.
function setUpRoute(map, data) {
  const line = L.polyline((data.route || []).map(([lng, lat]) => [lat, lng]), { color: '#b5441d', weight: 3, dashArray: '6 4' }).addTo(map);
  const tools = document.getElementById('route-tools');
  let editing = false;
  let handles = [];
  const state = { editing: () => editing, add };
  if (!tools || !data.editable || !data.routeURL) return state;
  tools.hidden = false;
  const editButton = document.getElementById('route-edit');
  const saveButton = document.getElementById('route-save');
  const clearButton = document.getElementById('route-clear');
  editButton.addEventListener('click', () => {
    editing = !editing;
    editButton.textContent = editing ? 'Stop drawing' : 'Draw the route on the map';
    editButton.setAttribute('aria-pressed', String(editing));
    saveButton.hidden = !editing;
    if (editing) showHandles(); else hideHandles();
  });
  saveButton.addEventListener('click', () => save(line.getLatLngs()));
  clearButton.addEventListener('click', () => {
    if (!window.confirm('Remove the route?')) return;
    line.setLatLngs([]);
    hideHandles();
    save([]);
  });
  function add(latlng) {
    line.addLatLng(latlng);
    showHandles();
  }
  function showHandles() {
    hideHandles();
    handles = line.getLatLngs().map((latlng, index) => {
      const handle = L.marker(latlng, { draggable: true, keyboard: false, title: `Route point ${index + 1}`,
        icon: L.divIcon({ className: 'route-handle', iconSize: [10, 10] }) }).addTo(map);
      handle.on('drag', () => {
        const points = line.getLatLngs();
        points[index] = handle.getLatLng();
        line.setLatLngs(points);
      });
      return handle;
    });
  }
  function hideHandles() { handles.forEach((h) => h.remove()); handles = []; }
  async function save(latlngs) {
    const route = JSON.stringify(latlngs.map((p) => [Number(p.lng.toFixed(7)), Number(p.lat.toFixed(7))]));
    const result = await postForm(data.routeURL, { route });
    if (!result.ok) { showMessage(result.message); return; }
    const summary = document.getElementById('route-summary');
    if (summary) summary.textContent = result.data.points ? `${result.data.points} points, ${(result.data.lengthMeters / 1000).toFixed(2)} km (reload for the new estimate)` : 'none';
  }
  return state;
}

/// The frame editor's tile count and size estimate, live while the rectangle or the zoom fields change.
/// The same Web Mercator arithmetic as the server's `TileMath` (and Python's mercantile).
export function tileRange(frame, zoom) {
  const tile = (lat, lng) => {
    const x = lng / 360 + 0.5;
    const sin = Math.sin(lat * (Math.PI / 180));
    const y = 0.5 - 0.25 * Math.log((1 + sin) / (1 - sin)) / Math.PI;
    const z2 = 2 ** zoom;
    const index = (v) => (v <= 0 ? 0 : v >= 1 ? z2 - 1 : Math.floor((v + 1e-14) * z2));
    return [index(x), index(y)];
  };
  const west = Math.max(-180, frame.west), south = Math.max(-85.051129, frame.south);
  const east = Math.min(180, frame.east), north = Math.min(85.051129, frame.north);
  const [x0, y0] = tile(north, west);
  const [x1, y1] = tile(south + 1e-11, east - 1e-11);
  return x1 < x0 || y1 < y0 ? 0 : (x1 - x0 + 1) * (y1 - y0 + 1);
}

function setUpTileEstimate() {
  const box = document.getElementById('tile-estimate');
  const text = document.getElementById('tile-estimate-text');
  const warning = document.getElementById('tile-estimate-warning');
  if (!box || !text) return;
  const fields = Object.fromEntries(['north', 'south', 'east', 'west', 'minZoom', 'maxZoom'].map((k) => [k, document.getElementById(k)]));
  const cap = Number(box.dataset.cap);
  const bytesPerTile = Number(box.dataset.bytesPerTile) || 20480;
  const fromUpload = box.dataset.uploadMinZoom !== undefined;
  const update = () => {
    const frame = Object.fromEntries(['north', 'south', 'east', 'west'].map((k) => [k, parseFloat(fields[k]?.value)]));
    let minZoom = fromUpload ? Number(box.dataset.uploadMinZoom) : parseInt(fields.minZoom?.value, 10);
    let maxZoom = fromUpload ? Number(box.dataset.uploadMaxZoom) : parseInt(fields.maxZoom?.value, 10);
    if (Object.values(frame).some(Number.isNaN) || Number.isNaN(minZoom) || Number.isNaN(maxZoom)
        || frame.north <= frame.south || frame.east <= frame.west) return;
    minZoom = Math.max(0, Math.min(20, minZoom));
    maxZoom = Math.max(minZoom, Math.min(20, maxZoom));
    let count = 0;
    for (let z = minZoom; z <= maxZoom; z += 1) count += tileRange(frame, z);
    text.textContent = `${count.toLocaleString('en-US')} tiles at zoom ${minZoom}–${maxZoom}, about ${formatBytes(count * bytesPerTile)}`;
    if (warning) warning.hidden = !(box.dataset.server === 'true' && count > cap);
  };
  for (const field of Object.values(fields)) {
    field?.addEventListener('input', update);
    field?.addEventListener('change', update);
  }
  update();
}

function formatBytes(bytes) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes, unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}
