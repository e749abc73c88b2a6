/*
 * The evidence ladder on a hand-made sweep: models A and B on tasks t1, t2,
 * one condition, stages "delivery" then "geometry".
 *
 *   A t1 trial 1: delivery pass, geometry pass           score 1
 *   A t1 trial 2: delivery pass, geometry unavailable    score 0
 *   A t2 trial 1: delivery pass (geometry has no verdict) score 0.5
 *   B t1 trial 1: delivery fail, geometry inapplicable   score 0
 *   B t2 trial 1: env_crash (not scored), its assertions ignored
 *   B t2 trial 2: delivery pass, geometry pass, an optional fail  score 1
 *   one assertion naming a cell that is not recorded
 * geometry applies to t1 (A's verdicts) and t2 (B's trial 2).
 *   A: delivery 3/3; geometry 1/3 (unavailable and missing are failures);
 *      first failed: geometry 2, none 1; perfect tasks 0 of 2
 *      (t1 has a 0 trial), score (0.5 + 0.5) / 2 = 50, cost 3 -> 0.06/pt
 *   B: delivery 1/2; geometry 1/2 (t1 applies: B's inapplicable verdict
 *      is no verdict, a failure); first failed: delivery 1, none 1;
 *      perfect tasks 1 of 2, score 50, cost 3 (the crash counts)
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/evidence.h"

#include <stdlib.h>
#include <unistd.h>

static void ep(struct engi_results *r, const char *cell, const char *task, const char *model,
	       int trial, const char *outcome, double score)
{
	struct engi_res_episode *e = &r->episodes[r->nepisodes++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cell, sizeof(e->cell), "%s", cell);
	snprintf(e->task_id, sizeof(e->task_id), "%s", task);
	snprintf(e->model, sizeof(e->model), "%s", model);
	snprintf(e->condition, sizeof(e->condition), "base");
	snprintf(e->outcome, sizeof(e->outcome), "%s", outcome);
	e->trial = trial;
	e->score = score;
	e->cost_usd = 1.0;
}

static void as(struct engi_results *r, const char *cell, const char *stage, const char *state,
	       int required)
{
	struct engi_res_assertion *a = &r->assertions[r->nassertions++];
	memset(a, 0, sizeof(*a));
	snprintf(a->cell, sizeof(a->cell), "%s", cell);
	snprintf(a->name, sizeof(a->name), "x%zu", r->nassertions);
	snprintf(a->stage, sizeof(a->stage), "%s", stage);
	snprintf(a->state, sizeof(a->state), "%s", state);
	a->required = required;
}

int main(void)
{
	struct engi_results r;
	engi_results_init(&r);
	r.episodes = engi_calloc(8, sizeof(*r.episodes));
	r.assertions = engi_calloc(16, sizeof(*r.assertions));
	ep(&r, "a11", "t1", "A", 1, "done", 1);
	ep(&r, "a12", "t1", "A", 2, "turn_limit", 0);
	ep(&r, "a21", "t2", "A", 1, "done", 0.5);
	ep(&r, "b11", "t1", "B", 1, "fail_declared", 0);
	ep(&r, "b21", "t2", "B", 1, "env_crash", 0);
	ep(&r, "b22", "t2", "B", 2, "done", 1);
	as(&r, "a11", "delivery", "pass", 1);
	as(&r, "a11", "geometry", "pass", 1);
	as(&r, "a12", "delivery", "pass", 1);
	as(&r, "a12", "geometry", "unavailable", 1);
	as(&r, "a21", "delivery", "pass", 1);
	as(&r, "b11", "delivery", "fail", 1);
	as(&r, "b11", "geometry", "inapplicable", 1);
	as(&r, "b21", "delivery", "fail", 1);
	as(&r, "b22", "delivery", "pass", 1);
	as(&r, "b22", "geometry", "pass", 1);
	as(&r, "b22", "geometry", "fail", 0);
	as(&r, "zzz", "delivery", "pass", 1);

	struct engi_evidence ev;
	engi_evidence_init(&ev);
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_evidence_compute(&ev, &r, &err), 0);
	CHECK_INT(ev.nstages, 2);
	CHECK_STR(ev.stages[0], "delivery");
	CHECK_STR(ev.stages[1], "geometry");
	CHECK_INT(ev.assertions_used, 8);
	CHECK_INT(ev.assertions_ignored, 3);
	CHECK_INT(ev.assertions_orphan, 1);
	CHECK_INT(ev.narms, 2);
	const struct engi_evidence_arm *a = &ev.arms[0], *b = &ev.arms[1];
	CHECK_STR(a->model, "A");
	CHECK_INT(a->episodes, 3);
	CHECK_INT(a->denominator[0], 3);
	CHECK_INT(a->passed[0], 3);
	CHECK_INT(a->denominator[1], 3);
	CHECK_INT(a->passed[1], 1);
	CHECK_INT(a->first_failed[0], 0);
	CHECK_INT(a->first_failed[1], 2);
	CHECK_INT(a->first_failed[2], 1);
	CHECK_INT(a->tasks, 2);
	CHECK_INT(a->perfect, 0);
	CHECK_NEAR(a->score_x100, 50.0, 1e-12);
	CHECK_NEAR(a->cost_usd, 3.0, 0);

	CHECK_STR(b->model, "B");
	CHECK_INT(b->episodes, 2);
	CHECK_INT(b->denominator[0], 2);
	CHECK_INT(b->passed[0], 1);
	CHECK_INT(b->denominator[1], 2);
	CHECK_INT(b->passed[1], 1);
	CHECK_INT(b->first_failed[0], 1);
	CHECK_INT(b->first_failed[1], 0);
	CHECK_INT(b->first_failed[2], 1);
	CHECK_INT(b->tasks, 2);
	CHECK_INT(b->perfect, 1);
	CHECK_NEAR(b->score_x100, 50.0, 1e-12);
	CHECK_NEAR(b->cost_usd, 3.0, 0);

	char dir[] = "/tmp/engi_evidence_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[128], md[128];
	snprintf(path, sizeof path, "%s/e.csv", dir);
	snprintf(md, sizeof md, "%s/e.md", dir);
	CHECK_INT(engi_evidence_write_csv(&ev, path, &err), 0);
	FILE *f = fopen(md, "w");
	CHECK_INT(engi_evidence_write_markdown(&ev, f, &err), 0);
	fclose(f);
	char buf[8192] = "";
	f = fopen(path, "rb");
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK(strstr(buf, "A,base,3,2,0,0.000000,50.000000,3.000000,1.500000,"
			  "0.060000,geometry,3,1,0.333333,2\r\n") != NULL);
	CHECK(strstr(buf, "B,base,2,2,1,0.500000,50.000000,3.000000,1.500000,"
			  "0.060000,none,,,,1\r\n") != NULL);
	f = fopen(md, "rb");
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK(strstr(buf, "| A | base | 100.0 % (3/3) | 33.3 % (1/3) |") != NULL);
	CHECK(strstr(buf, "| B | base | 2 | 1 | 0 | 1 |") != NULL);
	unlink(path);
	unlink(md);
	rmdir(dir);

	engi_evidence_release(&ev);
	engi_results_release(&r);
	return check_exit();
}
