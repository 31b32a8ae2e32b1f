// The web player's alert rules (Public/js/visit-alerts.js) under Node's own test runner. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { alertsFor, closureOf, inEffect, parseTime, severityOf } from '../../Public/js/visit-alerts.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const HOUR = 3_600_000;
const at = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function alert(id, fields) {
  return { id, site: 'falls', closedWaypoints: [], severity: 'warning', title: `T${id}`, message: 'M',
    startsAt: at(NOW - HOUR), endsAt: at(NOW + HOUR), ...fields };
}

const catalog = {
  catalogVersion: 4,
  packages: [{ id: 'p1', site: 'falls' }, { id: 'p2', site: 'falls' }, { id: 'p3', site: 'ridge' }],
  alerts: [
    alert(1, { packageId: 'p1', severity: 'info' }),
    alert(2, { packageId: 'p1', severity: 'closure', closedWaypoints: [12] }),
    alert(3, {}), // every tour of falls
    alert(4, { site: 'ridge' }),
    alert(5, { packageId: 'p1', endsAt: at(NOW - 1) }), // ended: an older catalog still lists it
    alert(6, { packageId: 'p1', startsAt: at(NOW + HOUR), endsAt: at(NOW + 2 * HOUR) }), // scheduled
    alert(7, { packageId: 'p2', severity: 'evacuation' }),
  ],
};

test('a tour gets its own alerts and its site\'s, closures first; not ended, scheduled or other sites\' ones', () => {
  assert.deepEqual(alertsFor(catalog, 'p1', NOW).map((a) => a.id), [2, 3, 1]);
  assert.deepEqual(alertsFor(catalog, 'p3', NOW).map((a) => a.id), [4]);
  assert.deepEqual(alertsFor(catalog, 'p1', NOW + 1.5 * HOUR).map((a) => a.id), [6], 'an hour and a half on');
  assert.deepEqual(alertsFor(catalog, 'gone', NOW), [], 'a tour the catalog does not list: no site to match');
});

test('an alert past its end is ignored at once, even read from an older catalog; unreadable times are ignored', () => {
  assert.equal(inEffect(alert(1, {}), NOW), true);
  assert.equal(inEffect(alert(1, { endsAt: at(NOW) }), NOW), false, 'the end itself is past');
  assert.equal(inEffect(alert(1, { startsAt: at(NOW) }), NOW), true, 'the start itself holds');
  assert.equal(inEffect(alert(1, { endsAt: 'tomorrow' }), NOW), false);
  assert.equal(inEffect(alert(1, { startsAt: undefined }), NOW), false);
  assert.ok(Number.isNaN(parseTime('2026-11-27 12:00')));
});

test('a severity added later reads as a warning', () => {
  assert.equal(severityOf(catalog.alerts[6]), 'warning');
  assert.equal(severityOf({ severity: 'closure' }), 'closure');
  assert.deepEqual(alertsFor(catalog, 'p2', NOW).map((a) => a.id), [3, 7]);
});

test('closures by waypoint id; a waypoint without an id is never closed; a catalog without alerts has none', () => {
  const alerts = alertsFor(catalog, 'p1', NOW);
  assert.equal(closureOf(alerts, 12)?.id, 2);
  assert.equal(closureOf(alerts, 13), null);
  assert.equal(closureOf(alerts, undefined), null);
  assert.deepEqual(alertsFor({ packages: [{ id: 'p1', site: 'falls' }] }, 'p1', NOW), []);
  assert.deepEqual(alertsFor({ packages: [], alerts: 'nonsense' }, 'p1', NOW), []);
});
