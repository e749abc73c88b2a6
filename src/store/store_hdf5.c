/*
 * store_hdf5.c - the layout of the results file (store.h) and the HDF5
 * basics the store's other files share (store_hdf5.h): errors, close,
 * signals held back around flushes, row and string types, attributes, and
 * the lock.
 */
#include "store_hdf5.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engi/alloc.h"
#include "secrets.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- row layouts: one field list per table, from engi/results.h ---- */

/* clang-format off */
#define FIELD_SINCE(st, m, k, v) { #m, offsetof(st, m), sizeof(((st *)0)->m), k, v }
#define FIELD(st, m, k) FIELD_SINCE(st, m, k, 0)
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

#define T_ struct engi_res_task_meta
static const struct field task_meta_fields[] = {
    FIELD(T_, task_id, F_STR),
    FIELD(T_, key, F_STR),
    FIELD(T_, value, F_STR),
    FIELD(T_, conflict, F_STR),
};
#undef T_

/* the HDF5 type of each kind of engi/schema.h */
#define KIND_S F_STR
#define KIND_M F_STR
#define KIND_O F_STR
#define KIND_o F_STR
#define KIND_I F_I32
#define KIND_L F_I64
#define KIND_B F_I32
#define KIND_D F_F64

#define T_ struct engi_res_episode
#define EPISODE_FIELD(name, kind, rec, row, since, csv, dflt)                                      \
	FIELD_SINCE(T_, name, KIND_##kind, since),
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

/* clang-format off */
#define TABLE(p, f, st) { p, f, ARRAY_SIZE(f), sizeof(st) }
/* clang-format on */
const struct table_desc store_tables[T_COUNT] = {
    [T_TASKS] = TABLE("/tasks", task_fields, struct engi_res_task),
    [T_MODELS] = TABLE("/models", model_fields, struct engi_res_model),
    [T_CONDITIONS] = TABLE("/conditions", condition_fields, struct engi_res_condition),
    [T_TASK_META] = TABLE("/task_meta", task_meta_fields, struct engi_res_task_meta),
    [T_EPISODES] = TABLE("/episodes", episode_fields, struct engi_res_episode),
    [T_ASSERTIONS] = TABLE("/assertions", assertion_fields, struct engi_res_assertion),
    [T_METRICS] = TABLE("/metrics", metric_fields, struct engi_res_metric),
    [T_ARTIFACTS] = TABLE("/artifacts", artifact_fields, struct engi_res_artifact),
};
#undef TABLE

/* ---- HDF5 errors become ENGI errors ---- */

void store_h5_quiet(void)
{
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	H5Eclear2(H5E_DEFAULT);
}

static herr_t h5_why_walk(unsigned n, const H5E_error2_t *e, void *arg)
{
	struct h5_why *w = arg;
	if (w->text[0] == '\0' && e->desc && e->desc[0])
		snprintf(w->text, sizeof(w->text), "%s", e->desc);
	return 0;
}

/* The innermost HDF5 message (the most specific one), then the stack is
 * cleared. */
void store_h5_take_why(struct h5_why *w)
{
	w->text[0] = '\0';
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_why_walk, w);
	H5Eclear2(H5E_DEFAULT);
}

__attribute__((format(printf, 3, 4))) int store_h5_fail(struct engi_error *err, int code,
							const char *fmt, ...)
{
	struct h5_why w;
	store_h5_take_why(&w);
	char head[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	if (w.text[0])
		return engi_raise(err, code, "%s: %s", head, w.text);
	return engi_raise(err, code, "%s", head);
}

void store_h5_close(hid_t *id)
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
void store_defer_signals(sigset_t *old)
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

void store_restore_signals(const sigset_t *old)
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
hid_t store_row_type(const struct table_desc *d)
{
	return store_row_type_of(d, H5I_INVALID_HID);
}

hid_t store_row_type_of(const struct table_desc *d, hid_t file_type)
{
	hid_t t = H5Tcreate(H5T_COMPOUND, d->row_size);
	if (t < 0)
		return t;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct field *f = &d->fields[i];
		if (file_type >= 0 && H5Tget_member_index(file_type, f->name) < 0) {
			H5Eclear2(H5E_DEFAULT);
			continue;
		}
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

int store_write_str_attr(hid_t loc, const char *obj, const char *name, const char *value,
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
		rc = store_h5_fail(err, ENGI_EIO, "cannot write attribute '%s' of '%s' in '%s'",
				   name, obj, path);
	store_h5_close(&attr);
	store_h5_close(&space);
	store_h5_close(&type);
	engi_free(clean);
	return rc;
}

int store_write_num_attr(hid_t loc, const char *obj, const char *name, hid_t file_type,
			 hid_t mem_type, const void *value, const char *path,
			 struct engi_error *err)
{
	hid_t space = H5Screate(H5S_SCALAR);
	hid_t attr = H5I_INVALID_HID;
	int rc = 0;
	if (space < 0 ||
	    (attr = H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
	    H5Awrite(attr, mem_type, value) < 0)
		rc = store_h5_fail(err, ENGI_EIO, "cannot write attribute '%s' of '%s' in '%s'",
				   name, obj, path);
	store_h5_close(&attr);
	store_h5_close(&space);
	return rc;
}

/* Reads a string attribute, fixed-length or variable-length; *out is ours. */
int store_read_str_attr(hid_t loc, const char *obj, const char *name, char **out, const char *path,
			struct engi_error *err)
{
	*out = NULL;
	hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
	hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
	int rc = 0;
	if (attr < 0 || (ftype = H5Aget_type(attr)) < 0) {
		rc = store_h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'",
				   name, obj, path);
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
			rc = store_h5_fail(err, ENGI_EIO,
					   "cannot read attribute '%s' of '%s' in '%s'", name, obj,
					   path);
			goto out;
		}
		*out = engi_strdup(v ? v : "");
		H5free_memory(v);
	} else {
		size_t size = H5Tget_size(ftype);
		char *v = engi_calloc(1, size + 1);
		if (v && ((mtype = string_type(size + 1)) < 0 || H5Aread(attr, mtype, v) < 0)) {
			engi_free(v);
			rc = store_h5_fail(err, ENGI_EIO,
					   "cannot read attribute '%s' of '%s' in '%s'", name, obj,
					   path);
			goto out;
		}
		*out = v;
	}
	if (!*out)
		rc = engi_raise(err, ENGI_ENOMEM,
				"out of memory reading attribute '%s' of '%s' in '%s'", name, obj,
				path);
out:
	store_h5_close(&mtype);
	store_h5_close(&ftype);
	store_h5_close(&attr);
	return rc;
}

int store_read_num_attr(hid_t loc, const char *obj, const char *name, hid_t mem_type, void *value,
			const char *path, struct engi_error *err)
{
	hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
	int rc = 0;
	if (attr < 0 || H5Aread(attr, mem_type, value) < 0)
		rc = store_h5_fail(err, ENGI_EIO, "cannot read attribute '%s' of '%s' in '%s'",
				   name, obj, path);
	store_h5_close(&attr);
	return rc;
}

/* /traces/<cell> is a link name: it must be one path component. */
int store_check_cell(const char *cell, struct engi_error *err)
{
	if (cell[0] == '\0')
		RAISE(err, ENGI_EINVALID, "record has an empty cell id");
	if (strchr(cell, '/') || strcmp(cell, ".") == 0 || strcmp(cell, "..") == 0)
		RAISE(err, ENGI_EINVALID, "cell id '%s' is not a valid name", cell);
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

/* HDF5 as Debian builds it is not thread-safe, and rank 0 reads results
 * files (replay) in episode threads while its main thread writes the store:
 * every entry point holds one process-wide lock. Recursive, because some
 * entry points call others. */
pthread_mutex_t store_h5_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
