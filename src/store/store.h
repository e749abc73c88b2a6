/*
 * store.h - the HDF5 results file. Only src/store/ includes <hdf5.h> (through
 * its private store_hdf5.h, which also says which file does what).
 *
 * One writer (rank 0, or the serial run) creates the file with the sweep's
 * metadata tables and frozen configuration, appends episode records to
 * chunked, extendible compound datasets, and flushes after every batch so
 * that a killed job leaves a file that opens. The journal, not this file, is
 * the source of truth for resume: `run --resume` rebuilds the file from the
 * journal (store_create on a temporary name, append all, rename).
 *
 * Layout (readable with h5py alone):
 *   /tasks /models /conditions /episodes /assertions /metrics /artifacts
 *       compound datasets whose rows are the structs of engi/results.h
 *   /task_meta  the tasks' metadata (task_id, key, value, conflict), written
 *       with /tasks; a file without it (written before it came) reads with
 *       none, so it did not change the format version
 *   /traces/<cell>  uint8, the zstd-compressed JSONL trace; attributes
 *       raw_bytes (uint64) and codec ("zstd")
 *   root attributes: format ("engisweep-results"), format_version (int),
 *       sweep_id, planned_cells, config (JSON), versions (JSON),
 *       command_line (all strings except the two integers)
 *
 * Crashes: a file is safe between flushes; store_create, store_flush and
 * store_close hold back SIGTERM-like signals until the flush is done; a
 * SIGKILL inside a flush can damage the file, and the journal covers that.
 *
 * Readers during a sweep: the file being written is locked and not whole
 * between flushes, so the sweep writes a working file and publishes it
 * (store_publish): a copy as of a flush, renamed over the published name.
 * Readers open the published file with no lock shared with the writer and
 * see one whole copy or the next; one holding a copy open keeps it; any
 * kill leaves the last copy whole.
 * A cell id must be one path component. Appending a cell twice keeps both
 * episode rows (the sweep never does; merge and resume rely on that) and the
 * later trace replaces the earlier one. Root string attributes are UTF-8.
 * store_read initialises res itself and leaves it empty on failure.
 *
 * All calls block on file I/O; none is thread-safe with another on the same
 * store.
 */
#ifndef ENGI_STORE_H
#define ENGI_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "engi/results.h"
#include "record.h"

struct store;

struct store_meta {
	const struct engi_res_task *tasks;
	size_t ntasks;
	const struct engi_res_model *models;
	size_t nmodels;
	const struct engi_res_condition *conditions;
	size_t nconditions;
	const struct engi_res_task_meta *task_meta; /* may be NULL (none) */
	size_t ntask_meta;
	const char *sweep_id;
	uint64_t planned_cells;
	const char *config_json;
	const char *versions_json;
	const char *command_line;
};

/* A results file open for reading many traces (merge): store_reader_open,
 * store_reader_trace (the compressed bytes as stored, ENGI_ENOTFOUND when the
 * cell has none), store_reader_close. */
struct store_reader;
int store_reader_open(struct store_reader **out, const char *path, struct engi_error *err);
int store_reader_trace(struct store_reader *r, const char *cell, unsigned char **z, size_t *zlen,
		       uint64_t *raw_len, struct engi_error *err);
void store_reader_close(struct store_reader **r);

/* "HDF5 1.10.8": the library this binary runs with. */
const char *store_library_version(void);

/* Creates (truncates) path and writes the metadata. */
int store_create(struct store **out, const char *path, const struct store_meta *meta,
		 struct engi_error *err);
/* Buffers the record's rows; written at the next flush. */
int store_append(struct store *s, const struct record *r, struct engi_error *err);
/* Writes buffered rows and traces, then H5Fflush (none when nothing is new),
 * then publishes when due (store_publish). */
int store_flush(struct store *s, struct engi_error *err);
/* Flushes, then copies the file to `to` (through `to`.copy, renamed over
 * `to`) now; from then on store_flush copies it again in a thread of its
 * own, at most every 2 s and no sooner than 20 copy durations after the last
 * copy started (copying takes at most a twentieth of the time), and leaves
 * the new rows in memory while a copy runs; store_close renames the file
 * itself over `to`. One `to` per store. */
int store_publish(struct store *s, const char *to, struct engi_error *err);
/* Flushes and closes; *s becomes NULL. Returns the flush's result. With
 * store_publish, the closed file then takes the published copy's place. */
int store_close(struct store **s, struct engi_error *err);

/* Reads every table (not the traces) of a results file. */
int store_read(const char *path, struct engi_results *res, struct engi_error *err);
/* Reads one trace and decompresses it; *out is NUL-terminated, caller frees. */
int store_read_trace(const char *path, const char *cell, char **out, size_t *len,
		     struct engi_error *err);

#endif
