-- Accounts whose email address nobody proved. An invitation link shown on the panel (no SMTP) can be used by whoever
-- holds it, so the account it makes proves nothing about the invited address: such an account does not count toward a
-- site's required approvals, and at its first single sign-on (where the provider vouches for the address) its password
-- is voided, its sessions end and its tokens are revoked before the provider's `sub` is bound. An administrator may
-- confirm the address by hand. Every account made otherwise (by an admin, from a mailed link, by the provider) is proven.
ALTER TABLE user ADD COLUMN addressProven INTEGER NOT NULL DEFAULT 1 CHECK (addressProven IN (0, 1));

-- Whether the invitation's link was shown to the inviter (no email carried it).
ALTER TABLE invitation ADD COLUMN linkShown INTEGER NOT NULL DEFAULT 0 CHECK (linkShown IN (0, 1));

-- Invitations made before this migration: the audit log says which links were shown, and an account made within a
-- minute of its invitation's use was made from it.
UPDATE invitation SET linkShown = 1 WHERE id IN (
    SELECT CAST(objectId AS INTEGER) FROM auditEvent
    WHERE objectType = 'invitation' AND action = 'invitation.create' AND detail LIKE '%(link shown, no email)'
);
UPDATE user SET addressProven = 0 WHERE id IN (
    SELECT invitation.acceptedBy FROM invitation JOIN user ON user.id = invitation.acceptedBy
    WHERE invitation.linkShown = 1 AND ABS(user.createdAt - invitation.acceptedAt) < 60
);

-- One open invitation per address and site: a repeat sends the same invitation again (with a new link) instead of
-- adding another row. Older duplicates are closed as if withdrawn, keeping the newest.
DELETE FROM invitation WHERE acceptedAt IS NULL AND id NOT IN (
    SELECT MAX(id) FROM invitation WHERE acceptedAt IS NULL GROUP BY siteId, email
);
CREATE UNIQUE INDEX invitation_open_address ON invitation(siteId, email) WHERE acceptedAt IS NULL;

-- Which tour a "review requested" message is about, so that a submit-and-withdraw loop merges into one message per
-- reviewer within a few minutes; and the sender of an invitation, for the per-inviter limit.
ALTER TABLE outbox ADD COLUMN aboutTourId INTEGER;
ALTER TABLE outbox ADD COLUMN sentBy INTEGER;
CREATE INDEX outbox_created ON outbox(createdAt);
-- The daily ceiling counts what was sent in the last 24 hours before every batch the outbox sends.
CREATE INDEX outbox_sent ON outbox(state, sentAt);
CREATE INDEX outbox_recipient ON outbox(recipient COLLATE NOCASE, kind, createdAt);
