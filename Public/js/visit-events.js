// The player's visitor statistics: what happened on this visit (a tour opened, saved, a stop opened or played, the
// tour completed, an alert shown) as counts the server adds up per day, never as a trace of one person. An event
// holds the package, its version, the stop, the language, the sign the visitor came from (the link's ?src=) and the
// visitor's local date: no identifier, no time of day, no position. Events wait in IndexedDB while the phone is
// offline and are sent when it is back online. With Global Privacy Control on, nothing is recorded or sent.
// Data in, data out: no DOM, and the browser's services come in through the constructor, so Node runs it (Tests/js).

export const EVENTS_URL = '/api/v1/events';
export const EVENT_KINDS = Object.freeze(['opened', 'saved-offline', 'stop-opened', 'stop-played', 'completed', 'alert-shown']);
/** The server takes at most 200 events a post. */
export const BATCH = 200;
/** A phone offline for weeks keeps at most this many; the oldest go first (the server refuses days over 30 back). */
export const MAX_QUEUED = 5000;
export const MAX_DAYS_BACK = 30;
/** The IndexedDB database and its one object store. */
export const DB_NAME = 'trail-events';
export const STORE = 'events';

/** Whether the visitor asked not to be tracked (Global Privacy Control). */
export function privacyRefused(navigatorLike) {
  return navigatorLike?.globalPrivacyControl === true;
}

/** The sign's name from the page address's `?src=` when it is one (letters, digits, '-', at most 40), else null. */
export function sourceOf(search) {
  const value = new URLSearchParams(search || '').get('src');
  return value && /^[A-Za-z0-9-]{1,40}$/.test(value) ? value : null;
}

/** The visitor's local date, YYYY-MM-DD. */
export function localDay(date = new Date()) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Whether a queued event's day is still one the server takes (up to 30 days back). */
export function isFresh(event, now = new Date()) {
  const oldest = new Date(now.getFullYear(), now.getMonth(), now.getDate() - MAX_DAYS_BACK);
  return event.day >= localDay(oldest);
}

/** An IndexedDB store of queued events: add, read the oldest `limit`, remove by key, count. */
export function indexedDBQueue(indexedDB) {
  let opened = null;
  const open = () => {
    opened ??= new Promise((resolve, reject) => {
      const request = indexedDB.open(DB_NAME, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE, { autoIncrement: true });
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    return opened;
  };
  const run = async (mode, work) => {
    const db = await open();
    return new Promise((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      const store = transaction.objectStore(STORE);
      let result;
      work(store, (value) => { result = value; });
      transaction.oncomplete = () => resolve(result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  };
  return {
    add: (event) => run('readwrite', (store) => store.add(event)),
    oldest: (limit) => run('readonly', (store, done) => {
      const found = [];
      store.openCursor().onsuccess = (e) => {
        const cursor = e.target.result;
        if (cursor && found.length < limit) {
          found.push({ key: cursor.key, event: cursor.value });
          cursor.continue();
        } else {
          done(found);
        }
      };
    }),
    remove: (keys) => run('readwrite', (store) => { for (const key of keys) store.delete(key); }),
    count: () => run('readonly', (store, done) => { store.count().onsuccess = (e) => done(e.target.result); }),
  };
}

/** Records events and sends them: one post at a time, the oldest first, at most 200 a post. */
export class VisitEvents {
  /**
   * @param {object} options
   * @param {object|null} options.queue  an indexedDBQueue (or a stand-in); null records nothing
   * @param {Function} options.fetch
   * @param {boolean} options.refused  Global Privacy Control: nothing is recorded or sent
   * @param {Function} options.isOnline
   * @param {Function} [options.now]
   */
  constructor({ queue, fetch, refused, isOnline, now = () => new Date() }) {
    this.queue = refused ? null : queue;
    this.fetch = fetch;
    this.isOnline = isOnline;
    this.now = now;
    this.sending = null;
    this.seen = new Set();
  }

  /** Queues one event (`{type, packageId, version, waypointId?, language?, source?}`), then sends when online. */
  async record(event) {
    if (!this.queue || !EVENT_KINDS.includes(event.type)) return;
    const stored = { type: event.type, packageId: event.packageId, version: event.version, day: localDay(this.now()) };
    for (const key of ['waypointId', 'language', 'source']) if (event[key] != null && event[key] !== '') stored[key] = event[key];
    try {
      await this.queue.add(stored);
      if ((await this.queue.count()) > MAX_QUEUED) {
        const over = await this.queue.oldest((await this.queue.count()) - MAX_QUEUED);
        await this.queue.remove(over.map((item) => item.key));
      }
    } catch {
      return; // private browsing without IndexedDB, or a full disk: the visit goes on uncounted
    }
    if (this.isOnline()) await this.flush();
  }

  /** Records `event` once per page visit for its `key` (a stop opened twice on a walk counts once). */
  async recordOnce(key, event) {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    await this.record(event);
  }

  /** Sends what is queued, a post at a time; stops at the first failure of the network and keeps the rest. */
  flush() {
    if (!this.queue) return Promise.resolve();
    this.sending ??= this.sendAll().finally(() => { this.sending = null; });
    return this.sending;
  }

  async sendAll() {
    for (;;) {
      let batch;
      try {
        batch = await this.queue.oldest(BATCH);
      } catch {
        return;
      }
      if (batch.length === 0) return;
      const stale = batch.filter((item) => !isFresh(item.event, this.now()));
      const fresh = batch.filter((item) => isFresh(item.event, this.now()));
      if (stale.length) await this.queue.remove(stale.map((item) => item.key));
      if (fresh.length === 0) continue;
      let response;
      try {
        response = await this.fetch(EVENTS_URL, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ events: fresh.map((item) => item.event) }),
          credentials: 'omit',
          keepalive: true,
        });
      } catch {
        return; // offline again: the events wait for the next chance
      }
      // Counted (202), or refused for good (a tour since withdrawn: 4xx): either way these are done. A busy or
      // broken server (429, 5xx) gets them again later.
      if (response.status === 429 || response.status >= 500) return;
      await this.queue.remove(fresh.map((item) => item.key));
    }
  }
}
