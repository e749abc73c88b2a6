/*
 * store_hdf5.h - what the files of the store share, private to src/store/:
 * the layout of the results file (one row struct of engi/results.h per
 * table), HDF5 failures as ENGI errors, the row and attribute types, the
 * writer's state and the one lock every entry point takes.
 *
 *   store_hdf5.c   the layout, HDF5 errors, types and attributes, signals
 *   store_file.c   the writer's file: create (locked), flush, publish, close
 *   store_rows.c   a record's rows (episodes, assertions, metrics,
 *                  artifacts) and its trace, buffered and written
 *   store_read.c   reading a results file back, tables and traces
 */
#ifndef ENGI_STORE_HDF5_H
#define ENGI_STORE_HDF5_H

#include <hdf5.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "store.h"

#define STORE_FORMAT "engisweep-results"
/* 2: /episodes gained run_outcome and run_message (files of version 1
 * read with them empty); 3: judge_tokens_in, judge_tokens_out and
 * judge_cost_usd (files of versions 1 and 2 read with them 0) */
#define STORE_FORMAT_VERSION 3
#define STORE_CHUNK_ROWS     1024
#define STORE_TRACE_CODEC    "zstd"

/* ---- row layouts: one field list per table, from engi/results.h ---- */

enum field_kind { F_STR, F_I32, F_I64, F_U64, F_F64 };

struct field {
	const char *name;
	size_t offset;
	size_t size;
	enum field_kind kind;
	/* 0, or the format version that brought the field: files of an
	 * earlier version lack it (engi/schema.h's since) */
	int since;
};

enum table_id {
	T_TASKS,
	T_MODELS,
	T_CONDITIONS,
	T_TASK_META, /* optional on reading: files before it lack it */
	T_EPISODES,
	T_ASSERTIONS,
	T_METRICS,
	T_ARTIFACTS,
	T_COUNT
};

struct table_desc {
	const char *path;
	const struct field *fields;
	size_t nfields;
	size_t row_size;
};

/* Each table's dataset path and row layout, in enum table_id order. */
extern const struct table_desc store_tables[T_COUNT];

/* The in-memory compound type of a table: exactly its C struct. */
hid_t store_row_type(const struct table_desc *d);
/* The same without the members that file_type (a dataset's compound type)
 * lacks, for reading a file of an earlier format version. */
hid_t store_row_type_of(const struct table_desc *d, hid_t file_type);

/* ---- HDF5 errors become ENGI errors ---- */

/* The library's own printing would go to stderr behind our back; every
 * failure is reported through struct engi_error instead. */
void store_h5_quiet(void);

struct h5_why {
	char text[240];
};

/* The innermost HDF5 message (the most specific one), then the stack is
 * cleared. */
void store_h5_take_why(struct h5_why *w);
/* engi_raise(err, code, "FMT: <the innermost HDF5 message>") */
__attribute__((format(printf, 3, 4))) int store_h5_fail(struct engi_error *err, int code,
							const char *fmt, ...);
/* Closes any HDF5 object and sets *id to H5I_INVALID_HID; a negative id is
 * left alone. */
void store_h5_close(hid_t *id);

/* SIGTERM-like signals held back in this thread around a flush
 * (store_hdf5.c says why), then delivered as usual. */
void store_defer_signals(sigset_t *old);
void store_restore_signals(const sigset_t *old);

/* HDF5 as Debian builds it is not thread-safe: every entry point of store.h
 * holds this lock (recursive, because some entry points call others). */
extern pthread_mutex_t store_h5_lock;

/* ---- attributes ---- */

/* A UTF-8 string attribute, scrubbed of secrets (secrets.h). */
int store_write_str_attr(hid_t loc, const char *obj, const char *name, const char *value,
			 const char *path, struct engi_error *err);
int store_write_num_attr(hid_t loc, const char *obj, const char *name, hid_t file_type,
			 hid_t mem_type, const void *value, const char *path,
			 struct engi_error *err);
/* Reads a string attribute, fixed-length or variable-length; *out is ours. */
int store_read_str_attr(hid_t loc, const char *obj, const char *name, char **out, const char *path,
			struct engi_error *err);
int store_read_num_attr(hid_t loc, const char *obj, const char *name, hid_t mem_type, void *value,
			const char *path, struct engi_error *err);

/* /traces/<cell> is a link name: it must be one path component. */
int store_check_cell(const char *cell, struct engi_error *err);

/* ---- the writer ---- */

struct pending_rows {
	char *rows;
	size_t n, alloc;
};

struct pending_trace {
	char cell[ENGI_CELL_STR];
	unsigned char *z;
	size_t zlen;
	uint64_t raw_len;
};

struct store {
	char *path;
	hid_t file;
	int dirty;	 /* written since the last H5Fflush */
	int unpublished; /* flushed changes the published copy lacks */
	/* publication (store_publish): the file as of a flush, copied to
	 * copy_path and renamed over publish_to, in the copier thread */
	char *publish_to, *copy_path;
	pthread_t copier;
	int copying;	      /* the copier thread is not joined yet */
	atomic_int copy_done; /* it has finished; copy_rc and copy_err say how */
	int copy_rc;
	struct engi_error copy_err;
	double copy_started, copy_s;
	hid_t traces; /* the /traces group */
	hid_t type[T_COUNT];
	hid_t dset[T_COUNT];
	hsize_t written[T_COUNT];
	struct pending_rows pending[T_COUNT];
	struct pending_trace *ptraces;
	size_t nptraces, alloc_ptraces;
};

/* store_rows.c: writes n rows of table t at its end (scrubbed of secrets);
 * what was written stays written. */
int store_write_rows(struct store *s, int t, const void *rows, size_t n, struct engi_error *err);
/* store_rows.c: writes the buffered rows and traces (not flushed); a failed
 * write can be retried and goes on with what is left. */
int store_write_pending(struct store *s, struct engi_error *err);
/* store_rows.c: frees the buffered rows and traces. */
void store_pending_release(struct store *s);

#endif
