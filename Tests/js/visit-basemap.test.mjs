// The drawn map's styles and labels (Public/js/visit-basemap.js): paths stand out from roads, index contours from the
// others, and a label is the feature's name as text (a peak's height after it), never markup.
import test from 'node:test';
import assert from 'node:assert/strict';
import { basemapStyle, basemapLabel, POINT_SYMBOLS } from '../../Public/js/visit-basemap.js';

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
