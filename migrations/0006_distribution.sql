-- The object-storage mirror (--storage s3://BUCKET/PREFIX): durable sync jobs, what is confirmed in which bucket, and
-- multipart uploads under way. Without --storage the jobs are written all the same (one small row per release,
-- unpublish or rollback) and wait; a later `storage sync` or a start with --storage settles them in one pass.

-- Written in the same transaction as every catalog change. A job is done once the bucket's catalog.json is of its
-- catalogVersion or later, which needs every object that catalog names to be confirmed first.
CREATE TABLE distributionJob (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    catalogVersion INTEGER NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN ('release', 'publish', 'unpublish', 'rollback')),
    state TEXT NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'done')),
    createdAt REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lastError TEXT,
    -- When the attempts started failing (cleared by a success): the panel's "retrying since".
    failingSince REAL,
    doneAt REAL
);
CREATE INDEX distributionJobWaiting ON distributionJob(state, catalogVersion);

-- An object of the distribution tree confirmed in a bucket (its size and SHA-256 read back with HEAD after upload).
-- `location` is s3://BUCKET/PREFIX, so pointing the server at another bucket starts from nothing.
CREATE TABLE distributionObject (
    location TEXT NOT NULL,
    -- The path in the tree: catalog.json, packages/<id>/<n>.zip, files/<sha256>, ...
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    confirmedAt REAL NOT NULL,
    PRIMARY KEY (location, path)
);

-- A multipart upload begun and not finished: after a restart it continues from the parts the bucket lists.
CREATE TABLE distributionUpload (
    location TEXT NOT NULL,
    path TEXT NOT NULL,
    uploadId TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    partSize INTEGER NOT NULL,
    startedAt REAL NOT NULL,
    PRIMARY KEY (location, path)
);
