/*
 * Ground truth by two solves (verifiers/truth.c): a simply supported beam
 * against the closed form, a portal frame with a released member and
 * local member loads on a sloped rafter (the reversed copy must turn them
 * global to agree), a mechanism refused with its node, a brick cantilever
 * deck solved with two orderings and its fe-solid-truth/1 file read back,
 * an unwritable truth named, and the acceptance thresholds.
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"
#include "engi/truth.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64] = "/tmp/engi-truth-XXXXXX";

#define BEAM_N 8
#define BEAM_L 6.0
#define BEAM_E 210e9
#define BEAM_I 8.356e-5
#define BEAM_W 10e3

static int parse(const char *text, struct engi_structural *s, struct engi_error *err)
{
	engi_structural_init(s);
	return engi_structural_parse("model.json", text, strlen(text), s, err);
}

/* n beam elements over L on a pin and a roller; supports are given
 * as restrain lists ("ux", "uy" at the pin unless pin_free). */
static char *beam(int pin_free)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, 1 << 16);
	engi_dynbuf_printf(&b,
			   "{\"format\": \"structural/1\", \"dim\": 2,"
			   " \"units\": {\"length\": \"m\", \"force\": \"N\"},"
			   " \"materials\": [{\"id\": \"s\", \"E\": %.17g, \"G\": 81e9}],"
			   " \"sections\": [{\"id\": \"ipe\", \"A\": 5.38e-3, \"Iz\": %.17g}],"
			   " \"nodes\": [",
			   BEAM_E, BEAM_I);
	for (int i = 0; i <= BEAM_N; i++)
		engi_dynbuf_printf(&b, "%s{\"id\": %d, \"xyz\": [%.17g, 0]}", i ? ", " : "", i + 1,
				   BEAM_L * i / BEAM_N);
	engi_dynbuf_printf(&b, "], \"elements\": [");
	for (int i = 0; i < BEAM_N; i++)
		engi_dynbuf_printf(&b,
				   "%s{\"id\": %d, \"type\": \"beam\", \"nodes\": [%d, %d],"
				   " \"material\": \"s\", \"section\": \"ipe\"}",
				   i ? ", " : "", 10 + i, i + 1, i + 2);
	engi_dynbuf_printf(&b,
			   "], \"supports\": [{\"node\": 1, \"restrain\": [%s\"uy\"]},"
			   " {\"node\": %d, \"restrain\": [\"uy\"]}],"
			   " \"load_cases\": [{\"id\": \"udl\", \"member\": [",
			   pin_free ? "" : "\"ux\", ", BEAM_N + 1);
	for (int i = 0; i < BEAM_N; i++)
		engi_dynbuf_printf(&b, "%s{\"element\": %d, \"w\": [0, %.17g, 0]}", i ? ", " : "",
				   10 + i, -BEAM_W);
	engi_dynbuf_printf(&b,
			   "]}, {\"id\": \"point\", \"nodal\": [{\"node\": %d,"
			   " \"F\": [0, -5e3, 0]}]}],"
			   " \"combinations\": [{\"id\": \"both\","
			   " \"factors\": {\"udl\": 1.0, \"point\": 2.0}}]}",
			   BEAM_N / 2 + 1);
	return engi_dynbuf_take(&b, NULL);
}

static void test_beam(void)
{
	struct engi_structural s;
	struct engi_structural_truth t;
	struct engi_truth_check c;
	struct engi_error err;
	engi_error_init(&err);
	engi_structural_truth_init(&t);
	char *text = beam(0);
	CHECK_INT(parse(text, &s, &err), 0);
	CHECK_INT(engi_structural_truth_build(&s, &t, &c, &err), 0);
	CHECK_INT(t.nstates, 3);
	CHECK_STR(t.state_name[0], "udl");
	CHECK_STR(t.state_name[2], "both");
	CHECK_INT(t.nnodes, BEAM_N + 1);
	CHECK_INT(t.node_id[0], 1);
	CHECK_INT(t.elem_id[BEAM_N - 1], 10 + BEAM_N - 1);
	CHECK(engi_truth_accepted(&c));
	CHECK(c.agreement_rel <= 1e-12);
	CHECK(c.equilibrium_rel <= 1e-12);
	CHECK_NEAR(t.agreement_rel, c.agreement_rel, 0);
	CHECK_INT(c.ndof, 6 * (BEAM_N + 1));
	CHECK_INT(c.neq, 3 * (BEAM_N + 1) - 3);
	CHECK_STR(c.solve[0].ordering, "amd");
	CHECK_STR(c.solve[0].method, "supernodal");
	CHECK_STR(c.solve[1].ordering, "metis");
	CHECK_STR(c.solve[1].method, "simplicial");
	/* mid-span deflection, 5 w L^4 / (384 E I), of the first solve */
	double udl = 5 * BEAM_W * pow(BEAM_L, 4) / (384 * BEAM_E * BEAM_I);
	CHECK_NEAR(t.u[6 * (BEAM_N / 2) + 1], -udl, 1e-9 * udl);
	/* the pin carries half the load */
	CHECK_NEAR(t.reaction[1], BEAM_W * BEAM_L / 2, 1e-6);
	engi_structural_truth_release(&t);
	engi_structural_release(&s);
	engi_free(text);

	/* without the pin's ux the beam slides: the solver's message, no truth */
	text = beam(1);
	CHECK_INT(parse(text, &s, &err), 0);
	int rc = engi_structural_truth_build(&s, &t, &c, &err);
	CHECK(rc < 0);
	CHECK(strstr(err.msg, "mechanism") != NULL);
	CHECK(strstr(err.msg, "ux of node") != NULL);
	CHECK(t.u == NULL && t.nstates == 0);
	engi_structural_release(&s);
	engi_free(text);
}

/* A pitched portal: columns 1-2 and 4-5, rafters 2-3 and 3-4 sloping, the
 * second rafter written from the ridge down with a release, local member
 * loads on the rafters. */
static const char portal[] =
    "{\"format\": \"structural/1\", \"dim\": 2,"
    " \"units\": {\"length\": \"m\", \"force\": \"N\"},"
    " \"materials\": [{\"id\": \"s\", \"E\": 210e9, \"nu\": 0.3}],"
    " \"sections\": [{\"id\": \"col\", \"A\": 7.81e-3, \"Iz\": 5.79e-5},"
    "  {\"id\": \"raf\", \"A\": 5.38e-3, \"Iz\": 8.356e-5}],"
    " \"nodes\": [{\"id\": 1, \"xyz\": [0, 0]}, {\"id\": 2, \"xyz\": [0, 4]},"
    "  {\"id\": 3, \"xyz\": [6, 5.5]}, {\"id\": 4, \"xyz\": [12, 4]},"
    "  {\"id\": 5, \"xyz\": [12, 0]}],"
    " \"elements\": ["
    "  {\"id\": 1, \"type\": \"beam\", \"nodes\": [1, 2], \"material\": \"s\", \"section\": "
    "\"col\"},"
    "  {\"id\": 2, \"type\": \"beam\", \"nodes\": [2, 3], \"material\": \"s\", \"section\": "
    "\"raf\"},"
    "  {\"id\": 3, \"type\": \"beam\", \"nodes\": [3, 4], \"material\": \"s\", \"section\": "
    "\"raf\", \"releases\": {\"start\": [\"rz\"]}},"
    "  {\"id\": 4, \"type\": \"beam\", \"nodes\": [5, 4], \"material\": \"s\", \"section\": "
    "\"col\"}],"
    " \"supports\": [{\"node\": 1, \"restrain\": \"all\"}, {\"node\": 5, \"restrain\": "
    "\"all\"}],"
    " \"load_cases\": ["
    "  {\"id\": \"snow\", \"member\": [{\"element\": 2, \"w\": [0, -8e3, 0], \"axes\": "
    "\"local\"},"
    "   {\"element\": 3, \"w\": [1e3, -8e3, 0], \"axes\": \"local\"}]},"
    "  {\"id\": \"wind\", \"nodal\": [{\"node\": 2, \"F\": [15e3, 0, 0]}],"
    "   \"member\": [{\"element\": 1, \"w\": [2e3, 0, 0], \"axes\": \"global\"}]}],"
    " \"combinations\": [{\"id\": \"ULS\", \"factors\": {\"snow\": 1.5, \"wind\": 0.9}}]}";

static void test_portal(void)
{
	struct engi_structural s;
	struct engi_structural_truth t;
	struct engi_truth_check c;
	struct engi_frame_result r;
	struct engi_error err;
	engi_error_init(&err);
	engi_structural_truth_init(&t);
	engi_frame_result_init(&r);
	CHECK_INT(parse(portal, &s, &err), 0);
	int rc = engi_structural_truth_build(&s, &t, &c, &err);
	if (rc < 0)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(rc, 0);
	CHECK(engi_truth_accepted(&c));
	CHECK(c.agreement_rel <= 1e-10);
	CHECK_INT(t.nstates, 3);
	/* the truth is the first solve's: a plain solve gives the same */
	struct engi_fe_solve_opts o = {ENGI_FE_ORDER_AMD, 0};
	CHECK_INT(engi_frame_solve(&s.f, &o, &r, &err), 0);
	double d = 0, m = 0;
	for (size_t k = 0; k < r.nstates && t.u; k++)
		for (size_t i = 0; i < 6 * t.nnodes; i++) {
			d = fmax(d, fabs(t.u[6 * t.nnodes * k + i] - r.state[k].u[i]));
			m = fmax(m, fabs(r.state[k].u[i]));
		}
	CHECK(m > 0);
	CHECK(d <= 1e-12 * m);
	/* snow, local to the rafters (rise 1.5 over 6): -8e3 across both
	 * and 1e3 along the second make (12e3, -48e3) and (-6e3, -49.5e3) */
	CHECK_NEAR(t.reaction[1] + t.reaction[6 * 4 + 1], 97.5e3, 1e-6);
	CHECK_NEAR(t.reaction[0] + t.reaction[6 * 4], -6e3, 1e-6);
	engi_frame_result_release(&r);
	engi_structural_truth_release(&t);
	engi_structural_release(&s);
}

/* A cantilever of four C3D8 bricks fixed at z = 0, 5 N in -y at the tip. */
static const char deck[] = "*NODE\n"
			   "1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 1, 1, 0\n"
			   "5, 0, 0, 1\n6, 1, 0, 1\n7, 0, 1, 1\n8, 1, 1, 1\n"
			   "9, 0, 0, 2\n10, 1, 0, 2\n11, 0, 1, 2\n12, 1, 1, 2\n"
			   "13, 0, 0, 3\n14, 1, 0, 3\n15, 0, 1, 3\n16, 1, 1, 3\n"
			   "17, 0, 0, 4\n18, 1, 0, 4\n19, 0, 1, 4\n20, 1, 1, 4\n"
			   "*ELEMENT, TYPE=C3D8, ELSET=EALL\n"
			   "1, 1, 2, 4, 3, 5, 6, 8, 7\n"
			   "2, 5, 6, 8, 7, 9, 10, 12, 11\n"
			   "3, 9, 10, 12, 11, 13, 14, 16, 15\n"
			   "4, 13, 14, 16, 15, 17, 18, 20, 19\n"
			   "*NSET, NSET=FIX\n1, 2, 3, 4\n"
			   "*MATERIAL, NAME=STEEL\n*ELASTIC\n210000., 0.3\n"
			   "*SOLID SECTION, ELSET=EALL, MATERIAL=STEEL\n"
			   "*BOUNDARY\nFIX, 1, %d, 0.\n"
			   "*STEP\n*STATIC\n*CLOAD\n"
			   "17, 2, -1.25\n18, 2, -1.25\n19, 2, -1.25\n20, 2, -1.25\n"
			   "*END STEP\n";

static void write_deck(const char *path, int fixed_dofs)
{
	FILE *fp = fopen(path, "w");
	BUG_ON(!fp);
	fprintf(fp, deck, fixed_dofs);
	BUG_ON(fclose(fp) != 0);
}

static void test_deck(void)
{
	char path[128], out[160];
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_truth_check c;
	struct engi_error err;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	snprintf(path, sizeof(path), "%s/bar.inp", dir);
	write_deck(path, 3);
	CHECK_INT(engi_inp_read(path, &m, &err), 0);
	int rc = engi_fe_solid_truth_build(&m, &r, &c, &err);
	if (rc < 0)
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(rc, 0);
	CHECK(engi_truth_accepted(&c));
	CHECK(c.agreement_rel <= 1e-12);
	CHECK(c.equilibrium_rel <= 1e-12);
	CHECK_INT(c.ndof, 60);
	CHECK_INT(c.neq, 48);
	/* the second solve takes the other of AMD and METIS, simplicial */
	CHECK(c.solve[0].ordering && c.solve[1].ordering &&
	      strcmp(c.solve[0].ordering, c.solve[1].ordering) != 0);
	CHECK_STR(c.solve[1].method, "simplicial");
	CHECK_INT(r.max_u_node, 20);
	CHECK_NEAR(r.load_sum[1], -5, 1e-12);
	CHECK_NEAR(r.reaction_sum[1], 5, 1e-9);

	/* the truth file, with a deck name that needs escaping */
	snprintf(out, sizeof(out), "%s/bar.truth.json", dir);
	CHECK_INT(engi_fe_solid_truth_write(out, "b\"a\\r\n.inp", &m, &r, &c, &err), 0);
	json_error_t je;
	json_t *j = json_load_file(out, JSON_REJECT_DUPLICATES, &je);
	CHECK(j != NULL);
	CHECK_STR(json_string_value(json_object_get(j, "format")), "fe-solid-truth/1");
	CHECK_STR(json_string_value(json_object_get(j, "deck")), "b\"a\\r.inp");
	CHECK_INT(json_integer_value(json_object_get(j, "nodes")), 20);
	CHECK_INT(json_integer_value(json_object_get(j, "free_dof")), 48);
	CHECK_INT(json_integer_value(json_object_get(j, "node_step")), 1);
	CHECK_INT(json_integer_value(json_object_get(j, "max_u_node")), 20);
	CHECK_NEAR(json_number_value(json_object_get(j, "max_u")), r.max_u, 0);
	json_t *u = json_object_get(j, "u");
	CHECK_INT(json_array_size(u), 20);
	json_t *tip = json_array_get(u, 19);
	CHECK_INT(json_integer_value(json_array_get(tip, 0)), 20);
	CHECK_NEAR(json_number_value(json_array_get(tip, 2)), r.u[3 * 19 + 1], 0);
	CHECK_NEAR(json_number_value(json_array_get(json_array_get(u, 0), 1)), 0, 0);
	json_decref(j);
	snprintf(path, sizeof(path), "%s/bar.truth.json.tmp", dir);
	CHECK(access(path, F_OK) != 0);

	/* a folder that is not there: the temporary file is named */
	snprintf(out, sizeof(out), "%s/no/bar.truth.json", dir);
	CHECK_INT(engi_fe_solid_truth_write(out, "bar.inp", &m, &r, &c, &err), ENGI_EIO);
	char want[256];
	snprintf(want, sizeof(want), "cannot write '%s.tmp': No such file or directory", out);
	CHECK_STR(err.msg, want);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);

	/* only ux fixed: a mechanism, nothing to agree on */
	snprintf(path, sizeof(path), "%s/mech.inp", dir);
	write_deck(path, 1);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	CHECK_INT(engi_inp_read(path, &m, &err), 0);
	CHECK(engi_fe_solid_truth_build(&m, &r, &c, &err) < 0);
	CHECK(strstr(err.msg, "mechanism") != NULL);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
}

static void test_accepted(void)
{
	struct engi_truth_check c = {0};
	CHECK(engi_truth_accepted(&c));
	c.agreement_rel = ENGI_TRUTH_AGREEMENT_REL;
	c.equilibrium_rel = ENGI_TRUTH_EQUILIBRIUM_REL;
	CHECK(engi_truth_accepted(&c));
	c.agreement_rel = 2e-10;
	CHECK(!engi_truth_accepted(&c));
	c.agreement_rel = 0;
	c.equilibrium_rel = 2e-9;
	CHECK(!engi_truth_accepted(&c));
	c.equilibrium_rel = NAN;
	CHECK(!engi_truth_accepted(&c));
}

int main(void)
{
	BUG_ON(!mkdtemp(dir));
	test_beam();
	test_portal();
	test_deck();
	test_accepted();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
