/*
 * store_rows.c - a record's rows in the results file (store.h): its
 * episode row, assertions, metrics and artifacts buffered by store_append
 * and written at the next flush, every string scrubbed of secrets, and its
 * compressed trace as /traces/<cell>.
 */
#include "store_hdf5.h"

#include <stdio.h>
#include <string.h>

#include "engi/alloc.h"
#include "secrets.h"

/* Rows as written: every string field scrubbed of secrets (secrets.h), in
 * a copy; NULL with *copy NULL when there is nothing to scrub, or memory
 * ran out (*oom). */
static void *scrubbed_rows(int t, const void *rows, size_t n, int *oom)
{
	*oom = 0;
	if (!secrets_any())
		return NULL;
	const struct table_desc *d = &store_tables[t];
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

int store_write_rows(struct store *s, int t, const void *rows, size_t n, struct engi_error *err)
{
	if (n == 0)
		return 0;
	int oom;
	void *clean = scrubbed_rows(t, rows, n, &oom);
	if (oom)
		RAISE(err, ENGI_ENOMEM, "out of memory writing dataset '%s' in '%s'",
		      store_tables[t].path, s->path);
	if (clean)
		rows = clean;
	const char *name = store_tables[t].path;
	hsize_t start = s->written[t], count = n, total = start + count;
	hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
	int rc = 0;
	if (H5Dset_extent(s->dset[t], &total) < 0) {
		rc = store_h5_fail(err, ENGI_EIO, "cannot extend dataset '%s' in '%s'", name,
				   s->path);
	} else if ((fspace = H5Dget_space(s->dset[t])) < 0 ||
		   H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
		   (mspace = H5Screate_simple(1, &count, NULL)) < 0 ||
		   H5Dwrite(s->dset[t], s->type[t], mspace, fspace, H5P_DEFAULT, rows) < 0) {
		rc = store_h5_fail(err, ENGI_EIO, "cannot write dataset '%s' in '%s'", name,
				   s->path);
	} else {
		s->written[t] = total;
	}
	s->dirty = 1;
	store_h5_close(&mspace);
	store_h5_close(&fspace);
	engi_free(clean);
	return rc;
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

static int reserve_rows(struct pending_rows *p, size_t row_size, size_t more)
{
	if (more > SIZE_MAX - p->n)
		return ENGI_ENOMEM;
	return engi_grow((void **)&p->rows, &p->alloc, p->n + more, row_size);
}

static void *next_row(struct store *s, int t)
{
	struct pending_rows *p = &s->pending[t];
	char *row = p->rows + p->n++ * store_tables[t].row_size;
	memset(row, 0, store_tables[t].row_size);
	return row;
}

static int check_appendable(const struct record *r, struct engi_error *err)
{
	TRY(store_check_cell(r->cell, err));
	TRY(record_check_values(r, err));
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
		TRY(reserve_rows(&s->pending[t], store_tables[t].row_size, more[t]));
	if (!r->trace_len)
		return 0;
	TRY(engi_grow((void **)&s->ptraces, &s->alloc_ptraces, s->nptraces + 1,
		      sizeof(*s->ptraces)));
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
		return store_h5_fail(err, ENGI_EIO, "cannot replace dataset '%s' in '%s'", name,
				     s->path);
	if ((space = H5Screate_simple(1, &n, NULL)) < 0 ||
	    (dset = H5Dcreate2(s->traces, pt->cell, H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT,
			       H5P_DEFAULT)) < 0 ||
	    H5Dwrite(dset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, pt->z) < 0) {
		rc = store_h5_fail(err, ENGI_EIO, "cannot write dataset '%s' in '%s'", name,
				   s->path);
		goto out;
	}
	rc = store_write_num_attr(dset, name, "raw_bytes", H5T_STD_U64LE, H5T_NATIVE_UINT64,
				  &pt->raw_len, s->path, err);
	if (rc == 0)
		rc = store_write_str_attr(dset, name, "codec", STORE_TRACE_CODEC, s->path, err);
out:
	store_h5_close(&dset);
	store_h5_close(&space);
	return rc;
}

/* What was written stays written: a failed write can be retried and goes on
 * with what is left. */
int store_write_pending(struct store *s, struct engi_error *err)
{
	for (int t = T_EPISODES; t < T_COUNT; t++) {
		struct pending_rows *p = &s->pending[t];
		TRY(store_write_rows(s, t, p->rows, p->n, err));
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
	return rc;
}

void store_pending_release(struct store *s)
{
	for (int t = 0; t < T_COUNT; t++)
		engi_free(s->pending[t].rows);
	for (size_t i = 0; i < s->nptraces; i++)
		engi_free(s->ptraces[i].z);
	engi_free(s->ptraces);
}

/* The entry points, each under store_h5_lock (store_hdf5.h). */

int store_append(struct store *s, const struct record *r, struct engi_error *err)
{
	pthread_mutex_lock(&store_h5_lock);
	int rc = store_append_impl(s, r, err);
	pthread_mutex_unlock(&store_h5_lock);
	return rc;
}
