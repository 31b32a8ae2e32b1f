// The drawn map's styles and labels (Public/js/visit-basemap.js): paths stand out from roads, index contours from the
// others, and a label is the feature's name as text (a peak's height after it), never markup.
import test from 'node:test';
import assert from 'node:assert/strict';
import { basemapStyle, basemapLabel, labelAt, mercator, POINT_SYMBOLS, prepareBasemap } from '../../Public/js/visit-basemap.js';

test('paths are drawn dashed and darker than roads', () => {
  const path = basemapStyle({ kind: 'path', class: 'footway' });
  const road = basemapStyle({ kind: 'road', class: 'residential' });
  assert.ok(path.dashArray);
  assert.equal(road.dashArray, undefined);
  assert.notEqual(path.color, road.color);
  assert.ok(basemapStyle({ kind: 'road', class: 'primary' }).weight > basemapStyle({ kind: 'road', class: 'service' }).weight);
});

test('index contours are heavier than the others, and both are quiet', () => {
  const index = basemapStyle({ kind: 'contour', index: true, elevation: 1200 });
  const other = basemapStyle({ kind: 'contour', index: false, elevation: 1210 });
  assert.ok(index.weight > other.weight);
  assert.ok(other.opacity < 1 && index.opacity < 1);
  assert.equal(index.fill, false);
});

test('areas are filled, lines are not', () => {
  for (const kind of ['wood', 'water', 'building']) assert.equal(basemapStyle({ kind }).fill, true, kind);
  for (const kind of ['stream', 'road', 'path', 'contour']) assert.equal(basemapStyle({ kind }).fill, false, kind);
});

test('labels: names, peaks with their height, index contours alone', () => {
  assert.equal(basemapLabel({ kind: 'path', name: 'Lakeshore Trail' }), 'Lakeshore Trail');
  assert.equal(basemapLabel({ kind: 'peak', name: 'Eagle Peak', elevation: 1500 }), 'Eagle Peak (1500 m)');
  assert.equal(basemapLabel({ kind: 'peak', elevation: 980 }), '980 m');
  assert.equal(basemapLabel({ kind: 'contour', index: true, elevation: 1200 }), '1200 m');
  assert.equal(basemapLabel({ kind: 'contour', index: false, elevation: 1210 }), '');
  assert.equal(basemapLabel({ kind: 'building' }), '');
  assert.equal(basemapLabel({ kind: 'shelter', name: 42 }), '');
  assert.equal(basemapLabel(null), '');
});

test('every point kind the server writes has a symbol', () => {
  for (const kind of ['peak', 'viewpoint', 'parking', 'toilets', 'shelter']) assert.ok(POINT_SYMBOLS[kind]?.color, kind);
});

test('mercator: Leaflet\'s projection on the unit square', () => {
  assert.deepEqual(mercator(0, 0), [0.5, 0.5]);
  const [x, y] = mercator(-122.4, 44.35);
  assert.ok(Math.abs(x - (0.5 - 122.4 / 360)) < 1e-12);
  // The poles of Web Mercator are the square's edges, the equator its middle, north and south mirror each other.
  assert.ok(Math.abs(mercator(0, 85.0511287798)[1]) < 1e-9 && Math.abs(mercator(0, -85.0511287798)[1] - 1) < 1e-9);
  assert.ok(Math.abs(y + mercator(-122.4, -44.35)[1] - 1) < 1e-12 && y < 0.5);
  assert.equal(mercator(0, 90)[1], mercator(0, 85.0511287798)[1]);
});

test('prepared for drawing: areas before contours before roads before paths, a lake with an island filled alone', () => {
  const ring = (x, y, d) => [[x, y], [x + d, y], [x + d, y + d], [x, y + d], [x, y]];
  const prepared = prepareBasemap([
    { type: 'Feature', properties: { kind: 'path', class: 'footway', name: 'Lakeshore Trail' }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.3], [-122.1, 44.31]] } },
    { type: 'Feature', properties: { kind: 'road', class: 'residential' }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.32], [-122.1, 44.33]] } },
    { type: 'Feature', properties: { kind: 'contour', index: true, elevation: 1200 }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.34], [-122.1, 44.35]] } },
    { type: 'Feature', properties: { kind: 'water', name: 'Island Lake' }, geometry: { type: 'Polygon', coordinates: [ring(-122.19, 44.38, 0.02), ring(-122.185, 44.385, 0.005)] } },
    { type: 'Feature', properties: { kind: 'wood' }, geometry: { type: 'Polygon', coordinates: [ring(-122.25, 44.31, 0.05)] } },
    { type: 'Feature', properties: { kind: 'peak', name: 'Eagle Peak', elevation: 1500 }, geometry: { type: 'Point', coordinates: [-122.15, 44.36] } },
    { type: 'Feature', properties: { kind: 'path' }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.3]] } },
    { type: 'Feature', properties: { kind: 'road' }, geometry: null },
  ]);
  assert.deepEqual(prepared.groups.map((group) => group.style), [
    basemapStyle({ kind: 'wood' }), basemapStyle({ kind: 'water' }), basemapStyle({ kind: 'contour', index: true }),
    basemapStyle({ kind: 'road', class: 'residential' }), basemapStyle({ kind: 'path', class: 'footway' }),
  ]);
  const lake = prepared.groups[1].shapes[0];
  assert.equal(lake.holes, true);
  assert.equal(lake.rings.length, 2);
  assert.equal(prepared.groups[0].shapes[0].holes, false);
  // A one-point line and a feature without geometry are left out; the point keeps its place and its label.
  assert.equal(prepared.groups[4].shapes.length, 1);
  assert.equal(prepared.points.length, 1);
  assert.deepEqual(prepared.labelled.map((item) => item.label).sort(), ['1200 m', 'Eagle Peak (1500 m)', 'Island Lake', 'Lakeshore Trail']);
});

test('the label under the pointer: the nearest named line within reach, a point first, nothing far away', () => {
  const prepared = prepareBasemap([
    { type: 'Feature', properties: { kind: 'path', name: 'Lakeshore Trail' }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.3], [-122.1, 44.3]] } },
    { type: 'Feature', properties: { kind: 'road', name: 'Forest Road 12' }, geometry: { type: 'LineString', coordinates: [[-122.2, 44.31], [-122.1, 44.31]] } },
    { type: 'Feature', properties: { kind: 'viewpoint', name: 'Far View' }, geometry: { type: 'Point', coordinates: [-122.15, 44.3] } },
  ]);
  const scale = 256 * 2 ** 15;
  const pixel = (lng, lat) => mercator(lng, lat).map((v) => v * scale);
  assert.equal(labelAt(prepared, ...pixel(-122.12, 44.3), scale), 'Lakeshore Trail');
  assert.equal(labelAt(prepared, ...pixel(-122.12, 44.31), scale), 'Forest Road 12');
  assert.equal(labelAt(prepared, ...pixel(-122.15, 44.3), scale), 'Far View');
  assert.equal(labelAt(prepared, ...pixel(-122.12, 44.305), scale), '');
});

test('the overview leaves out what would clutter it: minor contours and service roads below 13, steps and buildings below 14', () => {
  assert.equal(basemapStyle({ kind: 'contour', index: false }).minZoom, 13);
  assert.equal(basemapStyle({ kind: 'road', class: 'service' }).minZoom, 13);
  assert.equal(basemapStyle({ kind: 'path', class: 'steps' }).minZoom, 14);
  assert.equal(basemapStyle({ kind: 'building' }).minZoom, 14);
  // Paths, index contours, water, woods and the other roads are drawn at every zoom.
  for (const properties of [{ kind: 'path', class: 'footway' }, { kind: 'path', class: 'track' }, { kind: 'contour', index: true },
    { kind: 'water' }, { kind: 'wood' }, { kind: 'road', class: 'residential' }, { kind: 'stream' }]) {
    assert.equal(basemapStyle(properties).minZoom, undefined, JSON.stringify(properties));
  }
  // Only lines wide enough for a square end to show get round ones.
  assert.equal(basemapStyle({ kind: 'road', class: 'primary' }).lineCap, 'round');
  assert.equal(basemapStyle({ kind: 'road', class: 'residential' }).lineCap, undefined);
});
