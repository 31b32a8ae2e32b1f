// The web player's trust checks: Ed25519 signatures (Web Crypto) and SHA-256 of every file, against what the
// signed catalog and the signed manifest say. Nothing here trusts the network or Cache Storage on its own.
// No DOM here: Node imports this module as it is (Tests/js), so the rules are tested without a browser.

export class TrustError extends Error {
  constructor(message) { super(message); this.name = 'TrustError'; }
}

export function base64ToBytes(text) {
  const binary = atob(text.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function sha256Hex(bytes) {
  return hex(await crypto.subtle.digest('SHA-256', bytes));
}

/** True when this browser verifies Ed25519 in Web Crypto (a throw-away key pair is imported and a check run). */
export async function ed25519Supported() {
  if (!globalThis.crypto?.subtle) return false;
  try {
    await crypto.subtle.importKey('raw', new Uint8Array(32).fill(1), { name: 'Ed25519' }, false, ['verify']);
    return true;
  } catch (error) {
    // A well-formed key that is not a valid point is a DataError; "not supported" is a NotSupportedError.
    return error?.name === 'DataError';
  }
}

export async function importPublicKey(base64) {
  const raw = base64ToBytes(base64);
  if (raw.length !== 32) throw new TrustError('The published signing key is not a 32-byte Ed25519 key.');
  return crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
}

/** Checks a base64 Ed25519 signature over the exact bytes; throws a TrustError naming `what` when it does not hold. */
export async function requireSignature(key, signatureBase64, bytes, what) {
  let signature;
  try { signature = base64ToBytes(signatureBase64 || ''); } catch { signature = new Uint8Array(); }
  const valid = signature.length === 64 && await crypto.subtle.verify('Ed25519', key, signature, bytes);
  if (!valid) throw new TrustError(`The ${what} is not signed by this server's key: it was not used.`);
}

/** Milliseconds since 1970 of the catalog's `expiresAt` (an RFC 3339 time in UTC or with an offset, as the server
 * writes it), or NaN when it is missing or not such a time. */
export function catalogExpiry(catalog) {
  const text = catalog?.expiresAt;
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return NaN;
  return Date.parse(text);
}

/** Whether a verified catalog is past its `expiresAt` at `now` (milliseconds), the native client's rule: a catalog holds
 * only while `expiresAt` is after now. A replayed old copy, or one kept by a cache, is stale even though its signature
 * holds, so it can no longer say which version is current or whether a tour was withdrawn. Without a readable
 * `expiresAt` nothing says until when it holds: stale too. */
export function catalogIsStale(catalog, now = Date.now()) {
  return !(catalogExpiry(catalog) > now);
}

/** The catalog from its exact bytes: the signature checked before parsing, then refused when older than the highest
 * `catalogVersion` this browser verified (`highestSeen`). Answers {catalog, stale}: a stale catalog is not refused
 * here (a saved tour must go on playing), the caller must not act on it. */
export async function checkCatalog(key, signatureBase64, bytes, highestSeen, now = Date.now()) {
  await requireSignature(key, signatureBase64, bytes, 'catalog');
  const catalog = JSON.parse(new TextDecoder().decode(bytes));
  if (!Number.isInteger(catalog?.catalogVersion) || !Array.isArray(catalog.packages)) {
    throw new TrustError('The catalog is signed but not one this player can read: it was not used.');
  }
  const highest = Number(highestSeen || 0);
  if (catalog.catalogVersion < highest) {
    throw new TrustError(`The server sent catalog ${catalog.catalogVersion}, older than catalog ${highest} this phone already checked: it was refused.`);
  }
  return { catalog, stale: catalogIsStale(catalog, now) };
}

/** Size and SHA-256 of a file against the manifest; throws a TrustError naming the file when either differs. */
export async function requireFile(bytes, file) {
  if (file.size != null && bytes.byteLength !== Number(file.size)) {
    throw new TrustError(`${file.path} has ${bytes.byteLength} bytes, the signed manifest says ${file.size}: it was not saved.`);
  }
  const actual = await sha256Hex(bytes);
  if (actual !== file.sha256) {
    throw new TrustError(`${file.path} does not match its SHA-256 in the signed manifest: it was not used.`);
  }
}

/** The companion files a manifest may list beside a media file, by the asset's key (`asset.captions`,
 * `asset.transcript`). Public/js/companion-roles.json is the one description the server's `CompanionRole` and this
 * list are both tested against (Tests/js/companion-roles.test.mjs here), so a role added on one side and not the
 * other fails a test instead of being skipped when a tour is saved. */
export const COMPANION_ROLES = Object.freeze(['captions', 'transcript']);

/** Every file the manifest lists, as {path, size, sha256, mimeType}: media, captions, transcripts, the GeoJSON, the
 * tile index, the drawn map. The MBTiles itself is left out: the player shows tiles one by one, each checked against the index. */
export function listedFiles(manifest) {
  const files = [];
  for (const waypoint of manifest.waypoints || []) {
    for (const asset of waypoint.assets || []) {
      files.push({ path: asset.path, size: asset.size, sha256: asset.sha256, mimeType: asset.mimeType });
      for (const role of COMPANION_ROLES) {
        const companion = asset[role];
        if (companion) files.push({ path: companion.path, size: companion.size, sha256: companion.sha256, mimeType: companionType(companion.path) });
      }
    }
  }
  if (manifest.geoJSON) files.push({ ...manifest.geoJSON, mimeType: 'application/geo+json' });
  if (manifest.tiles?.index) files.push({ ...manifest.tiles.index, mimeType: 'application/json' });
  if (manifest.basemap) {
    const { path, size, sha256 } = manifest.basemap;
    files.push({ path, size, sha256, mimeType: 'application/geo+json' });
  }
  return files;
}

export function companionType(path) {
  return path.endsWith('.vtt') ? 'text/vtt' : 'text/plain; charset=utf-8';
}
