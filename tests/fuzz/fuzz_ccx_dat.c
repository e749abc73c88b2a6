/*
 * Fuzz target for the ccx_dat verifier's own reading of an agent's CalculiX
 * .dat file (verifiers/kind_ccx_dat.c: block headers, nodal rows, Fortran
 * numbers). The input is the delivered file; the criteria are fixed: every
 * quantity, component and reduction (40 criteria), on set S for x and
 * magnitude and on set TIP for y and z, each a range [-1, 1]. After the
 * verdict:
 *   - verify returns 0 (a broken file gives assertions, not errors);
 *   - there is one delivered: assertion and one per criterion, each with a
 *     state and a detail;
 *   - a criterion that measured (pass or fail) has a finite value, which is
 *     its metric, and passes when the value is in range; one that did not
 *     has neither;
 *   - per quantity, set and component, where min, max and maxabs measured,
 *     min <= max, maxabs is the larger of |min| and |max|, and a
 *     magnitude is never negative.
 * Anything else aborts. FUZZ_VERBOSE prints each criterion's detail.
 */
#include "fuzz_file.h"

#include "engi/verify.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const quantities[] = {"displacements", "forces"};
static const char *const components[] = {"x", "y", "z", "magnitude"};
static const char *const reduces[] = {"mean", "min", "max", "maxabs", "sum"};
enum { NQ = 2, NC = 4, NR = 5 };

static const struct engi_verifier_kind *kind;
static void *criteria;

static void criteria_init(void)
{
	json_t *arr = json_array();
	for (int q = 0; q < NQ; q++)
		for (int c = 0; c < NC; c++)
			for (int r = 0; r < NR; r++) {
				char name[64];
				snprintf(name, sizeof(name), "%s-%s-%s", quantities[q],
					 components[c], reduces[r]);
				json_array_append_new(
				    arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f}", "name",
						   name, "quantity", quantities[q], "set",
						   c == 1 || c == 2 ? "TIP" : "S", "component",
						   components[c], "reduce", reduces[r], "min", -1.0,
						   "max", 1.0));
			}
	json_t *ver =
	    json_pack("{s:s, s:s, s:o}", "kind", "ccx_dat", "file", "out.dat", "criteria", arr);
	struct engi_error e;
	engi_error_init(&e);
	kind = engi_verifier_lookup("ccx_dat", &e);
	if (!ver || !kind || kind->parse(ver, "fuzz.json", NULL, "/verifier", &criteria, &e) != 0) {
		fprintf(stderr, "fuzz_ccx_dat: %s\n", e.msg);
		abort();
	}
	json_decref(ver);
}

static const struct engi_assertion *find(const struct engi_verdict *v, const char *name)
{
	for (size_t i = 0; i < v->na; i++)
		if (!strcmp(v->a[i].name, name))
			return &v->a[i];
	abort();
}

/* The measured value of a criterion, NaN when it measured nothing. */
static double measured(const struct engi_verdict *v, int q, int c, int r)
{
	char name[64];
	snprintf(name, sizeof(name), "%s-%s-%s", quantities[q], components[c], reduces[r]);
	const struct engi_assertion *a = find(v, name);
	fuzz_note(name, a->state == ENGI_UNAVAILABLE ? -1 : 0, a->detail);
	if (a->state != ENGI_PASS && a->state != ENGI_FAIL && a->state != ENGI_UNAVAILABLE)
		abort();
	if (!a->detail[0] || a->required != 1)
		abort();
	double m;
	int has = engi_verdict_get_metric(v, name, &m) == 0;
	if (has != !isnan(a->value) || (a->state == ENGI_UNAVAILABLE && has))
		abort();
	if (has && (!isfinite(m) || m != a->value))
		abort();
	if (has && (a->state == ENGI_PASS) != (m >= -1.0 && m <= 1.0))
		abort();
	return has ? m : NAN;
}

static void check_verdict(const struct engi_verdict *v)
{
	if (v->na != 1 + NQ * NC * NR)
		abort();
	const struct engi_assertion *d = find(v, "delivered:out.dat");
	if (d->state != ENGI_PASS)
		abort();
	for (int q = 0; q < NQ; q++)
		for (int c = 0; c < NC; c++) {
			double x[NR];
			for (int r = 0; r < NR; r++)
				x[r] = measured(v, q, c, r);
			double lo = x[1], hi = x[2], maxabs = x[3];
			if (isnan(lo) || isnan(hi) || isnan(maxabs))
				continue;
			if (!(lo <= hi) || maxabs != fmax(fabs(lo), fabs(hi)))
				abort();
			if (c == 3 && !(lo >= 0))
				abort();
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!kind)
		criteria_init();
	char path[128];
	fuzz_write_file("out.dat", data, size, path, sizeof(path));
	struct engi_verify_ctx ctx = {.artifact_dir = fuzz_dir(), .task_dir = fuzz_dir()};
	struct engi_verdict v;
	engi_verdict_init(&v);
	struct engi_error e;
	engi_error_init(&e);
	if (engi_verify_file(kind, criteria, "out.dat", &ctx, &v, &e) != 0) {
		fprintf(stderr, "fuzz_ccx_dat: %s\n", e.msg);
		abort();
	}
	check_verdict(&v);
	engi_verdict_release(&v);
	return 0;
}
