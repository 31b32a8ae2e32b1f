-- Agency sign-in: per site, whether its members may sign in with a password here (1, the default) or only through the
-- agency's OpenID Connect provider (0). Administrators always keep password sign-in, so an outage of the provider
-- cannot lock everyone out; API tokens are not affected.
ALTER TABLE site ADD COLUMN passwordSignIn INTEGER NOT NULL DEFAULT 1 CHECK (passwordSignIn IN (0, 1));
