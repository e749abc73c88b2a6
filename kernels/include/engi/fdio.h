/*
 * fdio.h - writing a whole buffer to a file descriptor: the one write loop
 * of the kernels, their helper programs and the sweep (src/core/fsutil.c's
 * fs_write_all_fd calls it).
 */
#ifndef ENGI_FDIO_H
#define ENGI_FDIO_H

#include <stddef.h>

/* Writes data[0, len) to fd, again after EINTR and short writes; -1 (errno
 * set, 0 for a write that wrote nothing) when it cannot. */
int engi_write_all(int fd, const void *data, size_t len);

#endif
