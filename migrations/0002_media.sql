-- Media: assets attached to waypoints, resumable uploads in progress, durable scan jobs, per-site quota.

CREATE TABLE asset (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    waypointId INTEGER NOT NULL REFERENCES waypoint(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('video', 'audio', 'image', 'text')),
    originalName TEXT NOT NULL,
    mimeType TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    scanStatus TEXT NOT NULL DEFAULT 'pending' CHECK (scanStatus IN ('pending', 'clean', 'infected', 'unscannable', 'error')),
    scanDetail TEXT NOT NULL DEFAULT '',
    -- Relative to the data folder: uploads/<uuid> while pending, assets/<sha256> when clean, quarantine/<uuid> otherwise.
    storedPath TEXT NOT NULL,
    uploadedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    scannedAt REAL
);
CREATE INDEX asset_waypoint ON asset(waypointId, position);
CREATE INDEX asset_sha ON asset(sha256);

-- tus uploads in progress; the bytes live in data/uploads/<id>.
CREATE TABLE upload (
    id TEXT PRIMARY KEY,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    tourId INTEGER NOT NULL REFERENCES tour(id) ON DELETE CASCADE,
    waypointId INTEGER NOT NULL REFERENCES waypoint(id) ON DELETE CASCADE,
    replacesAssetId INTEGER REFERENCES asset(id) ON DELETE SET NULL,
    fileName TEXT NOT NULL,
    length INTEGER NOT NULL,
    offset INTEGER NOT NULL DEFAULT 0,
    createdAt REAL NOT NULL,
    expiresAt REAL NOT NULL
);

-- One row per asset waiting for the scanner; survives restarts.
CREATE TABLE scanJob (
    assetId INTEGER PRIMARY KEY REFERENCES asset(id) ON DELETE CASCADE,
    queuedAt REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0
);

ALTER TABLE site ADD COLUMN storageQuotaBytes INTEGER;
