// The tour map: frame editor (rectangle with corner handles, synced with the N/S/E/W inputs),
// click-to-add and drag-to-move waypoints, drag-and-drop reordering, each waypoint's trigger zone as a
// circle (on the waypoint page its edge can be dragged to set the radius). Every action also works without
// this script through the plain forms on the page.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { postForm, confirmButtons } from './panel.js';

// Where a tour without a frame or waypoints opens: a district of the demo park, close enough to frame by hand.
const DEFAULT_VIEW = { center: [44.4, -122.1], zoom: 10 };
const mapElement = document.getElementById('tour-map');
confirmButtons(document);
if (mapElement) {
  setUpMap(mapElement, JSON.parse(mapElement.dataset.map || '{}'));
}
setUpSortable();
setUpTileEstimate();

function setUpMap(element, data) {
  const map = L.map(element, { zoomSnap: 0.25 });
  element.leafletMap = map;
  baseLayer(data.tileURL, data).addTo(map);
  const inputs = Object.fromEntries(['north', 'south', 'east', 'west'].map((k) => [k, document.getElementById(k)]));
  const frameEditable = data.editable && inputs.north && !inputs.north.disabled;
  let frame = null;
  if (data.frame) {
    frame = frameLayer(map, data.frame, frameEditable ? inputs : null);
    map.fitBounds(frame.rectangle.getBounds(), { padding: [20, 20] });
  } else if (data.waypoints.length) {
    map.fitBounds(L.latLngBounds(data.waypoints.map((w) => [w.latitude, w.longitude])).pad(0.3));
  } else {
    // A new tour opens close enough to frame a park by hand (about 40 km across), never on a continent.
    map.setView(DEFAULT_VIEW.center, DEFAULT_VIEW.zoom);
  }
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
    markers.set(String(waypoint.id), marker);
    // The waypoint page shows the place up close: the zone fills about a third of the map, its handle in reach.
    if (element.dataset.pick === 'true') map.fitBounds(zone.bounds().pad(1));
  };
  data.waypoints.forEach(addMarker);
  mapElement.markers = markers;

  map.on('click', (event) => {
    if (route.editing()) { route.add(event.latlng); return; }
    if (element.dataset.pick === 'true') {
      const marker = markers.values().next().value;
      if (marker) { marker.setLatLng(event.latlng); marker.fire('drag'); }
      fillCoordinates(event.latlng);
      return;
    }
    if (!data.editable || !document.getElementById('waypoint-form')) return;
    const bounds = frame?.rectangle.getBounds();
    if (!bounds || !bounds.contains(event.latlng)) {
      L.popup().setLatLng(event.latlng).setContent(bounds ? 'This place is outside the frame.' : 'Save the frame first.').openOn(map);
      return;
    }
    offerNewWaypoint(map, event.latlng, data, (waypoint) => {
      addMarker({ ...waypoint, url: '', overlaps: false });
      addWaypointRow(waypoint, data);
    });
  });
}

/// A small form at the clicked place: a name, then "Add" saves the waypoint with no page load. The full form below
/// the list (coordinates filled in too, for a ranger who prefers it or has no script) stays.
function offerNewWaypoint(map, latlng, data, added) {
  fillCoordinates(latlng);
  const form = document.createElement('form');
  form.setAttribute('data-new-waypoint', '');
  form.className = 'd-flex flex-column gap-1';
  form.innerHTML = `<label class="form-label small mb-0" for="new-waypoint-name">New waypoint here</label>
    <input class="form-control form-control-sm" id="new-waypoint-name" name="name" maxlength="120" required autocomplete="off">
    <div class="small text-danger" data-new-waypoint-error hidden></div>
    <button type="submit" class="btn btn-primary btn-sm">Add waypoint</button>`;
  const popup = L.popup({ minWidth: 200 }).setLatLng(latlng).setContent(form).openOn(map);
  const name = form.querySelector('input[name="name"]');
  name.focus({ preventScroll: true });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = form.querySelector('[data-new-waypoint-error]');
    if (!name.value.trim()) { error.textContent = 'Enter a name.'; error.hidden = false; name.focus(); return; }
    const button = form.querySelector('button');
    button.disabled = true;
    const result = await postForm(data.newWaypointURL, {
      name: name.value.trim(), latitude: latlng.lat.toFixed(7), longitude: latlng.lng.toFixed(7),
    });
    button.disabled = false;
    if (!result.ok) { error.textContent = result.message; error.hidden = false; name.focus(); return; }
    map.closePopup(popup);
    added(result.data);
    mapStatus(`Waypoint “${result.data.name}” added.`);
    const wpName = document.getElementById('wp-name');
    if (wpName) wpName.value = '';
  });
}

/// The new waypoint's row at the end of the list, with the same links and buttons the page renders.
function addWaypointRow(waypoint, data) {
  const list = document.getElementById('waypoint-list');
  if (!list) return;
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

function escapeText(text) {
  const span = document.createElement('span');
  span.textContent = text;
  return span.innerHTML;
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
