/*
 * StructureClaw models (verifiers/structural_sc.c), read through
 * engi_structural_parse: StructureClaw-Bench's 47 ground truths (argv[1],
 * the benchmark's folder in ../shared; the test fails when they are absent)
 * all read with StructureClaw's axes, units and inertias, 45 solve in
 * equilibrium and the two roof trusses without diagonals to their bottom
 * chord are mechanisms; beam-simple-6m, fixed at both ends by its file,
 * against w L^4 / 384 E I; a model of our own in both formats gives the same
 * results; closed forms pin the 2D and 3D axes, the inertia rule and the
 * moment signs; malformed models are refused with their JSON pointer.
 */
#include "check.h"

#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_REL(a, b) CHECK_NEAR((a), (b), 1e-9 * fabs(b))

static int parse_text(const char *name, const char *text, struct engi_structural *s,
		      struct engi_error *err)
{
	engi_error_init(err);
	int rc = engi_structural_parse(name, text, strlen(text), s, err);
	if (rc)
		fprintf(stderr, "%s\n", err->msg);
	return rc;
}

static int parse_json(const char *name, const json_t *model, struct engi_structural *s,
		      struct engi_error *err)
{
	char *t = json_dumps(model, JSON_COMPACT);
	int rc = parse_text(name, t, s, err);
	free(t);
	return rc;
}

static json_t *find_by_id(const json_t *arr, const char *id)
{
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *o = json_array_get(arr, i);
		if (!strcmp(json_string_value(json_object_get(o, "id")), id))
			return o;
	}
	return NULL;
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* What the file says against what was read: coordinates (2D: (x, z)),
 * restraints permuted, E in kN/m^2, the inertia rule (2D: Iy in plane; 3D:
 * Iy, Iz about StructureClaw's local axes, reference Z or X near vertical). */
static void check_read(const char *id, const json_t *m, const struct engi_structural *s)
{
	const json_t *nodes = json_object_get(m, "nodes"), *elems = json_object_get(m, "elements");
	const char *fd =
	    json_string_value(json_object_get(json_object_get(m, "metadata"), "frameDimension"));
	int dim = !strcmp(fd, "2d") ? 2 : 3, bad = 0;
	static const int perm[6] = {0, 2, 1, 3, 5, 4};
	CHECK_INT(s->f.dim, dim);
	CHECK_INT(s->f.nnodes, json_array_size(nodes));
	CHECK_INT(s->f.nelems, json_array_size(elems));
	for (size_t i = 0; i < s->f.nnodes; i++) {
		const json_t *n = json_array_get(nodes, i);
		const double *p = s->f.xyz + 3 * i;
		if (dim == 2)
			bad += p[0] != num(n, "x") || p[1] != num(n, "z") || p[2] != 0;
		else
			bad += p[0] != num(n, "x") || p[1] != num(n, "y") || p[2] != num(n, "z");
		const json_t *r = json_object_get(n, "restraints");
		for (int d = 0; d < 6; d++) {
			int want =
			    r && json_is_true(json_array_get(r, (size_t)(dim == 2 ? perm[d] : d)));
			bad += ((s->f.restraint[i] >> d) & 1) != want;
		}
	}
	for (size_t e = 0; e < s->f.nelems; e++) {
		const json_t *el = json_array_get(elems, e);
		const struct engi_frame_elem *fe = &s->f.elem[e];
		const json_t *sec = find_by_id(json_object_get(m, "sections"),
					       json_string_value(json_object_get(el, "section")));
		const json_t *mat = find_by_id(json_object_get(m, "materials"),
					       json_string_value(json_object_get(el, "material")));
		const json_t *pr = json_object_get(sec, "properties");
		int truss = !strcmp(json_string_value(json_object_get(el, "type")), "truss");
		bad += fe->type != (truss ? ENGI_FRAME_TRUSS : ENGI_FRAME_BEAM);
		bad += fe->young != 1000 * num(mat, "E") || fe->area != num(pr, "A");
		if (truss)
			continue;
		if (dim == 2) {
			bad += fe->iz != num(pr, "Iy");
			continue;
		}
		const double *a = s->f.xyz + 3 * (size_t)fe->node[0];
		const double *b = s->f.xyz + 3 * (size_t)fe->node[1];
		double dz = b[2] - a[2], L = sqrt((b[0] - a[0]) * (b[0] - a[0]) +
						  (b[1] - a[1]) * (b[1] - a[1]) + dz * dz);
		int vertical = fabs(dz) / L > 0.9;
		bad += fe->iy != num(pr, "Iy") || fe->iz != num(pr, "Iz") ||
		       fe->torsion != num(pr, "J");
		bad += fe->shear != 1000 * num(pr, "G");
		bad += fe->zref[0] != (vertical ? 1 : 0) || fe->zref[1] != 0 ||
		       fe->zref[2] != (vertical ? 0 : 1);
	}
	if (bad)
		fprintf(stderr, "%s: %d values read otherwise than the file says\n", id, bad);
	CHECK_INT(bad, 0);
}

static long node_at(const struct engi_frame *f, double x, double y, double z)
{
	for (size_t i = 0; i < f->nnodes; i++)
		if (f->xyz[3 * i] == x && f->xyz[3 * i + 1] == y && f->xyz[3 * i + 2] == z)
			return (long)i;
	return -1;
}

/* beam-simple-6m restrains ry at both ends: fixed-ended, so the midspan
 * deflection is w L^4 / (384 E I) and the end moments w L^2 / 12. */
static void beam_simple_6m(const struct engi_structural *s, const struct engi_frame_result *r)
{
	const double w = 20, L = 6, E = 205e6, I = 1e-4;
	long mid = node_at(&s->f, 3, 0, 0), left = node_at(&s->f, 0, 0, 0);
	CHECK(mid >= 0 && left >= 0);
	if (mid < 0 || left < 0)
		return;
	double want = -w * L * L * L * L / (384 * E * I);
	const struct engi_frame_state *st = &r->state[0];
	CHECK_NEAR(st->u[6 * mid + 1], want, 1e-9 * fabs(want));
	CHECK_NEAR(st->u[6 * mid + 1], -3.29e-3, 0.005e-3);
	CHECK_NEAR(st->u[6 * left + 5], 0, 0);
	CHECK_NEAR(st->reaction[6 * left + 1], w * L / 2, 1e-9 * w * L);
	CHECK_NEAR(st->reaction[6 * left + 5], w * L * L / 12, 1e-9 * w * L * L);
}

static void fixtures(const char *bench)
{
	char path[4096];
	json_error_t je;
	snprintf(path, sizeof(path), "%s/fixtures/ground-truth-models.json", bench);
	json_t *all = json_load_file(path, 0, &je);
	if (!all) {
		fprintf(stderr, "cannot read StructureClaw-Bench's ground truths '%s': %s\n", path,
			je.text);
		CHECK(all != NULL);
		return;
	}
	size_t nread = 0, solved = 0, mechanisms = 0, numbered = 0;
	CHECK_INT(json_array_size(all), 47);
	for (size_t i = 0; i < json_array_size(all); i++) {
		const json_t *entry = json_array_get(all, i);
		const char *id = json_string_value(json_object_get(entry, "id"));
		const json_t *m = json_object_get(entry, "model");
		struct engi_structural s;
		struct engi_frame_result r;
		struct engi_error err;
		engi_structural_init(&s);
		engi_frame_result_init(&r);
		int rc = parse_json(id, m, &s, &err);
		CHECK_INT(rc, 0);
		if (rc == 0) {
			nread++;
			CHECK(!strncmp(s.normalised, "StructureClaw 2.0.0; SI: kN, m", 30));
			CHECK_STR(s.length_unit, "m");
			CHECK_STR(s.force_unit, "kN");
			numbered += strstr(s.normalised, "string ids numbered") != NULL;
			check_read(id, m, &s);
			engi_error_init(&err);
			rc = engi_frame_solve(&s.f, NULL, &r, &err);
			if (!strcmp(id, "truss-roof-18m-3m-12k") ||
			    !strcmp(id, "truss-warren-12m-2m-8k")) {
				CHECK_INT(rc, ENGI_EINVALID);
				const char *want =
				    "the model is a mechanism: 7 free degrees of freedom";
				CHECK(strstr(err.msg, want) != NULL);
				mechanisms += rc == ENGI_EINVALID && strstr(err.msg, want);
			} else if (rc) {
				fprintf(stderr, "%s: %s\n", id, err.msg);
				CHECK_INT(rc, 0);
			} else {
				int ok = 1;
				for (size_t k = 0; k < r.nstates; k++)
					if (!(r.state[k].equilibrium_rel <= 1e-10)) {
						fprintf(stderr, "%s: state %zu: equilibrium %g\n",
							id, k, r.state[k].equilibrium_rel);
						ok = 0;
					}
				CHECK(ok);
				solved += (size_t)ok;
				if (!strcmp(id, "beam-simple-6m"))
					beam_simple_6m(&s, &r);
			}
		}
		engi_frame_result_release(&r);
		engi_structural_release(&s);
	}
	CHECK_INT(nread, 47);
	CHECK_INT(solved, 45);
	CHECK_INT(mechanisms, 2);
	CHECK(numbered > 0 && numbered < 47); /* both kinds of id occur */
	json_decref(all);
}

/* max |a - b| <= rel max |a| over n values */
static int same(const double *a, const double *b, size_t n, double rel)
{
	double d = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		d = fmax(d, fabs(a[i] - b[i]));
		m = fmax(m, fabs(a[i]));
	}
	if (!(d <= rel * m + 1e-300))
		fprintf(stderr, "differ by %g of %g\n", d, m);
	return d <= rel * m + 1e-300;
}

/* A pitched portal with a truss brace, written in StructureClaw's format
 * (x-z plane, kN, m, MPa, a rafter running right to left with a load in its
 * own axes, an in-plane moment) and in structural/1 (x-y plane, the same
 * mapping done here by hand): the same displacements, reactions and member
 * end forces, state by state. */
static const char sc_portal[] =
    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\",\n"
    " \"metadata\": {\"frameDimension\": \"2d\"},\n"
    " \"nodes\": [\n"
    "  {\"id\": \"A\", \"x\": 0, \"y\": 0, \"z\": 0, \"restraints\": [true, true, true, true, "
    "true, true]},\n"
    "  {\"id\": \"B\", \"x\": 0, \"y\": 0, \"z\": 4},\n"
    "  {\"id\": \"C\", \"x\": 3, \"y\": 0, \"z\": 5.5},\n"
    "  {\"id\": \"D\", \"x\": 6, \"y\": 0, \"z\": 4},\n"
    "  {\"id\": \"E\", \"x\": 6, \"y\": 0, \"z\": 0, \"restraints\": [true, true, true, true, "
    "false, true]}],\n"
    " \"elements\": [\n"
    "  {\"id\": \"C1\", \"type\": \"column\", \"nodes\": [\"A\", \"B\"], \"material\": \"S\", "
    "\"section\": \"col\"},\n"
    "  {\"id\": \"R1\", \"type\": \"beam\", \"nodes\": [\"B\", \"C\"], \"material\": \"S\", "
    "\"section\": \"raf\"},\n"
    "  {\"id\": \"R2\", \"type\": \"beam\", \"nodes\": [\"D\", \"C\"], \"material\": \"S\", "
    "\"section\": \"raf\"},\n"
    "  {\"id\": \"C2\", \"type\": \"column\", \"nodes\": [\"E\", \"D\"], \"material\": \"S\", "
    "\"section\": \"col\"},\n"
    "  {\"id\": \"T1\", \"type\": \"truss\", \"nodes\": [\"B\", \"E\"], \"material\": \"S\", "
    "\"section\": \"rod\"}],\n"
    " \"materials\": [{\"id\": \"S\", \"name\": \"Q355\", \"E\": 210000, \"nu\": 0.3, \"rho\": "
    "7850}],\n"
    " \"sections\": [\n"
    "  {\"id\": \"col\", \"name\": \"HW\", \"type\": \"H\", \"properties\": {\"A\": 0.01, \"Iy\": "
    "2e-4, \"Iz\": 5e-5, \"J\": 1e-6, \"G\": 81000}},\n"
    "  {\"id\": \"raf\", \"name\": \"HN\", \"type\": \"H\", \"properties\": {\"A\": 0.008, "
    "\"Iy\": 1.5e-4, \"Iz\": 3e-5}},\n"
    "  {\"id\": \"rod\", \"name\": \"rod\", \"type\": \"rod\", \"properties\": {\"A\": 5e-4}}],\n"
    " \"load_cases\": [\n"
    "  {\"id\": \"D\", \"type\": \"dead\", \"loads\": [\n"
    "   {\"type\": \"distributed\", \"element\": \"R1\", \"wz\": -10, \"wy\": 0},\n"
    "   {\"type\": \"distributed\", \"element\": \"R2\", \"reference_frame\": "
    "\"element-local\", \"wz\": -5},\n"
    "   {\"node\": \"B\", \"fx\": 15},\n"
    "   {\"type\": \"nodal\", \"node\": \"C\", \"fz\": -20, \"my\": 8}]},\n"
    "  {\"id\": \"W\", \"type\": \"wind\", \"loads\": [\n"
    "   {\"node\": \"D\", \"forces\": [-7, 0, 0, 0, 0, 0]},\n"
    "   {\"element\": \"C1\", \"wx\": 3}]}],\n"
    " \"load_combinations\": [{\"id\": \"ULS\", \"factors\": {\"D\": 1.35, \"W\": 1.5}}]}\n";

static void own_model_both_formats(void)
{
	/* R2 runs from D (6, 4) to C (3, 5.5): StructureClaw's local y =
	 * normalise(Z x x) = -Y, local z = x cross y = (dz, 0, -dx) / L, so
	 * its local wz = -5 is -5 (1.5, 3) / L in the x-y plane here */
	double L = sqrt(3.0 * 3.0 + 1.5 * 1.5), wx = -5 * 1.5 / L, wy = -5 * 3 / L;
	char s1[4096];
	snprintf(
	    s1, sizeof(s1),
	    "{\"format\": \"structural/1\", \"dim\": 2, \"units\": {\"length\": \"m\", \"force\": "
	    "\"kN\"},\n"
	    " \"materials\": [{\"id\": \"S\", \"E\": 210e6, \"nu\": 0.3}],\n"
	    " \"sections\": [{\"id\": \"col\", \"A\": 0.01, \"Iz\": 2e-4, \"Iy\": 5e-5, \"J\": "
	    "1e-6},\n"
	    "   {\"id\": \"raf\", \"A\": 0.008, \"Iz\": 1.5e-4, \"Iy\": 3e-5}, {\"id\": \"rod\", "
	    "\"A\": 5e-4}],\n"
	    " \"nodes\": [{\"id\": 1, \"xyz\": [0, 0]}, {\"id\": 2, \"xyz\": [0, 4]}, {\"id\": 3, "
	    "\"xyz\": [3, 5.5]},\n"
	    "   {\"id\": 4, \"xyz\": [6, 4]}, {\"id\": 5, \"xyz\": [6, 0]}],\n"
	    " \"elements\": [\n"
	    "  {\"id\": 1, \"type\": \"beam\", \"nodes\": [1, 2], \"material\": \"S\", "
	    "\"section\": "
	    "\"col\"},\n"
	    "  {\"id\": 2, \"type\": \"beam\", \"nodes\": [2, 3], \"material\": \"S\", "
	    "\"section\": "
	    "\"raf\"},\n"
	    "  {\"id\": 3, \"type\": \"beam\", \"nodes\": [4, 3], \"material\": \"S\", "
	    "\"section\": "
	    "\"raf\"},\n"
	    "  {\"id\": 4, \"type\": \"beam\", \"nodes\": [5, 4], \"material\": \"S\", "
	    "\"section\": "
	    "\"col\"},\n"
	    "  {\"id\": 5, \"type\": \"truss\", \"nodes\": [2, 5], \"material\": \"S\", "
	    "\"section\": "
	    "\"rod\"}],\n"
	    " \"supports\": [{\"node\": 1, \"restrain\": \"all\"}, {\"node\": 5, \"restrain\": "
	    "[\"ux\", \"uy\"]}],\n"
	    " \"load_cases\": [\n"
	    "  {\"id\": \"D\", \"member\": [{\"element\": 2, \"w\": [0, -10, 0]}, {\"element\": 3, "
	    "\"w\": [%.17g, %.17g, 0]}],\n"
	    "   \"nodal\": [{\"node\": 2, \"F\": [15, 0, 0]}, {\"node\": 3, \"F\": [0, -20, 0], "
	    "\"M\": [0, 0, -8]}]},\n"
	    "  {\"id\": \"W\", \"nodal\": [{\"node\": 4, \"F\": [-7, 0, 0]}], \"member\": "
	    "[{\"element\": 1, \"w\": [3, 0, 0]}]}],\n"
	    " \"combinations\": [{\"id\": \"ULS\", \"factors\": {\"D\": 1.35, \"W\": 1.5}}]}\n",
	    wx, wy);
	struct engi_structural a, b;
	struct engi_frame_result ra, rb;
	struct engi_error err;
	engi_structural_init(&a);
	engi_structural_init(&b);
	engi_frame_result_init(&ra);
	engi_frame_result_init(&rb);
	CHECK_INT(parse_text("portal-sc.json", sc_portal, &a, &err), 0);
	CHECK_INT(parse_text("portal.json", s1, &b, &err), 0);
	CHECK(strstr(a.normalised, "2D x-z plane -> x-y") != NULL);
	CHECK(strstr(a.normalised, "string ids numbered in file order") != NULL);
	CHECK_STR(b.normalised, "");
	CHECK_INT(engi_frame_solve(&a.f, NULL, &ra, &err), 0);
	CHECK_INT(engi_frame_solve(&b.f, NULL, &rb, &err), 0);
	CHECK_INT(ra.nstates, 3);
	CHECK_INT(rb.nstates, 3);
	if (ra.nstates == 3 && rb.nstates == 3)
		for (size_t k = 0; k < 3; k++) {
			size_t nn = a.f.nnodes, ne = a.f.nelems;
			CHECK(same(rb.state[k].u, ra.state[k].u, 6 * nn, 1e-12));
			CHECK(same(rb.state[k].reaction, ra.state[k].reaction, 6 * nn, 1e-12));
			CHECK(same(rb.state[k].end_force, ra.state[k].end_force, 12 * ne, 1e-12));
			CHECK(ra.state[k].equilibrium_rel <= 1e-12);
			/* something moved, in the plane */
			CHECK(ra.state[k].max_u > 1e-5);
			for (size_t n = 0; n < nn; n++)
				CHECK_NEAR(ra.state[k].u[6 * n + 2], 0, 0);
		}
	/* the ids: C1, R1, ... numbered 1.. in file order */
	CHECK_INT(a.f.node_id[2], 3);
	CHECK_INT(a.f.elem_id[4], 5);
	CHECK_STR(a.case_name[1], "W");
	CHECK_STR(a.combo_name[0], "ULS");
	engi_frame_result_release(&ra);
	engi_frame_result_release(&rb);
	engi_structural_release(&a);
	engi_structural_release(&b);
}

/* Cantilevers in closed form. 2D: a column under a tip load bends in the
 * plane with Iy; a beam under a tip moment my deflects down (right hand
 * about +y: uz = -M L^2 / 2 E I, here uy) and turns rz = -ry; a beam written
 * from its free end to its fixed end under a local wz deflects as under the
 * same global load. 3D: members along X and Y bend under wz with Iy, under
 * a local wy with Iz; a column along Z takes global X as its reference, so
 * fx bends it with Iy and fy with Iz. */
static void closed_forms(void)
{
	const double E = 200e6, P = 10, M = 8, w = 4, L = 3, Iy = 4e-4, Iz = 1e-4;
	const char *sec = "\"sections\": [{\"id\": \"S\", \"name\": \"s\", \"type\": \"H\", "
			  "\"properties\": {\"A\": 0.01, \"Iy\": 4e-4, \"Iz\": 1e-4, \"J\": 1e-5, "
			  "\"G\": 80000}}],\n"
			  "\"materials\": [{\"id\": \"M\", \"name\": \"m\", \"E\": 200000, \"nu\": "
			  "0.3, \"rho\": 7850}],\n";
	const char *fix = "\"restraints\": [true, true, true, true, true, true]";
	char t[8192];
	struct engi_structural s;
	struct engi_frame_result r;
	struct engi_error err;
	engi_structural_init(&s);
	engi_frame_result_init(&r);
	snprintf(
	    t, sizeof(t),
	    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\",\n"
	    "\"coordinate_system\": {\"semantics\": \"global-z-up\", \"version\": 1, "
	    "\"dimension\": "
	    "\"2d\", \"plane\": \"xz\", \"dof_order\": [\"ux\", \"uy\", \"uz\", \"rx\", \"ry\", "
	    "\"rz\"]},\n%s"
	    "\"nodes\": [{\"id\": \"1\", \"x\": 0, \"y\": 0, \"z\": 0, %s}, {\"id\": \"2\", \"x\": "
	    "0, "
	    "\"y\": 0, \"z\": 3},\n"
	    " {\"id\": \"3\", \"x\": 10, \"y\": 0, \"z\": 0, %s}, {\"id\": \"4\", \"x\": 13, "
	    "\"y\": 0, "
	    "\"z\": 0},\n"
	    " {\"id\": \"5\", \"x\": 20, \"y\": 0, \"z\": 0, %s}, {\"id\": \"6\", \"x\": 23, "
	    "\"y\": 0, "
	    "\"z\": 0}],\n"
	    "\"elements\": [{\"id\": \"1\", \"type\": \"column\", \"nodes\": [\"1\", \"2\"], "
	    "\"material\": \"M\", \"section\": \"S\"},\n"
	    " {\"id\": \"2\", \"type\": \"beam\", \"nodes\": [\"3\", \"4\"], \"material\": \"M\", "
	    "\"section\": \"S\"},\n"
	    " {\"id\": \"3\", \"type\": \"beam\", \"nodes\": [\"6\", \"5\"], \"material\": \"M\", "
	    "\"section\": \"S\"}],\n"
	    "\"load_cases\": [{\"id\": \"P\", \"loads\": [{\"node\": \"2\", \"fx\": %g}]},\n"
	    " {\"id\": \"M\", \"loads\": [{\"node\": \"4\", \"my\": %g}]},\n"
	    " {\"id\": \"W\", \"loads\": [{\"element\": \"3\", \"reference_frame\": "
	    "\"element-local\", "
	    "\"wz\": %g}]}]}\n",
	    sec, fix, fix, fix, P, M, -w);
	CHECK_INT(parse_text("cantilevers-2d.json", t, &s, &err), 0);
	CHECK_INT(engi_frame_solve(&s.f, NULL, &r, &err), 0);
	if (r.nstates == 3) {
		CHECK_REL(r.state[0].u[6 * 1 + 0], P * L * L * L / (3 * E * Iy));
		CHECK_REL(r.state[1].u[6 * 3 + 1], -M * L * L / (2 * E * Iy));
		CHECK_REL(r.state[1].u[6 * 3 + 5], -M * L / (E * Iy));
		CHECK_REL(r.state[2].u[6 * 5 + 1], -w * L * L * L * L / (8 * E * Iy));
	}
	engi_frame_result_release(&r);
	snprintf(
	    t, sizeof(t),
	    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\",\n"
	    "\"metadata\": {\"frameDimension\": \"3d\"},\n%s"
	    "\"nodes\": [{\"id\": \"1\", \"x\": 0, \"y\": 0, \"z\": 0, %s}, {\"id\": \"2\", \"x\": "
	    "3, "
	    "\"y\": 0, \"z\": 0},\n"
	    " {\"id\": \"3\", \"x\": 10, \"y\": 0, \"z\": 0, %s}, {\"id\": \"4\", \"x\": 10, "
	    "\"y\": 3, "
	    "\"z\": 0},\n"
	    " {\"id\": \"5\", \"x\": 20, \"y\": 0, \"z\": 0, %s}, {\"id\": \"6\", \"x\": 20, "
	    "\"y\": 0, "
	    "\"z\": 3}],\n"
	    "\"elements\": [{\"id\": \"1\", \"type\": \"beam\", \"nodes\": [\"1\", \"2\"], "
	    "\"material\": \"M\", \"section\": \"S\"},\n"
	    " {\"id\": \"2\", \"type\": \"beam\", \"nodes\": [\"3\", \"4\"], \"material\": \"M\", "
	    "\"section\": \"S\"},\n"
	    " {\"id\": \"3\", \"type\": \"column\", \"nodes\": [\"5\", \"6\"], \"material\": "
	    "\"M\", "
	    "\"section\": \"S\"}],\n"
	    "\"load_cases\": [{\"id\": \"G\", \"loads\": [{\"element\": \"1\", \"wz\": %g}, "
	    "{\"element\": \"2\", \"wz\": %g}]},\n"
	    " {\"id\": \"L\", \"loads\": [{\"element\": \"1\", \"reference_frame\": "
	    "\"element-local\", "
	    "\"wy\": %g}]},\n"
	    " {\"id\": \"X\", \"loads\": [{\"node\": \"6\", \"fx\": %g}]},\n"
	    " {\"id\": \"Y\", \"loads\": [{\"node\": \"6\", \"fy\": %g}]}]}\n",
	    sec, fix, fix, fix, -w, -w, -w, P, P);
	CHECK_INT(parse_text("cantilevers-3d.json", t, &s, &err), 0);
	CHECK(strstr(s.normalised, "3D axes kept") != NULL);
	CHECK(strstr(s.normalised, "string ids") == NULL);
	CHECK_INT(engi_frame_solve(&s.f, NULL, &r, &err), 0);
	if (r.nstates == 4) {
		double uw_y = w * L * L * L * L / (8 * E * Iy),
		       uw_z = w * L * L * L * L / (8 * E * Iz);
		CHECK_REL(r.state[0].u[6 * 1 + 2], -uw_y);
		CHECK_REL(r.state[0].u[6 * 3 + 2], -uw_y);
		CHECK_REL(r.state[1].u[6 * 1 + 1], -uw_z);
		CHECK_REL(r.state[2].u[6 * 5 + 0], P * L * L * L / (3 * E * Iy));
		CHECK_REL(r.state[3].u[6 * 5 + 1], P * L * L * L / (3 * E * Iz));
	}
	engi_frame_result_release(&r);
	engi_structural_release(&s);
}

static const char base[] =
    "{\"schema_version\": \"2.0.0\", \"unit_system\": \"SI\",\n"
    " \"nodes\": [{\"id\": \"N1\", \"x\": 0, \"y\": 0, \"z\": 0, \"restraints\": [true, true, "
    "true, true, true, true]},\n"
    "  {\"id\": \"N2\", \"x\": 4, \"y\": 0, \"z\": 0},\n"
    "  {\"id\": \"N3\", \"x\": 4, \"y\": 0, \"z\": 3, \"restraints\": [true, true, true, true, "
    "true, true]}],\n"
    " \"elements\": [{\"id\": \"B1\", \"type\": \"beam\", \"nodes\": [\"N1\", \"N2\"], "
    "\"material\": \"M1\", \"section\": \"S1\"},\n"
    "  {\"id\": \"T1\", \"type\": \"truss\", \"nodes\": [\"N2\", \"N3\"], \"material\": \"M1\", "
    "\"section\": \"R1\"}],\n"
    " \"materials\": [{\"id\": \"M1\", \"name\": \"steel\", \"E\": 206000, \"nu\": 0.3, "
    "\"rho\": 7850}],\n"
    " \"sections\": [{\"id\": \"S1\", \"name\": \"H\", \"type\": \"H\", \"properties\": {\"A\": "
    "0.01, \"Iy\": 1e-4, \"Iz\": 2e-5, \"J\": 1e-6, \"G\": 79000}},\n"
    "  {\"id\": \"R1\", \"name\": \"rod\", \"type\": \"rod\", \"properties\": {\"A\": 1e-3}}],\n"
    " \"stories\": [{\"id\": \"F1\", \"height\": 3, \"floorLoad\": 5, \"floorLoadUnit\": "
    "\"kN/m2\"}],\n"
    " \"load_cases\": [{\"id\": \"LC1\", \"type\": \"dead\", \"loads\": [{\"node\": \"N2\", "
    "\"fz\": -10},\n"
    "  {\"type\": \"distributed\", \"element\": \"B1\", \"wz\": -2, \"wy\": 0}]}],\n"
    " \"load_combinations\": [{\"id\": \"ULS\", \"factors\": {\"LC1\": 1.2}}],\n"
    " \"metadata\": {\"frameDimension\": \"2d\", \"source\": \"test\"}}\n";

/* Sets (value JSON text) or removes (value NULL) what ptr names; its
 * parents must exist. */
static int edit(json_t *root, const char *ptr, const char *value)
{
	char buf[256];
	json_t *v = value ? json_loads(value, JSON_DECODE_ANY, NULL) : NULL, *cur = root;
	snprintf(buf, sizeof(buf), "%s", ptr);
	char *save = NULL, *tok = strtok_r(buf + 1, "/", &save);
	while (tok && cur) {
		char *next = strtok_r(NULL, "/", &save);
		if (!next) {
			if (json_is_object(cur))
				return v ? json_object_set_new(cur, tok, v)
					 : json_object_del(cur, tok);
			size_t i = strtoul(tok, NULL, 10);
			return v ? json_array_set_new(cur, i, v) : json_array_remove(cur, i);
		}
		cur = json_is_object(cur) ? json_object_get(cur, tok)
					  : json_array_get(cur, strtoul(tok, NULL, 10));
		tok = next;
	}
	json_decref(v);
	return -1;
}

static void malformed(void)
{
	static const struct {
		const char *ptr, *value, *ptr2, *value2, *want;
	} cases[] = {
	    {"/unit_system", "\"kN-m\"", 0, 0, "t.json: /unit_system: unknown unit system"},
	    {"/unit_system", NULL, 0, 0, "t.json: /unit_system: required"},
	    {"/schema_version", "\"1.0.0\"", 0, 0,
	     "/schema_version: StructureClaw schema 2.x is read, found '1.0.0'"},
	    {"/metadata/frameDimension", NULL, 0, 0,
	     "t.json: /: neither /coordinate_system/dimension nor /metadata/frameDimension"},
	    {"/metadata/frameDimension", "\"2.5d\"", 0, 0,
	     "/metadata/frameDimension: unknown frame dimension '2.5d'"},
	    {"/coordinate_system",
	     "{\"semantics\": \"global-z-up\", \"version\": 1, \"dimension\": \"3d\", \"plane\": "
	     "null, \"dof_order\": [\"ux\", \"uy\", \"uz\", \"rx\", \"ry\", \"rz\"]}",
	     0, 0, "/metadata/frameDimension: says 2d where /coordinate_system/dimension says 3d"},
	    {"/coordinate_system",
	     "{\"semantics\": \"global-y-up\", \"version\": 1, \"dimension\": \"2d\", \"plane\": "
	     "\"xz\", \"dof_order\": []}",
	     0, 0, "/coordinate_system/semantics: expected \"global-z-up\""},
	    {"/metadata/elementReferenceVectors", "{\"B1\": [0, 1, 0]}", 0, 0,
	     "/metadata/elementReferenceVectors: members' own reference vectors are not read"},
	    {"/project", "{}", 0, 0, "t.json: /project: unknown field"},
	    {"/nodes/2/id", "\"N1\"", 0, 0, "/nodes/2/id: duplicate node id 'N1'"},
	    {"/nodes/1/y", "0.5", 0, 0, "/nodes/1/y: a 2d model lies in the x-z plane"},
	    {"/nodes/1/z", NULL, 0, 0, "/nodes/1/z: required number is missing"},
	    {"/nodes/0/restraints/5", NULL, 0, 0, "/nodes/0/restraints: expected six booleans"},
	    {"/nodes/0/restraints/2", "1", 0, 0, "/nodes/0/restraints/2: expected a boolean"},
	    {"/nodes/0/story", "\"F9\"", 0, 0, "/nodes/0/story: unknown story 'F9'"},
	    {"/elements/0/type", "\"brace\"", 0, 0,
	     "/elements/0/type: unknown element type 'brace'"},
	    {"/elements/1/nodes/1", "\"N9\"", 0, 0, "/elements/1/nodes/1: unknown node 'N9'"},
	    {"/elements/0/nodes/1", "\"N1\"", 0, 0,
	     "/elements/0/nodes: both ends on the same node"},
	    {"/nodes/1/x", "0", 0, 0, "/elements/0/nodes: the member has zero length"},
	    {"/elements/0/releases", "{}", 0, 0, "/elements/0/releases: unknown field"},
	    {"/elements/0/rotation_angle", "90", 0, 0,
	     "/elements/0/rotation_angle: a section rotated about its member is not read"},
	    {"/elements/0/section", "\"S9\"", 0, 0, "/elements/0/section: unknown section 'S9'"},
	    {"/sections/0/properties/Iy", NULL, 0, 0,
	     "/elements/0/section: section 'S1' has no properties.Iy"},
	    {"/sections/0/properties/G", NULL, "/metadata/frameDimension", "\"3d\"",
	     "/elements/0/section: section 'S1' has no properties.G, which a beam or column 3d "
	     "member needs"},
	    {"/sections/0/properties/Avy", "0.004", 0, 0,
	     "/sections/0/properties/Avy: unknown field"},
	    {"/sections/1/properties", NULL, 0, 0, "/sections/1/properties: required object"},
	    {"/materials/0/nu", NULL, 0, 0, "/materials/0/nu: required number is missing"},
	    {"/materials/0/G", "79000", 0, 0, "/materials/0/G: unknown field"},
	    {"/materials/0/E", "-5", 0, 0, "/materials/0/E: must be positive"},
	    {"/load_cases/0/loads/0/fy", "3", 0, 0,
	     "/load_cases/0/loads/0/fy: out of the x-z plane of a 2d model"},
	    {"/load_cases/0/loads/0/forces", "[0, 0, -10, 0, 0, 1]", "/load_cases/0/loads/0/fz",
	     NULL, "/load_cases/0/loads/0/forces/5: out of the x-z plane of a 2d model"},
	    {"/load_cases/0/loads/0/forces", "[0, 0, -10, 0, 0]", 0, 0,
	     "/load_cases/0/loads/0/forces: forces and fz together"},
	    {"/load_cases/0/loads/1/wy", "1", 0, 0,
	     "/load_cases/0/loads/1/wy: out of the x-z plane of a 2d model"},
	    {"/load_cases/0/loads/1/element", "\"T1\"", 0, 0,
	     "/load_cases/0/loads/1/element: a distributed load on truss 'T1'"},
	    {"/load_cases/0/loads/0/element", "\"B1\"", 0, 0,
	     "/load_cases/0/loads/0: a load names exactly one node or element"},
	    {"/load_cases/0/loads/0/wz", "1", 0, 0,
	     "/load_cases/0/loads/0/wz: a nodal load has fx"},
	    {"/load_cases/0/loads/0/type", "\"point\"", 0, 0,
	     "/load_cases/0/loads/0/type: unknown load type 'point'"},
	    {"/load_cases/0/loads/1/type", "\"nodal\"", 0, 0,
	     "/load_cases/0/loads/1/type: a nodal load is on a node"},
	    {"/load_cases/0/loads/1/reference_frame", "\"local\"", 0, 0,
	     "/load_cases/0/loads/1/reference_frame: unknown reference frame 'local'"},
	    {"/load_cases/0/loads/0/reference_frame", "\"element-local\"", 0, 0,
	     "/load_cases/0/loads/0/reference_frame: a nodal load is global"},
	    {"/load_cases/0/loads/0/node", "\"N7\"", 0, 0,
	     "/load_cases/0/loads/0/node: unknown node 'N7'"},
	    {"/load_cases/0/loads/0/fz", "\"-10\"", 0, 0,
	     "/load_cases/0/loads/0/fz: expected a number, found a string"},
	    {"/load_cases/0/loads", "[]", 0, 0,
	     "/load_cases/0/loads: no loads: StructureClaw would spread the stories' floor "
	     "loads"},
	    {"/load_cases/0/type", "\"blast\"", 0, 0,
	     "/load_cases/0/type: unknown load case type 'blast'"},
	    {"/load_combinations/0/factors/LC9", "1", 0, 0,
	     "/load_combinations/0/factors/LC9: unknown load case"},
	    {"/load_combinations/0/factors", "{}", 0, 0,
	     "/load_combinations/0/factors: expected an object of load case factors"},
	};
	struct engi_structural s;
	struct engi_error err;
	engi_structural_init(&s);
	CHECK_INT(parse_text("t.json", base, &s, &err), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *root = json_loads(base, 0, NULL);
		CHECK(root != NULL);
		if (!root)
			return;
		int e1 = edit(root, cases[i].ptr, cases[i].value);
		int e2 = cases[i].ptr2 ? edit(root, cases[i].ptr2, cases[i].value2) : 0;
		CHECK(e1 == 0 && e2 == 0);
		char *t = json_dumps(root, 0);
		engi_error_init(&err);
		int rc = engi_structural_parse("t.json", t, strlen(t), &s, &err);
		CHECK_INT(rc, ENGI_EPARSE);
		if (!strstr(err.msg, cases[i].want)) {
			fprintf(stderr, "case %zu (%s): message '%s', expected '%s'\n", i,
				cases[i].ptr, err.msg, cases[i].want);
			CHECK(0);
		}
		CHECK_INT(s.f.nnodes, 0); /* released on error */
		free(t);
		json_decref(root);
	}
	/* neither format */
	static const char *const neither[] = {"[]", "{\"nodes\": []}", "{\"schema_version\": 2}"};
	for (size_t i = 0; i < sizeof(neither) / sizeof(*neither); i++) {
		engi_error_init(&err);
		CHECK_INT(engi_structural_parse("t.json", neither[i], strlen(neither[i]), &s, &err),
			  ENGI_EPARSE);
		CHECK(strstr(err.msg, "t.json: /: not a structural model: the formats known are "
				      "structural/1") != NULL);
	}
	engi_structural_release(&s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s STRUCTURECLAW_BENCH_DIR\n", argv[0]);
		return 2;
	}
	fixtures(argv[1]);
	own_model_both_formats();
	closed_forms();
	malformed();
	return check_exit();
}
