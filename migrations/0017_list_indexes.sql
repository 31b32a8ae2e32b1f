-- Every list the server pages reads an index in list order, so a page costs the same at 1 tour as at 1,000
-- (ListQueryPlanTests runs each list query under EXPLAIN QUERY PLAN and fails on a table scan).

-- A site's tours by name without regard to case, then id: the management API's list and the site page, unfiltered
-- or searched by name (the search filters while walking the index; the page stops at its limit).
CREATE INDEX tour_site_name ON tour(siteId, name COLLATE NOCASE, id);
-- The same, one state at a time (the "draft" / "in review" / "published" filters).
CREATE INDEX tour_site_state_name ON tour(siteId, state, name COLLATE NOCASE, id);
-- tour_site (0001) is a prefix of tour_site_name: every query it served is served by the new one.
DROP INDEX tour_site;

-- The visitors' list (/visit): published, visible packages by site, then id. Partial: only what visitors may see.
CREATE INDEX package_site_visible ON package(siteId, id) WHERE isVisible = 1 AND currentVersion IS NOT NULL;
