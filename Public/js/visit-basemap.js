// The drawn map of a tour (the package's map/basemap.geojson: OpenStreetMap's woods, water, buildings, streams, roads,
// paths and named points, and the terrain's contour lines), styled for walkers: paths prominent, contours quiet, names
// readable. Drawn on one canvas in a pane of its own, above any map tiles and beneath the route and the stops. Used by
// the visitor player and by the panel's tour map when its tiles are off. Names reach Leaflet only as DOM text nodes.
//
// Drawn in batches, not as a Leaflet layer per feature: every feature of one style goes into one canvas path with one
// stroke or fill, from coordinates projected once when the map arrives. A layer per feature cost a state change and a
// stroke each (thousands on a 10 km frame) and a re-projection of every point at each zoom, and a phone with a slow
// CPU took about a second to draw the frame.

/** Leaflet path options for a feature's properties (pure, so the styles are tested without a browser). `minZoom`, when
 * set, is the first zoom that draws the feature: as map styles do, the overview leaves out what would only clutter it
 * (minor contour lines, steps, buildings, service roads), which also keeps the first drawing of a frame quick. */
export function basemapStyle(properties) {
  const kind = properties?.kind;
  const cls = properties?.class;
  switch (kind) {
    case 'wood': return { stroke: false, fill: true, fillColor: '#cfe3c1', fillOpacity: 1 };
    case 'water': return { color: '#7fb0d9', weight: 0.6, fill: true, fillColor: '#aed3f0', fillOpacity: 1 };
    case 'building': return { color: '#b9aea4', weight: 0.5, fill: true, fillColor: '#d9d0c8', fillOpacity: 1, minZoom: 14 };
    case 'contour': return properties.index
      ? { color: '#a57c52', weight: 1.1, opacity: 0.8, fill: false }
      : { color: '#a57c52', weight: 0.5, opacity: 0.55, fill: false, minZoom: 13 };
    case 'stream': return { color: '#4f95cf', weight: cls === 'river' || cls === 'canal' ? 3 : 1.4, fill: false };
    case 'road': {
      const weight = ROAD_WEIGHTS[cls] ?? 2;
      // Round ends only where a line is wide enough for a square end to show at a junction.
      return { color: '#8f8f8f', weight, fill: false, ...(weight >= 3.5 ? { lineCap: 'round' } : {}), ...(cls === 'service' ? { minZoom: 13 } : {}) };
    }
    case 'path': return {
      color: '#9c2f12', weight: cls === 'track' ? 2.2 : 2, fill: false, dashArray: cls === 'steps' ? '2 3' : cls === 'track' ? '7 4' : '5 3',
      ...(cls === 'steps' ? { minZoom: 14 } : {}),
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

/** Web Mercator as Leaflet's default map projects it, scaled to the unit square: x from 0 (180° W) to 1, y from 0
 * (85.05° N) to 1. A point's pixel at zoom z is (x, y) × 256 × 2^z. */
export function mercator(lng, lat) {
  const limit = 85.0511287798;
  const phi = (Math.max(-limit, Math.min(limit, lat)) * Math.PI) / 180;
  return [0.5 + lng / 360, 0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI)];
}

// The order groups are drawn in: areas beneath lines, quiet lines beneath prominent ones.
const KIND_ORDER = ['wood', 'water', 'building', 'contour', 'stream', 'road', 'path'];

function projectRing(coordinates) {
  // Mercator inline (as `mercator` does), without an array per point: this runs for every point of the frame before
  // the first drawing, while the page's code is still cold.
  const points = new Float64Array(coordinates.length * 2);
  const limit = 85.0511287798;
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity, n = 0;
  for (let i = 0; i < coordinates.length; i++) {
    const position = coordinates[i];
    if (!Array.isArray(position)) continue;
    const lng = position[0], lat = position[1];
    if (!Number.isFinite(lng) || !Number.isFinite(lat)) continue;
    const phi = ((lat > limit ? limit : lat < -limit ? -limit : lat) * Math.PI) / 180;
    const x = 0.5 + lng / 360;
    const y = 0.5 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / (2 * Math.PI);
    points[n++] = x;
    points[n++] = y;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  return { points: n === points.length ? points : points.slice(0, n), box: [minX, minY, maxX, maxY] };
}

function union(a, b) {
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** The features of a drawn map made ready to draw (pure, so it is tested without a browser): `groups` in drawing
 * order, each a style with its shapes (rings of projected points and their box, `holes` when a polygon has inner
 * rings and must be filled on its own); `points`, the named and unnamed symbols; `labelled`, every shape or point
 * with a label, for the pointer. */
export function prepareBasemap(features) {
  const groups = new Map();
  const groupFor = new Map();
  const points = [];
  const labelled = [];
  for (const feature of Array.isArray(features) ? features : []) {
    const geometry = feature?.geometry;
    const properties = feature?.properties || {};
    const label = basemapLabel(properties);
    if (geometry?.type === 'Point') {
      const at = geometry.coordinates;
      if (!Array.isArray(at) || !Number.isFinite(at[0]) || !Number.isFinite(at[1])) continue;
      const [x, y] = mercator(at[0], at[1]);
      const point = { kind: properties.kind, x, y, lng: at[0], lat: at[1], label };
      points.push(point);
      if (label) labelled.push({ point, label });
      continue;
    }
    const polygons = geometry?.type === 'Polygon' ? [geometry.coordinates]
      : geometry?.type === 'MultiPolygon' ? geometry.coordinates : null;
    const lines = geometry?.type === 'LineString' ? [geometry.coordinates]
      : geometry?.type === 'MultiLineString' ? geometry.coordinates : null;
    if (!polygons && !lines) continue;
    // One group per style. The properties that choose a style find it first, so a style is worked out and serialised
    // once per kind and class, not once per feature.
    const chosenBy = `${properties.kind}|${properties.class}|${properties.index === true}`;
    let group = groupFor.get(chosenBy);
    if (!group) {
      const style = basemapStyle(properties);
      const key = JSON.stringify(style);
      group = groups.get(key);
      if (!group) {
        const rank = KIND_ORDER.indexOf(properties.kind);
        group = { style, rank: (rank < 0 ? KIND_ORDER.length : rank) * 100 + (style.weight || 0) + (properties.index ? 50 : 0), shapes: [] };
        groups.set(key, group);
      }
      groupFor.set(chosenBy, group);
    }
    const rings = [];
    if (polygons) {
      for (const polygon of polygons) {
        if (!Array.isArray(polygon)) continue;
        const projected = [];
        let box = null;
        for (const coordinates of polygon) {
          if (!Array.isArray(coordinates)) continue;
          const ring = projectRing(coordinates);
          if (ring.points.length < 6) continue;
          projected.push(ring);
          box = box ? union(box, ring.box) : ring.box;
        }
        if (projected.length === 0) continue;
        const shape = { rings: projected, closed: true, holes: projected.length > 1, box };
        group.shapes.push(shape);
        rings.push(shape);
      }
    } else {
      for (const line of lines) {
        if (!Array.isArray(line)) continue;
        const ring = projectRing(line);
        if (ring.points.length < 4) continue;
        const shape = { rings: [ring], closed: false, holes: false, box: ring.box };
        group.shapes.push(shape);
        rings.push(shape);
      }
    }
    if (label && rings.length) labelled.push({ shapes: rings, label });
  }
  const ordered = [...groups.values()].sort((a, b) => a.rank - b.rank);
  return { groups: ordered, points, labelled };
}

function dashes(dashArray) {
  return typeof dashArray === 'string' ? dashArray.split(/[ ,]+/).map(Number).filter(Number.isFinite) : [];
}

/** Adds one shape's rings to the current path at pixel `scale`, less `origin`, leaving out points within a pixel of
 * the one before (a line of a 10 km frame has many more points than a phone's screen has pixels, and every point
 * kept is a join the browser has to rasterize). A line's
 * segments outside `clip` (the canvas, in the same pixels) are left out too, so a pan redraws what can be seen; an
 * area's rings are traced whole, since a fill needs them closed. */
function trace(ctx, shape, scale, originX, originY, clip) {
  for (const { points } of shape.rings) {
    let lastX = points[0] * scale - originX;
    let lastY = points[1] * scale - originY;
    ctx.moveTo(lastX, lastY);
    let penDown = true;
    const end = points.length - 2;
    for (let i = 2; i <= end; i += 2) {
      const x = points[i] * scale - originX;
      const y = points[i + 1] * scale - originY;
      if (i < end && Math.abs(x - lastX) < 1 && Math.abs(y - lastY) < 1) continue;
      if (!shape.closed && ((x < clip.minX && lastX < clip.minX) || (x > clip.maxX && lastX > clip.maxX)
        || (y < clip.minY && lastY < clip.minY) || (y > clip.maxY && lastY > clip.maxY))) {
        penDown = false;
      } else {
        if (!penDown) ctx.moveTo(lastX, lastY);
        ctx.lineTo(x, y);
        penDown = true;
      }
      lastX = x;
      lastY = y;
    }
    if (shape.closed) ctx.closePath();
  }
}

function visible(box, scale, originX, originY, bounds, margin) {
  return box[2] * scale - originX >= bounds.min.x - margin && box[0] * scale - originX <= bounds.max.x + margin
    && box[3] * scale - originY >= bounds.min.y - margin && box[1] * scale - originY <= bounds.max.y + margin;
}

function paint(ctx, style, fill) {
  ctx.globalAlpha = 1;
  if (fill && style.fill) {
    ctx.globalAlpha = style.fillOpacity ?? 1;
    ctx.fillStyle = style.fillColor || style.color;
  }
  if (fill === true && style.fill) ctx.fill('evenodd');
  else if (fill === 'nonzero' && style.fill) ctx.fill('nonzero');
  if (style.stroke !== false) {
    ctx.globalAlpha = style.opacity ?? 1;
    ctx.strokeStyle = style.color;
    ctx.lineWidth = style.weight ?? 1;
    // Square ends and mitred corners (bevelled where a corner is sharp) unless a style asks for round ones: at these
    // widths they look the same, and the browser rasterizes them in about two thirds of the time.
    ctx.lineCap = style.lineCap || 'butt';
    ctx.lineJoin = style.lineJoin || 'miter';
    ctx.miterLimit = 2;
    ctx.setLineDash(dashes(style.dashArray));
    ctx.stroke();
  }
}

/** Draws a prepared map on the renderer's canvas: Leaflet's canvas renderer keeps the canvas (its size, padding,
 * retina scale, position and zoom animation); this replaces the drawing of its layers with one pass over the groups. */
function drawPrepared(renderer, prepared) {
  const ctx = renderer._ctx;
  const map = renderer._map;
  if (!ctx || !map || !renderer._bounds) return;
  const bounds = renderer._bounds;
  const scale = map.options.crs.scale(map.getZoom());
  const origin = map.getPixelOrigin();
  const clip = { minX: bounds.min.x - 8, minY: bounds.min.y - 8, maxX: bounds.max.x + 8, maxY: bounds.max.y + 8 };
  const zoom = map.getZoom();
  ctx.save();
  for (const group of prepared.groups) {
    if (group.style.minZoom > zoom) continue;
    const margin = (group.style.weight || 1) + 1;
    const { style } = group;
    let any = false;
    ctx.beginPath();
    for (const shape of group.shapes) {
      if (!visible(shape.box, scale, origin.x, origin.y, bounds, margin)) continue;
      if (shape.holes) {
        // A lake with islands: filled on its own, so its inner rings are holes and not the overlap of two lakes.
        ctx.save();
        ctx.beginPath();
        trace(ctx, shape, scale, origin.x, origin.y, clip);
        paint(ctx, style, true);
        ctx.restore();
        continue;
      }
      trace(ctx, shape, scale, origin.x, origin.y, clip);
      any = true;
    }
    if (any) paint(ctx, style, 'nonzero');
  }
  const radius = 4.5;
  for (const kind of Object.keys(POINT_SYMBOLS)) {
    ctx.beginPath();
    let any = false;
    for (const point of prepared.points) {
      if (point.kind !== kind) continue;
      const x = point.x * scale - origin.x;
      const y = point.y * scale - origin.y;
      if (x < bounds.min.x - 6 || x > bounds.max.x + 6 || y < bounds.min.y - 6 || y > bounds.max.y + 6) continue;
      ctx.moveTo(x + radius, y);
      ctx.arc(x, y, radius, 0, Math.PI * 2);
      any = true;
    }
    if (any) paint(ctx, { color: '#fff', weight: 1.5, fill: true, fillColor: POINT_SYMBOLS[kind].color, fillOpacity: 1 }, 'nonzero');
  }
  ctx.restore();
}

function squaredDistanceToSegment(px, py, ax, ay, bx, by) {
  const dx = bx - ax, dy = by - ay;
  const length = dx * dx + dy * dy;
  const t = length ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / length)) : 0;
  const x = ax + t * dx - px, y = ay + t * dy - py;
  return x * x + y * y;
}

/** The label of what lies under the pointer at pixel (`px`, `py`) of zoom `scale`: a named point within 6 pixels
 * first, else the nearest named line or area outline within `reach` pixels; '' for none. */
export function labelAt(prepared, px, py, scale, reach = 8) {
  let best = '';
  let bestDistance = reach * reach;
  for (const item of prepared.labelled) {
    if (!item.point) continue;
    const dx = item.point.x * scale - px, dy = item.point.y * scale - py;
    if (dx * dx + dy * dy <= 36) return item.label;
  }
  for (const item of prepared.labelled) {
    if (item.point) continue;
    for (const shape of item.shapes) {
      const [x0, y0, x1, y1] = shape.box;
      if (px < x0 * scale - reach || px > x1 * scale + reach || py < y0 * scale - reach || py > y1 * scale + reach) continue;
      for (const { points } of shape.rings) {
        for (let i = 2; i < points.length; i += 2) {
          const d = squaredDistanceToSegment(px, py, points[i - 2] * scale, points[i - 1] * scale, points[i] * scale, points[i + 1] * scale);
          if (d < bestDistance) { bestDistance = d; best = item.label; }
        }
      }
    }
  }
  return best;
}

const batchedCanvasClasses = new WeakMap();

/** Leaflet's canvas renderer, drawing the prepared map given in its `prepared` option instead of layers of its own:
 * one class per Leaflet module, made the first time it is needed. */
function batchedCanvas(L) {
  let Batched = batchedCanvasClasses.get(L);
  if (!Batched) {
    Batched = L.Canvas.extend({
      onAdd(added) {
        L.Canvas.prototype.onAdd.call(this, added);
        drawPrepared(this, this.options.prepared);  // Leaflet draws a renderer's layers when it is added; this one has none
      },
      _updatePaths() {
        if (this._postponeUpdatePaths) return;
        drawPrepared(this, this.options.prepared);
      },
      _redraw() {},
    });
    batchedCanvasClasses.set(L, Batched);
  }
  return Batched;
}

/** Adds `geojson` to `map` (a Leaflet map, `L` its module) in a pane between the tiles and the route; returns the
 * layer. `attribution` is the credit shown in the map's corner, as text. */
export function addBasemap(L, map, geojson, attribution) {
  if (!map.getPane('basemap')) {
    const pane = map.createPane('basemap');
    pane.style.zIndex = 250;  // tiles are 200, the route and zones 400
    pane.style.pointerEvents = 'none';  // the map, not the canvas, answers the pointer
  }
  const prepared = prepareBasemap(geojson?.features);
  const Batched = batchedCanvas(L);
  const layer = new Batched({ pane: 'basemap', padding: 0.1, prepared });
  layer.addTo(map);
  // Names of points stay on the map while there are few enough to read; past that, and for lines and areas, a name
  // shows where the pointer rests or the finger taps.
  const named = prepared.labelled.filter((item) => item.point);
  if (named.length <= 40) {
    for (const { point, label } of named) {
      map.openTooltip(L.tooltip({ permanent: true, direction: 'right', className: 'visit-basemap-tooltip', opacity: 0.9 })
        .setLatLng([point.lat, point.lng]).setContent(textNode(label, 'visit-basemap-label')));
    }
  }
  const hover = L.tooltip({ direction: 'top', className: 'visit-basemap-tooltip', opacity: 0.9, offset: [0, -6] });
  let pending = null;
  const show = (event) => {
    const scale = map.options.crs.scale(map.getZoom());
    const at = map.options.crs.latLngToPoint(event.latlng, map.getZoom());
    const label = labelAt(prepared, at.x, at.y, scale, event.type === 'click' ? 14 : 8);
    if (label) {
      hover.setLatLng(event.latlng).setContent(textNode(label, 'visit-basemap-label'));
      map.openTooltip(hover);
    } else if (map.hasLayer(hover)) {
      map.closeTooltip(hover);
    }
  };
  map.on('mousemove', (event) => {
    // One look a frame, however fast the pointer moves.
    if (pending) { pending = event; return; }
    pending = event;
    requestAnimationFrame(() => { const last = pending; pending = null; show(last); });
  });
  map.on('click', show);
  map.on('mouseout movestart', () => { if (map.hasLayer(hover)) map.closeTooltip(hover); });
  if (attribution && map.attributionControl) {
    // Leaflet writes an attribution as markup: the credit goes in escaped.
    const escaped = String(attribution).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    map.attributionControl.addAttribution(escaped);
  }
  return layer;
}
