-- Visitor content, trigger zones: each waypoint has a radius in metres around it within which an app plays the stop's
-- media. 30 m is the default (what most apps guess); 5 to 500 m is what GPS and a walking visitor make sensible.
ALTER TABLE waypoint ADD COLUMN triggerRadiusMeters INTEGER NOT NULL DEFAULT 30
    CHECK (triggerRadiusMeters BETWEEN 5 AND 500);
