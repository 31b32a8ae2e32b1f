// The tour map: frame editor (rectangle with corner handles, synced with the N/S/E/W inputs),
// click-to-add (a name, a description and files) and drag-to-move waypoints, a panel beside the map that writes a
// stop's text and its files' texts, drag-and-drop reordering, each waypoint's trigger zone as a circle (on the
// waypoint page its edge can be dragged to set the radius). After each change the page re-reads its checklist and
// duration. Every action also works without this script through the plain forms and the waypoint pages.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { confirmButtons, postForm } from './panel.js';
import { frameAreaKm2, frameMessage, guardFrameForm, setUpTileEstimate } from './tour-frame.js';
import { addFrameButton, baseLayer, frameLayer, numberIcon, setUpDrawnMap, setUpRoute, triggerZone } from './tour-map-layers.js';
import { setUpPlaceSearch } from './tour-place-search.js';
import { waypointEditor } from './tour-waypoint-editor.js';
import {
  addWaypointRow, escapeText, fillCoordinates, mapStatus, offerNewWaypoint, refreshStatus,
  resetWaypointForm, setUpRowEditing, setUpSortable, showMessage, uploadTarget,
} from './tour-waypoints.js';
import { uploadFiles } from './uploader.js';

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
