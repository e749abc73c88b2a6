/*
 * fsutil.h - files, paths and clocks, with the checks every module needs at
 * the boundary to untrusted names: an environment path is relative, has no
 * "..", no empty or "." components and no control characters; a host path
 * named by a task stays inside the task's folder.
 *
 * All calls block on the file system; all are thread-safe.
 */
#ifndef ENGI_FSUTIL_H
#define ENGI_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"

#define ENV_PATH_MAX 255

/* 0 when p is a safe relative path (see above), else ENGI_EINVALID with why. */
int fs_env_path_check(const char *p, struct engi_error *err);

/* mkdir -p with mode; existing folders are fine. */
int fs_mkdir_p(const char *path, unsigned mode, struct engi_error *err);
/* rm -rf that never follows symbolic links; a missing path is fine. */
int fs_rm_rf(const char *path, struct engi_error *err);
/* Makes the parent folders of file path p. */
int fs_mkdir_parents(const char *p, unsigned mode, struct engi_error *err);

/* A descriptor of path opened for reading, or a negative code: refused
 * unless it is a regular file (a FIFO, a device or a folder is named in
 * the message; opening one never blocks) and, with nofollow, unless path
 * itself is no symbolic link. */
int fs_open_regular(const char *path, int nofollow, struct engi_error *err);
/* The SHA-256 of a regular file (fs_open_regular), as 64 hex digits. */
int fs_sha256_regular_file(const char *path, char hex[65], struct engi_error *err);
/* The last line of a text file that is not empty (its end of line cut),
 * into buf; "" when none or unreadable. For messages quoting a log. */
void fs_file_last_line(const char *path, char *buf, size_t n);

/* Whole regular file (fs_open_regular), at most cap bytes (over:
 * ENGI_ETOOBIG); NUL-terminated. */
int fs_read_file(const char *path, size_t cap, char **out, size_t *len, struct engi_error *err);
/* Writes through a temporary file, fsyncs and renames over path. */
int fs_write_file_atomic(const char *path, const void *data, size_t len, struct engi_error *err);
/* Copies a regular file (refusing links and special files), at most cap
 * bytes; creates dst with mode 0644. */
int fs_copy_file_capped(const char *src, const char *dst, uint64_t cap, uint64_t *copied,
			struct engi_error *err);

/* write() until done, retrying on EINTR; -1 with errno on failure. */
int fs_write_all_fd(int fd, const void *data, size_t len);
/* Copies an open regular file to a new file dst (mode 0644, not following a
 * link at dst), at most cap bytes; src_name names the source in messages. */
int fs_copy_fd_capped(int in, const char *src_name, const char *dst, uint64_t cap, uint64_t *copied,
		      struct engi_error *err);

int fs_path_is_dir(const char *p);
int fs_path_is_file(const char *p);

/* The names of dir's entries (never "." or "..") that keep accepts (NULL:
 * every one), at most max of them, in name order: what a source reads must
 * not depend on the folder's order. engi_free each and the list
 * (fs_names_free); -1 when dir cannot be opened. */
int fs_dir_names(const char *dir, int (*keep)(const char *dir, const char *name, void *ctx),
		 void *ctx, size_t max, char ***out, size_t *n);
void fs_names_free(char **v, size_t n);

/* Seconds: monotonic (for durations) and wall (unix time). */
double clk_now_mono(void);
double clk_now_wall(void);
/* Sleeps s seconds (nothing when s <= 0), resuming after signals. */
void clk_sleep_seconds(double s);

#endif
