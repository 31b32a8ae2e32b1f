// The player's map: Leaflet (served from /vendor/), tiles checked one by one against the signed tile index, the
// route, every stop as a numbered marker (the number of the stop list) with its trigger zone, and the visitor's position.
// Leaflet puts a string given to a tooltip or an icon into innerHTML, so the manifest's texts reach it only as DOM
// nodes whose textContent is set: a stop named like markup shows as that text and never becomes markup.
import { sha256Hex } from './visit-trust.js';
import { addBasemap } from './visit-basemap.js';

const L = globalThis.L;
export const DEFAULT_RADIUS = 30;

/** Metres between two points (haversine). */
export function distanceMeters(a, b) {
  const radius = 6371008.8;
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * radius * Math.asin(Math.sqrt(h));
}

/** An element holding `text` as text (for Leaflet tooltips and icons, which take a node as it is). */
export function textElement(text, className) {
  const span = document.createElement('span');
  if (className) span.className = className;
  span.textContent = text;
  return span;
}

/** A tile layer that shows only tiles whose SHA-256 the verified index lists (from the cache when offline). */
function verifiedTiles(urlFor, index, options, onRefused) {
  const Layer = L.GridLayer.extend({
    createTile(coords, done) {
      const tile = document.createElement('img');
      tile.alt = '';
      tile.setAttribute('role', 'presentation');
      const key = `${coords.z}/${coords.x}/${coords.y}`;
      const expected = index[key];
      if (!expected) { setTimeout(() => done(null, tile), 0); return tile; }
      fetch(urlFor(coords.z, coords.x, coords.y)).then(async (response) => {
        if (!response.ok) throw new Error(`tile ${key}: HTTP ${response.status}`);
        const bytes = await response.arrayBuffer();
        if (await sha256Hex(bytes) !== expected) { onRefused(key); throw new Error(`tile ${key} does not match the signed index`); }
        tile.onload = () => { URL.revokeObjectURL(tile.src); done(null, tile); };
        tile.src = URL.createObjectURL(new Blob([bytes], { type: response.headers.get('Content-Type') || 'image/png' }));
      }).catch((error) => done(error, tile));
      return tile;
    },
  });
  return new Layer(options);
}

export class TourMap {
  /** `nameOf(waypoint)` answers a stop's name in the chosen language (plain text). */
  constructor(element, { onStop, nameOf = (waypoint) => waypoint.name }) {
    this.element = element;
    this.onStop = onStop;
    this.nameOf = nameOf;
    this.map = null;
    this.zones = new Map();
    this.markers = [];
    this.position = null;
    this.manifest = null;   // the manifest drawn now
    this.bounds = null;
  }

  /** Draws a verified manifest. `tileIndex` is the parsed, verified tiles/index.json or null; without it the route,
   * zones and stops are drawn at once and `showTiles` adds the tiles when the index has been checked. */
  show(manifest, tileIndex, tileURL, onRefused) {
    if (!L) return;
    if (this.map) { this.map.remove(); this.zones.clear(); this.markers = []; this.position = null; }
    delete this.element.dataset.basemap;
    const b = manifest.bounds;
    const bounds = L.latLngBounds([b.southEast.latitude, b.northWest.longitude], [b.northWest.latitude, b.southEast.longitude]);
    const tiles = manifest.tiles;
    this.manifest = manifest;
    this.bounds = bounds;
    this.map = L.map(this.element, {
      minZoom: tiles ? tiles.minZoom : 3, maxZoom: tiles ? tiles.maxZoom : 19, maxBounds: bounds.pad(0.5), keyboard: true,
    });
    this.map.fitBounds(bounds);
    if (tileIndex) this.showTiles(manifest, tileIndex, tileURL, onRefused);
    if (Array.isArray(manifest.route) && manifest.route.length > 1) {
      L.polyline(manifest.route.map(([lon, lat]) => [lat, lon]), { color: '#7a3412', weight: 4, className: 'visit-route' }).addTo(this.map);
    }
    for (const waypoint of [...manifest.waypoints].sort((a, c) => a.order - c.order)) {
      const at = [waypoint.coordinates.latitude, waypoint.coordinates.longitude];
      const zone = L.circle(at, {
        radius: waypoint.triggerRadiusMeters || DEFAULT_RADIUS, color: '#1565c0', weight: 2, fillOpacity: 0.12, className: 'visit-zone',
      }).addTo(this.map);
      this.zones.set(waypoint.order, zone);
      this.addStopMarker(waypoint, at);
    }
  }

  /** Adds the map tiles of `manifest`, each checked against `tileIndex`; nothing when the map now shows another
   * manifest (it was drawn again while the index was being checked). */
  showTiles(manifest, tileIndex, tileURL, onRefused) {
    const tiles = manifest.tiles;
    if (!L || !this.map || this.manifest !== manifest || !tiles || !tileIndex) return;
    verifiedTiles(tileURL, tileIndex.tiles || {}, { minZoom: tiles.minZoom, maxZoom: tiles.maxZoom, bounds: this.bounds.pad(0.1) }, onRefused)
      .addTo(this.map);
  }

  /** Draws the package's drawn map (`geojson`, checked against the signed manifest) beneath the route and stops, with
   * its credit; `#visit-map[data-basemap="ready"]` once drawn. Nothing when the map now shows another manifest. */
  showBasemap(manifest, geojson) {
    if (!L || !this.map || this.manifest !== manifest || !manifest.basemap) return;
    addBasemap(L, this.map, geojson, manifest.basemap.attribution);
    this.element.dataset.basemap = 'ready';
  }

  /** A marker showing the stop's number, as the stop list numbers it; a button for the keyboard too (Enter or Space
   * opens the stop, focus shows its name as hovering does). */
  addStopMarker(waypoint, at) {
    const order = String(waypoint.order);
    const icon = L.divIcon({
      html: textElement(order, 'visit-marker-number'), className: 'visit-marker', iconSize: [30, 30], iconAnchor: [15, 15], tooltipAnchor: [12, 0],
    });
    const marker = L.marker(at, { icon, keyboard: true }).addTo(this.map);
    marker.bindTooltip(textElement(''), { direction: 'right' });
    marker.on('click', () => this.onStop(waypoint.order, true));
    const element = marker.getElement();
    element.dataset.markerOrder = order;
    element.setAttribute('role', 'button');
    element.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      this.onStop(waypoint.order, true);
    });
    element.addEventListener('focus', () => marker.openTooltip());
    element.addEventListener('blur', () => marker.closeTooltip());
    this.markers.push({ waypoint, marker });
    this.label(waypoint, marker);
  }

  /** Names the stop's marker (tooltip and accessible name) in the chosen language, as text; a closed stop says so. */
  label(waypoint, marker) {
    const name = this.nameOf(waypoint) || '';
    const closed = marker.getElement().dataset.closed === 'true' ? ' (closed)' : '';
    marker.setTooltipContent(textElement(`${waypoint.order}. ${name}${closed}`));
    marker.getElement().setAttribute('aria-label', `Stop ${waypoint.order}: ${name}${closed}`);
  }

  /** Draws the stops that `isClosed(waypoint)` says are closed as closed (grey, struck through, "closed" in their
   * name), and the others as open again: a visitor reading the map sees what the stop list says. */
  markClosed(isClosed) {
    for (const { waypoint, marker } of this.markers) {
      const element = marker.getElement();
      const closed = Boolean(isClosed(waypoint));
      if ((element.dataset.closed === 'true') === closed) continue;
      if (closed) element.dataset.closed = 'true';
      else delete element.dataset.closed;
      this.label(waypoint, marker);
    }
  }

  /** After a language change: every marker named again, without drawing the map anew. */
  relabel() {
    for (const { waypoint, marker } of this.markers) this.label(waypoint, marker);
  }

  showPosition(latitude, longitude, accuracy) {
    if (!this.map) return;
    if (!this.position) {
      this.position = L.circleMarker([latitude, longitude], { radius: 7, color: '#fff', weight: 2, fillColor: '#0d47a1', fillOpacity: 1 })
        .addTo(this.map).bindTooltip(textElement('You are here'));
    } else {
      this.position.setLatLng([latitude, longitude]);
    }
    this.position.options.accuracy = accuracy;
  }
}
