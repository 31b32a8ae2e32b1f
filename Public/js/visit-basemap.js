// The drawn map of a tour (the package's map/basemap.geojson: OpenStreetMap's woods, water, buildings, streams, roads,
// paths and named points, and the terrain's contour lines), styled for walkers: paths prominent, contours quiet, names
// readable. Drawn on one canvas in a pane of its own, above any map tiles and beneath the route and the stops. Used by
// the visitor player and by the panel's tour map when its tiles are off. Names reach Leaflet only as DOM text nodes.

/** Leaflet path options for a feature's properties (pure, so the styles are tested without a browser). */
export function basemapStyle(properties) {
  const kind = properties?.kind;
  const cls = properties?.class;
  switch (kind) {
    case 'wood': return { stroke: false, fill: true, fillColor: '#cfe3c1', fillOpacity: 1 };
    case 'water': return { color: '#7fb0d9', weight: 0.6, fill: true, fillColor: '#aed3f0', fillOpacity: 1 };
    case 'building': return { color: '#b9aea4', weight: 0.5, fill: true, fillColor: '#d9d0c8', fillOpacity: 1 };
    case 'contour': return properties.index
      ? { color: '#a57c52', weight: 1.1, opacity: 0.8, fill: false }
      : { color: '#a57c52', weight: 0.5, opacity: 0.55, fill: false };
    case 'stream': return { color: '#4f95cf', weight: cls === 'river' || cls === 'canal' ? 3 : 1.4, fill: false };
    case 'road': return { color: '#8f8f8f', weight: ROAD_WEIGHTS[cls] ?? 2, fill: false, lineCap: 'round' };
    case 'path': return {
      color: '#9c2f12', weight: cls === 'track' ? 2.2 : 2, fill: false, dashArray: cls === 'steps' ? '2 3' : cls === 'track' ? '7 4' : '5 3',
    };
    default: return { color: '#444', weight: 1, fill: false };
  }
}

const ROAD_WEIGHTS = {
  motorway: 5, trunk: 5, primary: 4.5, secondary: 4, tertiary: 3.5, unclassified: 3, residential: 3, living_street: 2.5, road: 2.5, service: 1.8,
};

/** The colour and the one-letter sign of a named point's symbol. */
export const POINT_SYMBOLS = Object.freeze({
  peak: { color: '#5b3a1e', label: 'Peak' },
  viewpoint: { color: '#6b21a8', label: 'Viewpoint' },
  parking: { color: '#1d4ed8', label: 'Parking' },
  toilets: { color: '#0f766e', label: 'Toilets' },
  shelter: { color: '#92400e', label: 'Shelter' },
});

/** What a feature's label says: its name, a peak's height after it, an index contour's height alone; '' for none. */
export function basemapLabel(properties) {
  if (!properties) return '';
  if (properties.kind === 'contour') return properties.index && Number.isFinite(properties.elevation) ? `${properties.elevation} m` : '';
  const name = typeof properties.name === 'string' ? properties.name : '';
  if (properties.kind === 'peak' && Number.isFinite(properties.elevation)) return name ? `${name} (${properties.elevation} m)` : `${properties.elevation} m`;
  return name;
}

function textNode(text, className) {
  const span = document.createElement('span');
  span.className = className;
  span.textContent = text;
  return span;
}

/** Adds `geojson` to `map` (a Leaflet map, `L` its module) in a pane between the tiles and the route; returns the
 * layer. `attribution` is the credit shown in the map's corner, as text. */
export function addBasemap(L, map, geojson, attribution) {
  if (!map.getPane('basemap')) {
    const pane = map.createPane('basemap');
    pane.style.zIndex = 250;  // tiles are 200, the route and zones 400
  }
  const renderer = L.canvas({ pane: 'basemap', padding: 0.3 });
  const features = Array.isArray(geojson?.features) ? geojson.features : [];
  // Names of points stay on the map while there are few enough to read; past that, they show on hover or focus.
  const namedPoints = features.filter((f) => f.geometry?.type === 'Point' && basemapLabel(f.properties)).length;
  // Only labelled features answer the pointer: the canvas tests every interactive shape on each move.
  const layer = L.geoJSON({ type: 'FeatureCollection', features }, {
    pane: 'basemap',
    renderer,
    interactive: false,
    style: (feature) => basemapStyle(feature.properties),
    pointToLayer: (feature, latlng) => {
      const symbol = POINT_SYMBOLS[feature.properties?.kind] || { color: '#444' };
      return L.circleMarker(latlng, {
        renderer, pane: 'basemap', radius: 4.5, color: '#fff', weight: 1.5, fillColor: symbol.color, fillOpacity: 1,
        interactive: Boolean(basemapLabel(feature.properties)),
      });
    },
    onEachFeature: (feature, item) => {
      const label = basemapLabel(feature.properties);
      if (!label) return;
      item.options.interactive = true;
      const permanent = feature.geometry?.type === 'Point' && namedPoints <= 40;
      item.bindTooltip(textNode(label, 'visit-basemap-label'), {
        permanent, sticky: !permanent, direction: permanent ? 'right' : 'top', className: 'visit-basemap-tooltip', opacity: 0.9,
      });
    },
  });
  layer.addTo(map);
  if (attribution && map.attributionControl) {
    // Leaflet writes an attribution as markup: the credit goes in escaped.
    const escaped = String(attribution).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    map.attributionControl.addAttribution(escaped);
  }
  return layer;
}
