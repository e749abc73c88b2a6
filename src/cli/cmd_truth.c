/*
 * engisweep truth MODEL.json - freezes the results of a reference
 * structural model for the "structural" verifier. The model is solved
 * twice: as written (AMD ordering, supernodal factorisation), and with its
 * nodes, elements and loads in reverse order and every member reversed
 * (METIS ordering, simplicial factorisation). The truth is written only
 * when the two agree and equilibrium holds.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRUTH_AGREEMENT_REL   1e-10
#define TRUTH_EQUILIBRIUM_REL 1e-9

static const char truth_help[] =
    "usage: engisweep truth [options] MODEL.json\n"
    "\n"
    "Solves a structural model twice (as written with AMD + supernodal\n"
    "Cholesky; reversed entity, load and member order with METIS + simplicial)\n"
    "and writes its displacements, reactions and member end forces for every\n"
    "load case and combination when both solves agree to 1e-10 and\n"
    "equilibrium holds to 1e-9. Exit 1 when they do not.\n"
    "\n"
    "options:\n"
    "  -o, --out FILE       where to write (default: MODEL with .truth.json)\n"
    "  -h, --help           this text\n";

/* The same model with nodes, elements and loads in reverse order and every
 * member running the other way; member loads become global. */
static int reversed(const struct engi_structural *s, struct engi_structural *r)
{
	const struct engi_frame *f = &s->f;
	struct engi_frame *g = &r->f;
	size_t nn = f->nnodes, ne = f->nelems;
	engi_structural_init(r);
	*r = *s;
	g->xyz = engi_malloc((3 * nn + 1) * sizeof(double));
	g->node_id = engi_malloc((nn + 1) * sizeof(int64_t));
	g->restraint = engi_malloc(nn + 1);
	g->elem = engi_malloc((ne + 1) * sizeof(*g->elem));
	g->elem_id = engi_malloc((ne + 1) * sizeof(int64_t));
	g->nodal = engi_malloc((f->nnodal + 1) * sizeof(*g->nodal));
	g->member = engi_malloc((f->nmember + 1) * sizeof(*g->member));
	r->case_name = NULL;
	r->combo_name = NULL; /* g->combo stays borrowed from s */
	if (!g->xyz || !g->node_id || !g->restraint || !g->elem || !g->elem_id || !g->nodal ||
	    !g->member)
		return ENGI_ENOMEM;
	for (size_t i = 0; i < nn; i++) {
		memcpy(g->xyz + 3 * i, f->xyz + 3 * (nn - 1 - i), 3 * sizeof(double));
		g->node_id[i] = f->node_id[nn - 1 - i];
		g->restraint[i] = f->restraint[nn - 1 - i];
	}
	for (size_t e = 0; e < ne; e++) {
		struct engi_frame_elem el = f->elem[ne - 1 - e];
		el.node[0] = (uint32_t)(nn - 1 - f->elem[ne - 1 - e].node[1]);
		el.node[1] = (uint32_t)(nn - 1 - f->elem[ne - 1 - e].node[0]);
		el.release[0] = f->elem[ne - 1 - e].release[1];
		el.release[1] = f->elem[ne - 1 - e].release[0];
		g->elem[e] = el;
		g->elem_id[e] = f->elem_id[ne - 1 - e];
	}
	for (size_t i = 0; i < f->nnodal; i++) {
		g->nodal[i] = f->nodal[f->nnodal - 1 - i];
		g->nodal[i].node = (uint32_t)(nn - 1 - g->nodal[i].node);
	}
	for (size_t i = 0; i < f->nmember; i++) {
		struct engi_frame_member_load ml = f->member[f->nmember - 1 - i];
		if (ml.local) {
			double R[3][3], L, w[3];
			engi_frame_axes(f, ml.elem, R, &L);
			for (int d = 0; d < 3; d++)
				w[d] = R[0][d] * ml.w[0] + R[1][d] * ml.w[1] + R[2][d] * ml.w[2];
			memcpy(ml.w, w, sizeof(w));
			ml.local = 0;
		}
		ml.elem = (uint32_t)(ne - 1 - ml.elem);
		g->member[i] = ml;
	}
	return 0;
}

/* max |a - b| / max |a| over n values. */
static double disagreement(const double *a, const double *b, size_t n, size_t stride_a,
			   const size_t *perm, int swap12)
{
	double d = 0, m = 0;
	(void)stride_a;
	for (size_t i = 0; i < n; i++) {
		size_t j = perm[i / (swap12 ? 12 : 6)];
		size_t k = i % (swap12 ? 12 : 6);
		double bv = swap12 ? b[12 * j + (k + 6) % 12] : b[6 * j + k];
		d = fmax(d, fabs(a[i] - bv));
		m = fmax(m, fabs(a[i]));
	}
	return m > 0 ? d / m : d;
}

int cmd_truth(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(truth_help, stdout);
			return 0;
		default:
			fputs(truth_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(truth_help, stderr);
		return EXIT_USAGE;
	}
	const char *model = argv[optind];
	char outbuf[4096];
	if (!out) {
		size_t n = strlen(model);
		if (n > 5 && !strcmp(model + n - 5, ".json"))
			n -= 5;
		snprintf(outbuf, sizeof(outbuf), "%.*s.truth.json", (int)n, model);
		out = outbuf;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct engi_structural s, rs;
	struct engi_frame_result r1, r2;
	struct engi_structural_truth t1, t2;
	engi_structural_init(&s);
	engi_structural_init(&rs);
	engi_frame_result_init(&r1);
	engi_frame_result_init(&r2);
	engi_structural_truth_init(&t1);
	engi_structural_truth_init(&t2);
	int exit_code = EXIT_USAGE, rc = engi_structural_read(model, &s, &err);
	struct engi_fe_solve_opts o1 = {ENGI_FE_ORDER_AMD, 0}, o2 = {ENGI_FE_ORDER_METIS, 1};
	if (rc == 0)
		rc = engi_frame_solve(&s.f, &o1, &r1, &err);
	if (rc == 0 && reversed(&s, &rs) < 0)
		rc = engi_raise(&err, ENGI_ENOMEM, "out of memory");
	if (rc == 0)
		rc = engi_frame_solve(&rs.f, &o2, &r2, &err);
	if (rc == 0) {
		/* reversed copy shares the names of s */
		rs.case_name = s.case_name;
		rs.combo_name = s.combo_name;
		rc = engi_structural_truth_from(&s, &r1, &t1, &err);
		if (rc == 0)
			rc = engi_structural_truth_from(&rs, &r2, &t2, &err);
		rs.case_name = NULL;
		rs.combo_name = NULL;
	}
	if (rc < 0) {
		cli_error(&err);
		exit_code = rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
		goto done;
	}
	size_t nn = t1.nnodes, ne = t1.nelems;
	size_t *pn = engi_malloc((nn + 1) * sizeof(size_t)),
	       *pe = engi_malloc((ne + 1) * sizeof(size_t));
	if (!pn || !pe) {
		engi_free(pn);
		engi_free(pe);
		cli_errorf("out of memory");
		exit_code = EXIT_FAILED;
		goto done;
	}
	for (size_t i = 0; i < nn; i++)
		pn[i] = nn - 1 - i;
	for (size_t e = 0; e < ne; e++)
		pe[e] = ne - 1 - e;
	double agree = 0;
	for (size_t k = 0; k < t1.nstates; k++) {
		agree = fmax(agree,
			     disagreement(t1.u + 6 * nn * k, t2.u + 6 * nn * k, 6 * nn, 6, pn, 0));
		agree = fmax(agree, disagreement(t1.reaction + 6 * nn * k, t2.reaction + 6 * nn * k,
						 6 * nn, 6, pn, 0));
		agree = fmax(agree, disagreement(t1.end_force + 12 * ne * k,
						 t2.end_force + 12 * ne * k, 12 * ne, 12, pe, 1));
	}
	engi_free(pn);
	engi_free(pe);
	double equil = fmax(t1.equilibrium_rel, t2.equilibrium_rel);
	t1.agreement_rel = agree;
	printf("truth         %s: %zu states, %zu dof (%zu free)\n", model, t1.nstates, r1.ndof,
	       r1.neq);
	printf("solve 1       %s, %s ordering, %.3f s\n", r1.method, r1.ordering, r1.total_s);
	printf("solve 2       %s, %s ordering, %.3f s (reversed entities, loads, members)\n",
	       r2.method, r2.ordering, r2.total_s);
	printf("agreement     %.3g (needs <= %g)\n", agree, TRUTH_AGREEMENT_REL);
	printf("equilibrium   %.3g (needs <= %g)\n", equil, TRUTH_EQUILIBRIUM_REL);
	if (!(agree <= TRUTH_AGREEMENT_REL) || !(equil <= TRUTH_EQUILIBRIUM_REL)) {
		cli_errorf("'%s': the two solves disagree or equilibrium fails; no truth written",
			   model);
		exit_code = EXIT_FAILED;
		goto done;
	}
	const char *slash = strrchr(model, '/');
	if (engi_structural_truth_write(out, &t1, slash ? slash + 1 : model, &err) < 0) {
		cli_error(&err);
		exit_code = EXIT_FAILED;
		goto done;
	}
	printf("wrote         %s\n", out);
	exit_code = 0;
done:
	engi_structural_truth_release(&t1);
	engi_structural_truth_release(&t2);
	engi_frame_result_release(&r1);
	engi_frame_result_release(&r2);
	rs.f.combo = NULL; /* borrowed from s */
	engi_frame_release(&rs.f);
	engi_structural_release(&s);
	return exit_code;
}
