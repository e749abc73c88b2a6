/*
 * stored.h - a results file read back whole, with each episode turned into
 * a record again (assertions, metrics, artifact digests and trace), for the
 * commands that rewrite results files (merge, reverify).
 */
#ifndef ENGI_STORED_H
#define ENGI_STORED_H

#include <stddef.h>

#include "engi/error.h"
#include "engi/results.h"
#include "record.h"

struct rowidx {
	const char *cell;
	size_t row;
};

/* Rows of one table sorted by cell, to find a cell's rows by bisection. */
struct index {
	struct rowidx *v;
	size_t n;
};

struct store_reader;

struct stored {
	const char *path;
	struct engi_results res;
	struct index asserts, metrics, artifacts;
	struct store_reader *reader;
};

/* Reads path into s (zeroed first); stored_close releases it, also after a
 * failure. */
int stored_open(struct stored *s, const char *path, struct engi_error *err);
void stored_close(struct stored *s);
/* Episode e of s as a record, trace included; r is initialised here. */
int stored_record(struct stored *s, size_t e, struct record *r, struct engi_error *err);

struct store;
/* Ends writing a results file made under the temporary name tmp: closes
 * *st (if open), and when rc and the close succeeded renames tmp to out,
 * else removes tmp. Returns the first failure. */
int stored_finish(struct store **st, const char *tmp, const char *out, int rc,
		  struct engi_error *err);

#endif
