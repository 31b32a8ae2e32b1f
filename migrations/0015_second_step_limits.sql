-- Wrong second-step codes, per account (whatever the address they came from): a few in a short window make the
-- account's second step wait, and a hundred in a row lock it until an administrator resets the password or the two-step
-- sign-in. The owner is told how many there were at their next sign-in; a right code clears them.
CREATE TABLE secondStepFailure (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    failedAt REAL NOT NULL,
    ipAddress TEXT
);
CREATE INDEX secondStepFailure_user ON secondStepFailure(userId, failedAt);

-- The enrolment key in progress belongs to the step that showed it: the SHA-256 of that half-finished sign-in's (or
-- session's) token. Another attempt makes a new key, so a key seen once never confirms someone else's enrolment.
ALTER TABLE user ADD COLUMN totpSecretHolder TEXT;

-- The password a half-finished sign-in passed, as the SHA-256 of its hash: once the password changes, is reset or is
-- voided, the half-finished sign-in no longer matches and is refused.
ALTER TABLE pendingSignIn ADD COLUMN passwordDigest TEXT;
