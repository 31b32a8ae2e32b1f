#ifndef TRAIL_CFILEWRITEBACK_H
#define TRAIL_CFILEWRITEBACK_H

/// Asks the kernel to start writing a file's dirty pages in [offset, offset + count) to disk (count 0: to the end
/// of the file) and returns without waiting: Linux `sync_file_range(..., SYNC_FILE_RANGE_WRITE)`, which Swift's
/// Glibc module does not export. Elsewhere it does nothing. Returns 0, or -1 with errno set.
int trail_start_writeback(int fd, long long offset, long long count);

#endif
