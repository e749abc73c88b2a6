/*
 * Verifier kind "ccx_dat". Without arguments: the checked-in CalculiX
 * result (data/beam.dat) and synthetic files. With a folder argument: the
 * beam.dat a fresh ccx run wrote there, which must match the checked-in one.
 *
 * The deck (data/beam.inp) is a 1 x 1 x 4 cantilever of four C3D8I bricks,
 * E = 210000, fixed at z = 0, loaded in -y at the tip with 5 N in step 1 and
 * 10 N in step 2. Beam theory for step 2: 10 * 4^3 / (3 E / 12) = 0.0121905.
 */
#include "check.h"

#include "engi/verify.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static const struct engi_verifier_kind *kind;
static char tmpdir[64];

static int parse(const char *criteria, void **crit, struct engi_error *e)
{
	char text[4096];
	snprintf(text, sizeof(text), "{\"kind\": \"ccx_dat\", \"file\": \"beam.dat\", %s}",
		 criteria);
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (!j) {
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, text);
		CHECK(0);
		return -1;
	}
	engi_error_init(e);
	*crit = NULL;
	int rc = kind->parse(j, "t.json", NULL, "/verifier", crit, e);
	json_decref(j);
	return rc;
}

static void parse_error(int line, const char *criteria, const char *msg)
{
	void *crit;
	struct engi_error e;
	CHECK_INT(parse(criteria, &crit, &e), ENGI_EPARSE);
	CHECK(crit == NULL);
	char want[600];
	snprintf(want, sizeof(want), "t.json: %s", msg);
	if (strcmp(e.msg, want))
		fprintf(stderr, "line %d:\n", line);
	CHECK_STR(e.msg, want);
}

#define PARSE_ERROR(c, m) parse_error(__LINE__, c, m)
#define ITEM		  "\"name\": \"d\", \"quantity\": \"displacements\", \"set\": \"TIP\", "

static void test_parse_errors(void)
{
	PARSE_ERROR("\"weld_tol\": 0, \"criteria\": []",
		    "/verifier/weld_tol: unknown field (valid: kind, file, criteria, objective, "
		    "reward)");
	PARSE_ERROR("\"criteria\": [{\"name\": \"d\", \"quantity\": \"stresses\"}]",
		    "/verifier/criteria/0/quantity: unknown quantity 'stresses' (valid: "
		    "displacements, forces)");
	PARSE_ERROR("\"criteria\": [{\"name\": \"d\", \"set\": \"TIP\"}]",
		    "/verifier/criteria/0/quantity: missing required field");
	PARSE_ERROR("\"criteria\": [{\"name\": \"d\", \"quantity\": \"forces\", \"value\": 1,"
		    " \"component\": \"x\", \"reduce\": \"sum\"}]",
		    "/verifier/criteria/0/set: missing required field");
	PARSE_ERROR("\"criteria\": [{\"name\": \"d\", \"quantity\": \"forces\", \"value\": 1,"
		    " \"set\": \"A B\", \"component\": \"x\", \"reduce\": \"sum\"}]",
		    "/verifier/criteria/0/set: 'A B' is not a set name (no spaces or control "
		    "characters)");
	PARSE_ERROR("\"criteria\": [{" ITEM
		    "\"value\": 1, \"component\": \"w\", \"reduce\": \"sum\"}]",
		    "/verifier/criteria/0/component: unknown component 'w' (valid: x, y, z, "
		    "magnitude)");
	PARSE_ERROR("\"criteria\": [{" ITEM "\"value\": 1, \"component\": \"x\"}]",
		    "/verifier/criteria/0/reduce: missing required field");
	PARSE_ERROR("\"criteria\": [{" ITEM
		    "\"value\": 1, \"component\": \"x\", \"reduce\": \"avg\"}]",
		    "/verifier/criteria/0/reduce: unknown reduction 'avg' (valid: mean, min, max, "
		    "maxabs, sum)");
	PARSE_ERROR("\"criteria\": [{" ITEM "\"component\": \"x\", \"reduce\": \"sum\"}]",
		    "/verifier/criteria/0: quantity 'displacements' needs a comparator (value, or "
		    "min and/or max)");
	PARSE_ERROR(
	    "\"criteria\": [{" ITEM "\"equals\": 0, \"component\": \"x\", \"reduce\": \"sum\"}]",
	    "/verifier/criteria/0/equals: quantity 'displacements' is not an integer count; "
	    "use value, or min and/or max");
	PARSE_ERROR("\"criteria\": [{" ITEM
		    "\"value\": 1, \"component\": \"x\", \"reduce\": \"sum\","
		    " \"check\": \"volume\"}]",
		    "/verifier/criteria/0/check: unknown field (valid: name, quantity, set, "
		    "component, reduce, equals, value, tol_rel, tol_abs, min, max, required, "
		    "stage)");
	PARSE_ERROR("\"criteria\": [{" ITEM
		    "\"value\": 1, \"component\": \"x\", \"reduce\": \"sum\"},"
		    " {" ITEM "\"value\": 1, \"component\": \"y\", \"reduce\": \"sum\"}]",
		    "/verifier/criteria/1/name: 'd' is already /verifier/criteria/0");
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

static void run(const char *dir, const char *file, const char *criteria, struct engi_verdict *v)
{
	void *crit;
	struct engi_error e;
	int rc = parse(criteria, &crit, &e);
	CHECK_INT(rc, 0);
	if (rc) {
		fprintf(stderr, "%s\n", e.msg);
		return;
	}
	struct engi_verify_ctx ctx = {.artifact_dir = dir, .task_dir = dir};
	engi_verdict_init(v);
	CHECK_INT(engi_verify_file(kind, crit, file, &ctx, v, &e), 0);
	engi_verifier_free(kind, crit);
}

static const char *beam_criteria =
    "\"criteria\": ["
    "{\"name\": \"tip-y\", \"quantity\": \"displacements\", \"set\": \"TIP\","
    " \"component\": \"y\", \"reduce\": \"mean\", \"value\": -0.0121905},"
    "{\"name\": \"tip-z-min\", \"quantity\": \"displacements\", \"set\": \"tip\","
    " \"component\": \"z\", \"reduce\": \"min\", \"max\": 0},"
    "{\"name\": \"tip-z-max\", \"quantity\": \"displacements\", \"set\": \"TIP\","
    " \"component\": \"z\", \"reduce\": \"max\", \"min\": 0},"
    "{\"name\": \"tip-x-maxabs\", \"quantity\": \"displacements\", \"set\": \"TIP\","
    " \"component\": \"x\", \"reduce\": \"maxabs\", \"max\": 1e-4},"
    "{\"name\": \"tip-mag\", \"quantity\": \"displacements\", \"set\": \"TIP\","
    " \"component\": \"magnitude\", \"reduce\": \"max\", \"value\": 0.0124, \"tol_rel\": 0.05},"
    "{\"name\": \"reaction-y\", \"quantity\": \"forces\", \"set\": \"FIX\","
    " \"component\": \"y\", \"reduce\": \"sum\", \"value\": 10, \"tol_abs\": 1e-6,"
    " \"stage\": \"equilibrium\"},"
    "{\"name\": \"reaction-z\", \"quantity\": \"forces\", \"set\": \"FIX\","
    " \"component\": \"z\", \"reduce\": \"sum\", \"value\": 0, \"tol_abs\": 1e-6},"
    "{\"name\": \"load-set\", \"quantity\": \"displacements\", \"set\": \"LOAD\","
    " \"component\": \"y\", \"reduce\": \"mean\", \"max\": 0, \"required\": false}]";

static void metric(const struct engi_verdict *v, const char *name, double *x)
{
	*x = NAN;
	CHECK_INT(engi_verdict_get_metric(v, name, x), 0);
}

static void test_beam(const char *dir, const char *label)
{
	struct engi_verdict v;
	run(dir, "beam.dat", beam_criteria, &v);
	CHECK_INT(v.na, 9);
	EXPECT(&v, "delivered:beam.dat", ENGI_PASS, NULL);
	EXPECT(&v, "tip-y", ENGI_PASS,
	       "mean y displacements of set TIP: -0.01218982 vs -0.0121905 ± 1% (4 nodes, time 2)");
	EXPECT(&v, "tip-z-min", ENGI_PASS, NULL);
	EXPECT(&v, "tip-z-max", ENGI_PASS, NULL);
	EXPECT(&v, "tip-x-maxabs", ENGI_PASS, NULL);
	EXPECT(&v, "tip-mag", ENGI_PASS, NULL);
	EXPECT(&v, "reaction-y", ENGI_PASS,
	       "sum y forces of set FIX: 10 vs 10 ± 1e-06 (4 nodes, time 2)");
	EXPECT(&v, "reaction-z", ENGI_PASS, NULL);
	EXPECT(&v, "load-set", ENGI_FAIL, "no 'displacements' block for set 'LOAD' in 'beam.dat'");
	CHECK_STR(find(&v, "tip-y")->stage, "response");
	CHECK_STR(find(&v, "reaction-y")->stage, "equilibrium");
	CHECK_NEAR(find(&v, "tip-y")->expected, -0.0121905, 0);

	double x;
	metric(&v, "tip-y", &x);
	CHECK_NEAR(x, -1.218982E-02, 1e-9); /* step 2, not step 1's -6.09e-3 */
	metric(&v, "tip-z-min", &x);
	CHECK_NEAR(x, -2.247061E-03, 1e-9);
	metric(&v, "tip-z-max", &x);
	CHECK_NEAR(x, 2.247061E-03, 1e-9);
	metric(&v, "tip-x-maxabs", &x);
	CHECK_NEAR(x, 1.797423E-05, 1e-11);
	metric(&v, "tip-mag", &x);
	CHECK_NEAR(x,
		   sqrt(1.797423E-05 * 1.797423E-05 + 1.218982E-02 * 1.218982E-02 +
			2.247061E-03 * 2.247061E-03),
		   1e-9);
	metric(&v, "reaction-y", &x);
	CHECK_NEAR(x, 10, 1e-9);
	CHECK(engi_verdict_get_metric(&v, "load-set", &x) == ENGI_ENOTFOUND);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 1);
	printf("%s: tip deflection %.7g (beam theory 0.0121905)\n", label,
	       -find(&v, "tip-y")->value);
	engi_verdict_release(&v);
}

static void write_tmp(const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_synthetic(void)
{
	const char *crit = "\"criteria\": ["
			   "{\"name\": \"u\", \"quantity\": \"displacements\", \"set\": \"S\","
			   " \"component\": \"x\", \"reduce\": \"sum\", \"min\": -1e300},"
			   "{\"name\": \"f\", \"quantity\": \"forces\", \"set\": \"S\","
			   " \"component\": \"z\", \"reduce\": \"mean\", \"value\": 2}]";
	struct engi_verdict v;
	double x;

	/* Fortran's three-digit exponents; "total force" is another quantity. */
	write_tmp("exp.dat", "\n displacements (vx,vy,vz) for set S and time  0.1000000E+01\n\n"
			     "         1  0.1000000-100  0.0 0.0\n"
			     "         2  1.5E+00 0 0\n"
			     "\n forces (fx,fy,fz) for set S and time  0.1000000E+01\n\n"
			     "         1  0 0 2.0\n"
			     "\n total force (fx,fy,fz) for set S and time  0.1000000E+01\n\n"
			     "        1.000000E+01 0 0\n");
	run(tmpdir, "exp.dat", crit, &v);
	metric(&v, "u", &x);
	CHECK_NEAR(x, 1.5 + 1e-101, 0);
	EXPECT(&v, "f", ENGI_PASS, "mean z forces of set S: 2 vs 2 ± 1% (1 node, time 1)");
	engi_verdict_release(&v);

	/* A malformed row: unavailable, naming the line. */
	write_tmp("row.dat", " displacements (vx,vy,vz) for set S and time  1.0\n"
			     "   7  1.0  abc 0\n");
	run(tmpdir, "row.dat", crit, &v);
	EXPECT(&v, "u", ENGI_UNAVAILABLE,
	       "cannot read CalculiX output 'row.dat': line 2: expected a node number and 3 "
	       "finite values");
	EXPECT(&v, "f", ENGI_FAIL, "no 'forces' block for set 'S' in 'row.dat'");
	engi_verdict_release(&v);

	/* The last block of a quantity is empty. */
	write_tmp("empty.dat", " displacements (vx,vy,vz) for set S and time  1.0\n 1 1 1 1\n"
			       " displacements (vx,vy,vz) for set S and time  2.0\n\n"
			       " forces (fx,fy,fz) for set S and time  2.0\n 1 0 0 2\n");
	run(tmpdir, "empty.dat", crit, &v);
	EXPECT(&v, "u", ENGI_FAIL,
	       "the last 'displacements' block for set 'S' in 'empty.dat' (line 3) has no rows");
	EXPECT(&v, "f", ENGI_PASS, NULL);
	engi_verdict_release(&v);

	/* A line over the cap: the file is not read. */
	char *lng = malloc(6000);
	memset(lng, ' ', 5999);
	lng[5999] = '\0';
	write_tmp("long.dat", lng);
	free(lng);
	run(tmpdir, "long.dat", crit, &v);
	EXPECT(&v, "u", ENGI_UNAVAILABLE,
	       "cannot read CalculiX output 'long.dat': line 1 is longer than 4096 characters");
	engi_verdict_release(&v);

	/* Finite values whose sum overflows a double: unavailable, no metric
	 * (the sum was inf, and NaN once the compensation overflowed too). */
	write_tmp("huge.dat", " displacements (vx,vy,vz) for set S and time  1.0\n"
			      " 1 1.0E+308 0 0\n 2 1.5E+308 0 0\n 3 -1.7E+308 0 0\n"
			      " forces (fx,fy,fz) for set S and time  1.0\n 1 0 0 2\n");
	run(tmpdir, "huge.dat", crit, &v);
	EXPECT(&v, "u", ENGI_UNAVAILABLE,
	       "cannot read CalculiX output 'huge.dat': the sum x of set 'S' (line 1) overflows a "
	       "double");
	CHECK(engi_verdict_get_metric(&v, "u", &x) == ENGI_ENOTFOUND);
	EXPECT(&v, "f", ENGI_PASS, NULL);
	engi_verdict_release(&v);

	/* Not delivered. */
	run(tmpdir, "none.dat", crit, &v);
	EXPECT(&v, "delivered:none.dat", ENGI_FAIL, "'none.dat' was not delivered");
	EXPECT(&v, "u", ENGI_UNAVAILABLE,
	       "cannot read CalculiX output 'none.dat': No such file or directory");
	EXPECT(&v, "f", ENGI_UNAVAILABLE, NULL);
	engi_verdict_score(&v, NULL);
	CHECK_INT(v.success, 0);
	engi_verdict_release(&v);
}

/* Random text built from .dat fragments: any verdict, never a crash. */
static void test_garbage(void)
{
	static const char *const bits[] = {
	    " displacements (vx,vy,vz) for set S and time  0.1E+01",
	    " forces (fx,fy,fz)",
	    " for set ",
	    " and time ",
	    "S",
	    "\n",
	    "\n",
	    "  12 ",
	    " 1.0E+00",
	    "-1.0-100",
	    " nan",
	    " inf",
	    "(",
	    "\r\n",
	    "  ",
	    "9999999999999999999999 ",
	    "e",
	    "+",
	    "\t",
	};
	const char *crit = "\"criteria\": ["
			   "{\"name\": \"u\", \"quantity\": \"displacements\", \"set\": \"S\","
			   " \"component\": \"magnitude\", \"reduce\": \"maxabs\", \"max\": 1},"
			   "{\"name\": \"f\", \"quantity\": \"forces\", \"set\": \"S\","
			   " \"component\": \"z\", \"reduce\": \"mean\", \"value\": 2}]";
	unsigned long long x = 2463534242ULL;
	char text[8192];
	for (int round = 0; round < 200; round++) {
		size_t n = 0;
		int pieces = 1 + round % 60;
		for (int k = 0; k < pieces; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			const char *b = bits[x % (sizeof(bits) / sizeof(bits[0]))];
			size_t len = strlen(b);
			if (n + len + 1 >= sizeof(text))
				break;
			memcpy(text + n, b, len);
			n += len;
		}
		text[n] = '\0';
		write_tmp("junk.dat", text);
		struct engi_verdict v;
		run(tmpdir, "junk.dat", crit, &v);
		CHECK_INT(v.na, 3);
		engi_verdict_release(&v);
	}
}

/* The fresh run must reproduce the checked-in result. */
static void compare_with_sample(const char *dir)
{
	struct engi_verdict fresh, sample;
	run(dir, "beam.dat", beam_criteria, &fresh);
	run(ENGI_VERIFIER_DATA, "beam.dat", beam_criteria, &sample);
	CHECK_INT(fresh.nm, sample.nm);
	for (size_t i = 0; i < sample.nm && i < fresh.nm; i++) {
		CHECK_STR(fresh.m[i].name, sample.m[i].name);
		CHECK_NEAR(fresh.m[i].value, sample.m[i].value,
			   1e-5 * fabs(sample.m[i].value) + 1e-9);
	}
	engi_verdict_release(&fresh);
	engi_verdict_release(&sample);
}

int main(int argc, char **argv)
{
	kind = engi_verifier_lookup("ccx_dat", NULL);
	if (!kind)
		return 1;
	if (argc > 1) {
		test_beam(argv[1], "ccx run");
		compare_with_sample(argv[1]);
		return check_exit();
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/engi-kind-ccx-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	test_parse_errors();
	test_beam(ENGI_VERIFIER_DATA, "checked-in sample");
	test_synthetic();
	test_garbage();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_exit();
}
