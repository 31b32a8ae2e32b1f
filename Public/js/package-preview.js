// The phone preview of a package: the map drawn only from the package's own MBTiles (served by the panel at the
// package's tiles route), limited to its frame and zoom range, as the app shows it offline.
import * as L from '/vendor/leaflet/leaflet.esm.js';
import { addBasemap } from './visit-basemap.js';

const element = document.getElementById('preview-map');
if (element) {
  const data = JSON.parse(element.dataset.map || '{}');
  const bounds = L.latLngBounds([[data.frame.south, data.frame.west], [data.frame.north, data.frame.east]]);
  const hasTiles = Boolean(data.tileURL);
  const map = L.map(element, {
    maxBounds: bounds.pad(0.05), maxBoundsViscosity: 1,
    minZoom: hasTiles ? data.minZoom : 0, maxZoom: hasTiles ? data.maxZoom : 20, attributionControl: false,
  });
  if (hasTiles) {
    L.tileLayer(data.tileURL, { minZoom: data.minZoom, maxZoom: data.maxZoom, bounds, noWrap: true }).addTo(map);
  }
  if (data.basemapURL) {
    // The package's drawn map, as the phone draws it: over the tiles, beneath the route and the stops.
    fetch(data.basemapURL).then((response) => (response.ok ? response.json() : null)).then((geojson) => {
      if (!geojson) return;
      addBasemap(L, map, geojson, null);
      element.dataset.basemap = 'ready';
    }).catch(() => {});
  }
  L.rectangle(bounds, { color: '#2f6f3e', weight: 1, fill: false, interactive: false }).addTo(map);
  if ((data.route || []).length >= 2) {
    L.polyline(data.route.map(([lng, lat]) => [lat, lng]), { color: '#b5441d', weight: 3, dashArray: '6 4', interactive: false }).addTo(map);
  }
  for (const waypoint of data.waypoints || []) {
    L.marker([waypoint.latitude, waypoint.longitude], {
      title: waypoint.name, alt: waypoint.name,
      icon: L.divIcon({ className: 'waypoint-marker', html: `<span>${Number(waypoint.order)}</span>`, iconSize: [28, 28], iconAnchor: [14, 14] }),
    }).addTo(map);
  }
  if (hasTiles && Number.isInteger(data.startZoom)) map.setView(bounds.getCenter(), data.startZoom);
  else map.fitBounds(bounds);
}
