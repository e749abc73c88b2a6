/*
 * Fuzz targets of the finite-element readers: FUZZ_TARGET_INP feeds bytes
 * to the CalculiX deck reader and solves what reads; FUZZ_TARGET_FRD and
 * FUZZ_TARGET_DAT to the stress readers of ccx result files (.frd STRESS
 * blocks, .dat *EL PRINT S blocks), whose records must then be finite;
 * otherwise the bytes go to the structural JSON reader, and what reads is
 * solved and matched with itself (fuzz_inp, fuzz_frd, fuzz_dat,
 * fuzz_structural; see CMakeLists.txt).
 * A failure is a code with a message; anything else aborts.
 */
#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Larger models parse but are not solved: the target is the reader. */
#define FUZZ_SOLVE_MAX_NODES 2000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect_message(int rc, const struct engi_error *e)
{
	if (rc < 0 && (e->code != rc || !e->msg[0]))
		abort();
	if (rc > 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engi_error e;
	engi_error_init(&e);
#if defined(FUZZ_TARGET_FRD) || defined(FUZZ_TARGET_DAT)
	struct engi_ccx_stress st;
	engi_ccx_stress_init(&st);
#ifdef FUZZ_TARGET_FRD
	int rc = engi_ccx_frd_stress_parse("fuzz.frd", (const char *)data, size, &st, &e);
#else
	int rc = engi_ccx_dat_stress_parse("fuzz.dat", (const char *)data, size, &st, &e);
#endif
	expect_message(rc, &e);
	if (rc == 0 && !st.n)
		abort();
	for (size_t i = 0; i < st.n; i++)
		for (int k = 0; k < 6; k++)
			if (!isfinite(st.rec[i].s[k]) || st.rec[i].id <= 0)
				abort();
	engi_ccx_stress_release(&st);
#elif defined(FUZZ_TARGET_INP)
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	int rc = engi_inp_parse("fuzz.inp", (const char *)data, size, &m, &e);
	expect_message(rc, &e);
	if (rc == 0 && m.nnodes <= FUZZ_SOLVE_MAX_NODES) {
		engi_error_init(&e);
		expect_message(engi_fe_solid_solve(&m, NULL, &r, &e), &e);
	}
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
#else
	struct engi_structural s;
	struct engi_frame_result r;
	struct engi_match mt;
	engi_structural_init(&s);
	engi_frame_result_init(&r);
	engi_match_init(&mt);
	int rc = engi_structural_parse("fuzz.json", (const char *)data, size, &s, &e);
	expect_message(rc, &e);
	if (rc == 0 && s.f.nnodes <= FUZZ_SOLVE_MAX_NODES) {
		engi_error_init(&e);
		expect_message(engi_frame_solve(&s.f, NULL, &r, &e), &e);
		engi_error_init(&e);
		rc = engi_structural_match(&s, &s, NULL, &mt, &e);
		expect_message(rc, &e);
		/* a model always matches itself, unless two nodes share a place */
		if (rc == 0 && mt.matched_elems > mt.ref_elems)
			abort();
	}
	engi_match_release(&mt);
	engi_frame_result_release(&r);
	engi_structural_release(&s);
#endif
	return 0;
}
