/* Verdicts, scoring rules, the delivery check and the registry. */
#include "check.h"

#include "engi/verify.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void add(struct engi_verdict *v, const char *name, int state, int required)
{
	CHECK_INT(engi_verdict_add(v, name, "test", state, required, NAN, NAN, NULL), 0);
}

static void test_states_and_records(void)
{
	CHECK_STR(engi_astate_name(ENGI_PASS), "pass");
	CHECK_STR(engi_astate_name(ENGI_FAIL), "fail");
	CHECK_STR(engi_astate_name(ENGI_INAPPLICABLE), "inapplicable");
	CHECK_STR(engi_astate_name(ENGI_UNAVAILABLE), "unavailable");

	struct engi_verdict v;
	engi_verdict_init(&v);
	CHECK_INT(engi_verdict_add(&v, "holes", "topology", ENGI_FAIL, 1, 3, 7,
				   "genus %d, expected %d", 3, 7),
		  0);
	CHECK_INT(v.na, 1);
	CHECK_STR(v.a[0].name, "holes");
	CHECK_STR(v.a[0].stage, "topology");
	CHECK_STR(v.a[0].detail, "genus 3, expected 7");
	CHECK_NEAR(v.a[0].value, 3, 0);
	CHECK_NEAR(v.a[0].expected, 7, 0);
	/* Over-long names are cut to the field. */
	char longname[100];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[99] = '\0';
	CHECK_INT(engi_verdict_add(&v, longname, NULL, ENGI_PASS, 0, NAN, NAN, NULL), 0);
	CHECK_INT(strlen(v.a[1].name), ENGI_NAME_MAX - 1);
	CHECK_STR(v.a[1].detail, "");

	double x = 0;
	CHECK_INT(engi_verdict_get_metric(&v, "volume", &x), ENGI_ENOTFOUND);
	CHECK_INT(engi_verdict_metric(&v, "volume", 12.5), 0);
	CHECK_INT(engi_verdict_metric(&v, "area", 3), 0);
	CHECK_INT(engi_verdict_metric(&v, "volume", 13.5), 0);
	CHECK_INT(v.nm, 2);
	CHECK_INT(engi_verdict_get_metric(&v, "volume", &x), 0);
	CHECK_NEAR(x, 13.5, 0);

	/* The caps. */
	int rc = 0;
	while (v.na < ENGI_VERDICT_ASSERTIONS_MAX && rc == 0)
		rc = engi_verdict_add(&v, "a", "s", ENGI_PASS, 0, NAN, NAN, NULL);
	CHECK_INT(rc, 0);
	CHECK_INT(engi_verdict_add(&v, "a", "s", ENGI_PASS, 0, NAN, NAN, NULL), ENGI_ETOOBIG);
	char name[32];
	for (int i = 0; i < ENGI_VERDICT_METRICS_MAX && rc == 0; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		rc = engi_verdict_metric(&v, name, i);
	}
	CHECK_INT(rc, ENGI_ETOOBIG);
	CHECK_INT(engi_verdict_metric(&v, "volume", 1), 0); /* replacing still works */
	engi_verdict_release(&v);
	CHECK(v.a == NULL && v.na == 0);
}

static void test_binary(void)
{
	struct engi_verdict v;
	engi_verdict_init(&v);
	add(&v, "a", ENGI_PASS, 1);
	add(&v, "b", ENGI_FAIL, 0); /* not required: does not count */
	add(&v, "c", ENGI_INAPPLICABLE, 1);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1);
	CHECK_INT(v.feasible, 1);
	CHECK_NEAR(v.score, 1, 0);

	add(&v, "d", ENGI_UNAVAILABLE, 1); /* unavailable required = failed */
	struct engi_scoring_spec spec = {.mode = ENGI_SCORING_BINARY};
	engi_verdict_score(&v, &spec);
	CHECK_INT(v.success, 0);
	CHECK_NEAR(v.score, 0, 0);
	engi_verdict_release(&v);

	engi_verdict_init(&v);
	add(&v, "a", ENGI_PASS, 1);
	add(&v, "b", ENGI_FAIL, 1);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	CHECK_NEAR(v.score, 0, 0);
	engi_verdict_release(&v);
}

static double opt_score(int feasible, const char *metric, double m,
			const struct engi_scoring_spec *spec, int *success)
{
	struct engi_verdict v;
	engi_verdict_init(&v);
	add(&v, "constraint", feasible ? ENGI_PASS : ENGI_FAIL, 1);
	if (metric)
		CHECK_INT(engi_verdict_metric(&v, metric, m), 0);
	engi_verdict_score(&v, spec);
	double score = v.score;
	CHECK_NEAR(v.quality, score, 0);
	CHECK_INT(v.feasible, feasible);
	*success = v.success;
	engi_verdict_release(&v);
	return score;
}

static void test_optimization(void)
{
	int ok;
	struct engi_scoring_spec max = {.mode = ENGI_SCORING_OPTIMIZATION,
					.metric = "stiffness",
					.baseline = 100,
					.reference = 200};
	CHECK_NEAR(opt_score(1, "stiffness", 150, &max, &ok), 0.5, 1e-15);
	CHECK_INT(ok, 1);
	CHECK_NEAR(opt_score(1, "stiffness", 250, &max, &ok), 1, 0);
	CHECK_NEAR(opt_score(1, "stiffness", 50, &max, &ok), 0, 0);
	CHECK_INT(ok, 0); /* feasible, but q = 0 */
	CHECK_NEAR(opt_score(0, "stiffness", 200, &max, &ok), 0, 0);
	CHECK_INT(ok, 0);
	CHECK_NEAR(opt_score(1, NULL, 0, &max, &ok), 0, 0); /* metric missing */
	CHECK_NEAR(opt_score(1, "stiffness", NAN, &max, &ok), 0, 0);

	struct engi_scoring_spec min = {.mode = ENGI_SCORING_OPTIMIZATION,
					.metric = "volume",
					.minimize = 1,
					.baseline = 9000,
					.reference = 6000};
	CHECK_NEAR(opt_score(1, "volume", 7500, &min, &ok), 0.5, 1e-15);
	CHECK_INT(ok, 1);
	CHECK_NEAR(opt_score(1, "volume", 5000, &min, &ok), 1, 0);
	CHECK_NEAR(opt_score(1, "volume", 9500, &min, &ok), 0, 0);
	CHECK_NEAR(opt_score(0, "volume", 6000, &min, &ok), 0, 0);

	struct engi_scoring_spec cost = {.mode = ENGI_SCORING_OPTIMIZATION,
					 .metric = "mass",
					 .minimize = 1,
					 .cost_based = 1,
					 .lambda = 0.1};
	CHECK_NEAR(opt_score(1, "mass", 3, &cost, &ok), 0.7, 1e-15);
	CHECK_INT(ok, 1);
	CHECK_NEAR(opt_score(1, "mass", 20, &cost, &ok), 0, 0);
	CHECK_INT(ok, 0);
	CHECK_NEAR(opt_score(1, "mass", 0, &cost, &ok), 1, 0);
	CHECK_NEAR(opt_score(0, "mass", 0, &cost, &ok), 0, 0);
}

static double reward(const char *g, double gv, const char *s, double sv, int *success)
{
	struct engi_scoring_spec spec = {
	    .mode = ENGI_SCORING_CONTINUOUS, .geometry_metric = "geometry", .spec_metric = "spec"};
	struct engi_verdict v;
	engi_verdict_init(&v);
	add(&v, "delivered:part.stl", ENGI_PASS, 1);
	if (g)
		engi_verdict_metric(&v, g, gv);
	if (s)
		engi_verdict_metric(&v, s, sv);
	engi_verdict_score(&v, &spec);
	double r = v.score;
	*success = v.success;
	engi_verdict_release(&v);
	return r;
}

static void test_continuous(void)
{
	int ok;
	CHECK_NEAR(reward("geometry", 0.5, "spec", 1, &ok), 2.0 / 3, 1e-15);
	CHECK_INT(ok, 0);
	CHECK_NEAR(reward("geometry", 0.6, "spec", 0.3, &ok), 0.4, 1e-15);
	CHECK_NEAR(reward("geometry", 0, "spec", 1, &ok), 0, 0);
	CHECK_NEAR(reward("geometry", 1, "spec", 0, &ok), 0, 0);
	CHECK_NEAR(reward("geometry", 1, NULL, 0, &ok), 0, 0);
	CHECK_NEAR(reward("geometry", 1, "spec", 1, &ok), 1, 0);
	CHECK_INT(ok, 1);

	/* a failed required assertion is a gate: the reward is 0 */
	struct engi_scoring_spec spec = {
	    .mode = ENGI_SCORING_CONTINUOUS, .geometry_metric = "geometry", .spec_metric = "spec"};
	struct engi_verdict v;
	engi_verdict_init(&v);
	add(&v, "delivered:part.stl", ENGI_PASS, 1);
	add(&v, "face_count_gate", ENGI_FAIL, 1);
	add(&v, "note", ENGI_FAIL, 0);
	engi_verdict_metric(&v, "geometry", 0.9);
	engi_verdict_metric(&v, "spec", 0.8);
	engi_verdict_score(&v, &spec);
	CHECK_NEAR(v.score, 0, 0);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);
}

static void test_registry(void)
{
	const struct engi_verifier_kind *const *k = engi_verifier_kinds();
	int n = 0;
	while (k[n])
		n++;
	/* the kinds this suite tests are there; a new kind adds itself */
	CHECK(n >= 8);
	struct engi_error e;
	engi_error_init(&e);
	const struct engi_verifier_kind *mesh = engi_verifier_lookup("mesh", &e);
	CHECK(mesh != NULL && !strcmp(mesh->name, "mesh"));
	CHECK(engi_verifier_lookup("ccx_dat", &e) != NULL);
	CHECK(engi_verifier_lookup("stl", &e) == NULL);
	CHECK_INT(e.code, ENGI_ENOTFOUND);
	/* the message lists every registered kind, in registry order */
	char want[512] = "unknown verifier kind 'stl' (valid: ";
	for (int i = 0; i < n; i++) {
		strncat(want, k[i]->name, sizeof(want) - strlen(want) - 1);
		strncat(want, i + 1 < n ? ", " : ")", sizeof(want) - strlen(want) - 1);
	}
	CHECK_STR(e.msg, want);
	CHECK(strstr(e.msg, "mesh, ccx_dat, occupancy, cad_similarity, structural, fe_solid, "
			    "param_spec, command") != NULL);
	engi_verifier_free(mesh, NULL);
	engi_verifier_free(NULL, NULL);
}

static void test_missing_delivery(void)
{
	char dir[] = "/tmp/engi-verify-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	const struct engi_verifier_kind *mesh = engi_verifier_lookup("mesh", NULL);
	json_t *j = json_loads("{\"kind\": \"mesh\", \"file\": \"part.stl\", \"criteria\": ["
			       "{\"name\": \"closed\", \"check\": \"watertight\"},"
			       "{\"name\": \"vol\", \"check\": \"volume\", \"value\": 8,"
			       " \"required\": false}]}",
			       0, NULL);
	CHECK(j != NULL);
	void *crit = NULL;
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(mesh->parse(j, "t.json", NULL, "/verifier", &crit, &e), 0);
	json_decref(j);

	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	struct engi_verdict v;
	engi_verdict_init(&v);
	CHECK_INT(engi_verify_file(mesh, crit, "part.stl", &ctx, &v, &e), 0);
	CHECK_INT(v.na, 3);
	CHECK_STR(v.a[0].name, "delivered:part.stl");
	CHECK_STR(v.a[0].stage, "delivery");
	CHECK_INT(v.a[0].state, ENGI_FAIL);
	CHECK_INT(v.a[0].required, 1);
	CHECK_STR(v.a[0].detail, "'part.stl' was not delivered");
	CHECK_INT(v.a[1].state, ENGI_UNAVAILABLE);
	CHECK_INT(v.a[2].state, ENGI_UNAVAILABLE);
	CHECK_INT(v.a[2].required, 0);
	char want[300];
	snprintf(want, sizeof(want), "cannot read STL '%s/part.stl': No such file or directory",
		 dir);
	CHECK_STR(v.a[1].detail, want);
	CHECK_INT(v.nm, 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	CHECK_NEAR(v.score, 0, 0);
	engi_verdict_release(&v);

	/* A directory in the file's place is not a delivery either. */
	char sub[300];
	snprintf(sub, sizeof(sub), "%s/part.stl", dir);
	CHECK_INT(mkdir(sub, 0700), 0);
	engi_verdict_init(&v);
	CHECK_INT(engi_verify_file(mesh, crit, "part.stl", &ctx, &v, &e), 0);
	CHECK_INT(v.a[0].state, ENGI_FAIL);
	CHECK_STR(v.a[0].detail, "'part.stl' is not a regular file");
	CHECK_INT(v.a[1].state, ENGI_UNAVAILABLE);
	engi_verdict_release(&v);
	rmdir(sub);
	rmdir(dir);
	engi_verifier_free(mesh, crit);
}

int main(void)
{
	test_states_and_records();
	test_binary();
	test_optimization();
	test_continuous();
	test_registry();
	test_missing_delivery();
	return check_exit();
}
