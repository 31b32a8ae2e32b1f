#include "CSQLiteHardening.h"

int trail_sqlite_harden_untrusted(sqlite3 *db, int max_length) {
    int rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)0)) != SQLITE_OK) return rc;
    if ((rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)0)) != SQLITE_OK) return rc;
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, max_length);
    return SQLITE_OK;
}
