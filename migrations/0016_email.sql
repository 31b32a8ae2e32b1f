-- Email: the durable outbox, invitations to join a site, and who turned which notification off.

-- Every message waits here until the SMTP server took it. A message is queued in the same transaction as the event it
-- tells about where that is possible, so a rollback sends nothing and a crash loses nothing; the outbox service sends
-- it later, retrying with a growing delay, and gives up (failed) only after many attempts.
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('invitation', 'reviewRequested', 'approved', 'denied', 'released', 'alert')),
    state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    nextAttemptAt REAL NOT NULL,
    lastError TEXT,
    createdAt REAL NOT NULL,
    sentAt REAL
);
CREATE INDEX outbox_due ON outbox(state, nextAttemptAt);

-- An invitation to join a site with a role. Only the SHA-256 of its link's token is kept (like sessions and API
-- tokens); the link works once, until expiresAt.
CREATE TABLE invitation (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    siteId INTEGER NOT NULL REFERENCES site(id) ON DELETE CASCADE,
    email TEXT NOT NULL COLLATE NOCASE,
    role TEXT NOT NULL CHECK (role IN ('author', 'reviewer', 'manager')),
    tokenHash TEXT NOT NULL UNIQUE,
    invitedBy INTEGER REFERENCES user(id) ON DELETE SET NULL,
    createdAt REAL NOT NULL,
    expiresAt REAL NOT NULL,
    acceptedAt REAL,
    acceptedBy INTEGER REFERENCES user(id) ON DELETE SET NULL
);
CREATE INDEX invitation_site ON invitation(siteId);

-- A row per notification a person turned off (none: they get every one).
CREATE TABLE notificationOptOut (
    userId INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('reviewRequested', 'approved', 'denied', 'released', 'alert')),
    PRIMARY KEY (userId, kind)
) WITHOUT ROWID;
