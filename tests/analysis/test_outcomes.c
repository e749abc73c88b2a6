/*
 * The outcome list of engi/schema.h is the one the report, the evidence
 * ladder, compare and the CSV reader go by: every outcome of the list, one
 * at a time, is counted in its own report column, scored exactly when the
 * list says so (report, evidence, compare), and not run exactly when it is
 * an infrastructure outcome; the report's CSV columns are the list's names
 * in its order; an outcome outside the list is "other" and never scored.
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/compare.h"
#include "engi/csvin.h"
#include "engi/evidence.h"
#include "engi/report.h"
#include "engi/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One task, one model, one condition, one episode of outcome `outcome`. */
static void make(struct engi_results *r, const char *outcome)
{
	engi_results_init(r);
	r->ntasks = r->nmodels = r->nconditions = r->nepisodes = 1;
	r->tasks = engi_calloc(1, sizeof(*r->tasks));
	r->models = engi_calloc(1, sizeof(*r->models));
	r->conditions = engi_calloc(1, sizeof(*r->conditions));
	r->episodes = engi_calloc(1, sizeof(*r->episodes));
	snprintf(r->tasks[0].id, sizeof(r->tasks[0].id), "t1");
	snprintf(r->tasks[0].scoring, sizeof(r->tasks[0].scoring), "binary");
	snprintf(r->models[0].name, sizeof(r->models[0].name), "m1");
	snprintf(r->conditions[0].name, sizeof(r->conditions[0].name), "base");
	struct engi_res_episode *e = &r->episodes[0];
	snprintf(e->cell, sizeof(e->cell), "00000000000000c1");
	snprintf(e->task_id, sizeof(e->task_id), "t1");
	snprintf(e->model, sizeof(e->model), "m1");
	snprintf(e->condition, sizeof(e->condition), "base");
	snprintf(e->outcome, sizeof(e->outcome), "%s", outcome);
	e->trial = 1;
	e->attempts = 1;
	e->success = 1;
	e->score = 1;
	e->quality = 1;
	r->planned_cells = 1;
}

/* What each part makes of one episode of the outcome named `name`. */
static void check_one(const char *name, int scored, int infra, int column)
{
	struct engi_error err;
	engi_error_init(&err);
	struct engi_results r;
	make(&r, name);

	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
	ro.draws = 100;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &ro, &err), 0);
	CHECK_INT(d.scored, scored);
	CHECK_INT(d.env_crash + d.infra_error, infra);
	CHECK_INT(d.nnot_run, infra);
	CHECK_INT(d.other_outcome, column == ENGI_REPORT_OTHER);
	CHECK(d.nrows >= 1);
	if (d.nrows >= 1)
		for (int k = 0; k < ENGI_REPORT_NOUTCOMES; k++)
			CHECK_INT(d.rows[0].outcomes[k], k == column);
	if (infra && d.nnot_run == 1)
		CHECK_STR(d.not_run[0].reason, engi_outcome_why(engi_outcome_find(name, SIZE_MAX)));
	engi_report_data_release(&d);

	struct engi_evidence ev;
	engi_evidence_init(&ev);
	CHECK_INT(engi_evidence_compute(&ev, &r, &err), 0);
	size_t ev_scored = 0;
	for (size_t a = 0; a < ev.narms; a++)
		ev_scored += ev.arms[a].episodes;
	CHECK_INT(ev_scored, scored);
	engi_evidence_release(&ev);

	struct engi_compare_opts co;
	engi_compare_opts_init(&co);
	co.boot.draws = 100;
	struct engi_compare_data cd;
	engi_compare_data_init(&cd);
	CHECK_INT(engi_compare_compute(&cd, &r, &co, &err), 0);
	CHECK_INT(cd.scored, scored);
	CHECK_INT(cd.unscored, !scored);
	engi_compare_data_release(&cd);
	engi_results_release(&r);
}

/* The report's CSV header names the list's outcomes in its order. */
static void check_csv_columns(const char *dir)
{
	struct engi_error err;
	engi_error_init(&err);
	struct engi_results r;
	make(&r, engi_outcome_name(ENGI_OUTCOME_DONE));
	struct engi_report_opts ro;
	engi_report_opts_init(&ro);
	ro.draws = 100;
	struct engi_report_data d;
	engi_report_data_init(&d);
	CHECK_INT(engi_report_compute(&d, &r, &ro, &err), 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/report.csv", dir);
	CHECK_INT(engi_report_write_csv(&d, path, &err), 0);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	char head[2048] = "";
	if (f) {
		CHECK(fgets(head, sizeof(head), f) != NULL);
		fclose(f);
	}
	char want[1024] = ",single_trial";
	for (int k = 0; k < ENGI_OUTCOME_COUNT; k++) {
		strcat(want, ",");
		strcat(want, engi_outcome_name(k));
	}
	strcat(want, ",other_outcome,not_run,");
	CHECK(strstr(head, want) != NULL);
	engi_report_data_release(&d);
	engi_results_release(&r);
}

/* An episodes CSV takes every outcome of the list, and no other. */
static void check_csv_input(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/episodes.csv", dir);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	fputs("task_id,model,trial,success,score,outcome\n", f);
	for (int k = 0; k < ENGI_OUTCOME_COUNT; k++)
		fprintf(f, "t1,m1,%d,1,1,%s\n", k, engi_outcome_name(k));
	fclose(f);
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csv(path, NULL, &r, &err), 0);
	CHECK_INT(r.nepisodes, ENGI_OUTCOME_COUNT);
	for (size_t i = 0; i < r.nepisodes; i++)
		CHECK_STR(r.episodes[i].outcome, engi_outcome_name(r.episodes[i].trial));
	engi_results_release(&r);
}

int main(void)
{
	/* the list itself: names, and which outcomes are scored or infra */
	static const char *const scored[] = {"done", "fail_declared", "turn_limit", "time_limit",
					     "agent_error"};
	static const char *const infra[] = {"env_crash", "infra_error"};
	CHECK_INT(ENGI_OUTCOME_COUNT, 7);
	for (size_t i = 0; i < 5; i++) {
		int oc = engi_outcome_find(scored[i], SIZE_MAX);
		CHECK(oc >= 0);
		CHECK_INT(engi_outcome_scored(oc), 1);
		CHECK_INT(engi_outcome_infra(oc), 0);
	}
	for (size_t i = 0; i < 2; i++) {
		int oc = engi_outcome_find(infra[i], SIZE_MAX);
		CHECK(oc >= 0);
		CHECK_INT(engi_outcome_scored(oc), 0);
		CHECK_INT(engi_outcome_infra(oc), 1);
	}
	CHECK_INT(engi_outcome_find("done!", 4), ENGI_OUTCOME_DONE);
	CHECK_INT(engi_outcome_find("verifier_error", SIZE_MAX), -1);
	char list[256];
	CHECK_STR(engi_outcome_list(list, sizeof(list), 0, ", ", " and "),
		  "env_crash and infra_error");
	CHECK_STR(engi_outcome_list(list, 12, -1, ", ", " or "), "done, fail_");

	/* every part goes by it */
	for (int k = 0; k < ENGI_OUTCOME_COUNT; k++) {
		CHECK_STR(engi_report_outcome_name(k), engi_outcome_name(k));
		check_one(engi_outcome_name(k), engi_outcome_scored(k), engi_outcome_infra(k), k);
	}
	check_one("verifier_error", 0, 0, ENGI_REPORT_OTHER);
	CHECK_STR(engi_report_outcome_name(ENGI_REPORT_OTHER), "other");

	char dir[] = "/tmp/engi_outcomes_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	check_csv_columns(dir);
	check_csv_input(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	return check_exit();
}
