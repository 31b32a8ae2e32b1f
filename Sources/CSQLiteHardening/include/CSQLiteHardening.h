#ifndef TRAIL_CSQLITEHARDENING_H
#define TRAIL_CSQLITEHARDENING_H

#include <sqlite3.h>

/// Locks down a connection to an SQLite file that came from outside (an uploaded MBTiles file), before any query:
/// - SQLITE_DBCONFIG_DEFENSIVE: no writable_schema, no corrupting PRAGMAs or shadow-table writes;
/// - SQLITE_DBCONFIG_TRUSTED_SCHEMA off: functions with side effects cannot run from the file's schema;
/// - triggers and views disabled: nothing the file defines runs when we read it (we read real tables only);
/// - SQLITE_LIMIT_LENGTH = max_length: no string or blob larger than that is ever built in memory, so a crafted value
///   (`zeroblob(1e9)`, a 1 GB stored blob) fails with SQLITE_TOOBIG instead of being read.
/// `sqlite3_db_config` is variadic, which Swift cannot call; hence this shim. Returns SQLITE_OK or the first failure.
int trail_sqlite_harden_untrusted(sqlite3 *db, int max_length);

#endif
