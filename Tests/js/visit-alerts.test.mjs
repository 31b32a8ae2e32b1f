// The web player's alert rules and words (Public/js/visit-alerts.js) under Node's own test runner. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  alertText, alertsFor, closedStopNote, closureOf, formatTime, inEffect, parseTime, severityOf, staleCatalogText,
} from '../../Public/js/visit-alerts.js';

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

// MARK: What the visitor reads

/** Times written as the tests can read them, whatever the machine's language and zone. */
const iso = (ms) => new Date(ms).toISOString();

test('an alert reads as its severity and title, the ranger\'s message, and until when as of which check', () => {
  const checkedAt = '2026-11-27T11:58:30.250Z';
  const words = alertText(alert(2, { severity: 'closure', title: 'Bridge closed', message: 'Flood damage.' }), checkedAt, iso);
  assert.deepEqual(words, {
    severity: 'closure',
    heading: 'Closure: Bridge closed',
    message: 'Flood damage.',
    when: 'Until 2026-11-27T13:00:00.000Z. As of 2026-11-27T11:58:30.250Z, when this phone last checked with the park.',
  });
  assert.equal(alertText(alert(1, { severity: 'info' }), checkedAt, iso).heading, 'Information: T1');
  assert.equal(alertText(alert(1, {}), checkedAt, iso).heading, 'Warning: T1');
  const later = alertText(alert(7, { severity: 'evacuation', title: 'Leave' }), checkedAt, iso);
  assert.deepEqual([later.severity, later.heading], ['warning', 'Warning: Leave'], 'a severity added later reads as a warning');
});

test('an alert\'s words are the ranger\'s text as it is: markup stays text', () => {
  const words = alertText(alert(1, { title: '<b>Bears</b>', message: '<img src=x onerror=alert(1)>' }), at(NOW), iso);
  assert.equal(words.heading, 'Warning: <b>Bears</b>');
  assert.equal(words.message, '<img src=x onerror=alert(1)>');
});

test('the times are written in the phone\'s own way by default, a day and a time', () => {
  const words = alertText(alert(1, {}), at(NOW));
  assert.equal(words.when, `Until ${formatTime(NOW + HOUR)}. As of ${formatTime(NOW)}, when this phone last checked with the park.`);
  assert.match(formatTime(NOW, 'en-GB'), /2026/);
  assert.notEqual(formatTime(NOW, 'en-GB', 'long'), formatTime(NOW, 'en-GB'), 'the long style names the month');
});

test('a closed stop\'s note names the closure', () => {
  assert.equal(closedStopNote(alert(2, { severity: 'closure', title: 'Bridge closed' })), 'Closed: Bridge closed');
});

test('a stale catalog: when it ran out (or that it has none), and whether a saved copy plays on', () => {
  const expiry = Date.parse('2026-11-20T08:00:00Z');
  const saved = staleCatalogText(expiry, true, iso);
  assert.ok(saved.startsWith('The list of tours this phone received from the park\'s server is out of date (it ran out on 2026-11-20T08:00:00.000Z), so it may be an old copy. '), saved);
  assert.match(saved, /It was not used to look for updates\. Your saved tour still works\./);
  assert.match(saved, /check that the phone's date and time are right, then reload the page where there is signal\.$/);
  const unsaved = staleCatalogText(expiry, false, iso);
  assert.match(unsaved, /The tour was not saved from it\./);
  assert.doesNotMatch(unsaved, /saved tour still works/);
  assert.match(staleCatalogText(NaN, false, iso), /\(it has no expiry date\)/);
  assert.ok(staleCatalogText(expiry, true).includes(`ran out on ${formatTime(expiry, undefined, 'long')})`), 'the long style by default');
});
