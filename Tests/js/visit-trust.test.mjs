// The web player's trust rules (Public/js/visit-trust.js) under Node's own test runner: the same module the page
// loads, with Node's Web Crypto (Ed25519, SHA-256) in place of the browser's. Run: node --test Tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import {
  TrustError, base64ToBytes, catalogExpiry, catalogIsStale, checkCatalog, ed25519Supported, hex, importPublicKey,
  listedFiles, requireFile, requireSignature, sha256Hex,
} from '../../Public/js/visit-trust.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-27T12:00:00Z');
const toBase64 = (bytes) => Buffer.from(bytes).toString('base64');
const utf8 = (text) => new TextEncoder().encode(text);

/** A signing key pair as the server has one: the public half as the base64 the player pins, and a signer. */
async function signer() {
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const publicKey = toBase64(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)));
  const sign = async (bytes) => toBase64(new Uint8Array(await crypto.subtle.sign('Ed25519', pair.privateKey, bytes)));
  return { publicKey, sign };
}

function catalogBytes(fields) {
  return utf8(JSON.stringify({ catalogVersion: 7, generatedAt: '2026-11-27T11:00:00Z', expiresAt: '2026-12-04T11:00:00Z', packages: [], ...fields }));
}

test('this Node verifies Ed25519 in Web Crypto, as the player requires of a browser', async () => {
  assert.equal(await ed25519Supported(), true);
});

test('a signature over the exact bytes holds; one flipped bit of the bytes or the signature fails', async () => {
  const server = await signer();
  const key = await importPublicKey(server.publicKey);
  const bytes = utf8('{"packageId":"p","version":1}');
  const signature = await server.sign(bytes);
  await requireSignature(key, signature, bytes, 'tour manifest');

  const tampered = bytes.slice();
  tampered[5] ^= 0x01;
  await assert.rejects(requireSignature(key, signature, tampered, 'tour manifest'),
    (error) => error instanceof TrustError && error.message === "The tour manifest is not signed by this server's key: it was not used.");

  const badSignature = base64ToBytes(signature);
  badSignature[0] ^= 0x01;
  await assert.rejects(requireSignature(key, toBase64(badSignature), bytes, 'tour manifest'), TrustError);
});

test('a missing, truncated or non-base64 signature, and another key, are refused', async () => {
  const server = await signer();
  const other = await signer();
  const bytes = utf8('catalog body');
  const signature = await server.sign(bytes);
  const key = await importPublicKey(server.publicKey);
  for (const wrong of [null, '', signature.slice(0, 40), '@@not base64@@']) {
    await assert.rejects(requireSignature(key, wrong, bytes, 'catalog'), TrustError, String(wrong));
  }
  await assert.rejects(requireSignature(await importPublicKey(other.publicKey), signature, bytes, 'catalog'), TrustError);
});

test('a published key that is not 32 bytes is refused before use', async () => {
  await assert.rejects(importPublicKey(toBase64(new Uint8Array(31).fill(1))),
    (error) => error instanceof TrustError && /32-byte Ed25519 key/.test(error.message));
});

test('a file matches only with its listed size and SHA-256', async () => {
  const bytes = utf8('RIFF....WAVEfmt a short tone');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  assert.equal(await sha256Hex(bytes), sha256, 'the hash is the standard SHA-256');
  assert.equal(hex(new Uint8Array([0, 15, 255])), '000fff');
  await requireFile(bytes, { path: 'media/tone.wav', size: bytes.byteLength, sha256 });
  await requireFile(bytes, { path: 'map tile 13/1/2', sha256 }); // tiles: the index lists only the hash

  await assert.rejects(requireFile(bytes, { path: 'media/tone.wav', size: bytes.byteLength + 1, sha256 }),
    (error) => error instanceof TrustError && error.message.startsWith(`media/tone.wav has ${bytes.byteLength} bytes`));
  const tampered = bytes.slice();
  tampered[tampered.length - 1] ^= 0xff;
  await assert.rejects(requireFile(tampered, { path: 'media/tone.wav', size: bytes.byteLength, sha256 }),
    (error) => error instanceof TrustError && error.message === 'media/tone.wav does not match its SHA-256 in the signed manifest: it was not used.');
});

test('the files to save are every listed file with its companions, the GeoJSON and the tile index, not the MBTiles', () => {
  const ref = (path) => ({ path, size: 1, sha256: 'a'.repeat(64) });
  const manifest = {
    waypoints: [{ assets: [{ ...ref('media/a.mp4'), mimeType: 'video/mp4', captions: ref('media/a.vtt'), transcript: ref('media/a.txt') }] },
      { assets: [{ ...ref('media/b.png'), mimeType: 'image/png' }] }],
    geoJSON: ref('tour.geojson'),
    tiles: { index: ref('tiles/index.json'), path: 'tiles/map.mbtiles', size: 10 },
  };
  assert.deepEqual(listedFiles(manifest).map((f) => [f.path, f.mimeType]), [
    ['media/a.mp4', 'video/mp4'], ['media/a.vtt', 'text/vtt'], ['media/a.txt', 'text/plain; charset=utf-8'],
    ['media/b.png', 'image/png'], ['tour.geojson', 'application/geo+json'], ['tiles/index.json', 'application/json'],
  ]);
});

test('a catalog is stale from its expiresAt on, fresh before it', () => {
  const catalog = { expiresAt: '2026-12-04T11:00:00Z' };
  const expiry = Date.parse('2026-12-04T11:00:00Z');
  assert.equal(catalogExpiry(catalog), expiry);
  assert.equal(catalogIsStale(catalog, NOW), false, 'a week ahead: fresh');
  assert.equal(catalogIsStale(catalog, expiry - 1), false, 'a millisecond before: fresh');
  assert.equal(catalogIsStale(catalog, expiry), true, 'at expiresAt: stale, as the native client rules');
  assert.equal(catalogIsStale(catalog, expiry + 30 * DAY), true);
  assert.equal(catalogIsStale({ expiresAt: '2026-12-04T12:00:00+01:00' }, expiry), true, 'an offset is honoured');
  assert.equal(catalogIsStale({ expiresAt: '2026-12-04T12:00:00+01:00' }, expiry - 1), false);
});

test('a catalog without a readable expiresAt is stale: nothing says until when it holds', () => {
  for (const expiresAt of [undefined, null, '', 1764846000000, 'next week', 'Fri, 04 Dec 2026 11:00:00 GMT', '2026-12-04']) {
    assert.ok(Number.isNaN(catalogExpiry({ expiresAt })), String(expiresAt));
    assert.equal(catalogIsStale({ expiresAt }, NOW), true, String(expiresAt));
  }
});

test('checkCatalog: signed and current is used; stale is flagged; older or tampered is refused', async () => {
  const server = await signer();
  const key = await importPublicKey(server.publicKey);

  const fresh = catalogBytes({});
  const answer = await checkCatalog(key, await server.sign(fresh), fresh, '7', NOW);
  assert.equal(answer.stale, false);
  assert.equal(answer.catalog.catalogVersion, 7);

  const expired = catalogBytes({ catalogVersion: 8, expiresAt: '2026-11-20T11:00:00Z' });
  const old = await checkCatalog(key, await server.sign(expired), expired, '7', NOW);
  assert.equal(old.stale, true, 'a signed catalog past its expiresAt is stale');
  assert.equal(old.catalog.catalogVersion, 8);

  await assert.rejects(checkCatalog(key, await server.sign(fresh), fresh, '8', NOW),
    (error) => error instanceof TrustError && /older than catalog 8/.test(error.message));

  // An edited expiry (a replay made to look fresh) breaks the signature: refused before it is read.
  const edited = utf8(new TextDecoder().decode(expired).replace('2026-11-20', '2027-11-20'));
  await assert.rejects(checkCatalog(key, await server.sign(expired), edited, null, NOW), TrustError);

  const unreadable = utf8('{"catalogVersion":"9","packages":[]}');
  await assert.rejects(checkCatalog(key, await server.sign(unreadable), unreadable, null, NOW),
    (error) => error instanceof TrustError && /not one this player can read/.test(error.message));
});
