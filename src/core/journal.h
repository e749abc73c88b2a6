/*
 * journal.h - the append-only journal of finished episodes, the source of
 * truth for resume.
 *
 * One JSON line per record (record_to_json), written with one write() and
 * fsynced before journal_append returns, after a header line naming the
 * format; or, for results that arrive together, written each with one
 * write() by journal_write_json and fsynced once by journal_sync (group
 * commit: a killed process loses nothing written, a machine that loses
 * power at most what was written since the last sync). A job killed at any
 * moment leaves at most one partial last line, which journal_read ignores
 * and journal_open_append cuts off. Rank 0 is the only writer; calls block
 * on disk.
 */
#ifndef ENGI_JOURNAL_H
#define ENGI_JOURNAL_H

#include <stddef.h>

#include "engi/error.h"
#include "record.h"

struct journal {
	int fd;
	char *path;
	int unsynced; /* lines written since the last sync */
};

/* Creates a new journal (truncating) or, with resume, opens an existing one
 * for appending after cutting a partial last line. */
int journal_open(struct journal *j, const char *path, int resume, struct engi_error *err);
int journal_append(struct journal *j, const struct record *r, struct engi_error *err);
/* Appends a record already in record_to_json's form (one line). */
int journal_append_json(struct journal *j, const char *json, size_t len, struct engi_error *err);
/* The same, written but not yet fsynced: journal_sync makes it durable. */
int journal_write_json(struct journal *j, const char *json, size_t len, struct engi_error *err);
/* fdatasync of the lines journal_write_json wrote (nothing when none). */
int journal_sync(struct journal *j, struct engi_error *err);
void journal_close(struct journal *j);

/* Calls fn for each complete record in order; fn takes ownership of the
 * record's contents (it must record_release it). A line that fails to parse
 * in the middle of the file is an error naming the line. */
int journal_read(const char *path, int (*fn)(void *ctx, struct record *r, struct engi_error *err),
		 void *ctx, size_t *nrecords, struct engi_error *err);

#endif
