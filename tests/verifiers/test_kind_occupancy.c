/* Verifier kind "occupancy": criteria parsing, a plate whose bore is empty
 * (and one whose bore was never cut), points in material and in void, and
 * broken or leaky deliveries. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/verify.h"
#include "kindtest.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static void parse_error(int line, const char *criteria, const char *msg)
{
	char text[2048];
	snprintf(text, sizeof(text), "{\"kind\": \"occupancy\", \"file\": \"p.stl\", %s}",
		 criteria);
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(text, &crit, &e), ENGI_EPARSE);
	CHECK(crit == NULL);
	char want[700];
	snprintf(want, sizeof(want), "t.json: %s", msg);
	if (strcmp(e.msg, want))
		fprintf(stderr, "line %d:\n", line);
	CHECK_STR(e.msg, want);
}

#define PARSE_ERROR(c, m) parse_error(__LINE__, c, m)

static void test_parse_errors(void)
{
	PARSE_ERROR("\"resolution\": 0, \"criteria\": []",
		    "/verifier/resolution: must be an integer from 1 to 4096");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1}]",
		    "/verifier/criteria/0/region: missing required field");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1,"
		    " \"region\": {\"sphere\": {}}}]",
		    "/verifier/criteria/0/region/sphere: unknown field (valid: box, cylinder)");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1,"
		    " \"region\": {\"box\": {\"min\": [0, 0, 0], \"max\": [1, 0, 1]}}}]",
		    "/verifier/criteria/0/region/box/max: must exceed min along y (0 <= 0)");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1,"
		    " \"region\": {\"cylinder\": {\"base\": [0, 0], \"axis\": [0, 0, 1],"
		    " \"radius\": 1, \"length\": 1}}}]",
		    "/verifier/criteria/0/region/cylinder/base: expected an array of 3 numbers, "
		    "found an array");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1,"
		    " \"region\": {\"cylinder\": {\"base\": [0, 0, 0], \"axis\": [0, 0, 0],"
		    " \"radius\": 1, \"length\": 1}}}]",
		    "/verifier/criteria/0/region/cylinder/axis: must not be the zero vector");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"material_volume\", \"max\": 1,"
		    " \"region\": {\"cylinder\": {\"base\": [0, 0, 0], \"axis\": [0, 0, 1],"
		    " \"radius\": -1, \"length\": 1}}}]",
		    "/verifier/criteria/0/region/cylinder/radius: must be greater than 0");
	PARSE_ERROR(
	    "\"criteria\": [{\"name\": \"a\", \"check\": \"void\", \"point\": [0, 0, \"z\"]}]",
	    "/verifier/criteria/0/point/2: expected a finite number, found a string");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"void\", \"point\": [0, 0, 0],"
		    " \"max\": 1}]",
		    "/verifier/criteria/0/max: check 'void' takes no comparator");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"solid\", \"point\": [0, 0, 0],"
		    " \"region\": {}}]",
		    "/verifier/criteria/0/region: does not apply to check 'solid'");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"volume\"}]",
		    "/verifier/criteria/0/check: unknown check 'volume' (valid: material_volume, "
		    "material_fraction, solid, void)");
	PARSE_ERROR("\"criteria\": [{\"name\": \"a\", \"check\": \"solid\", \"point\": [0, 0, 0]},"
		    " {\"name\": \"a\", \"check\": \"void\", \"point\": [0, 0, 0]}]",
		    "/verifier/criteria/1/name: 'a' is already /verifier/criteria/0");
}

/* 30 x 30 x 10 plate; with bore: a 10 x 10 square hole in its middle. */
static void write_plate(const char *name, int bore)
{
	unsigned char occ[6 * 6 * 2];
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < 6; j++)
			for (int i = 0; i < 6; i++)
				occ[i + 6 * (j + 6 * k)] =
				    !(bore && i >= 2 && i <= 3 && j >= 2 && j <= 3);
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_voxels(&m, 6, 6, 2, occ, 5);
	gen_soup(&m);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_INT(gen_write_stl_binary(path, &m, NULL), 0);
	engi_mesh_release(&m);
}

static const char criteria[] =
    "{\"kind\": \"occupancy\", \"file\": \"p.stl\", \"criteria\": ["
    " {\"name\": \"bore_empty\", \"check\": \"material_volume\", \"max\": 0.1,"
    "  \"region\": {\"cylinder\": {\"base\": [15, 15, -1], \"axis\": [0, 0, 1],"
    "   \"radius\": 4.9, \"length\": 12}}},"
    " {\"name\": \"cut_from_top\", \"check\": \"material_volume\", \"max\": 0,"
    "  \"region\": {\"box\": {\"min\": [11, 11, 5], \"max\": [19, 19, 20]}}},"
    " {\"name\": \"walls_full\", \"check\": \"material_fraction\", \"min\": 0.999,"
    "  \"region\": {\"box\": {\"min\": [0, 0, 0], \"max\": [10, 30, 10]}}},"
    " {\"name\": \"wall_volume\", \"check\": \"material_volume\", \"value\": 3000,"
    "  \"tol_rel\": 1e-9, \"region\": {\"box\": {\"min\": [0, 0, 0], \"max\": [10, 30, 10]}}},"
    " {\"name\": \"centre_void\", \"check\": \"void\", \"point\": [15, 15, 5]},"
    " {\"name\": \"corner_solid\", \"check\": \"solid\", \"point\": [2, 2, 2]}"
    "]}";

static void verify(const char *file, void *crit, struct engi_verdict *v)
{
	struct engi_error e;
	engi_error_init(&e);
	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	engi_verdict_init(v);
	CHECK_INT(engi_verify_file(kind, crit, file, &ctx, v, &e), 0);
}

static int state_of(const struct engi_verdict *v, const char *name)
{
	return find_or_none(v, name)->state;
}

static void test_plate(void)
{
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(criteria, &crit, &e), 0);
	write_plate("p.stl", 1);
	write_plate("solid.stl", 0);
	struct engi_verdict v;
	verify("p.stl", crit, &v);
	/* the framework's delivery check, then ours */
	CHECK_INT(v.na, 7);
	for (size_t i = 0; i < v.na; i++) {
		if (v.a[i].state != ENGI_PASS)
			fprintf(stderr, "%s: %s\n", v.a[i].name, v.a[i].detail);
		CHECK_INT(v.a[i].state, ENGI_PASS);
	}
	CHECK_NEAR(find_or_none(&v, "bore_empty")->value, 0, 0);
	CHECK_STR(find_or_none(&v, "centre_void")->detail, "point (15, 15, 5) is in void");
	engi_verdict_release(&v);

	/* the bore was never cut */
	verify("solid.stl", crit, &v);
	CHECK_INT(state_of(&v, "bore_empty"), ENGI_FAIL);
	CHECK_INT(state_of(&v, "cut_from_top"), ENGI_FAIL);
	CHECK_INT(state_of(&v, "centre_void"), ENGI_FAIL);
	CHECK_INT(state_of(&v, "walls_full"), ENGI_PASS);
	CHECK_NEAR(find_or_none(&v, "bore_empty")->value, 3.14159265358979 * 4.9 * 4.9 * 10, 1e-9);
	engi_verdict_release(&v);

	/* a plate with one face missing has no inside */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 30, 30, 10);
	m.ntris--;
	char path[256];
	snprintf(path, sizeof(path), "%s/leaky.stl", dir);
	gen_soup(&m);
	CHECK_INT(gen_write_stl_binary(path, &m, NULL), 0);
	engi_mesh_release(&m);
	verify("leaky.stl", crit, &v);
	CHECK_INT(v.na, 7);
	CHECK_INT(state_of(&v, "bore_empty"), ENGI_FAIL);
	CHECK_STR(find_or_none(&v, "corner_solid")->detail,
		  "occupancy undefined: not watertight (3 boundary, 0 non-manifold "
		  "edges)");
	engi_verdict_release(&v);

	/* garbage */
	snprintf(path, sizeof(path), "%s/junk.obj", dir);
	CHECK_INT(gen_write_file(path, "v 1 2\n", 6), 0);
	verify("junk.obj", crit, &v);
	CHECK_INT(state_of(&v, "wall_volume"), ENGI_UNAVAILABLE);
	CHECK(strstr(find_or_none(&v, "wall_volume")->detail,
		     "line 1: vertex 1: coordinate z is not a number") != NULL);
	engi_verdict_release(&v);
	engi_verifier_free(kind, crit);
}

int main(void)
{
	struct engi_error e;
	engi_error_init(&e);
	kind = engi_verifier_lookup("occupancy", &e);
	CHECK(kind != NULL);
	if (!kind)
		return check_exit();
	snprintf(dir, sizeof(dir), "/tmp/engi-occ-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse_errors();
	test_plate();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
