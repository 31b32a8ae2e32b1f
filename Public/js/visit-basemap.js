// The drawn map of a tour (the package's map/basemap.geojson: OpenStreetMap's woods, water, buildings, streams, roads,
// paths and named points, and the terrain's contour lines), styled for walkers: paths prominent, contours quiet, names
// readable. Lines and areas are projected once and drawn on one canvas of their own (a phone draws a 10 km frame's
// tens of thousands of points in well under a second), in a pane above any map tiles and beneath the route and the
// stops; named points are Leaflet markers with their names. Used by the visitor player, the panel's tour map when its
// tiles are off, and the review map. Names reach Leaflet only as DOM text nodes.

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

/** Web Mercator in units of the whole world (0–1), as Leaflet's pixels at zoom 0 divided by 256. */
function mercator(lon, lat) {
  const clamped = Math.max(Math.min(lat, 85.0511), -85.0511) * Math.PI / 180;
  return [(lon + 180) / 360, (1 - Math.log(Math.tan(clamped) + 1 / Math.cos(clamped)) / Math.PI) / 2];
}

/** The lines and areas of `features` as flat arrays of projected points, each with its style: projected once, so a
 * redraw only scales and shifts them (Leaflet's own layers would make an object per point and project it again). */
export function projectShapes(features) {
  const shapes = [];
  const flat = (positions) => {
    const points = new Float64Array(positions.length * 2);
    positions.forEach(([lon, lat], i) => { const [x, y] = mercator(lon, lat); points[2 * i] = x; points[2 * i + 1] = y; });
    return points;
  };
  for (const feature of features) {
    const geometry = feature?.geometry;
    if (!geometry || geometry.type === 'Point') continue;
    const style = basemapStyle(feature.properties);
    let parts;
    switch (geometry.type) {
      case 'LineString': parts = [geometry.coordinates]; break;
      case 'MultiLineString': case 'Polygon': parts = geometry.coordinates; break;
      case 'MultiPolygon': parts = geometry.coordinates.flat(); break;
      default: continue;
    }
    shapes.push({ style, rings: parts.filter(Array.isArray).map(flat) });
  }
  return shapes;
}

/** A canvas in the basemap pane that draws `shapes` (from `projectShapes`) for the map's view, with a margin around
 * it so a drag shows no blank edge; redrawn when a move or a zoom ends. */
function shapeLayer(L, shapes) {
  const margin = 0.3;
  return L.Layer.extend({
    onAdd(map) {
      this.canvas = document.createElement('canvas');
      this.canvas.className = 'leaflet-basemap-canvas';
      this.canvas.setAttribute('aria-hidden', 'true');
      this.canvas.style.position = 'absolute';
      this.canvas.style.pointerEvents = 'none';
      map.getPane('basemap').appendChild(this.canvas);
      map.on('moveend zoomend resize viewreset', this.redraw, this);
      map.on('zoomstart', this.hide, this);
      this.redraw();
    },
    onRemove(map) {
      map.off('moveend zoomend resize viewreset', this.redraw, this);
      map.off('zoomstart', this.hide, this);
      this.canvas.remove();
    },
    hide() { this.canvas.style.visibility = 'hidden'; },
    redraw() {
      const map = this._map;
      if (!map) return;
      const size = map.getSize();
      const pad = size.multiplyBy(margin).round();
      const topLeft = map.containerPointToLayerPoint([0, 0]).subtract(pad);
      const width = size.x + 2 * pad.x;
      const height = size.y + 2 * pad.y;
      const ratio = window.devicePixelRatio || 1;
      const canvas = this.canvas;
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
      L.DomUtil.setPosition(canvas, topLeft);
      const ctx = canvas.getContext('2d');
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      const scale = 256 * 2 ** map.getZoom();
      const origin = map.getPixelOrigin();
      const dx = -origin.x - topLeft.x;
      const dy = -origin.y - topLeft.y;
      ctx.lineJoin = 'round';
      for (const { style, rings } of shapes) {
        ctx.beginPath();
        for (const points of rings) {
          for (let i = 0; i < points.length; i += 2) {
            const x = points[i] * scale + dx;
            const y = points[i + 1] * scale + dy;
            if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
          }
        }
        ctx.globalAlpha = 1;
        if (style.fill) {
          ctx.fillStyle = style.fillColor;
          ctx.globalAlpha = style.fillOpacity ?? 1;
          ctx.fill('evenodd');
        }
        if (style.stroke !== false) {
          ctx.strokeStyle = style.color;
          ctx.lineWidth = style.weight ?? 1;
          ctx.lineCap = style.lineCap || 'butt';
          ctx.globalAlpha = style.opacity ?? 1;
          ctx.setLineDash(style.dashArray ? style.dashArray.split(' ').map(Number) : []);
          ctx.stroke();
        }
      }
      canvas.style.visibility = 'visible';
    },
  });
}

/** Adds `geojson` to `map` (a Leaflet map, `L` its module) in a pane between the tiles and the route: lines and areas
 * on one canvas, named points as markers with their names. Returns the layer group. `attribution` is the credit shown
 * in the map's corner, as text. */
export function addBasemap(L, map, geojson, attribution) {
  if (!map.getPane('basemap')) {
    const pane = map.createPane('basemap');
    pane.style.zIndex = 250;  // tiles are 200, the route and zones 400
  }
  const features = Array.isArray(geojson?.features) ? geojson.features : [];
  const Shapes = shapeLayer(L, projectShapes(features));
  const group = L.layerGroup([new Shapes()]);
  // Names of points stay on the map while there are few enough to read; past that, they show on hover or focus.
  const points = features.filter((f) => f?.geometry?.type === 'Point' && Array.isArray(f.geometry.coordinates));
  const named = points.filter((f) => basemapLabel(f.properties)).length;
  const renderer = L.canvas({ pane: 'basemap', padding: 0.3 });
  for (const feature of points) {
    const [lon, lat] = feature.geometry.coordinates;
    const symbol = POINT_SYMBOLS[feature.properties?.kind] || { color: '#444' };
    const label = basemapLabel(feature.properties);
    const marker = L.circleMarker([lat, lon], {
      renderer, pane: 'basemap', radius: 4.5, color: '#fff', weight: 1.5, fillColor: symbol.color, fillOpacity: 1, interactive: Boolean(label),
    });
    if (label) {
      const permanent = named <= 40;
      marker.bindTooltip(textNode(label, 'visit-basemap-label'), {
        permanent, sticky: !permanent, direction: permanent ? 'right' : 'top', className: 'visit-basemap-tooltip', opacity: 0.9,
      });
    }
    group.addLayer(marker);
  }
  group.addTo(map);
  if (attribution && map.attributionControl) {
    // Leaflet writes an attribution as markup: the credit goes in escaped.
    const escaped = String(attribution).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    map.attributionControl.addAttribution(escaped);
  }
  return group;
}
