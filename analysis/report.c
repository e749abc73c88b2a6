/*
 * report.c - the numbers of the report (engi/report.h): episodes keyed and
 * counted, arms and tasks indexed, tables grouped, scores and intervals
 * bootstrapped into struct engi_report_data. No text is rendered here: the
 * Markdown, CSV and JSON renderings work from the data alone
 * (report_render.h).
 */
#include "engi/report.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "strtab.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOUT ENGI_REPORT_NOUTCOMES

static const char *const table_names[ENGI_REPORT_BUILTIN_TABLES] = {
    "overall", "type", "domain", "interface", "software",
};

const char *engi_report_outcome_name(int outcome)
{
	if (outcome == ENGI_REPORT_OTHER)
		return "other";
	return engi_outcome_name(outcome);
}

const char *engi_report_table_name(int table)
{
	if (table < 0 || table >= ENGI_REPORT_BUILTIN_TABLES)
		return "unknown";
	return table_names[table];
}

void engi_report_opts_init(struct engi_report_opts *o)
{
	o->seed = ENGI_STATS_SEED_DEFAULT;
	o->draws = ENGI_STATS_DRAWS_DEFAULT;
	o->level = ENGI_STATS_LEVEL_DEFAULT;
	o->min_tasks = ENGI_STATS_MIN_TASKS_DEFAULT;
	o->interval = ENGI_INTERVAL_PERCENTILE;
	o->prefix = NULL;
	o->by = NULL;
	o->nby = 0;
	o->evidence = 0;
}

void engi_report_data_init(struct engi_report_data *d)
{
	memset(d, 0, sizeof(*d));
	engi_boot_opts_init(&d->boot);
}

void engi_report_data_release(struct engi_report_data *d)
{
	engi_free(d->rows);
	engi_free(d->not_run);
	engi_free(d->versions);
	engi_free(d->verifiers);
	engi_strpool_free(&d->names);
	engi_report_data_init(d);
}

/* ---- fixed-width fields ---- */

/* Results come from files: a field may fill its width without a NUL. */
static size_t field_len(const char *s, size_t width)
{
	const char *z = memchr(s, '\0', width);
	return z ? (size_t)(z - s) : width;
}

static int outcome_of(const char *s, size_t width)
{
	int oc = engi_outcome_find(s, width);
	return oc < 0 ? ENGI_REPORT_OTHER : oc;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* ---- name index: names to dense ids in order of first appearance (or of
 * the names themselves) ---- */

struct name_entry {
	const char *name; /* the whole text */
	size_t order;	  /* position among the candidates */
	size_t id;
};

struct name_ix {
	struct name_entry *e; /* unique names, sorted by name */
	size_t n;
	const char **by_id;
	size_t *order_by_id;
};

static int cmp_entry_name(const void *x, const void *y)
{
	const struct name_entry *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	if (c)
		return c;
	return (a->order > b->order) - (a->order < b->order);
}

static int cmp_entry_order(const void *x, const void *y)
{
	const struct name_entry *const *a = x, *const *b = y;
	return ((*a)->order > (*b)->order) - ((*a)->order < (*b)->order);
}

static void name_ix_release(struct name_ix *ix)
{
	engi_free(ix->e);
	engi_free(ix->by_id);
	engi_free(ix->order_by_id);
	memset(ix, 0, sizeof(*ix));
}

/* Takes e (n candidates with name and order set); ids follow the names'
 * first appearance, or with sorted, the names' own order. */
static int name_ix_build(struct name_ix *ix, struct name_entry *e, size_t n, int sorted,
			 struct engi_error *err)
{
	memset(ix, 0, sizeof(*ix));
	ix->e = e;
	if (n)
		qsort(e, n, sizeof(*e), cmp_entry_name);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(e[u - 1].name, e[i].name) != 0)
			e[u++] = e[i];
	ix->n = u;
	struct name_entry **byo = engi_reallocarray(NULL, u ? u : 1, sizeof(*byo));
	ix->by_id = engi_reallocarray(NULL, u ? u : 1, sizeof(*ix->by_id));
	ix->order_by_id = engi_reallocarray(NULL, u ? u : 1, sizeof(*ix->order_by_id));
	if (!byo || !ix->by_id || !ix->order_by_id) {
		engi_free(byo);
		RAISE(err, ENGI_ENOMEM, "out of memory indexing %zu names", u);
	}
	for (size_t i = 0; i < u; i++)
		byo[i] = &e[i];
	if (u && !sorted)
		qsort(byo, u, sizeof(*byo), cmp_entry_order);
	for (size_t id = 0; id < u; id++) {
		byo[id]->id = id;
		ix->by_id[id] = byo[id]->name;
		ix->order_by_id[id] = byo[id]->order;
	}
	engi_free(byo);
	return 0;
}

static int cmp_name_key(const void *key, const void *elem)
{
	const struct name_entry *b = elem;
	return strcmp(key, b->name);
}

static size_t name_ix_find(const struct name_ix *ix, const char *name)
{
	const struct name_entry *hit =
	    ix->n ? bsearch(name, ix->e, ix->n, sizeof(*ix->e), cmp_name_key) : NULL;
	return hit ? hit->id : SIZE_MAX;
}

/* ---- computation ---- */

struct acc {
	size_t recorded, scored, successes;
	size_t outcomes[NOUT];
	double score_sum, engi_sum, turns_sum, wall_sum, cost_usd;
	int64_t tokens_in, tokens_out;
	/* its episodes not run: nr[nr_first .. nr_first + nr_n) */
	size_t nr_first, nr_n;
};

/* Episodes of one arm and task not run for one reason. */
struct not_run {
	size_t arm, task, reason, episodes;
};

static int cmp_not_run(const void *x, const void *y)
{
	const struct not_run *a = x, *b = y;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	if (a->task != b->task)
		return a->task < b->task ? -1 : 1;
	return (a->reason > b->reason) - (a->reason < b->reason);
}

struct ep_ref {
	size_t arm, task, pos;
	int32_t trial;
	int unscored;
	int outcome;
};

static int cmp_ep_ref(const void *x, const void *y)
{
	const struct ep_ref *a = x, *b = y;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	if (a->task != b->task)
		return a->task < b->task ? -1 : 1;
	if (a->trial != b->trial)
		return a->trial < b->trial ? -1 : 1;
	if (a->unscored != b->unscored)
		return a->unscored - b->unscored;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

struct pair {
	size_t task;
	const char *value; /* in the results or the data's pool */
};

struct ctx {
	const struct engi_results *res;
	const struct engi_report_opts *o;
	struct engi_report_data *d;
	struct name_ix tasks, models, conds;
	size_t ntasks, narms, nconds;
	struct acc *acc;     /* narms x ntasks */
	unsigned char *used; /* task has a recorded episode */
	unsigned char *optq; /* task is scored by optimization quality */
	/* the (task, value) pairs of the table being built */
	struct pair *pairs;
	size_t npairs, pairs_alloc;
	/* episodes not run, sorted; reasons sorted by text (ids in order) */
	struct not_run *nr;
	size_t nnr;
	const char **reason;
	size_t nreasons;
	size_t *rcount; /* per reason, scratch of one row */
	/* scratch for one group, sized for every task */
	size_t *tl;
	double *x, *xr;
	unsigned char *present;
	struct engi_ci *ci;
};

static void ctx_release(struct ctx *c)
{
	name_ix_release(&c->tasks);
	name_ix_release(&c->models);
	name_ix_release(&c->conds);
	engi_free(c->acc);
	engi_free(c->used);
	engi_free(c->optq);
	engi_free(c->pairs);
	engi_free(c->nr);
	engi_free(c->reason);
	engi_free(c->rcount);
	engi_free(c->tl);
	engi_free(c->x);
	engi_free(c->xr);
	engi_free(c->present);
	engi_free(c->ci);
}

static int build_indexes(struct ctx *c, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	size_t ne = r->nepisodes;
	struct name_entry *e;

	e = engi_reallocarray(NULL, r->ntasks + ne + 1, sizeof(*e));
	if (!e)
		RAISE(err, ENGI_ENOMEM, "out of memory indexing tasks");
	for (size_t i = 0; i < r->ntasks; i++)
		e[i] = (struct name_entry){engi_res_str(r, r->tasks[i].id), i, 0};
	for (size_t i = 0; i < ne; i++)
		e[r->ntasks + i] =
		    (struct name_entry){engi_res_str(r, r->episodes[i].task_id), r->ntasks + i, 0};
	/* tasks in the order of their ids: the bootstrap resamples them in
	 * this order, so no row order of the input can move an interval */
	TRY(name_ix_build(&c->tasks, e, r->ntasks + ne, 1, err));

	e = engi_reallocarray(NULL, r->nmodels + ne + 1, sizeof(*e));
	if (!e)
		RAISE(err, ENGI_ENOMEM, "out of memory indexing models");
	for (size_t i = 0; i < r->nmodels; i++)
		e[i] = (struct name_entry){engi_res_str(r, r->models[i].name), i, 0};
	for (size_t i = 0; i < ne; i++)
		e[r->nmodels + i] =
		    (struct name_entry){engi_res_str(r, r->episodes[i].model), r->nmodels + i, 0};
	TRY(name_ix_build(&c->models, e, r->nmodels + ne, 0, err));

	/* without any condition there is still the one implicit condition "" */
	static const char no_condition[1];
	e = engi_reallocarray(NULL, r->nconditions + ne + 1, sizeof(*e));
	if (!e)
		RAISE(err, ENGI_ENOMEM, "out of memory indexing conditions");
	size_t n = 0;
	for (size_t i = 0; i < r->nconditions; i++, n++)
		e[n] = (struct name_entry){engi_res_str(r, r->conditions[i].name), n, 0};
	for (size_t i = 0; i < ne; i++, n++)
		e[n] = (struct name_entry){engi_res_str(r, r->episodes[i].condition), n, 0};
	if (n == 0)
		e[n++] = (struct name_entry){no_condition, 0, 0};
	TRY(name_ix_build(&c->conds, e, n, 0, err));

	c->ntasks = c->tasks.n;
	c->nconds = c->conds.n;
	c->narms = c->models.n * c->nconds;
	c->d->nmodels = c->models.n;
	c->d->nconditions = c->nconds;
	c->d->narms = c->narms;
	return 0;
}

/* Why an episode was not run. */
static const char *not_run_reason(const struct engi_results *r, const struct engi_res_episode *ep,
				  int oc)
{
	const char *why = engi_res_str(r, ep->infra);
	if (*why)
		return why;
	return engi_outcome_why(oc);
}

/* ---- provenance: the distinct values of a field, with counts ---- */

struct tally {
	struct strtab ix;
	struct engi_report_value *v;
	size_t n, alloc;
};

static int tally_add(struct tally *t, const char *value, struct engi_error *err)
{
	size_t i = engi_strtab_get(&t->ix, value);
	if (i != SIZE_MAX) {
		t->v[i].episodes++;
		return 0;
	}
	if (t->n == t->alloc) {
		size_t na = t->alloc ? 2 * t->alloc : 8;
		struct engi_report_value *nv = engi_reallocarray(t->v, na, sizeof(*nv));
		if (!nv)
			RAISE(err, ENGI_ENOMEM, "out of memory counting versions");
		t->v = nv;
		t->alloc = na;
	}
	t->v[t->n] = (struct engi_report_value){value, 1};
	TRY(engi_strtab_put(&t->ix, value, t->n, err));
	t->n++;
	return 0;
}

static int cmp_value(const void *x, const void *y)
{
	const struct engi_report_value *a = x, *b = y;
	return strcmp(a->value, b->value);
}

/* Moves the tally's values into the data's pool, sorted. */
static int tally_take(struct ctx *c, struct tally *t, struct engi_report_value **out, size_t *n,
		      struct engi_error *err)
{
	engi_strtab_release(&t->ix);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_value);
	for (size_t i = 0; i < t->n; i++)
		TRY(engi_strpool_add(&c->d->names, t->v[i].value, &t->v[i].value, NULL, err));
	*out = t->v;
	*n = t->n;
	t->v = NULL;
	t->n = t->alloc = 0;
	return 0;
}

/* The verifier kinds and versions mix: one kind at two versions, or one
 * task judged by two verifiers. */
static int verifiers_mixed(const struct engi_report_value *v, size_t n,
			   const unsigned char *task_mixed, size_t ntasks)
{
	for (size_t t = 0; t < ntasks; t++)
		if (task_mixed[t])
			return 1;
	for (size_t i = 1; i < n; i++) {
		const char *a = v[i - 1].value, *b = v[i].value;
		const char *at = strchr(a, '@'), *bt = strchr(b, '@');
		size_t ka = at ? (size_t)(at - a) : strlen(a);
		size_t kb = bt ? (size_t)(bt - b) : strlen(b);
		if (ka == kb && !memcmp(a, b, ka))
			return 1;
	}
	return 0;
}

static int cmp_str_ptr(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * The not-run list: reasons get ids in the order of their text, entries
 * with the same arm, task and reason merge, and each acc learns its range.
 */
static int index_not_run(struct ctx *c, struct strtab *rix, struct engi_error *err)
{
	size_t nr = c->nreasons;
	const char **sorted = engi_reallocarray(NULL, nr + 1, sizeof(*sorted));
	size_t *remap = engi_reallocarray(NULL, nr + 1, sizeof(*remap));
	c->rcount = engi_calloc(nr + 1, sizeof(*c->rcount));
	if (!sorted || !remap || !c->rcount) {
		engi_free(sorted);
		engi_free(remap);
		RAISE(err, ENGI_ENOMEM, "out of memory listing reasons");
	}
	memcpy(sorted, c->reason, nr * sizeof(*sorted));
	if (nr)
		qsort(sorted, nr, sizeof(*sorted), cmp_str_ptr);
	for (size_t i = 0; i < nr; i++)
		remap[engi_strtab_get(rix, sorted[i])] = i;
	for (size_t i = 0; i < c->nnr; i++)
		c->nr[i].reason = remap[c->nr[i].reason];
	memcpy(c->reason, sorted, nr * sizeof(*sorted));
	engi_free(sorted);
	engi_free(remap);
	if (c->nnr)
		qsort(c->nr, c->nnr, sizeof(*c->nr), cmp_not_run);
	size_t u = 0;
	for (size_t i = 0; i < c->nnr; i++) {
		struct not_run *f = &c->nr[i];
		if (u && !cmp_not_run(&c->nr[u - 1], f))
			c->nr[u - 1].episodes += f->episodes;
		else
			c->nr[u++] = *f;
	}
	c->nnr = u;
	for (size_t i = 0; i < u; i++) {
		struct acc *a = &c->acc[c->nr[i].arm * c->ntasks + c->nr[i].task];
		if (!a->nr_n)
			a->nr_first = i;
		a->nr_n++;
	}
	return 0;
}

/* d->not_run: per arm and reason over every task. */
static int arm_not_run(struct ctx *c, struct engi_error *err)
{
	struct engi_report_data *d = c->d;
	d->not_run = engi_calloc(c->nnr + 1, sizeof(*d->not_run));
	if (!d->not_run)
		RAISE(err, ENGI_ENOMEM, "out of memory listing episodes not run");
	for (size_t a = 0; a < c->narms; a++) {
		size_t first = d->nnot_run;
		for (size_t t = 0; t < c->ntasks; t++) {
			const struct acc *q = &c->acc[a * c->ntasks + t];
			for (size_t k = 0; k < q->nr_n; k++)
				c->rcount[c->nr[q->nr_first + k].reason] +=
				    c->nr[q->nr_first + k].episodes;
		}
		for (size_t k = 0; k < c->nreasons; k++) {
			if (!c->rcount[k])
				continue;
			d->not_run[d->nnot_run++] =
			    (struct engi_report_not_run){a, c->reason[k], c->rcount[k]};
			c->rcount[k] = 0;
		}
		for (size_t i = first; i < d->nnot_run; i++)
			TRY(engi_strpool_add(&d->names, d->not_run[i].reason, &d->not_run[i].reason,
					     NULL, err));
	}
	return 0;
}

static int accumulate(struct ctx *c, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	struct engi_report_data *d = c->d;
	size_t ne = r->nepisodes;

	if (c->narms && c->ntasks > SIZE_MAX / sizeof(struct acc) / c->narms)
		RAISE(err, ENGI_EINVALID, "%zu tasks x %zu arms is too large", c->ntasks, c->narms);
	c->acc = engi_calloc(c->narms * c->ntasks + 1, sizeof(*c->acc));
	c->used = engi_calloc(c->ntasks + 1, 1);
	c->optq = engi_calloc(c->ntasks + 1, 1);
	for (size_t t = 0; c->optq && t < c->ntasks; t++) {
		size_t at = c->tasks.order_by_id[t];
		if (at < r->ntasks)
			c->optq[t] = !strcmp(engi_res_str(r, r->tasks[at].scoring), "optimization");
	}
	struct ep_ref *refs = engi_reallocarray(NULL, ne + 1, sizeof(*refs));
	c->nr = engi_reallocarray(NULL, ne + 1, sizeof(*c->nr));
	c->reason = engi_reallocarray(NULL, ne + 1, sizeof(*c->reason));
	const char **task_verifier = engi_calloc(c->ntasks + 1, sizeof(char *));
	unsigned char *task_mixed = engi_calloc(c->ntasks + 1, 1);
	if (!c->acc || !c->used || !c->optq || !refs || !c->nr || !c->reason || !task_verifier ||
	    !task_mixed) {
		engi_free(refs);
		engi_free(task_verifier);
		engi_free(task_mixed);
		RAISE(err, ENGI_ENOMEM, "out of memory tallying %zu episodes", ne);
	}

	for (size_t i = 0; i < ne; i++) {
		const struct engi_res_episode *ep = &r->episodes[i];
		size_t m = name_ix_find(&c->models, engi_res_str(r, ep->model));
		size_t k = name_ix_find(&c->conds, engi_res_str(r, ep->condition));
		size_t t = name_ix_find(&c->tasks, engi_res_str(r, ep->task_id));
		BUG_ON(m == SIZE_MAX || k == SIZE_MAX || t == SIZE_MAX);
		int oc = outcome_of(ep->outcome, sizeof(ep->outcome));
		refs[i] = (struct ep_ref){
		    .arm = m * c->nconds + k,
		    .task = t,
		    .pos = i,
		    .trial = ep->trial,
		    .unscored = !engi_outcome_scored(oc),
		    .outcome = oc,
		};
	}
	if (ne)
		qsort(refs, ne, sizeof(*refs), cmp_ep_ref);

	struct strtab rix;
	memset(&rix, 0, sizeof(rix));
	struct tally versions, verifiers;
	memset(&versions, 0, sizeof(versions));
	memset(&verifiers, 0, sizeof(verifiers));
	int rc = 0;
	for (size_t i = 0; i < ne && !rc; i++) {
		const struct ep_ref *f = &refs[i];
		if (i > 0 && refs[i - 1].arm == f->arm && refs[i - 1].task == f->task &&
		    refs[i - 1].trial == f->trial) {
			d->duplicates++;
			continue;
		}
		const struct engi_res_episode *ep = &r->episodes[f->pos];
		struct acc *a = &c->acc[f->arm * c->ntasks + f->task];
		a->recorded++;
		a->outcomes[f->outcome]++;
		a->tokens_in = add_sat(a->tokens_in, ep->tokens_in);
		a->tokens_out = add_sat(a->tokens_out, ep->tokens_out);
		a->cost_usd += ep->cost_usd;
		c->used[f->task] = 1;
		d->recorded++;
		if (c->tasks.order_by_id[f->task] >= r->ntasks)
			d->unknown_task++;
		rc = tally_add(&versions, engi_res_str(r, ep->version), err);
		const char *vf = engi_res_str(r, ep->verifier);
		if (!rc && *vf) {
			rc = tally_add(&verifiers, vf, err);
			const char **tv = &task_verifier[f->task];
			if (*tv && strcmp(*tv, vf))
				task_mixed[f->task] = 1;
			*tv = vf;
		}
		if (engi_outcome_infra(f->outcome)) {
			if (f->outcome == ENGI_REPORT_ENV_CRASH)
				d->env_crash++;
			else
				d->infra_error++;
			const char *why = not_run_reason(r, ep, f->outcome);
			size_t id = engi_strtab_get(&rix, why);
			if (id == SIZE_MAX) {
				id = c->nreasons;
				c->reason[c->nreasons++] = why;
				rc = engi_strtab_put(&rix, why, id, err);
			}
			c->nr[c->nnr++] = (struct not_run){f->arm, f->task, id, 1};
		}
		if (f->outcome == ENGI_REPORT_OTHER)
			d->other_outcome++;
		if (rc || f->unscored)
			continue;
		if (!isfinite(ep->score)) {
			rc = engi_raise(err, ENGI_EINVALID,
					"episode '%.*s': score is not a finite number",
					(int)field_len(ep->cell, sizeof(ep->cell)), ep->cell);
			break;
		}
		d->scored++;
		a->scored++;
		a->successes += ep->success != 0;
		a->score_sum += ep->score;
		a->engi_sum += c->optq[f->task] ? ep->score : (ep->success != 0 ? 1.0 : 0.0);
		a->turns_sum += ep->turns;
		a->wall_sum += ep->wall_s;
	}
	engi_free(refs);
	if (!rc)
		rc = index_not_run(c, &rix, err);
	engi_strtab_release(&rix);
	if (!rc)
		rc = tally_take(c, &versions, &d->versions, &d->nversions, err);
	if (!rc)
		rc = tally_take(c, &verifiers, &d->verifiers, &d->nverifiers, err);
	d->mixed_versions = d->nversions > 1;
	d->mixed_verifiers = verifiers_mixed(d->verifiers, d->nverifiers, task_mixed, c->ntasks);
	engi_strtab_release(&versions.ix);
	engi_strtab_release(&verifiers.ix);
	engi_free(versions.v);
	engi_free(verifiers.v);
	engi_free(task_verifier);
	engi_free(task_mixed);
	TRY(rc);
	TRY(arm_not_run(c, err));

	for (size_t t = 0; t < c->ntasks; t++) {
		if (c->tasks.order_by_id[t] >= r->ntasks)
			continue;
		d->tasks_listed++;
		if (!c->used[t])
			d->tasks_unrun++;
	}
	d->planned = r->planned_cells;
	if (d->planned >= d->recorded)
		d->missing = d->planned ? d->planned - d->recorded : 0;
	else if (d->planned)
		d->extra = d->recorded - (size_t)d->planned;
	return 0;
}

/* v must outlive the computation (the results' text or the data's pool). */
static int add_pair(struct ctx *c, size_t t, const char *v, struct engi_error *err)
{
	if (c->npairs == c->pairs_alloc) {
		size_t na = c->pairs_alloc ? 2 * c->pairs_alloc : 256;
		struct pair *np = engi_reallocarray(c->pairs, na, sizeof(*np));
		if (!np)
			RAISE(err, ENGI_ENOMEM, "out of memory grouping tasks");
		c->pairs = np;
		c->pairs_alloc = na;
	}
	struct pair *p = &c->pairs[c->npairs++];
	p->task = t;
	p->value = *v ? v : ENGI_REPORT_UNKNOWN_GROUP;
	return 0;
}

/* One pair per program of a comma-separated list, spaces trimmed. */
static int add_list(struct ctx *c, size_t t, const char *list, struct engi_error *err)
{
	size_t n = strlen(list), added = 0;
	char *item = engi_malloc(n + 1);
	if (!item)
		RAISE(err, ENGI_ENOMEM, "out of memory grouping tasks");
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i;
		while (j < n && list[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && list[a] == ' ')
			a++;
		while (b > a && list[b - 1] == ' ')
			b--;
		if (b > a) {
			const char *kept;
			memcpy(item, list + a, b - a);
			item[b - a] = '\0';
			rc = engi_strpool_add(&c->d->names, item, &kept, NULL, err);
			if (!rc)
				rc = add_pair(c, t, kept, err);
			added++;
		}
		i = j + 1;
	}
	engi_free(item);
	TRY(rc);
	return added ? 0 : add_pair(c, t, "", err);
}

static const char *const task_fields[] = {"type",  "domain",  "interface", "software",
					  "title", "scoring", "turns"};

/* The pairs of a /tasks field; 1 when key is one, 0 when not. */
static int field_pairs(struct ctx *c, const char *key, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	size_t k = 0, nf = sizeof(task_fields) / sizeof(*task_fields);
	while (k < nf && strcmp(key, task_fields[k]))
		k++;
	if (k == nf)
		return 0;
	for (size_t t = 0; t < c->ntasks; t++) {
		if (!c->used[t])
			continue;
		size_t at = c->tasks.order_by_id[t];
		if (at >= r->ntasks) {
			TRY(add_pair(c, t, "", err));
			continue;
		}
		const struct engi_res_task *task = &r->tasks[at];
		char num[32];
		const char *kept;
		switch (k) {
		case 0:
			TRY(add_pair(c, t, engi_res_str(r, task->type), err));
			break;
		case 1:
			TRY(add_pair(c, t, engi_res_str(r, task->domain), err));
			break;
		case 2:
			TRY(add_pair(c, t, engi_res_str(r, task->interface), err));
			break;
		case 3:
			TRY(add_list(c, t, engi_res_str(r, task->software), err));
			break;
		case 4:
			TRY(add_pair(c, t, engi_res_str(r, task->title), err));
			break;
		case 5:
			TRY(add_pair(c, t, engi_res_str(r, task->scoring), err));
			break;
		default:
			snprintf(num, sizeof(num), "%d", (int)task->turns);
			TRY(engi_strpool_add(&c->d->names, task->turns > 0 ? num : "", &kept, NULL,
					     err));
			TRY(add_pair(c, t, kept, err));
			break;
		}
	}
	return 1;
}

/* "a, b" of the metadata keys of these results (each once, in the order
 * of the rows; the first 40, then "..."), or "none", kept in the data's
 * pool. */
#define KNOWN_KEYS_MAX 40
static int known_keys(struct ctx *c, const char **out, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	const char *seen[KNOWN_KEYS_MAX];
	size_t nk = 0;
	int more = 0;
	for (size_t i = 0; i < r->ntask_meta && !more; i++) {
		const char *k = engi_res_str(r, r->task_meta[i].key);
		size_t j = 0;
		while (j < nk && strcmp(seen[j], k))
			j++;
		if (j < nk)
			continue;
		if (nk == KNOWN_KEYS_MAX)
			more = 1;
		else
			seen[nk++] = k;
	}
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_REPORT_OUTPUT_CAP);
	int rc = 0;
	for (size_t j = 0; j < nk && !rc; j++)
		rc = engi_dynbuf_printf(&b, "%s%.64s", j ? ", " : "", seen[j]);
	if (!rc && more)
		rc = engi_dynbuf_printf(&b, ", ...");
	if (rc)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory listing metadata keys");
	else
		rc = engi_strpool_add(&c->d->names, nk ? b.buf : "none", out, NULL, err);
	engi_dynbuf_release(&b);
	return rc;
}

/* The pairs of an extra metadata key (task_meta: a task file's meta, an
 * extra column of an episodes CSV); a task without a row falls in
 * ENGI_REPORT_UNKNOWN_GROUP. A task whose rows give the key two values
 * (two inputs that disagree) is refused like a CSV conflict. */
static int meta_pairs(struct ctx *c, const char *key, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	const struct engi_res_task_meta **of = engi_calloc(c->ntasks + 1, sizeof(*of));
	if (!of)
		RAISE(err, ENGI_ENOMEM, "out of memory grouping by '%s'", key);
	size_t known = 0;
	int rc = 0;
	for (size_t i = 0; i < r->ntask_meta && !rc; i++) {
		const struct engi_res_task_meta *m = &r->task_meta[i];
		if (strcmp(engi_res_str(r, m->key), key))
			continue;
		known++;
		size_t t = name_ix_find(&c->tasks, engi_res_str(r, m->task_id));
		if (t == SIZE_MAX)
			continue;
		if (!of[t])
			of[t] = m;
		else if (c->used[t] && !of[t]->conflict[0] &&
			 strcmp(engi_res_str(r, of[t]->value), engi_res_str(r, m->value)))
			rc = engi_raise(err, ENGI_EINVALID,
					"--by '%s': not task metadata: task '%.80s' has '%.80s' in "
					"one input and '%.80s' in another",
					key, engi_res_str(r, m->task_id),
					engi_res_str(r, of[t]->value), engi_res_str(r, m->value));
	}
	if (!rc && !known) {
		const char *list = "";
		rc = known_keys(c, &list, err);
		if (!rc)
			rc = engi_raise(err, ENGI_EINVALID,
					"--by '%s': no task has this metadata key (known: type, "
					"domain, interface, software, title, scoring, turns; the "
					"metadata of these results: %s)",
					key, list);
	}
	for (size_t t = 0; !rc && t < c->ntasks; t++) {
		if (!c->used[t])
			continue;
		const struct engi_res_task_meta *m = of[t];
		if (m && m->conflict[0])
			rc = engi_raise(err, ENGI_EINVALID, "--by '%s': not task metadata: %s", key,
					m->conflict);
		else
			rc = add_pair(c, t, m ? engi_res_str(r, m->value) : "", err);
	}
	engi_free(of);
	return rc;
}

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;
	int ua = strcmp(a->value, ENGI_REPORT_UNKNOWN_GROUP) == 0;
	int ub = strcmp(b->value, ENGI_REPORT_UNKNOWN_GROUP) == 0;
	if (ua != ub)
		return ua - ub;
	int k = strcmp(a->value, b->value);
	if (k)
		return k;
	return (a->task > b->task) - (a->task < b->task);
}

/* "reason: n; reason: n" of the counts in c->rcount (then zeroed), kept
 * in the data's pool. */
static int reasons_text(struct ctx *c, const char **out, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_REPORT_OUTPUT_CAP);
	int rc = 0;
	for (size_t k = 0; k < c->nreasons && !rc; k++) {
		if (!c->rcount[k])
			continue;
		rc = engi_dynbuf_printf(&b, "%s%s: %zu", b.len ? "; " : "", c->reason[k],
					c->rcount[k]);
		c->rcount[k] = 0;
	}
	if (rc)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory listing reasons");
	else
		rc = engi_strpool_add(&c->d->names, b.len ? b.buf : "", out, NULL, err);
	engi_dynbuf_release(&b);
	return rc;
}

static void scale_ci(struct engi_ci *ci, double k)
{
	ci->mean *= k;
	ci->lo *= k;
	ci->hi *= k;
}

/* Rows of every arm over the n tasks in c->tl. */
static int group_rows(struct ctx *c, int table, const char *group, size_t n,
		      struct engi_report_row *rows, struct engi_error *err)
{
	for (size_t a = 0; a < c->narms; a++) {
		for (size_t s = 0; s < n; s++) {
			const struct acc *q = &c->acc[a * c->ntasks + c->tl[s]];
			c->present[a * n + s] = q->scored > 0;
			c->x[a * n + s] = q->scored ? q->engi_sum / (double)q->scored : 0.0;
			c->xr[a * n + s] = q->scored ? q->score_sum / (double)q->scored : 0.0;
		}
	}
	struct engi_ci *rci = c->ci + c->narms;
	TRY(engi_boot_shared(c->x, c->present, c->narms, n, &c->d->boot, c->ci, NULL, err));
	/* the same seed gives the same resample of tasks; with the same
	 * values it gives the same intervals, so they are copied */
	if (c->narms && memcmp(c->x, c->xr, c->narms * n * sizeof(*c->x)))
		TRY(engi_boot_shared(c->xr, c->present, c->narms, n, &c->d->boot, rci, NULL, err));
	else
		memcpy(rci, c->ci, c->narms * sizeof(*rci));

	for (size_t a = 0; a < c->narms; a++) {
		struct engi_report_row *row = &rows[a];
		size_t m = a / c->nconds, k = a % c->nconds;
		row->table = table;
		TRY(engi_strpool_add(&c->d->names, group, &row->group, NULL, err));
		TRY(engi_strpool_add(&c->d->names, c->models.by_id[m], &row->model, NULL, err));
		TRY(engi_strpool_add(&c->d->names, c->conds.by_id[k], &row->condition, NULL, err));
		double success_sum = 0.0, turns_sum = 0.0, wall_sum = 0.0;
		for (size_t s = 0; s < n; s++) {
			const struct acc *q = &c->acc[a * c->ntasks + c->tl[s]];
			for (size_t j = 0; j < q->nr_n; j++) {
				const struct not_run *f = &c->nr[q->nr_first + j];
				c->rcount[f->reason] += f->episodes;
				row->not_run += f->episodes;
			}
			row->episodes += q->recorded;
			row->scored += q->scored;
			for (int o = 0; o < NOUT; o++)
				row->outcomes[o] += q->outcomes[o];
			row->tokens_in = add_sat(row->tokens_in, q->tokens_in);
			row->tokens_out = add_sat(row->tokens_out, q->tokens_out);
			row->cost_usd += q->cost_usd;
			turns_sum += q->turns_sum;
			wall_sum += q->wall_sum;
			if (!q->scored)
				continue;
			row->tasks++;
			success_sum += (double)q->successes / (double)q->scored;
			if (q->scored < 2)
				row->single_trial++;
			else if (q->successes == q->scored)
				row->stable_success++;
			else if (q->successes == 0)
				row->stable_failure++;
			else
				row->mixed++;
		}
		row->score = c->ci[a];
		scale_ci(&row->score, 100.0);
		row->reward = rci[a];
		scale_ci(&row->reward, 100.0);
		row->success_rate = row->tasks ? success_sum / (double)row->tasks : NAN;
		row->mean_turns = row->scored ? turns_sum / (double)row->scored : NAN;
		row->mean_wall_s = row->scored ? wall_sum / (double)row->scored : NAN;
		TRY(reasons_text(c, &row->not_run_reasons, err));
	}
	return 0;
}

/* The tables' keys: the built-in ones, then opts.by without repeats. */
static int table_keys(struct ctx *c, struct engi_error *err)
{
	struct engi_report_data *d = c->d;
	d->ntables = 0;
	for (int t = 0; t < ENGI_REPORT_BUILTIN_TABLES; t++)
		d->table_name[d->ntables++] = table_names[t];
	for (size_t i = 0; i < c->o->nby; i++) {
		const char *key = c->o->by[i];
		if (!*key || !strcmp(key, "overall"))
			RAISE(err, ENGI_EINVALID, "--by '%.80s': not a metadata key", key);
		int dup = 0;
		for (size_t t = 1; t < d->ntables && !dup; t++)
			dup = !strcmp(d->table_name[t], key);
		if (dup)
			continue;
		if (d->ntables == ENGI_REPORT_TABLES_MAX)
			RAISE(err, ENGI_EINVALID, "more than %d grouping keys",
			      ENGI_REPORT_TABLES_MAX - ENGI_REPORT_BUILTIN_TABLES);
		TRY(engi_strpool_add(&d->names, key, &d->table_name[d->ntables++], NULL, err));
	}
	return 0;
}

/* The rows of one table into d->rows (grown); "overall" has one group. */
static int table_rows(struct ctx *c, size_t table, size_t *at, struct engi_error *err)
{
	struct engi_report_data *d = c->d;
	c->npairs = 0;
	if (table == ENGI_REPORT_OVERALL) {
		for (size_t t = 0; t < c->ntasks; t++)
			if (c->used[t])
				TRY(add_pair(c, t, "all", err));
	} else {
		int rc = field_pairs(c, d->table_name[table], err);
		if (rc == 0)
			rc = meta_pairs(c, d->table_name[table], err);
		TRY(rc < 0 ? rc : 0);
	}
	if (c->npairs)
		qsort(c->pairs, c->npairs, sizeof(*c->pairs), cmp_pair);
	size_t ng = 0;
	for (size_t i = 0; i < c->npairs; i++)
		if (i == 0 || strcmp(c->pairs[i - 1].value, c->pairs[i].value))
			ng++;
	if (table == ENGI_REPORT_OVERALL)
		ng = 1;
	size_t need = *at + ng * c->narms;
	struct engi_report_row *nr = engi_reallocarray(d->rows, need + 1, sizeof(*nr));
	if (!nr)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu report rows", need);
	d->rows = nr;
	memset(&d->rows[*at], 0, ng * c->narms * sizeof(*nr));
	d->table_first[table] = *at;
	d->table_groups[table] = ng;
	for (size_t i = 0; i < c->npairs || (i == 0 && ng == 1);) {
		const char *group = c->npairs ? c->pairs[i].value : "all";
		size_t n = 0;
		for (; i < c->npairs && !strcmp(c->pairs[i].value, group); i++)
			if (n == 0 || c->tl[n - 1] != c->pairs[i].task)
				c->tl[n++] = c->pairs[i].task;
		TRY(group_rows(c, (int)table, group, n, &d->rows[*at], err));
		*at += c->narms;
		d->nrows = *at;
		if (!c->npairs)
			break;
	}
	return 0;
}

static int make_rows(struct ctx *c, struct engi_error *err)
{
	size_t nt = c->ntasks ? c->ntasks : 1;
	size_t na = c->narms ? c->narms : 1;
	c->tl = engi_reallocarray(NULL, nt, sizeof(*c->tl));
	c->x = engi_reallocarray(NULL, nt * na, sizeof(*c->x));
	c->xr = engi_reallocarray(NULL, nt * na, sizeof(*c->xr));
	c->present = engi_reallocarray(NULL, nt * na, 1);
	c->ci = engi_reallocarray(NULL, 2 * na, sizeof(*c->ci));
	if (!c->tl || !c->x || !c->xr || !c->present || !c->ci)
		RAISE(err, ENGI_ENOMEM, "out of memory building report tables");
	TRY(table_keys(c, err));
	size_t at = 0;
	for (size_t t = 0; t < c->d->ntables; t++)
		TRY(table_rows(c, t, &at, err));
	return 0;
}

int engi_report_compute(struct engi_report_data *d, const struct engi_results *res,
			const struct engi_report_opts *o, struct engi_error *err)
{
	d->boot.seed = o->seed;
	d->boot.draws = o->draws;
	d->boot.level = o->level;
	d->boot.min_tasks = o->min_tasks;
	d->boot.interval = o->interval;
	TRY(engi_boot_opts_check(&d->boot, err));

	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.res = res;
	c.o = o;
	c.d = d;
	d->suite_refused = res->suite_refused;
	d->suite_source = res->suite_source;
	d->suite_refused_reasons = res->suite_refused_reasons;
	for (size_t i = 0; i < res->nepisodes; i++) {
		const struct engi_res_episode *ep = &res->episodes[i];
		d->judge_tokens_in = add_sat(d->judge_tokens_in, ep->judge_tokens_in);
		d->judge_tokens_out = add_sat(d->judge_tokens_out, ep->judge_tokens_out);
		if (isfinite(ep->judge_cost_usd))
			d->judge_cost_usd += ep->judge_cost_usd;
	}
	for (size_t i = 0; i < res->nassertions; i++)
		if (!strcmp(res->assertions[i].name, "clean_agrees")) {
			d->clean_checked++;
			d->clean_disagree += !strcmp(res->assertions[i].state, "fail");
		}
	int rc = build_indexes(&c, err);
	if (!rc)
		rc = accumulate(&c, err);
	if (!rc)
		rc = make_rows(&c, err);
	ctx_release(&c);
	if (rc) {
		engi_report_data_release(d);
		engi_error_prefix(err, "making the report");
	}
	return rc;
}
