/* Verifier kind "param_spec" on a generated flange: two washers (64-gon
 * rings) side by side, so two shells, genus 2, closed-form volume, area and
 * spans, and through-holes whose largest empty cylinder is the 64-gon's
 * inradius. A wrong hole diameter fails its parameter; spec_consistency
 * follows the failure budget; the continuous reward is the harmonic mean
 * with geometry_similarity; malformed parameters name their JSON pointer. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/verify.h"
#include "kindtest.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define NSIDES 64
#define PI     3.14159265358979323846

/* A ring between regular n-gons of circumradii ro > ri, z from 0 to t,
 * centred at (cx, cy), outward normals. */
static void gen_washer(struct engi_mesh *m, double cx, double cy, double ro, double ri, double t)
{
	uint32_t v0 = (uint32_t)m->nverts;
	for (int k = 0; k < NSIDES; k++) {
		double a = 2 * PI * k / NSIDES, c = cos(a), s = sin(a);
		gen_vertex(m, cx + ro * c, cy + ro * s, 0);
		gen_vertex(m, cx + ro * c, cy + ro * s, t);
		gen_vertex(m, cx + ri * c, cy + ri * s, 0);
		gen_vertex(m, cx + ri * c, cy + ri * s, t);
	}
	for (int k = 0; k < NSIDES; k++) {
		uint32_t a = v0 + 4 * (uint32_t)k, b = v0 + 4 * (uint32_t)((k + 1) % NSIDES);
		uint32_t q[4][4] = {
		    {a, b, b + 1, a + 1},	  /* outer wall */
		    {b + 2, a + 2, a + 3, b + 3}, /* inner wall */
		    {a + 1, b + 1, b + 3, a + 3}, /* top */
		    {a, a + 2, b + 2, b},	  /* bottom */
		};
		for (int f = 0; f < 4; f++) {
			gen_tri(m, q[f][0], q[f][1], q[f][2]);
			gen_tri(m, q[f][0], q[f][2], q[f][3]);
		}
	}
}

static double washer_volume(double ro, double ri, double t)
{
	return NSIDES / 2.0 * sin(2 * PI / NSIDES) * (ro * ro - ri * ri) * t;
}

static double washer_area(double ro, double ri, double t)
{
	double side = 2 * sin(PI / NSIDES) * NSIDES * t;
	return NSIDES * sin(2 * PI / NSIDES) * (ro * ro - ri * ri) + side * (ro + ri);
}

static void write_flange(const char *name, double bore)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_washer(&m, 0, 0, 20, bore / 2, 4);
	gen_washer(&m, 60, 0, 10, 3, 4);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(gen_write_stl_ascii(path, &m), 0);
	engi_mesh_release(&m);
}

static double metric(const struct engi_verdict *v, const char *name)
{
	double x = NAN;
	engi_verdict_get_metric(v, name, &x);
	return x;
}

static void run(const char *file, void *crit, struct engi_verdict *v)
{
	struct engi_error e;
	engi_error_init(&e);
	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	engi_verdict_init(v);
	CHECK_INT(engi_verify_file(kind, crit, file, &ctx, v, &e), 0);
	if (e.code)
		fprintf(stderr, "verify: %s\n", e.msg);
}

#define FLANGE_PARAMS                                                                              \
	"{\"name\": \"width\", \"measure\": \"bbox_span\", \"axis\": \"x\", \"value\": 90},"       \
	"{\"name\": \"depth\", \"measure\": \"bbox_span\", \"axis\": \"y\", \"value\": 40},"       \
	"{\"name\": \"thick\", \"measure\": \"bbox_span\", \"axis\": \"z\", \"value\": 4,"         \
	" \"tol_abs\": 1e-9},"                                                                     \
	"{\"name\": \"vol\", \"measure\": \"volume\", \"value\": %.17g, \"tol_rel\": 1e-12},"      \
	"{\"name\": \"area\", \"measure\": \"area\", \"value\": %.17g, \"tol_rel\": 1e-12},"       \
	"{\"name\": \"bodies\", \"measure\": \"shells\", \"equals\": 2},"                          \
	"{\"name\": \"genus\", \"measure\": \"genus\", \"equals\": 2},"                            \
	"{\"name\": \"bore\", \"measure\": \"hole_diameter\", \"axis\": \"z\","                    \
	" \"at\": [0, 0], \"value\": 10},"                                                         \
	"{\"name\": \"pin\", \"measure\": \"void\", \"axis\": \"z\", \"at\": [60, 0],"             \
	" \"diameter\": 6},"                                                                       \
	"{\"name\": \"web\", \"measure\": \"material\", \"value\": 48, \"tol_rel\": 1e-9,"         \
	" \"region\": {\"box\": {\"min\": [8, -2, 0.5], \"max\": [12, 2, 3.5]}}}"

static void *flange_criteria(const char *extra_top, const char *extra_params)
{
	double vol = washer_volume(20, 5, 4) + washer_volume(10, 3, 4);
	double area = washer_area(20, 5, 4) + washer_area(10, 3, 4);
	char text[4096];
	snprintf(
	    text, sizeof(text),
	    "{\"kind\": \"param_spec\", \"file\": \"part.stl\"%s, \"criteria\": [" FLANGE_PARAMS
	    "%s]}",
	    extra_top, vol, area, extra_params);
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(text, &crit, &e), 0);
	if (e.code)
		fprintf(stderr, "parse: %s\n", e.msg);
	return crit;
}

static void test_exact_measures(void)
{
	write_flange("part.stl", 10);
	void *crit = flange_criteria("", "");
	struct engi_verdict v;
	run("part.stl", crit, &v);
	for (size_t i = 1; i < v.na; i++) {
		printf("  %-16s %-13s %s\n", v.a[i].name, engi_astate_name(v.a[i].state),
		       v.a[i].detail);
		CHECK_INT(v.a[i].state, ENGI_PASS);
		CHECK_STR(v.a[i].stage, "specification");
		CHECK_INT(v.a[i].required, 0);
	}
	CHECK_INT(v.na, 11);
	/* the largest empty cylinder in a 64-gon hole is its inradius */
	const struct engi_assertion *bore = find_or_none(&v, "param:bore");
	CHECK_NEAR(bore->value, 10 * cos(PI / NSIDES), 0.05);
	CHECK_NEAR(bore->expected, 10, 0);
	CHECK(find_or_none(&v, "param:pin")->value < 0.01);
	CHECK_NEAR(metric(&v, "spec_consistency"), 1, 0);
	CHECK_NEAR(metric(&v, "spec_budget"), 10, 0);
	CHECK(isnan(metric(&v, "geometry_similarity")));
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* A 12 mm bore where the drawing says 10: that parameter fails, with the
 * measured and expected values; a wrong volume and area fail too. */
static void test_wrong_hole(void)
{
	write_flange("wide.stl", 12);
	void *crit = flange_criteria("", "");
	struct engi_verdict v;
	run("wide.stl", crit, &v);
	const struct engi_assertion *bore = find_or_none(&v, "param:bore");
	printf("  wrong bore: %s\n", bore->detail);
	CHECK_INT(bore->state, ENGI_FAIL);
	CHECK_NEAR(bore->value, 12 * cos(PI / NSIDES), 0.06);
	CHECK_NEAR(bore->expected, 10, 0);
	CHECK_INT(find_or_none(&v, "param:vol")->state, ENGI_FAIL);
	CHECK_INT(find_or_none(&v, "param:area")->state, ENGI_FAIL);
	CHECK_INT(find_or_none(&v, "param:width")->state, ENGI_PASS);
	CHECK_NEAR(metric(&v, "spec_failed"), 3, 0);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0.7, 1e-12);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* Lines through material and voids that are not there. */
static void test_occupancy_measures(void)
{
	static const char text[] =
	    "{\"kind\": \"param_spec\", \"file\": \"part.stl\", \"failure_budget\": 4,"
	    " \"criteria\": ["
	    "{\"name\": \"solid\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
	    " \"at\": [12, 0], \"value\": 2},"
	    "{\"name\": \"across\", \"measure\": \"hole_diameter\", \"axis\": \"x\","
	    " \"at\": [0, 2], \"value\": 2},"
	    "{\"name\": \"pin2\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
	    " \"at\": [60, 0], \"value\": 6, \"tol_abs\": 0.1},"
	    "{\"name\": \"nohole\", \"measure\": \"void\", \"axis\": \"z\", \"at\": [12, 0],"
	    " \"diameter\": 2},"
	    "{\"name\": \"outside\", \"measure\": \"void\", \"axis\": \"y\", \"at\": [40, 2],"
	    " \"diameter\": 4, \"max\": 0}]}";
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(text, &crit, &e), 0);
	struct engi_verdict v;
	run("part.stl", crit, &v);
	for (size_t i = 1; i < v.na; i++)
		printf("  %-16s %-13s %s\n", v.a[i].name, engi_astate_name(v.a[i].state),
		       v.a[i].detail);
	CHECK_INT(find_or_none(&v, "param:solid")->state, ENGI_FAIL);
	CHECK_NEAR(find_or_none(&v, "param:solid")->value, 0, 0);
	CHECK(strstr(find_or_none(&v, "param:solid")->detail, "material on the line") != NULL);
	CHECK_INT(find_or_none(&v, "param:across")->state, ENGI_FAIL);
	CHECK_INT(find_or_none(&v, "param:pin2")->state, ENGI_PASS);
	CHECK_NEAR(find_or_none(&v, "param:pin2")->value, 6 * cos(PI / NSIDES), 0.05);
	CHECK_INT(find_or_none(&v, "param:nohole")->state, ENGI_FAIL);
	CHECK(find_or_none(&v, "param:nohole")->value > 0.99);
	CHECK_INT(find_or_none(&v, "param:outside")->state, ENGI_PASS);
	/* 3 failed of a budget of 4 */
	CHECK_NEAR(metric(&v, "spec_consistency"), 0.25, 1e-12);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* budget = min(failure_budget, parameters); unreadable deliveries fail every
 * parameter. */
static void test_budget(void)
{
	struct engi_verdict v;
	void *crit = flange_criteria(", \"failure_budget\": 4", "");
	run("wide.stl", crit, &v);
	CHECK_NEAR(metric(&v, "spec_budget"), 4, 0);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0.25, 1e-12);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);

	crit = flange_criteria(", \"failure_budget\": 3", "");
	run("wide.stl", crit, &v);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);

	/* two parameters, the default budget of 10 caps at 2: one wrong of two */
	static const char two[] =
	    "{\"kind\": \"param_spec\", \"file\": \"part.stl\", \"criteria\": ["
	    "{\"name\": \"w\", \"measure\": \"bbox_span\", \"axis\": \"x\", \"value\": 90},"
	    "{\"name\": \"h\", \"measure\": \"bbox_span\", \"axis\": \"z\", \"value\": 5}]}";
	struct engi_error e;
	CHECK_INT(parse(two, &crit, &e), 0);
	run("part.stl", crit, &v);
	CHECK_NEAR(metric(&v, "spec_budget"), 2, 0);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0.5, 1e-12);
	engi_verdict_release(&v);

	char path[256];
	snprintf(path, sizeof(path), "%s/junk.stl", dir);
	CHECK_INT(gen_write_file(path, "solid x\nfacet\n", 14), 0);
	run("junk.stl", crit, &v);
	CHECK_INT(find_or_none(&v, "param:w")->state, ENGI_FAIL);
	CHECK_INT(find_or_none(&v, "param:h")->state, ENGI_FAIL);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0, 0);
	engi_verdict_release(&v);
	/* an open box: occupancy and genus are undefined, spans are not */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 90, 10, 5);
	m.ntris -= 2;
	snprintf(path, sizeof(path), "%s/open.stl", dir);
	CHECK_INT(gen_write_stl_ascii(path, &m), 0);
	engi_mesh_release(&m);
	static const char open[] =
	    "{\"kind\": \"param_spec\", \"file\": \"part.stl\", \"criteria\": ["
	    "{\"name\": \"w\", \"measure\": \"bbox_span\", \"axis\": \"x\", \"value\": 90},"
	    "{\"name\": \"g\", \"measure\": \"genus\", \"equals\": 0},"
	    "{\"name\": \"b\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
	    " \"at\": [1, 1], \"value\": 1}]}";
	void *crit2;
	CHECK_INT(parse(open, &crit2, &e), 0);
	run("open.stl", crit2, &v);
	CHECK_INT(find_or_none(&v, "param:w")->state, ENGI_PASS);
	CHECK_INT(find_or_none(&v, "param:g")->state, ENGI_FAIL);
	CHECK(strstr(find_or_none(&v, "param:b")->detail, "undefined: not watertight") != NULL);
	CHECK_NEAR(metric(&v, "spec_consistency"), 1.0 / 3, 1e-12);
	engi_verdict_release(&v);
	/* an empty STL: nothing to measure a hole in */
	snprintf(path, sizeof(path), "%s/empty.stl", dir);
	CHECK_INT(gen_write_file(path, "solid e\nendsolid e\n", 19), 0);
	run("empty.stl", crit2, &v);
	CHECK(find_or_none(&v, "param:b")->state == ENGI_FAIL ||
	      find_or_none(&v, "param:b")->state == ENGI_UNAVAILABLE);
	printf("  empty: %s\n", find_or_none(&v, "param:b")->detail);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit2);

	run("missing.stl", crit, &v);
	CHECK_INT(find_or_none(&v, "param:w")->state, ENGI_FAIL);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* One verifier gives both terms of the continuous reward. */
static void test_reward(void)
{
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/ref", dir);
	CHECK_INT(mkdir(sub, 0700), 0);
	write_flange("ref/part.stl", 10);
	struct engi_scoring_spec spec = {.mode = ENGI_SCORING_CONTINUOUS};
	snprintf(spec.geometry_metric, sizeof(spec.geometry_metric), "geometry_similarity");
	snprintf(spec.spec_metric, sizeof(spec.spec_metric), "spec_consistency");

	void *crit =
	    flange_criteria(", \"reference\": \"ref/part.stl\", \"failure_budget\": 4", "");
	struct engi_verdict v;
	run("part.stl", crit, &v);
	double g = metric(&v, "geometry_similarity");
	CHECK(g > 0.999);
	CHECK_INT(find_or_none(&v, "geometry_similarity")->state, ENGI_PASS);
	engi_verdict_score(&v, &spec);
	CHECK_NEAR(v.quality, 1, 1e-3);
	engi_verdict_release(&v);

	/* the wide bore: 3 of a budget of 4 failed, geometry a little off */
	run("wide.stl", crit, &v);
	g = metric(&v, "geometry_similarity");
	double s = metric(&v, "spec_consistency");
	CHECK_NEAR(s, 0.25, 1e-12);
	engi_verdict_score(&v, &spec);
	printf("  wide bore: geometry %.4f, spec %.4f, reward %.4f\n", g, s, v.quality);
	CHECK(g > 0 && g < 1);
	CHECK_NEAR(v.quality, 2 * g * s / (g + s), 1e-12);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);

	/* a junk delivery: both terms 0 */
	run("junk.stl", crit, &v);
	CHECK_NEAR(metric(&v, "geometry_similarity"), 0, 0);
	engi_verdict_score(&v, &spec);
	CHECK_NEAR(v.quality, 0, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);

	/* a required parameter that fails is a gate */
	crit = flange_criteria(", \"reference\": \"ref/part.stl\"",
			       ", {\"name\": \"gate\", \"measure\": \"shells\", \"equals\": 1,"
			       " \"required\": true}");
	run("part.stl", crit, &v);
	CHECK_INT(find_or_none(&v, "param:gate")->state, ENGI_FAIL);
	CHECK_INT(find_or_none(&v, "param:gate")->required, 1);
	CHECK_NEAR(metric(&v, "spec_consistency"), 0.9, 1e-12);
	engi_verdict_score(&v, &spec);
	CHECK_NEAR(v.quality, 0, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);

	/* a missing reference is ours: unavailable, no geometry metric */
	crit = flange_criteria(", \"reference\": \"ref/nope.stl\"", "");
	run("part.stl", crit, &v);
	CHECK_INT(find_or_none(&v, "geometry_similarity")->state, ENGI_UNAVAILABLE);
	CHECK(isnan(metric(&v, "geometry_similarity")));
	engi_verdict_score(&v, &spec);
	CHECK_NEAR(v.quality, 0, 0);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

/* Poisoned deliveries: coordinates the readers refuse (1e308, NaN) fail
 * every parameter and the geometry term with a message naming the facet,
 * vertex and problem; closed parts with extreme coordinates inside the
 * bound (1e20 beside 1) are measured, hole search and oriented box
 * included, and give a verdict. */
static void test_poisoned(void)
{
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/pref", dir);
	CHECK_INT(mkdir(sub, 0700), 0);
	write_flange("pref/part.stl", 10);
	void *crit = flange_criteria(", \"reference\": \"pref/part.stl\"", "");
	static const struct {
		const char *file;
		double bad;
		const char *want;
	} refused[] = {
	    {"huge.stl", 1e308,
	     "facet 0, vertex 2: coordinate y = 1e+308 exceeds 1e+30 in magnitude"},
	    {"nan.stl", NAN, "facet 0, vertex 2: coordinate y = nan is not finite"},
	};
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		struct engi_mesh m;
		engi_mesh_init(&m);
		gen_box(&m, 0, 0, 0, 1, 1, 1);
		m.xyz[3 * (size_t)m.tri[1] + 1] = refused[k].bad;
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", dir, refused[k].file);
		CHECK_INT(gen_write_stl_ascii(path, &m), 0);
		engi_mesh_release(&m);
		struct engi_verdict v;
		run(refused[k].file, crit, &v);
		size_t nparam = 0;
		for (size_t i = 0; i < v.na; i++) {
			if (strncmp(v.a[i].name, "param:", 6) &&
			    strcmp(v.a[i].name, "geometry_similarity"))
				continue;
			nparam++;
			CHECK(v.a[i].state == ENGI_FAIL || v.a[i].state == ENGI_UNAVAILABLE);
			if (!strstr(v.a[i].detail, refused[k].want))
				fprintf(stderr, "%s: '%s' lacks '%s'\n", v.a[i].name, v.a[i].detail,
					refused[k].want);
			CHECK(strstr(v.a[i].detail, refused[k].want) != NULL);
		}
		CHECK_INT(nparam, 11);
		CHECK_INT(find_or_none(&v, "geometry_similarity")->state, ENGI_FAIL);
		CHECK_NEAR(metric(&v, "spec_consistency"), 0, 0);
		engi_verdict_release(&v);
	}

	/* closed and within the bound: a box 1e20 long and 1 wide around the
	 * bore's line, and a tetrahedron with 1e20 beside 1 */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, -1e20, -0.5, -0.5, 1e20 + 1, 1, 1);
	char path[256];
	snprintf(path, sizeof(path), "%s/long.stl", dir);
	CHECK_INT(gen_write_stl_ascii(path, &m), 0);
	engi_mesh_release(&m);
	engi_mesh_init(&m);
	gen_vertex(&m, 1e20, 0, 0);
	gen_vertex(&m, 1, 1, 0);
	gen_vertex(&m, 0, 0, 1);
	gen_vertex(&m, 0, 1, 1e-20);
	gen_tri(&m, 0, 2, 1);
	gen_tri(&m, 0, 1, 3);
	gen_tri(&m, 0, 3, 2);
	gen_tri(&m, 1, 2, 3);
	snprintf(path, sizeof(path), "%s/sliver.stl", dir);
	CHECK_INT(gen_write_stl_ascii(path, &m), 0);
	engi_mesh_release(&m);
	const char *const kept[] = {"long.stl", "sliver.stl"};
	for (int k = 0; k < 2; k++) {
		struct engi_verdict v;
		run(kept[k], crit, &v);
		const struct engi_assertion *bore = find_or_none(&v, "param:bore");
		CHECK(bore->state == ENGI_FAIL || bore->state == ENGI_UNAVAILABLE);
		CHECK_INT(find_or_none(&v, "param:bodies")->state, ENGI_FAIL);
		const struct engi_assertion *g = find_or_none(&v, "geometry_similarity");
		CHECK(g->state == ENGI_FAIL || g->state == ENGI_PASS);
		double gs = metric(&v, "geometry_similarity");
		CHECK(gs >= 0 && gs < 0.5);
		CHECK(metric(&v, "spec_consistency") < 0.5);
		printf("  %s: bore '%s', geometry %g\n", kept[k], bore->detail, gs);
		engi_verdict_release(&v);
	}
	engi_verifier_free(kind, crit);
}

static void expect_error(const char *params, const char *top, const char *msg)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"kind\": \"param_spec\", \"file\": \"p.stl\"%s, \"criteria\": [%s]}", top,
		 params);
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(text, &crit, &e), ENGI_EPARSE);
	CHECK_STR(e.msg, msg);
	CHECK(crit == NULL);
}

static void test_parse_errors(void)
{
	static const char ok[] = "{\"name\": \"w\", \"measure\": \"volume\", \"value\": 1}";
	expect_error("{\"name\": \"w\", \"measure\": \"mass\", \"value\": 1}", "",
		     "t.json: /verifier/criteria/0/measure: unknown measure 'mass' (valid: "
		     "bbox_span, volume, area, shells, genus, hole_diameter, void, material)");
	expect_error("{\"name\": \"w\", \"measure\": \"bbox_span\", \"value\": 1}", "",
		     "t.json: /verifier/criteria/0/axis: missing required field");
	expect_error("{\"name\": \"w\", \"measure\": \"bbox_span\", \"axis\": \"w\", \"value\": 1}",
		     "", "t.json: /verifier/criteria/0/axis: unknown axis 'w' (valid: x, y, z)");
	expect_error("{\"name\": \"w\", \"measure\": \"volume\", \"axis\": \"x\", \"value\": 1}",
		     "", "t.json: /verifier/criteria/0/axis: does not apply to measure 'volume'");
	expect_error("{\"name\": \"b\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
		     " \"at\": [1, 2, 3], \"value\": 5}",
		     "",
		     "t.json: /verifier/criteria/0/at: expected 2 numbers (the coordinates "
		     "across the axis), found 3");
	expect_error("{\"name\": \"b\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
		     " \"at\": [1, 2], \"min\": 5}",
		     "",
		     "t.json: /verifier/criteria/0/min: measure 'hole_diameter' does not take "
		     "bounds; use value");
	expect_error("{\"name\": \"b\", \"measure\": \"hole_diameter\", \"axis\": \"z\","
		     " \"at\": [1, 2], \"value\": 0, \"tol_abs\": 1}",
		     "", "t.json: /verifier/criteria/0/value: must be greater than 0");
	expect_error("{\"name\": \"p\", \"measure\": \"void\", \"axis\": \"z\", \"at\": [1, 2]}",
		     "", "t.json: /verifier/criteria/0/diameter: missing required field");
	expect_error("{\"name\": \"p\", \"measure\": \"void\", \"axis\": \"z\", \"at\": [1, 2],"
		     " \"diameter\": 3, \"value\": 0}",
		     "",
		     "t.json: /verifier/criteria/0/value: measure 'void' does not take value; "
		     "use min and/or max");
	expect_error("{\"name\": \"m\", \"measure\": \"material\", \"max\": 1,"
		     " \"region\": {\"box\": {\"min\": [0, 0, 0], \"max\": [1, 0, 1]}}}",
		     "",
		     "t.json: /verifier/criteria/0/region/box/max: must exceed min along y (0 <= "
		     "0)");
	expect_error("{\"name\": \"w\", \"measure\": \"volume\", \"stage\": \"x\", \"value\": 1}",
		     "",
		     "t.json: /verifier/criteria/0/stage: unknown field (valid: name, measure, "
		     "axis, at, diameter, region, equals, value, tol_rel, tol_abs, min, max, "
		     "required)");
	expect_error("{\"name\": \"w\", \"measure\": \"volume\", \"value\": 1},"
		     "{\"name\": \"w\", \"measure\": \"area\", \"value\": 1}",
		     "", "t.json: /verifier/criteria/1/name: 'w' is already /verifier/criteria/0");
	expect_error("{\"name\": \"a234567890123456789012345678901234567890123456789012345678\","
		     " \"measure\": \"volume\", \"value\": 1}",
		     "",
		     "t.json: /verifier/criteria/0/name: "
		     "'a234567890123456789012345678901234567890123456789012345678' is longer "
		     "than 57 characters");
	expect_error(ok, ", \"failure_budget\": 0",
		     "t.json: /verifier/failure_budget: must be an integer from 1 to 256");
	expect_error(ok, ", \"failure_budget\": 2.5",
		     "t.json: /verifier/failure_budget: expected an integer, found a number");
	expect_error(ok, ", \"reference\": \"../r.stl\"",
		     "t.json: /verifier/reference: must be a relative path inside the task folder");
	expect_error("", "", "t.json: /verifier/criteria: needs at least one criterion");
}

int main(void)
{
	struct engi_error e;
	engi_error_init(&e);
	kind = engi_verifier_lookup("param_spec", &e);
	CHECK(kind != NULL);
	if (!kind)
		return check_exit();
	snprintf(dir, sizeof(dir), "/tmp/engi-spec-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse_errors();
	test_exact_measures();
	test_wrong_hole();
	test_occupancy_measures();
	test_budget();
	test_reward();
	test_poisoned();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
