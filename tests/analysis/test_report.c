/*
 * The report on a hand-made sweep whose numbers are worked out by hand:
 * 2 models x 3 tasks x 2 trials, one condition, 12 planned cells, one
 * env_crash and one missing episode.
 *
 *   model m1: t1 1, 1 (both succeed)       -> 1.0  stable success
 *             t2 1, 0 (one succeeds)       -> 0.5  mixed
 *             t3 0, 0 (turn/time limit)    -> 0.0  stable failure
 *             score (1 + 0.5 + 0) / 3 x 100 = 50, success rate 0.5
 *   model m2: t1 1 (success), env_crash    -> 1.0  single scored trial
 *             t2 0.8, 0.6 (no success)     -> 0.7  stable failure
 *                (t2 is scored by optimization quality, so EngiScore and
 *                reward both take 0.7)
 *             t3 agent_error 0, trial 2 missing -> 0.0 single trial
 *             score (1 + 0.7 + 0) / 3 x 100 = 56.67, success rate 1/3
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/report.h"
#include "engi/stats.h"

#include <stdlib.h>
#include <unistd.h>

static void set_task(struct engi_res_task *t, const char *id, const char *type, const char *domain,
		     const char *interface)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->type, sizeof(t->type), "%s", type);
	snprintf(t->domain, sizeof(t->domain), "%s", domain);
	snprintf(t->interface, sizeof(t->interface), "%s", interface);
	snprintf(t->scoring, sizeof(t->scoring), "binary");
}

static void add_episode(struct engi_results *r, const char *task, const char *model, int trial,
			const char *outcome, int success, double score, int turns)
{
	struct engi_res_episode *e = &r->episodes[r->nepisodes++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cell, sizeof(e->cell), "%02zu", r->nepisodes);
	snprintf(e->task_id, sizeof(e->task_id), "%s", task);
	snprintf(e->model, sizeof(e->model), "%s", model);
	snprintf(e->condition, sizeof(e->condition), "base");
	e->trial = trial;
	snprintf(e->outcome, sizeof(e->outcome), "%s", outcome);
	e->attempts = 1;
	e->success = success;
	e->score = score;
	e->turns = turns;
	e->tokens_in = 100;
	e->tokens_out = 10;
	e->cost_usd = 0.25;
	e->wall_s = 60.0;
}

/* The sweep of the file comment; room for extra episodes. */
static void make_results(struct engi_results *r)
{
	engi_results_init(r);
	r->ntasks = 3;
	r->tasks = engi_calloc(3, sizeof(*r->tasks));
	set_task(&r->tasks[0], "t1", "single", "CAD", "cli");
	set_task(&r->tasks[1], "t2", "optimization", "CAE", "gui");
	set_task(&r->tasks[2], "t3", "single", "CAD", "cli");
	snprintf(r->tasks[1].scoring, sizeof(r->tasks[1].scoring), "optimization");
	snprintf(r->tasks[0].software, sizeof(r->tasks[0].software), "openscad, freecad");
	snprintf(r->tasks[1].software, sizeof(r->tasks[1].software), "calculix");
	snprintf(r->tasks[2].software, sizeof(r->tasks[2].software), "openscad");
	r->nmodels = 2;
	r->models = engi_calloc(2, sizeof(*r->models));
	snprintf(r->models[0].name, sizeof(r->models[0].name), "m1");
	snprintf(r->models[1].name, sizeof(r->models[1].name), "m2");
	r->nconditions = 1;
	r->conditions = engi_calloc(1, sizeof(*r->conditions));
	snprintf(r->conditions[0].name, sizeof(r->conditions[0].name), "base");
	r->planned_cells = 12;
	r->episodes = engi_calloc(16, sizeof(*r->episodes));

	add_episode(r, "t1", "m1", 1, "done", 1, 1.0, 10);
	add_episode(r, "t1", "m1", 2, "done", 1, 1.0, 10);
	add_episode(r, "t2", "m1", 1, "done", 1, 1.0, 10);
	add_episode(r, "t2", "m1", 2, "fail_declared", 0, 0.0, 10);
	add_episode(r, "t3", "m1", 1, "turn_limit", 0, 0.0, 10);
	add_episode(r, "t3", "m1", 2, "time_limit", 0, 0.0, 10);

	add_episode(r, "t1", "m2", 1, "done", 1, 1.0, 4);
	add_episode(r, "t1", "m2", 2, "env_crash", 0, 0.0, 0);
	add_episode(r, "t2", "m2", 1, "done", 0, 0.8, 6);
	add_episode(r, "t2", "m2", 2, "done", 0, 0.6, 8);
	add_episode(r, "t3", "m2", 1, "agent_error", 0, 0.0, 2);
}

/* The row of a model that has tasks in the group. */
static const struct engi_report_row *row_of(const struct engi_report_data *d, int table,
					    const char *group, const char *model)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].table == table && strcmp(d->rows[i].group, group) == 0 &&
		    strcmp(d->rows[i].model, model) == 0 && d->rows[i].tasks > 0)
			return &d->rows[i];
	return NULL;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int c;
	while ((c = fgetc(f)) != EOF) {
		if (n + 2 > cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
		}
		buf[n++] = (char)c;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_numbers(void)
{
	struct engi_results r;
	make_results(&r);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);

	CHECK_INT(d.planned, 12);
	CHECK_INT(d.recorded, 11);
	CHECK_INT(d.missing, 1);
	CHECK_INT(d.extra, 0);
	CHECK_INT(d.scored, 10);
	CHECK_INT(d.env_crash, 1);
	CHECK_INT(d.duplicates, 0);
	CHECK_INT(d.other_outcome, 0);
	CHECK_INT(d.tasks_listed, 3);
	CHECK_INT(d.tasks_unrun, 0);
	CHECK_INT(d.nmodels, 2);
	CHECK_INT(d.nconditions, 1);
	CHECK_INT(d.narms, 2);
	/* overall 1 group, type 2, domain 2, interface 2, software 3 (calculix,
	 * freecad, openscad): 10 groups x 2 arms */
	CHECK_INT(d.nrows, 20);
	CHECK_INT(d.ntables, ENGI_REPORT_BUILTIN_TABLES);
	CHECK_STR(d.table_name[ENGI_REPORT_BY_SOFTWARE], "software");
	CHECK_INT(d.table_groups[ENGI_REPORT_BY_SOFTWARE], 3);
	CHECK_INT(d.table_groups[ENGI_REPORT_BY_TYPE], 2);

	const struct engi_report_row *m1 = row_of(&d, ENGI_REPORT_OVERALL, "all", "m1");
	const struct engi_report_row *m2 = row_of(&d, ENGI_REPORT_OVERALL, "all", "m2");
	CHECK(m1 && m2);
	if (!m1 || !m2)
		goto out;
	CHECK_STR(m1->condition, "base");
	CHECK_INT(m1->tasks, 3);
	CHECK_INT(m1->episodes, 6);
	CHECK_INT(m1->scored, 6);
	CHECK_NEAR(m1->score.mean, 50.0, 1e-12);
	CHECK_INT(m1->score.flag, ENGI_CI_FEW_TASKS);
	CHECK(isnan(m1->score.lo) && isnan(m1->score.hi));
	CHECK_NEAR(m1->success_rate, 0.5, 1e-15);
	CHECK_INT(m1->stable_success, 1);
	CHECK_INT(m1->mixed, 1);
	CHECK_INT(m1->stable_failure, 1);
	CHECK_INT(m1->single_trial, 0);
	CHECK_INT(m1->outcomes[ENGI_REPORT_DONE], 3);
	CHECK_INT(m1->outcomes[ENGI_REPORT_FAIL_DECLARED], 1);
	CHECK_INT(m1->outcomes[ENGI_REPORT_TURN_LIMIT], 1);
	CHECK_INT(m1->outcomes[ENGI_REPORT_TIME_LIMIT], 1);
	CHECK_INT(m1->outcomes[ENGI_REPORT_ENV_CRASH], 0);
	CHECK_NEAR(m1->mean_turns, 10.0, 0);
	CHECK_INT(m1->tokens_in, 600);
	CHECK_INT(m1->tokens_out, 60);
	CHECK_NEAR(m1->cost_usd, 1.5, 0);
	CHECK_NEAR(m1->mean_wall_s, 60.0, 0);

	CHECK_INT(m2->tasks, 3);
	CHECK_INT(m2->episodes, 5);
	CHECK_INT(m2->scored, 4);
	CHECK_NEAR(m2->score.mean, 170.0 / 3.0, 1e-12);
	CHECK_NEAR(m2->success_rate, 1.0 / 3.0, 1e-15);
	CHECK_INT(m2->stable_success, 0);
	CHECK_INT(m2->mixed, 0);
	CHECK_INT(m2->stable_failure, 1);
	CHECK_INT(m2->single_trial, 2);
	CHECK_INT(m2->outcomes[ENGI_REPORT_DONE], 3);
	CHECK_INT(m2->outcomes[ENGI_REPORT_ENV_CRASH], 1);
	CHECK_INT(m2->outcomes[ENGI_REPORT_AGENT_ERROR], 1);
	CHECK_NEAR(m2->mean_turns, 5.0, 0); /* (4 + 6 + 8 + 2) / 4 scored */
	CHECK_INT(m2->tokens_in, 500);	    /* the crash spent tokens too */
	CHECK_NEAR(m2->cost_usd, 1.25, 0);

	const struct engi_report_row *g;
	g = row_of(&d, ENGI_REPORT_BY_TYPE, "single", "m1");
	CHECK(g && g->tasks == 2 && fabs(g->score.mean - 50.0) < 1e-12);
	g = row_of(&d, ENGI_REPORT_BY_TYPE, "optimization", "m2");
	CHECK(g && g->tasks == 1 && fabs(g->score.mean - 70.0) < 1e-12);
	CHECK(g && g->stable_failure == 1 && g->episodes == 2);
	g = row_of(&d, ENGI_REPORT_BY_DOMAIN, "CAD", "m2");
	CHECK(g && g->tasks == 2 && fabs(g->score.mean - 50.0) < 1e-12);
	CHECK(g && g->single_trial == 2 && g->outcomes[ENGI_REPORT_ENV_CRASH] == 1);
	g = row_of(&d, ENGI_REPORT_BY_INTERFACE, "gui", "m1");
	CHECK(g && g->tasks == 1 && g->mixed == 1);
	/* t1 uses two programs: it counts in both groups */
	g = row_of(&d, ENGI_REPORT_BY_SOFTWARE, "openscad", "m1");
	CHECK(g && g->tasks == 2 && fabs(g->score.mean - 50.0) < 1e-12);
	g = row_of(&d, ENGI_REPORT_BY_SOFTWARE, "freecad", "m1");
	CHECK(g && g->tasks == 1 && fabs(g->score.mean - 100.0) < 1e-12);
	g = row_of(&d, ENGI_REPORT_BY_SOFTWARE, "calculix", "m2");
	CHECK(g && g->tasks == 1 && fabs(g->reward.mean - 70.0) < 1e-12);
	/* EngiScore and reward agree on binary and optimization tasks */
	CHECK_NEAR(m2->reward.mean, 170.0 / 3.0, 1e-12);
	/* groups sorted by name */
	CHECK_STR(d.rows[d.table_first[ENGI_REPORT_BY_TYPE]].group, "optimization");
out:
	engi_report_data_release(&d);
	engi_results_release(&r);
}

/* With min_tasks 2 the overall interval is the shared bootstrap's. */
static void test_interval_wiring(void)
{
	struct engi_results r;
	make_results(&r);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.min_tasks = 2;
	o.draws = 2000;
	o.seed = 77;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &o, NULL), 0);

	double x[] = {1.0, 0.5, 0.0, 1.0, 0.7, 0.0};
	struct engi_boot_opts b = {77, 2000, 0.95, 2, ENGI_INTERVAL_PERCENTILE};
	struct engi_ci ci[2];
	CHECK_INT(engi_boot_shared(x, NULL, 2, 3, &b, ci, NULL, NULL), 0);
	for (size_t a = 0; a < 2 && d.nrows >= 2; a++) {
		const struct engi_report_row *row = &d.rows[a];
		CHECK_INT(row->score.flag, ENGI_CI_OK);
		CHECK_NEAR(row->score.lo, 100.0 * ci[a].lo, 1e-12);
		CHECK_NEAR(row->score.hi, 100.0 * ci[a].hi, 1e-12);
		CHECK_INT(row->score.draws, 2000);
		CHECK(row->score.lo <= row->score.mean && row->score.mean <= row->score.hi);
	}
	engi_report_data_release(&d);
	engi_results_release(&r);
}

static void test_outputs(void)
{
	char dir[] = "/tmp/engi-report-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char pa[64], pb[64], path[80];
	snprintf(pa, sizeof(pa), "%s/a", dir);
	snprintf(pb, sizeof(pb), "%s/b", dir);

	struct engi_results r;
	make_results(&r);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	char *md[2] = {NULL, NULL};
	size_t mdlen[2] = {0, 0};
	for (int run = 0; run < 2; run++) {
		FILE *f = open_memstream(&md[run], &mdlen[run]);
		o.prefix = run ? pb : pa;
		struct engi_error err;
		engi_error_init(&err);
		CHECK_INT(engi_report(&r, &o, f, &err), 0);
		CHECK_STR(err.msg, "");
		fclose(f);
	}
	CHECK(mdlen[0] == mdlen[1] && memcmp(md[0], md[1], mdlen[0]) == 0);

	const char *m = md[0];
	CHECK(strstr(m, "# Sweep report") != NULL);
	CHECK(strstr(m, "## Episodes") != NULL);
	CHECK(strstr(m, "## Scores") != NULL);
	CHECK(strstr(m, "## Trial stability") != NULL);
	CHECK(strstr(m, "## Terminal outcomes") != NULL);
	CHECK(strstr(m, "## Effort and cost") != NULL);
	CHECK(strstr(m, "## Score by type") != NULL);
	CHECK(strstr(m, "## Score by domain") != NULL);
	CHECK(strstr(m, "## Score by interface") != NULL);
	CHECK(strstr(m, "## Score by software") != NULL);
	CHECK_INT(count_of(m, "\nDenominator: "), 9);
	CHECK(strstr(m, "| missing (planned - recorded) | 1 |") != NULL);
	CHECK(strstr(m, "| env_crash (infrastructure failure, not run, not "
			"scored) | 1 |"));
	CHECK(strstr(m, "## Episodes not run") != NULL);
	CHECK(strstr(m, "- m2: 1 episode not run: environment lost\n") != NULL);
	CHECK(strstr(m, "| m1 | 3 | 6 | 50.0 | too few tasks (3 < 5) | 50.0 | "
			"too few tasks (3 < 5) | 50.0 % |"));
	CHECK(strstr(m, "| m2 | 3 | 4 | 56.7 | too few tasks (3 < 5) | 56.7 | "
			"too few tasks (3 < 5) | 33.3 % |"));
	CHECK(strstr(m, "| model | calculix | freecad | openscad |") != NULL);
	CHECK(strstr(m, "| m1 | 3 | 1 | 1 | 1 | 0 |") != NULL);
	CHECK(strstr(m, "| m2 | 1 | 0 | 0 | 1 | 2 |") != NULL);
	CHECK(strstr(m, "| m2 | 5 | 3 | 0 | 0 | 0 | 1 | 0 | 1 | 0 |") != NULL);
	CHECK(strstr(m, "| model | optimization | single |") != NULL);
	CHECK(strstr(m, "| m2 | 70.0 (n=1, few tasks) | "
			"50.0 (n=2, few tasks) |") != NULL);
	/* one condition: no condition column */
	CHECK(strstr(m, "| condition |") == NULL);

	const char *ext[] = {"csv", "json"};
	for (int i = 0; i < 2; i++) {
		size_t la, lb;
		snprintf(path, sizeof(path), "%s.%s", pa, ext[i]);
		char *a = slurp(path, &la);
		snprintf(path, sizeof(path), "%s.%s", pb, ext[i]);
		char *b = slurp(path, &lb);
		CHECK(a && b);
		if (a && b) {
			CHECK(la > 100);
			CHECK(la == lb && memcmp(a, b, la) == 0);
		}
		if (a && i == 0) {
			/* header + 20 rows */
			CHECK_INT(count_of(a, "\r\n"), 21);
			CHECK(strncmp(a, "table,group,model,condition,tasks,", 34) == 0);
			CHECK(strstr(a, "\r\noverall,all,m1,base,3,6,6,50,,,"
					"few_tasks,0,50,,,few_tasks,"
					"0.5,1,1,1,0,3,1,1,1,0,0,0,0,0,,"
					"10,60,600,60,1.5\r\n") != NULL);
			CHECK(strstr(a, "\r\ntype,optimization,m2,base,1,2,2,70,,,"
					"few_tasks,0,70,,,few_tasks,"
					"0,0,0,1,0,2,0,0,0,0,0,0,0,0,,7,"
					"60,200,20,0.5\r\n") != NULL);
		}
		if (a && i == 1) {
			CHECK(strncmp(a, "{\n  \"format\": \"engisweep-report\",", 33) == 0);
			CHECK(strstr(a, "\"planned\": 12, \"missing\": 1, "
					"\"recorded\": 11,") != NULL);
			CHECK(strstr(a, "{\"table\": \"overall\", "
					"\"group\": \"all\", "
					"\"model\": \"m1\", "
					"\"condition\": \"base\", "
					"\"tasks\": 3, \"episodes\": 6, "
					"\"scored\": 6, \"score_x100\": 50, "
					"\"ci_lo_x100\": null, "
					"\"ci_hi_x100\": null, "
					"\"ci_flag\": \"few_tasks\",") != NULL);
			CHECK_INT(count_of(a, "{\"table\": "), 20);
			CHECK(strstr(a, "\"tables\": [\"overall\", \"type\", "
					"\"domain\", \"interface\", "
					"\"software\"],") != NULL);
			CHECK(strstr(a, "\"evidence\"") == NULL);
		}
		free(a);
		free(b);
		remove(path);
		snprintf(path, sizeof(path), "%s.%s", pa, ext[i]);
		remove(path);
	}
	rmdir(dir);
	free(md[0]);
	free(md[1]);
	engi_results_release(&r);
}

/* Duplicates, unknown outcomes and tasks, awkward names, two conditions. */
static void test_edges(void)
{
	struct engi_results r;
	make_results(&r);
	/* a repeat of m1/t1/1 that crashed: the scored record is kept */
	add_episode(&r, "t1", "m1", 1, "env_crash", 0, 0.0, 0);
	/* an outcome nobody knows is counted, not scored */
	add_episode(&r, "t2", "m2", 3, "exploded", 1, 1.0, 1);
	/* a task missing from /tasks, a model name that needs quoting */
	add_episode(&r, "t9", "a,\"b|c\"\n", 1, "done", 1, 1.0, 1);
	snprintf(r.episodes[r.nepisodes - 1].condition, 64, "other");

	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 200;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &o, NULL), 0);
	CHECK_INT(d.duplicates, 1);
	CHECK_INT(d.other_outcome, 1);
	CHECK_INT(d.unknown_task, 1);
	CHECK_INT(d.recorded, 13);
	CHECK_INT(d.extra, 1);
	CHECK_INT(d.missing, 0);
	CHECK_INT(d.nmodels, 3);
	CHECK_INT(d.nconditions, 2);
	CHECK_INT(d.narms, 6);
	const struct engi_report_row *m1 = &d.rows[0];
	CHECK_STR(m1->model, "m1");
	CHECK_STR(m1->condition, "base");
	CHECK_INT(m1->episodes, 6);
	CHECK_NEAR(m1->score.mean, 50.0, 1e-12);
	const struct engi_report_row *m2 = &d.rows[2];
	CHECK_STR(m2->model, "m2");
	CHECK_INT(m2->outcomes[ENGI_REPORT_OTHER], 1);
	CHECK_INT(m2->scored, 4);
	CHECK_NEAR(m2->score.mean, 170.0 / 3.0, 1e-12);
	const struct engi_report_row *odd = &d.rows[5];
	CHECK_STR(odd->condition, "other");
	CHECK_INT(odd->tasks, 1);
	const struct engi_report_row *u =
	    row_of(&d, ENGI_REPORT_BY_TYPE, ENGI_REPORT_UNKNOWN_GROUP, "a,\"b|c\"\n");
	CHECK(u && u->tasks == 1);
	/* the unknown group comes last */
	size_t last = d.table_first[ENGI_REPORT_BY_TYPE] +
		      (d.table_groups[ENGI_REPORT_BY_TYPE] - 1) * d.narms;
	CHECK_STR(d.rows[last].group, ENGI_REPORT_UNKNOWN_GROUP);

	char dir[] = "/tmp/engi-report-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[80];
	snprintf(path, sizeof(path), "%s/e.csv", dir);
	CHECK_INT(engi_report_write_csv(&d, path, NULL), 0);
	size_t len;
	char *csv = slurp(path, &len);
	CHECK(csv && strstr(csv, ",\"a,\"\"b|c\"\"\n\",other,") != NULL);
	free(csv);
	remove(path);
	snprintf(path, sizeof(path), "%s/e.json", dir);
	CHECK_INT(engi_report_write_json(&d, path, NULL), 0);
	char *json = slurp(path, &len);
	CHECK(json && strstr(json, "\"model\": \"a,\\\"b|c\\\"\\n\"") != NULL);
	free(json);
	remove(path);

	char *md = NULL;
	size_t mdlen = 0;
	FILE *f = open_memstream(&md, &mdlen);
	CHECK_INT(engi_report_write_markdown(&d, f, NULL), 0);
	fclose(f);
	CHECK(strstr(md, "| a,\"b\\|c\"  | other |") != NULL);
	CHECK(strstr(md, "| model | condition |") != NULL);
	CHECK(strstr(md, "| unknown outcome (not scored) | 1 |") != NULL);
	CHECK(strstr(md, "| duplicate records ignored | 1 |") != NULL);
	free(md);

	struct engi_error err;
	engi_error_init(&err);
	snprintf(path, sizeof(path), "%s/no/such/dir/x.csv", dir);
	CHECK_INT(engi_report_write_csv(&d, path, &err), ENGI_EIO);
	CHECK(strncmp(err.msg, "cannot open report file '", 25) == 0);
	rmdir(dir);
	engi_report_data_release(&d);

	/* a scored episode without a finite score is bad input, named */
	r.episodes[0].score = NAN;
	engi_report_data_init(&d);
	engi_error_init(&err);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "making the report: episode '01': score is not a "
			   "finite number");
	CHECK_INT(d.nrows, 0);
	engi_report_data_release(&d);

	engi_error_init(&err);
	o.level = 0;
	CHECK_INT(engi_report(&r, &o, NULL, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "confidence level 0 is outside (0, 1)");
	engi_results_release(&r);
}

/* No results at all still makes a report that says so. */
static void test_empty(void)
{
	struct engi_results r;
	engi_results_init(&r);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &o, NULL), 0);
	CHECK_INT(d.nrows, 0);
	char *md = NULL;
	size_t mdlen = 0;
	FILE *f = open_memstream(&md, &mdlen);
	CHECK_INT(engi_report_write_markdown(&d, f, NULL), 0);
	fclose(f);
	CHECK(strstr(md, "No model has a recorded episode.") != NULL);
	CHECK(strstr(md, "missing episodes cannot be counted") != NULL);
	free(md);
	engi_report_data_release(&d);
	engi_results_release(&r);
}

/* Every allocation that fails is reported as ENGI_ENOMEM, never a crash. */
static void test_alloc_failures(void)
{
	struct engi_results r;
	make_results(&r);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 50;
	int ok = 0;
	for (long n = 1; n <= 200 && !ok; n++) {
		struct engi_report_data d;
		engi_report_data_init(&d);
		struct engi_error err;
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = engi_report_compute(&d, &r, &o, &err);
		engi_alloc_fail_after(0);
		CHECK(rc == 0 || rc == ENGI_ENOMEM);
		if (rc == ENGI_ENOMEM)
			CHECK(strstr(err.msg, "out of memory") != NULL);
		ok = rc == 0;
		engi_report_data_release(&d);
	}
	CHECK(ok);
	engi_results_release(&r);
}

/*
 * EngiScore and the reward part where a task is not scored by optimization
 * and its scores are not its success flags: t3 becomes a continuous-reward
 * task where m1 reaches 0.4 and 0.6 without success. m1: EngiScore (1 +
 * 0.5 + 0) / 3 = 50, reward (1 + 0.5 + 0.5) / 3 = 66.67.
 */
static void test_reward(void)
{
	struct engi_results r;
	make_results(&r);
	snprintf(r.tasks[2].scoring, sizeof(r.tasks[2].scoring), "continuous");
	r.episodes[4].score = 0.4;
	r.episodes[5].score = 0.6;
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.min_tasks = 2;
	o.draws = 500;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &o, NULL), 0);
	const struct engi_report_row *m1 = row_of(&d, ENGI_REPORT_OVERALL, "all", "m1");
	CHECK(m1 != NULL);
	if (m1) {
		CHECK_NEAR(m1->score.mean, 50.0, 1e-12);
		CHECK_NEAR(m1->reward.mean, 200.0 / 3.0, 1e-12);
		CHECK_INT(m1->reward.flag, ENGI_CI_OK);
		CHECK_INT(m1->reward.ntasks, 3);
		/* the reward's interval is the shared bootstrap's too */
		double x[] = {1.0, 0.5, 0.5};
		struct engi_boot_opts b = {o.seed, 500, 0.95, 2, ENGI_INTERVAL_PERCENTILE};
		struct engi_ci ci;
		CHECK_INT(engi_boot_shared(x, NULL, 1, 3, &b, &ci, NULL, NULL), 0);
		CHECK_NEAR(m1->reward.lo, 100.0 * ci.lo, 1e-12);
		CHECK_NEAR(m1->reward.hi, 100.0 * ci.hi, 1e-12);
	}
	const struct engi_report_row *g = row_of(&d, ENGI_REPORT_BY_TYPE, "single", "m1");
	CHECK(g && fabs(g->score.mean - 50.0) < 1e-12 && fabs(g->reward.mean - 75.0) < 1e-12);
	char *md = NULL;
	size_t mdlen = 0;
	FILE *f = open_memstream(&md, &mdlen);
	CHECK_INT(engi_report_write_markdown(&d, f, NULL), 0);
	fclose(f);
	CHECK(strstr(md, "| m1 | 3 | 6 | 50.0 | ") != NULL && strstr(md, " | 66.7 | ") != NULL);
	CHECK(strstr(md, "| m1 | 50.0 [") != NULL && strstr(md, "(n=2); reward 75.0 |") != NULL);
	free(md);
	engi_report_data_release(&d);
	engi_results_release(&r);
}

static void add_meta(struct engi_results *r, const char *task, const char *key, const char *value,
		     const char *conflict)
{
	struct engi_res_task_meta *m = &r->task_meta[r->ntask_meta++];
	memset(m, 0, sizeof(*m));
	snprintf(m->task_id, sizeof(m->task_id), "%s", task);
	snprintf(m->key, sizeof(m->key), "%s", key);
	snprintf(m->value, sizeof(m->value), "%s", value);
	snprintf(m->conflict, sizeof(m->conflict), "%s", conflict);
}

/* --by: a /tasks field, an extra metadata key, repeats, unknown keys and a
 * key whose value is not the task's. */
static void test_by_key(void)
{
	struct engi_results r;
	make_results(&r);
	r.task_meta = engi_calloc(4, sizeof(*r.task_meta));
	add_meta(&r, "t1", "lab", "north", "");
	add_meta(&r, "t3", "lab", "north", "");
	add_meta(&r, "t2", "lab", "", "");
	add_meta(&r, "t1", "run", "x",
		 "runs.csv: line 3: task 't1' has 'y' "
		 "here and 'x' on line 2");
	const char *by[] = {"lab", "scoring", "type", "lab"};
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.by = by;
	o.nby = 4;
	o.draws = 200;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &o, NULL), 0);
	CHECK_INT(d.ntables, ENGI_REPORT_BUILTIN_TABLES + 2);
	CHECK_STR(d.table_name[5], "lab");
	CHECK_STR(d.table_name[6], "scoring");
	CHECK_INT(d.table_groups[5], 2); /* north, (unknown) */
	CHECK_INT(d.table_groups[6], 2); /* binary, optimization */
	const struct engi_report_row *g = row_of(&d, 5, "north", "m1");
	CHECK(g && g->tasks == 2 && fabs(g->score.mean - 50.0) < 1e-12);
	g = row_of(&d, 5, ENGI_REPORT_UNKNOWN_GROUP, "m2");
	CHECK(g && g->tasks == 1 && fabs(g->score.mean - 70.0) < 1e-12);
	g = row_of(&d, 6, "optimization", "m1");
	CHECK(g && g->tasks == 1);
	char *md = NULL;
	size_t mdlen = 0;
	FILE *f = open_memstream(&md, &mdlen);
	CHECK_INT(engi_report_write_markdown(&d, f, NULL), 0);
	fclose(f);
	CHECK(strstr(md, "## Score by lab") != NULL);
	CHECK(strstr(md, "## Score by scoring") != NULL);
	CHECK_INT(count_of(md, "## Score by type"), 1);
	free(md);
	engi_report_data_release(&d);

	struct engi_error err;
	const char *unknown[] = {"colour"};
	o.by = unknown;
	o.nby = 1;
	engi_error_init(&err);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), ENGI_EINVALID);
	CHECK(strstr(err.msg, "--by 'colour': no task has this metadata key") != NULL);
	engi_report_data_release(&d);

	const char *run[] = {"run"};
	o.by = run;
	engi_error_init(&err);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), ENGI_EINVALID);
	CHECK(strstr(err.msg, "--by 'run': not task metadata: runs.csv: line "
			      "3: task 't1' has 'y' here") != NULL);
	engi_report_data_release(&d);
	engi_results_release(&r);
}

/* engi_report with the evidence: the ladder in the Markdown, in
 * <prefix>.evidence.csv and under "evidence" in <prefix>.json. */
static void test_evidence_json(void)
{
	struct engi_results r;
	make_results(&r);
	r.assertions = engi_calloc(2, sizeof(*r.assertions));
	r.nassertions = 2;
	snprintf(r.assertions[0].cell, ENGI_CELL_STR, "01");
	snprintf(r.assertions[0].name, 64, "file");
	snprintf(r.assertions[0].stage, 32, "delivery");
	snprintf(r.assertions[0].state, 16, "pass");
	r.assertions[0].required = 1;
	r.assertions[1] = r.assertions[0];
	snprintf(r.assertions[1].cell, ENGI_CELL_STR, "07");
	snprintf(r.assertions[1].state, 16, "fail");
	char dir[] = "/tmp/engi-report-test-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char prefix[64], path[96];
	snprintf(prefix, sizeof(prefix), "%s/p", dir);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.prefix = prefix;
	o.evidence = 1;
	o.draws = 200;
	char *md = NULL;
	size_t mdlen = 0, len;
	FILE *f = open_memstream(&md, &mdlen);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_report(&r, &o, f, &err), 0);
	fclose(f);
	CHECK(md && strstr(md, "delivery") != NULL);
	free(md);
	snprintf(path, sizeof(path), "%s.json", prefix);
	char *json = slurp(path, &len);
	CHECK(json && strstr(json, "\"evidence\": {\"stages\": [\"delivery\"],") != NULL);
	CHECK(json && strstr(json, "{\"model\": \"m1\", \"condition\": "
				   "\"base\", \"episodes\": 6, \"tasks\": 3,") != NULL);
	/* t1 is where delivery applies: m1 has 2 scored episodes there, one
	 * with a passing verdict; m2 one, failing */
	CHECK(json && strstr(json, "\"ladder\": [{\"stage\": \"delivery\", "
				   "\"denominator\": 2, \"passed\": 1, "
				   "\"pass_rate\": 0.5, \"first_failed\": 1}]") != NULL);
	CHECK(json && json[len - 1] == '\n' && json[len - 2] == '}');
	free(json);
	remove(path);
	snprintf(path, sizeof(path), "%s.evidence.csv", prefix);
	char *csv = slurp(path, &len);
	CHECK(csv && strncmp(csv, "model,condition,", 16) == 0);
	free(csv);
	remove(path);
	snprintf(path, sizeof(path), "%s.csv", prefix);
	remove(path);
	rmdir(dir);
	engi_results_release(&r);
}

/* Renders the report of r (prefix under a fresh folder): the Markdown and
 * the JSON text, both to be freed. */
static void render(const struct engi_results *r, char **md, char **json)
{
	char dir[] = "/tmp/engi_report_infra_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char prefix[300], path[320];
	snprintf(prefix, sizeof(prefix), "%s/r", dir);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 200;
	o.prefix = prefix;
	size_t n = 0;
	FILE *f = open_memstream(md, &n);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_report(r, &o, f, &err), 0);
	CHECK_STR(err.msg, "");
	fclose(f);
	snprintf(path, sizeof(path), "%s.json", prefix);
	*json = slurp(path, &n);
	CHECK(*json != NULL);
	remove(path);
	snprintf(path, sizeof(path), "%s.csv", prefix);
	remove(path);
	rmdir(dir);
}

/* A model whose endpoint was down on every episode has no score (not 0)
 * and 12 episodes not run, by reason, in every rendering; the other model
 * is scored as usual. */
static void test_dead_endpoint(void)
{
	struct engi_results r;
	engi_results_init(&r);
	r.ntasks = 6;
	r.tasks = engi_calloc(6, sizeof(*r.tasks));
	r.episodes = engi_calloc(24, sizeof(*r.episodes));
	for (int t = 0; t < 6; t++) {
		char id[8];
		snprintf(id, sizeof(id), "t%d", t);
		set_task(&r.tasks[t], id, "single", "CAD", "cli");
		for (int k = 0; k < 2; k++) {
			add_episode(&r, id, "alive", k, "done", t % 2, t % 2, 5);
			add_episode(&r, id, "dead", k, "infra_error", 0, 0.0, 0);
			snprintf(r.episodes[r.nepisodes - 1].infra, sizeof(r.episodes[0].infra),
				 "endpoint unavailable");
		}
	}
	r.planned_cells = 24;
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 200;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.infra_error, 12);
	CHECK_INT(d.scored, 12);
	CHECK_INT(d.missing, 0);
	const struct engi_report_row *dead = NULL, *alive = NULL;
	for (size_t i = 0; i < d.narms; i++) {
		const struct engi_report_row *w = &d.rows[i];
		if (!strcmp(w->model, "dead"))
			dead = w;
		if (!strcmp(w->model, "alive"))
			alive = w;
	}
	CHECK(dead && alive);
	if (dead && alive) {
		CHECK_INT(dead->tasks, 0);
		CHECK_INT(dead->scored, 0);
		CHECK_INT(dead->episodes, 12);
		CHECK(isnan(dead->score.mean));
		CHECK_INT(dead->score.flag, ENGI_CI_NO_TASKS);
		CHECK_INT(dead->not_run, 12);
		CHECK_STR(dead->not_run_reasons, "endpoint unavailable: 12");
		CHECK_INT(dead->outcomes[ENGI_REPORT_INFRA_ERROR], 12);
		CHECK_INT(alive->tasks, 6);
		CHECK_NEAR(alive->score.mean, 50.0, 1e-12);
		CHECK_INT(alive->score.flag, ENGI_CI_OK);
		CHECK_INT(alive->not_run, 0);
	}
	CHECK_INT(d.nnot_run, 1);
	engi_report_data_release(&d);

	char *md = NULL, *json = NULL;
	render(&r, &md, &json);
	CHECK(md && strstr(md, "- dead: 12 episodes not run: endpoint "
			       "unavailable; no scored episode, no score\n"));
	CHECK(md && strstr(md, "| dead | 0 | 0 | no score | no scored episode "
			       "| no score |"));
	CHECK(md && strstr(md, "| alive | 6 | 12 | 50.0 | ["));
	CHECK(md && strstr(md, "| infra_error (infrastructure failure, not "
			       "run, not scored) | 12 |"));
	CHECK(json && strstr(json, "\"not_run\": [\n    {\"model\": \"dead\", "
				   "\"condition\": \"base\", \"reason\": "
				   "\"endpoint unavailable\", \"episodes\": "
				   "12}\n  ],"));
	CHECK(json && strstr(json, "\"model\": \"dead\", \"condition\": "
				   "\"base\", \"tasks\": 0, \"episodes\": 12, "
				   "\"scored\": 0, \"score_x100\": null,"));
	CHECK(json && strstr(json, "\"not_run\": 12, \"not_run_reasons\": "
				   "\"endpoint unavailable: 12\""));
	free(md);
	free(json);
	engi_results_release(&r);
}

/* Episodes of different engisweep versions, or verdicts of one verifier
 * kind at two versions, are named with their counts; two kinds on
 * different tasks are not a mix. */
static void test_provenance(void)
{
	struct engi_results r;
	make_results(&r);
	for (size_t i = 0; i < r.nepisodes; i++) {
		struct engi_res_episode *e = &r.episodes[i];
		snprintf(e->version, sizeof(e->version), "%s", i < 8 ? "1.4.0" : "1.5.0");
		snprintf(e->verifier, sizeof(e->verifier), "%s",
			 !strcmp(e->task_id, "t2") ? "fe@2" : "mesh@1");
	}
	char *md = NULL, *json = NULL;
	render(&r, &md, &json);
	CHECK(md && strstr(md, "**Warning: episodes from different engisweep "
			       "versions:** 1.4.0 (8 episodes), 1.5.0 (3 "
			       "episodes).\n"));
	CHECK(md && !strstr(md, "different verifiers"));
	CHECK(json && strstr(json, "\"provenance\": {\"versions\": "
				   "[{\"value\": \"1.4.0\", \"episodes\": 8}, "
				   "{\"value\": \"1.5.0\", \"episodes\": 3}], "
				   "\"verifiers\": [{\"value\": \"fe@2\", "
				   "\"episodes\": 4}, {\"value\": \"mesh@1\", "
				   "\"episodes\": 7}], \"mixed_versions\": true, "
				   "\"mixed_verifiers\": false}"));
	free(md);
	free(json);

	/* one kind at two versions */
	snprintf(r.episodes[0].verifier, sizeof(r.episodes[0].verifier), "mesh@2");
	for (size_t i = 0; i < r.nepisodes; i++)
		snprintf(r.episodes[i].version, sizeof(r.episodes[i].version), "1.5.0");
	render(&r, &md, &json);
	CHECK(md && strstr(md, "**Warning: verdicts from different verifiers "
			       "(kind@version):** fe@2 (4 episodes), mesh@1 "
			       "(6 episodes), mesh@2 (1 episode).\n"));
	CHECK(md && !strstr(md, "different engisweep versions"));
	CHECK(json && strstr(json, "\"mixed_versions\": false, "
				   "\"mixed_verifiers\": true}"));
	free(md);
	free(json);
	engi_results_release(&r);
}

/* The same results with tasks and episodes in another order give the same
 * intervals: tasks are resampled in the order of their ids. */
static void test_task_order(void)
{
	struct engi_results r[2];
	for (int k = 0; k < 2; k++) {
		engi_results_init(&r[k]);
		r[k].ntasks = 8;
		r[k].tasks = engi_calloc(8, sizeof(*r[k].tasks));
		r[k].episodes = engi_calloc(16, sizeof(*r[k].episodes));
		for (int i = 0; i < 8; i++) {
			int t = k ? 7 - i : i;
			char id[8];
			snprintf(id, sizeof(id), "t%d", t);
			set_task(&r[k].tasks[i], id, "single", "CAD", "cli");
			add_episode(&r[k], id, "m", 0, "done", t % 3 == 0, t % 3 == 0, 5);
			add_episode(&r[k], id, "m", 1, "done", t < 3, t < 3, 5);
		}
	}
	struct engi_report_data d[2];
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 500;
	for (int k = 0; k < 2; k++) {
		struct engi_error err;
		engi_error_init(&err);
		engi_report_data_init(&d[k]);
		CHECK_INT(engi_report_compute(&d[k], &r[k], &o, &err), 0);
	}
	CHECK_INT(d[0].rows[0].score.flag, ENGI_CI_OK);
	CHECK(memcmp(&d[0].rows[0].score, &d[1].rows[0].score, sizeof(d[0].rows[0].score)) == 0);
	for (int k = 0; k < 2; k++) {
		engi_report_data_release(&d[k]);
		engi_results_release(&r[k]);
	}
}

int main(void)
{
	test_dead_endpoint();
	test_provenance();
	test_task_order();
	test_numbers();
	test_interval_wiring();
	test_outputs();
	test_reward();
	test_by_key();
	test_evidence_json();
	test_edges();
	test_empty();
	test_alloc_failures();
	return check_exit();
}
