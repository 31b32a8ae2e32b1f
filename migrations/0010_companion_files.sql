-- Visitor content, accessible media: captions (WebVTT, for video) and transcripts (text or WebVTT, for audio) are
-- files that belong to another asset, their "companion". They are asset rows, so they are stored, scanned, counted
-- against the quota, backed up and cleaned up like every upload; they carry their owner's waypoint (so deleting the
-- waypoint removes them) but are not among the waypoint's listed files. One of each role per asset.
ALTER TABLE asset ADD COLUMN companionOf INTEGER REFERENCES asset(id) ON DELETE CASCADE;
ALTER TABLE asset ADD COLUMN companionRole TEXT CHECK (companionRole IN ('captions', 'transcript'))
    CHECK ((companionRole IS NULL) = (companionOf IS NULL));
CREATE UNIQUE INDEX asset_companion ON asset(companionOf, companionRole) WHERE companionOf IS NOT NULL;
