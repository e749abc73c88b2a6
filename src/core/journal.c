#include "journal.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_HEADER	 "{\"format\":\"engisweep-journal\",\"version\":1}\n"
#define JOURNAL_LINE_CAP ((size_t)1 << 30)

/* Length of the prefix made of complete lines, found by reading backwards
 * from the end; -1 on a read error. */
static off_t complete_length(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	off_t end = st.st_size;
	char buf[4096];
	while (end > 0) {
		size_t n = end < (off_t)sizeof(buf) ? (size_t)end : sizeof(buf);
		ssize_t r = pread(fd, buf, n, end - (off_t)n);
		if (r != (ssize_t)n)
			return -1;
		for (size_t i = n; i > 0; i--)
			if (buf[i - 1] == '\n')
				return end - (off_t)n + (off_t)i;
		end -= (off_t)n;
	}
	return 0;
}

int journal_open(struct journal *j, const char *path, int resume, struct engi_error *err)
{
	j->fd = -1;
	j->unsynced = 0;
	j->path = engi_strdup(path);
	if (!j->path)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	if (resume && fs_path_is_file(path)) {
		j->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
		if (j->fd < 0) {
			int e = errno;
			journal_close(j);
			RAISE(err, ENGI_EIO, "cannot open journal '%s': %s", path, strerror(e));
		}
		off_t keep = complete_length(j->fd);
		char head[64] = "";
		size_t hl = strlen(JOURNAL_HEADER);
		ssize_t got = keep > 0 ? pread(j->fd, head, hl, 0) : 0;
		int has_header = got == (ssize_t)hl && !memcmp(head, JOURNAL_HEADER, hl);
		if (keep > 0 && !has_header) {
			journal_close(j);
			RAISE(err, ENGI_EPARSE, "'%s' is not an engisweep journal", path);
		}
		if (keep < 0 || ftruncate(j->fd, keep) < 0) {
			int e = errno;
			journal_close(j);
			RAISE(err, ENGI_EIO, "cannot repair journal '%s': %s", path, strerror(e));
		}
		if (!has_header && fs_write_all_fd(j->fd, JOURNAL_HEADER, hl) < 0) {
			journal_close(j);
			RAISE(err, ENGI_EIO, "cannot write journal '%s'", path);
		}
		return 0;
	}
	j->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (j->fd < 0) {
		int e = errno;
		journal_close(j);
		RAISE(err, ENGI_EIO, "cannot create journal '%s': %s", path, strerror(e));
	}
	if (fs_write_all_fd(j->fd, JOURNAL_HEADER, strlen(JOURNAL_HEADER)) < 0 ||
	    fsync(j->fd) < 0) {
		journal_close(j);
		RAISE(err, ENGI_EIO, "cannot write journal '%s'", path);
	}
	return 0;
}

int journal_write_json(struct journal *j, const char *json, size_t len, struct engi_error *err)
{
	if (memchr(json, '\n', len))
		RAISE(err, ENGI_EINVALID, "a journal record spans lines");
	char *buf = engi_malloc(len + 1);
	if (!buf)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	memcpy(buf, json, len);
	buf[len] = '\n';
	int rc = 0;
	if (fs_write_all_fd(j->fd, buf, len + 1) < 0)
		rc = engi_raise(err, ENGI_EIO, "cannot append to journal '%s': %s", j->path,
				strerror(errno));
	else
		j->unsynced = 1;
	engi_free(buf);
	return rc;
}

int journal_sync(struct journal *j, struct engi_error *err)
{
	if (!j->unsynced)
		return 0;
	if (fdatasync(j->fd) < 0)
		RAISE(err, ENGI_EIO, "cannot append to journal '%s': %s", j->path, strerror(errno));
	j->unsynced = 0;
	return 0;
}

int journal_append_json(struct journal *j, const char *json, size_t len, struct engi_error *err)
{
	TRY(journal_write_json(j, json, len, err));
	return journal_sync(j, err);
}

int journal_append(struct journal *j, const struct record *r, struct engi_error *err)
{
	char *line;
	size_t len;
	TRY(record_to_json(r, &line, &len, err));
	int rc = journal_append_json(j, line, len, err);
	engi_free(line);
	return rc;
}

void journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	engi_free(j->path);
	j->path = NULL;
}

int journal_read(const char *path, int (*fn)(void *ctx, struct record *r, struct engi_error *err),
		 void *ctx, size_t *nrecords, struct engi_error *err)
{
	if (nrecords)
		*nrecords = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		RAISE(err, ENGI_EIO, "cannot open journal '%s': %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	size_t lineno = 0;
	int rc = 0;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] != '\n')
			break; /* the partial last line of a killed writer */
		if (lineno == 1) {
			if (strcmp(line, JOURNAL_HEADER))
				rc = engi_raise(err, ENGI_EPARSE,
						"'%s' is not an engisweep journal", path);
			continue;
		}
		if (n == 1)
			continue;
		if ((size_t)n > JOURNAL_LINE_CAP) {
			rc = engi_raise(err, ENGI_ETOOBIG, "%s: line %zu is over %zu bytes", path,
					lineno, JOURNAL_LINE_CAP);
			break;
		}
		struct record r;
		record_init(&r);
		rc = record_from_json(line, (size_t)n - 1, &r, err);
		if (rc < 0) {
			engi_error_prefix(err, "%s: line %zu", path, lineno);
			break;
		}
		rc = fn(ctx, &r, err);
		if (nrecords && rc == 0)
			(*nrecords)++;
	}
	free(line);
	fclose(f);
	return rc;
}
