-- Visitor content, languages: a tour's languages (BCP 47 tags, the first is the default) and, per further language,
-- the tour's and each waypoint's name and description. The default language's texts stay in the name and
-- description columns; the others are JSON objects {"es": {"name": …, "description": …}}. A media file belongs to
-- one language (the Spanish narration) or, with NULL, to all (a photo). Per site, whether every further language
-- must be complete before a submission (1) or missing texts are only warned about (0, the default).
ALTER TABLE tour ADD COLUMN languages TEXT NOT NULL DEFAULT '["en"]'
    CHECK (json_valid(languages) AND json_type(languages) = 'array' AND json_array_length(languages) >= 1);
ALTER TABLE tour ADD COLUMN localized TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(localized) AND json_type(localized) = 'object');
ALTER TABLE waypoint ADD COLUMN localized TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(localized) AND json_type(localized) = 'object');
ALTER TABLE asset ADD COLUMN language TEXT;
ALTER TABLE site ADD COLUMN requireCompleteLanguages INTEGER NOT NULL DEFAULT 0 CHECK (requireCompleteLanguages IN (0, 1));
