// Which stop the visitor is at, in the visitor player (Public/js/visit-tracking.js): the nearest open stop whose
// trigger zone holds the position, a closed stop never opened by walking into it, and the words for each.
// Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { positionText, stopsAround } from '../../Public/js/visit-tracking.js';

// About 11 m of latitude per 0.0001°.
const here = { latitude: 46.5, longitude: 7.5 };
const north = (metres) => ({ latitude: here.latitude + metres / 111_195, longitude: here.longitude });
const waypoints = [
  { id: 1, order: 1, name: 'Gate', coordinates: north(20) },                             // default zone: 30 m
  { id: 2, order: 2, name: 'Bridge', coordinates: north(10) },
  { id: 3, order: 3, name: 'Falls', coordinates: north(80), triggerRadiusMeters: 100 },
  { id: 4, order: 4, name: 'Ridge', coordinates: north(40) },                            // outside its 30 m
];
const closures = new Map([[2, { title: 'Bridge closed' }]]);
const closureOf = (waypoint) => closures.get(waypoint.id) || null;
const nameOf = (waypoint) => waypoint.name;

test('the nearest open stop whose zone holds the position; a closed one only as where the visitor stands', () => {
  const around = stopsAround(here, waypoints, closureOf);
  assert.equal(around.inside.waypoint.order, 1, 'the bridge is nearer but closed');
  assert.equal(Math.round(around.inside.distance), 20);
  assert.equal(around.closedHere.waypoint.order, 2);
  assert.equal(around.closedHere.closure.title, 'Bridge closed');
  assert.equal(stopsAround(here, waypoints, () => null).inside.waypoint.order, 2, 'open, the bridge is the nearest');
});

test('a zone of its own size counts; outside every zone, or with no stops, the visitor is at none', () => {
  const far = north(-60);
  assert.deepEqual(stopsAround(far, waypoints, closureOf), { inside: null, closedHere: null }, '140 m from the falls, 40 m outside its zone');
  assert.equal(stopsAround(north(150), waypoints, closureOf).inside.waypoint.order, 3, '70 m from the falls, inside its 100 m');
  assert.deepEqual(stopsAround(here, undefined, closureOf), { inside: null, closedHere: null });
});

test('where the visitor stands, in words', () => {
  const around = stopsAround(here, waypoints, closureOf);
  assert.equal(positionText(around, nameOf), 'You are at stop 1, Gate.');
  assert.equal(positionText({ inside: null, closedHere: around.closedHere }, nameOf), 'Stop 2, Bridge, is closed: Bridge closed.');
  assert.equal(positionText({ inside: null, closedHere: null }, nameOf), 'Location is on: stops open as you reach them.');
  assert.equal(positionText(around, (waypoint) => `${waypoint.name} (es)`), 'You are at stop 1, Gate (es).', 'the name in the chosen language');
});
