#include "engi/compare.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include "strtab.h"
#include "textout.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* most bytes one rendered output may take */
#define COMPARE_OUTPUT_CAP ((size_t)64 << 20)

void engi_compare_opts_init(struct engi_compare_opts *o)
{
	engi_boot_opts_init(&o->boot);
	o->axis = ENGI_COMPARE_MODELS;
	o->baseline = NULL;
	o->pairs = NULL;
	o->npairs = 0;
}

void engi_compare_data_init(struct engi_compare_data *d)
{
	memset(d, 0, sizeof *d);
	engi_compare_opts_init(&d->opts);
	d->baseline = "";
}

void engi_compare_data_release(struct engi_compare_data *d)
{
	engi_free(d->rows);
	engi_strpool_free(&d->names);
	engi_compare_data_init(d);
}

static int is_scored(const char *outcome)
{
	return engi_outcome_scored(engi_outcome_find(outcome, SIZE_MAX));
}

/* Names (the results' whole texts) in order of first appearance. */
struct names {
	const char **v;
	size_t n, alloc;
	struct strtab ix;
};

static void names_release(struct names *s)
{
	engi_free(s->v);
	engi_strtab_release(&s->ix);
	memset(s, 0, sizeof *s);
}

/* name must outlive the table */
static int names_add(struct names *s, const char *name, size_t *id, struct engi_error *err)
{
	size_t at = engi_strtab_get(&s->ix, name);
	if (at != SIZE_MAX) {
		if (id)
			*id = at;
		return 0;
	}
	if (s->n == s->alloc) {
		size_t na = s->alloc ? 2 * s->alloc : 16;
		const char **nv = engi_reallocarray(s->v, na, sizeof *nv);
		if (!nv)
			RAISE(err, ENGI_ENOMEM, "out of memory indexing names");
		s->v = nv;
		s->alloc = na;
	}
	s->v[s->n] = name;
	TRY(engi_strtab_put(&s->ix, name, s->n, err));
	if (id)
		*id = s->n;
	s->n++;
	return 0;
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Renumbers the names in their own order. */
static int names_sort(struct names *s, struct engi_error *err)
{
	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, cmp_name);
	engi_strtab_release(&s->ix);
	for (size_t i = 0; i < s->n; i++)
		TRY(engi_strtab_put(&s->ix, s->v[i], i, err));
	return 0;
}

/* One scored episode's value in its cell (arm x task), summed in trial
 * order whatever the order of the rows. */
struct ep_val {
	size_t at, pos;
	int32_t trial;
	double v;
};

static int cmp_ep_val(const void *x, const void *y)
{
	const struct ep_val *a = x, *b = y;
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	if (a->trial != b->trial)
		return a->trial < b->trial ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

struct cmp_ctx {
	struct names tasks, models, conds;
	double *sum; /* arm x task, arm = model * nconds + cond */
	size_t *cnt;
	double *xa, *xb, *xd;
	/* one group's shared resample: compared arms x tasks, and their draws */
	double *x;
	unsigned char *present;
	struct engi_ci *ci;
	double *draws, *dd;
};

static void ctx_release(struct cmp_ctx *c)
{
	names_release(&c->tasks);
	names_release(&c->models);
	names_release(&c->conds);
	engi_free(c->sum);
	engi_free(c->cnt);
	engi_free(c->xa);
	engi_free(c->xb);
	engi_free(c->xd);
	engi_free(c->x);
	engi_free(c->present);
	engi_free(c->ci);
	engi_free(c->draws);
	engi_free(c->dd);
}

static int tally(struct cmp_ctx *c, struct engi_compare_data *d, const struct engi_results *res,
		 struct engi_error *err)
{
	for (size_t i = 0; i < res->nmodels; i++)
		TRY(names_add(&c->models, engi_res_str(res, res->models[i].name), NULL, err));
	for (size_t i = 0; i < res->nconditions; i++)
		TRY(names_add(&c->conds, engi_res_str(res, res->conditions[i].name), NULL, err));
	for (size_t i = 0; i < res->nepisodes; i++) {
		const struct engi_res_episode *e = &res->episodes[i];
		TRY(names_add(&c->tasks, engi_res_str(res, e->task_id), NULL, err));
		TRY(names_add(&c->models, engi_res_str(res, e->model), NULL, err));
		TRY(names_add(&c->conds, engi_res_str(res, e->condition), NULL, err));
	}
	/* tasks in the order of their ids, whatever the order of the rows */
	TRY(names_sort(&c->tasks, err));
	size_t nt = c->tasks.n, narms = c->models.n * c->conds.n;
	if (narms && nt > SIZE_MAX / sizeof(double) / narms)
		RAISE(err, ENGI_EINVALID, "%zu tasks x %zu arms is too large", nt, narms);
	/* EngiScore: the quality on optimization tasks, else the success */
	unsigned char *optq = engi_calloc(nt + 1, 1);
	struct ep_val *val = engi_reallocarray(NULL, res->nepisodes + 1, sizeof *val);
	if (!optq || !val) {
		engi_free(optq);
		engi_free(val);
		RAISE(err, ENGI_ENOMEM, "out of memory indexing tasks");
	}
	for (size_t i = 0; i < res->ntasks; i++) {
		size_t t = engi_strtab_get(&c->tasks.ix, engi_res_str(res, res->tasks[i].id));
		if (t != SIZE_MAX)
			optq[t] = !strcmp(engi_res_str(res, res->tasks[i].scoring), "optimization");
	}
	c->sum = engi_calloc(narms * nt + 1, sizeof *c->sum);
	c->cnt = engi_calloc(narms * nt + 1, sizeof *c->cnt);
	c->xa = engi_reallocarray(NULL, nt + 1, sizeof *c->xa);
	c->xb = engi_reallocarray(NULL, nt + 1, sizeof *c->xb);
	c->xd = engi_reallocarray(NULL, nt + 1, sizeof *c->xd);
	if (!c->sum || !c->cnt || !c->xa || !c->xb || !c->xd) {
		engi_free(optq);
		engi_free(val);
		RAISE(err, ENGI_ENOMEM, "out of memory tallying %zu episodes", res->nepisodes);
	}
	int rc = 0;
	size_t nval = 0;
	for (size_t i = 0; i < res->nepisodes; i++) {
		const struct engi_res_episode *e = &res->episodes[i];
		char outcome[sizeof e->outcome + 1];
		size_t n = strnlen(e->outcome, sizeof e->outcome);
		memcpy(outcome, e->outcome, n);
		outcome[n] = '\0';
		d->recorded++;
		if (!is_scored(outcome)) {
			d->unscored++;
			continue;
		}
		if (!isfinite(e->score)) {
			rc = engi_raise(err, ENGI_EINVALID,
					"episode %zu (cell '%.16s') has a score "
					"that is not finite",
					i, e->cell);
			break;
		}
		size_t t = engi_strtab_get(&c->tasks.ix, engi_res_str(res, e->task_id));
		size_t m = engi_strtab_get(&c->models.ix, engi_res_str(res, e->model));
		size_t k = engi_strtab_get(&c->conds.ix, engi_res_str(res, e->condition));
		val[nval++] = (struct ep_val){(m * c->conds.n + k) * nt + t, i, e->trial,
					      optq[t] ? e->score : (e->success != 0 ? 1.0 : 0.0)};
		d->scored++;
	}
	if (nval)
		qsort(val, nval, sizeof *val, cmp_ep_val);
	for (size_t i = 0; i < nval; i++) {
		c->sum[val[i].at] += val[i].v;
		c->cnt[val[i].at]++;
	}
	engi_free(optq);
	engi_free(val);
	TRY(rc);
	d->ntasks = nt;
	d->nmodels = c->models.n;
	d->nconditions = c->conds.n;
	d->planned = res->planned_cells;
	d->missing = res->planned_cells > d->recorded ? res->planned_cells - d->recorded : 0;
	return 0;
}

/*
 * da, db: the two arms' draws of the group's shared resample. When both arms
 * have the same tasks, their difference in each draw is the mean paired
 * difference over that draw's tasks: the paired bootstrap, coherent across
 * every pair of the group. Otherwise the pair is resampled on its own over
 * the tasks both have.
 */
static int compare_arms(struct cmp_ctx *c, const struct engi_compare_opts *o, size_t arm_a,
			size_t arm_b, const double *da, const double *db,
			struct engi_compare_row *r, struct engi_error *err)
{
	size_t nt = c->tasks.n, n = 0;
	const size_t *ca = c->cnt + arm_a * nt, *cb = c->cnt + arm_b * nt;
	const double *sa = c->sum + arm_a * nt, *sb = c->sum + arm_b * nt;
	double suma = 0.0, sumb = 0.0;
	for (size_t t = 0; t < nt; t++) {
		if (ca[t] && cb[t]) {
			c->xa[n] = sa[t] / (double)ca[t];
			c->xb[n] = sb[t] / (double)cb[t];
			suma += c->xa[n];
			sumb += c->xb[n];
			n++;
		} else if (ca[t]) {
			r->a_only++;
		} else if (cb[t]) {
			r->b_only++;
		}
	}
	r->tasks = n;
	r->mean_a = n ? 100.0 * suma / (double)n : NAN;
	r->mean_b = n ? 100.0 * sumb / (double)n : NAN;
	if (n && !r->a_only && !r->b_only) {
		for (size_t i = 0; i < n; i++)
			c->xd[i] = c->xa[i] - c->xb[i];
		for (size_t k = 0; k < o->boot.draws; k++)
			c->dd[k] = da[k] - db[k];
		TRY(engi_ci_from_draws(c->xd, n, c->dd, o->boot.draws, &o->boot, &r->lift, err));
	} else {
		TRY(engi_paired_boot(c->xa, c->xb, n, &o->boot, &r->lift, err));
	}
	r->lift.mean *= 100.0;
	r->lift.lo *= 100.0;
	r->lift.hi *= 100.0;
	r->p_holm = NAN;
	if (n == 0) {
		r->tested = 0;
		memset(&r->test, 0, sizeof r->test);
		r->test.p = NAN;
		r->test.mean_diff = NAN;
		return 0;
	}
	TRY(engi_signflip_test(c->xa, c->xb, n, o->boot.seed, o->boot.draws, &r->test, err));
	r->tested = 1;
	return 0;
}

static int push_row(struct engi_compare_data *d, size_t *alloc, struct engi_compare_row **out,
		    struct engi_error *err)
{
	if (d->nrows == *alloc) {
		size_t na = *alloc ? 2 * *alloc : 16;
		struct engi_compare_row *nr = engi_reallocarray(d->rows, na, sizeof *nr);
		if (!nr)
			RAISE(err, ENGI_ENOMEM, "out of memory for comparison rows");
		d->rows = nr;
		*alloc = na;
	}
	*out = &d->rows[d->nrows++];
	memset(*out, 0, sizeof **out);
	return 0;
}

/* One group of rows: the arm held fixed and the compared arms. */
struct group {
	struct cmp_ctx *c;
	const struct engi_compare_opts *o;
	struct engi_compare_data *d;
	size_t *alloc;
	const char *within;
	const struct names *cmp;
	size_t f;
	int models_axis;
};

/* The row "compared arm i against j" of the group (grid_axis: the grid
 * axis they differ in, or NULL). */
static int add_row(const struct group *g, size_t i, size_t j, const char *grid_axis,
		   struct engi_error *err)
{
	const struct cmp_ctx *c = g->c;
	size_t nc = c->conds.n, draws = g->o->boot.draws;
	size_t ai = g->models_axis ? i * nc + g->f : g->f * nc + i;
	size_t aj = g->models_axis ? j * nc + g->f : g->f * nc + j;
	struct engi_compare_row *r = NULL;
	TRY(push_row(g->d, g->alloc, &r, err));
	struct engi_strpool **pool = &g->d->names;
	TRY(engi_strpool_add(pool, g->within, &r->within, NULL, err));
	TRY(engi_strpool_add(pool, g->cmp->v[i], &r->a, NULL, err));
	TRY(engi_strpool_add(pool, g->cmp->v[j], &r->b, NULL, err));
	TRY(engi_strpool_add(pool, grid_axis ? grid_axis : "", &r->grid_axis, NULL, err));
	return compare_arms(g->c, g->o, ai, aj, c->draws + i * draws, c->draws + j * draws, r, err);
}

static int unknown_baseline(const struct names *s, const char *what, const char *name,
			    struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, 4096);
	for (size_t i = 0; i < s->n; i++)
		engi_dynbuf_printf(&b, "%s'%s'", i ? ", " : "", s->v[i]);
	int rc =
	    engi_raise(err, ENGI_ENOTFOUND, "baseline %s '%s' is not in the results; known: %s",
		       what, name, b.len ? b.buf : "(none)");
	engi_dynbuf_release(&b);
	return rc;
}

int engi_compare_compute(struct engi_compare_data *d, const struct engi_results *res,
			 const struct engi_compare_opts *o, struct engi_error *err)
{
	TRY(engi_boot_opts_check(&o->boot, err));
	if (o->axis != ENGI_COMPARE_MODELS && o->axis != ENGI_COMPARE_CONDITIONS &&
	    o->axis != ENGI_COMPARE_GRID)
		RAISE(err, ENGI_EINVALID, "comparison axis %d is unknown", o->axis);
	if (o->axis == ENGI_COMPARE_GRID && (o->baseline || o->npairs == 0))
		RAISE(err, ENGI_EINVALID,
		      "a grid comparison takes its declared pairs and no baseline");
	d->opts = *o;
	d->opts.baseline = NULL;
	d->opts.pairs = NULL;
	if (o->baseline)
		TRY(engi_strpool_add(&d->names, o->baseline, &d->baseline, NULL, err));

	struct cmp_ctx c;
	memset(&c, 0, sizeof c);
	int rc = tally(&c, d, res, err);
	int models_axis = o->axis == ENGI_COMPARE_MODELS;
	/* the compared names and the fixed ones */
	const struct names *cmp = models_axis ? &c.models : &c.conds;
	const struct names *fix = models_axis ? &c.conds : &c.models;
	size_t base = SIZE_MAX;
	if (rc == 0 && o->baseline) {
		base = engi_strtab_get(&cmp->ix, d->baseline);
		if (base == SIZE_MAX)
			rc = unknown_baseline(cmp, models_axis ? "model" : "condition", d->baseline,
					      err);
	}
	size_t alloc = 0, nt = c.tasks.n, draws = o->boot.draws;
	if (rc == 0) {
		c.x = engi_reallocarray(NULL, cmp->n * nt + 1, sizeof *c.x);
		c.present = engi_calloc(cmp->n * nt + 1, 1);
		c.ci = engi_reallocarray(NULL, cmp->n + 1, sizeof *c.ci);
		c.draws = engi_reallocarray(NULL, cmp->n * draws + 1, sizeof *c.draws);
		c.dd = engi_reallocarray(NULL, draws + 1, sizeof *c.dd);
		if (!c.x || !c.present || !c.ci || !c.draws || !c.dd)
			rc = engi_raise(err, ENGI_ENOMEM,
					"out of memory for a bootstrap of %zu "
					"arms x %zu draws",
					cmp->n, draws);
	}
	/* the grid's pairs, as indices of compared arms */
	size_t *pa = NULL, *pb = NULL;
	if (rc == 0 && o->axis == ENGI_COMPARE_GRID) {
		pa = engi_reallocarray(NULL, o->npairs, sizeof *pa);
		pb = engi_reallocarray(NULL, o->npairs, sizeof *pb);
		if (!pa || !pb)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		for (size_t k = 0; rc == 0 && k < o->npairs; k++) {
			pa[k] = engi_strtab_get(&cmp->ix, o->pairs[k].a);
			pb[k] = engi_strtab_get(&cmp->ix, o->pairs[k].b);
			if (pa[k] == SIZE_MAX || pb[k] == SIZE_MAX)
				rc = engi_raise(err, ENGI_ENOTFOUND,
						"the grid's condition '%s' is not in the results",
						pa[k] == SIZE_MAX ? o->pairs[k].a : o->pairs[k].b);
		}
	}
	/* one arm alone has nothing to be compared with */
	for (size_t f = 0; rc == 0 && cmp->n >= 2 && f < fix->n; f++) {
		for (size_t i = 0; i < cmp->n; i++) {
			size_t arm = models_axis ? i * c.conds.n + f : f * c.conds.n + i;
			for (size_t t = 0; t < nt; t++) {
				size_t n = c.cnt[arm * nt + t];
				c.present[i * nt + t] = n != 0;
				c.x[i * nt + t] = n ? c.sum[arm * nt + t] / (double)n : 0.0;
			}
		}
		rc = engi_boot_shared(c.x, c.present, cmp->n, nt, &o->boot, c.ci, c.draws, err);
		struct group g = {&c, o, d, &alloc, fix->v[f], cmp, f, models_axis};
		for (size_t k = 0; rc == 0 && pa && k < o->npairs; k++)
			rc = add_row(&g, pa[k], pb[k], o->pairs[k].axis, err);
		for (size_t i = 0; rc == 0 && !pa && i < cmp->n; i++) {
			for (size_t j = 0; rc == 0 && j < cmp->n; j++) {
				if (base != SIZE_MAX ? (j != base || i == base) : j <= i)
					continue;
				rc = add_row(&g, i, j, NULL, err);
			}
		}
	}
	ctx_release(&c);
	engi_free(pa);
	engi_free(pb);
	if (rc < 0)
		return rc;

	/* Holm over the tested rows of each within (rows of one within are
	 * consecutive) */
	double *p = engi_reallocarray(NULL, d->nrows + 1, sizeof *p);
	if (!p)
		RAISE(err, ENGI_ENOMEM, "out of memory adjusting p-values");
	for (size_t first = 0, end; rc == 0 && first < d->nrows; first = end) {
		end = first + 1;
		while (end < d->nrows && d->rows[end].within == d->rows[first].within)
			end++;
		size_t n = 0;
		for (size_t i = first; i < end; i++)
			if (d->rows[i].tested)
				p[n++] = d->rows[i].test.p;
		rc = engi_holm(p, n, p, err);
		for (size_t i = first, k = 0; rc == 0 && i < end; i++) {
			if (!d->rows[i].tested)
				continue;
			d->rows[i].p_holm = p[k++];
			d->rows[i].family = n;
		}
		d->family += n;
		d->families += n > 0;
	}
	engi_free(p);
	return rc;
}

/* ---- rendering ---- */

static const char *axis_name(int axis)
{
	return axis == ENGI_COMPARE_MODELS ? "models"
	       : axis == ENGI_COMPARE_GRID ? "grid"
					   : "conditions";
}

static void num(struct engi_dynbuf *b, double v, int json)
{
	if (isfinite(v))
		engi_textout(b, "%.6f", v);
	else if (json)
		engi_textout(b, "null");
}

static void md_name(struct engi_dynbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_')
			engi_textout(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			engi_textout(b, " ");
		else
			engi_textout(b, "%c", *s);
	}
}

static void md_pvalue(struct engi_dynbuf *b, double p)
{
	if (!isfinite(p))
		engi_textout(b, "–");
	else if (p < 0.001)
		engi_textout(b, "%.1e", p);
	else
		engi_textout(b, "%.3f", p);
}

static void md_lift(struct engi_dynbuf *b, const struct engi_compare_row *r)
{
	if (!isfinite(r->lift.mean)) {
		engi_textout(b, "–");
		return;
	}
	engi_textout(b, "%+.1f", r->lift.mean);
	if (r->lift.flag == ENGI_CI_OK)
		engi_textout(b, " [%+.1f, %+.1f]", r->lift.lo, r->lift.hi);
	else
		engi_textout(b, " (%s)", engi_ci_flag_name(r->lift.flag));
}

static void render_markdown(struct engi_dynbuf *b, const struct engi_compare_data *d)
{
	int models_axis = d->opts.axis == ENGI_COMPARE_MODELS;
	const char *cmp = models_axis ? "model" : "condition";
	const char *fix = models_axis ? "condition" : "model";
	engi_textout(b, "## Paired comparisons of %s\n\n", axis_name(d->opts.axis));
	engi_textout(b,
		     "Episodes: %zu recorded, %zu scored, %zu not scored "
		     "(infrastructure failures and unknown outcomes)",
		     d->recorded, d->scored, d->unscored);
	if (d->planned)
		engi_textout(b, "; %" PRIu64 " planned, %" PRIu64 " missing", d->planned,
			     d->missing);
	engi_textout(b, ". %zu tasks, %zu models, %zu conditions.\n\n", d->ntasks, d->nmodels,
		     d->nconditions);
	int grid = d->opts.axis == ENGI_COMPARE_GRID;
	if (grid) {
		engi_textout(b,
			     "Family: the sweep's declared grid — each condition against the one "
			     "with that axis at its first value and every other axis the same, "
			     "within each %s",
			     fix);
	} else if (*d->baseline) {
		engi_textout(b, "Family: every %s against the baseline %s '", cmp, cmp);
		md_name(b, d->baseline);
		engi_textout(b, "' within each %s", fix);
	} else {
		engi_textout(b, "Family: every pair of %ss within each %s", cmp, fix);
	}
	engi_textout(b,
		     ", %zu comparisons, Holm-adjusted within each %s (%zu "
		     "famil%s). Lift = a − b, EngiScore ×100, "
		     "over the tasks both arms have (trials averaged within a task); "
		     "%.0f %% paired task bootstrap interval and two-sided sign-flip "
		     "test, %zu draws each, seed %" PRIu64 ".\n\n",
		     d->family, fix, d->families, d->families == 1 ? "y" : "ies",
		     100.0 * d->opts.boot.level, d->opts.boot.draws, d->opts.boot.seed);
	if (d->nrows == 0) {
		engi_textout(b, "No comparison: fewer than two %ss.\n", cmp);
		return;
	}
	engi_textout(b,
		     "| %s%s | a | b | tasks | a | b | lift [interval] | p | p (Holm) "
		     "|\n",
		     grid ? "axis | " : "", fix);
	engi_textout(b, "|%s---|---|---|---:|---:|---:|---|---:|---:|\n", grid ? "---|" : "");
	for (size_t i = 0; i < d->nrows; i++) {
		const struct engi_compare_row *r = &d->rows[i];
		engi_textout(b, "| ");
		if (grid) {
			md_name(b, r->grid_axis);
			engi_textout(b, " | ");
		}
		md_name(b, r->within);
		engi_textout(b, " | ");
		md_name(b, r->a);
		engi_textout(b, " | ");
		md_name(b, r->b);
		engi_textout(b, " | %zu", r->tasks);
		if (r->a_only || r->b_only)
			engi_textout(b, " (+%zu a only, +%zu b only)", r->a_only, r->b_only);
		engi_textout(b, " | ");
		if (isfinite(r->mean_a))
			engi_textout(b, "%.1f | %.1f", r->mean_a, r->mean_b);
		else
			engi_textout(b, "– | –");
		engi_textout(b, " | ");
		md_lift(b, r);
		engi_textout(b, " | ");
		md_pvalue(b, r->tested ? r->test.p : NAN);
		engi_textout(b, " | ");
		md_pvalue(b, r->p_holm);
		engi_textout(b, " |\n");
	}
	if (!*d->baseline)
		return;

	/* the grid: fixed arms down, compared arms across */
	engi_textout(b, "\n### Lift over '");
	md_name(b, d->baseline);
	engi_textout(b, "' (×100, p Holm-adjusted)\n\n| %s |", fix);
	size_t ncols = 0;
	for (size_t i = 0; i < d->nrows && !strcmp(d->rows[i].within, d->rows[0].within);
	     i++, ncols++) {
		engi_textout(b, " ");
		md_name(b, d->rows[i].a);
		engi_textout(b, " |");
	}
	engi_textout(b, "\n|---|");
	for (size_t k = 0; k < ncols; k++)
		engi_textout(b, "---|");
	engi_textout(b, "\n");
	for (size_t i = 0; ncols && i < d->nrows; i += ncols) {
		engi_textout(b, "| ");
		md_name(b, d->rows[i].within);
		engi_textout(b, " |");
		for (size_t k = 0; k < ncols && i + k < d->nrows; k++) {
			const struct engi_compare_row *r = &d->rows[i + k];
			engi_textout(b, " ");
			if (isfinite(r->lift.mean))
				engi_textout(b, "%+.1f", r->lift.mean);
			else
				engi_textout(b, "–");
			engi_textout(b, " (p ");
			md_pvalue(b, r->p_holm);
			engi_textout(b, ") |");
		}
		engi_textout(b, "\n");
	}
}

int engi_compare_write_markdown(const struct engi_compare_data *d, FILE *f, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, COMPARE_OUTPUT_CAP);
	render_markdown(&b, d);
	int rc = engi_textout_check(&b, "Markdown", COMPARE_OUTPUT_CAP, err);
	if (rc == 0 && b.len && fwrite(b.buf, 1, b.len, f) != b.len)
		rc = engi_raise(err, ENGI_EIO, "cannot write the comparison: %s", strerror(errno));
	engi_dynbuf_release(&b);
	return rc;
}

static void json_str(struct engi_dynbuf *b, const char *s)
{
	engi_textout(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			engi_textout(b, "\\%c", ch);
		else if (ch < 0x20)
			engi_textout(b, "\\u%04x", ch);
		else
			engi_textout(b, "%c", ch);
	}
	engi_textout(b, "\"");
}

static const char *const row_keys[] = {
    "axis",    "within",      "a",	     "b",	  "tasks",	"a_only",
    "b_only",  "mean_a_x100", "mean_b_x100", "lift_x100", "ci_lo_x100", "ci_hi_x100",
    "ci_flag", "p",	      "p_holm",	     "draws",	  "family",
};
#define NKEYS (sizeof row_keys / sizeof *row_keys)

static void render_row(struct engi_dynbuf *b, const struct engi_compare_data *d,
		       const struct engi_compare_row *r, int json)
{
	void (*str)(struct engi_dynbuf *, const char *) = json ? json_str : engi_textout_csv_str;
	const char *sep = json ? ", " : ",";
	for (size_t k = 0; k < NKEYS; k++) {
		if (k)
			engi_textout(b, "%s", sep);
		if (json)
			engi_textout(b, "\"%s\": ", row_keys[k]);
		switch (k) {
		case 0:
			if (*r->grid_axis) {
				size_t n = strlen(r->grid_axis) + 6;
				char *ax = engi_malloc(n);
				if (ax) {
					snprintf(ax, n, "grid:%s", r->grid_axis);
					str(b, ax);
				} else {
					b->cap = 0; /* engi_textout_check reports it */
				}
				engi_free(ax);
			} else {
				str(b, axis_name(d->opts.axis));
			}
			break;
		case 1:
			str(b, r->within);
			break;
		case 2:
			str(b, r->a);
			break;
		case 3:
			str(b, r->b);
			break;
		case 4:
			engi_textout(b, "%zu", r->tasks);
			break;
		case 5:
			engi_textout(b, "%zu", r->a_only);
			break;
		case 6:
			engi_textout(b, "%zu", r->b_only);
			break;
		case 7:
			num(b, r->mean_a, json);
			break;
		case 8:
			num(b, r->mean_b, json);
			break;
		case 9:
			num(b, r->lift.mean, json);
			break;
		case 10:
			num(b, r->lift.lo, json);
			break;
		case 11:
			num(b, r->lift.hi, json);
			break;
		case 12:
			str(b, engi_ci_flag_name(r->lift.flag));
			break;
		case 13:
			num(b, r->tested ? r->test.p : NAN, json);
			break;
		case 14:
			num(b, r->p_holm, json);
			break;
		case 15:
			engi_textout(b, "%zu", r->tested ? r->test.draws : 0);
			break;
		case 16:
			engi_textout(b, "%zu", r->family);
			break;
		}
	}
}

static int write_buf(const struct engi_dynbuf *b, const char *path, const char *what,
		     struct engi_error *err)
{
	TRY(engi_textout_check(b, what, COMPARE_OUTPUT_CAP, err));
	FILE *f = fopen(path, "wb");
	if (!f)
		RAISE(err, ENGI_EIO, "cannot create '%s': %s", path, strerror(errno));
	int ok = fwrite(b->buf, 1, b->len, f) == b->len;
	ok = (fclose(f) == 0) && ok;
	if (!ok)
		RAISE(err, ENGI_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

int engi_compare_write_csv(const struct engi_compare_data *d, const char *path,
			   struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, COMPARE_OUTPUT_CAP);
	for (size_t k = 0; k < NKEYS; k++)
		engi_textout(&b, "%s%s", k ? "," : "", row_keys[k]);
	engi_textout(&b, "\r\n");
	for (size_t i = 0; i < d->nrows; i++) {
		render_row(&b, d, &d->rows[i], 0);
		engi_textout(&b, "\r\n");
	}
	int rc = write_buf(&b, path, "CSV", err);
	engi_dynbuf_release(&b);
	return rc;
}

int engi_compare_write_json(const struct engi_compare_data *d, const char *path,
			    struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, COMPARE_OUTPUT_CAP);
	engi_textout(&b, "{\"format\": \"engisweep-compare\", \"format_version\": 2,\n");
	engi_textout(&b,
		     " \"bootstrap\": {\"seed\": %" PRIu64 ", \"draws\": %zu, "
		     "\"level\": %.6f, \"min_tasks\": %zu},\n",
		     d->opts.boot.seed, d->opts.boot.draws, d->opts.boot.level,
		     d->opts.boot.min_tasks);
	engi_textout(&b, " \"family\": {\"axis\": \"%s\", \"baseline\": ", axis_name(d->opts.axis));
	if (*d->baseline)
		json_str(&b, d->baseline);
	else
		engi_textout(&b, "null");
	engi_textout(&b, ", \"size\": %zu, \"families\": [", d->family);
	for (size_t i = 0, k = 0; i < d->nrows; i++) {
		const struct engi_compare_row *r = &d->rows[i];
		if (!r->family || (i && d->rows[i - 1].within == r->within))
			continue;
		engi_textout(&b, "%s{\"within\": ", k++ ? ", " : "");
		json_str(&b, r->within);
		engi_textout(&b, ", \"size\": %zu}", r->family);
	}
	engi_textout(&b, "]},\n");
	engi_textout(&b,
		     " \"episodes\": {\"planned\": %" PRIu64 ", \"recorded\": %zu, "
		     "\"scored\": %zu, \"unscored\": %zu, \"missing\": %" PRIu64 "},\n",
		     d->planned, d->recorded, d->scored, d->unscored, d->missing);
	engi_textout(&b, " \"rows\": [");
	for (size_t i = 0; i < d->nrows; i++) {
		engi_textout(&b, "%s\n  {", i ? "," : "");
		render_row(&b, d, &d->rows[i], 1);
		engi_textout(&b, "}");
	}
	engi_textout(&b, "%s]}\n", d->nrows ? "\n " : "");
	int rc = write_buf(&b, path, "JSON", err);
	engi_dynbuf_release(&b);
	return rc;
}
