#include "fsutil.h"

#include "engi/alloc.h"
#include "engi/fdio.h"
#include "engi/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fs_env_path_check(const char *p, struct engi_error *err)
{
	size_t n = strlen(p);
	if (n == 0)
		RAISE(err, ENGI_EINVALID, "empty path");
	if (n > ENV_PATH_MAX)
		RAISE(err, ENGI_EINVALID, "path longer than %d bytes", ENV_PATH_MAX);
	if (p[0] == '/')
		RAISE(err, ENGI_EINVALID,
		      "absolute path '%s' (paths are relative to the working folder)", p);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			RAISE(err, ENGI_EINVALID, "path '%s' has a control character or backslash",
			      p);
	}
	const char *s = p;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == 0)
			RAISE(err, ENGI_EINVALID, "path '%s' has an empty component", p);
		if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			RAISE(err, ENGI_EINVALID, "path '%s' has a '.' or '..' component", p);
		if (!e)
			break;
		s = e + 1;
		if (!*s)
			RAISE(err, ENGI_EINVALID, "path '%s' ends with '/'", p);
	}
	return 0;
}

int fs_mkdir_p(const char *path, unsigned mode, struct engi_error *err)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		RAISE(err, ENGI_EINVALID, "bad folder name '%s'", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			RAISE(err, ENGI_EIO, "cannot create folder '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		RAISE(err, ENGI_EIO, "cannot create folder '%s': %s", buf, strerror(errno));
	if (!fs_path_is_dir(buf))
		RAISE(err, ENGI_EIO, "'%s' exists and is not a folder", buf);
	return 0;
}

int fs_mkdir_parents(const char *p, unsigned mode, struct engi_error *err)
{
	char buf[PATH_MAX];
	size_t n = strlen(p);
	if (n >= sizeof(buf))
		RAISE(err, ENGI_EINVALID, "path too long '%s'", p);
	memcpy(buf, p, n + 1);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	return fs_mkdir_p(buf, mode, err);
}

static int rm_at(int parent, const char *name, struct engi_error *err)
{
	struct stat st;
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		RAISE(err, ENGI_EIO, "cannot stat '%s': %s", name, strerror(errno));
	}
	if (S_ISDIR(st.st_mode)) {
		int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			RAISE(err, ENGI_EIO, "cannot open folder '%s': %s", name, strerror(errno));
		DIR *d = fdopendir(fd);
		if (!d) {
			close(fd);
			RAISE(err, ENGI_EIO, "cannot read folder '%s'", name);
		}
		struct dirent *de;
		int rc = 0;
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			rc = rm_at(dirfd(d), de->d_name, err);
		}
		closedir(d);
		if (rc < 0)
			return rc;
		if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			RAISE(err, ENGI_EIO, "cannot remove folder '%s': %s", name,
			      strerror(errno));
		return 0;
	}
	if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
		RAISE(err, ENGI_EIO, "cannot remove '%s': %s", name, strerror(errno));
	return 0;
}

int fs_rm_rf(const char *path, struct engi_error *err)
{
	return rm_at(AT_FDCWD, path, err);
}

int fs_open_regular(const char *path, int nofollow, struct engi_error *err)
{
	/* O_NONBLOCK: opening a FIFO or a device must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0 && nofollow && errno == ELOOP)
		RAISE(err, ENGI_EIO, "'%s' is a symbolic link, not a regular file", path);
	if (fd < 0)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	int fl;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		RAISE(err, ENGI_EIO, "'%s' is not a regular file", path);
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		RAISE(err, ENGI_EIO, "cannot read '%s': %s", path, strerror(e));
	}
	return fd;
}

int fs_sha256_regular_file(const char *path, char hex[65], struct engi_error *err)
{
	int fd = fs_open_regular(path, 0, err);
	if (fd < 0)
		return fd;
	struct engi_sha256 h;
	engi_sha256_init(&h);
	unsigned char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			RAISE(err, ENGI_EIO, "cannot read '%s': %s", path, strerror(e));
		}
		engi_sha256_update(&h, buf, (size_t)r);
	}
	close(fd);
	unsigned char d[32];
	engi_sha256_final(&h, d);
	engi_sha256_hex(d, hex);
	return 0;
}

int fs_read_file(const char *path, size_t cap, char **out, size_t *len, struct engi_error *err)
{
	int fd = fs_open_regular(path, 0, err);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		RAISE(err, ENGI_EIO, "cannot read '%s': %s", path, strerror(errno));
	}
	if ((uint64_t)st.st_size > cap) {
		close(fd);
		RAISE(err, ENGI_ETOOBIG, "'%s' is %lld bytes, over the cap of %zu", path,
		      (long long)st.st_size, cap);
	}
	size_t n = (size_t)st.st_size;
	char *buf = engi_malloc(n + 1);
	if (!buf) {
		close(fd);
		RAISE(err, ENGI_ENOMEM, "out of memory reading '%s'", path);
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

int fs_write_all_fd(int fd, const void *data, size_t len)
{
	return engi_write_all(fd, data, len);
}

int fs_write_file_atomic(const char *path, const void *data, size_t len, struct engi_error *err)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		RAISE(err, ENGI_EINVALID, "path too long '%s'", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		RAISE(err, ENGI_EIO, "cannot create '%s': %s", tmp, strerror(errno));
	if (fs_write_all_fd(fd, data, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		RAISE(err, ENGI_EIO, "cannot write '%s': %s", tmp, strerror(e));
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		RAISE(err, ENGI_EIO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
	}
	return 0;
}

int fs_copy_fd_capped(int in, const char *src_name, const char *dst, uint64_t cap, uint64_t *copied,
		      struct engi_error *err)
{
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		RAISE(err, ENGI_EINVALID, "'%s' is not a regular file", src_name);
	if ((uint64_t)st.st_size > cap)
		RAISE(err, ENGI_ETOOBIG, "'%s' is %lld bytes, over the cap of %llu", src_name,
		      (long long)st.st_size, (unsigned long long)cap);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		RAISE(err, ENGI_EIO, "cannot create '%s': %s", dst, strerror(errno));
	char buf[65536];
	uint64_t total = 0;
	int rc = 0;
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = engi_raise(err, ENGI_EIO, "cannot read '%s': %s", src_name,
					strerror(errno));
			break;
		}
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (total > cap) { /* grew while we copied */
			rc = engi_raise(err, ENGI_ETOOBIG, "'%s' grew over the cap of %llu bytes",
					src_name, (unsigned long long)cap);
			break;
		}
		if (fs_write_all_fd(out, buf, (size_t)r) < 0) {
			rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", dst,
					strerror(errno));
			break;
		}
	}
	if (close(out) < 0 && rc == 0)
		rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", dst, strerror(errno));
	if (rc < 0)
		unlink(dst);
	else if (copied)
		*copied = total;
	return rc;
}

int fs_copy_file_capped(const char *src, const char *dst, uint64_t cap, uint64_t *copied,
			struct engi_error *err)
{
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", src, strerror(errno));
	int rc = fs_copy_fd_capped(in, src, dst, cap, copied, err);
	close(in);
	return rc;
}

int fs_path_is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_path_is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

double clk_now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double clk_now_wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void clk_sleep_seconds(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void fs_file_last_line(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (line[0])
			snprintf(buf, n, "%s", line);
	}
	fclose(f);
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int fs_dir_names(const char *dir, int (*keep)(const char *dir, const char *name, void *ctx),
		 void *ctx, size_t max, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	size_t cap = 0;
	struct dirent *de;
	while (*n < max && (de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, "..") || (keep && !keep(dir, name, ctx)))
			continue;
		if (engi_grow((void **)out, &cap, *n + 1, sizeof(**out)) < 0)
			break;
		if (((*out)[*n] = engi_strdup(name)) != NULL)
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), names_cmp);
	return 0;
}

void fs_names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		engi_free(v[i]);
	engi_free(v);
}
