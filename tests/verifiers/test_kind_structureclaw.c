/* Verifier kind "structureclaw": StructureClaw-Bench's 47 ground truths
 * (read from the benchmark's folder, argv[1]; the test fails when they are
 * absent) each delivered as the model match themselves under model_matches
 * and model_matches_strict, and their span, height and total load as read
 * equal the benchmark's own rule on the file; a beam delivered in
 * structural/1 matches its StructureClaw reference; a span 1 m off or a
 * load 50 % off fails model_matches; every check passes and fails; any_of
 * sees the episode's other assertions; inapplicable is outside the score;
 * an optional verifier file's delivered assertion is not required; criteria
 * that are wrong name their pointer; hostile files fail, never crash. */
#include "check.h"

#include "engi/structural.h"
#include "engi/verify.h"
#include "kindtest.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char art[128], task[128], fixtures[4096];

/* kind->parse on text with the task's folder tdir. */
static int parse_in(const char *text, const char *tdir, void **crit, struct engi_error *e)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (!j) {
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, text);
		CHECK(0);
		return -1;
	}
	engi_error_init(e);
	*crit = NULL;
	int rc = kind->parse(j, "t.json", tdir, "/verifier", crit, e);
	json_decref(j);
	return rc;
}

static void *must_parse(const char *text, const char *tdir)
{
	void *crit = NULL;
	struct engi_error e;
	int rc = parse_in(text, tdir, &crit, &e);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "parse: %s\n", e.msg);
	return crit;
}

/* The parse error of text, which must fail. */
static void refused(const char *text, const char *want)
{
	void *crit = NULL;
	struct engi_error e;
	int rc = parse_in(text, task, &crit, &e);
	CHECK(rc < 0);
	CHECK(crit == NULL);
	if (!strstr(e.msg, want)) {
		fprintf(stderr, "message '%s' does not hold '%s'\n", e.msg, want);
		CHECK(0);
	}
	engi_verifier_free(kind, crit);
}

static void put(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", art, name);
	FILE *fp = fopen(path, "wb");
	CHECK(fp != NULL);
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
}

static void drop(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", art, name);
	unlink(path);
}

/* The kind on the deliverables, then the criteria on the whole verdict. */
static void judge_opt(void *crit, int optional, struct engi_verdict *v)
{
	struct engi_error e;
	engi_error_init(&e);
	struct engi_verify_ctx ctx = {
	    .artifact_dir = art, .task_dir = task, .file_optional = optional};
	engi_verdict_init(v);
	CHECK_INT(engi_verify_file(kind, crit, "model.json", &ctx, v, &e), 0);
	CHECK_INT(engi_verify_resolve(kind, crit, v, &e), 0);
	if (e.code)
		fprintf(stderr, "verify: %s\n", e.msg);
}

static void judge(void *crit, struct engi_verdict *v)
{
	judge_opt(crit, 0, v);
}

static int state(const struct engi_verdict *v, const char *name)
{
	return find_or_none(v, name)->state;
}

static int holds(const struct engi_verdict *v, const char *name, const char *text)
{
	const char *d = find_or_none(v, name)->detail;
	if (strstr(d, text))
		return 1;
	fprintf(stderr, "%s: detail '%s' does not hold '%s'\n", name, d, text);
	return 0;
}

/* StructureClaw-Bench's own sums on a model file (lib/evaluate.cjs): the
 * range of x, the range of z, and its total load. */
static double range_of(json_t *nodes, const char *key)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t i;
	json_t *n;
	json_array_foreach(nodes, i, n)
	{
		double x = json_number_value(json_object_get(n, key));
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	return hi - lo;
}

static double bench_load(json_t *model)
{
	double sum = 0;
	size_t i, j;
	json_t *lc, *l;
	json_array_foreach(json_object_get(model, "load_cases"), i, lc)
	{
		json_array_foreach(json_object_get(lc, "loads"), j, l)
		{
			const char *type = json_string_value(json_object_get(l, "type"));
			json_t *fz = json_object_get(l, "fz"),
			       *forces = json_object_get(l, "forces");
			if (type && !strcmp(type, "distributed"))
				sum += fabs(json_number_value(json_object_get(l, "wz")));
			else if (json_number_value(fz) != 0)
				sum += fabs(json_number_value(fz));
			else if (forces)
				sum += fabs(json_number_value(json_array_get(forces, 2)));
			else
				sum += fabs(json_number_value(json_object_get(l, "fx")));
		}
	}
	return sum;
}

#define FIXTURE_CRITERIA                                                                           \
	"{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["                  \
	"{\"name\": \"has_model\", \"check\": \"has_model\"},"                                     \
	"{\"name\": \"matches\", \"check\": \"model_matches\","                                    \
	" \"reference\": \"ground-truth-models.json\", \"id\": \"%s\"},"                           \
	"{\"name\": \"strict\", \"check\": \"model_matches_strict\","                              \
	" \"reference\": \"ground-truth-models.json\", \"id\": \"%s\"},"                           \
	"{\"name\": \"no_bad_model\", \"check\": \"no_bad_model\", \"required\": false}]}"

/* Every ground truth delivered as the model matches itself. */
static void test_fixtures(const char *bench)
{
	char path[4200];
	snprintf(fixtures, sizeof(fixtures), "%s/fixtures", bench);
	snprintf(path, sizeof(path), "%s/ground-truth-models.json", fixtures);
	json_error_t je;
	json_t *all = json_load_file(path, 0, &je);
	if (!all) {
		fprintf(stderr, "cannot read StructureClaw-Bench's ground truths '%s': %s\n", path,
			je.text);
		CHECK(all != NULL);
		return;
	}
	CHECK_INT(json_array_size(all), 47);
	size_t matched = 0, strict = 0, sums = 0, loaded = 0;
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *entry = json_array_get(all, i), *model = json_object_get(entry, "model");
		const char *id = json_string_value(json_object_get(entry, "id"));
		char *text = json_dumps(model, JSON_COMPACT);
		put("model.json", text);
		/* the reader's extent against the benchmark's rule on the file */
		struct engi_structural s;
		struct engi_error e;
		engi_structural_init(&s);
		CHECK_INT(engi_structural_parse(id, text, strlen(text), &s, &e), 0);
		free(text);
		struct engi_structural_extent x;
		engi_structural_extent(&s, &x);
		json_t *nodes = json_object_get(model, "nodes");
		double load = bench_load(model);
		CHECK_INT(x.nodes, json_array_size(nodes));
		CHECK_INT(x.elements, json_array_size(json_object_get(model, "elements")));
		CHECK_NEAR(x.span, range_of(nodes, "x"), 1e-12);
		CHECK_NEAR(x.height, range_of(nodes, "z"), 1e-12);
		CHECK_NEAR(x.load, load, 1e-9 * (1 + load));
		sums += fabs(x.load - load) <= 1e-9 * (1 + load);
		loaded += load > 0;
		engi_structural_release(&s);

		char crit_text[2048];
		snprintf(crit_text, sizeof(crit_text), FIXTURE_CRITERIA, id, id);
		void *crit = must_parse(crit_text, fixtures);
		if (!crit)
			continue;
		struct engi_verdict v;
		judge(crit, &v);
		CHECK_INT(state(&v, "delivered:model.json"), ENGI_PASS);
		CHECK_INT(state(&v, "has_model"), ENGI_PASS);
		CHECK_INT(state(&v, "no_bad_model"), ENGI_FAIL);
		CHECK_INT(state(&v, "matches"), ENGI_PASS);
		CHECK_INT(state(&v, "strict"), ENGI_PASS);
		matched += state(&v, "matches") == ENGI_PASS;
		strict += state(&v, "strict") == ENGI_PASS;
		if (state(&v, "matches") != ENGI_PASS || state(&v, "strict") != ENGI_PASS)
			fprintf(stderr, "%s: %s | %s\n", id, find_or_none(&v, "matches")->detail,
				find_or_none(&v, "strict")->detail);
		engi_verdict_score(&v, NULL);
		CHECK_INT(v.success, 1);
		engi_verdict_release(&v);
		engi_verifier_free(kind, crit);
	}
	printf("ground truths: %zu match themselves, %zu strictly, %zu sums as the benchmark's "
	       "(%zu loaded)\n",
	       matched, strict, sums, loaded);
	CHECK_INT(matched, 47);
	CHECK_INT(strict, 47);
	CHECK(loaded > 40);
	json_decref(all);
}

/* beam-simple-6m as in the ground truths, with span, load and inertia
 * changeable. */
static char *sc_beam(double x3, double wz, double iy)
{
	char *t = malloc(2048);
	snprintf(t, 2048,
		 "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\","
		 " \"metadata\": {\"frameDimension\": \"2d\"},"
		 " \"nodes\": [{\"id\": \"1\", \"x\": 0, \"y\": 0, \"z\": 0,"
		 " \"restraints\": [true, true, true, true, true, false]},"
		 " {\"id\": \"2\", \"x\": 3, \"y\": 0, \"z\": 0},"
		 " {\"id\": \"3\", \"x\": %g, \"y\": 0, \"z\": 0,"
		 " \"restraints\": [false, true, true, true, true, false]}],"
		 " \"elements\": [{\"id\": \"1\", \"type\": \"beam\", \"nodes\": [\"1\", \"2\"],"
		 " \"material\": \"1\", \"section\": \"1\"},"
		 " {\"id\": \"2\", \"type\": \"beam\", \"nodes\": [\"2\", \"3\"],"
		 " \"material\": \"1\", \"section\": \"1\"}],"
		 " \"materials\": [{\"id\": \"1\", \"E\": 205000, \"nu\": 0.3}],"
		 " \"sections\": [{\"id\": \"1\", \"properties\": {\"A\": 0.01, \"Iy\": %g,"
		 " \"Iz\": 0.0001, \"J\": 0.0001, \"G\": 79000}}],"
		 " \"load_cases\": [{\"id\": \"LC1\", \"loads\": ["
		 "{\"type\": \"distributed\", \"element\": \"1\", \"wz\": %g, \"wy\": 0},"
		 "{\"type\": \"distributed\", \"element\": \"2\", \"wz\": %g, \"wy\": 0}]}],"
		 " \"load_combinations\": [{\"id\": \"ULS\", \"factors\": {\"LC1\": 1}}]}",
		 x3, iy, wz, wz);
	return t;
}

/* The same beam in structural/1: kN and m, the x-y plane, StructureClaw's
 * restrained ry as rz. */
static const char s1_beam[] =
    "{\"format\": \"structural/1\", \"dim\": 2, \"units\": {\"length\": \"m\", \"force\": \"kN\"},"
    " \"materials\": [{\"id\": \"steel\", \"E\": 205e6, \"G\": 79e6}],"
    " \"sections\": [{\"id\": \"B1\", \"A\": 0.01, \"Iz\": 1e-4}],"
    " \"nodes\": [{\"id\": 1, \"xyz\": [0, 0]}, {\"id\": 2, \"xyz\": [3, 0]},"
    " {\"id\": 3, \"xyz\": [6, 0]}],"
    " \"elements\": [{\"id\": 1, \"type\": \"beam\", \"nodes\": [1, 2], \"material\": \"steel\","
    " \"section\": \"B1\"}, {\"id\": 2, \"type\": \"beam\", \"nodes\": [2, 3],"
    " \"material\": \"steel\", \"section\": \"B1\"}],"
    " \"supports\": [{\"node\": 1, \"restrain\": [\"ux\", \"uy\", \"rz\"]},"
    " {\"node\": 3, \"restrain\": [\"uy\", \"rz\"]}],"
    " \"load_cases\": [{\"id\": \"LC1\", \"member\": [{\"element\": 1, \"w\": [0, -20, 0]},"
    " {\"element\": 2, \"w\": [0, -20, 0]}]}],"
    " \"combinations\": [{\"id\": \"ULS\", \"factors\": {\"LC1\": 1}}]}";

#define BEAM_CRITERIA                                                                              \
	"{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["                  \
	"{\"name\": \"matches\", \"check\": \"model_matches\","                                    \
	" \"reference\": \"ground-truth-models.json\", \"id\": \"beam-simple-6m\"},"               \
	"{\"name\": \"strict\", \"check\": \"model_matches_strict\","                              \
	" \"reference\": \"ground-truth-models.json\", \"id\": \"beam-simple-6m\","                \
	" \"required\": false}]}"

static void test_beam_variants(void)
{
	void *crit = must_parse(BEAM_CRITERIA, fixtures);
	if (!crit)
		return;
	struct engi_verdict v;
	/* our format: the same beam */
	put("model.json", s1_beam);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_PASS);
	CHECK_INT(state(&v, "strict"), ENGI_PASS);
	CHECK(holds(&v, "matches", "span 6.00/6.00 m ok"));
	CHECK(holds(&v, "matches", "load 40/40 kN ok"));
	engi_verdict_release(&v);
	/* a span 1 m too long */
	char *m = sc_beam(7, -20, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	CHECK(holds(&v, "matches", "span 7.00/6.00 m FAIL (off 1.00)"));
	CHECK_NEAR(find_or_none(&v, "matches")->value, 1, 0);
	CHECK_INT(state(&v, "strict"), ENGI_FAIL);
	CHECK(find_or_none(&v, "strict")->required == 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);
	/* half a metre is within the benchmark's tolerance, not the strict one */
	m = sc_beam(6.5, -20, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_PASS);
	CHECK_INT(state(&v, "strict"), ENGI_FAIL);
	engi_verdict_release(&v);
	/* loads: 10 % off passes, 50 % fails; a wrong inertia only fails strict */
	m = sc_beam(6, -22, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_PASS);
	CHECK_INT(state(&v, "strict"), ENGI_FAIL);
	engi_verdict_release(&v);
	m = sc_beam(6, -30, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	CHECK(holds(&v, "matches", "load 60/40 kN FAIL (off 50%)"));
	engi_verdict_release(&v);
	m = sc_beam(6, -20, 2e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_PASS);
	CHECK_INT(state(&v, "strict"), ENGI_FAIL);
	CHECK(holds(&v, "strict", "does not match"));
	engi_verdict_release(&v);
	/* JSON that is no model: the reader's message, file and pointer */
	put("model.json",
	    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\", \"nodes\": []}");
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	CHECK(holds(&v, "matches", "model.json: /"));
	CHECK_INT(state(&v, "strict"), ENGI_FAIL);
	engi_verdict_release(&v);
	put("model.json", "{\"nodes\": [1, 2], \"elements\": [1]}");
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	CHECK(holds(&v, "matches", "not a structural model"));
	engi_verdict_release(&v);
	drop("model.json");
	judge(crit, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	CHECK(holds(&v, "matches", "'model.json' was not delivered"));
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

#define ALL_CRITERIA                                                                               \
	"{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["                  \
	"{\"name\": \"has_model\", \"check\": \"has_model\", \"min_nodes\": 2,"                    \
	" \"min_elements\": 1},"                                                                   \
	"{\"name\": \"has_analysis\", \"check\": \"has_analysis\", \"file\": \"analysis.json\"},"  \
	"{\"name\": \"has_report\", \"check\": \"has_report\", \"file\": \"report.md\","           \
	" \"min_chars\": 100},"                                                                    \
	"{\"name\": \"no_bad_model\", \"check\": \"no_bad_model\"},"                               \
	"{\"name\": \"should_not_analyze\", \"check\": \"no_analysis\"},"                          \
	"{\"name\": \"skill_match\", \"check\": \"inapplicable\","                                 \
	" \"reason\": \"StructureClaw's own skill router\"},"                                      \
	"{\"name\": \"either\", \"check\": \"any_of\", \"of\": [\"has_analysis\", \"asked\"]},"    \
	"{\"name\": \"neither\", \"check\": \"any_of\", \"of\": [\"nosuch\", \"other\"],"          \
	" \"required\": false},"                                                                   \
	"{\"name\": \"both\", \"check\": \"any_of\", \"of\": [\"either\", \"has_report\"],"        \
	" \"stage\": \"end\"}]}"

static void test_checks(void)
{
	void *crit = must_parse(ALL_CRITERIA, task);
	if (!crit)
		return;
	const char *names[16];
	CHECK_INT(kind->names(crit, names, 16), 9);
	CHECK_STR(names[0], "has_model");
	CHECK_STR(names[8], "both");
	struct engi_verdict v;
	/* nothing delivered */
	drop("model.json");
	drop("analysis.json");
	drop("report.md");
	judge(crit, &v);
	CHECK_INT(state(&v, "delivered:model.json"), ENGI_FAIL);
	CHECK(find_or_none(&v, "delivered:model.json")->required);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK(holds(&v, "has_model", "'model.json' was not delivered"));
	CHECK_INT(state(&v, "has_analysis"), ENGI_FAIL);
	CHECK_INT(state(&v, "has_report"), ENGI_FAIL);
	CHECK_INT(state(&v, "no_bad_model"), ENGI_PASS);
	CHECK_INT(state(&v, "should_not_analyze"), ENGI_PASS);
	CHECK_INT(state(&v, "skill_match"), ENGI_INAPPLICABLE);
	CHECK(find_or_none(&v, "skill_match")->required == 0);
	CHECK(holds(&v, "skill_match", "StructureClaw's own skill router"));
	CHECK_INT(state(&v, "either"), ENGI_FAIL);
	CHECK(holds(&v, "either", "none passed: has_analysis fail"));
	CHECK_INT(state(&v, "neither"), ENGI_FAIL);
	CHECK(holds(&v, "neither", "none of nosuch, other is in the verdict"));
	CHECK_INT(state(&v, "both"), ENGI_FAIL);
	CHECK_STR(find_or_none(&v, "both")->stage, "end");
	CHECK_STR(find_or_none(&v, "either")->stage, "outcome");
	CHECK_STR(find_or_none(&v, "has_model")->stage, "model");
	/* any_of after the others: the last assertions */
	CHECK_STR(v.a[v.na - 1].name, "both");
	engi_verdict_release(&v);

	/* any_of finds what the episode recorded itself: an interaction
	 * assertion in the verdict before the kind's */
	struct engi_error e;
	struct engi_verify_ctx ctx = {.artifact_dir = art, .task_dir = task};
	engi_verdict_init(&v);
	CHECK_INT(engi_verdict_add(&v, "asked", "interaction", ENGI_PASS, 1, 1, NAN, "asked"), 0);
	CHECK_INT(engi_verify_file(kind, crit, "model.json", &ctx, &v, &e), 0);
	CHECK_INT(state(&v, "either"), -1); /* not before the verdict is whole */
	CHECK_INT(engi_verify_resolve(kind, crit, &v, &e), 0);
	CHECK_INT(state(&v, "either"), ENGI_PASS);
	CHECK(holds(&v, "either", "'asked' passed"));
	CHECK_INT(state(&v, "both"), ENGI_PASS);
	engi_verdict_release(&v);

	/* everything delivered */
	char *m = sc_beam(6, -20, 1e-4);
	put("model.json", m);
	free(m);
	put("analysis.json", "{\"displacements\": {\"2\": [0, -0.003]}}");
	char rep[256];
	memset(rep, 'x', 101);
	rep[101] = '\0';
	put("report.md", rep);
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_PASS);
	CHECK(holds(&v, "has_model", "3 nodes, 2 elements"));
	CHECK_INT(state(&v, "has_analysis"), ENGI_PASS);
	CHECK(holds(&v, "has_analysis", "results under displacements"));
	CHECK_INT(state(&v, "has_report"), ENGI_PASS);
	CHECK_NEAR(find_or_none(&v, "has_report")->value, 101, 0);
	CHECK_INT(state(&v, "no_bad_model"), ENGI_FAIL);
	CHECK(holds(&v, "no_bad_model", "a model where none should be"));
	CHECK_INT(state(&v, "should_not_analyze"), ENGI_FAIL);
	CHECK(holds(&v, "should_not_analyze", "'analysis.json' was delivered"));
	CHECK_INT(state(&v, "either"), ENGI_PASS);
	CHECK(holds(&v, "either", "'has_analysis' passed"));
	engi_verdict_release(&v);

	/* has_model: one node is too few; nodes that are no array count 0 */
	put("model.json", "{\"nodes\": [{}], \"elements\": [{}]}");
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK(holds(&v, "has_model", "1 nodes, 1 elements (at least 2 and 1)"));
	engi_verdict_release(&v);
	put("model.json", "{\"nodes\": \"many\", \"elements\": 5}");
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK_INT(state(&v, "no_bad_model"), ENGI_PASS);
	engi_verdict_release(&v);
	/* an empty model is no bad model */
	put("model.json", "{\"nodes\": [], \"elements\": []}");
	judge(crit, &v);
	CHECK_INT(state(&v, "no_bad_model"), ENGI_PASS);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	engi_verdict_release(&v);
	put("model.json", "[1, 2]");
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK(holds(&v, "has_model", "expected a model object, found an array"));
	CHECK_INT(state(&v, "no_bad_model"), ENGI_PASS);
	engi_verdict_release(&v);
	put("model.json", "the model is: none");
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK(holds(&v, "has_model", "not JSON: model.json: line 1"));
	CHECK_INT(state(&v, "no_bad_model"), ENGI_PASS);
	engi_verdict_release(&v);

	/* has_analysis: results under data; empty ones and other shapes fail */
	static const struct {
		const char *text;
		int pass;
		const char *detail;
	} analyses[] = {
	    {"{\"data\": {\"reactions\": [1]}}", 1, "results under data.reactions"},
	    {"{\"memberForces\": [{}], \"displacements\": []}", 1, "results under memberForces"},
	    {"{\"displacements\": [], \"reactions\": {}}", 0, "no displacements"},
	    {"{\"forces\": \"big\", \"data\": [[1]]}", 0, "no displacements"},
	    {"[{\"displacements\": [1]}]", 0, "found an array"},
	    {"{\"displacements\": [1], \"displacements\": [2]}", 0, "not JSON"},
	    {"", 0, "not JSON"},
	};
	for (size_t i = 0; i < sizeof(analyses) / sizeof(analyses[0]); i++) {
		put("analysis.json", analyses[i].text);
		judge(crit, &v);
		CHECK_INT(state(&v, "has_analysis"), analyses[i].pass ? ENGI_PASS : ENGI_FAIL);
		CHECK(holds(&v, "has_analysis", analyses[i].detail));
		engi_verdict_release(&v);
	}

	/* has_report counts as the benchmark's JavaScript does: a CJK
	 * character is one, one beyond the BMP two */
	char cjk[512] = "";
	for (int i = 0; i < 100; i++)
		strcat(cjk, "\xe6\xa2\x81"); /* U+6881 */
	put("report.md", cjk);
	judge(crit, &v);
	CHECK_INT(state(&v, "has_report"), ENGI_FAIL);
	CHECK(holds(&v, "has_report", "100 characters (more than 100 needed)"));
	engi_verdict_release(&v);
	strcat(cjk, "\xf0\x9f\x8f\x97"); /* U+1F3D7, a surrogate pair */
	put("report.md", cjk);
	judge(crit, &v);
	CHECK_INT(state(&v, "has_report"), ENGI_PASS);
	CHECK_NEAR(find_or_none(&v, "has_report")->value, 102, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* A task whose right answer is to deliver nothing passes when its model is
 * an optional deliverable, and fails when it is required. */
static void test_optional_file(void)
{
	void *crit = must_parse("{\"kind\": \"structureclaw\", \"file\": \"model.json\","
				" \"criteria\": [{\"name\": \"no_bad_model\", \"check\": "
				"\"no_bad_model\"}, {\"name\": \"quiet\", \"check\": "
				"\"no_analysis\"}]}",
				task);
	if (!crit)
		return;
	drop("model.json");
	drop("analysis.json");
	struct engi_verdict v;
	judge_opt(crit, 1, &v);
	const struct engi_assertion *d = find_or_none(&v, "delivered:model.json");
	CHECK_INT(d->state, ENGI_FAIL);
	CHECK_INT(d->required, 0);
	CHECK(holds(&v, "delivered:model.json", "(an optional deliverable)"));
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1);
	engi_verdict_release(&v);
	judge_opt(crit, 0, &v);
	CHECK_INT(find_or_none(&v, "delivered:model.json")->required, 1);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);
	/* delivered, it passes and stays optional */
	put("model.json", "{\"nodes\": [], \"elements\": []}");
	judge_opt(crit, 1, &v);
	CHECK_INT(state(&v, "delivered:model.json"), ENGI_PASS);
	CHECK_INT(find_or_none(&v, "delivered:model.json")->required, 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

static void test_parse_errors(void)
{
	char list[600];
	snprintf(list, sizeof(list), "%s/refs.json", task);
	FILE *fp = fopen(list, "w");
	CHECK(fp != NULL);
	if (fp) {
		fputs("[{\"id\": \"bad\", \"model\": {\"schema_version\": \"2.0.0\"}}]", fp);
		fclose(fp);
	}
	snprintf(list, sizeof(list), "%s/notalist.json", task);
	fp = fopen(list, "w");
	CHECK(fp != NULL);
	if (fp) {
		fputs("{\"id\": \"bad\"}", fp);
		fclose(fp);
	}
#define V(items)                                                                                   \
	"{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": [" items "]}"
	refused(V("{\"name\": \"a\", \"check\": \"has_modell\"}"), "unknown check 'has_modell'");
	refused(V("{\"name\": \"a\", \"check\": \"has_report\", \"min_nodes\": 2}"),
		"/verifier/criteria/0");
	refused(V("{\"name\": \"a\", \"check\": \"has_model\", \"min_nodes\": -1}"),
		"/verifier/criteria/0/min_nodes");
	refused(V("{\"name\": \"a\", \"check\": \"has_model\", \"value\": 1}"),
		"/verifier/criteria/0");
	refused(V("{\"name\": \"a\", \"check\": \"inapplicable\", \"required\": true}"),
		"/verifier/criteria/0/required: an inapplicable criterion is never required");
	refused(V("{\"name\": \"a\", \"check\": \"any_of\", \"of\": [\"a\"]}"),
		"/verifier/criteria/0/of/0: 'a' is this criterion");
	refused(V("{\"name\": \"a\", \"check\": \"any_of\", \"of\": []}"), "/of: expected 1 to 16");
	refused(V("{\"name\": \"a\", \"check\": \"any_of\", \"of\": [\"b\"]},"
		  "{\"name\": \"b\", \"check\": \"any_of\", \"of\": [\"c\"]}"),
		"/verifier/criteria/0/of/0: 'b' is a later any_of (/verifier/criteria/1)");
	refused(V("{\"name\": \"a\", \"check\": \"has_model\"},"
		  "{\"name\": \"a\", \"check\": \"no_bad_model\"}"),
		"/verifier/criteria/1/name: 'a' is already /verifier/criteria/0");
	refused(V("{\"name\": \"a\", \"check\": \"has_analysis\", \"file\": \"../x.json\"}"),
		"/verifier/criteria/0/file: '../x.json' must be a path inside the deliverables");
	refused(V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"/etc/passwd\","
		  " \"id\": \"x\"}"),
		"/verifier/criteria/0/reference: '/etc/passwd' must be a path inside the task");
	refused(V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"none.json\","
		  " \"id\": \"x\"}"),
		"/verifier/criteria/0/reference: cannot read reference models 'none.json'");
	refused(V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"refs.json\"}"),
		"/verifier/criteria/0/id: missing required field");
	refused(
	    V("{\"name\": \"a\", \"check\": \"model_matches_strict\","
	      " \"reference\": \"refs.json\", \"id\": \"nosuch\"}"),
	    "/verifier/criteria/0/id: refs.json has no entry 'nosuch' with a model (1 entries)");
	refused(V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"refs.json\","
		  " \"id\": \"bad\"}"),
		"/verifier/criteria/0/id: the reference does not read: refs.json 'bad'");
	refused(
	    V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"notalist.json\","
	      " \"id\": \"bad\"}"),
	    "/verifier/criteria/0/reference: notalist.json: expected an array");
	refused(V("{\"name\": \"a\", \"check\": \"model_matches\", \"reference\": \"refs.json\","
		  " \"id\": \"bad\", \"span_tol\": -1}"),
		"/verifier/criteria/0/span_tol");
	refused("{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": [],"
		" \"extra\": 1}",
		"/verifier");
#undef V
}

/* Hostile deliverables fail the criteria that read them, never crash. */
static void test_hostile(void)
{
	void *crit = must_parse(ALL_CRITERIA, task);
	void *match = must_parse(BEAM_CRITERIA, fixtures);
	if (!crit || !match)
		return;
	struct engi_verdict v;
	static const char *const texts[] = {
	    "\xff\xfe garbage",
	    "{\"nodes\": [{\"x\": 1e308}, {\"x\": -1e308}], \"elements\": [[]]}",
	    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\", \"metadata\": "
	    "{\"frameDimension\": \"2d\"}, \"nodes\": [{\"id\": \"1\", \"x\": 1e308, \"y\": 0, "
	    "\"z\": 0}, {\"id\": \"2\", \"x\": -1e308, \"y\": 0, \"z\": 0}], \"elements\": "
	    "[{\"id\": \"1\", \"type\": \"truss\", \"nodes\": [\"1\", \"2\"], \"material\": \"m\", "
	    "\"section\": \"s\"}], \"materials\": [{\"id\": \"m\", \"E\": 1, \"nu\": 0.3}], "
	    "\"sections\": [{\"id\": \"s\", \"properties\": {\"A\": 1}}]}",
	    "{\"format\": \"structural/1\", \"dim\": 2, \"nodes\": {}}",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		put("model.json", texts[i]);
		put("analysis.json", texts[i]);
		put("report.md", texts[i]);
		judge(crit, &v);
		CHECK_INT(state(&v, "has_analysis"), ENGI_FAIL);
		engi_verdict_release(&v);
		judge(match, &v);
		CHECK_INT(state(&v, "matches"), ENGI_FAIL);
		CHECK_INT(state(&v, "strict"), ENGI_FAIL);
		engi_verdict_release(&v);
	}
	/* nested past jansson's depth */
	size_t deep = 100000;
	char *t = malloc(2 * deep + 1);
	memset(t, '[', deep);
	memset(t + deep, ']', deep);
	t[2 * deep] = '\0';
	put("model.json", t);
	put("analysis.json", t);
	free(t);
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK_INT(state(&v, "has_analysis"), ENGI_FAIL);
	engi_verdict_release(&v);
	/* a model over the cap (sparse) is read no further; a folder or a link
	 * where a file should be is not delivered */
	char path[512];
	snprintf(path, sizeof(path), "%s/model.json", art);
	CHECK_INT(truncate(path, (off_t)65 << 20), 0);
	drop("analysis.json");
	snprintf(path, sizeof(path), "%s/analysis.json", art);
	CHECK_INT(mkdir(path, 0755), 0);
	drop("report.md");
	snprintf(path, sizeof(path), "%s/report.md", art);
	CHECK_INT(symlink("/etc/passwd", path), 0);
	judge(crit, &v);
	CHECK_INT(state(&v, "has_model"), ENGI_FAIL);
	CHECK(holds(&v, "has_model", "cannot read JSON 'model.json'"));
	CHECK_INT(state(&v, "no_bad_model"), ENGI_FAIL);
	CHECK_INT(state(&v, "has_analysis"), ENGI_FAIL);
	CHECK(holds(&v, "has_analysis", "'analysis.json' was not delivered"));
	CHECK_INT(state(&v, "should_not_analyze"), ENGI_PASS);
	CHECK_INT(state(&v, "has_report"), ENGI_FAIL);
	CHECK(holds(&v, "has_report", "'report.md' was not delivered"));
	engi_verdict_release(&v);
	judge(match, &v);
	CHECK_INT(state(&v, "matches"), ENGI_FAIL);
	engi_verdict_release(&v);
	rmdir(path);
	drop("report.md");
	snprintf(path, sizeof(path), "%s/analysis.json", art);
	rmdir(path);
	drop("model.json");
	engi_verifier_free(kind, crit);
	engi_verifier_free(kind, match);
}

/* analysis_matches against closed forms: the beam of sc_beam is fixed at
 * both ends in its plane (the benchmark's "simply supported" restraint of
 * ry at both ends; ux free at node 3), 6 m under 20 kN/m: reactions wL/2 =
 * 60 kN up, end moments wL^2/12 = 60 kN m, 30 kN m at midspan, no shear
 * there, no axial force, and a midspan deflection of wL^4/(384 EI). */
#define AM_CRITERIA                                                                                \
	"{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["                  \
	"{\"name\": \"right\", \"check\": \"analysis_matches\", \"file\": \"analysis.json\"}]}"

static int am_state(void *crit, const char *analysis, const char *want)
{
	struct engi_verdict v;
	put("analysis.json", analysis);
	judge(crit, &v);
	int st = state(&v, "right");
	if (want)
		CHECK(holds(&v, "right", want));
	engi_verdict_release(&v);
	return st;
}

static void test_analysis_matches(void)
{
	void *crit = must_parse(AM_CRITERIA, task);
	if (!crit)
		return;
	char *beam = sc_beam(6, -20, 1e-4);
	put("model.json", beam);
	free(beam);
	double w = 20, L = 6, EI = 205000e3 * 1e-4;
	double mid = -w * L * L * L * L / (384 * EI);
	char a[2048];
	const char *members = "\"memberForces\": ["
			      "{\"element\": \"1\", \"i\": {\"N\": 0, \"V\": 60, \"M\": 60}, "
			      "\"j\": {\"N\": 0, \"V\": 0,"
			      " \"M\": 30}},"
			      "{\"element\": \"2\", \"i\": {\"N\": 0, \"V\": 0, \"M\": 30}, \"j\": "
			      "{\"N\": 0, \"V\": 60,"
			      " \"M\": 60}}]";
	snprintf(
	    a, sizeof(a),
	    "{\"displacements\": [{\"node\": \"2\", \"ux\": 0, \"uz\": %.12g}],"
	    " \"reactions\": [{\"node\": \"1\", \"fx\": 0, \"fz\": 60}, {\"node\": \"3\", \"fz\": "
	    "60}], %s}",
	    mid, members);
	CHECK_INT(am_state(crit, a,
			   "17 values compared (2 displacements, 3 reactions, 12 member "
			   "forces)"),
		  ENGI_PASS);
	/* each kind alone is enough, and each is checked */
	CHECK_INT(am_state(crit, "{\"reactions\": [{\"node\": \"3\", \"fz\": 50}]}",
			   "fz of reactions entry 0: 50 reported, 60 solved"),
		  ENGI_FAIL);
	CHECK_INT(am_state(crit, "{\"reactions\": [{\"node\": \"3\", \"fz\": -60}]}", NULL),
		  ENGI_FAIL);
	snprintf(a, sizeof(a), "{%s}", members);
	CHECK_INT(am_state(crit, a, "12 member forces"), ENGI_PASS);
	CHECK_INT(am_state(crit, "{\"memberForces\": [{\"element\": \"1\", \"i\": {\"M\": 45}}]}",
			   "|M| at i of memberForces entry 0: 45 reported, 60 solved"),
		  ENGI_FAIL);
	/* by magnitude: another sign convention, shear given by components */
	CHECK_INT(
	    am_state(crit,
		     "{\"memberForces\": [{\"element\": \"1\", \"i\": {\"Vy\": 36, \"Vz\": -48,"
		     " \"M\": -60}}]}",
		     NULL),
	    ENGI_PASS);
	/* the end moment's sign in the file's axes: one of the two holds */
	int plus = am_state(crit, "{\"reactions\": [{\"node\": \"1\", \"my\": 60}]}", NULL);
	int minus = am_state(crit, "{\"reactions\": [{\"node\": \"1\", \"my\": -60}]}", NULL);
	CHECK((plus == ENGI_PASS) != (minus == ENGI_PASS));
	/* the deflection's magnitude and sign */
	snprintf(a, sizeof(a), "{\"displacements\": [{\"node\": \"2\", \"uz\": %.12g}]}", -mid);
	CHECK_INT(am_state(crit, a, NULL), ENGI_FAIL);
	/* ids: by the file's string ids; none known is no comparison */
	CHECK_INT(am_state(crit, "{\"memberForces\": [{\"element\": \"9\", \"i\": {\"M\": 60}}]}",
			   "name none"),
		  ENGI_FAIL);
	CHECK_INT(am_state(crit, "{\"memberForces\": [], \"reactions\": []}",
			   "no displacements, reactions or member forces"),
		  ENGI_FAIL);
	/* hostile: a long list of unknown and repeated ids is judged, not a crash */
	size_t n = 200000;
	char *big = malloc(n * 24 + 64);
	size_t k = (size_t)sprintf(big, "{\"reactions\": [");
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(big + k, "%s{\"node\": %zu}", i ? "," : "", i % 7);
	sprintf(big + k, "]}");
	CHECK_INT(am_state(crit, big, NULL), ENGI_FAIL);
	free(big);
	drop("analysis.json");
	drop("model.json");
	engi_verifier_free(kind, crit);
}

/* responses_match: the delivered model's solve against the truth of the
 * ground truth (two solves that agree), through the strict match: the same
 * beam in either format passes; a load 3 % off is within the strict match's
 * 5 % but not the responses' 1 %; a model that does not match compares
 * nothing; a mechanism has no truth, which is the task's error. */
static void test_responses(void)
{
	void *crit =
	    must_parse("{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["
		       "{\"name\": \"strict\", \"check\": \"model_matches_strict\","
		       " \"reference\": \"ground-truth-models.json\", \"id\": "
		       "\"beam-simple-6m\"},"
		       "{\"name\": \"resp\", \"check\": \"responses_match\","
		       " \"reference\": \"ground-truth-models.json\", \"id\": "
		       "\"beam-simple-6m\"}]}",
		       fixtures);
	if (!crit)
		return;
	struct engi_verdict v;
	put("model.json", s1_beam);
	judge(crit, &v);
	CHECK_INT(state(&v, "resp"), ENGI_PASS);
	CHECK(holds(&v, "resp", "against the truth of ground-truth-models.json 'beam-simple-6m'"));
	CHECK(find_or_none(&v, "resp")->value <= 1e-6);
	engi_verdict_release(&v);
	char *m = sc_beam(6, -20, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "resp"), ENGI_PASS);
	engi_verdict_release(&v);
	m = sc_beam(6, -20.6, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "strict"), ENGI_PASS);
	CHECK_INT(state(&v, "resp"), ENGI_FAIL);
	CHECK(find_or_none(&v, "resp")->value > 1);
	engi_verdict_release(&v);
	m = sc_beam(7, -20, 1e-4);
	put("model.json", m);
	free(m);
	judge(crit, &v);
	CHECK_INT(state(&v, "resp"), ENGI_FAIL);
	CHECK(holds(&v, "resp", "no responses compared: the model does not match"));
	engi_verdict_release(&v);
	drop("model.json");
	engi_verifier_free(kind, crit);
	void *bad = NULL;
	struct engi_error e;
	CHECK(parse_in("{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["
		       "{\"name\": \"resp\", \"check\": \"responses_match\","
		       " \"reference\": \"ground-truth-models.json\", \"id\": "
		       "\"truss-roof-18m-3m-12k\"}]}",
		       fixtures, &bad, &e) < 0);
	CHECK(strstr(e.msg, "/verifier/criteria/0/id") && strstr(e.msg, "has no truth"));
	engi_verifier_free(kind, bad);
}

/* report_matches: a report that states beam-simple-6m's largest
 * displacement (its file fixes both ends: w L^4 / (384 E I) = 3.2927 mm)
 * as a length with its unit passes, rounded as written, in m, mm or the
 * Chinese units; other lengths, glued or squared numbers do not. */
static int rm_state(void *crit, const char *text)
{
	struct engi_verdict v;
	if (text)
		put("report.md", text);
	else
		drop("report.md");
	judge(crit, &v);
	int st = state(&v, "numbers");
	engi_verdict_release(&v);
	return st;
}

static void test_report_matches(void)
{
	void *crit =
	    must_parse("{\"kind\": \"structureclaw\", \"file\": \"model.json\", \"criteria\": ["
		       "{\"name\": \"numbers\", \"check\": \"report_matches\","
		       " \"reference\": \"ground-truth-models.json\", \"id\": "
		       "\"beam-simple-6m\"}]}",
		       fixtures);
	if (!crit)
		return;
	put("model.json", s1_beam);
	CHECK_INT(rm_state(crit, "The largest deflection is 3.29 mm at midspan."), ENGI_PASS);
	CHECK_INT(rm_state(crit, "max |u| = 0.0032927 m"), ENGI_PASS);
	CHECK_INT(rm_state(crit, "u = 3.2927e-3 m"), ENGI_PASS);
	CHECK_INT(
	    rm_state(
		crit,
		"\xe6\x9c\x80\xe5\xa4\xa7\xe4\xbd\x8d\xe7\xa7\xbb 3.3\xe6\xaf\xab\xe7\xb1\xb3"),
	    ENGI_PASS);
	CHECK_INT(rm_state(crit, "0.33\xc2\xa0"
				 "cm"),
		  ENGI_PASS);
	CHECK_INT(rm_state(crit, "about 3 mm"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, "16.5 mm, as a simply supported beam would"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, "section H3.29 mm"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, "3.29 mm\xc2\xb2 of steel"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, "3.29 min"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, "no numbers at all"), ENGI_FAIL);
	CHECK_INT(rm_state(crit, NULL), ENGI_FAIL);
	struct engi_verdict v;
	put("report.md", "span 6 m, deflection 3.29 mm");
	judge(crit, &v);
	CHECK(holds(&v, "numbers",
		    "the largest displacement of ground-truth-models.json "
		    "'beam-simple-6m' in 'LC1'"));
	engi_verdict_release(&v);
	drop("report.md");
	drop("model.json");
	engi_verifier_free(kind, crit);
}

int main(int argc, char **argv)
{
	struct engi_error e;
	engi_error_init(&e);
	(void)parse; /* kindtest.h's: every parse here names the task's folder */
	kind = engi_verifier_lookup("structureclaw", &e);
	CHECK(kind != NULL);
	if (!kind || argc != 2) {
		fprintf(stderr, "usage: %s STRUCTURECLAW_BENCH_FOLDER\n", argv[0]);
		CHECK(argc == 2);
		return check_exit();
	}
	snprintf(dir, sizeof(dir), "/tmp/engi-sck-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(art, sizeof(art), "%s/art", dir);
	snprintf(task, sizeof(task), "%s/task", dir);
	CHECK_INT(mkdir(art, 0755), 0);
	CHECK_INT(mkdir(task, 0755), 0);
	test_fixtures(argv[1]);
	test_beam_variants();
	test_checks();
	test_analysis_matches();
	test_responses();
	test_report_matches();
	test_optional_file();
	test_parse_errors();
	test_hostile();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
