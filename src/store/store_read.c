/*
 * store_read.c - a results file read back (store.h): every table into
 * struct engi_results, fields matched by name, and traces one at a time
 * (store_read_trace) or many from one open file (store_reader).
 */
#include "store_hdf5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engi/alloc.h"
#include "trace.h"

static hid_t open_rdonly(const char *path, int use_locking, struct h5_why *why)
{
	hid_t file = H5I_INVALID_HID;
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl >= 0 && H5Pset_file_locking(fapl, use_locking, 1) >= 0)
		file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	/* every HDF5 call clears the error stack: take the reason first */
	store_h5_take_why(why);
	store_h5_close(&fapl);
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

/* The file's format version into *version (NULL: not wanted). */
static int check_format(hid_t file, const char *path, int *version_out, struct engi_error *err)
{
	if (H5Aexists(file, "format") <= 0) {
		H5Eclear2(H5E_DEFAULT);
		RAISE(err, ENGI_EINVALID,
		      "'%s' is not an engisweep results file (it has no "
		      "'format' attribute)",
		      path);
	}
	char *format;
	TRY(store_read_str_attr(file, "/", "format", &format, path, err));
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
	TRY(store_read_num_attr(file, "/", "format_version", H5T_NATIVE_INT32, &version, path,
				err));
	if (version < 1 || version > STORE_FORMAT_VERSION)
		RAISE(err, ENGI_ENOTSUP,
		      "'%s' has results format version %d; this engisweep "
		      "reads version %d",
		      path, (int)version, STORE_FORMAT_VERSION);
	if (version_out)
		*version_out = (int)version;
	return 0;
}

/* Reads a whole table into a new array of its row structs. Fields are
 * matched by name, so a file whose rows are laid out differently still
 * reads, but every field we know must be there, except those that came
 * after the file's format version (left empty). */
static int read_table(hid_t file, const char *path, int version, int t, void **out, size_t *nout,
		      struct engi_error *err)
{
	const struct table_desc *d = &store_tables[t];
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
		rc =
		    store_h5_fail(err, ENGI_EIO, "cannot open dataset '%s' in '%s'", d->path, path);
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
			if (d->fields[i].since > version)
				continue;
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
	if (n && ((mtype = store_row_type_of(d, ftype)) < 0 ||
		  H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)) {
		rc =
		    store_h5_fail(err, ENGI_EIO, "cannot read dataset '%s' in '%s'", d->path, path);
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
	store_h5_close(&mtype);
	store_h5_close(&space);
	store_h5_close(&ftype);
	store_h5_close(&dset);
	return rc;
}

static int read_all(hid_t file, const char *path, struct engi_results *res, struct engi_error *err)
{
	int version;
	TRY(check_format(file, path, &version, err));
	void *rows;
	TRY(read_table(file, path, version, T_TASKS, &rows, &res->ntasks, err));
	res->tasks = rows;
	TRY(read_table(file, path, version, T_MODELS, &rows, &res->nmodels, err));
	res->models = rows;
	TRY(read_table(file, path, version, T_CONDITIONS, &rows, &res->nconditions, err));
	res->conditions = rows;
	/* the tasks' metadata: a file written before /task_meta came has none */
	if (H5Lexists(file, store_tables[T_TASK_META].path, H5P_DEFAULT) > 0) {
		TRY(read_table(file, path, version, T_TASK_META, &rows, &res->ntask_meta, err));
		res->task_meta = rows;
	}
	H5Eclear2(H5E_DEFAULT);
	TRY(read_table(file, path, version, T_EPISODES, &rows, &res->nepisodes, err));
	res->episodes = rows;
	TRY(read_table(file, path, version, T_ASSERTIONS, &rows, &res->nassertions, err));
	res->assertions = rows;
	TRY(read_table(file, path, version, T_METRICS, &rows, &res->nmetrics, err));
	res->metrics = rows;
	TRY(read_table(file, path, version, T_ARTIFACTS, &rows, &res->nartifacts, err));
	res->artifacts = rows;
	TRY(store_read_num_attr(file, "/", "planned_cells", H5T_NATIVE_UINT64, &res->planned_cells,
				path, err));
	TRY(store_read_str_attr(file, "/", "sweep_id", &res->sweep_id, path, err));
	TRY(store_read_str_attr(file, "/", "config", &res->config_json, path, err));
	record_config_suite(res->config_json, res);
	return 0;
}

static int store_read_impl(const char *path, struct engi_results *res, struct engi_error *err)
{
	store_h5_quiet();
	engi_results_init(res);
	hid_t file;
	TRY(open_for_read(path, &file, err));
	int rc = read_all(file, path, res, err);
	store_h5_close(&file);
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
		rc = store_h5_fail(err, ENGI_EIO, "cannot open dataset '%s' in '%s'", name, path);
		goto out;
	}
	rc = store_read_str_attr(dset, name, "codec", &codec, path, err);
	if (rc == 0 && strcmp(codec, STORE_TRACE_CODEC) != 0)
		rc = engi_raise(err, ENGI_ENOTSUP,
				"dataset '%s' in '%s' has codec '%.32s', not "
				"'" STORE_TRACE_CODEC "'",
				name, path, codec);
	if (rc == 0)
		rc = store_read_num_attr(dset, name, "raw_bytes", H5T_NATIVE_UINT64, raw_len, path,
					 err);
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
		rc = store_h5_fail(err, ENGI_EIO, "cannot read dataset '%s' in '%s'", name, path);
		engi_free(*z);
		*z = NULL;
		goto out;
	}
	*zlen = (size_t)n;
out:
	engi_free(codec);
	store_h5_close(&space);
	store_h5_close(&dset);
	return rc;
}

static int store_read_trace_impl(const char *path, const char *cell, char **out, size_t *len,
				 struct engi_error *err)
{
	*out = NULL;
	if (len)
		*len = 0;
	store_h5_quiet();
	TRY(store_check_cell(cell, err));
	if (strlen(cell) > ENGI_CELL_ID_LEN)
		RAISE(err, ENGI_EINVALID, "cell id '%s' is too long", cell);
	hid_t file;
	TRY(open_for_read(path, &file, err));
	unsigned char *z = NULL;
	size_t zlen = 0;
	uint64_t raw_len = 0;
	int rc = check_format(file, path, NULL, err);
	if (rc == 0)
		rc = read_trace_bytes(file, path, cell, &z, &zlen, &raw_len, err);
	store_h5_close(&file);
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

struct store_reader {
	hid_t file;
	char *path;
};

static int store_reader_open_impl(struct store_reader **out, const char *path,
				  struct engi_error *err)
{
	*out = NULL;
	store_h5_quiet();
	struct store_reader *r = engi_calloc(1, sizeof(*r));
	if (!r || !(r->path = engi_strdup(path))) {
		engi_free(r);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = open_for_read(path, &r->file, err);
	if (rc == 0 && (rc = check_format(r->file, path, NULL, err)) < 0)
		store_h5_close(&r->file);
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
	TRY(store_check_cell(cell, err));
	return read_trace_bytes(r->file, r->path, cell, z, zlen, raw_len, err);
}

static void store_reader_close_impl(struct store_reader **r)
{
	if (!*r)
		return;
	store_h5_close(&(*r)->file);
	engi_free((*r)->path);
	engi_free(*r);
	*r = NULL;
}

/* The entry points, each under store_h5_lock (store_hdf5.h). */

int store_read(const char *path, struct engi_results *res, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_read_impl(path, res, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_read_trace(const char *path, const char *cell, char **out, size_t *len,
		     struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_read_trace_impl(path, cell, out, len, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_reader_open(struct store_reader **out, const char *path, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_reader_open_impl(out, path, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

int store_reader_trace(struct store_reader *r, const char *cell, unsigned char **z, size_t *zlen,
		       uint64_t *raw_len, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_reader_trace_impl(r, cell, z, zlen, raw_len, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}

void store_reader_close(struct store_reader **r)
{
	pthread_mutex_lock(&store_h5_lock);
	store_reader_close_impl(r);
	pthread_mutex_unlock(&store_h5_lock);
}
