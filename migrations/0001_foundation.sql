-- Foundation: accounts, sessions, API tokens, sites, memberships, tours, waypoints, audit log.
-- Never edit this file once landed: add a new numbered migration instead.

CREATE TABLE user (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    displayName TEXT NOT NULL,
    passwordHash TEXT NOT NULL,
    isAdmin INTEGER NOT NULL DEFAULT 0,
    isDisabled INTEGER NOT NULL DEFAULT 0,
    mustChangePassword INTEGER NOT NULL DEFAULT 0,
    createdAt REAL NOT NULL
);

-- The cookie holds a random token; only its SHA-256 is stored, so a leaked database opens no session.
CREATE TABLE session (
    tokenHash TEXT PRIMARY KEY,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    csrfToken TEXT NOT NULL,
    createdAt REAL NOT NULL,
    lastSeenAt REAL NOT NULL,
    ipAddress TEXT
);
CREATE INDEX session_user ON session(userId);

CREATE TABLE apiToken (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tokenHash TEXT NOT NULL UNIQUE,
    createdAt REAL NOT NULL,
    lastUsedAt REAL,
    revokedAt REAL
);

CREATE TABLE loginFailure (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL COLLATE NOCASE,
    ipAddress TEXT,
    failedAt REAL NOT NULL
);
CREATE INDEX loginFailure_email ON loginFailure(email, failedAt);
CREATE INDEX loginFailure_ip ON loginFailure(ipAddress, failedAt);

CREATE TABLE site (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    requiredApprovals INTEGER NOT NULL DEFAULT 1 CHECK (requiredApprovals >= 1),
    createdAt REAL NOT NULL
);

CREATE TABLE membership (
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('author', 'reviewer', 'manager')),
    PRIMARY KEY (userId, siteId)
);

CREATE TABLE tour (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    mapName TEXT NOT NULL,
    frameNorth REAL,
    frameSouth REAL,
    frameEast REAL,
    frameWest REAL,
    minZoom INTEGER NOT NULL DEFAULT 12,
    maxZoom INTEGER NOT NULL DEFAULT 16,
    state TEXT NOT NULL DEFAULT 'draft',
    reviewComment TEXT,
    createdBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    updatedAt REAL NOT NULL
);
CREATE INDEX tour_site ON tour(siteId);

CREATE TABLE waypoint (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tourId INTEGER NOT NULL REFERENCES tour(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    latitude REAL NOT NULL,
    longitude REAL NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    createdAt REAL NOT NULL,
    updatedAt REAL NOT NULL,
    UNIQUE (tourId, position)
);
CREATE UNIQUE INDEX waypoint_name ON waypoint(tourId, name COLLATE NOCASE);

CREATE TABLE auditEvent (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    occurredAt REAL NOT NULL,
    userId INTEGER REFERENCES user(id) ON DELETE SET NULL,
    siteId INTEGER REFERENCES site(id) ON DELETE SET NULL,
    objectType TEXT NOT NULL,
    objectId TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    ipAddress TEXT
);
CREATE INDEX auditEvent_user ON auditEvent(userId);
CREATE INDEX auditEvent_site ON auditEvent(siteId);
CREATE INDEX auditEvent_object ON auditEvent(objectType, objectId);
