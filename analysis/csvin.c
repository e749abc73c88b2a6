#include "engi/csvin.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include "strtab.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading a file and splitting it into records ---- */

static int slurp(const char *path, struct engi_dynbuf *b, struct engi_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", path, strerror(errno));
	char chunk[65536];
	size_t n;
	int rc = 0;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		rc = engi_dynbuf_add(b, chunk, n);
		if (rc < 0) {
			engi_raise(err, rc, "cannot read '%s': %s", path,
				   rc == ENGI_ETOOBIG ? "file over its size cap" : "out of memory");
			break;
		}
	}
	if (rc == 0 && ferror(f))
		rc = engi_raise(err, ENGI_EIO, "cannot read '%s': %s", path, strerror(errno));
	fclose(f);
	return rc;
}

struct csv {
	const char *path;
	char *p, *end;
	size_t line; /* physical line of the next byte */
	/* the current record: fields point into the buffer, NUL-terminated */
	char **field;
	size_t nfields, alloc;
	size_t rec_line; /* line the current record starts on */
};

static int push_field(struct csv *c, char *f, struct engi_error *err)
{
	if (c->nfields == c->alloc) {
		size_t na = c->alloc ? 2 * c->alloc : 32;
		char **nf = engi_reallocarray(c->field, na, sizeof *nf);
		if (!nf)
			RAISE(err, ENGI_ENOMEM, "out of memory reading '%s'", c->path);
		c->field = nf;
		c->alloc = na;
	}
	c->field[c->nfields++] = f;
	return 0;
}

/*
 * Splits the next record in place (quotes removed, "" unescaped). Returns 1
 * with a record, 0 at the end of the file; blank lines are skipped.
 */
static int next_record(struct csv *c, struct engi_error *err)
{
	while (c->p < c->end && (*c->p == '\n' || *c->p == '\r')) {
		if (*c->p == '\n')
			c->line++;
		c->p++;
	}
	if (c->p >= c->end)
		return 0;
	c->nfields = 0;
	c->rec_line = c->line;
	for (;;) {
		char *out = c->p, *start = c->p;
		if (c->p < c->end && *c->p == '"') {
			c->p++;
			for (;;) {
				if (c->p >= c->end)
					RAISE(err, ENGI_EPARSE,
					      "%s: line %zu: quoted field not "
					      "closed",
					      c->path, c->rec_line);
				if (*c->p == '"') {
					if (c->p + 1 < c->end && c->p[1] == '"') {
						*out++ = '"';
						c->p += 2;
						continue;
					}
					c->p++;
					break;
				}
				if (*c->p == '\n')
					c->line++;
				*out++ = *c->p++;
			}
			if (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
				RAISE(err, ENGI_EPARSE,
				      "%s: line %zu, field %zu: text after a "
				      "closing quote",
				      c->path, c->line, c->nfields + 1);
		} else {
			while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r') {
				if (*c->p == '"')
					RAISE(err, ENGI_EPARSE,
					      "%s: line %zu, field %zu: quote "
					      "inside an unquoted field",
					      c->path, c->line, c->nfields + 1);
				c->p++;
			}
			out = c->p;
		}
		char sep = c->p < c->end ? *c->p : '\n';
		if (c->p < c->end && *c->p == '\r' && c->p + 1 < c->end && c->p[1] == '\n')
			c->p++;
		if (c->p < c->end)
			c->p++;
		*out = '\0';
		TRY(push_field(c, start, err));
		if (sep != ',') {
			c->line++;
			return 1;
		}
	}
}

/* ---- fields ---- */

/* The columns: the episode fields of engi/schema.h that an episodes CSV
 * has (its csv mode not "no"), in the list's order, then task metadata and
 * the assertions CSV's own. */
#define COL_no(name)
#define COL_req(name)					    C_##name,
#define COL_opt(name)					    C_##name,
#define COL_like(name)					    C_##name,
#define EPISODE_COL(name, kind, rec, row, since, csv, dflt) COL_##csv(name)
enum col {
	ENGI_EPISODE_FIELDS(EPISODE_COL) C_DOMAIN,
	C_TYPE,
	C_INTERFACE,
	C_SOFTWARE,
	C_TITLE,
	C_SCORING,
	C_ASSERTION,
	C_STAGE,
	C_STATE,
	C_REQUIRED,
	C_N
};
#undef EPISODE_COL

#define NAME_no(name)
#define NAME_req(name)					     #name,
#define NAME_opt(name)					     #name,
#define NAME_like(name)					     #name,
#define EPISODE_NAME(name, kind, rec, row, since, csv, dflt) NAME_##csv(name)
static const char *const col_names[C_N] = {
    ENGI_EPISODE_FIELDS(EPISODE_NAME) "domain",
    "type",
    "interface",
    "software",
    "title",
    "scoring",
    "assertion",
    "stage",
    "state",
    "required",
};
#undef EPISODE_NAME

#define EXTRA_MAX 64

struct table {
	struct csv c;
	size_t col[C_N]; /* field index, SIZE_MAX when absent */
	/* header fields that name no known column: task metadata keys */
	size_t extra[EXTRA_MAX];
	size_t nextra;
	const char **hdr; /* the header's names, BOM removed */
};

static const char *get(const struct table *t, int col)
{
	size_t i = t->col[col];
	if (i == SIZE_MAX || i >= t->c.nfields)
		return NULL;
	return t->c.field[i];
}

static int bad(const struct table *t, int col, const char *what, const char *found,
	       struct engi_error *err)
{
	RAISE(err, ENGI_EPARSE, "%s: line %zu, column '%s': %s, found '%.80s'", t->c.path,
	      t->c.rec_line, col_names[col], what, found);
}

/* The text of a column, any length (dflt when empty; NULL: required). */
static int get_text(const struct table *t, int col, const char *dflt, const char **out,
		    struct engi_error *err)
{
	const char *s = get(t, col);
	if (!s || !*s) {
		if (!dflt)
			RAISE(err, ENGI_EPARSE,
			      "%s: line %zu, column '%s': empty, a value is "
			      "required",
			      t->c.path, t->c.rec_line, col_names[col]);
		s = dflt;
	}
	*out = s;
	return 0;
}

/* A text column into a field of res's rows, kept whole however long. */
static int get_str(const struct table *t, struct engi_results *res, int col, char *dst, size_t size,
		   const char *dflt, struct engi_error *err)
{
	const char *s = "";
	TRY(get_text(t, col, dflt, &s, err));
	return engi_res_set(res, dst, size, s, err);
}

static int get_num(const struct table *t, int col, double dflt, int required, double *out,
		   struct engi_error *err)
{
	const char *s = get(t, col);
	if (!s || !*s) {
		if (required)
			return bad(t, col, "expected a number", "", err);
		*out = dflt;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return bad(t, col, "expected a finite number", s, err);
	*out = v;
	return 0;
}

static int get_int(const struct table *t, int col, int64_t lo, int64_t hi, int64_t dflt,
		   int required, int64_t *out, struct engi_error *err)
{
	const char *s = get(t, col);
	if (!s || !*s) {
		if (required)
			return bad(t, col, "expected an integer", "", err);
		*out = dflt;
		return 0;
	}
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno == ERANGE || v < lo || v > hi) {
		char what[96];
		snprintf(what, sizeof what, "expected an integer in %" PRId64 "..%" PRId64, lo, hi);
		return bad(t, col, what, s, err);
	}
	*out = v;
	return 0;
}

static int get_bool(const struct table *t, int col, int dflt, int required, int32_t *out,
		    struct engi_error *err)
{
	const char *s = get(t, col);
	if (!s || !*s) {
		if (required)
			return bad(t, col, "expected 0, 1, true or false", "", err);
		*out = dflt;
		return 0;
	}
	if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True"))
		*out = 1;
	else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False"))
		*out = 0;
	else
		return bad(t, col, "expected 0, 1, true or false", s, err);
	return 0;
}

/* Reads the header; required lists the columns that must be present. */
static int table_open(struct table *t, const char *path, struct engi_dynbuf *b, const int *required,
		      size_t nrequired, struct engi_error *err)
{
	memset(t, 0, sizeof *t);
	t->c.path = path;
	t->c.p = b->buf;
	t->c.end = b->len ? b->buf + b->len : b->buf; /* an empty file has no buffer */
	t->c.line = 1;
	for (int i = 0; i < C_N; i++)
		t->col[i] = SIZE_MAX;
	int got = next_record(&t->c, err);
	if (got < 0)
		return got;
	if (got == 0)
		RAISE(err, ENGI_EPARSE, "%s: empty file, expected a header line", path);
	t->hdr = engi_reallocarray(NULL, t->c.nfields + 1, sizeof *t->hdr);
	if (!t->hdr)
		RAISE(err, ENGI_ENOMEM, "out of memory reading '%s'", path);
	for (size_t f = 0; f < t->c.nfields; f++) {
		const char *name = t->c.field[f];
		/* a byte-order mark before the first name */
		if (f == 0 && !strncmp(name, "\xef\xbb\xbf", 3))
			name += 3;
		t->hdr[f] = name;
		int known = 0;
		for (int i = 0; i < C_N; i++) {
			if (strcmp(name, col_names[i]))
				continue;
			if (t->col[i] != SIZE_MAX)
				RAISE(err, ENGI_EPARSE, "%s: line %zu: column '%s' appears twice",
				      path, t->c.rec_line, name);
			t->col[i] = f;
			known = 1;
		}
		if (!known && *name && t->nextra == EXTRA_MAX)
			RAISE(err, ENGI_EPARSE,
			      "%s: line %zu: column '%.80s': more than %d "
			      "metadata columns",
			      path, t->c.rec_line, name, EXTRA_MAX);
		if (!known && *name)
			t->extra[t->nextra++] = f;
	}
	for (size_t i = 0; i < nrequired; i++)
		if (t->col[required[i]] == SIZE_MAX)
			RAISE(err, ENGI_EPARSE, "%s: line %zu: required column '%s' is missing",
			      path, t->c.rec_line, col_names[required[i]]);
	return 0;
}

static int check_width(const struct table *t, size_t header_fields, struct engi_error *err)
{
	if (t->c.nfields != header_fields)
		RAISE(err, ENGI_EPARSE, "%s: line %zu: %zu fields, the header has %zu", t->c.path,
		      t->c.rec_line, t->c.nfields, header_fields);
	return 0;
}

/* ---- episodes ---- */

static int grow_one(void **p, size_t n, size_t *alloc, size_t size, struct engi_error *err)
{
	if (n < *alloc)
		return 0;
	size_t na = *alloc ? 2 * *alloc : 64;
	void *np = engi_reallocarray(*p, na, size);
	if (!np)
		RAISE(err, ENGI_ENOMEM, "out of memory reading results");
	*p = np;
	*alloc = na;
	return 0;
}

/* Where a row is: a file of the set being read and a line in it. */
struct place {
	size_t file, line;
};

struct reader {
	struct engi_results *res;
	const char *const *paths; /* the episodes files, in reading order */
	size_t file;		  /* the one being read */
	size_t tasks_alloc, models_alloc, conds_alloc, eps_alloc, as_alloc;
	size_t meta_alloc;
	struct place *task_at, *meta_at, *seen_at;
	size_t nseen, seen_alloc;
	/* trials: their span over every row of the file, and the (task,
	 * model, condition) groups that have rows */
	int32_t trial_lo, trial_hi;
	size_t ntrials;
	/* cells: key to episode; seen: key of every row (unrun ones too) to
	 * its place; meta: "task\x1fkey" to its task_meta row; groups: (task,
	 * model, condition) keys */
	struct strtab tasks, models, conds, cells, seen, meta, groups;
	/* owned keys of those tables */
	char **keys;
	size_t nkeys, keys_alloc;
};

static void reader_release(struct reader *r)
{
	engi_free(r->task_at);
	engi_free(r->meta_at);
	engi_free(r->seen_at);
	engi_strtab_release(&r->tasks);
	engi_strtab_release(&r->models);
	engi_strtab_release(&r->conds);
	engi_strtab_release(&r->cells);
	engi_strtab_release(&r->seen);
	engi_strtab_release(&r->meta);
	engi_strtab_release(&r->groups);
	for (size_t i = 0; i < r->nkeys; i++)
		engi_free(r->keys[i]);
	engi_free(r->keys);
}

/* Keeps k (owned from here on, freed on failure). */
static int keep_key(struct reader *r, char *k, struct engi_error *err)
{
	int rc = k ? grow_one((void **)&r->keys, r->nkeys, &r->keys_alloc, sizeof *r->keys, err)
		   : engi_raise(err, ENGI_ENOMEM, "out of memory reading episodes");
	if (rc) {
		engi_free(k);
		return rc;
	}
	r->keys[r->nkeys++] = k;
	return 0;
}

/* "line 7" in this file, "line 7 of a.csv" in another one. */
static void place_text(const struct reader *r, struct place p, char *buf, size_t size)
{
	if (p.file == r->file)
		snprintf(buf, size, "line %zu", p.line);
	else
		snprintf(buf, size, "line %zu of %s", p.line, r->paths[p.file]);
}

static int meta_agree(const struct reader *r, const struct table *t, int col, const char *field,
		      struct place at, const char *task, struct engi_error *err)
{
	const char *s = get(t, col);
	const char *have = engi_res_str(r->res, field);
	if (!s)
		s = "";
	if (!strcmp(s, have))
		return 0;
	char where[600];
	place_text(r, at, where, sizeof where);
	RAISE(err, ENGI_EPARSE,
	      "%s: line %zu, column '%s': task '%s' has '%.60s' here and "
	      "'%.60s' on %s",
	      t->c.path, t->c.rec_line, col_names[col], task, s, have, where);
}

static char *cell_key(const char *task, const char *model, const char *cond, int64_t trial)
{
	size_t n = strlen(task) + strlen(model) + strlen(cond) + 32;
	char *k = engi_malloc(n);
	if (k)
		snprintf(k, n, "%s\x1f%s\x1f%s\x1f%" PRId64, task, model, cond, trial);
	return k;
}

/*
 * A cell (task, model, condition, trial) on rows of two different files is
 * two runs of one cell: counting both would weigh it twice, keeping one
 * would drop the other unseen, so it is an error naming both places. Within
 * one file a repeated cell is left to the report, which keeps one record
 * and counts the others as duplicates; it is one planned cell. Returns 1
 * for such a repeat, 0 for a new cell.
 */
static int check_seen(struct reader *r, const struct table *t, const struct engi_res_episode *e,
		      const char **key, struct engi_error *err)
{
	char *k = cell_key(e->task_id, e->model, e->condition, e->trial);
	TRY(keep_key(r, k, err));
	*key = k;
	size_t i = engi_strtab_get(&r->seen, k);
	if (i != SIZE_MAX) {
		struct place p = r->seen_at[i];
		if (p.file == r->file)
			return 1;
		RAISE(err, ENGI_EPARSE,
		      "%s: line %zu: task '%s', model '%s', condition '%s', "
		      "trial %d is also on line %zu of %s: two runs of one "
		      "cell would be counted twice; give them distinct trial "
		      "numbers or conditions, or drop one",
		      t->c.path, t->c.rec_line, engi_res_str(r->res, e->task_id),
		      engi_res_str(r->res, e->model), engi_res_str(r->res, e->condition),
		      (int)e->trial, p.line, r->paths[p.file]);
	}
	TRY(grow_one((void **)&r->seen_at, r->nseen, &r->seen_alloc, sizeof *r->seen_at, err));
	r->seen_at[r->nseen] = (struct place){r->file, t->c.rec_line};
	TRY(engi_strtab_put(&r->seen, k, r->nseen, err));
	r->nseen++;
	return 0;
}

/* A new task_meta row for key mk (kept) from this row's value v. */
static int meta_new(struct reader *r, const struct table *t, char *mk, const char *task,
		    const char *key, const char *v, struct engi_error *err)
{
	struct engi_results *res = r->res;
	TRY(keep_key(r, mk, err));
	size_t was = r->meta_alloc;
	TRY(grow_one((void **)&res->task_meta, res->ntask_meta, &r->meta_alloc,
		     sizeof *res->task_meta, err));
	if (r->meta_alloc != was) {
		struct place *np = engi_reallocarray(r->meta_at, r->meta_alloc, sizeof *np);
		if (!np)
			RAISE(err, ENGI_ENOMEM, "out of memory reading task metadata");
		r->meta_at = np;
	}
	size_t i = res->ntask_meta++;
	struct engi_res_task_meta *m = &res->task_meta[i];
	memset(m, 0, sizeof *m);
	memcpy(m->task_id, task, sizeof m->task_id);
	TRY(engi_res_set(res, m->key, sizeof m->key, key, err));
	TRY(engi_res_set(res, m->value, sizeof m->value, v, err));
	r->meta_at[i] = (struct place){r->file, t->c.rec_line};
	return engi_strtab_put(&r->meta, mk, i, err);
}

/* An extra column's value on this row, as metadata of the task; a value
 * that differs from the task's first row marks the key a conflict there. */
static int extra_meta(struct reader *r, const struct table *t, size_t field, const char *task,
		      struct engi_error *err)
{
	const char *key = t->hdr[field];
	const char *v = field < t->c.nfields ? t->c.field[field] : "";
	size_t n = strlen(task) + strlen(key) + 2;
	char *mk = engi_malloc(n);
	if (!mk)
		RAISE(err, ENGI_ENOMEM, "out of memory reading task metadata");
	snprintf(mk, n, "%s\x1f%s", task, key);
	size_t i = engi_strtab_get(&r->meta, mk);
	if (i == SIZE_MAX)
		return meta_new(r, t, mk, task, key, v, err);
	engi_free(mk);
	struct engi_res_task_meta *m = &r->res->task_meta[i];
	const char *have = engi_res_str(r->res, m->value);
	if (m->conflict[0] || !strcmp(have, v))
		return 0;
	char where[600];
	place_text(r, r->meta_at[i], where, sizeof where);
	snprintf(m->conflict, sizeof m->conflict,
		 "%.60s: line %zu: task '%.40s' has '%.30s' here and '%.30s' "
		 "on %.80s",
		 t->c.path, t->c.rec_line, engi_res_str(r->res, task), v, have, where);
	return 0;
}

/* The markers of unrun cells an episodes CSV may name as an outcome. */
static const char *const unrun_markers[] = {"missing", "unrun"};

static int is_unrun(const char *o)
{
	return !strcmp(o, unrun_markers[0]) || !strcmp(o, unrun_markers[1]);
}

/* An outcome of engi/schema.h, or a marker. */
static int check_outcome(const struct table *t, const char *o, struct engi_error *err)
{
	if (engi_outcome_find(o, SIZE_MAX) >= 0 || is_unrun(o))
		return 0;
	char what[256], scored[128], infra[128];
	snprintf(what, sizeof what, "expected %s, %s, %s or %s",
		 engi_outcome_list(scored, sizeof scored, 1, ", ", ", "),
		 engi_outcome_list(infra, sizeof infra, 0, ", ", ", "), unrun_markers[0],
		 unrun_markers[1]);
	return bad(t, C_outcome, what, o, err);
}

/* The (task, model, condition) of a row and the span of its trials, so that
 * a trial number the other cells have and this one lacks is missing. */
static int note_trial(struct reader *r, const struct engi_res_episode *e, struct engi_error *err)
{
	if (r->ntrials == 0 || e->trial < r->trial_lo)
		r->trial_lo = e->trial;
	if (r->ntrials == 0 || e->trial > r->trial_hi)
		r->trial_hi = e->trial;
	r->ntrials++;
	char *k = cell_key(e->task_id, e->model, e->condition, 0);
	TRY(keep_key(r, k, err));
	if (engi_strtab_get(&r->groups, k) == SIZE_MAX)
		TRY(engi_strtab_put(&r->groups, k, r->groups.n, err));
	return 0;
}

/* An episode field of an episodes CSV (engi/schema.h's list): its column,
 * kind, place in the row, and what an empty value means. */
struct csv_field {
	int col;
	int kind; /* enum engi_field_kind */
	int mode; /* enum engi_csv_mode */
	size_t offset, size;
	const char *dflt; /* opt: the text an empty value stands for */
	size_t like;	  /* like: the offset of the field whose value it takes */
};

#define E_	     struct engi_res_episode
#define DFLT_req(d)  NULL
#define DFLT_opt(d)  d
#define DFLT_like(d) NULL
#define LIKE_req(d)  0
#define LIKE_opt(d)  0
#define LIKE_like(d) offsetof(E_, d)
#define DESC(name, kind, csv, dflt)                                                                \
	{C_##name,	     ENGI_FK_##kind,	      ENGI_CSV_##csv,                              \
	 offsetof(E_, name), sizeof(((E_ *)0)->name), DFLT_##csv(dflt),                            \
	 LIKE_##csv(dflt)},
#define DESC_no(name, kind, csv, dflt)
#define DESC_req					     DESC
#define DESC_opt					     DESC
#define DESC_like					     DESC
#define EPISODE_DESC(name, kind, rec, row, since, csv, dflt) DESC_##csv(name, kind, csv, dflt)
static const struct csv_field episode_cols[] = {ENGI_EPISODE_FIELDS(EPISODE_DESC)};
#undef EPISODE_DESC
#undef E_

/* One episode field from its column. */
static int episode_col(const struct table *t, struct engi_results *res, const struct csv_field *f,
		       struct engi_res_episode *e, struct engi_error *err)
{
	char *p = (char *)e + f->offset;
	int required = f->mode == ENGI_CSV_req;
	int64_t v = 0;
	int32_t b = 0;
	double x = 0;
	const char *o = "";
	switch (f->kind) {
	case ENGI_FK_S:
	case ENGI_FK_M:
		return get_str(t, res, f->col, p, f->size, required ? NULL : f->dflt, err);
	case ENGI_FK_O:
		TRY(get_text(t, f->col, required ? NULL : f->dflt, &o, err));
		TRY(check_outcome(t, o, err));
		snprintf(p, f->size, "%s", o);
		return 0;
	case ENGI_FK_I:
	case ENGI_FK_L:
		TRY(get_int(t, f->col, 0, f->kind == ENGI_FK_I ? INT32_MAX : INT64_MAX,
			    f->dflt ? strtoll(f->dflt, NULL, 10) : 0, required, &v, err));
		if (f->kind == ENGI_FK_I) {
			b = (int32_t)v;
			memcpy(p, &b, sizeof b);
		} else {
			memcpy(p, &v, sizeof v);
		}
		return 0;
	case ENGI_FK_B:
		b = f->dflt ? (int32_t)strtol(f->dflt, NULL, 10) : 0;
		if (f->mode == ENGI_CSV_like)
			memcpy(&b, (char *)e + f->like, sizeof b);
		TRY(get_bool(t, f->col, b, required, &b, err));
		memcpy(p, &b, sizeof b);
		return 0;
	default:
		TRY(get_num(t, f->col, f->dflt ? strtod(f->dflt, NULL) : 0.0, required, &x, err));
		memcpy(p, &x, sizeof x);
		return 0;
	}
}

static int episode_row(struct reader *r, const struct table *t, struct engi_error *err)
{
	struct engi_results *res = r->res;
	struct engi_res_episode e;
	memset(&e, 0, sizeof e);
	const char *ck = NULL;
	for (size_t i = 0; i < sizeof episode_cols / sizeof *episode_cols; i++) {
		TRY(episode_col(t, res, &episode_cols[i], &e, err));
		if (episode_cols[i].kind != ENGI_FK_O)
			continue;
		/* the cell's key and outcome are read: a marker ends the row */
		TRY(check_seen(r, t, &e, &ck, err));
		TRY(note_trial(r, &e, err));
		if (is_unrun(e.outcome))
			return 0;
	}
	e.quality = e.score;
	e.attempts = 1;
	snprintf(e.cell, sizeof e.cell, "csv%013zx", res->nepisodes);

	/* the task and its metadata */
	size_t ti = engi_strtab_get(&r->tasks, e.task_id);
	if (ti == SIZE_MAX) {
		size_t was = r->tasks_alloc;
		TRY(grow_one((void **)&res->tasks, res->ntasks, &r->tasks_alloc, sizeof *res->tasks,
			     err));
		/* the keys live in res->tasks: rebuild when it grew */
		if (r->tasks_alloc != was) {
			engi_strtab_release(&r->tasks);
			for (size_t i = 0; i < res->ntasks; i++)
				TRY(engi_strtab_put(&r->tasks, res->tasks[i].id, i, err));
		}
		struct place *nl = engi_reallocarray(r->task_at, r->tasks_alloc, sizeof *nl);
		if (!nl)
			RAISE(err, ENGI_ENOMEM, "out of memory reading tasks");
		r->task_at = nl;
		struct engi_res_task *task = &res->tasks[res->ntasks];
		memset(task, 0, sizeof *task);
		memcpy(task->id, e.task_id, sizeof task->id);
		TRY(get_str(t, res, C_DOMAIN, task->domain, sizeof task->domain, "", err));
		TRY(get_str(t, res, C_TYPE, task->type, sizeof task->type, "", err));
		TRY(get_str(t, res, C_INTERFACE, task->interface, sizeof task->interface, "", err));
		TRY(get_str(t, res, C_SOFTWARE, task->software, sizeof task->software, "", err));
		TRY(get_str(t, res, C_TITLE, task->title, sizeof task->title, "", err));
		TRY(get_str(t, res, C_SCORING, task->scoring, sizeof task->scoring, "binary", err));
		r->task_at[res->ntasks] = (struct place){r->file, t->c.rec_line};
		TRY(engi_strtab_put(&r->tasks, task->id, res->ntasks, err));
		res->ntasks++;
	} else {
		const struct engi_res_task *task = &res->tasks[ti];
		struct place l = r->task_at[ti];
		const char *id = engi_res_str(res, task->id);
		TRY(meta_agree(r, t, C_DOMAIN, task->domain, l, id, err));
		TRY(meta_agree(r, t, C_TYPE, task->type, l, id, err));
		TRY(meta_agree(r, t, C_INTERFACE, task->interface, l, id, err));
		TRY(meta_agree(r, t, C_SOFTWARE, task->software, l, id, err));
	}
	for (size_t j = 0; j < t->nextra; j++)
		TRY(extra_meta(r, t, t->extra[j], e.task_id, err));
	if (engi_strtab_get(&r->models, e.model) == SIZE_MAX) {
		size_t was = r->models_alloc;
		TRY(grow_one((void **)&res->models, res->nmodels, &r->models_alloc,
			     sizeof *res->models, err));
		if (r->models_alloc != was) {
			engi_strtab_release(&r->models);
			for (size_t i = 0; i < res->nmodels; i++)
				TRY(engi_strtab_put(&r->models, res->models[i].name, i, err));
		}
		struct engi_res_model *m = &res->models[res->nmodels];
		memset(m, 0, sizeof *m);
		memcpy(m->name, e.model, sizeof e.model);
		TRY(engi_strtab_put(&r->models, m->name, res->nmodels, err));
		res->nmodels++;
	}
	if (engi_strtab_get(&r->conds, e.condition) == SIZE_MAX) {
		size_t was = r->conds_alloc;
		TRY(grow_one((void **)&res->conditions, res->nconditions, &r->conds_alloc,
			     sizeof *res->conditions, err));
		if (r->conds_alloc != was) {
			engi_strtab_release(&r->conds);
			for (size_t i = 0; i < res->nconditions; i++)
				TRY(engi_strtab_put(&r->conds, res->conditions[i].name, i, err));
		}
		struct engi_res_condition *k = &res->conditions[res->nconditions];
		memset(k, 0, sizeof *k);
		memcpy(k->name, e.condition, sizeof e.condition);
		TRY(engi_strtab_put(&r->conds, k->name, res->nconditions, err));
		res->nconditions++;
	}

	/* the first row of a repeated key keeps the assertions */
	if (engi_strtab_get(&r->cells, ck) == SIZE_MAX)
		TRY(engi_strtab_put(&r->cells, ck, res->nepisodes, err));

	TRY(grow_one((void **)&res->episodes, res->nepisodes, &r->eps_alloc, sizeof *res->episodes,
		     err));
	res->episodes[res->nepisodes++] = e;
	return 0;
}

#define REQ_no(name)
#define REQ_req(name) C_##name,
#define REQ_opt(name)
#define REQ_like(name)
#define EPISODE_REQ(name, kind, rec, row, since, csv, dflt) REQ_##csv(name)
static const int episode_required[] = {ENGI_EPISODE_FIELDS(EPISODE_REQ)};
#undef EPISODE_REQ
static const int assertion_required[] = {C_task_id,   C_model, C_trial,
					 C_ASSERTION, C_STAGE, C_STATE};

static int read_episodes(struct reader *r, const char *path, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_CSV_FILE_CAP);
	struct table t;
	memset(&t, 0, sizeof t);
	int rc = slurp(path, &b, err);
	if (rc == 0)
		rc = table_open(&t, path, &b, episode_required,
				sizeof episode_required / sizeof *episode_required, err);
	size_t width = t.c.nfields;
	while (rc == 0) {
		int got = next_record(&t.c, err);
		if (got <= 0) {
			rc = got;
			break;
		}
		rc = check_width(&t, width, err);
		if (rc == 0)
			rc = episode_row(r, &t, err);
	}

	engi_free(t.c.field);
	engi_free(t.hdr);
	engi_dynbuf_release(&b);
	return rc;
}

static int assertion_row(struct reader *r, const struct table *t, struct engi_error *err)
{
	struct engi_results *res = r->res;
	char task[ENGI_TASK_ID_STR], model[64], cond[64];
	int64_t trial, req;
	TRY(get_str(t, res, C_task_id, task, sizeof task, NULL, err));
	TRY(get_str(t, res, C_model, model, sizeof model, NULL, err));
	TRY(get_str(t, res, C_condition, cond, sizeof cond, "base", err));
	TRY(get_int(t, C_trial, 0, INT32_MAX, 0, 1, &trial, err));
	char *k = cell_key(task, model, cond, trial);
	if (!k)
		RAISE(err, ENGI_ENOMEM, "out of memory reading assertions");
	size_t ei = engi_strtab_get(&r->cells, k);
	engi_free(k);
	if (ei == SIZE_MAX)
		RAISE(err, ENGI_EPARSE,
		      "%s: line %zu: no episode task '%s', model '%s', "
		      "condition '%s', trial %" PRId64 " in the episodes file",
		      t->c.path, t->c.rec_line, engi_res_str(res, task), engi_res_str(res, model),
		      engi_res_str(res, cond), trial);
	struct engi_res_assertion a;
	memset(&a, 0, sizeof a);
	memcpy(a.cell, res->episodes[ei].cell, sizeof a.cell);
	const char *state = "";
	TRY(get_str(t, res, C_ASSERTION, a.name, sizeof a.name, NULL, err));
	TRY(get_str(t, res, C_STAGE, a.stage, sizeof a.stage, NULL, err));
	TRY(get_text(t, C_STATE, NULL, &state, err));
	if (strcmp(state, "pass") && strcmp(state, "fail") && strcmp(state, "inapplicable") &&
	    strcmp(state, "unavailable"))
		return bad(t, C_STATE, "expected pass, fail, inapplicable or unavailable", state,
			   err);
	snprintf(a.state, sizeof a.state, "%s", state);
	TRY(get_int(t, C_REQUIRED, 0, 1, 1, 0, &req, err));
	a.required = (int32_t)req;
	a.value = NAN;
	a.expected = NAN;
	TRY(grow_one((void **)&res->assertions, res->nassertions, &r->as_alloc,
		     sizeof *res->assertions, err));
	res->assertions[res->nassertions++] = a;
	return 0;
}

static int read_assertions(struct reader *r, const char *path, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_CSV_FILE_CAP);
	struct table t;
	memset(&t, 0, sizeof t);
	int rc = slurp(path, &b, err);
	if (rc == 0)
		rc = table_open(&t, path, &b, assertion_required,
				sizeof assertion_required / sizeof *assertion_required, err);
	size_t width = t.c.nfields;
	while (rc == 0) {
		int got = next_record(&t.c, err);
		if (got <= 0) {
			rc = got;
			break;
		}
		rc = check_width(&t, width, err);
		if (rc == 0)
			rc = assertion_row(r, &t, err);
	}
	engi_free(t.c.field);
	engi_free(t.hdr);
	engi_dynbuf_release(&b);
	return rc;
}

/* ---- one order whatever the order of the rows ---- */

struct ep_key {
	const char *task, *model, *cond;
	int32_t trial;
	size_t pos;
};

static int cmp_ep_key(const void *x, const void *y)
{
	const struct ep_key *a = x, *b = y;
	int c = strcmp(a->task, b->task);
	if (!c)
		c = strcmp(a->model, b->model);
	if (!c)
		c = strcmp(a->cond, b->cond);
	if (!c && a->trial != b->trial)
		c = a->trial < b->trial ? -1 : 1;
	if (!c)
		c = (a->pos > b->pos) - (a->pos < b->pos);
	return c;
}

/* Sorts n rows of size bytes by the text of the field at offset. */
static int sort_by_name(const struct engi_results *res, void *rows, size_t n, size_t size,
			size_t offset, struct engi_error *err)
{
	if (n < 2)
		return 0;
	struct ep_key *k = engi_reallocarray(NULL, n, sizeof *k);
	char *copy = engi_reallocarray(NULL, n, size);
	if (!k || !copy) {
		engi_free(k);
		engi_free(copy);
		RAISE(err, ENGI_ENOMEM, "out of memory sorting results");
	}
	memcpy(copy, rows, n * size);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct ep_key){engi_res_str(res, copy + i * size + offset), "", "", 0, i};
	qsort(k, n, sizeof *k, cmp_ep_key);
	for (size_t i = 0; i < n; i++)
		memcpy((char *)rows + i * size, copy + k[i].pos * size, size);
	engi_free(k);
	engi_free(copy);
	return 0;
}

/*
 * A CSV file's rows come in no meaningful order: tasks, models and
 * conditions are sorted by name and the episodes by (task, model,
 * condition, trial), rows of one cell kept in file order, so that the same
 * rows in any order give the same results.
 */
static int canonical_order(struct engi_results *res, struct engi_error *err)
{
	TRY(sort_by_name(res, res->tasks, res->ntasks, sizeof *res->tasks,
			 offsetof(struct engi_res_task, id), err));
	TRY(sort_by_name(res, res->models, res->nmodels, sizeof *res->models,
			 offsetof(struct engi_res_model, name), err));
	TRY(sort_by_name(res, res->conditions, res->nconditions, sizeof *res->conditions,
			 offsetof(struct engi_res_condition, name), err));
	size_t n = res->nepisodes;
	if (n < 2)
		return 0;
	struct ep_key *k = engi_reallocarray(NULL, n, sizeof *k);
	struct engi_res_episode *copy = engi_reallocarray(NULL, n, sizeof *copy);
	if (!k || !copy) {
		engi_free(k);
		engi_free(copy);
		RAISE(err, ENGI_ENOMEM, "out of memory sorting episodes");
	}
	memcpy(copy, res->episodes, n * sizeof *copy);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct ep_key){engi_res_str(res, copy[i].task_id),
				       engi_res_str(res, copy[i].model),
				       engi_res_str(res, copy[i].condition), copy[i].trial, i};
	qsort(k, n, sizeof *k, cmp_ep_key);
	for (size_t i = 0; i < n; i++)
		res->episodes[i] = copy[k[i].pos];
	engi_free(k);
	engi_free(copy);
	return 0;
}

int engi_results_read_csv(const char *episodes_csv, const char *assertions_csv,
			  struct engi_results *res, struct engi_error *err)
{
	return engi_results_read_csvs(&episodes_csv, 1, assertions_csv, res, err);
}

int engi_results_read_csvs(const char *const *episodes_csv, size_t n, const char *assertions_csv,
			   struct engi_results *res, struct engi_error *err)
{
	engi_results_init(res);
	struct reader r;
	memset(&r, 0, sizeof r);
	r.res = res;
	r.paths = episodes_csv;
	int rc = 0;
	for (r.file = 0; r.file < n && rc == 0; r.file++)
		rc = read_episodes(&r, episodes_csv[r.file], err);
	/* every (task, model, condition) of the set plans the set's span of
	 * trial numbers: a trial that one lacks is a missing episode */
	if (r.ntrials)
		res->planned_cells =
		    (uint64_t)r.groups.n * (uint64_t)((int64_t)r.trial_hi - r.trial_lo + 1);
	r.file = SIZE_MAX;
	if (rc == 0 && assertions_csv)
		rc = read_assertions(&r, assertions_csv, err);
	if (rc == 0)
		rc = canonical_order(res, err);
	reader_release(&r);
	if (rc < 0)
		engi_results_release(res);
	return rc;
}

/* ---- merging ---- */

static int append(void **dst, size_t *ndst, const void *src, size_t nsrc, size_t size,
		  struct engi_error *err)
{
	if (nsrc == 0)
		return 0;
	if (*ndst > SIZE_MAX - nsrc)
		RAISE(err, ENGI_EINVALID, "merged results are too large");
	void *p = engi_reallocarray(*dst, *ndst + nsrc, size);
	if (!p)
		RAISE(err, ENGI_ENOMEM, "out of memory merging results");
	memcpy((char *)p + *ndst * size, src, nsrc * size);
	*dst = p;
	*ndst += nsrc;
	return 0;
}

/* The text fields of a row type: offset and size. */
struct text_field {
	size_t offset, size;
};

/* clang-format off */
#define TF(st, m) { offsetof(st, m), sizeof(((st *)0)->m) }
/* clang-format on */
static const struct text_field task_text[] = {
    TF(struct engi_res_task, id),	 TF(struct engi_res_task, title),
    TF(struct engi_res_task, domain),	 TF(struct engi_res_task, type),
    TF(struct engi_res_task, interface), TF(struct engi_res_task, software),
    TF(struct engi_res_task, hash),	 TF(struct engi_res_task, scoring),
};
static const struct text_field model_text[] = {
    TF(struct engi_res_model, name),
    TF(struct engi_res_model, agent),
    TF(struct engi_res_model, settings),
};
static const struct text_field condition_text[] = {
    TF(struct engi_res_condition, name),
    TF(struct engi_res_condition, settings),
};
#define TEXT_S(name) TF(struct engi_res_episode, name),
#define TEXT_M(name) TF(struct engi_res_episode, name),
#define TEXT_O(name) TF(struct engi_res_episode, name),
#define TEXT_o(name) TF(struct engi_res_episode, name),
#define TEXT_I(name)
#define TEXT_L(name)
#define TEXT_B(name)
#define TEXT_D(name)
#define EPISODE_TEXT(name, kind, rec, row, since, csv, dflt) TEXT_##kind(name)
static const struct text_field episode_text[] = {ENGI_EPISODE_FIELDS(EPISODE_TEXT)};
#undef EPISODE_TEXT
static const struct text_field assertion_text[] = {
    TF(struct engi_res_assertion, cell),   TF(struct engi_res_assertion, name),
    TF(struct engi_res_assertion, stage),  TF(struct engi_res_assertion, state),
    TF(struct engi_res_assertion, detail),
};
static const struct text_field metric_text[] = {
    TF(struct engi_res_metric, cell),
    TF(struct engi_res_metric, name),
};
static const struct text_field artifact_text[] = {
    TF(struct engi_res_artifact, cell),
    TF(struct engi_res_artifact, path),
    TF(struct engi_res_artifact, sha256),
    TF(struct engi_res_artifact, note),
};
static const struct text_field meta_text[] = {
    TF(struct engi_res_task_meta, task_id),
    TF(struct engi_res_task_meta, key),
    TF(struct engi_res_task_meta, value),
    TF(struct engi_res_task_meta, conflict),
};
#undef TF
#define NTF(a) (sizeof(a) / sizeof(*(a)))

/* Rows [from, n) of dst came from src: their aliases name src's texts,
 * which become dst's. */
static int rebase(struct engi_results *dst, const struct engi_results *src, void *rows, size_t from,
		  size_t n, size_t size, const struct text_field *f, size_t nf,
		  struct engi_error *err)
{
	for (size_t i = from; i < n; i++) {
		for (size_t k = 0; k < nf; k++) {
			char *field = (char *)rows + i * size + f[k].offset;
			if (field[0] == ENGI_RES_LONG)
				TRY(engi_res_set(dst, field, f[k].size, engi_res_str(src, field),
						 err));
		}
	}
	return 0;
}

static int append_rows(struct engi_results *dst, const struct engi_results *src, void **rows,
		       size_t *nrows, const void *from, size_t nfrom, size_t size,
		       const struct text_field *f, size_t nf, struct engi_error *err)
{
	size_t was = *nrows;
	TRY(append(rows, nrows, from, nfrom, size, err));
	return rebase(dst, src, *rows, was, *nrows, size, f, nf, err);
}

/* Appends the rows of src whose name (at offset) dst lacks. */
static int append_unique(struct engi_results *dst, const struct engi_results *src, void **rows,
			 size_t *nrows, const void *from, size_t nfrom, size_t size, size_t offset,
			 const struct text_field *f, size_t nf, struct engi_error *err)
{
	for (size_t i = 0; i < nfrom; i++) {
		const char *row = (const char *)from + i * size;
		const char *name = engi_res_str(src, row + offset);
		int found = 0;
		for (size_t j = 0; j < *nrows && !found; j++)
			found = !strcmp(engi_res_str(dst, (const char *)*rows + j * size + offset),
					name);
		if (!found)
			TRY(append_rows(dst, src, rows, nrows, row, 1, size, f, nf, err));
	}
	return 0;
}

int engi_results_merge(struct engi_results *dst, const struct engi_results *src,
		       struct engi_error *err)
{
	TRY(append_unique(dst, src, (void **)&dst->tasks, &dst->ntasks, src->tasks, src->ntasks,
			  sizeof *src->tasks, offsetof(struct engi_res_task, id), task_text,
			  NTF(task_text), err));
	TRY(append_unique(dst, src, (void **)&dst->models, &dst->nmodels, src->models, src->nmodels,
			  sizeof *src->models, offsetof(struct engi_res_model, name), model_text,
			  NTF(model_text), err));
	TRY(append_unique(dst, src, (void **)&dst->conditions, &dst->nconditions, src->conditions,
			  src->nconditions, sizeof *src->conditions,
			  offsetof(struct engi_res_condition, name), condition_text,
			  NTF(condition_text), err));
	TRY(append_rows(dst, src, (void **)&dst->episodes, &dst->nepisodes, src->episodes,
			src->nepisodes, sizeof *src->episodes, episode_text, NTF(episode_text),
			err));
	TRY(append_rows(dst, src, (void **)&dst->assertions, &dst->nassertions, src->assertions,
			src->nassertions, sizeof *src->assertions, assertion_text,
			NTF(assertion_text), err));
	TRY(append_rows(dst, src, (void **)&dst->metrics, &dst->nmetrics, src->metrics,
			src->nmetrics, sizeof *src->metrics, metric_text, NTF(metric_text), err));
	TRY(append_rows(dst, src, (void **)&dst->artifacts, &dst->nartifacts, src->artifacts,
			src->nartifacts, sizeof *src->artifacts, artifact_text, NTF(artifact_text),
			err));
	TRY(append_rows(dst, src, (void **)&dst->task_meta, &dst->ntask_meta, src->task_meta,
			src->ntask_meta, sizeof *src->task_meta, meta_text, NTF(meta_text), err));
	dst->planned_cells += src->planned_cells;
	return 0;
}
