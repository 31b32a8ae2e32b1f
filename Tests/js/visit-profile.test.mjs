// The trail facts' arithmetic in the visitor player (Public/js/visit-profile.js): the totals in words (the same words
// as the tour page), heights between profile points, each stop's distance, and where on the line the visitor is.
// Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { factsSummary, heightAt, stopDistances, distanceAlong } from '../../Public/js/visit-profile.js';

test('the totals in words, with and without heights', () => {
  const trail = { lengthMeters: 2412, ascentMeters: 120.4, descentMeters: 118.2, minElevationMeters: 140, maxElevationMeters: 260, walkingMinutes: 75 };
  assert.equal(factsSummary(trail), '2.4 km, 120 m up and 118 m down, between 140 and 260 m above sea level. About 1 h 15 min on foot with the stops.');
  assert.equal(factsSummary({ lengthMeters: 800, walkingMinutes: 14, elevationSource: null }), '0.8 km. About 14 min on foot with the stops.');
});

test('heights between profile points are interpolated, and held at the ends', () => {
  const profile = [[0, 100], [100, 110], [200, 90]];
  assert.equal(heightAt(profile, 50), 105);
  assert.equal(heightAt(profile, 150), 100);
  assert.equal(heightAt(profile, -5), 100);
  assert.equal(heightAt(profile, 500), 90);
});

test('each stop is as far along as the distances before it add up to, in stop order', () => {
  const stops = stopDistances([
    { order: 2, name: 'B', distanceFromPreviousMeters: 300, elevationMeters: 120 },
    { order: 1, name: 'A', distanceFromPreviousMeters: 0 },
    { order: 3, name: 'C', distanceFromPreviousMeters: 200 },
  ]);
  assert.deepEqual(stops.map((s) => [s.order, s.distance]), [[1, 0], [2, 300], [3, 500]]);
});

test('the visitor is placed at the nearest vertex of the route (GeoJSON positions), else of the line between the stops', () => {
  const route = [[-122.0, 44.0, 100], [-122.0, 44.001, 110], [-122.0, 44.002, 120]];
  const here = distanceAlong({ route, waypoints: [] }, { latitude: 44.00102, longitude: -122.0 });
  assert.ok(Math.abs(here.along - 111.2) < 1, `${here.along}`);
  assert.ok(here.distance < 5);
  const byStops = distanceAlong({ waypoints: [
    { order: 1, coordinates: { latitude: 44.0, longitude: -122.0 } },
    { order: 2, coordinates: { latitude: 44.002, longitude: -122.0 } },
  ] }, { latitude: 44.002, longitude: -122.0 });
  assert.ok(Math.abs(byStops.along - 222.4) < 1, `${byStops.along}`);
});
