#ifndef TRAIL_CCLAMAV_SHIM_H
#define TRAIL_CCLAMAV_SHIM_H
#include <clamav.h>

/* Macros Swift cannot import (they are expressions over other macros). */
static inline unsigned int trail_clamav_db_stdopt(void) { return CL_DB_STDOPT; }

#endif
