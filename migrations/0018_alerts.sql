-- Alerts and closures: posted by a site's managers (or an admin) without review, delivered to phones in the signed
-- catalog. Current and scheduled alerts (not retired, endsAt still ahead) are listed in every catalog; posting, ending
-- and the first catalog after an alert ran out each move the catalog version (retiredAt marks the last two).
CREATE TABLE alert (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    -- The tour it is about (nil: the whole site); its package id is looked up when the catalog is signed, so an
    -- alert posted before the tour's first release names the package once there is one.
    tourId INTEGER REFERENCES tour(id) ON DELETE CASCADE,
    severity TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'closure')),
    title TEXT NOT NULL,
    message TEXT NOT NULL,
    -- JSON array of waypoint ids of that tour (the ids manifests carry), closed while the alert holds.
    closedWaypointIds TEXT NOT NULL DEFAULT '[]',
    startsAt REAL NOT NULL,
    endsAt REAL NOT NULL,
    createdBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    -- Set by DELETE /manage/alerts/{id} (ended early), with who ended it.
    endedAt REAL,
    endedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    -- Set once the catalog no longer lists it (ended, or past endsAt and noticed by the catalog signer).
    retiredAt REAL
);
CREATE INDEX alertLive ON alert(retiredAt, endsAt);
CREATE INDEX alertSite ON alert(siteId, endsAt);

-- A catalog change made by an alert is mirrored like any other, so distributionJob.reason gains 'alert'. SQLite cannot
-- change a CHECK in place: the table is rebuilt (nothing refers to it) with its rows and index.
CREATE TABLE distributionJobNew (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    catalogVersion INTEGER NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('release', 'publish', 'unpublish', 'rollback', 'alert')),
    state TEXT NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'done')),
    createdAt REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lastError TEXT,
    -- When the attempts started failing (cleared by a success): the panel's "retrying since".
    failingSince REAL,
    doneAt REAL
);
INSERT INTO distributionJobNew (id, catalogVersion, reason, state, createdAt, attempts, lastError, failingSince, doneAt)
    SELECT id, catalogVersion, reason, state, createdAt, attempts, lastError, failingSince, doneAt FROM distributionJob;
DROP TABLE distributionJob;
ALTER TABLE distributionJobNew RENAME TO distributionJob;
CREATE INDEX distributionJobWaiting ON distributionJob(state, catalogVersion);
