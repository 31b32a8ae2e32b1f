#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#endif
#include "CFileWriteback.h"

int trail_start_writeback(int fd, long long offset, long long count) {
#if defined(__linux__)
    return sync_file_range(fd, offset, count, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd; (void)offset; (void)count;
    return 0;
#endif
}
