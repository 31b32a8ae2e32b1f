-- Single sign-on: the provider's subject (`sub`, its own id of the person) of each account, kept at the account's first
-- sign-on through it. Accounts are found by verified email; a later sign-on for the same email whose `sub` differs is
-- refused, so a provider that hands a departed person's address to someone new does not hand them the account. One
-- subject links one account. An administrator's reset of the account's two-step sign-in forgets the link.
CREATE TABLE singleSignOnSubject (
    userId INTEGER PRIMARY KEY REFERENCES user(id) ON DELETE CASCADE,
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    linkedAt REAL NOT NULL,
    UNIQUE (issuer, subject)
);
