/*
 * Paired comparisons on a hand-made sweep: models A, B, C on tasks t1..t6,
 * conditions base and hint, one or two trials.
 *
 *   base: A  1, 1, 0.5, 0, 1, 1     (t3: trials 1 and 0)
 *         B  0, 1, 0,   0, 1, 0     (t1 also has an env_crash: not scored)
 *         C  1, 1, 1,   0, 1, (none: t6 missing)
 *   hint: A  as base; B = base B + t1, t4 succeed; C has no episode.
 *   A - B over t1..t6: 1, 0, 0.5, 0, 0, 1 -> mean 2.5 / 6, x100 41.667
 *   A - C over t1..t5: 0, 0, -0.5, 0, 0   -> mean -10, one A-only task
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/compare.h"
#include "engi/stats.h"

#include <stdlib.h>
#include <unistd.h>

static void add(struct engi_results *r, const char *task, const char *model, const char *cond,
		int trial, const char *outcome, double score)
{
	struct engi_res_episode *e = &r->episodes[r->nepisodes++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cell, sizeof(e->cell), "%04zu", r->nepisodes);
	snprintf(e->task_id, sizeof(e->task_id), "%s", task);
	snprintf(e->model, sizeof(e->model), "%s", model);
	snprintf(e->condition, sizeof(e->condition), "%s", cond);
	snprintf(e->outcome, sizeof(e->outcome), "%s", outcome);
	e->trial = trial;
	e->score = score;
	e->success = score == 1.0;
}

static void make(struct engi_results *r)
{
	static const double a[6] = {1, 1, -1, 0, 1, 1}; /* -1: two trials */
	static const double b[6] = {0, 1, 0, 0, 1, 0};
	static const double c[5] = {1, 1, 1, 0, 1};
	char t[8];
	engi_results_init(r);
	r->episodes = engi_calloc(64, sizeof(*r->episodes));
	r->planned_cells = 40;
	for (int cond = 0; cond < 2; cond++) {
		const char *cn = cond ? "hint" : "base";
		for (int i = 0; i < 6; i++) {
			snprintf(t, sizeof t, "t%d", i + 1);
			if (a[i] < 0) {
				add(r, t, "A", cn, 1, "done", 1);
				add(r, t, "A", cn, 2, "turn_limit", 0);
			} else {
				add(r, t, "A", cn, 1, "done", a[i]);
			}
			double bv = b[i];
			if (cond && (i == 0 || i == 3))
				bv = 1;
			add(r, t, "B", cn, 1, "done", bv);
			if (!cond && i < 5)
				add(r, t, "C", cn, 1, "done", c[i]);
		}
	}
	add(r, "t1", "B", "base", 2, "env_crash", 0);
}

static const struct engi_compare_row *find(const struct engi_compare_data *d, const char *within,
					   const char *a, const char *b)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].within, within) && !strcmp(d->rows[i].a, a) &&
		    !strcmp(d->rows[i].b, b))
			return &d->rows[i];
	return NULL;
}

/* Holm's step-down adjustment of n p-values, from its definition. */
static void holm_by_hand(const double *p, size_t n, double *adj)
{
	for (size_t i = 0; i < n; i++) {
		double m = 0;
		/* max over the p-values ranked at or before p[i] */
		for (size_t j = 0; j < n; j++) {
			if (p[j] < p[i] || (p[j] == p[i] && j <= i)) {
				size_t rank = 0;
				for (size_t k = 0; k < n; k++)
					if (p[k] < p[j] || (p[k] == p[j] && k < j))
						rank++;
				double v = (double)(n - rank) * p[j];
				if (v > m)
					m = v;
			}
		}
		adj[i] = m > 1 ? 1 : m;
	}
}

static void test_model_pairs(void)
{
	struct engi_results r;
	make(&r);
	struct engi_compare_opts o;
	engi_compare_opts_init(&o);
	o.boot.draws = 2000;
	struct engi_compare_data d;
	engi_compare_data_init(&d);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_compare_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.recorded, 32);
	CHECK_INT(d.unscored, 1);
	CHECK_INT(d.scored, 31);
	CHECK_INT(d.missing, 8);
	/* 3 pairs under base, 3 under hint (C has no hint task) */
	CHECK_INT(d.nrows, 6);
	const struct engi_compare_row *ab = find(&d, "base", "A", "B");
	CHECK(ab != NULL);
	if (ab) {
		CHECK_INT(ab->tasks, 6);
		CHECK_NEAR(ab->mean_a, 100.0 * 4.5 / 6, 1e-9);
		CHECK_NEAR(ab->mean_b, 100.0 * 2 / 6, 1e-9);
		CHECK_NEAR(ab->lift.mean, 100.0 * 2.5 / 6, 1e-9);
		CHECK_INT(ab->lift.flag, ENGI_CI_OK);
		CHECK(ab->lift.lo <= ab->lift.mean && ab->lift.mean <= ab->lift.hi);
		/* the same test run directly on the task differences */
		double x[6] = {1, 0, 0.5, 0, 0, 1};
		struct engi_signflip sf;
		CHECK_INT(engi_signflip_test(x, NULL, 6, o.boot.seed, 2000, &sf, &err), 0);
		CHECK(ab->tested);
		CHECK_INT(ab->test.extreme, sf.extreme);
	}
	const struct engi_compare_row *ac = find(&d, "base", "A", "C");
	CHECK(ac != NULL);
	if (ac) {
		CHECK_INT(ac->tasks, 5);
		CHECK_INT(ac->a_only, 1);
		CHECK_INT(ac->b_only, 0);
		CHECK_NEAR(ac->lift.mean, -10.0, 1e-9);
	}
	const struct engi_compare_row *hc = find(&d, "hint", "A", "C");
	CHECK(hc != NULL);
	if (hc) {
		CHECK_INT(hc->tasks, 0);
		CHECK(!hc->tested);
		CHECK(isnan(hc->p_holm));
		CHECK_INT(hc->lift.flag, ENGI_CI_NO_TASKS);
	}
	/* Holm within each condition, by hand: the base family has the
	 * three tested pairs, the hint family the one (A-C is untested) */
	CHECK_INT(d.family, 4);
	CHECK_INT(d.families, 2);
	const char *within[2] = {"base", "hint"};
	size_t sizes[2] = {3, 1};
	for (int w = 0; w < 2; w++) {
		double p[6], adj[6];
		size_t n = 0;
		for (size_t i = 0; i < d.nrows; i++)
			if (d.rows[i].tested && !strcmp(d.rows[i].within, within[w]))
				p[n++] = d.rows[i].test.p;
		CHECK_INT(n, sizes[w]);
		holm_by_hand(p, n, adj);
		n = 0;
		for (size_t i = 0; i < d.nrows; i++) {
			const struct engi_compare_row *row = &d.rows[i];
			if (!row->tested || strcmp(row->within, within[w]))
				continue;
			CHECK_NEAR(row->p_holm, adj[n], 1e-15);
			CHECK_INT(row->family, sizes[w]);
			n++;
		}
	}
	/* the hint family of one: adjusted by itself alone */
	if (ab) {
		const struct engi_compare_row *hab = find(&d, "hint", "A", "B");
		CHECK(hab && hab->tested && hab->p_holm == hab->test.p);
	}
	engi_compare_data_release(&d);
	engi_results_release(&r);
}

static void test_ablation_and_degenerate(void)
{
	struct engi_results r;
	make(&r);
	struct engi_compare_opts o;
	engi_compare_opts_init(&o);
	o.boot.draws = 1000;
	o.axis = ENGI_COMPARE_CONDITIONS;
	o.baseline = "base";
	struct engi_compare_data d;
	engi_compare_data_init(&d);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_compare_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.nrows, 3); /* hint vs base for A, B, C */
	const struct engi_compare_row *a = find(&d, "A", "hint", "base");
	const struct engi_compare_row *b = find(&d, "B", "hint", "base");
	const struct engi_compare_row *c = find(&d, "C", "hint", "base");
	CHECK(a && b && c);
	if (a && b && c) {
		/* identical arms: no interval, p = 1 */
		CHECK_INT(a->lift.flag, ENGI_CI_ALL_ZERO);
		CHECK(isnan(a->lift.lo));
		CHECK_NEAR(a->test.p, 1.0, 0);
		CHECK_NEAR(b->lift.mean, 100.0 * 2 / 6, 1e-9);
		CHECK_INT(c->tasks, 0);
		CHECK_INT(c->b_only, 5);
		/* one family per model: A's and B's of one test each */
		CHECK_INT(a->family, 1);
		CHECK_INT(b->family, 1);
		CHECK_INT(c->family, 0);
		CHECK(b->p_holm == b->test.p);
	}
	CHECK_INT(d.family, 2);
	CHECK_INT(d.families, 2);

	/* few tasks: flagged instead of an interval */
	engi_compare_data_release(&d);
	engi_compare_data_init(&d);
	o.boot.min_tasks = 10;
	CHECK_INT(engi_compare_compute(&d, &r, &o, &err), 0);
	b = find(&d, "B", "hint", "base");
	CHECK(b && b->lift.flag == ENGI_CI_FEW_TASKS && isnan(b->lift.hi));

	/* unknown baseline: names the valid ones */
	engi_compare_data_release(&d);
	engi_compare_data_init(&d);
	o.baseline = "nope";
	CHECK_INT(engi_compare_compute(&d, &r, &o, &err), ENGI_ENOTFOUND);
	CHECK(strstr(err.msg, "'nope'") && strstr(err.msg, "'base', 'hint'"));
	engi_compare_data_release(&d);
	engi_results_release(&r);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 16);
	if (buf && fread(buf, 1, (1 << 16) - 1, f) == 0)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static void test_outputs_deterministic(void)
{
	char dir[] = "/tmp/engi_compare_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char p[2][4][128];
	struct engi_results r;
	make(&r);
	struct engi_error err;
	engi_error_init(&err);
	for (int k = 0; k < 2; k++) {
		struct engi_compare_opts o;
		engi_compare_opts_init(&o);
		o.boot.draws = 500;
		o.baseline = "B";
		struct engi_compare_data d;
		engi_compare_data_init(&d);
		CHECK_INT(engi_compare_compute(&d, &r, &o, &err), 0);
		snprintf(p[k][0], 128, "%s/c%d.csv", dir, k);
		snprintf(p[k][1], 128, "%s/c%d.json", dir, k);
		snprintf(p[k][2], 128, "%s/c%d.md", dir, k);
		CHECK_INT(engi_compare_write_csv(&d, p[k][0], &err), 0);
		CHECK_INT(engi_compare_write_json(&d, p[k][1], &err), 0);
		FILE *f = fopen(p[k][2], "wb");
		CHECK_INT(engi_compare_write_markdown(&d, f, &err), 0);
		fclose(f);
		engi_compare_data_release(&d);
	}
	for (int i = 0; i < 3; i++) {
		char *x = slurp(p[0][i]), *y = slurp(p[1][i]);
		CHECK(x && y && *x && !strcmp(x, y));
		if (i == 0 && x)
			CHECK(strstr(x, "models,base,A,B,6,0,0,75.000000,"
					"33.333333,41.666667,") != NULL);
		if (i == 2 && x)
			CHECK(strstr(x, "### Lift over 'B'") != NULL);
		free(x);
		free(y);
		unlink(p[0][i]);
		unlink(p[1][i]);
	}
	rmdir(dir);
	engi_results_release(&r);
}

static void test_normal(void)
{
	CHECK_NEAR(engi_normal_cdf(1.96), 0.9750021048517795, 1e-15);
	CHECK_NEAR(engi_normal_cdf(0.0), 0.5, 0);
	CHECK_NEAR(engi_normal_quantile(0.975), 1.959963984540054, 1e-13);
	CHECK_NEAR(engi_normal_quantile(0.001), -3.090232306167813, 1e-12);
	CHECK_NEAR(engi_normal_quantile(0.5), 0.0, 1e-15);
	for (double p = 1e-6; p < 1; p *= 3)
		CHECK_NEAR(engi_normal_cdf(engi_normal_quantile(p)), p, 1e-13 * p + 1e-16);
}

int main(void)
{
	test_normal();
	test_model_pairs();
	test_ablation_and_degenerate();
	test_outputs_deterministic();
	return check_exit();
}
