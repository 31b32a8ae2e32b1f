-- Routes and duration estimates: the trail line of a tour, its walking pace, and media play times.

-- JSON array of [longitude, latitude] or [longitude, latitude, elevation] positions; NULL when the tour has no route.
ALTER TABLE tour ADD COLUMN route TEXT;
-- Walking pace for the duration estimate, km/h.
ALTER TABLE tour ADD COLUMN paceKmh REAL NOT NULL DEFAULT 4 CHECK (paceKmh > 0 AND paceKmh <= 20);
-- Play time of audio and video, read from the file's own headers when it tells; NULL otherwise.
ALTER TABLE asset ADD COLUMN durationSeconds REAL;
