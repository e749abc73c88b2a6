/* Verifier kind "mesh": criteria parsing, every check and comparator, and
 * broken deliveries. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/verify.h"
#include "kindtest.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

/* pairs a self_intersections detail names before "and N more" */
#define MESH_SHOWN_PAIRS 3

/* Parses `verifier` (JSON text); returns the code, *crit on success. */
static void parse_error(int line, const char *criteria_or_extra, const char *msg)
{
	char text[2048];
	if (criteria_or_extra[0] == '[')
		snprintf(text, sizeof(text),
			 "{\"kind\": \"mesh\", \"file\": \"p.stl\", \"criteria\": %s}",
			 criteria_or_extra);
	else
		snprintf(text, sizeof(text), "{\"kind\": \"mesh\", \"file\": \"p.stl\"%s}",
			 criteria_or_extra);
	void *crit;
	struct engi_error e;
	int rc = parse(text, &crit, &e);
	CHECK_INT(rc, ENGI_EPARSE);
	CHECK(crit == NULL);
	char want[600];
	snprintf(want, sizeof(want), "t.json: %s", msg);
	if (strcmp(e.msg, want))
		fprintf(stderr, "line %d:\n", line);
	CHECK_STR(e.msg, want);
}

#define PARSE_ERROR(c, m) parse_error(__LINE__, c, m)

static void test_parse_errors(void)
{
	PARSE_ERROR(", \"criteria\": [{\"name\": \"w\", \"check\": \"watertight\"}], \"extra\": 1",
		    "/verifier/extra: unknown field (valid: kind, file, weld_tol, criteria, "
		    "objective, reward)");
	PARSE_ERROR(", \"weld_tol\": -1, \"criteria\": []",
		    "/verifier/weld_tol: must be at least 0");
	PARSE_ERROR(", \"weld_tol\": \"1e-6\"",
		    "/verifier/weld_tol: expected a number, found a string");
	PARSE_ERROR("", "/verifier/criteria: missing required field");
	PARSE_ERROR(", \"criteria\": {}", "/verifier/criteria: expected an array, found an object");
	PARSE_ERROR("[]", "/verifier/criteria: needs at least one criterion");
	PARSE_ERROR("[\"volume\"]", "/verifier/criteria/0: expected an object, found a string");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"value\": 1, \"tol\": 0.1}]",
		    "/verifier/criteria/0/tol: unknown field (valid: name, check, equals, value, "
		    "tol_rel, tol_abs, min, max, axis, beam_axis, about, required, stage)");
	PARSE_ERROR(
	    "[{\"name\": \"v\", \"check\": \"volume\", \"value\": 1, \"a/b~\": 0}]",
	    "/verifier/criteria/0/a~1b~0: unknown field (valid: name, check, equals, value, "
	    "tol_rel, tol_abs, min, max, axis, beam_axis, about, required, stage)");
	PARSE_ERROR("[{\"name\": \"a\", \"check\": \"watertight\"},"
		    " {\"name\": \"b\", \"check\": \"oriented\"},"
		    " {\"name\": \"c\", \"check\": \"volum\", \"value\": 1}]",
		    "/verifier/criteria/2/check: unknown check 'volum' (valid: watertight, "
		    "oriented, shells, genus, volume, area, bbox_span, section_inertia, "
		    "self_intersections)");
	PARSE_ERROR("[{\"name\": \"a\"}]", "/verifier/criteria/0/check: missing required field");
	PARSE_ERROR("[{\"name\": \"a\", \"check\": 3}]",
		    "/verifier/criteria/0/check: expected a string, found an integer");
	PARSE_ERROR("[{\"name\": \"a\", \"check\": \"watertight\"},"
		    " {\"name\": \"b\", \"check\": \"oriented\"},"
		    " {\"name\": \"c\", \"check\": \"shells\", \"equals\": 1},"
		    " {\"name\": \"d\", \"check\": \"area\", \"value\": 1, \"tol_rel\": \"1%\"}]",
		    "/verifier/criteria/3/tol_rel: expected a number, found a string");
	PARSE_ERROR("[{\"name\": \"vol\", \"check\": \"volume\", \"value\": 1},"
		    " {\"name\": \"vol\", \"check\": \"area\", \"value\": 1}]",
		    "/verifier/criteria/1/name: 'vol' is already /verifier/criteria/0");
	PARSE_ERROR("[{\"check\": \"volume\", \"value\": 1}]",
		    "/verifier/criteria/0/name: missing required field");
	PARSE_ERROR("[{\"name\": \"my vol\", \"check\": \"volume\", \"value\": 1}]",
		    "/verifier/criteria/0/name: 'my vol' is not a valid name "
		    "([A-Za-z0-9][A-Za-z0-9._-]*)");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\"}]",
		    "/verifier/criteria/0: check 'volume' needs a comparator (value, or min and/or "
		    "max)");
	PARSE_ERROR("[{\"name\": \"g\", \"check\": \"genus\"}]",
		    "/verifier/criteria/0: check 'genus' needs a comparator (equals, value, or min "
		    "and/or max)");
	PARSE_ERROR("[{\"name\": \"g\", \"check\": \"genus\", \"equals\": 1.0}]",
		    "/verifier/criteria/0/equals: expected an integer, found a number");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"equals\": 8}]",
		    "/verifier/criteria/0/equals: check 'volume' is not an integer count; use "
		    "value, or min and/or max");
	PARSE_ERROR("[{\"name\": \"g\", \"check\": \"genus\", \"equals\": 1, \"max\": 2}]",
		    "/verifier/criteria/0: give one comparator: equals, value, or min and/or max");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"min\": 1, \"tol_abs\": 2}]",
		    "/verifier/criteria/0/tol_abs: only applies with value");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"value\": 1, \"tol_rel\": -0.1}]",
		    "/verifier/criteria/0/tol_rel: must be at least 0");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"min\": 5, \"max\": 4}]",
		    "/verifier/criteria/0/max: must be at least min (5)");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"max\": \"big\"}]",
		    "/verifier/criteria/0/max: expected a number, found a string");
	PARSE_ERROR("[{\"name\": \"w\", \"check\": \"watertight\", \"equals\": 1}]",
		    "/verifier/criteria/0/equals: check 'watertight' takes no comparator");
	PARSE_ERROR("[{\"name\": \"s\", \"check\": \"bbox_span\", \"value\": 3}]",
		    "/verifier/criteria/0/axis: missing required field");
	PARSE_ERROR("[{\"name\": \"s\", \"check\": \"bbox_span\", \"value\": 3, \"axis\": \"w\"}]",
		    "/verifier/criteria/0/axis: unknown axis 'w' (valid: x, y, z)");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"value\": 3, \"axis\": \"x\"}]",
		    "/verifier/criteria/0/axis: only applies to check 'bbox_span'");
	PARSE_ERROR("[{\"name\": \"i\", \"check\": \"section_inertia\", \"value\": 3,"
		    " \"beam_axis\": \"z\", \"about\": \"z\"}]",
		    "/verifier/criteria/0/about: must differ from beam_axis ('z')");
	PARSE_ERROR("[{\"name\": \"i\", \"check\": \"section_inertia\", \"value\": 3,"
		    " \"about\": \"x\"}]",
		    "/verifier/criteria/0/beam_axis: missing required field");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"max\": -1}]",
		    "/verifier/criteria/0/max: must be at least 0");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"max\": 1.5}]",
		    "/verifier/criteria/0/max: expected an integer, found a number");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"max\": \"2\"}]",
		    "/verifier/criteria/0/max: expected an integer, found a string");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"min\": 0,"
		    " \"max\": 2}]",
		    "/verifier/criteria/0/min: check 'self_intersections' takes only max (the "
		    "intersecting face pairs allowed, default 0)");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"equals\": 0}]",
		    "/verifier/criteria/0/equals: check 'self_intersections' takes only max (the "
		    "intersecting face pairs allowed, default 0)");
	PARSE_ERROR("[{\"name\": \"x\", \"check\": \"self_intersections\", \"max\": 0,"
		    " \"axis\": \"x\"}]",
		    "/verifier/criteria/0/axis: only applies to check 'bbox_span'");
	PARSE_ERROR(
	    "[{\"name\": \"v\", \"check\": \"volume\", \"value\": 1, \"required\": \"yes\"}]",
	    "/verifier/criteria/0/required: expected a boolean, found a string");
	PARSE_ERROR("[{\"name\": \"v\", \"check\": \"volume\", \"value\": 1,"
		    " \"stage\": \"a stage label that is far too long to keep\"}]",
		    "/verifier/criteria/0/stage: must be 1 to 31 characters");
}

static void test_parse_ok(void)
{
	void *crit;
	struct engi_error e;
	CHECK_INT(parse("{\"kind\": \"mesh\", \"file\": \"p.stl\", \"weld_tol\": 0,"
			" \"objective\": {\"metric\": \"volume\"}, \"reward\": {},"
			" \"criteria\": [{\"name\": \"w\", \"check\": \"watertight\","
			" \"required\": false, \"stage\": \"custom\"}]}",
			&crit, &e),
		  0);
	CHECK(crit != NULL);
	engi_verifier_free(kind, crit);
}

static const char *path_of(const char *name)
{
	static char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void write_stl(const char *name, const struct engi_mesh *m)
{
	CHECK_INT(gen_write_stl_binary(path_of(name), m, "solid test"), 0);
}

/* Runs the verifier on file `name` with the given criteria array. */
static void run(const char *name, const char *criteria, struct engi_verdict *v)
{
	char text[4096];
	snprintf(text, sizeof(text), "{\"kind\": \"mesh\", \"file\": \"%s\", \"criteria\": %s}",
		 name, criteria);
	void *crit;
	struct engi_error e;
	int rc = parse(text, &crit, &e);
	CHECK_INT(rc, 0);
	if (rc) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	engi_verdict_init(v);
	CHECK_INT(engi_verify_file(kind, crit, name, &ctx, v, &e), 0);
	engi_verifier_free(kind, crit);
}

static const struct engi_assertion *find(const struct engi_verdict *v, const char *name)
{
	for (size_t i = 0; i < v->na; i++)
		if (!strcmp(v->a[i].name, name))
			return &v->a[i];
	fprintf(stderr, "no assertion '%s'\n", name);
	CHECK(0);
	static struct engi_assertion none;
	return &none;
}

static void expect_line(int line, const struct engi_verdict *v, const char *name, int st,
			const char *detail)
{
	const struct engi_assertion *a = find(v, name);
	if (a->state != st || (detail && strcmp(a->detail, detail)))
		fprintf(stderr, "line %d: '%s' is %s: %s\n", line, name, engi_astate_name(a->state),
			a->detail);
	CHECK_STR(engi_astate_name(a->state), engi_astate_name(st));
	if (detail)
		CHECK_STR(a->detail, detail);
}

#define EXPECT(v, name, st, det) expect_line(__LINE__, v, name, st, det)

static void test_checks_on_ring(void)
{
	/* A 3 x 3 x 1 ring of unit voxels: volume 8, area 32, genus 1. */
	unsigned char occ[9] = {1, 1, 1, 1, 0, 1, 1, 1, 1};
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_voxels(&m, 3, 3, 1, occ, 1.0);
	write_stl("ring.stl", &m);
	engi_mesh_release(&m);

	struct engi_verdict v;
	run("ring.stl",
	    "[{\"name\": \"closed\", \"check\": \"watertight\"},"
	    " {\"name\": \"normals\", \"check\": \"oriented\"},"
	    " {\"name\": \"one-body\", \"check\": \"shells\", \"equals\": 1},"
	    " {\"name\": \"two-bodies\", \"check\": \"shells\", \"equals\": 2, \"required\": "
	    "false},"
	    " {\"name\": \"holes\", \"check\": \"genus\", \"equals\": 1},"
	    " {\"name\": \"holes-range\", \"check\": \"genus\", \"min\": 0, \"max\": 3},"
	    " {\"name\": \"vol\", \"check\": \"volume\", \"value\": 8.05},"
	    " {\"name\": \"vol-tight\", \"check\": \"volume\", \"value\": 8.05, \"tol_abs\": 0.01,"
	    "  \"required\": false},"
	    " {\"name\": \"vol-abs\", \"check\": \"volume\", \"value\": 8.05, \"tol_abs\": 0.1},"
	    " {\"name\": \"vol-both\", \"check\": \"volume\", \"value\": 100, \"tol_rel\": 0.5,"
	    "  \"tol_abs\": 1, \"required\": false},"
	    " {\"name\": \"area-min\", \"check\": \"area\", \"min\": 30},"
	    " {\"name\": \"area-max\", \"check\": \"area\", \"max\": 30, \"required\": false},"
	    " {\"name\": \"width\", \"check\": \"bbox_span\", \"axis\": \"x\", \"value\": 3},"
	    " {\"name\": \"height\", \"check\": \"bbox_span\", \"axis\": \"z\", \"min\": 0.5,"
	    "  \"max\": 1.5, \"stage\": \"size\"}]",
	    &v);
	CHECK_INT(v.na, 15);
	EXPECT(&v, "delivered:ring.stl", ENGI_PASS, "'ring.stl' delivered, 3284 bytes");
	EXPECT(&v, "closed", ENGI_PASS, "watertight: 96 edges, each used by two faces");
	EXPECT(&v, "normals", ENGI_PASS, "oriented: consistent outward faces, volume 8");
	EXPECT(&v, "one-body", ENGI_PASS, "shells 1, expected 1");
	EXPECT(&v, "two-bodies", ENGI_FAIL, "shells 1, expected 2");
	EXPECT(&v, "holes", ENGI_PASS, "genus 1, expected 1");
	EXPECT(&v, "holes-range", ENGI_PASS, "genus 1, expected in [0, 3]");
	EXPECT(&v, "vol", ENGI_PASS, "volume 8 vs 8.05 ± 1%");
	EXPECT(&v, "vol-tight", ENGI_FAIL, "volume 8 vs 8.05 ± 0.01");
	EXPECT(&v, "vol-abs", ENGI_PASS, "volume 8 vs 8.05 ± 0.1");
	EXPECT(&v, "vol-both", ENGI_FAIL, "volume 8 vs 100 ± 50%");
	EXPECT(&v, "area-min", ENGI_PASS, "area 32, expected at least 30");
	EXPECT(&v, "area-max", ENGI_FAIL, "area 32, expected at most 30");
	EXPECT(&v, "width", ENGI_PASS, "span along x 3 vs 3 ± 1%");
	EXPECT(&v, "height", ENGI_PASS, "span along z 1, expected in [0.5, 1.5]");
	const struct engi_assertion *a = find(&v, "height");
	CHECK_STR(a->stage, "size");
	a = find(&v, "vol");
	CHECK_STR(a->stage, "geometry");
	CHECK_NEAR(a->value, 8, 1e-12);
	CHECK_NEAR(a->expected, 8.05, 0);
	CHECK_INT(a->required, 1);
	CHECK_STR(find(&v, "closed")->stage, "validity");
	CHECK_STR(find(&v, "holes")->stage, "topology");
	CHECK_NEAR(find(&v, "area-min")->expected, 30, 0);
	CHECK_NEAR(find(&v, "area-max")->expected, 30, 0);

	double x;
	const char *names[] = {"volume", "area", "shells", "genus", "span_x", "span_y", "span_z"};
	const double want[] = {8, 32, 1, 1, 3, 3, 1};
	for (int i = 0; i < 7; i++) {
		CHECK_INT(engi_verdict_get_metric(&v, names[i], &x), 0);
		CHECK_NEAR(x, want[i], 1e-12);
	}
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1); /* only non-required criteria failed */
	engi_verdict_release(&v);
}

static void test_section_inertia(void)
{
	/* A 2 x 3 x 10 beam along z, 2 wide in x and 3 in y: about x,
	 * int y^2 dA = 2 * 3^3 / 12 = 4.5; about y, int x^2 dA = 3 * 2^3 / 12
	 * = 2. */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 5, 5, 5, 2, 3, 10);
	write_stl("beam.stl", &m);
	engi_mesh_release(&m);
	struct engi_verdict v;
	run("beam.stl",
	    "[{\"name\": \"ix\", \"check\": \"section_inertia\", \"beam_axis\": \"z\","
	    "  \"about\": \"x\", \"value\": 4.5, \"tol_rel\": 1e-9},"
	    " {\"name\": \"iy\", \"check\": \"section_inertia\", \"beam_axis\": \"z\","
	    "  \"about\": \"y\", \"min\": 4.6}]",
	    &v);
	EXPECT(&v, "ix", ENGI_PASS, "section inertia about x (beam along z) 4.5 vs 4.5 ± 1e-07%");
	EXPECT(&v, "iy", ENGI_FAIL,
	       "section inertia about y (beam along z) 2, expected at least 4.6");
	CHECK_STR(find(&v, "ix")->stage, "performance");
	engi_verdict_release(&v);
}

static void test_defective_meshes(void)
{
	struct engi_mesh m;
	struct engi_verdict v;
	const char *crit = "[{\"name\": \"closed\", \"check\": \"watertight\"},"
			   " {\"name\": \"normals\", \"check\": \"oriented\"},"
			   " {\"name\": \"holes\", \"check\": \"genus\", \"equals\": 0},"
			   " {\"name\": \"vol\", \"check\": \"volume\", \"value\": 1}]";

	/* One face missing. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	m.ntris--;
	write_stl("open.stl", &m);
	engi_mesh_release(&m);
	run("open.stl", crit, &v);
	EXPECT(&v, "closed", ENGI_FAIL, "not watertight: 3 boundary edges, 0 non-manifold edges");
	EXPECT(&v, "normals", ENGI_FAIL,
	       "not oriented: not watertight (3 boundary, 0 non-manifold edges)");
	EXPECT(&v, "holes", ENGI_FAIL,
	       "genus undefined: not watertight (3 boundary, 0 non-manifold edges)");
	CHECK_NEAR(find(&v, "holes")->value, -1, 0);
	const struct engi_assertion *a = find(&v, "vol");
	CHECK(strstr(a->detail, "(not watertight)") != NULL);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);

	/* A flipped face. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	uint32_t t = m.tri[1];
	m.tri[1] = m.tri[2];
	m.tri[2] = t;
	write_stl("flip.stl", &m);
	engi_mesh_release(&m);
	run("flip.stl", crit, &v);
	EXPECT(&v, "closed", ENGI_PASS, NULL);
	EXPECT(&v, "normals", ENGI_FAIL, "not oriented: 3 edges where neighbouring faces disagree");
	EXPECT(&v, "holes", ENGI_PASS, NULL);
	engi_verdict_release(&v);

	/* Inside out. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	for (size_t f = 0; f < m.ntris; f++) {
		t = m.tri[3 * f + 1];
		m.tri[3 * f + 1] = m.tri[3 * f + 2];
		m.tri[3 * f + 2] = t;
	}
	write_stl("inverted.stl", &m);
	engi_mesh_release(&m);
	run("inverted.stl", crit, &v);
	EXPECT(&v, "normals", ENGI_FAIL,
	       "not oriented: volume -1 is not positive (faces point inwards)");
	EXPECT(&v, "vol", ENGI_FAIL, "volume -1 vs 1 ± 1%");
	engi_verdict_release(&v);

	/* Corners off by 1e-7 close with the default weld, not with 0. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_soup(&m);
	for (size_t i = 0; i < 3 * m.nverts; i += 7)
		m.xyz[i] += 1e-7;
	write_stl("gappy.stl", &m);
	engi_mesh_release(&m);
	run("gappy.stl", "[{\"name\": \"closed\", \"check\": \"watertight\"}]", &v);
	EXPECT(&v, "closed", ENGI_PASS, NULL);
	engi_verdict_release(&v);

	/* Broken files: every criterion unavailable, naming the reader error. */
	CHECK_INT(gen_write_file(path_of("junk.stl"), "hello\n", 6), 0);
	run("junk.stl", crit, &v);
	EXPECT(&v, "delivered:junk.stl", ENGI_PASS, NULL);
	char want[400];
	snprintf(
	    want, sizeof(want),
	    "cannot read STL '%s/junk.stl': neither ASCII STL nor binary STL (6 bytes, shorter "
	    "than the 84-byte binary header)",
	    dir);
	EXPECT(&v, "closed", ENGI_UNAVAILABLE, want);
	EXPECT(&v, "vol", ENGI_UNAVAILABLE, want);
	CHECK(isnan(find(&v, "vol")->value));
	CHECK_INT(v.nm, 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);
}

/* Two closed boxes that overlap, in one file: every edge has two faces and
 * they agree, so watertight and oriented pass, but faces cross; and one box
 * alone, which is clean. */
static void test_self_intersections(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 2, 2, 2);
	write_stl("box.stl", &m);
	gen_box(&m, 1, 1, 1, 2, 2, 2);
	write_stl("overlap.stl", &m);
	/* what the kernel finds on the same faces (no vertex of one box is
	 * near one of the other, so welding keeps the face ids) */
	struct engi_selfx k;
	CHECK_INT(engi_mesh_self_intersections(&m, 0, MESH_SHOWN_PAIRS, &k, NULL), 0);
	CHECK(k.count > MESH_SHOWN_PAIRS);
	CHECK_INT(k.npairs, MESH_SHOWN_PAIRS);
	engi_mesh_release(&m);
	const char *crit = "[{\"name\": \"closed\", \"check\": \"watertight\"},"
			   " {\"name\": \"normals\", \"check\": \"oriented\"},"
			   " {\"name\": \"no-crossing\", \"check\": \"self_intersections\"},"
			   " {\"name\": \"few\", \"check\": \"self_intersections\", \"max\": 1000,"
			   "  \"required\": false}]";
	struct engi_verdict v;
	double x;

	run("overlap.stl", crit, &v);
	EXPECT(&v, "closed", ENGI_PASS, NULL);
	EXPECT(&v, "normals", ENGI_PASS, NULL);
	const struct engi_assertion *a = find(&v, "no-crossing");
	CHECK_STR(engi_astate_name(a->state), "fail");
	CHECK(a->value > 0);
	CHECK_NEAR(a->expected, 0, 0);
	CHECK_STR(a->stage, "validity");
	CHECK_INT(a->required, 1);
	CHECK_NEAR(a->value, (double)k.count, 0);
	char want[ENGI_DETAIL_MAX];
	snprintf(want, sizeof(want),
		 "%zu intersecting face pairs, at most 0 allowed: faces (%u, %u) (%u, %u) (%u, %u) "
		 "and %zu more",
		 k.count, k.pair[0], k.pair[1], k.pair[2], k.pair[3], k.pair[4], k.pair[5],
		 k.count - MESH_SHOWN_PAIRS);
	CHECK_STR(a->detail, want);
	/* a face of the first box (0-11) with one of the second (12-23) */
	CHECK(k.pair[0] < 12 && k.pair[1] >= 12 && k.pair[1] < 24);
	engi_selfx_release(&k);
	EXPECT(&v, "few", ENGI_PASS, NULL);
	CHECK_NEAR(find(&v, "few")->value, a->value, 0);
	CHECK_NEAR(find(&v, "few")->expected, 1000, 0);
	CHECK_INT(engi_verdict_get_metric(&v, "self_intersections", &x), 0);
	CHECK_NEAR(x, a->value, 0);
	CHECK_INT(engi_verdict_get_metric(&v, "shells", &x), 0);
	CHECK_NEAR(x, 2, 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);

	run("box.stl", crit, &v);
	EXPECT(&v, "no-crossing", ENGI_PASS, "0 intersecting face pairs, at most 0 allowed");
	a = find(&v, "no-crossing");
	CHECK_NEAR(a->value, 0, 0); /* recorded when it passes too */
	CHECK_INT(engi_verdict_get_metric(&v, "self_intersections", &x), 0);
	CHECK_NEAR(x, 0, 0);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1);
	engi_verdict_release(&v);

	/* not asked for: neither measured nor recorded */
	run("box.stl", "[{\"name\": \"closed\", \"check\": \"watertight\"}]", &v);
	CHECK_INT(engi_verdict_get_metric(&v, "self_intersections", &x), ENGI_ENOTFOUND);
	engi_verdict_release(&v);
}

/* Coordinates the kernels refuse (1e308, NaN) make every criterion
 * unavailable, naming the facet, vertex and problem; extreme coordinates
 * within the bound (1e20 beside 1) are measured, self-intersections
 * included. */
static void test_poisoned_coordinates(void)
{
	const char *crit = "[{\"name\": \"closed\", \"check\": \"watertight\"},"
			   " {\"name\": \"vol\", \"check\": \"volume\", \"min\": 0},"
			   " {\"name\": \"no-crossing\", \"check\": \"self_intersections\"}]";
	static const double big[][3] = {{-1e308, -1e308, 0}, {1e308, 0, 1}, {0, 1e308, 1e308},
					{0, 0, 0},	     {1, 0, 0},	    {0, 1, NAN}};
	static const char *const want[] = {"facet 0, vertex 1: coordinate x = -1e+308 exceeds "
					   "1e+30 in magnitude",
					   "facet 1, vertex 3: coordinate z = nan is not finite"};
	for (int k = 0; k < 2; k++) {
		struct engi_mesh m;
		engi_mesh_init(&m);
		for (int i = 0; i < 6; i++)
			gen_vertex(&m, big[i][0], big[i][1], big[i][2]);
		gen_tri(&m, 0, 1, 2);
		gen_tri(&m, 3, 4, 5);
		if (k == 0)
			m.xyz[17] = 0; /* only the 1e308 facet */
		else
			for (int i = 0; i < 9; i++) /* only the NaN one */
				m.xyz[i] = i % 4 == 0;
		CHECK_INT(gen_write_stl_ascii(path_of("poison.stl"), &m), 0);
		engi_mesh_release(&m);
		struct engi_verdict v;
		run("poison.stl", crit, &v);
		const char *names[] = {"closed", "vol", "no-crossing"};
		for (int i = 0; i < 3; i++) {
			const struct engi_assertion *a = find(&v, names[i]);
			CHECK_INT(a->state, ENGI_UNAVAILABLE);
			if (!strstr(a->detail, want[k]))
				fprintf(stderr, "%s: '%s' lacks '%s'\n", names[i], a->detail,
					want[k]);
			CHECK(strstr(a->detail, want[k]) != NULL);
		}
		engi_verdict_score(&v, NULL);
		CHECK_INT(v.success, 0);
		engi_verdict_release(&v);
	}

	/* within the bound: measured, finite */
	static const double wild[][3] = {{1e20, 0, 0},	{1, 1, 0},	 {0, 0, 1},    {1, 2, 3},
					 {1e20, 1, 7},	{4, 5, 6},	 {0, 0, 1e20}, {1, 0, 0},
					 {0, 1, 1e-20}, {1e20, 1e20, 1}, {2, 1, 1},    {1, 2, 1}};
	struct engi_mesh m;
	engi_mesh_init(&m);
	for (int i = 0; i < 12; i++)
		gen_vertex(&m, wild[i][0], wild[i][1], wild[i][2]);
	for (uint32_t t = 0; t < 4; t++)
		gen_tri(&m, 3 * t, 3 * t + 1, 3 * t + 2);
	CHECK_INT(gen_write_stl_ascii(path_of("wild.stl"), &m), 0);
	engi_mesh_release(&m);
	struct engi_verdict v;
	run("wild.stl", crit, &v);
	CHECK_INT(find(&v, "closed")->state, ENGI_FAIL);
	const struct engi_assertion *a = find(&v, "no-crossing");
	CHECK(a->state == ENGI_PASS || a->state == ENGI_FAIL);
	CHECK(isfinite(a->value));
	CHECK(isfinite(find(&v, "vol")->value));
	engi_verdict_release(&v);
}

/* Each allocation failing in turn: ENGI_ENOMEM or a verdict, never a crash
 * or a leak. */
static void test_alloc_failures(void)
{
	json_t *j = json_loads("{\"kind\": \"mesh\", \"file\": \"ring.stl\", \"criteria\": ["
			       "{\"name\": \"closed\", \"check\": \"watertight\"},"
			       " {\"name\": \"vol\", \"check\": \"volume\", \"value\": 8},"
			       " {\"name\": \"x\", \"check\": \"self_intersections\"}]}",
			       0, NULL);
	void *crit = NULL;
	CHECK_INT(kind->parse(j, "t.json", NULL, "/verifier", &crit, NULL), 0);
	json_decref(j);
	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	int failures = 0;
	for (long n = 1; n < 90; n++) {
		struct engi_verdict v;
		struct engi_error e;
		engi_error_init(&e);
		engi_verdict_init(&v);
		engi_alloc_fail_after(n);
		int rc = engi_verify_file(kind, crit, "ring.stl", &ctx, &v, &e);
		engi_alloc_fail_after(0);
		CHECK(rc == 0 || (rc == ENGI_ENOMEM && e.code == ENGI_ENOMEM));
		failures += rc != 0;
		engi_verdict_release(&v);
	}
	CHECK(failures > 10);
	engi_verifier_free(kind, crit);
}

int main(void)
{
	kind = engi_verifier_lookup("mesh", NULL);
	if (!kind)
		return 1;
	snprintf(dir, sizeof(dir), "/tmp/engi-kind-mesh-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_parse_errors();
	test_parse_ok();
	test_checks_on_ring();
	test_section_inertia();
	test_defective_meshes();
	test_self_intersections();
	test_poisoned_coordinates();
	test_alloc_failures();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_exit();
}
