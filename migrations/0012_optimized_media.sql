-- Media for phones: every clean video, audio file and image gets an optimized copy made in the background. The
-- original stays (asset.storedPath); the copy is one more content-addressed file under assets/. A row in state
-- 'pending' is the durable job: it survives a restart and is worked again from the start (a half-written copy lives in
-- a work folder that recovery empties, never under assets/).
ALTER TABLE asset ADD COLUMN useOriginal INTEGER NOT NULL DEFAULT 0 CHECK (useOriginal IN (0, 1));

CREATE TABLE optimizedCopy (
    assetId INTEGER PRIMARY KEY REFERENCES asset(id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'ready', 'skipped', 'failed')),
    -- 0…1 while pending.
    progress REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
    -- The original the copy was made from, and the settings it was made with: a copy is made again only when either changes.
    sourceSha256 TEXT NOT NULL,
    settings TEXT NOT NULL,
    -- The converter that made it (ffmpeg's or libvips' version line).
    encoder TEXT NOT NULL DEFAULT '',
    -- Set when ready: assets/<sha256> of the copy.
    storedPath TEXT,
    size INTEGER,
    sha256 TEXT,
    mimeType TEXT,
    -- What the shipped file measures (the copy's, or the original's when skipped).
    width INTEGER,
    height INTEGER,
    durationSeconds REAL,
    -- Why it failed or was skipped, for the ranger.
    message TEXT NOT NULL DEFAULT '' CHECK (length(message) <= 500),
    queuedAt REAL NOT NULL,
    updatedAt REAL NOT NULL,
    CHECK (state <> 'ready' OR (storedPath IS NOT NULL AND size IS NOT NULL AND sha256 IS NOT NULL AND mimeType IS NOT NULL))
);
CREATE INDEX optimizedCopy_pending ON optimizedCopy(queuedAt) WHERE state = 'pending';
CREATE INDEX optimizedCopy_stored ON optimizedCopy(storedPath) WHERE storedPath IS NOT NULL;
