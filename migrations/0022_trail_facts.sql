-- Trail facts: what the ground says about a tour (length, heights, profile, grades, each stop's elevation), worked
-- out from the route or the terrain model when either changes and kept as JSON, with the model's fingerprint ('' for
-- none) so that facts from another model are worked out again. Never computed per request.
CREATE TABLE trailFacts (
    tourId INTEGER PRIMARY KEY REFERENCES tour(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    facts TEXT NOT NULL CHECK (json_valid(facts)),
    computedAt REAL NOT NULL
);

-- Tours whose facts are out of date. Triggers fill it on every change of a route or a stop's place or order, however
-- the change was made (the editor, an import, a restore), and the write that made the change works the facts out
-- before it commits. No foreign key: a stop deleted with its tour leaves a row that names no tour, skipped and removed.
CREATE TABLE trailFactsStale (tourId INTEGER PRIMARY KEY);

CREATE TRIGGER trail_facts_tour_insert AFTER INSERT ON tour
BEGIN
    INSERT OR IGNORE INTO trailFactsStale (tourId) VALUES (NEW.id);
END;

CREATE TRIGGER trail_facts_route AFTER UPDATE OF route ON tour
WHEN OLD.route IS NOT NEW.route
BEGIN
    INSERT OR IGNORE INTO trailFactsStale (tourId) VALUES (NEW.id);
END;

CREATE TRIGGER trail_facts_waypoint_insert AFTER INSERT ON waypoint
BEGIN
    INSERT OR IGNORE INTO trailFactsStale (tourId) VALUES (NEW.tourId);
END;

CREATE TRIGGER trail_facts_waypoint_delete AFTER DELETE ON waypoint
BEGIN
    INSERT OR IGNORE INTO trailFactsStale (tourId) VALUES (OLD.tourId);
END;

CREATE TRIGGER trail_facts_waypoint_update AFTER UPDATE OF latitude, longitude, position ON waypoint
WHEN OLD.latitude IS NOT NEW.latitude OR OLD.longitude IS NOT NEW.longitude OR OLD.position IS NOT NEW.position
BEGIN
    INSERT OR IGNORE INTO trailFactsStale (tourId) VALUES (NEW.tourId);
END;

-- Every tour made before gets its facts on the first writes after the upgrade (the server works the backlog at start).
INSERT INTO trailFactsStale (tourId) SELECT id FROM tour;

-- The ranger's part of accessibility. The surface's list is TrailSurface's cases.
ALTER TABLE tour ADD COLUMN accessSurface TEXT CHECK (accessSurface IN ('paved', 'boardwalk', 'compacted', 'natural', 'mixed'));
ALTER TABLE tour ADD COLUMN accessMinWidthCm INTEGER CHECK (accessMinWidthCm BETWEEN 10 AND 5000);
ALTER TABLE tour ADD COLUMN accessStepFree INTEGER CHECK (accessStepFree IN (0, 1));
ALTER TABLE tour ADD COLUMN accessNotes TEXT NOT NULL DEFAULT '' CHECK (length(accessNotes) <= 2000);
