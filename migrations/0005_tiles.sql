-- Offline map tiles: the tile server settings an admin saves in the panel, and the MBTiles file a tour may bring.

-- One row once an admin has saved the settings; until then the server's --tile-url (and defaults) apply.
CREATE TABLE tileSettings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    -- https://…/{z}/{x}/{y}.png; NULL or '' means no tile server.
    urlTemplate TEXT,
    attribution TEXT NOT NULL DEFAULT '',
    -- Most tiles one package build may fetch.
    tileCap INTEGER NOT NULL DEFAULT 20000 CHECK (tileCap >= 1),
    updatedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    updatedAt REAL NOT NULL
);

-- An uploaded MBTiles file (raster) that replaces the tile server for one tour.
CREATE TABLE tourTileset (
    tourId INTEGER PRIMARY KEY REFERENCES tour(id) ON DELETE CASCADE,
    originalName TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    -- png, jpg or webp (from the file's metadata, checked against its tiles).
    format TEXT NOT NULL CHECK (format IN ('png', 'jpg', 'webp')),
    minZoom INTEGER NOT NULL,
    maxZoom INTEGER NOT NULL,
    boundsWest REAL NOT NULL,
    boundsSouth REAL NOT NULL,
    boundsEast REAL NOT NULL,
    boundsNorth REAL NOT NULL,
    attribution TEXT NOT NULL DEFAULT '',
    tileCount INTEGER NOT NULL,
    scanStatus TEXT NOT NULL DEFAULT 'pending' CHECK (scanStatus IN ('pending', 'clean', 'infected', 'unscannable', 'error')),
    scanDetail TEXT NOT NULL DEFAULT '',
    -- Relative to the data folder: tilesets/pending/<uuid> while pending, tilesets/<sha256>.mbtiles when clean,
    -- tilesets/quarantine/<uuid> otherwise.
    storedPath TEXT NOT NULL,
    uploadedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    scannedAt REAL
);
CREATE INDEX tourTileset_scan ON tourTileset(scanStatus);
