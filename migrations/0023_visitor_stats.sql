-- Visitor statistics without tracking: what the player and the apps report is kept only as counts per day and kind.
-- No row names a person, an address, a browser or a device, so there is nothing about a visitor to look up or delete.
-- waypointId, language and source are '' when the event had none: the primary key needs values, and NULLs in a key
-- would never match an upsert's conflict.
CREATE TABLE visitCount (
    -- The visitor's local date, YYYY-MM-DD (text sorts as dates do).
    day TEXT NOT NULL,
    packageId TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('opened', 'saved-offline', 'stop-opened', 'stop-played', 'completed', 'alert-shown')),
    -- The manifest's waypoint id, as text ('' for the whole tour).
    waypointId TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    -- The sign the visitor scanned (the QR link's ?src=).
    source TEXT NOT NULL DEFAULT '',
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (day, packageId, version, kind, waypointId, language, source)
) WITHOUT ROWID;
-- The panel reads a site's packages over a span of days.
CREATE INDEX visitCountPackageDay ON visitCount(packageId, day);

-- Complete downloads of a package version, per UTC day, counted by the server itself: a download the app or the
-- player proved whole (POST /packages/{id}/verify), once a day per caller, as packageVersion.verifiedCount.
CREATE TABLE downloadCount (
    day TEXT NOT NULL,
    packageId TEXT NOT NULL REFERENCES package(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (packageId, version, day)
) WITHOUT ROWID;
