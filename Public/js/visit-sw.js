// The web player's service worker (scope /visit/). The server writes PLAYER_VERSION and PLAYER_ASSETS above this
// line. It caches the player's shell; tour files, tiles and manifests are put into Cache Storage by the player page
// only after their signature, size and SHA-256 were checked, and this worker only answers from that cache: it never
// stores what the network sends it.
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

async function page(request) {
  try {
    const response = await fetch(request);
    const pages = await caches.open(PAGES);
    const saved = await pages.match(request.url, { ignoreSearch: true });
    // A saved tour's page is kept current. When the park withdrew the tour (410), a visitor who saved it gets the
    // saved player, which reads the withdrawal from the signed catalog, says so, and still plays the saved copy.
    if (response.ok && saved) await pages.put(new URL(request.url).pathname, response.clone());
    if (response.status === 410 && saved) return saved;
    return response;
  } catch (error) {
    const cached = await (await caches.open(PAGES)).match(request.url, { ignoreSearch: true });
    if (cached) return cached;
    return new Response('<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
      + '<title>Offline · Trail Companion</title><main><h1>You are offline</h1><p>This tour is not saved on this phone. Connect to the internet and open it again to save it.</p></main></html>',
    { status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' } });
  }
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname.startsWith('/api/v1/files/') || /^\/api\/v1\/packages\/[^/]+\/versions\/\d+\/(tiles\/|manifest$)/.test(url.pathname)) {
    event.respondWith(fromFiles(request));
  } else if (request.mode === 'navigate' && url.pathname.startsWith('/visit')) {
    event.respondWith(page(request));
  } else if (url.pathname.startsWith('/visit/assets/') || VENDOR.includes(url.pathname)) {
    event.respondWith(caches.match(request, { ignoreSearch: true }).then((cached) => cached || fetch(request)));
  }
});
