-- Publishing: frozen publish requests, their durable build jobs, reviews, released packages and versions.

CREATE TABLE publishRequest (
    id TEXT PRIMARY KEY,
    tourId INTEGER REFERENCES tour(id) ON DELETE SET NULL,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    packageId TEXT NOT NULL,
    version INTEGER NOT NULL,
    authorId INTEGER REFERENCES user(id) ON DELETE SET NULL,
    state TEXT NOT NULL CHECK (state IN ('building', 'pending', 'ready', 'published', 'denied', 'failed', 'withdrawn')),
    -- The tour exactly as submitted (JSON), so what is reviewed is what ships.
    snapshot TEXT NOT NULL,
    requiredApprovals INTEGER NOT NULL CHECK (requiredApprovals >= 1),
    filesDone INTEGER NOT NULL DEFAULT 0,
    filesTotal INTEGER NOT NULL DEFAULT 0,
    bytesDone INTEGER NOT NULL DEFAULT 0,
    bytesTotal INTEGER NOT NULL DEFAULT 0,
    failureReason TEXT,
    denialComment TEXT,
    zipSha256 TEXT,
    zipSize INTEGER,
    signature TEXT,
    manifestJSON TEXT,
    scanReport TEXT,
    createdAt REAL NOT NULL,
    updatedAt REAL NOT NULL
);
-- At most one open request per tour.
CREATE UNIQUE INDEX publishRequest_open ON publishRequest(tourId) WHERE state IN ('building', 'pending', 'ready');
CREATE INDEX publishRequest_site_state ON publishRequest(siteId, state);

CREATE TABLE buildJob (
    requestId TEXT PRIMARY KEY REFERENCES publishRequest(id) ON DELETE CASCADE,
    queuedAt REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE review (
    requestId TEXT NOT NULL REFERENCES publishRequest(id) ON DELETE CASCADE,
    reviewerId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    decision TEXT NOT NULL CHECK (decision IN ('approve', 'deny')),
    comment TEXT NOT NULL DEFAULT '',
    createdAt REAL NOT NULL,
    PRIMARY KEY (requestId, reviewerId)
);

-- One package per tour; its versions are immutable zips in data/packages/<id>/<version>.zip.
CREATE TABLE package (
    id TEXT PRIMARY KEY,
    tourId INTEGER UNIQUE REFERENCES tour(id) ON DELETE SET NULL,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    currentVersion INTEGER,
    isVisible INTEGER NOT NULL DEFAULT 0,
    createdAt REAL NOT NULL,
    updatedAt REAL NOT NULL
);

CREATE TABLE packageVersion (
    packageId TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    requestId TEXT REFERENCES publishRequest(id) ON DELETE SET NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    mapName TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    signature TEXT NOT NULL,
    manifestJSON TEXT NOT NULL,
    releasedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    verifiedCount INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (packageId, version)
);

-- Grows by one at every release, unpublish or rollback: the mobile catalog's version.
CREATE TABLE catalogState (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO catalogState (id, version) VALUES (1, 0);
