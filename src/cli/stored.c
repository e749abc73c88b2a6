#include "stored.h"

#include "engi/alloc.h"
#include "engi/verify.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_rowidx(const void *a, const void *b)
{
	const struct rowidx *x = a, *y = b;
	int c = strcmp(x->cell, y->cell);
	return c ? c : (x->row < y->row ? -1 : x->row > y->row);
}

static int index_build(struct index *ix, const char *base, size_t stride, size_t n)
{
	ix->n = n;
	ix->v = engi_calloc(n ? n : 1, sizeof(*ix->v));
	if (!ix->v)
		return ENGI_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		ix->v[i].cell = base + i * stride; /* cell is each row's first field */
		ix->v[i].row = i;
	}
	qsort(ix->v, n, sizeof(*ix->v), cmp_rowidx);
	return 0;
}

/* First position of cell in ix (or ix->n) and how many rows it has. */
static size_t index_range(const struct index *ix, const char *cell, size_t *count)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(ix->v[mid].cell, cell) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo;
	while (k < ix->n && !strcmp(ix->v[k].cell, cell))
		k++;
	*count = k - lo;
	return lo;
}

static int state_from_name(const char *s)
{
	for (int st = ENGI_PASS; st <= ENGI_UNAVAILABLE; st++)
		if (!strcmp(engi_astate_name(st), s))
			return st;
	return ENGI_UNAVAILABLE;
}

/* One episode of one input back into a record, trace included. */
int stored_record(struct stored *in, size_t e, struct record *r, struct engi_error *err)
{
	const struct engi_res_episode *ep = &in->res.episodes[e];
	record_init(r);
	int rc = record_from_row(r, ep, err);
	if (rc < 0) {
		engi_error_prefix(err, "%s", in->path);
		return rc;
	}

	size_t n, at = index_range(&in->asserts, ep->cell, &n);
	r->assertions = engi_calloc(n ? n : 1, sizeof(*r->assertions));
	if (!r->assertions)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const struct engi_res_assertion *a = &in->res.assertions[in->asserts.v[at + k].row];
		struct engi_assertion *d = &r->assertions[r->nassertions++];
		snprintf(d->name, sizeof(d->name), "%s", a->name);
		snprintf(d->stage, sizeof(d->stage), "%s", a->stage);
		d->state = state_from_name(a->state);
		d->required = a->required;
		d->value = a->value;
		d->expected = a->expected;
		snprintf(d->detail, sizeof(d->detail), "%s", a->detail);
	}
	at = index_range(&in->metrics, ep->cell, &n);
	r->metrics = engi_calloc(n ? n : 1, sizeof(*r->metrics));
	if (!r->metrics)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const struct engi_res_metric *m = &in->res.metrics[in->metrics.v[at + k].row];
		snprintf(r->metrics[k].name, sizeof(r->metrics[k].name), "%s", m->name);
		r->metrics[k].value = m->value;
		r->nmetrics++;
	}
	at = index_range(&in->artifacts, ep->cell, &n);
	r->artifacts = engi_calloc(n ? n : 1, sizeof(*r->artifacts));
	if (!r->artifacts)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++) {
		const struct engi_res_artifact *a = &in->res.artifacts[in->artifacts.v[at + k].row];
		struct artifact *d = &r->artifacts[r->nartifacts++];
		snprintf(d->path, sizeof(d->path), "%s", a->path);
		d->bytes = a->bytes;
		memcpy(d->sha256, a->sha256, sizeof(d->sha256));
		snprintf(d->note, sizeof(d->note), "%s", a->note);
	}
	uint64_t raw = 0;
	struct engi_error te;
	engi_error_init(&te);
	rc = store_reader_trace(in->reader, ep->cell, &r->trace, &r->trace_len, &raw, &te);
	if (rc == ENGI_ENOTFOUND)
		return 0;
	if (rc < 0)
		return engi_raise(err, rc, "%s", te.msg);
	r->trace_raw_len = (size_t)raw;
	return 0;
}

int stored_open(struct stored *s, const char *path, struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	engi_results_init(&s->res);
	TRY(store_read(path, &s->res, err));
	TRY(store_reader_open(&s->reader, path, err));
	if (index_build(&s->asserts, (const char *)s->res.assertions, sizeof(*s->res.assertions),
			s->res.nassertions) < 0 ||
	    index_build(&s->metrics, (const char *)s->res.metrics, sizeof(*s->res.metrics),
			s->res.nmetrics) < 0 ||
	    index_build(&s->artifacts, (const char *)s->res.artifacts, sizeof(*s->res.artifacts),
			s->res.nartifacts) < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	return 0;
}

void stored_close(struct stored *s)
{
	store_reader_close(&s->reader);
	engi_free(s->asserts.v);
	engi_free(s->metrics.v);
	engi_free(s->artifacts.v);
	engi_results_release(&s->res);
	memset(s, 0, sizeof(*s));
}

int stored_finish(struct store **st, const char *tmp, const char *out, int rc,
		  struct engi_error *err)
{
	if (*st) {
		struct engi_error e2;
		engi_error_init(&e2);
		int crc = store_close(st, &e2);
		if (rc == 0 && crc < 0)
			rc = engi_raise(err, crc, "%s", e2.msg);
	}
	if (rc == 0 && rename(tmp, out) < 0)
		rc = engi_raise(err, ENGI_EIO, "cannot rename '%s' to '%s'", tmp, out);
	if (rc < 0)
		unlink(tmp);
	return rc;
}
