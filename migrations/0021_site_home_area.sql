-- A site's home area, where a new tour's map opens (all four edges, or none: then the frame of the site's first
-- tour), and its time zone, an IANA name such as America/Los_Angeles, checked against the system's list on writing.
ALTER TABLE site ADD COLUMN homeNorth REAL;
ALTER TABLE site ADD COLUMN homeSouth REAL;
ALTER TABLE site ADD COLUMN homeEast REAL;
ALTER TABLE site ADD COLUMN homeWest REAL;
ALTER TABLE site ADD COLUMN timeZone TEXT NOT NULL DEFAULT 'UTC';
