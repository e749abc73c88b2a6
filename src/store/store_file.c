/*
 * store_file.c - the writer's results file (store.h): created with a lock
 * against a second writer, its metadata and empty tables written, flushed
 * with signals held back, published as whole copies for readers, closed.
 * The rows themselves are store_rows.c's.
 */
#include "store_hdf5.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engi/alloc.h"
#include "fsutil.h"

#define STORE_CHUNK_ROWS 1024
/* A published copy is refreshed at most every STORE_PUBLISH_MIN_S, and no
 * sooner than STORE_PUBLISH_COST times the duration of the last copy after
 * it started: copying takes at most 1/STORE_PUBLISH_COST of the time. */
#define STORE_PUBLISH_MIN_S 2.0
#define STORE_PUBLISH_COST  20.0

static void copier_join(struct store *s)
{
	if (!s->copying)
		return;
	pthread_join(s->copier, NULL);
	s->copying = 0;
}

/* Closes every HDF5 object of the store; H5Fclose's result. */
static herr_t store_close_h5(struct store *s)
{
	for (int t = 0; t < T_COUNT; t++) {
		store_h5_close(&s->dset[t]);
		store_h5_close(&s->type[t]);
	}
	store_h5_close(&s->traces);
	herr_t rc = s->file >= 0 ? H5Fclose(s->file) : 0;
	s->file = H5I_INVALID_HID;
	return rc;
}

static void store_free_all(struct store *s)
{
	copier_join(s);
	store_close_h5(s);
	store_pending_release(s);
	engi_free(s->publish_to);
	engi_free(s->copy_path);
	engi_free(s->path);
	engi_free(s);
}

static int create_table(struct store *s, int t, struct engi_error *err)
{
	const struct table_desc *d = &store_tables[t];
	hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = STORE_CHUNK_ROWS;
	hid_t ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
	hid_t dcpl = H5I_INVALID_HID;
	int rc = 0;
	s->type[t] = store_row_type(d);
	/* the file type is the memory type without the struct padding */
	if (s->type[t] < 0 || (ftype = H5Tcopy(s->type[t])) < 0 || H5Tpack(ftype) < 0 ||
	    (space = H5Screate_simple(1, &dims, &maxdims)) < 0 ||
	    (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
	    (s->dset[t] =
		 H5Dcreate2(s->file, d->path, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
		rc = store_h5_fail(err, ENGI_EIO, "cannot create dataset '%s' in '%s'", d->path,
				   s->path);
	store_h5_close(&dcpl);
	store_h5_close(&space);
	store_h5_close(&ftype);
	return rc;
}

static int write_meta(struct store *s, const struct store_meta *m, struct engi_error *err)
{
	hid_t f = s->file;
	int32_t version = STORE_FORMAT_VERSION;
	uint64_t planned = m->planned_cells;
	TRY(store_write_str_attr(f, "/", "format", STORE_FORMAT, s->path, err));
	TRY(store_write_num_attr(f, "/", "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32,
				 &version, s->path, err));
	TRY(store_write_str_attr(f, "/", "sweep_id", m->sweep_id, s->path, err));
	TRY(store_write_num_attr(f, "/", "planned_cells", H5T_STD_U64LE, H5T_NATIVE_UINT64,
				 &planned, s->path, err));
	TRY(store_write_str_attr(f, "/", "config", m->config_json, s->path, err));
	TRY(store_write_str_attr(f, "/", "versions", m->versions_json, s->path, err));
	TRY(store_write_str_attr(f, "/", "command_line", m->command_line, s->path, err));
	for (int t = 0; t < T_COUNT; t++)
		TRY(create_table(s, t, err));
	TRY(store_write_rows(s, T_TASKS, m->tasks, m->ntasks, err));
	TRY(store_write_rows(s, T_MODELS, m->models, m->nmodels, err));
	TRY(store_write_rows(s, T_CONDITIONS, m->conditions, m->nconditions, err));
	if (m->task_meta)
		TRY(store_write_rows(s, T_TASK_META, m->task_meta, m->ntask_meta, err));
	s->traces = H5Gcreate2(f, "/traces", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (s->traces < 0)
		return store_h5_fail(err, ENGI_EIO, "cannot create group '/traces' in '%s'",
				     s->path);
	if (H5Fflush(f, H5F_SCOPE_LOCAL) < 0)
		return store_h5_fail(err, ENGI_EIO, "cannot flush '%s'", s->path);
	s->dirty = 0;
	s->unpublished = 1;
	return 0;
}

static int store_create_impl(struct store **out, const char *path, const struct store_meta *meta,
			     struct engi_error *err)
{
	*out = NULL;
	store_h5_quiet();
	struct store *s = engi_calloc(1, sizeof(*s));
	if (!s || !(s->path = engi_strdup(path))) {
		engi_free(s);
		RAISE(err, ENGI_ENOMEM, "out of memory creating '%s'", path);
	}
	s->file = s->traces = H5I_INVALID_HID;
	for (int t = 0; t < T_COUNT; t++)
		s->type[t] = s->dset[t] = H5I_INVALID_HID;

	/*
	 * Lock against a second writer where the file system can, and go on
	 * without a lock where it cannot (some parallel file systems).
	 *
	 * A killed writer leaves the file as of its last H5Fflush only if
	 * nothing written before that flush is overwritten after it. HDF5
	 * normally hands freed file space (an old local heap after the group
	 * of traces grows, say) out again before the next flush, while the
	 * flushed metadata still points there; with no free-space tracking, freed
	 * space is only taken back when it ends the file (so the file may
	 * grow a little).
	 * For the same reason the tables are not compressed: a compressed
	 * chunk moves on every rewrite, an uncompressed one is rewritten
	 * in place with its old rows unchanged.
	 */
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
	if (fapl >= 0 && fcpl >= 0 && H5Pset_file_locking(fapl, 1, 1) >= 0 &&
	    H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) >= 0)
		s->file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
	int rc = 0;
	if (s->file < 0)
		rc = store_h5_fail(err, ENGI_EIO, "cannot create results file '%s'", path);
	store_h5_close(&fcpl);
	store_h5_close(&fapl);
	if (rc == 0) {
		sigset_t old;
		store_defer_signals(&old);
		rc = write_meta(s, meta, err);
		store_restore_signals(&old);
	}
	if (rc < 0) {
		store_free_all(s);
		return rc;
	}
	*out = s;
	return 0;
}

static int flush_all(struct store *s, struct engi_error *err)
{
	/* What was written stays written: a failed flush can be retried and
	 * goes on with what is left. */
	TRY(store_write_pending(s, err));
	if (!s->dirty)
		return 0;
	if (H5Fflush(s->file, H5F_SCOPE_LOCAL) < 0)
		return store_h5_fail(err, ENGI_EIO, "cannot flush '%s'", s->path);
	s->dirty = 0;
	s->unpublished = 1;
	return 0;
}

static int flush_deferring_signals(struct store *s, struct engi_error *err)
{
	sigset_t old;
	store_defer_signals(&old);
	int rc = flush_all(s, err);
	store_restore_signals(&old);
	return rc;
}

/*
 * Publication. Readers (h5py in a notebook, a report) open publish_to, never
 * the file being written: an HDF5 file open for writing is locked, and
 * between two flushes it is not consistent. After a flush the file on disk
 * is whole, and nothing writes it until the next flush, so a byte copy of it
 * renamed over publish_to is a whole file, replaced in one step: a reader
 * sees the old copy or the new one, a reader holding the old one open keeps
 * reading it, no lock is shared with the writer, and a kill at any moment,
 * inside a flush or a copy included, leaves a published file that opens.
 * The copy is not fsynced: a kill leaves the page cache alone, and after a
 * crash of the machine `--resume` rebuilds the file from the journal.
 */
static int copy_out(struct store *s, struct engi_error *err)
{
	int in = open(s->path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", s->path, strerror(errno));
	int rc = fs_copy_fd_capped(in, s->path, s->copy_path, UINT64_MAX, NULL, err);
	close(in);
	if (rc == 0 && rename(s->copy_path, s->publish_to) < 0) {
		rc = engi_raise(err, ENGI_EIO, "cannot rename '%s' to '%s': %s", s->copy_path,
				s->publish_to, strerror(errno));
		unlink(s->copy_path);
	}
	return rc;
}

static void copy_timed(struct store *s)
{
	s->copy_started = clk_now_mono();
	engi_error_init(&s->copy_err);
	s->copy_rc = copy_out(s, &s->copy_err);
	s->copy_s = clk_now_mono() - s->copy_started;
}

static void *copier_main(void *arg)
{
	struct store *s = arg;
	copy_timed(s);
	atomic_store(&s->copy_done, 1);
	return NULL;
}

/* The copier's result, once it has been joined; a failed copy is tried
 * again at the next flush. */
static int copy_result(struct store *s, struct engi_error *err)
{
	if (s->copy_rc == 0)
		return 0;
	s->unpublished = 1;
	return engi_raise(err, s->copy_rc, "cannot publish '%s': %s", s->publish_to,
			  s->copy_err.msg);
}

/* Starts the copier, with every signal blocked in it (the new thread takes
 * this thread's mask); where no thread can be had, copies right here. */
static void copier_start(struct store *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	atomic_store(&s->copy_done, 0);
	s->unpublished = 0;
	s->copying = pthread_create(&s->copier, NULL, copier_main, s) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->copying)
		copy_timed(s);
}

static int publish_due(const struct store *s)
{
	double wait = STORE_PUBLISH_COST * s->copy_s;
	if (wait < STORE_PUBLISH_MIN_S)
		wait = STORE_PUBLISH_MIN_S;
	return s->publish_to && s->unpublished && clk_now_mono() - s->copy_started >= wait;
}

static int store_flush_impl(struct store *s, struct engi_error *err)
{
	store_h5_quiet();
	if (s->copying) {
		/* the copier reads the file: the rows wait in memory */
		if (!atomic_load(&s->copy_done))
			return 0;
		copier_join(s);
		TRY(copy_result(s, err));
	}
	TRY(flush_deferring_signals(s, err));
	if (publish_due(s)) {
		copier_start(s);
		if (!s->copying)
			return copy_result(s, err);
	}
	return 0;
}

static int store_publish_impl(struct store *s, const char *to, struct engi_error *err)
{
	store_h5_quiet();
	if (!s->publish_to) {
		if (strcmp(to, s->path) == 0)
			RAISE(err, ENGI_EINVALID, "'%s' cannot be published onto itself", to);
		size_t n = strlen(to) + sizeof(".copy");
		s->publish_to = engi_strdup(to);
		s->copy_path = engi_malloc(n);
		if (!s->publish_to || !s->copy_path) {
			engi_free(s->publish_to);
			engi_free(s->copy_path);
			s->publish_to = s->copy_path = NULL;
			RAISE(err, ENGI_ENOMEM, "out of memory publishing '%s'", s->path);
		}
		snprintf(s->copy_path, n, "%s.copy", to);
	} else if (strcmp(to, s->publish_to) != 0) {
		RAISE(err, ENGI_EINVALID, "'%s' is already published as '%s', not '%s'", s->path,
		      s->publish_to, to);
	}
	copier_join(s);
	TRY(flush_deferring_signals(s, err));
	s->unpublished = 0;
	copy_timed(s);
	return copy_result(s, err);
}

static int store_close_impl(struct store **sp, struct engi_error *err)
{
	struct store *s = *sp;
	if (!s)
		return 0;
	*sp = NULL;
	store_h5_quiet();
	copier_join(s); /* the last word is the file itself, below */
	sigset_t old;
	store_defer_signals(&old);
	int rc = flush_all(s, err);
	/* H5Fclose writes too */
	if (store_close_h5(s) < 0 && rc == 0)
		rc = store_h5_fail(err, ENGI_EIO, "cannot close '%s'", s->path);
	/* the whole file takes the copy's place; after a failure the last
	 * copy stays */
	if (rc == 0 && s->publish_to) {
		if (rename(s->path, s->publish_to) < 0)
			rc = engi_raise(err, ENGI_EIO, "cannot rename '%s' to '%s': %s", s->path,
					s->publish_to, strerror(errno));
		else
			unlink(s->copy_path);
	}
	store_free_all(s);
	store_restore_signals(&old);
	return rc;
}

/* The entry points, each under store_h5_lock (store_hdf5.h). */

int store_create(struct store **out, const char *path, const struct store_meta *meta,
		 struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_create_impl(out, path, meta, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_flush(struct store *s, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_flush_impl(s, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_publish(struct store *s, const char *to, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_publish_impl(s, to, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_close(struct store **s, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_close_impl(s, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}
