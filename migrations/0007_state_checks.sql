-- Every state column refuses values its Swift enum does not have. The other state columns got a CHECK when their table
-- was created; tour.state (0001) did not. SQLite cannot add a CHECK to an existing column without rebuilding the table
-- (and every table that refers to it), so two triggers enforce the same rule. The allowed lists are TourState's cases;
-- StateColumnTests compares every state column's list with its enum.
CREATE TRIGGER tour_state_check_insert BEFORE INSERT ON tour
WHEN NEW.state NOT IN ('draft', 'inReview', 'published')
BEGIN
    SELECT RAISE(ABORT, 'tour.state must be one of draft, inReview, published');
END;

CREATE TRIGGER tour_state_check_update BEFORE UPDATE OF state ON tour
WHEN NEW.state NOT IN ('draft', 'inReview', 'published')
BEGIN
    SELECT RAISE(ABORT, 'tour.state must be one of draft, inReview, published');
END;
