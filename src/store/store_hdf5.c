#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engi/alloc.h"
#include "fsutil.h"
#include "secrets.h"
#include "trace.h"

#define STORE_FORMAT	     "engisweep-results"
#define STORE_FORMAT_VERSION 1
#define STORE_CHUNK_ROWS     1024
#define STORE_TRACE_CODEC    "zstd"
/* A published copy is refreshed at most every STORE_PUBLISH_MIN_S, and no
 * sooner than STORE_PUBLISH_COST times the duration of the last copy after
 * it started: copying takes at most 1/STORE_PUBLISH_COST of the time. */
#define STORE_PUBLISH_MIN_S 2.0
#define STORE_PUBLISH_COST  20.0

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- row layouts: one field list per table, from engi/results.h ---- */

enum field_kind { F_STR, F_I32, F_I64, F_U64, F_F64 };

struct field {
	const char *name;
	size_t offset;
	size_t size;
	enum field_kind kind;
};

/* clang-format off */
#define FIELD(st, m, k) { #m, offsetof(st, m), sizeof(((st *)0)->m), k }
/* clang-format on */

#define T_ struct engi_res_task
static const struct field task_fields[] = {
    FIELD(T_, id, F_STR),      FIELD(T_, title, F_STR),	    FIELD(T_, domain, F_STR),
    FIELD(T_, type, F_STR),    FIELD(T_, interface, F_STR), FIELD(T_, software, F_STR),
    FIELD(T_, hash, F_STR),    FIELD(T_, turns, F_I32),	    FIELD(T_, wall_s, F_F64),
    FIELD(T_, scoring, F_STR),
};
#undef T_

#define T_ struct engi_res_model
static const struct field model_fields[] = {
    FIELD(T_, name, F_STR),
    FIELD(T_, agent, F_STR),
    FIELD(T_, settings, F_STR),
    FIELD(T_, price_in_per_mtok, F_F64),
    FIELD(T_, price_out_per_mtok, F_F64),
};
#undef T_

#define T_ struct engi_res_condition
static const struct field condition_fields[] = {
    FIELD(T_, name, F_STR),
    FIELD(T_, settings, F_STR),
};
#undef T_

/* the HDF5 type of each kind of engi/schema.h */
#define KIND_S F_STR
#define KIND_M F_STR
#define KIND_O F_STR
#define KIND_I F_I32
#define KIND_L F_I64
#define KIND_B F_I32
#define KIND_D F_F64

#define T_							struct engi_res_episode
#define EPISODE_FIELD(name, kind, rec, row, journal, csv, dflt) FIELD(T_, name, KIND_##kind),
static const struct field episode_fields[] = {ENGI_EPISODE_FIELDS(EPISODE_FIELD)};
#undef EPISODE_FIELD
#undef T_

#define T_ struct engi_res_assertion
static const struct field assertion_fields[] = {
    FIELD(T_, cell, F_STR),	FIELD(T_, name, F_STR),	    FIELD(T_, stage, F_STR),
    FIELD(T_, state, F_STR),	FIELD(T_, required, F_I32), FIELD(T_, value, F_F64),
    FIELD(T_, expected, F_F64), FIELD(T_, detail, F_STR),
};
#undef T_

#define T_ struct engi_res_metric
static const struct field metric_fields[] = {
    FIELD(T_, cell, F_STR),
    FIELD(T_, name, F_STR),
    FIELD(T_, value, F_F64),
};
#undef T_

#define T_ struct engi_res_artifact
static const struct field artifact_fields[] = {
    FIELD(T_, cell, F_STR),   FIELD(T_, path, F_STR), FIELD(T_, bytes, F_U64),
    FIELD(T_, sha256, F_STR), FIELD(T_, note, F_STR),
};
#undef T_

enum table_id {
	T_TASKS,
	T_MODELS,
	T_CONDITIONS,
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

/* clang-format off */
#define TABLE(p, f, st) { p, f, ARRAY_SIZE(f), sizeof(st) }
/* clang-format on */
static const struct table_desc tables[T_COUNT] = {
    [T_TASKS] = TABLE("/tasks", task_fields, struct engi_res_task),
    [T_MODELS] = TABLE("/models", model_fields, struct engi_res_model),
    [T_CONDITIONS] = TABLE("/conditions", condition_fields, struct engi_res_condition),
    [T_EPISODES] = TABLE("/episodes", episode_fields, struct engi_res_episode),
    [T_ASSERTIONS] = TABLE("/assertions", assertion_fields, struct engi_res_assertion),
    [T_METRICS] = TABLE("/metrics", metric_fields, struct engi_res_metric),
    [T_ARTIFACTS] = TABLE("/artifacts", artifact_fields, struct engi_res_artifact),
};
#undef TABLE

/* ---- HDF5 errors become ENGI errors ---- */

/* The library's own printing would go to stderr behind our back; every
 * failure is reported through struct engi_error instead. */
static void h5_quiet(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	H5Eclear2(H5E_DEFAULT);
}

struct h5_why {
	char text[240];
};

static herr_t h5_why_walk(unsigned n, const H5E_error2_t *e, void *arg)
{
	struct h5_why *w = arg;
	if (w->text[0] == '\0' && e->desc && e->desc[0])
		snprintf(w->text, sizeof(w->text), "%s", e->desc);
	return 0;
}

/* The innermost HDF5 message (the most specific one), then the stack is
 * cleared. */
static void h5_take_why(struct h5_why *w)
{
	w->text[0] = '\0';
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_why_walk, w);
	H5Eclear2(H5E_DEFAULT);
}

__attribute__((format(printf, 3, 4))) static int h5_fail(struct engi_error *err, int code,
							 const char *fmt, ...)
{
	struct h5_why w;
	h5_take_why(&w);
	char head[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	if (w.text[0])
		return engi_raise(err, code, "%s: %s", head, w.text);
	return engi_raise(err, code, "%s", head);
}

static void h5_close(hid_t *id)
{
	if (*id < 0)
		return;
	switch (H5Iget_type(*id)) {
	case H5I_FILE:
		H5Fclose(*id);
		break;
	case H5I_GROUP:
		H5Gclose(*id);
		break;
	case H5I_DATATYPE:
		H5Tclose(*id);
		break;
	case H5I_DATASPACE:
		H5Sclose(*id);
		break;
	case H5I_DATASET:
		H5Dclose(*id);
		break;
	case H5I_ATTR:
		H5Aclose(*id);
		break;
	case H5I_GENPROP_LST:
		H5Pclose(*id);
		break;
	default:
		break;
	}
	*id = H5I_INVALID_HID;
}

/*
 * H5Fflush is not atomic: a process killed while it runs can leave objects
 * that point past the end the superblock records ("addr overflow"), and a
 * file that no longer opens as a whole. A kill between flushes is safe.
 * SIGKILL cannot be helped, but the signals schedulers and people send
 * first (SLURM and mpirun send SIGTERM, then SIGKILL) are held back in
 * this thread until the flush is done, then delivered as usual.
 */
static void defer_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGXCPU);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* ---- types ---- */

static hid_t string_type(size_t size)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0)
		return t;
	if (H5Tset_size(t, size) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0) {
		H5Tclose(t);
		return H5I_INVALID_HID;
	}
	return t;
}

static hid_t vlen_string_type(void)
{
	hid_t t = H5Tcopy(H5T_C_S1);
	if (t < 0)
		return t;
	if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
		H5Tclose(t);
		return H5I_INVALID_HID;
	}
	return t;
}

/* The in-memory compound type of a table: exactly its C struct. */
static hid_t row_type(const struct table_desc *d)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, d->row_size);
	if (t < 0)
		return t;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct field *f = &d->fields[i];
		hid_t ft = H5I_INVALID_HID;
		int owned = 0;
		switch (f->kind) {
		case F_STR:
			ft = string_type(f->size);
			owned = 1;
			break;
		case F_I32:
			BUG_ON(f->size != 4);
			ft = H5T_NATIVE_INT32;
			break;
		case F_I64:
			BUG_ON(f->size != 8);
			ft = H5T_NATIVE_INT64;
			break;
		case F_U64:
			BUG_ON(f->size != 8);
			ft = H5T_NATIVE_UINT64;
			break;
		case F_F64:
			BUG_ON(f->size != sizeof(double));
			ft = H5T_NATIVE_DOUBLE;
			break;
		}
		herr_t rc = ft < 0 ? -1 : H5Tinsert(t, f->name, f->offset, ft);
		if (owned && ft >= 0)
			H5Tclose(ft);
		if (rc < 0) {
			H5Tclose(t);
			return H5I_INVALID_HID;
		}
	}
	return t;
}

/* ---- attributes ---- */

static int write_str_attr(hid_t loc, const char *obj, const char *name, const char *value,
			  const char *path, struct engi_error *err)
{
	hid_t type = vlen_string_type();
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t attr = H5I_INVALID_HID;
	int rc = 0;
	char *clean = engi_strdup(value ? value : "");
	if (!clean)
		RAISE(err, ENGI_ENOMEM, "out of memory writing attribute '%s' of '%s' in '%s'",
		      name, obj, path);
	secrets_scrub_str(clean);
	const char *v = clean;
	if (type < 0 || space < 0 ||
	    (attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Awrite(attr, type, &v) < 0)
		rc = h5_fail(err, ENGI_EIO, "cannot write attribute '%s' of '%s' in '%s'", name,
			     obj, path);
	h5_close(&attr);
	h5_close(&space);
	h5_close(&type);
	engi_free(clean);
	return rc;
}

static int write_num_attr(hid_t loc, const char *obj, const char *name, hid_t file_type,
			  hid_t mem_type, const void *value, const char *path,
			  struct engi_error *err)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t attr = H5I_INVALID_HID;
	int rc = 0;
	if (space < 0 ||
	    (attr = H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Awrite(attr, mem_type, value) < 0)
		rc = h5_fail(err, ENGI_EIO, "cannot write attribute '%s' of '%s' in '%s'", name,
			     obj, path);
	h5_close(&attr);
	h5_close(&space);
	return rc;
}

/* Reads a string attribute, fixed-length or variable-length; *out is ours. */
static int read_str_attr(hid_t loc, const char *obj, const char *name, char **out, const char *path,
			 struct engi_error *err)
{
	*out = NULL;
	hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
	hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
	int rc = 0;
	if (attr < 0 || (ftype = H5Aget_type(attr)) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'", name, obj,
			     path);
		goto out;
	}
	if (H5Tget_class(ftype) != H5T_STRING) {
		rc = engi_raise(err, ENGI_EINVALID,
				"attribute '%s' of '%s' in '%s' is not a string", name, obj, path);
		goto out;
	}
	if (H5Tis_variable_str(ftype) > 0) {
		char *v = NULL;
		mtype = vlen_string_type();
		if (mtype < 0 || H5Aread(attr, mtype, &v) < 0) {
			rc = h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'",
				     name, obj, path);
			goto out;
		}
		*out = engi_strdup(v ? v : "");
		H5free_memory(v);
	} else {
		size_t size = H5Tget_size(ftype);
		char *v = engi_calloc(1, size + 1);
		if (v && ((mtype = string_type(size + 1)) < 0 || H5Aread(attr, mtype, v) < 0)) {
			engi_free(v);
			rc = h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'",
				     name, obj, path);
			goto out;
		}
		*out = v;
	}
	if (!*out)
		rc = engi_raise(err, ENGI_ENOMEM,
				"out of memory reading attribute '%s' of '%s' in '%s'", name, obj,
				path);
out:
	h5_close(&mtype);
	h5_close(&ftype);
	h5_close(&attr);
	return rc;
}

static int read_num_attr(hid_t loc, const char *obj, const char *name, hid_t mem_type, void *value,
			 const char *path, struct engi_error *err)
{
	hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
	int rc = 0;
	if (attr < 0 || H5Aread(attr, mem_type, value) < 0)
		rc = h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'", name, obj,
			     path);
	h5_close(&attr);
	return rc;
}

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
		h5_close(&s->dset[t]);
		h5_close(&s->type[t]);
	}
	h5_close(&s->traces);
	herr_t rc = s->file >= 0 ? H5Fclose(s->file) : 0;
	s->file = H5I_INVALID_HID;
	return rc;
}

static void store_free_all(struct store *s)
{
	copier_join(s);
	store_close_h5(s);
	for (int t = 0; t < T_COUNT; t++)
		engi_free(s->pending[t].rows);
	for (size_t i = 0; i < s->nptraces; i++)
		engi_free(s->ptraces[i].z);
	engi_free(s->ptraces);
	engi_free(s->publish_to);
	engi_free(s->copy_path);
	engi_free(s->path);
	engi_free(s);
}

static int create_table(struct store *s, int t, struct engi_error *err)
{
	const struct table_desc *d = &tables[t];
	hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = STORE_CHUNK_ROWS;
	hid_t ftype = H5I_INVALID_HID, space = H5I_INVALID_HID;
	hid_t dcpl = H5I_INVALID_HID;
	int rc = 0;
	s->type[t] = row_type(d);
	/* the file type is the memory type without the struct padding */
	if (s->type[t] < 0 || (ftype = H5Tcopy(s->type[t])) < 0 || H5Tpack(ftype) < 0 ||
	    (space = H5Screate_simple(1, &dims, &maxdims)) < 0 ||
	    (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
	    (s->dset[t] =
		 H5Dcreate2(s->file, d->path, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
		rc = h5_fail(err, ENGI_EIO, "cannot create dataset '%s' in '%s'", d->path, s->path);
	h5_close(&dcpl);
	h5_close(&space);
	h5_close(&ftype);
	return rc;
}

/* Rows as written: every string field scrubbed of secrets (secrets.h), in
 * a copy; NULL with *copy NULL when there is nothing to scrub, or memory
 * ran out (*oom). */
static void *scrubbed_rows(int t, const void *rows, size_t n, int *oom)
{
	*oom = 0;
	if (!secrets_any())
		return NULL;
	const struct table_desc *d = &tables[t];
	char *copy = engi_malloc(n * d->row_size);
	if (!copy) {
		*oom = 1;
		return NULL;
	}
	memcpy(copy, rows, n * d->row_size);
	for (size_t i = 0; i < n; i++)
		for (size_t f = 0; f < d->nfields; f++)
			if (d->fields[f].kind == F_STR) {
				char *v = copy + i * d->row_size + d->fields[f].offset;
				v[d->fields[f].size - 1] = '\0';
				secrets_scrub_str(v);
			}
	return copy;
}

static int write_rows(struct store *s, int t, const void *rows, size_t n, struct engi_error *err)
{
	if (n == 0)
		return 0;
	int oom;
	void *clean = scrubbed_rows(t, rows, n, &oom);
	if (oom)
		RAISE(err, ENGI_ENOMEM, "out of memory writing dataset '%s' in '%s'",
		      tables[t].path, s->path);
	if (clean)
		rows = clean;
	const char *name = tables[t].path;
	hsize_t start = s->written[t], count = n, total = start + count;
	hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
	int rc = 0;
	if (H5Dset_extent(s->dset[t], &total) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot extend dataset '%s' in '%s'", name, s->path);
	} else if ((fspace = H5Dget_space(s->dset[t])) < 0 ||
		   H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
		   (mspace = H5Screate_simple(1, &count, NULL)) < 0 ||
		   H5Dwrite(s->dset[t], s->type[t], mspace, fspace, H5P_DEFAULT, rows) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot write dataset '%s' in '%s'", name, s->path);
	} else {
		s->written[t] = total;
	}
	s->dirty = 1;
	h5_close(&mspace);
	h5_close(&fspace);
	engi_free(clean);
	return rc;
}

static int write_meta(struct store *s, const struct store_meta *m, struct engi_error *err)
{
	hid_t f = s->file;
	int32_t version = STORE_FORMAT_VERSION;
	uint64_t planned = m->planned_cells;
	TRY(write_str_attr(f, "/", "format", STORE_FORMAT, s->path, err));
	TRY(write_num_attr(f, "/", "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version,
			   s->path, err));
	TRY(write_str_attr(f, "/", "sweep_id", m->sweep_id, s->path, err));
	TRY(write_num_attr(f, "/", "planned_cells", H5T_STD_U64LE, H5T_NATIVE_UINT64, &planned,
			   s->path, err));
	TRY(write_str_attr(f, "/", "config", m->config_json, s->path, err));
	TRY(write_str_attr(f, "/", "versions", m->versions_json, s->path, err));
	TRY(write_str_attr(f, "/", "command_line", m->command_line, s->path, err));
	for (int t = 0; t < T_COUNT; t++)
		TRY(create_table(s, t, err));
	TRY(write_rows(s, T_TASKS, m->tasks, m->ntasks, err));
	TRY(write_rows(s, T_MODELS, m->models, m->nmodels, err));
	TRY(write_rows(s, T_CONDITIONS, m->conditions, m->nconditions, err));
	s->traces = H5Gcreate2(f, "/traces", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (s->traces < 0)
		return h5_fail(err, ENGI_EIO, "cannot create group '/traces' in '%s'", s->path);
	if (H5Fflush(f, H5F_SCOPE_LOCAL) < 0)
		return h5_fail(err, ENGI_EIO, "cannot flush '%s'", s->path);
	s->dirty = 0;
	s->unpublished = 1;
	return 0;
}

static int store_create_impl(struct store **out, const char *path, const struct store_meta *meta,
			     struct engi_error *err)
{
	*out = NULL;
	h5_quiet();
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
		rc = h5_fail(err, ENGI_EIO, "cannot create results file '%s'", path);
	h5_close(&fcpl);
	h5_close(&fapl);
	if (rc == 0) {
		sigset_t old;
		defer_signals(&old);
		rc = write_meta(s, meta, err);
		restore_signals(&old);
	}
	if (rc < 0) {
		store_free_all(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* A record's strings always fit their rows (checked at compile time), so
 * copy_str never truncates one; the metadata rows come in as rows. The
 * episode row is record_to_row's (record.h). */
_Static_assert(sizeof(((struct engi_assertion *)0)->name) <=
		   sizeof(((struct engi_res_assertion *)0)->name),
	       "name");
_Static_assert(sizeof(((struct engi_assertion *)0)->stage) <=
		   sizeof(((struct engi_res_assertion *)0)->stage),
	       "stage");
_Static_assert(sizeof(((struct engi_assertion *)0)->detail) <=
		   sizeof(((struct engi_res_assertion *)0)->detail),
	       "detail");
_Static_assert(sizeof(((struct engi_metric *)0)->name) <=
		   sizeof(((struct engi_res_metric *)0)->name),
	       "metric");
_Static_assert(sizeof(((struct artifact *)0)->path) <=
		   sizeof(((struct engi_res_artifact *)0)->path),
	       "path");
_Static_assert(sizeof(((struct artifact *)0)->note) <=
		   sizeof(((struct engi_res_artifact *)0)->note),
	       "note");

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* /traces/<cell> is a link name: it must be one path component. */
static int check_cell(const char *cell, struct engi_error *err)
{
	if (cell[0] == '\0')
		RAISE(err, ENGI_EINVALID, "record has an empty cell id");
	if (strchr(cell, '/') || strcmp(cell, ".") == 0 || strcmp(cell, "..") == 0)
		RAISE(err, ENGI_EINVALID, "cell id '%s' is not a valid name", cell);
	return 0;
}

static int reserve_rows(struct pending_rows *p, size_t row_size, size_t more)
{
	if (more <= p->alloc - p->n)
		return 0;
	size_t want = p->alloc ? p->alloc : 16;
	while (want - p->n < more) {
		if (want > SIZE_MAX / 2)
			return ENGI_ENOMEM;
		want *= 2;
	}
	char *rows = engi_reallocarray(p->rows, want, row_size);
	if (!rows)
		return ENGI_ENOMEM;
	p->rows = rows;
	p->alloc = want;
	return 0;
}

static void *next_row(struct store *s, int t)
{
	struct pending_rows *p = &s->pending[t];
	char *row = p->rows + p->n++ * tables[t].row_size;
	memset(row, 0, tables[t].row_size);
	return row;
}

static int check_appendable(const struct record *r, struct engi_error *err)
{
	TRY(check_cell(r->cell, err));
	if (r->outcome < 0 || r->outcome >= OUTCOME_COUNT)
		RAISE(err, ENGI_EINVALID, "record '%s': outcome %d is not valid", r->cell,
		      r->outcome);
	for (size_t i = 0; i < r->nassertions; i++) {
		int st = r->assertions[i].state;
		if (st < ENGI_PASS || st > ENGI_UNAVAILABLE)
			RAISE(err, ENGI_EINVALID,
			      "record '%s': assertion '%s' has state %d, which "
			      "is not valid",
			      r->cell, r->assertions[i].name, st);
	}
	if (r->trace_len && !r->trace)
		RAISE(err, ENGI_EINVALID, "record '%s': trace of %zu bytes has no data", r->cell,
		      r->trace_len);
	return 0;
}

/* Everything is allocated before anything is added, so a failed append
 * leaves the store as it was. */
static int reserve_record(struct store *s, const struct record *r, unsigned char **trace_copy)
{
	*trace_copy = NULL;
	const size_t more[T_COUNT] = {
	    [T_EPISODES] = 1,
	    [T_ASSERTIONS] = r->nassertions,
	    [T_METRICS] = r->nmetrics,
	    [T_ARTIFACTS] = r->nartifacts,
	};
	for (int t = T_EPISODES; t < T_COUNT; t++)
		TRY(reserve_rows(&s->pending[t], tables[t].row_size, more[t]));
	if (!r->trace_len)
		return 0;
	if (s->nptraces == s->alloc_ptraces) {
		size_t want = s->alloc_ptraces ? 2 * s->alloc_ptraces : 8;
		struct pending_trace *p = engi_reallocarray(s->ptraces, want, sizeof(*p));
		if (!p)
			return ENGI_ENOMEM;
		s->ptraces = p;
		s->alloc_ptraces = want;
	}
	*trace_copy = engi_malloc(r->trace_len);
	if (!*trace_copy)
		return ENGI_ENOMEM;
	memcpy(*trace_copy, r->trace, r->trace_len);
	return 0;
}

static int store_append_impl(struct store *s, const struct record *r, struct engi_error *err)
{
	TRY(check_appendable(r, err));
	unsigned char *trace_copy;
	if (reserve_record(s, r, &trace_copy) < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory buffering record '%s' for '%s'", r->cell,
		      s->path);

	record_to_row(r, next_row(s, T_EPISODES));

	for (size_t i = 0; i < r->nassertions; i++) {
		const struct engi_assertion *a = &r->assertions[i];
		struct engi_res_assertion *row = next_row(s, T_ASSERTIONS);
		copy_str(row->cell, sizeof(row->cell), r->cell);
		copy_str(row->name, sizeof(row->name), a->name);
		copy_str(row->stage, sizeof(row->stage), a->stage);
		copy_str(row->state, sizeof(row->state), engi_astate_name(a->state));
		row->required = a->required;
		row->value = a->value;
		row->expected = a->expected;
		copy_str(row->detail, sizeof(row->detail), a->detail);
	}
	for (size_t i = 0; i < r->nmetrics; i++) {
		struct engi_res_metric *row = next_row(s, T_METRICS);
		copy_str(row->cell, sizeof(row->cell), r->cell);
		copy_str(row->name, sizeof(row->name), r->metrics[i].name);
		row->value = r->metrics[i].value;
	}
	for (size_t i = 0; i < r->nartifacts; i++) {
		const struct artifact *a = &r->artifacts[i];
		struct engi_res_artifact *row = next_row(s, T_ARTIFACTS);
		copy_str(row->cell, sizeof(row->cell), r->cell);
		copy_str(row->path, sizeof(row->path), a->path);
		row->bytes = a->bytes;
		copy_str(row->sha256, sizeof(row->sha256), a->sha256);
		copy_str(row->note, sizeof(row->note), a->note);
	}
	if (trace_copy) {
		struct pending_trace *pt = &s->ptraces[s->nptraces++];
		copy_str(pt->cell, sizeof(pt->cell), r->cell);
		pt->z = trace_copy;
		pt->zlen = r->trace_len;
		pt->raw_len = r->trace_raw_len;
	}
	return 0;
}

static int write_trace(struct store *s, const struct pending_trace *pt, struct engi_error *err)
{
	hsize_t n = pt->zlen;
	hid_t space = H5I_INVALID_HID, dset = H5I_INVALID_HID;
	int rc = 0;
	char name[ENGI_CELL_STR + 16];
	snprintf(name, sizeof(name), "/traces/%s", pt->cell);
	s->dirty = 1;
	/* A cell appended twice keeps its latest trace, as its latest row
	 * is the one that counts. */
	if (H5Lexists(s->traces, pt->cell, H5P_DEFAULT) > 0 &&
	    H5Ldelete(s->traces, pt->cell, H5P_DEFAULT) < 0)
		return h5_fail(err, ENGI_EIO, "cannot replace dataset '%s' in '%s'", name, s->path);
	if ((space = H5Screate_simple(1, &n, NULL)) < 0 ||
	    (dset = H5Dcreate2(s->traces, pt->cell, H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT,
			       H5P_DEFAULT)) < 0 ||
	    H5Dwrite(dset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, pt->z) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot write dataset '%s' in '%s'", name, s->path);
		goto out;
	}
	rc = write_num_attr(dset, name, "raw_bytes", H5T_STD_U64LE, H5T_NATIVE_UINT64, &pt->raw_len,
			    s->path, err);
	if (rc == 0)
		rc = write_str_attr(dset, name, "codec", STORE_TRACE_CODEC, s->path, err);
out:
	h5_close(&dset);
	h5_close(&space);
	return rc;
}

static int flush_all(struct store *s, struct engi_error *err)
{
	/* What was written stays written: a failed flush can be retried and
	 * goes on with what is left. */
	for (int t = T_EPISODES; t < T_COUNT; t++) {
		struct pending_rows *p = &s->pending[t];
		TRY(write_rows(s, t, p->rows, p->n, err));
		p->n = 0;
	}
	size_t done = 0;
	int rc = 0;
	for (; done < s->nptraces; done++) {
		rc = write_trace(s, &s->ptraces[done], err);
		if (rc < 0)
			break;
		engi_free(s->ptraces[done].z);
	}
	if (done) {
		memmove(s->ptraces, s->ptraces + done, (s->nptraces - done) * sizeof(*s->ptraces));
		s->nptraces -= done;
	}
	if (rc < 0)
		return rc;
	if (!s->dirty)
		return 0;
	if (H5Fflush(s->file, H5F_SCOPE_LOCAL) < 0)
		return h5_fail(err, ENGI_EIO, "cannot flush '%s'", s->path);
	s->dirty = 0;
	s->unpublished = 1;
	return 0;
}

static int flush_deferring_signals(struct store *s, struct engi_error *err)
{
	sigset_t old;
	defer_signals(&old);
	int rc = flush_all(s, err);
	restore_signals(&old);
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
	h5_quiet();
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
	h5_quiet();
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
	h5_quiet();
	copier_join(s); /* the last word is the file itself, below */
	sigset_t old;
	defer_signals(&old);
	int rc = flush_all(s, err);
	/* H5Fclose writes too */
	if (store_close_h5(s) < 0 && rc == 0)
		rc = h5_fail(err, ENGI_EIO, "cannot close '%s'", s->path);
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
	restore_signals(&old);
	return rc;
}

/* ---- the reader ---- */

static hid_t open_rdonly(const char *path, int use_locking, struct h5_why *why)
{
	hid_t file = H5I_INVALID_HID;
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_file_locking(fapl, use_locking, 1) >= 0)
		file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	/* every HDF5 call clears the error stack: take the reason first */
	h5_take_why(why);
	h5_close(&fapl);
	return file;
}

static int open_for_read(const char *path, hid_t *file, struct engi_error *err)
{
	if (access(path, R_OK) != 0) {
		*file = H5I_INVALID_HID;
		RAISE(err, errno == ENOENT ? ENGI_ENOTFOUND : ENGI_EIO,
		      "cannot open results file '%s': %s", path, strerror(errno));
	}
	/* A results file may be read while its writer still has it open (a
	 * merge's output, a store that is not published), and a writer holds
	 * its lock until it closes: readers take none. When this process
	 * itself has the file open for writing, HDF5 wants the writer's
	 * locking setting. */
	struct h5_why w, w2;
	*file = open_rdonly(path, 0, &w);
	if (*file < 0)
		*file = open_rdonly(path, 1, &w2);
	if (*file >= 0)
		return 0;
	if (H5Fis_hdf5(path) == 0) {
		H5Eclear2(H5E_DEFAULT);
		RAISE(err, ENGI_EINVALID,
		      "'%s' is not an engisweep results file (not an HDF5 "
		      "file)",
		      path);
	}
	H5Eclear2(H5E_DEFAULT);
	const char *hint = "";
	if (strstr(w.text, "unable to lock file"))
		hint = " (another process holds it and HDF5_USE_FILE_LOCKING "
		       "in the environment asks for a lock: set it to FALSE "
		       "to read it)";
	RAISE(err, ENGI_EIO, "cannot open results file '%s': %s%s", path,
	      w.text[0] ? w.text : "unknown HDF5 error", hint);
}

static int check_format(hid_t file, const char *path, struct engi_error *err)
{
	if (H5Aexists(file, "format") <= 0) {
		H5Eclear2(H5E_DEFAULT);
		RAISE(err, ENGI_EINVALID,
		      "'%s' is not an engisweep results file (it has no "
		      "'format' attribute)",
		      path);
	}
	char *format;
	TRY(read_str_attr(file, "/", "format", &format, path, err));
	int same = strcmp(format, STORE_FORMAT) == 0;
	if (!same) {
		engi_raise(err, ENGI_EINVALID,
			   "'%s' is not an engisweep results file (its format "
			   "is '%.64s')",
			   path, format);
		engi_free(format);
		return ENGI_EINVALID;
	}
	engi_free(format);
	int32_t version;
	TRY(read_num_attr(file, "/", "format_version", H5T_NATIVE_INT32, &version, path, err));
	if (version < 1 || version > STORE_FORMAT_VERSION)
		RAISE(err, ENGI_ENOTSUP,
		      "'%s' has results format version %d; this engisweep "
		      "reads version %d",
		      path, (int)version, STORE_FORMAT_VERSION);
	return 0;
}

/* Reads a whole table into a new array of its row structs. Fields are
 * matched by name, so a file whose rows are laid out differently still
 * reads, but every field we know must be there. */
static int read_table(hid_t file, const char *path, int t, void **out, size_t *nout,
		      struct engi_error *err)
{
	const struct table_desc *d = &tables[t];
	*out = NULL;
	*nout = 0;
	if (H5Lexists(file, d->path, H5P_DEFAULT) <= 0) {
		H5Eclear2(H5E_DEFAULT);
		RAISE(err, ENGI_EINVALID,
		      "'%s' is not an engisweep results file (dataset '%s' "
		      "is missing)",
		      path, d->path);
	}
	hid_t dset = H5Dopen2(file, d->path, H5P_DEFAULT);
	hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
	hid_t space = H5I_INVALID_HID;
	char *rows = NULL;
	int rc = 0;
	if (dset < 0 || (ftype = H5Dget_type(dset)) < 0 || (space = H5Dget_space(dset)) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot open dataset '%s' in '%s'", d->path, path);
		goto out;
	}
	if (H5Tget_class(ftype) != H5T_COMPOUND || H5Sget_simple_extent_ndims(space) != 1) {
		rc = engi_raise(err, ENGI_EINVALID,
				"dataset '%s' in '%s' is not a table of "
				"records",
				d->path, path);
		goto out;
	}
	for (size_t i = 0; i < d->nfields; i++) {
		if (H5Tget_member_index(ftype, d->fields[i].name) < 0) {
			H5Eclear2(H5E_DEFAULT);
			rc = engi_raise(err, ENGI_EINVALID,
					"dataset '%s' in '%s' has no field "
					"'%s'",
					d->path, path, d->fields[i].name);
			goto out;
		}
	}
	hsize_t n;
	H5Sget_simple_extent_dims(space, &n, NULL);
	if (n > SIZE_MAX / d->row_size || !(rows = engi_calloc(n ? (size_t)n : 1, d->row_size))) {
		rc = engi_raise(err, ENGI_ENOMEM,
				"out of memory reading %llu rows of dataset "
				"'%s' in '%s'",
				(unsigned long long)n, d->path, path);
		goto out;
	}
	if (n && ((mtype = row_type(d)) < 0 ||
		  H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)) {
		rc = h5_fail(err, ENGI_EIO, "cannot read dataset '%s' in '%s'", d->path, path);
		goto out;
	}
	/* strings written by other tools may fill their field; one that begins
	 * with the byte of an alias (engi/results.h) would read as another
	 * text, so it is refused */
	for (size_t r = 0; r < n && rc == 0; r++) {
		for (size_t i = 0; i < d->nfields; i++) {
			if (d->fields[i].kind != F_STR)
				continue;
			char *f = rows + r * d->row_size + d->fields[i].offset;
			f[d->fields[i].size - 1] = '\0';
			if (f[0] == ENGI_RES_LONG) {
				rc = engi_raise(err, ENGI_EINVALID,
						"dataset '%s' in '%s', row %zu: field '%s' "
						"begins with byte 0x01, which no results file "
						"holds",
						d->path, path, r, d->fields[i].name);
				goto out;
			}
		}
	}
	*out = rows;
	*nout = (size_t)n;
	rows = NULL;
out:
	engi_free(rows);
	h5_close(&mtype);
	h5_close(&space);
	h5_close(&ftype);
	h5_close(&dset);
	return rc;
}

static int read_all(hid_t file, const char *path, struct engi_results *res, struct engi_error *err)
{
	TRY(check_format(file, path, err));
	void *rows;
	TRY(read_table(file, path, T_TASKS, &rows, &res->ntasks, err));
	res->tasks = rows;
	TRY(read_table(file, path, T_MODELS, &rows, &res->nmodels, err));
	res->models = rows;
	TRY(read_table(file, path, T_CONDITIONS, &rows, &res->nconditions, err));
	res->conditions = rows;
	TRY(read_table(file, path, T_EPISODES, &rows, &res->nepisodes, err));
	res->episodes = rows;
	TRY(read_table(file, path, T_ASSERTIONS, &rows, &res->nassertions, err));
	res->assertions = rows;
	TRY(read_table(file, path, T_METRICS, &rows, &res->nmetrics, err));
	res->metrics = rows;
	TRY(read_table(file, path, T_ARTIFACTS, &rows, &res->nartifacts, err));
	res->artifacts = rows;
	TRY(read_num_attr(file, "/", "planned_cells", H5T_NATIVE_UINT64, &res->planned_cells, path,
			  err));
	TRY(read_str_attr(file, "/", "sweep_id", &res->sweep_id, path, err));
	return read_str_attr(file, "/", "config", &res->config_json, path, err);
}

static int store_read_impl(const char *path, struct engi_results *res, struct engi_error *err)
{
	h5_quiet();
	engi_results_init(res);
	hid_t file;
	TRY(open_for_read(path, &file, err));
	int rc = read_all(file, path, res, err);
	h5_close(&file);
	if (rc < 0) {
		engi_results_release(res);
		engi_results_init(res);
	}
	return rc;
}

static int read_trace_bytes(hid_t file, const char *path, const char *cell, unsigned char **z,
			    size_t *zlen, uint64_t *raw_len, struct engi_error *err)
{
	char name[ENGI_CELL_STR + 16];
	snprintf(name, sizeof(name), "/traces/%s", cell);
	*z = NULL;
	if (H5Lexists(file, "/traces", H5P_DEFAULT) <= 0 ||
	    H5Lexists(file, name, H5P_DEFAULT) <= 0) {
		H5Eclear2(H5E_DEFAULT);
		RAISE(err, ENGI_ENOTFOUND, "no trace for cell '%s' in '%s'", cell, path);
	}
	hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
	hid_t space = H5I_INVALID_HID;
	char *codec = NULL;
	int rc = 0;
	if (dset < 0 || (space = H5Dget_space(dset)) < 0 ||
	    H5Sget_simple_extent_ndims(space) != 1) {
		rc = h5_fail(err, ENGI_EIO, "cannot open dataset '%s' in '%s'", name, path);
		goto out;
	}
	rc = read_str_attr(dset, name, "codec", &codec, path, err);
	if (rc == 0 && strcmp(codec, STORE_TRACE_CODEC) != 0)
		rc = engi_raise(err, ENGI_ENOTSUP,
				"dataset '%s' in '%s' has codec '%.32s', not "
				"'" STORE_TRACE_CODEC "'",
				name, path, codec);
	if (rc == 0)
		rc = read_num_attr(dset, name, "raw_bytes", H5T_NATIVE_UINT64, raw_len, path, err);
	if (rc < 0)
		goto out;
	hsize_t n;
	H5Sget_simple_extent_dims(space, &n, NULL);
	if (n > SIZE_MAX || !(*z = engi_malloc(n ? (size_t)n : 1))) {
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory reading dataset '%s' in '%s'",
				name, path);
		goto out;
	}
	if (n && H5Dread(dset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, *z) < 0) {
		rc = h5_fail(err, ENGI_EIO, "cannot read dataset '%s' in '%s'", name, path);
		engi_free(*z);
		*z = NULL;
		goto out;
	}
	*zlen = (size_t)n;
out:
	engi_free(codec);
	h5_close(&space);
	h5_close(&dset);
	return rc;
}

static int store_read_trace_impl(const char *path, const char *cell, char **out, size_t *len,
				 struct engi_error *err)
{
	*out = NULL;
	if (len)
		*len = 0;
	h5_quiet();
	TRY(check_cell(cell, err));
	if (strlen(cell) > ENGI_CELL_ID_LEN)
		RAISE(err, ENGI_EINVALID, "cell id '%s' is too long", cell);
	hid_t file;
	TRY(open_for_read(path, &file, err));
	unsigned char *z = NULL;
	size_t zlen = 0;
	uint64_t raw_len = 0;
	int rc = check_format(file, path, err);
	if (rc == 0)
		rc = read_trace_bytes(file, path, cell, &z, &zlen, &raw_len, err);
	h5_close(&file);
	if (rc < 0)
		return rc;
	size_t got = 0;
	rc = trace_decompress(z, zlen, raw_len > SIZE_MAX ? SIZE_MAX : (size_t)raw_len, out, &got,
			      err);
	engi_free(z);
	if (rc < 0) {
		engi_error_prefix(err, "trace of cell '%s' in '%s'", cell, path);
		return rc;
	}
	if (got != raw_len) {
		engi_free(*out);
		*out = NULL;
		RAISE(err, ENGI_EMISMATCH,
		      "trace of cell '%s' in '%s' has %zu bytes, its "
		      "raw_bytes attribute says %llu",
		      cell, path, got, (unsigned long long)raw_len);
	}
	if (len)
		*len = got;
	return 0;
}

const char *store_library_version(void)
{
	static char buf[32];
	unsigned maj = 0, min = 0, rel = 0;
	if (!buf[0] && H5get_libversion(&maj, &min, &rel) >= 0)
		snprintf(buf, sizeof(buf), "HDF5 %u.%u.%u", maj, min, rel);
	return buf;
}

struct store_reader {
	hid_t file;
	char *path;
};

static int store_reader_open_impl(struct store_reader **out, const char *path,
				  struct engi_error *err)
{
	*out = NULL;
	h5_quiet();
	struct store_reader *r = engi_calloc(1, sizeof(*r));
	if (!r || !(r->path = engi_strdup(path))) {
		engi_free(r);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = open_for_read(path, &r->file, err);
	if (rc == 0 && (rc = check_format(r->file, path, err)) < 0)
		h5_close(&r->file);
	if (rc < 0) {
		engi_free(r->path);
		engi_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static int store_reader_trace_impl(struct store_reader *r, const char *cell, unsigned char **z,
				   size_t *zlen, uint64_t *raw_len, struct engi_error *err)
{
	TRY(check_cell(cell, err));
	return read_trace_bytes(r->file, r->path, cell, z, zlen, raw_len, err);
}

static void store_reader_close_impl(struct store_reader **r)
{
	if (!*r)
		return;
	h5_close(&(*r)->file);
	engi_free((*r)->path);
	engi_free(*r);
	*r = NULL;
}

/* HDF5 as Debian builds it is not thread-safe, and rank 0 reads results
 * files (replay) in episode threads while its main thread writes the store:
 * every entry point holds one process-wide lock. Recursive, because some
 * entry points call others. */
static pthread_mutex_t h5_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

int store_create(struct store **out, const char *path, const struct store_meta *meta,
		 struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_create_impl(out, path, meta, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_append(struct store *s, const struct record *r, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_append_impl(s, r, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_flush(struct store *s, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_flush_impl(s, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_publish(struct store *s, const char *to, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_publish_impl(s, to, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_close(struct store **s, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_close_impl(s, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_read(const char *path, struct engi_results *res, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_read_impl(path, res, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_read_trace(const char *path, const char *cell, char **out, size_t *len,
		     struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_read_trace_impl(path, cell, out, len, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_reader_open(struct store_reader **out, const char *path, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_reader_open_impl(out, path, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

int store_reader_trace(struct store_reader *r, const char *cell, unsigned char **z, size_t *zlen,
		       uint64_t *raw_len, struct engi_error *err)
{
	pthread_mutex_lock(&h5_lock);
	int rc = store_reader_trace_impl(r, cell, z, zlen, raw_len, err);
	pthread_mutex_unlock(&h5_lock);
	return rc;
}

void store_reader_close(struct store_reader **r)
{
	pthread_mutex_lock(&h5_lock);
	store_reader_close_impl(r);
	pthread_mutex_unlock(&h5_lock);
}
