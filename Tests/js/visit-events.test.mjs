// The player's visitor statistics (Public/js/visit-events.js) under Node's own test runner, with an in-memory queue
// in place of IndexedDB and a scripted network.
// Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  BATCH, EVENT_KINDS, MAX_QUEUED, VisitEvents, isFresh, localDay, privacyRefused, sourceOf,
} from '../../Public/js/visit-events.js';

/** The queue as visit-events.js uses it: events by increasing key. */
class MemoryQueue {
  constructor() { this.items = new Map(); this.next = 1; }
  async add(event) { this.items.set(this.next, structuredClone(event)); this.next += 1; }
  async oldest(limit) { return [...this.items].slice(0, limit).map(([key, event]) => ({ key, event })); }
  async remove(keys) { for (const key of keys) this.items.delete(key); }
  async count() { return this.items.size; }
}

/** A network that is up or down, answering `status`, and keeping every post's body. */
function network() {
  const net = { online: true, status: 202, posts: [] };
  net.fetch = async (url, init) => {
    if (!net.online) throw new TypeError('Failed to fetch');
    net.posts.push({ url, init, body: JSON.parse(init.body) });
    return { status: net.status };
  };
  return net;
}

const day = new Date(2026, 10, 20, 15, 30);
const event = (type, extra = {}) => ({ type, packageId: 'p-falls', version: 2, ...extra });

test('an event is sent at once when online, with the local day and nothing else about the visitor', async () => {
  const net = network();
  const events = new VisitEvents({ queue: new MemoryQueue(), fetch: net.fetch, refused: false, isOnline: () => net.online, now: () => day });
  await events.record(event('stop-opened', { waypointId: 7, language: 'es', source: 'north-gate' }));
  assert.equal(net.posts.length, 1);
  assert.equal(net.posts[0].url, '/api/v1/events');
  assert.equal(net.posts[0].init.credentials, 'omit');
  assert.deepEqual(net.posts[0].body, {
    events: [{ type: 'stop-opened', packageId: 'p-falls', version: 2, day: '2026-11-20', waypointId: 7, language: 'es', source: 'north-gate' }],
  });
  assert.equal(await events.queue.count(), 0);
});

test('offline, events wait in the queue; back online, they are sent in order and the queue empties', async () => {
  const net = network();
  net.online = false;
  const queue = new MemoryQueue();
  const events = new VisitEvents({ queue, fetch: net.fetch, refused: false, isOnline: () => net.online, now: () => day });
  for (const type of EVENT_KINDS) await events.record(event(type, type.startsWith('stop') ? { waypointId: 3 } : {}));
  assert.equal(net.posts.length, 0);
  assert.equal(await queue.count(), EVENT_KINDS.length);
  net.online = true;
  await events.flush();
  assert.equal(net.posts.length, 1);
  assert.deepEqual(net.posts[0].body.events.map((e) => e.type), EVENT_KINDS);
  assert.equal(await queue.count(), 0);
});

test('a long queue goes in posts of at most 200; a server error keeps the rest for later', async () => {
  const net = network();
  net.online = false;
  const queue = new MemoryQueue();
  const events = new VisitEvents({ queue, fetch: net.fetch, refused: false, isOnline: () => net.online, now: () => day });
  for (let i = 0; i < 450; i += 1) await events.record(event('opened'));
  net.online = true;
  net.status = 503;
  await events.flush();
  assert.equal(net.posts.length, 1);
  assert.equal(await queue.count(), 450, 'a 503 keeps every event');
  net.status = 202;
  await events.flush();
  assert.deepEqual(net.posts.slice(1).map((post) => post.body.events.length), [BATCH, BATCH, 50]);
  assert.equal(await queue.count(), 0);
});

test('a refused post (4xx) is not sent again', async () => {
  const net = network();
  net.status = 422;
  const queue = new MemoryQueue();
  const events = new VisitEvents({ queue, fetch: net.fetch, refused: false, isOnline: () => net.online, now: () => day });
  await events.record(event('opened'));
  assert.equal(await queue.count(), 0);
});

test('with Global Privacy Control nothing is queued or sent', async () => {
  const net = network();
  const queue = new MemoryQueue();
  const events = new VisitEvents({ queue, fetch: net.fetch, refused: privacyRefused({ globalPrivacyControl: true }), isOnline: () => true });
  await events.record(event('opened'));
  await events.flush();
  assert.equal(net.posts.length, 0);
  assert.equal(await queue.count(), 0);
  assert.equal(privacyRefused({}), false);
  assert.equal(privacyRefused({ globalPrivacyControl: false }), false);
});

test('once per visit: a stop opened twice counts once', async () => {
  const net = network();
  const events = new VisitEvents({ queue: new MemoryQueue(), fetch: net.fetch, refused: false, isOnline: () => true, now: () => day });
  await events.recordOnce('stop-opened:3', event('stop-opened', { waypointId: 3 }));
  await events.recordOnce('stop-opened:3', event('stop-opened', { waypointId: 3 }));
  assert.equal(net.posts.flatMap((post) => post.body.events).length, 1);
});

test('the queue keeps at most MAX_QUEUED events, dropping the oldest; days past 30 are dropped unsent', async () => {
  const net = network();
  net.online = false;
  const queue = new MemoryQueue();
  let now = new Date(2026, 0, 1, 12);
  const events = new VisitEvents({ queue, fetch: net.fetch, refused: false, isOnline: () => net.online, now: () => now });
  await events.record(event('opened'));
  now = new Date(2026, 1, 15, 12);
  for (let i = 0; i < MAX_QUEUED + 2; i += 1) await events.record(event('completed'));
  assert.equal(await queue.count(), MAX_QUEUED);
  assert.ok((await queue.oldest(MAX_QUEUED)).every((item) => item.event.type === 'completed'));
  assert.equal(isFresh({ day: '2026-01-01' }, now), false);
  assert.equal(isFresh({ day: localDay(now) }, now), true);
});

test('the sign comes from ?src= only when it is a sign name; unknown kinds are not recorded', async () => {
  assert.equal(sourceOf('?src=north-gate'), 'north-gate');
  assert.equal(sourceOf('?src=a%20b'), null);
  assert.equal(sourceOf('?src=' + 'x'.repeat(41)), null);
  assert.equal(sourceOf(''), null);
  const net = network();
  const events = new VisitEvents({ queue: new MemoryQueue(), fetch: net.fetch, refused: false, isOnline: () => true, now: () => day });
  await events.record(event('clicked'));
  assert.equal(net.posts.length, 0);
});
