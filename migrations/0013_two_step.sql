-- Two-step sign-in (TOTP, RFC 6238: six digits, 30-second steps). `totpSecret` is the authenticator app's key, set when
-- enrolment starts and only in force once `totpEnrolledAt` is set (the first right code confirms it). `totpLastStep` is
-- the last time step a code was accepted for: a code of that step or an earlier one is refused, so a code seen over a
-- shoulder or in a proxy log works once. `twoStepResetNotice` tells the user, at their next sign-in, that an
-- administrator reset their second step.
ALTER TABLE user ADD COLUMN totpSecret TEXT;
ALTER TABLE user ADD COLUMN totpEnrolledAt REAL;
ALTER TABLE user ADD COLUMN totpLastStep INTEGER NOT NULL DEFAULT 0;
ALTER TABLE user ADD COLUMN twoStepResetNotice INTEGER NOT NULL DEFAULT 0 CHECK (twoStepResetNotice IN (0, 1));

-- Ten one-time recovery codes per enrolment, stored as SHA-256 (they are 80 random bits: a slow hash adds nothing).
CREATE TABLE recoveryCode (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    codeHash TEXT NOT NULL,
    usedAt REAL
);
CREATE INDEX recoveryCode_user ON recoveryCode(userId);

-- A half-signed-in browser: the password was right, the second step ('code') or the enrolment ('enrol') is still to do.
-- It opens no page of the panel. The cookie holds a random token; only its SHA-256 is stored, as for sessions.
CREATE TABLE pendingSignIn (
    tokenHash TEXT PRIMARY KEY,
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    stage TEXT NOT NULL CHECK (stage IN ('code', 'enrol')),
    next TEXT NOT NULL,
    createdAt REAL NOT NULL,
    ipAddress TEXT
);
CREATE INDEX pendingSignIn_user ON pendingSignIn(userId);
