// The tour map's layers: the tiles or the plain grid, the drawn open-data map when the tiles are off or fail, the
// frame's rectangle with its handles, the trigger zones, the stops' numbered markers and the route.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { postForm } from './panel.js';
import { escapeText, showMessage } from './tour-waypoints.js';
import { addBasemap } from './visit-basemap.js';

/// The configured tile server, or a plain grid drawn in the browser: no request leaves this server.
/// The frame's map drawn from the server's open data (the same the package will carry), when the editor has no tiles or
/// they do not load (agency networks often block tile servers): after the third failed tile, once.
export function setUpDrawnMap(map, base, data) {
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
export function baseLayer(template, data = {}) {
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
export function frameLayer(map, f, inputs) {
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
export function addFrameButton(map, onClick) {
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
export function triggerZone(map, waypoint, editable) {
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
export function numberIcon(order) {
  return L.divIcon({ className: 'waypoint-marker', html: `<span>${Number(order)}</span>`, iconSize: [28, 28], iconAnchor: [14, 14] });
}
/// The trail line: drawn from the tour's route; in edit mode a click adds a vertex and vertices drag.
export function setUpRoute(map, data) {
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
