/*
 * Solid kernel and deck reader: patch tests (a linear displacement field
 * imposed on the boundary is reproduced inside and gives the exact constant
 * stress, also extrapolated to every node) for C3D4, C3D10 and C3D8;
 * pressure resultants; equilibrium; reader features and errors by line; a
 * mechanism named; mutated decks never crash; the stress readers of ccx's
 * .frd and .dat files (fixed columns, component order, NaN refused by line).
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "engi/error.h"
#include "engi/fe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define E_MOD 70000.0
#define NU    0.33

/* The linear field of the patch test. */
static void field(const double x[3], double u[3])
{
	u[0] = 1e-3 * x[0] + 2e-4 * x[1] - 3e-4 * x[2] + 1e-5;
	u[1] = -5e-4 * x[0] + 4e-4 * x[1] + 1e-4 * x[2];
	u[2] = 3e-4 * x[0] - 1e-4 * x[1] + 6e-4 * x[2] - 2e-5;
}

/* Deck of a (slightly skewed) n^3 grid of cells of the given type; every
 * boundary node prescribed by the linear field when patch is set, else the
 * x = 0 face clamped and a pressure p on the top face z = 1. */
static char *grid_deck(const char *type, int n, int patch, double p)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, 1 << 24);
	int quad = !strcmp(type, "C3D10");
	int m = quad ? 2 * n : n; /* grid points per side - 1 */
#define NID(i, j, k) ((long)((k) * (m + 1) + (j)) * (m + 1) + (i) + 1)
	engi_dynbuf_printf(&b, "** patch\n*NODE, NSET=NALL\n");
	for (int k = 0; k <= m; k++)
		for (int j = 0; j <= m; j++)
			for (int i = 0; i <= m; i++) {
				double x = (double)i / m, y = (double)j / m, z = (double)k / m;
				/* interior points moved off the grid; faces stay planar */
				if (i > 0 && i < m && j > 0 && j < m && k > 0 && k < m && !quad) {
					x += 0.07 * sin(3.0 * i + j), y += 0.05 * cos(2.0 * j + k);
					z += 0.06 * sin(1.0 * k + 2 * i);
				}
				engi_dynbuf_printf(&b, "%ld, %.17g, %.17g, %.17g\n", NID(i, j, k),
						   x, y, z);
			}
	engi_dynbuf_printf(&b, "*ELEMENT, TYPE=%s, ELSET=EALL\n", type);
	long eid = 1;
	int s = quad ? 2 : 1;
	for (int k = 0; k < n; k++)
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++) {
				int I = s * i, J = s * j, K = s * k;
				if (!strcmp(type, "C3D8")) {
					engi_dynbuf_printf(
					    &b, "%ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld\n",
					    eid++, NID(I, J, K), NID(I + 1, J, K),
					    NID(I + 1, J + 1, K), NID(I, J + 1, K),
					    NID(I, J, K + 1), NID(I + 1, J, K + 1),
					    NID(I + 1, J + 1, K + 1), NID(I, J + 1, K + 1));
					continue;
				}
				static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
								{1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
				for (int q = 0; q < 6; q++) {
					int c[4][3] = {{0}};
					for (int t = 1; t < 4; t++) {
						memcpy(c[t], c[t - 1], sizeof(c[t]));
						c[t][perms[q][t - 1]] += s;
					}
					/* orientation: even permutations of (0,1,2) are positive */
					if (q == 1 || q == 2 || q == 5) {
						int tmp[3];
						memcpy(tmp, c[1], sizeof(tmp));
						memcpy(c[1], c[2], sizeof(tmp));
						memcpy(c[2], tmp, sizeof(tmp));
					}
					engi_dynbuf_printf(&b, "%ld", eid++);
					for (int t = 0; t < 4; t++)
						engi_dynbuf_printf(
						    &b, ", %ld",
						    NID(I + c[t][0], J + c[t][1], K + c[t][2]));
					if (quad) {
						static const int ed[6][2] = {
						    {0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
						for (int t = 0; t < 6; t++) {
							int *a = c[ed[t][0]], *bb = c[ed[t][1]];
							engi_dynbuf_printf(
							    &b, "%s %ld", t == 4 ? ",\n" : ",",
							    NID(I + (a[0] + bb[0]) / 2,
								J + (a[1] + bb[1]) / 2,
								K + (a[2] + bb[2]) / 2));
						}
					}
					engi_dynbuf_printf(&b, "\n");
				}
			}
	engi_dynbuf_printf(&b,
			   "*MATERIAL, NAME=AL\n*ELASTIC\n%g, %g\n"
			   "*SOLID SECTION, ELSET=EALL, MATERIAL=AL\n*STEP\n*STATIC\n",
			   E_MOD, NU);
	if (patch) {
		engi_dynbuf_printf(&b, "*BOUNDARY\n");
		for (int k = 0; k <= m; k++)
			for (int j = 0; j <= m; j++)
				for (int i = 0; i <= m; i++) {
					if (i > 0 && i < m && j > 0 && j < m && k > 0 && k < m)
						continue;
					double x[3] = {(double)i / m, (double)j / m, (double)k / m},
					       u[3];
					field(x, u);
					for (int d = 0; d < 3; d++)
						engi_dynbuf_printf(&b, "%ld, %d, %d, %.17g\n",
								   NID(i, j, k), d + 1, d + 1,
								   u[d]);
				}
	} else {
		engi_dynbuf_printf(&b, "*NSET, NSET=FIX\n");
		for (int k = 0; k <= m; k++)
			for (int j = 0; j <= m; j++)
				engi_dynbuf_printf(&b, "%ld\n", NID(0, j, k));
		engi_dynbuf_printf(&b, "*BOUNDARY\nFIX, 1, 3\n*DLOAD\n");
		/* faces on z = 1, found by the kernel's own face table below */
		engi_dynbuf_printf(&b, "@TOP@\n");
	}
	engi_dynbuf_printf(&b, "*NODE PRINT, NSET=NALL\nU\n*END STEP\n");
#undef NID
	(void)p;
	return engi_dynbuf_take(&b, NULL);
}

static void patch_test(const char *type, int n)
{
	char *deck = grid_deck(type, n, 1, 0);
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_error err;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	CHECK_INT(engi_inp_parse("patch.inp", deck, strlen(deck), &m, &err), 0);
	CHECK_INT(engi_fe_solid_solve(&m, NULL, &r, &err), 0);
	if (err.code)
		fprintf(stderr, "%s: %s\n", type, err.msg);
	double worst = 0;
	for (size_t i = 0; i < m.nnodes && r.u; i++) {
		double u[3];
		field(m.xyz + 3 * i, u);
		for (int d = 0; d < 3; d++)
			worst = fmax(worst, fabs(r.u[3 * i + (size_t)d] - u[d]));
	}
	CHECK(r.neq > 0);
	CHECK(worst < 1e-14);
	/* constant stress D eps */
	double eps[6] = {1e-3, 4e-4, 6e-4, 2e-4 - 5e-4, 1e-4 - 1e-4, -3e-4 + 3e-4};
	double f = E_MOD / ((1 + NU) * (1 - 2 * NU)),
	       sx = f * ((1 - NU) * eps[0] + NU * (eps[1] + eps[2]));
	double txy = E_MOD / (2 * (1 + NU)) * eps[3];
	double sworst = 0;
	for (size_t e = 0; e < m.nelems && r.u; e++) {
		double s[6], vm;
		CHECK_INT(engi_fe_solid_stress(&m, r.u, e, s, &vm), 0);
		sworst = fmax(sworst, fmax(fabs(s[0] - sx), fabs(s[3] - txy)));
		int nn = engi_fe_etype_nodes((enum engi_fe_etype)m.etype[e]);
		for (int j = 0; j < nn; j++) {
			CHECK_INT(engi_fe_solid_stress_node(&m, r.u, e, j, s), 0);
			sworst = fmax(sworst, fmax(fabs(s[0] - sx), fabs(s[3] - txy)));
		}
		CHECK_INT(engi_fe_solid_stress_node(&m, r.u, e, nn, s), ENGI_EINVALID);
	}
	CHECK(sworst < 1e-9 * fabs(sx));
	fprintf(stderr, "patch %s: %zu nodes, |u - exact| %.2g, |s - exact| %.2g\n", type, m.nnodes,
		worst, sworst);
	/* reactions balance: no external load */
	for (int d = 0; d < 3; d++)
		CHECK_NEAR(r.reaction_sum[d], 0, 1e-9);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	engi_free(deck);
}

/* Pressure p on the top face of a unit cube: resultant -p in z, balanced by
 * the reactions at the clamped face. */
static void pressure_test(const char *type)
{
	char *deck = grid_deck(type, 2, 0, 0);
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_error err;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	/* parse once without loads to find the top faces, then add them */
	char *at = strstr(deck, "@TOP@\n");
	memcpy(at, "**TOP\n", 6);
	CHECK_INT(engi_inp_parse("p.inp", deck, strlen(deck), &m, &err), 0);
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, 1 << 24);
	engi_dynbuf_add(&b, deck, (size_t)(at - deck));
	int nf = !strcmp(type, "C3D8") ? 6 : 4;
	static const int tet[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
	static const int hex[6][4] = {{0, 1, 2, 3}, {4, 7, 6, 5}, {0, 4, 5, 1},
				      {1, 5, 6, 2}, {2, 6, 7, 3}, {3, 7, 4, 0}};
	for (size_t e = 0; e < m.nelems; e++)
		for (int fc = 0; fc < nf; fc++) {
			int top = 1;
			for (int q = 0; q < (nf == 6 ? 4 : 3); q++) {
				int ln = nf == 6 ? hex[fc][q] : tet[fc][q];
				top &= fabs(m.xyz[3 * (size_t)m.conn[m.off[e] + (size_t)ln] + 2] -
					    1) < 1e-12;
			}
			if (top)
				engi_dynbuf_printf(&b, "%lld, P%d, 2.5\n", (long long)m.elem_id[e],
						   fc + 1);
		}
	engi_dynbuf_addstr(&b, at);
	char *deck2 = engi_dynbuf_take(&b, NULL);
	CHECK_INT(engi_inp_parse("p.inp", deck2, strlen(deck2), &m, &err), 0);
	CHECK(m.npress > 0);
	CHECK_INT(engi_fe_solid_solve(&m, NULL, &r, &err), 0);
	CHECK_NEAR(r.load_sum[2], -2.5, 1e-12);
	CHECK_NEAR(r.load_sum[0], 0, 1e-12);
	CHECK_NEAR(r.reaction_sum[2], 2.5, 1e-9);
	CHECK(r.max_u > 0);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	engi_free(deck);
	engi_free(deck2);
}

static const char good[] =
    "*HEADING\nsmall\n"
    "*NODE\n1, 0, 0, 0\n2, 1, 0, 0\n3, 0, 1, 0\n4, 0, 0, 1\n5, 1, 1, 1\n"
    "*ELEMENT, TYPE=C3D4, ELSET=E1\n10, 1, 2, 3, 4\n"
    "*ELEMENT, TYPE=C3D4, ELSET=E2\n11, 2, 3, 4, 5\n"
    "*ELSET, ELSET=EALL\nE1, E2\n"
    "*NSET, NSET=BASE, GENERATE\n1, 3, 1\n"
    "*NSET, NSET=TOP\n4\n"
    "*MATERIAL, NAME=Steel\n*ELASTIC\n210000, 0.3\n*DENSITY\n7.85e-9\n"
    "*SOLID SECTION, ELSET=EALL, MATERIAL=STEEL\n"
    "*STEP\n*STATIC\n*BOUNDARY\nBASE, 1, 3\n*CLOAD\nTOP, 3, -10.\n5, 1, 2.5\n"
    "*NODE PRINT, NSET=TOP\nU\n*END STEP\n";

static void expect_error(const char *deck, int code, const char *needle)
{
	struct engi_fe_solid m;
	struct engi_error err;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	int rc = engi_inp_parse("bad.inp", deck, strlen(deck), &m, &err);
	CHECK_INT(rc, code);
	if (!strstr(err.msg, needle))
		fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, needle);
	CHECK(strstr(err.msg, needle) != NULL);
	CHECK(m.nnodes == 0 && m.xyz == NULL);
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	BUG_ON(!p);
	size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
	char *o = engi_malloc(n);
	snprintf(o, n, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
	return o;
}

static void reader_test(void)
{
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_error err;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	CHECK_INT(engi_inp_parse("good.inp", good, strlen(good), &m, &err), 0);
	CHECK_INT(m.nnodes, 5);
	CHECK_INT(m.nelems, 2);
	CHECK_INT(m.nbc, 9);
	CHECK_NEAR(m.young[1], 210000, 0);
	CHECK_NEAR(m.force[3 * 3 + 2], -10, 0);
	CHECK_NEAR(m.force[3 * 4 + 0], 2.5, 0);
	CHECK_INT(engi_fe_solid_solve(&m, NULL, &r, &err), 0);
	CHECK_NEAR(r.reaction_sum[2], 10, 1e-9);
	CHECK_NEAR(r.reaction_sum[0], -2.5, 1e-9);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);

	struct {
		const char *from, *to;
		int code;
		const char *needle;
	} cases[] = {
	    {"*HEADING", "*ORIENTATION, NAME=X", ENGI_ENOTSUP,
	     "bad.inp:1: unsupported keyword '*ORIENTATION'"},
	    {"TYPE=C3D4, ELSET=E2", "TYPE=S4, ELSET=E2", ENGI_ENOTSUP,
	     "bad.inp:11: element type 'S4'"},
	    {"11, 2, 3, 4, 5", "11, 2, 3, 4, 9", ENGI_EINVALID, "element 11 uses undefined node 9"},
	    {"11, 2, 3, 4, 5", "11, 2, 3, 4, 4", ENGI_EINVALID, "element 11 uses node 4 twice"},
	    {"11, 2, 3, 4, 5", "11, 2, 3, 4", ENGI_EPARSE, "element 11 is missing nodes"},
	    {"2, 1, 0, 0", "2, 1, x, 0", ENGI_EPARSE,
	     "bad.inp:5: node coordinate: expected a number"},
	    {"MATERIAL=STEEL", "MATERIAL=ALU", ENGI_EINVALID, "unknown material 'ALU'"},
	    {"BASE, 1, 3", "BAS, 1, 3", ENGI_EINVALID, "bad.inp:28: unknown node set 'BAS'"},
	    {"TOP, 3, -10.", "TOP, 7, -10.", ENGI_EPARSE, "*CLOAD dof 7"},
	    {"*STATIC", "*STATIC\n*DLOAD\nE1, GRAV, 9.81, 0, 0, -1", ENGI_ENOTSUP,
	     "bad.inp:28: *DLOAD type 'GRAV'"},
	    {"210000, 0.3", "210000, 0.5", ENGI_EINVALID, "material 'STEEL'"},
	    {"*STEP\n", "*STEP, NLGEOM\n", ENGI_ENOTSUP, "NLGEOM"},
	    {"*END STEP\n", "*END STEP\n*STEP\n", ENGI_ENOTSUP, "only one *STEP"},
	    {"E1, E2", "E1, E9", ENGI_EPARSE, "unknown set 'E9'"},
	    {"1, 3, 1\n", "3, 1, 1\n", ENGI_EPARSE, "GENERATE range"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *d = replace(good, cases[i].from, cases[i].to);
		expect_error(d, cases[i].code, cases[i].needle);
		engi_free(d);
	}

	/* no supports: the mechanism names a node and direction */
	char *d = replace(good, "BASE, 1, 3", "BASE, 1, 1");
	engi_fe_solid_init(&m);
	engi_error_init(&err);
	CHECK_INT(engi_inp_parse("mech.inp", d, strlen(d), &m, &err), 0);
	CHECK_INT(engi_fe_solid_solve(&m, NULL, &r, &err), ENGI_EINVALID);
	CHECK(strstr(err.msg, "mechanism") && strstr(err.msg, "of node"));
	fprintf(stderr, "expected: %s\n", err.msg);
	engi_fe_solid_release(&m);
	engi_free(d);

	/* an inverted element is named */
	d = replace(good, "10, 1, 2, 3, 4", "10, 1, 3, 2, 4");
	engi_fe_solid_init(&m);
	engi_error_init(&err);
	CHECK_INT(engi_inp_parse("inv.inp", d, strlen(d), &m, &err), 0);
	CHECK_INT(engi_fe_solid_solve(&m, NULL, &r, &err), ENGI_EINVALID);
	CHECK(strstr(err.msg, "element 10 is inverted") != NULL);
	engi_fe_solid_release(&m);
	engi_free(d);
}

/* Mutated decks: byte flips, truncations, line swaps. Nothing may crash;
 * every failure is a code with a message. */
static void fuzz_test(void)
{
	char *base = grid_deck("C3D10", 1, 1, 0);
	size_t n = strlen(base);
	char *buf = engi_malloc(n + 1);
	unsigned seed = 12345;
	int parsed = 0, rejected = 0;
	static const char junk[] = ",*=\n-.eE9 \0xP";
	for (int it = 0; it < 3000; it++) {
		memcpy(buf, base, n + 1);
		size_t len = n;
		int flips = 1 + (int)(rand_r(&seed) % 4);
		for (int k = 0; k < flips; k++)
			buf[rand_r(&seed) % len] = junk[rand_r(&seed) % (sizeof(junk) - 1)];
		if (it % 5 == 0)
			len = rand_r(&seed) % len;
		struct engi_fe_solid m;
		struct engi_fe_solid_result r;
		struct engi_error err;
		engi_error_init(&err);
		engi_fe_solid_init(&m);
		engi_fe_solid_result_init(&r);
		int rc = engi_inp_parse("fuzz.inp", buf, len, &m, &err);
		if (rc == 0) {
			parsed++;
			rc = engi_fe_solid_solve(&m, NULL, &r, &err);
		} else {
			rejected++;
		}
		if (rc < 0)
			CHECK(err.msg[0] != 0);
		engi_fe_solid_result_release(&r);
		engi_fe_solid_release(&m);
	}
	fprintf(stderr, "fuzz: %d parsed, %d rejected\n", parsed, rejected);
	CHECK(parsed > 0 && rejected > 0);
	engi_free(buf);
	engi_free(base);
}

/* Every allocation of reading and solving failing in turn: ENGI_ENOMEM,
 * never a crash or a leak. */
static void nomem_test(void)
{
	int ok = 0;
	for (long k = 1; k < 400 && !ok; k++) {
		struct engi_fe_solid m;
		struct engi_fe_solid_result r;
		struct engi_error err;
		engi_error_init(&err);
		engi_fe_solid_init(&m);
		engi_fe_solid_result_init(&r);
		engi_alloc_fail_after(k);
		int rc = engi_inp_parse("good.inp", good, strlen(good), &m, &err);
		if (rc == 0)
			rc = engi_fe_solid_solve(&m, NULL, &r, &err);
		engi_alloc_fail_after(0);
		if (rc == 0)
			ok = 1;
		else
			CHECK_INT(rc, ENGI_ENOMEM);
		engi_fe_solid_result_release(&r);
		engi_fe_solid_release(&m);
	}
	CHECK(ok);
}

/* A .frd STRESS block as ccx writes it: fixed columns, negative numbers
 * glued to the field before. */
static const char frd_text[] =
    "    1C\n"
    "  100CL  101 1.000000000           2                     0    1           1\n"
    " -4  DISP        4    1\n"
    " -5  D1          1    2    1    0\n"
    " -1         7 1.00000E+00 2.00000E+00 3.00000E+00\n"
    " -3\n"
    "  100CL  101 1.000000000           2                     0    1           1\n"
    " -4  STRESS      6    1\n"
    " -5  SXX         1    4    1    1\n"
    " -5  SYY         1    4    2    2\n"
    " -5  SZZ         1    4    3    3\n"
    " -5  SXY         1    4    1    2\n"
    " -5  SYZ         1    4    2    3\n"
    " -5  SZX         1    4    3    1\n"
    " -1         7-2.23969E+04-5.48165E+03-4.81835E+03-2.02706E+02 2.65764E+02-5.88913E+02\n"
    " -1        12 1.00000E+00 2.00000E+00 3.00000E+00 4.00000E+00 5.00000E+00 6.00000E+00\n"
    " -3\n"
    " 9999\n";

static const char dat_text[] =
    "\n stresses (elem, integ.pnt.,sxx,syy,szz,sxy,sxz,syz) for set EALL and time  "
    "0.1000000E+01\n\n"
    "         3   1 -1.500529E+04 -1.348745E+03  2.870224E+02 -8.510693E+02 -6.991572E+02  "
    "1.279665E+02\n"
    "         3   2  1 2 3 4 5 6\n"
    "\n displacements (vx,vy,vz) for set NALL and time  0.1000000E+01\n\n"
    "         1  0.000000E+00  0.000000E+00  0.000000E+00\n"
    "\n stresses (elem, integ.pnt.,sxx,syy,szz,sxy,sxz,syz) for set ETOP and time  "
    "0.1000000E+01\n\n"
    "         4   1  1 1 1 1 1 1\n"
    "\n stresses (elem, integ.pnt.,sxx,syy,szz,sxy,sxz,syz) for set EALL and time  "
    "0.2000000E+01\n\n"
    "         3   1  9 9 9 9 9 9\n";

static void expect_results_error(int frd, const char *text, int code, const char *needle)
{
	struct engi_ccx_stress st;
	struct engi_error err;
	engi_ccx_stress_init(&st);
	engi_error_init(&err);
	int rc = frd ? engi_ccx_frd_stress_parse("r.frd", text, strlen(text), &st, &err)
		     : engi_ccx_dat_stress_parse("r.dat", text, strlen(text), &st, &err);
	CHECK_INT(rc, code);
	CHECK(strstr(err.msg, needle) != NULL);
	if (!strstr(err.msg, needle))
		fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, needle);
	CHECK(st.n == 0 && st.rec == NULL);
}

static void results_reader_test(void)
{
	struct engi_ccx_stress st;
	struct engi_error err;
	engi_ccx_stress_init(&st);
	engi_error_init(&err);
	CHECK_INT(engi_ccx_frd_stress_parse("r.frd", frd_text, strlen(frd_text), &st, &err), 0);
	CHECK(st.n == 2);
	if (st.n == 2) {
		CHECK(st.rec[0].id == 7 && st.rec[1].id == 12 && st.rec[0].ip == 0);
		CHECK_NEAR(st.rec[0].s[0], -2.23969e4, 1e-9);
		CHECK_NEAR(st.rec[0].s[3], -2.02706e2, 1e-9);
		CHECK_NEAR(st.rec[0].s[5], -5.88913e2, 1e-9);
		for (int k = 0; k < 6; k++) /* SXY SYZ SZX stay in that order */
			CHECK_NEAR(st.rec[1].s[k], k + 1, 0);
	}
	/* short format: five-column node numbers */
	char *t1 = replace(frd_text, " -1        12", " -1   12");
	char *t2 = replace(t1, " -1         7-", " -1    7-");
	char *t3 =
	    replace(t2, "0    1           1\n -4  STRESS", "0    1           0\n -4  STRESS");
	CHECK_INT(engi_ccx_frd_stress_parse("r.frd", t3, strlen(t3), &st, &err), 0);
	CHECK(st.n == 2 && st.rec[0].id == 7 && st.rec[1].id == 12);
	CHECK(st.n == 2 && st.rec[0].s[5] == -5.88913e2 && st.rec[1].s[5] == 6);
	/* the same lines read as long format are malformed */
	CHECK_INT(engi_ccx_frd_stress_parse("r.frd", t2, strlen(t2), &st, &err), ENGI_EPARSE);
	engi_free(t1);
	engi_free(t2);
	engi_free(t3);
	CHECK_INT(engi_ccx_dat_stress_parse("r.dat", dat_text, strlen(dat_text), &st, &err), 0);
	/* both sets of the first time, not the later one */
	CHECK(st.n == 3);
	if (st.n == 3) {
		CHECK(st.rec[0].id == 3 && st.rec[0].ip == 1 && st.rec[2].id == 4);
		CHECK_NEAR(st.rec[0].s[0], -1.500529e4, 1e-9);
		CHECK_NEAR(st.rec[0].s[4], 1.279665e2, 1e-9);  /* yz: the file's last */
		CHECK_NEAR(st.rec[0].s[5], -6.991572e2, 1e-9); /* zx: the file's sxz */
		double want[6] = {1, 2, 3, 4, 6, 5};
		for (int k = 0; k < 6; k++)
			CHECK_NEAR(st.rec[1].s[k], want[k], 0);
	}
	engi_ccx_stress_release(&st);
	CHECK(st.rec == NULL);
	/* errors name the file and the line */
	char *t = replace(frd_text, "-4.81835E+03", "         NaN");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd:15: stress is not a finite number");
	engi_free(t);
	t = replace(frd_text, "-4.81835E+03", "-4.8183xE+03");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd:15: malformed stress line");
	engi_free(t);
	t = replace(frd_text, " -3\n 9999\n", "");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd:16: STRESS block is not closed");
	engi_free(t);
	t = replace(frd_text, " -3\n 9999", " 9999");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd:17: unexpected line in a STRESS block");
	engi_free(t);
	t = replace(frd_text, " -5  SZX         1    4    3    1\n", "");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd:14: STRESS block with 5 components");
	engi_free(t);
	t = replace(frd_text, "0    1           1\n -4  STRESS", "0    1           2\n -4  STRESS");
	expect_results_error(1, t, ENGI_ENOTSUP, "r.frd:8: binary .frd");
	engi_free(t);
	t = replace(frd_text, "STRESS", "STRAIN");
	expect_results_error(1, t, ENGI_EPARSE, "r.frd: no STRESS block");
	engi_free(t);
	t = replace(dat_text, "-1.348745E+03", "NaN");
	expect_results_error(0, t, ENGI_EPARSE, "r.dat:4: stress is not a finite number");
	engi_free(t);
	t = replace(dat_text, "-1.348745E+03", "-inf");
	expect_results_error(0, t, ENGI_EPARSE, "r.dat:4: stress is not a finite number");
	engi_free(t);
	t = replace(dat_text, "  1 2 3 4 5 6", "  1 2 3 4 5");
	expect_results_error(0, t, ENGI_EPARSE, "r.dat:5: malformed stress line");
	engi_free(t);
	expect_results_error(0, "\n displacements (vx,vy,vz) for set NALL\n\n 1 0 0 0\n",
			     ENGI_EPARSE, "r.dat: no stresses block");
	CHECK_INT(engi_ccx_dat_stress("/nonexistent/x.dat", &st, &err), ENGI_EIO);
}

int main(void)
{
	patch_test("C3D4", 2);
	patch_test("C3D10", 2);
	patch_test("C3D8", 2);
	pressure_test("C3D4");
	pressure_test("C3D10");
	pressure_test("C3D8");
	reader_test();
	results_reader_test();
	fuzz_test();
	nomem_test();
	return check_exit();
}
