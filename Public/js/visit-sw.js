// The web player's service worker (scope /visit/). The server writes PLAYER_VERSION and PLAYER_ASSETS above this
// line. It caches the player's shell; tour files, tiles and manifests are put into Cache Storage by the player page
// only after their signature, size and SHA-256 were checked, and this worker only answers from that cache: it never
// stores what the network sends it.
// The cache names are CACHE_NAMES of visit-store.js: a classic worker cannot import that module, so they are
// repeated here, and Tests/js/visit-store.test.mjs fails when the two differ.
const SHELL = `trail-shell-${PLAYER_VERSION}`;
const FILES = 'trail-files';
const PAGES = 'trail-pages';
const VENDOR = ['/vendor/leaflet/leaflet.js', '/vendor/leaflet/leaflet.css'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll([...PLAYER_ASSETS, ...VENDOR])).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('trail-shell-') && name !== SHELL) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

/** A 206 for `bytes=a-b`, `bytes=a-` or `bytes=-n` cut from a cached answer, or 416 when it does not fit. */
async function partial(cached, range) {
  const blob = await cached.blob();
  const match = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  const size = blob.size;
  let start; let end;
  if (match && (match[1] !== '' || match[2] !== '')) {
    if (match[1] === '') { start = Math.max(0, size - Number(match[2])); end = size - 1; } else {
      start = Number(match[1]);
      end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
    }
  }
  if (start === undefined || start > end || start >= size) {
    return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${size}` } });
  }
  return new Response(blob.slice(start, end + 1), {
    status: 206,
    headers: {
      'Content-Type': cached.headers.get('Content-Type') || 'application/octet-stream',
      'Content-Range': `bytes ${start}-${end}/${size}`,
      'Content-Length': String(end - start + 1),
      'Accept-Ranges': 'bytes',
    },
  });
}

async function fromFiles(request) {
  const cached = await (await caches.open(FILES)).match(request.url, { ignoreSearch: true, ignoreVary: true });
  if (!cached) return fetch(request);
  const range = request.headers.get('Range');
  return range ? partial(cached, range) : cached;
}

/** A saved tour's page is answered from Cache Storage at once, so a second open draws its stops without waiting for
 * the network, and it is refreshed behind that answer for the next open. When the park withdrew the tour (410) the
 * saved page stays: the player reads the withdrawal from the signed catalog, says so, and still plays the saved copy. */
async function page(event) {
  const { request } = event;
  const pages = await caches.open(PAGES);
  const saved = await pages.match(request.url, { ignoreSearch: true });
  if (saved) {
    event.waitUntil(refresh(pages, request.url));
    return saved;
  }
  try {
    return await fetch(request);
  } catch (error) {
    return new Response('<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
      + '<title>Offline · Trail Companion</title><main><h1>You are offline</h1><p>This tour is not saved on this phone. Connect to the internet and open it again to save it.</p></main></html>',
    { status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' } });
  }
}

async function refresh(pages, url) {
  try {
    const response = await fetch(url, { cache: 'no-cache', credentials: 'same-origin' });
    if (response.ok) await pages.put(new URL(url).pathname, response);
  } catch {
    // Offline: the saved page stays as it is.
  }
}

/** A player file. A page saved before the server was upgraded names the files of the older version, which the server
 * no longer has and this worker no longer keeps: it gets the current version's file of the same name instead. */
async function asset(request) {
  const cached = await caches.match(request, { ignoreSearch: true });
  if (cached) return cached;
  const match = /^\/visit\/assets\/([^/]+)\/([^/]+)$/.exec(new URL(request.url).pathname);
  if (match && match[1] !== PLAYER_VERSION) {
    const current = await caches.match(`/visit/assets/${PLAYER_VERSION}/${match[2]}`);
    if (current) return current;
  }
  return fetch(request);
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith('/api/v1/files/') || /^\/api\/v1\/packages\/[^/]+\/versions\/\d+\/(tiles\/|manifest$)/.test(url.pathname)) {
    event.respondWith(fromFiles(request));
  } else if (request.mode === 'navigate' && url.pathname.startsWith('/visit')) {
    event.respondWith(page(event));
  } else if (url.pathname.startsWith('/visit/assets/') || VENDOR.includes(url.pathname)) {
    event.respondWith(asset(request));
  }
});
