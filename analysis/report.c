#include "engi/report.h"

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

/* The infrastructure outcomes' names: "env_crash<last>infra_error". */
static const char *infra_names(char *buf, size_t size, const char *last)
{
	return engi_outcome_list(buf, size, 0, ", ", last);
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

/* The pairs of an extra metadata key (task_meta); a task without a row
 * falls in ENGI_REPORT_UNKNOWN_GROUP. */
static int meta_pairs(struct ctx *c, const char *key, struct engi_error *err)
{
	const struct engi_results *r = c->res;
	const struct engi_res_task_meta **of = engi_calloc(c->ntasks + 1, sizeof(*of));
	if (!of)
		RAISE(err, ENGI_ENOMEM, "out of memory grouping by '%s'", key);
	size_t known = 0;
	for (size_t i = 0; i < r->ntask_meta; i++) {
		const struct engi_res_task_meta *m = &r->task_meta[i];
		if (strcmp(engi_res_str(r, m->key), key))
			continue;
		known++;
		size_t t = name_ix_find(&c->tasks, engi_res_str(r, m->task_id));
		if (t != SIZE_MAX && !of[t])
			of[t] = m;
	}
	int rc = 0;
	if (!known)
		rc = engi_raise(err, ENGI_EINVALID,
				"--by '%s': no task has this metadata key "
				"(known: type, domain, interface, software, "
				"title, scoring, turns and the extra columns "
				"of an episodes CSV)",
				key);
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

/* ---- rendering ---- */

/* An output buffer whose first failure sticks, checked once at the end. */
struct out {
	struct engi_dynbuf b;
	int rc;
};

static void out_init(struct out *o)
{
	engi_dynbuf_init(&o->b, ENGI_REPORT_OUTPUT_CAP);
	o->rc = 0;
}

static void out_bytes(struct out *o, const char *s, size_t n)
{
	if (!o->rc)
		o->rc = engi_dynbuf_add(&o->b, s, n);
}

static void out_str(struct out *o, const char *s)
{
	out_bytes(o, s, strlen(s));
}

static void out_fmt(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_fmt(struct out *o, const char *fmt, ...)
{
	if (o->rc)
		return;
	va_list ap;
	va_start(ap, fmt);
	o->rc = engi_dynbuf_vprintf(&o->b, fmt, ap);
	va_end(ap);
}

static int out_check(struct out *o, const char *what, struct engi_error *err)
{
	if (o->b.cap == 0) /* a failed textout add */
		o->rc = ENGI_ETOOBIG;
	if (o->rc == ENGI_ETOOBIG)
		RAISE(err, ENGI_ETOOBIG, "%s is over its %zu-byte cap", what,
		      ENGI_REPORT_OUTPUT_CAP);
	if (o->rc)
		RAISE(err, o->rc, "cannot render %s: %s", what, engi_strerror(o->rc));
	return 0;
}

/* Length of the valid UTF-8 sequence at s, 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_string(struct out *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	out_str(o, "\"");
	for (size_t i = 0; i < n;) {
		unsigned char ch = s[i];
		if (ch == '"' || ch == '\\') {
			char esc[2] = {'\\', (char)ch};
			out_bytes(o, esc, 2);
		} else if (ch == '\n') {
			out_str(o, "\\n");
		} else if (ch == '\r') {
			out_str(o, "\\r");
		} else if (ch == '\t') {
			out_str(o, "\\t");
		} else if (ch == '\b') {
			out_str(o, "\\b");
		} else if (ch == '\f') {
			out_str(o, "\\f");
		} else if (ch < 0x20) {
			out_fmt(o, "\\u%04x", ch);
		} else if (ch < 0x80) {
			out_bytes(o, (const char *)&s[i], 1);
		} else {
			size_t len = utf8_seq(&s[i], n - i);
			if (len) {
				out_bytes(o, (const char *)&s[i], len);
				i += len;
				continue;
			}
			out_str(o, "\\ufffd");
		}
		i++;
	}
	out_str(o, "\"");
}

/* A CSV field, quoted as the compare tables quote theirs (textout.h). */
static void csv_string(struct out *o, const char *s)
{
	if (!o->rc)
		engi_textout_csv_str(&o->b, s);
}

/* A Markdown table cell: pipes and backslashes escaped, line breaks and
 * other control characters as spaces, '<' as an entity so names never turn
 * into HTML. */
static void md_cell(struct out *o, const char *s)
{
	if (!*s) {
		out_str(o, "(none)");
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '|' || ch == '\\') {
			char esc[2] = {'\\', (char)ch};
			out_bytes(o, esc, 2);
		} else if (ch == '<') {
			out_str(o, "&lt;");
		} else if (ch < 0x20 || ch == 0x7f) {
			out_str(o, " ");
		} else {
			out_bytes(o, s, 1);
		}
	}
}

/* ---- the row as a list of fields, shared by CSV and JSON ---- */

enum field_kind { F_STR, F_SIZE, F_I64, F_NUM };

struct field {
	const char *key;
	int kind;
	const char *s;
	size_t z;
	int64_t i;
	double x;
};

#define ROW_FIELDS 36

static void row_fields(const struct engi_report_data *d, const struct engi_report_row *r,
		       struct field *f)
{
	size_t n = 0;
/* clang-format off */
#define FS(k, v) f[n++] = (struct field){.key = k, .kind = F_STR, .s = (v)}
#define FZ(k, v) f[n++] = (struct field){.key = k, .kind = F_SIZE, .z = (v)}
#define FI(k, v) f[n++] = (struct field){.key = k, .kind = F_I64, .i = (v)}
#define FN(k, v) f[n++] = (struct field){.key = k, .kind = F_NUM, .x = (v)}
	/* clang-format on */
	FS("table", d->ntables ? d->table_name[r->table] : "overall");
	FS("group", r->group ? r->group : "");
	FS("model", r->model ? r->model : "");
	FS("condition", r->condition ? r->condition : "");
	FZ("tasks", r->tasks);
	FZ("episodes", r->episodes);
	FZ("scored", r->scored);
	FN("score_x100", r->score.mean);
	FN("ci_lo_x100", r->score.lo);
	FN("ci_hi_x100", r->score.hi);
	FS("ci_flag", engi_ci_flag_name(r->score.flag));
	FZ("ci_draws", r->score.draws);
	FN("reward_x100", r->reward.mean);
	FN("reward_lo_x100", r->reward.lo);
	FN("reward_hi_x100", r->reward.hi);
	FS("reward_flag", engi_ci_flag_name(r->reward.flag));
	FN("success_rate", r->success_rate);
	FZ("stable_success", r->stable_success);
	FZ("mixed", r->mixed);
	FZ("stable_failure", r->stable_failure);
	FZ("single_trial", r->single_trial);
#define FOUTCOME(id, name, scored, infra, why) FZ(name, r->outcomes[ENGI_REPORT_##id]);
	ENGI_OUTCOMES(FOUTCOME)
#undef FOUTCOME
	FZ("other_outcome", r->outcomes[ENGI_REPORT_OTHER]);
	FZ("not_run", r->not_run);
	FS("not_run_reasons", r->not_run_reasons ? r->not_run_reasons : "");
	FN("mean_turns", r->mean_turns);
	FN("mean_wall_s", r->mean_wall_s);
	FI("tokens_in", r->tokens_in);
	FI("tokens_out", r->tokens_out);
	FN("cost_usd", r->cost_usd);
#undef FS
#undef FZ
#undef FI
#undef FN
	BUG_ON(n != ROW_FIELDS);
}

/* Numbers in files: 12 significant digits, far beyond what a bootstrap
 * supports, and the same text on every machine (glibc rounds exactly). */
static void field_value(struct out *o, const struct field *f, int json)
{
	switch (f->kind) {
	case F_STR:
		if (json)
			json_string(o, f->s);
		else
			csv_string(o, f->s);
		break;
	case F_SIZE:
		out_fmt(o, "%zu", f->z);
		break;
	case F_I64:
		out_fmt(o, "%" PRId64, f->i);
		break;
	default:
		if (isfinite(f->x))
			out_fmt(o, "%.12g", f->x);
		else if (json)
			out_str(o, "null");
		break;
	}
}

static void render_csv(struct out *o, const struct engi_report_data *d)
{
	struct field f[ROW_FIELDS];
	struct engi_report_row empty;
	memset(&empty, 0, sizeof(empty));
	row_fields(d, &empty, f);
	for (size_t i = 0; i < ROW_FIELDS; i++)
		out_fmt(o, "%s%s", i ? "," : "", f[i].key);
	out_str(o, "\r\n");
	for (size_t r = 0; r < d->nrows; r++) {
		row_fields(d, &d->rows[r], f);
		for (size_t i = 0; i < ROW_FIELDS; i++) {
			if (i)
				out_str(o, ",");
			field_value(o, &f[i], 0);
		}
		out_str(o, "\r\n");
	}
}

static double ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}

static void json_num(struct out *o, const char *key, double v)
{
	if (isfinite(v))
		out_fmt(o, ", \"%s\": %.12g", key, v);
	else
		out_fmt(o, ", \"%s\": null", key);
}

/* The evidence ladder, the "evidence" member of the JSON file. */
static void json_evidence(struct out *o, const struct engi_evidence *ev)
{
	out_str(o, ",\n  \"evidence\": {\"stages\": [");
	for (size_t s = 0; s < ev->nstages; s++) {
		out_str(o, s ? ", " : "");
		json_string(o, ev->stages[s]);
	}
	out_str(o, "],\n    \"arms\": [");
	for (size_t a = 0; a < ev->narms; a++) {
		const struct engi_evidence_arm *arm = &ev->arms[a];
		out_str(o, a ? ",\n      {\"model\": " : "\n      {\"model\": ");
		json_string(o, arm->model);
		out_str(o, ", \"condition\": ");
		json_string(o, arm->condition);
		out_fmt(o,
			", \"episodes\": %zu, \"tasks\": %zu, "
			"\"perfect_tasks\": %zu",
			arm->episodes, arm->tasks, arm->perfect);
		json_num(o, "perfect_rate", ratio((double)arm->perfect, (double)arm->tasks));
		json_num(o, "score_x100", arm->score_x100);
		json_num(o, "cost_usd", arm->cost_usd);
		json_num(o, "cost_per_task", ratio(arm->cost_usd, (double)arm->tasks));
		json_num(o, "cost_per_point", ratio(arm->cost_usd, arm->score_x100));
		out_str(o, ", \"ladder\": [");
		for (size_t s = 0; s < ev->nstages; s++) {
			out_str(o, s ? ", {\"stage\": " : "{\"stage\": ");
			json_string(o, ev->stages[s]);
			out_fmt(o, ", \"denominator\": %zu, \"passed\": %zu", arm->denominator[s],
				arm->passed[s]);
			json_num(o, "pass_rate",
				 ratio((double)arm->passed[s], (double)arm->denominator[s]));
			out_fmt(o, ", \"first_failed\": %zu}", arm->first_failed[s]);
		}
		out_fmt(o, "], \"passed_every_stage\": %zu}", arm->first_failed[ev->nstages]);
	}
	out_str(o, ev->narms ? "\n    ]}" : "]}");
}

static const struct engi_report_row *overall(const struct engi_report_data *d, size_t arm)
{
	return &d->rows[d->table_first[ENGI_REPORT_OVERALL] + arm];
}

static void json_values(struct out *o, const struct engi_report_value *v, size_t n)
{
	out_str(o, "[");
	for (size_t i = 0; i < n; i++) {
		out_str(o, i ? ", {\"value\": " : "{\"value\": ");
		json_string(o, v[i].value);
		out_fmt(o, ", \"episodes\": %zu}", v[i].episodes);
	}
	out_str(o, "]");
}

static void render_json(struct out *o, const struct engi_report_data *d)
{
	out_str(o, "{\n  \"format\": \"engisweep-report\",\n"
		   "  \"format_version\": 3,\n");
	out_fmt(o,
		"  \"bootstrap\": {\"seed\": %" PRIu64 ", \"draws\": %zu, "
		"\"level\": %.12g, \"min_tasks\": %zu, \"interval\": \"%s\"},\n",
		d->boot.seed, d->boot.draws, d->boot.level, d->boot.min_tasks,
		engi_interval_name(d->boot.interval));
	out_str(o, "  \"episodes\": {\"planned\": ");
	if (d->planned)
		out_fmt(o, "%" PRIu64 ", \"missing\": %" PRIu64, d->planned, d->missing);
	else
		out_str(o, "null, \"missing\": null");
	out_fmt(o,
		", \"recorded\": %zu, \"extra\": %zu, \"duplicates\": %zu, "
		"\"scored\": %zu, \"%s\": %zu, \"%s\": %zu, "
		"\"other_outcome\": %zu, "
		"\"unknown_task\": %zu, \"tasks_listed\": %zu, "
		"\"tasks_unrun\": %zu},\n",
		d->recorded, d->extra, d->duplicates, d->scored,
		engi_outcome_name(ENGI_OUTCOME_ENV_CRASH), d->env_crash,
		engi_outcome_name(ENGI_OUTCOME_INFRA_ERROR), d->infra_error, d->other_outcome,
		d->unknown_task, d->tasks_listed, d->tasks_unrun);
	out_str(o, "  \"not_run\": [");
	for (size_t i = 0; i < d->nnot_run; i++) {
		const struct engi_report_not_run *n = &d->not_run[i];
		const struct engi_report_row *r = overall(d, n->arm);
		out_str(o, i ? ",\n    {\"model\": " : "\n    {\"model\": ");
		json_string(o, r->model);
		out_str(o, ", \"condition\": ");
		json_string(o, r->condition);
		out_str(o, ", \"reason\": ");
		json_string(o, n->reason);
		out_fmt(o, ", \"episodes\": %zu}", n->episodes);
	}
	out_str(o, d->nnot_run ? "\n  ],\n" : "],\n");
	out_str(o, "  \"provenance\": {\"versions\": ");
	json_values(o, d->versions, d->nversions);
	out_str(o, ", \"verifiers\": ");
	json_values(o, d->verifiers, d->nverifiers);
	out_fmt(o, ", \"mixed_versions\": %s, \"mixed_verifiers\": %s},\n",
		d->mixed_versions ? "true" : "false", d->mixed_verifiers ? "true" : "false");
	out_str(o, "  \"tables\": [");
	for (size_t t = 0; t < d->ntables; t++) {
		out_str(o, t ? ", " : "");
		json_string(o, d->table_name[t]);
	}
	out_str(o, "],\n");
	out_str(o, "  \"rows\": [");
	struct field f[ROW_FIELDS];
	for (size_t r = 0; r < d->nrows; r++) {
		row_fields(d, &d->rows[r], f);
		out_str(o, r ? ",\n    {" : "\n    {");
		for (size_t i = 0; i < ROW_FIELDS; i++) {
			out_fmt(o, "%s\"%s\": ", i ? ", " : "", f[i].key);
			field_value(o, &f[i], 1);
		}
		out_str(o, "}");
	}
	out_str(o, d->nrows ? "\n  ]" : "]");
	if (d->evidence)
		json_evidence(o, d->evidence);
	out_str(o, "\n}\n");
}

/* ---- Markdown ---- */

/* "95" for level 0.95, "97.5" for 0.975 */
static void level_percent(const struct engi_report_data *d, char *buf, size_t size)
{
	snprintf(buf, size, "%g", d->boot.level * 100.0);
}

static void md_num(struct out *o, double v, const char *fmt)
{
	if (isfinite(v))
		out_fmt(o, fmt, v);
	else
		out_str(o, "n/a");
}

static void md_flag(struct out *o, const struct engi_ci *ci, size_t min_tasks)
{
	switch (ci->flag) {
	case ENGI_CI_NO_TASKS:
		out_str(o, "no tasks");
		break;
	case ENGI_CI_FEW_TASKS:
		out_fmt(o, "too few tasks (%zu < %zu)", ci->ntasks, min_tasks);
		break;
	case ENGI_CI_ALL_ZERO:
		out_str(o, "every task at 0");
		break;
	case ENGI_CI_ALL_ONE:
		out_str(o, "every task at 100");
		break;
	case ENGI_CI_CONSTANT:
		out_str(o, "every task equal");
		break;
	default:
		out_str(o, "n/a");
		break;
	}
}

/* The reason without an interval, inside a table cell. */
static const char *short_flag(int flag)
{
	switch (flag) {
	case ENGI_CI_FEW_TASKS:
		return "few tasks";
	case ENGI_CI_ALL_ZERO:
		return "all 0";
	case ENGI_CI_ALL_ONE:
		return "all 100";
	case ENGI_CI_CONSTANT:
		return "all equal";
	default:
		return "no interval";
	}
}

static void md_interval(struct out *o, const struct engi_ci *ci, size_t min_tasks)
{
	if (ci->flag == ENGI_CI_OK && isfinite(ci->lo) && isfinite(ci->hi))
		out_fmt(o, "[%.1f, %.1f]", ci->lo, ci->hi);
	else
		md_flag(o, ci, min_tasks);
}

static void md_arm(struct out *o, const struct engi_report_data *d, const struct engi_report_row *r)
{
	out_str(o, "| ");
	md_cell(o, r->model);
	if (d->nconditions > 1) {
		out_str(o, " | ");
		md_cell(o, r->condition);
	}
}

static void md_head(struct out *o, const struct engi_report_data *d, const char *cols,
		    const char *align)
{
	out_str(o, d->nconditions > 1 ? "| model | condition | " : "| model | ");
	out_fmt(o, "%s |\n", cols);
	out_str(o, d->nconditions > 1 ? "|---|---|" : "|---|");
	out_fmt(o, "%s\n", align);
}

static void md_episodes(struct out *o, const struct engi_report_data *d)
{
	out_str(o, "## Episodes\n\n");
	if (d->planned)
		out_fmt(o,
			"Denominator: the %" PRIu64
			" cells (task x model x condition x trial) the sweep "
			"planned.\n\n",
			d->planned);
	else
		out_str(o, "Denominator: the episodes recorded; the number of "
			   "planned cells is not known, so missing episodes "
			   "cannot be counted.\n\n");
	out_str(o, "| episodes | count |\n|---|---:|\n");
	if (d->planned) {
		out_fmt(o, "| planned cells | %" PRIu64 " |\n", d->planned);
		out_fmt(o, "| recorded | %zu |\n", d->recorded);
		out_fmt(o, "| missing (planned - recorded) | %" PRIu64 " |\n", d->missing);
		if (d->extra)
			out_fmt(o, "| recorded beyond the plan | %zu |\n", d->extra);
	} else {
		out_fmt(o, "| recorded | %zu |\n", d->recorded);
		out_str(o, "| missing | unknown |\n");
	}
	out_fmt(o, "| scored | %zu |\n", d->scored);
	out_fmt(o, "| %s (infrastructure failure, not run, not scored) | %zu |\n",
		engi_outcome_name(ENGI_OUTCOME_ENV_CRASH), d->env_crash);
	out_fmt(o, "| %s (infrastructure failure, not run, not scored) | %zu |\n",
		engi_outcome_name(ENGI_OUTCOME_INFRA_ERROR), d->infra_error);
	out_fmt(o, "| unknown outcome (not scored) | %zu |\n", d->other_outcome);
	out_fmt(o, "| duplicate records ignored | %zu |\n", d->duplicates);
	out_fmt(o, "| on tasks missing from /tasks | %zu |\n", d->unknown_task);
	out_fmt(o,
		"\nTasks listed in /tasks: %zu, of which %zu have no recorded "
		"episode.\n\n",
		d->tasks_listed, d->tasks_unrun);
}

static void md_scores(struct out *o, const struct engi_report_data *d)
{
	char pct[32];
	level_percent(d, pct, sizeof(pct));
	out_str(o, "## Scores\n\n");
	out_str(o, "Denominator: per model, the tasks with at least one scored "
		   "episode (episodes not run and unknown outcomes excluded; a "
		   "model without a scored episode has no score). "
		   "EngiScore: mean over those tasks of the per-task mean "
		   "episode value, x100, the value being the optimization "
		   "quality on a task scored by optimization and the success "
		   "flag on any other. Reward: the same two-level mean of the "
		   "episodes' continuous score, whatever the scoring. Success "
		   "rate: the same two-level mean of the success flag.\n\n");
	char cols[160];
	snprintf(cols, sizeof(cols),
		 "tasks | scored episodes | EngiScore | %s %% CI | reward | "
		 "%s %% CI | success rate",
		 pct, pct);
	md_head(o, d, cols, "---:|---:|---:|---|---:|---|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		out_fmt(o, " | %zu | %zu | ", r->tasks, r->scored);
		if (r->tasks == 0) {
			out_str(o, "no score | no scored episode | no score | "
				   "no scored episode | n/a |\n");
			continue;
		}
		md_num(o, r->score.mean, "%.1f");
		out_str(o, " | ");
		md_interval(o, &r->score, d->boot.min_tasks);
		out_str(o, " | ");
		md_num(o, r->reward.mean, "%.1f");
		out_str(o, " | ");
		md_interval(o, &r->reward, d->boot.min_tasks);
		out_str(o, " | ");
		md_num(o, r->success_rate * 100.0, "%.1f %%");
		out_str(o, " |\n");
	}
	out_str(o, "\n");
}

static void md_stability(struct out *o, const struct engi_report_data *d)
{
	out_str(o, "## Trial stability\n\n");
	out_str(o, "Denominator: per model, the tasks with at least 2 scored "
		   "trials. Stable success: every trial succeeds; stable "
		   "failure: none does; mixed: some do. Tasks with a single "
		   "scored trial are counted apart and not classified.\n\n");
	md_head(o, d,
		"tasks with >= 2 trials | stable success | mixed | "
		"stable failure | single trial (not classified)",
		"---:|---:|---:|---:|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		out_fmt(o, " | %zu | %zu | %zu | %zu | %zu |\n",
			r->stable_success + r->mixed + r->stable_failure, r->stable_success,
			r->mixed, r->stable_failure, r->single_trial);
	}
	out_str(o, "\n");
}

static void md_outcomes(struct out *o, const struct engi_report_data *d)
{
	char infra[128];
	out_str(o, "## Terminal outcomes\n\n");
	out_fmt(o,
		"Denominator: per model, the recorded episodes, every "
		"outcome (%s included).\n\n",
		infra_names(infra, sizeof(infra), " and "));
#define HEAD(id, name, scored, infra, why) " | " name
#define RULE(id, name, scored, infra, why) "---:|"
	md_head(o, d, "episodes" ENGI_OUTCOMES(HEAD) " | other",
		"---:|" ENGI_OUTCOMES(RULE) "---:|");
#undef HEAD
#undef RULE
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		out_fmt(o, " | %zu", r->episodes);
		for (int k = 0; k < NOUT; k++)
			out_fmt(o, " | %zu", r->outcomes[k]);
		out_str(o, " |\n");
	}
	out_str(o, "\n");
}

/* Per model the episodes not run, by reason. */
static void md_not_run(struct out *o, const struct engi_report_data *d)
{
	if (!d->nnot_run)
		return;
	out_str(o, "## Episodes not run\n\n");
	char infra[128];
	out_fmt(o,
		"Infrastructure outcomes (%s): counted "
		"here, never scored, never in a denominator.\n\n",
		infra_names(infra, sizeof(infra), ", "));
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		if (!r->not_run)
			continue;
		out_str(o, "- ");
		md_cell(o, r->model);
		if (d->nconditions > 1) {
			out_str(o, " (");
			md_cell(o, r->condition);
			out_str(o, ")");
		}
		out_fmt(o, ": %zu episode%s not run: ", r->not_run, r->not_run == 1 ? "" : "s");
		size_t k = 0;
		for (size_t i = 0; i < d->nnot_run; i++) {
			const struct engi_report_not_run *n = &d->not_run[i];
			if (n->arm != a)
				continue;
			if (k++)
				out_str(o, "; ");
			md_cell(o, n->reason);
			if (n->episodes != r->not_run)
				out_fmt(o, " (%zu)", n->episodes);
		}
		out_str(o, r->tasks ? "\n" : "; no scored episode, no score\n");
	}
	out_str(o, "\n");
	/* a verifier that failed on deliveries is ours to look at, not noise */
	size_t attention = 0;
	for (size_t i = 0; i < d->nnot_run; i++)
		if (!strncmp(d->not_run[i].reason, "verifier ", 9))
			attention += d->not_run[i].episodes;
	if (attention)
		out_fmt(o,
			"**Needs attention:** the verifier failed on the deliverables of %zu "
			"episode%s (crashed or reached a limit). Their runs stand; `run --resume` "
			"judges them again, and `engisweep judge TASK.json "
			"RESULTS/artifacts/CELL` reproduces one by hand.\n\n",
			attention, attention == 1 ? "" : "s");
}

/* A warning line for each provenance field that mixes values. */
static void md_provenance(struct out *o, const struct engi_report_data *d)
{
	for (int k = 0; k < 2; k++) {
		int mixed = k ? d->mixed_verifiers : d->mixed_versions;
		const struct engi_report_value *v = k ? d->verifiers : d->versions;
		size_t n = k ? d->nverifiers : d->nversions;
		if (!mixed)
			continue;
		out_str(o, k ? "**Warning: verdicts from different verifiers "
			       "(kind@version):** "
			     : "**Warning: episodes from different engisweep "
			       "versions:** ");
		for (size_t i = 0; i < n; i++) {
			out_str(o, i ? ", " : "");
			md_cell(o, v[i].value);
			out_fmt(o, " (%zu episode%s)", v[i].episodes,
				v[i].episodes == 1 ? "" : "s");
		}
		out_str(o, ".\n\n");
	}
}

static void md_effort(struct out *o, const struct engi_report_data *d)
{
	out_str(o, "## Effort and cost\n\n");
	out_str(o, "Denominator: mean turns and mean wall_s over the scored "
		   "episodes; tokens and cost summed over every recorded "
		   "episode (a crashed episode still spent them).\n\n");
	md_head(o, d,
		"scored episodes | mean turns | mean wall_s | tokens in | "
		"tokens out | cost (USD)",
		"---:|---:|---:|---:|---:|---:|");
	for (size_t a = 0; a < d->narms; a++) {
		const struct engi_report_row *r = overall(d, a);
		md_arm(o, d, r);
		out_fmt(o, " | %zu | ", r->scored);
		md_num(o, r->mean_turns, "%.1f");
		out_str(o, " | ");
		md_num(o, r->mean_wall_s, "%.1f");
		out_fmt(o, " | %" PRId64 " | %" PRId64 " | ", r->tokens_in, r->tokens_out);
		md_num(o, r->cost_usd, "%.2f");
		out_str(o, " |\n");
	}
	out_str(o, "\n");
}

static void md_groups(struct out *o, const struct engi_report_data *d, int table)
{
	char pct[32];
	level_percent(d, pct, sizeof(pct));
	const char *name = d->table_name[table];
	size_t first = d->table_first[table], ng = d->table_groups[table];
	out_fmt(o, "## Score by %s\n\n", name);
	out_fmt(o,
		"Denominator: per cell, the n tasks of that %s with at least "
		"one scored episode for the model. Cell: EngiScore x100 [%s "
		"%% interval] (n = tasks), then the reward where it differs; "
		"without an interval, the reason (fewer than %zu tasks, or "
		"every task at the same score).%s\n\n",
		name, pct, d->boot.min_tasks,
		table == ENGI_REPORT_BY_SOFTWARE
		    ? " A task that uses several programs counts in the "
		      "group of each."
		    : "");
	if (ng == 0) {
		out_str(o, "No task has a recorded episode.\n\n");
		return;
	}
	out_str(o, d->nconditions > 1 ? "| model | condition" : "| model");
	for (size_t g = 0; g < ng; g++) {
		out_str(o, " | ");
		md_cell(o, d->rows[first + g * d->narms].group);
	}
	out_str(o, " |\n");
	out_str(o, d->nconditions > 1 ? "|---|---" : "|---");
	for (size_t g = 0; g < ng; g++)
		out_str(o, "|---:");
	out_str(o, "|\n");
	for (size_t a = 0; a < d->narms; a++) {
		md_arm(o, d, &d->rows[first + a]);
		for (size_t g = 0; g < ng; g++) {
			const struct engi_report_row *r = &d->rows[first + g * d->narms + a];
			out_str(o, " | ");
			if (r->tasks == 0) {
				out_str(o, "n/a (n=0)");
				continue;
			}
			out_fmt(o, "%.1f ", r->score.mean);
			if (r->score.flag == ENGI_CI_OK) {
				md_interval(o, &r->score, d->boot.min_tasks);
				out_fmt(o, " (n=%zu)", r->tasks);
			} else {
				out_fmt(o, "(n=%zu, %s)", r->tasks, short_flag(r->score.flag));
			}
			if (memcmp(&r->reward.mean, &r->score.mean, sizeof(double)))
				out_fmt(o, "; reward %.1f", r->reward.mean);
		}
		out_str(o, " |\n");
	}
	out_str(o, "\n");
}

static void render_markdown(struct out *o, const struct engi_report_data *d)
{
	char pct[32], infra[128];
	level_percent(d, pct, sizeof(pct));
	out_str(o, "# Sweep report\n\n");
	out_fmt(o,
		"Scores are x100: the mean over tasks of the per-task mean "
		"episode score, trials averaged within a task first. "
		"Intervals: %s %% %s bootstrap over tasks "
		"(task-clustered; %zu draws, seed %" PRIu64
		"; all models resampled together), shown only for at least "
		"%zu tasks whose scores are not all equal. %s "
		"episodes are infrastructure failures, not run: "
		"counted, never scored.\n\n",
		pct, d->boot.interval == ENGI_INTERVAL_BCA ? "BCa" : "percentile", d->boot.draws,
		d->boot.seed, d->boot.min_tasks, infra_names(infra, sizeof(infra), " and "));
	md_provenance(o, d);
	md_episodes(o, d);
	md_not_run(o, d);
	if (d->narms == 0) {
		out_str(o, "No model has a recorded episode.\n");
		return;
	}
	md_scores(o, d);
	md_stability(o, d);
	md_outcomes(o, d);
	md_effort(o, d);
	for (size_t t = ENGI_REPORT_BY_TYPE; t < d->ntables; t++)
		md_groups(o, d, (int)t);
}

/* ---- writers ---- */

static int write_file(const char *path, const struct engi_dynbuf *b, struct engi_error *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		RAISE(err, ENGI_EIO, "cannot open report file '%s': %s", path, strerror(errno));
	size_t n = b->len ? fwrite(b->buf, 1, b->len, f) : 0;
	int werr = n != b->len ? errno : 0;
	if (fclose(f) != 0 && !werr)
		werr = errno;
	if (n != b->len || werr)
		RAISE(err, ENGI_EIO, "cannot write report file '%s': %s", path,
		      strerror(werr ? werr : EIO));
	return 0;
}

static int render_to_file(const struct engi_report_data *d, const char *path, int json,
			  struct engi_error *err)
{
	struct out o;
	out_init(&o);
	if (json)
		render_json(&o, d);
	else
		render_csv(&o, d);
	int rc = out_check(&o, json ? "the JSON report" : "the CSV report", err);
	if (!rc)
		rc = write_file(path, &o.b, err);
	engi_dynbuf_release(&o.b);
	return rc;
}

int engi_report_write_csv(const struct engi_report_data *d, const char *path,
			  struct engi_error *err)
{
	return render_to_file(d, path, 0, err);
}

int engi_report_write_json(const struct engi_report_data *d, const char *path,
			   struct engi_error *err)
{
	return render_to_file(d, path, 1, err);
}

int engi_report_write_markdown(const struct engi_report_data *d, FILE *out, struct engi_error *err)
{
	struct out o;
	out_init(&o);
	render_markdown(&o, d);
	int rc = out_check(&o, "the Markdown report", err);
	if (!rc && o.b.len && fwrite(o.b.buf, 1, o.b.len, out) != o.b.len)
		rc = engi_raise(err, ENGI_EIO, "cannot write the Markdown report: %s",
				strerror(errno));
	if (!rc && (fflush(out) != 0 || ferror(out)))
		rc = engi_raise(err, ENGI_EIO, "cannot write the Markdown report: %s",
				strerror(errno));
	engi_dynbuf_release(&o.b);
	return rc;
}

static int write_with_suffix(const struct engi_report_data *d, const char *prefix,
			     const char *suffix, int json, struct engi_error *err)
{
	size_t n = strlen(prefix) + strlen(suffix) + 1;
	char *path = engi_malloc(n);
	if (!path)
		RAISE(err, ENGI_ENOMEM, "out of memory naming report file '%s%s'", prefix, suffix);
	snprintf(path, n, "%s%s", prefix, suffix);
	int rc = render_to_file(d, path, json, err);
	engi_free(path);
	return rc;
}

int engi_report(const struct engi_results *res, const struct engi_report_opts *o, FILE *md,
		struct engi_error *err)
{
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_evidence ev;
	engi_evidence_init(&ev);
	int rc = engi_report_compute(&d, res, o, err);
	if (!rc && o->evidence) {
		rc = engi_evidence_compute(&ev, res, err);
		d.evidence = &ev;
	}
	if (!rc && md)
		rc = engi_report_write_markdown(&d, md, err);
	if (!rc && md && o->evidence)
		rc = engi_evidence_write_markdown(&ev, md, err);
	if (!rc && o->prefix)
		rc = write_with_suffix(&d, o->prefix, ".csv", 0, err);
	if (!rc && o->prefix)
		rc = write_with_suffix(&d, o->prefix, ".json", 1, err);
	if (!rc && o->prefix && o->evidence) {
		size_t n = strlen(o->prefix) + sizeof(".evidence.csv");
		char *path = engi_malloc(n);
		if (!path)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory naming '%s.evidence.csv'",
					o->prefix);
		else {
			snprintf(path, n, "%s.evidence.csv", o->prefix);
			rc = engi_evidence_write_csv(&ev, path, err);
		}
		engi_free(path);
	}
	d.evidence = NULL;
	engi_evidence_release(&ev);
	engi_report_data_release(&d);
	return rc;
}
