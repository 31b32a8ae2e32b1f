-- Visitor content, accessible media: a title for every file and a text alternative for images (WCAG 1.1.1), and
-- per site whether accessible media is required before publishing or only recommended (required by default: a
-- public agency's media must be accessible, Section 508).
ALTER TABLE asset ADD COLUMN title TEXT NOT NULL DEFAULT '' CHECK (length(title) <= 200);
ALTER TABLE asset ADD COLUMN altText TEXT NOT NULL DEFAULT '' CHECK (length(altText) <= 1000);
ALTER TABLE site ADD COLUMN mediaAccessibility TEXT NOT NULL DEFAULT 'required'
    CHECK (mediaAccessibility IN ('required', 'recommended'));
