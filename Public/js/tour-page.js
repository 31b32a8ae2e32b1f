// The tour map: frame editor (rectangle with corner handles, synced with the N/S/E/W inputs),
// click-to-add and drag-to-move waypoints, drag-and-drop reordering. Every action also works without
// this script through the plain forms on the page.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { postForm, confirmButtons } from './panel.js';

const mapElement = document.getElementById('tour-map');
confirmButtons(document);
if (mapElement) {
  setUpMap(mapElement, JSON.parse(mapElement.dataset.map || '{}'));
}
setUpSortable();

function setUpMap(element, data) {
  const map = L.map(element, { zoomSnap: 0.25 });
  baseLayer(data.tileURL).addTo(map);
  const inputs = Object.fromEntries(['north', 'south', 'east', 'west'].map((k) => [k, document.getElementById(k)]));
  const frameEditable = data.editable && inputs.north && !inputs.north.disabled;
  let frame = null;
  if (data.frame) {
    frame = frameLayer(map, data.frame, frameEditable ? inputs : null);
    map.fitBounds(frame.rectangle.getBounds(), { padding: [20, 20] });
  } else if (data.waypoints.length) {
    map.fitBounds(L.latLngBounds(data.waypoints.map((w) => [w.latitude, w.longitude])).pad(0.3));
  } else {
    map.setView([44.4, -122.1], 5);
  }
  if (frameEditable) {
    if (!frame) {
      addFrameButton(map, (button) => {
        button.remove();
        const b = map.getBounds().pad(-0.2);
        frame = frameLayer(map, { north: b.getNorth(), south: b.getSouth(), east: b.getEast(), west: b.getWest() }, inputs);
        frame.writeInputs();
      });
    }
    // Typing a number moves the rectangle at once.
    for (const input of Object.values(inputs)) {
      input.addEventListener('input', () => {
        const values = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, parseFloat(el.value)]));
        if (Object.values(values).some((v) => Number.isNaN(v))) return;
        if (!frame) frame = frameLayer(map, values, inputs);
        else frame.setFrame(values);
      });
    }
  }

  const markers = new Map();
  for (const waypoint of data.waypoints) {
    const marker = L.marker([waypoint.latitude, waypoint.longitude], {
      icon: numberIcon(waypoint.order), draggable: data.editable, title: waypoint.name, keyboard: true, alt: waypoint.name,
    }).addTo(map);
    marker.bindTooltip(escapeText(waypoint.name));
    if (data.editable) {
      marker.on('dragend', async () => {
        const { lat, lng } = marker.getLatLng();
        const result = await postForm(data.moveURLTemplate.replace('{id}', waypoint.id), { latitude: lat.toFixed(7), longitude: lng.toFixed(7) });
        if (result.ok) {
          waypoint.latitude = lat; waypoint.longitude = lng;
          const row = document.querySelector(`#waypoint-${waypoint.id} .small`);
          if (row) row.textContent = `${lat.toFixed(6)}, ${lng.toFixed(6)}`;
        } else {
          marker.setLatLng([waypoint.latitude, waypoint.longitude]);
          showMessage(result.message);
        }
      });
    } else if (element.dataset.pick === 'true') {
      marker.options.draggable = true;
      marker.dragging?.enable();
      marker.on('dragend', () => fillCoordinates(marker.getLatLng()));
    }
    markers.set(String(waypoint.id), marker);
  }
  mapElement.markers = markers;

  map.on('click', (event) => {
    if (element.dataset.pick === 'true') {
      const marker = markers.values().next().value;
      if (marker) marker.setLatLng(event.latlng);
      fillCoordinates(event.latlng);
      return;
    }
    if (!data.editable || !document.getElementById('waypoint-form')) return;
    const bounds = frame?.rectangle.getBounds();
    if (!bounds || !bounds.contains(event.latlng)) {
      L.popup().setLatLng(event.latlng).setContent(bounds ? 'This place is outside the frame.' : 'Save the frame first.').openOn(map);
      return;
    }
    fillCoordinates(event.latlng);
    const name = document.getElementById('wp-name');
    name.scrollIntoView({ behavior: 'smooth', block: 'center' });
    name.focus({ preventScroll: true });
  });
}

function fillCoordinates({ lat, lng }) {
  document.getElementById('wp-latitude').value = lat.toFixed(6);
  document.getElementById('wp-longitude').value = lng.toFixed(6);
}

/// The configured tile server, or a plain grid drawn in the browser: no request leaves this server.
function baseLayer(template) {
  if (template) return L.tileLayer(template, { maxZoom: 20, crossOrigin: true });
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
      ctx.fillStyle = '#7a8c73';
      ctx.font = '11px sans-serif';
      ctx.fillText(`${coords.z}/${coords.x}/${coords.y}`, 6, 16);
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
