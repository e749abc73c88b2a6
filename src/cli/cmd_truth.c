/*
 * engisweep truth MODEL.json | DECK.inp - freezes the results of a
 * reference model. A structural model (for the "structural" verifier) is
 * solved twice: as written (AMD ordering, supernodal factorisation), and
 * with its nodes, elements and loads in reverse order and every member
 * reversed (METIS ordering, simplicial factorisation). A CalculiX deck is
 * solved as read (the kernel's default ordering, supernodal), and with its
 * nodes, elements, boundaries and pressures in reverse order (the other of
 * AMD and METIS, simplicial). The truth is written only when the two agree
 * and equilibrium holds.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TRUTH_AGREEMENT_REL   1e-10
#define TRUTH_EQUILIBRIUM_REL 1e-9
/* A deck's truth lists every node's displacement up to this many nodes;
 * above it every k-th node (k = ceil(nodes / cap)) in ascending node
 * number, and the node of max |u|. */
#define TRUTH_DECK_NODES_MAX 200000

static const char truth_help[] =
    "usage: engisweep truth [options] MODEL.json | DECK.inp\n"
    "\n"
    "Solves a structural model twice (as written with AMD + supernodal\n"
    "Cholesky; reversed entity, load and member order with METIS + simplicial)\n"
    "and writes its displacements, reactions and member end forces for every\n"
    "load case and combination when both solves agree to 1e-10 and\n"
    "equilibrium holds to 1e-9. Exit 1 when they do not.\n"
    "\n"
    "A CalculiX deck (.inp) is solved as read (default ordering, supernodal)\n"
    "and with nodes, elements, boundaries and pressures in reverse order (the\n"
    "other of AMD and METIS, simplicial). Both must agree on max |u| and on\n"
    "every nodal displacement to 1e-10 of max |u|, and reactions must balance\n"
    "the loads to 1e-9; then fe-solid-truth/1 is written: max |u| and its node,\n"
    "reaction and load sums per axis, dof counts and the displacement of every\n"
    "node (above 200000 nodes every k-th node by number, k = ceil(nodes /\n"
    "200000), and the node of max |u|).\n"
    "\n"
    "options:\n"
    "  -o, --out FILE       where to write (default: MODEL or DECK with\n"
    "                       .truth.json)\n"
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

/* The same deck with nodes, elements, boundaries and pressures in reverse
 * order; an element keeps its own node order. */
static int solid_reversed(const struct engi_fe_solid *m, struct engi_fe_solid *g)
{
	size_t nn = m->nnodes, ne = m->nelems, nc = m->off[ne];
	engi_fe_solid_init(g);
	g->nnodes = nn;
	g->nelems = ne;
	g->nbc = m->nbc;
	g->npress = m->npress;
	g->xyz = engi_malloc((3 * nn + 1) * sizeof(double));
	g->node_id = engi_malloc((nn + 1) * sizeof(int64_t));
	g->force = engi_malloc((3 * nn + 1) * sizeof(double));
	g->etype = engi_malloc(ne + 1);
	g->off = engi_malloc((ne + 1) * sizeof(size_t));
	g->conn = engi_malloc((nc + 1) * sizeof(uint32_t));
	g->elem_id = engi_malloc((ne + 1) * sizeof(int64_t));
	g->young = engi_malloc((ne + 1) * sizeof(double));
	g->poisson = engi_malloc((ne + 1) * sizeof(double));
	g->bc = engi_malloc((m->nbc + 1) * sizeof(*g->bc));
	g->press = engi_malloc((m->npress + 1) * sizeof(*g->press));
	if (!g->xyz || !g->node_id || !g->force || !g->etype || !g->off || !g->conn ||
	    !g->elem_id || !g->young || !g->poisson || !g->bc || !g->press)
		return ENGI_ENOMEM;
	for (size_t i = 0; i < nn; i++) {
		memcpy(g->xyz + 3 * i, m->xyz + 3 * (nn - 1 - i), 3 * sizeof(double));
		memcpy(g->force + 3 * i, m->force + 3 * (nn - 1 - i), 3 * sizeof(double));
		g->node_id[i] = m->node_id[nn - 1 - i];
	}
	g->off[0] = 0;
	for (size_t e = 0; e < ne; e++) {
		size_t f = ne - 1 - e, k = m->off[f + 1] - m->off[f];
		g->etype[e] = m->etype[f];
		g->elem_id[e] = m->elem_id[f];
		g->young[e] = m->young[f];
		g->poisson[e] = m->poisson[f];
		g->off[e + 1] = g->off[e] + k;
		for (size_t j = 0; j < k; j++)
			g->conn[g->off[e] + j] = (uint32_t)(nn - 1 - m->conn[m->off[f] + j]);
	}
	for (size_t i = 0; i < m->nbc; i++) {
		g->bc[i] = m->bc[m->nbc - 1 - i];
		g->bc[i].node = (uint32_t)(nn - 1 - g->bc[i].node);
	}
	for (size_t i = 0; i < m->npress; i++) {
		g->press[i] = m->press[m->npress - 1 - i];
		g->press[i].elem = (uint32_t)(ne - 1 - g->press[i].elem);
	}
	return 0;
}

/* |reaction sums + load sums| over |load sums| (over the sum of |reaction|
 * when nothing is loaded: prescribed displacements only). */
static double solid_equilibrium(const struct engi_fe_solid_result *r)
{
	double d = 0, l = 0, a = 0;
	for (int k = 0; k < 3; k++) {
		double x = r->reaction_sum[k] + r->load_sum[k];
		d += x * x;
		l += r->load_sum[k] * r->load_sum[k];
	}
	for (size_t i = 0; i < 3 * r->nnodes; i++)
		a += fabs(r->reaction[i]);
	double scale = l > 0 ? sqrt(l) : a;
	return scale > 0 ? sqrt(d) / scale : sqrt(d);
}

static int write_deck_truth(const char *out, const char *deck, const struct engi_fe_solid *m,
			    const struct engi_fe_solid_result *r, double agree, double equil)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	FILE *fp = fopen(tmp, "w");
	if (!fp) {
		cli_errorf("cannot write '%s': %s", tmp, strerror(errno));
		return -1;
	}
	size_t nn = m->nnodes, step = (nn + TRUTH_DECK_NODES_MAX - 1) / TRUTH_DECK_NODES_MAX;
	if (step < 1)
		step = 1;
	fprintf(fp, "{\"format\": \"fe-solid-truth/1\",\n \"deck\": \"");
	for (const char *p = deck; *p; p++)
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if ((unsigned char)*p >= 0x20)
			fputc(*p, fp);
	fprintf(fp,
		"\",\n \"nodes\": %zu, \"elements\": %zu, \"dof\": %zu, \"free_dof\": %zu,\n"
		" \"max_u\": %.17g, \"max_u_node\": %lld,\n"
		" \"reaction_sum\": [%.17g, %.17g, %.17g],\n"
		" \"load_sum\": [%.17g, %.17g, %.17g],\n"
		" \"agreement_rel\": %.3g, \"equilibrium_rel\": %.3g,\n"
		" \"node_step\": %zu,\n \"u\": [",
		nn, m->nelems, r->ndof, r->neq, r->max_u, (long long)r->max_u_node,
		r->reaction_sum[0], r->reaction_sum[1], r->reaction_sum[2], r->load_sum[0],
		r->load_sum[1], r->load_sum[2], agree, equil, step);
	const char *sep = "\n  ";
	for (size_t i = 0; i < nn; i++) {
		if (i % step && m->node_id[i] != r->max_u_node)
			continue;
		const double *u = r->u + 3 * i;
		fprintf(fp, "%s[%lld, %.17g, %.17g, %.17g]", sep, (long long)m->node_id[i], u[0],
			u[1], u[2]);
		sep = ",\n  ";
	}
	fprintf(fp, "]}\n");
	int bad = ferror(fp);
	if (fclose(fp) != 0 || bad || rename(tmp, out) != 0) {
		cli_errorf("cannot write '%s': %s", out, strerror(errno));
		remove(tmp);
		return -1;
	}
	return 0;
}

static int truth_deck(const char *deck, const char *out)
{
	struct engi_error err;
	struct engi_fe_solid m, g;
	struct engi_fe_solid_result r1, r2;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_init(&g);
	engi_fe_solid_result_init(&r1);
	engi_fe_solid_result_init(&r2);
	int exit_code = EXIT_USAGE;
	int rc = engi_inp_read(deck, &m, &err);
	if (rc == 0)
		rc = engi_fe_solid_solve(&m, NULL, &r1, &err);
	if (rc == 0 && solid_reversed(&m, &g) < 0)
		rc = engi_raise(&err, ENGI_ENOMEM, "out of memory");
	/* the other ordering, and the simplicial factorisation */
	struct engi_fe_solve_opts o2 = {ENGI_FE_ORDER_METIS, 1};
	if (rc == 0 && r1.ordering && strcmp(r1.ordering, "amd") != 0)
		o2.order = ENGI_FE_ORDER_AMD;
	if (rc == 0)
		rc = engi_fe_solid_solve(&g, &o2, &r2, &err);
	if (rc < 0) {
		cli_error(&err);
		exit_code = rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
		goto done;
	}
	size_t nn = m.nnodes;
	double d = fabs(r1.max_u - r2.max_u);
	for (size_t i = 0; i < nn; i++)
		for (int k = 0; k < 3; k++)
			d = fmax(
			    d, fabs(r1.u[3 * i + (size_t)k] - r2.u[3 * (nn - 1 - i) + (size_t)k]));
	double agree = r1.max_u > 0 ? d / r1.max_u : d;
	double equil = fmax(solid_equilibrium(&r1), solid_equilibrium(&r2));
	printf("truth         %s: %zu nodes, %zu elements, %zu dof (%zu free)\n", deck, nn,
	       m.nelems, r1.ndof, r1.neq);
	printf("solve 1       %s, %s ordering, %.3f s\n", r1.method, r1.ordering, r1.total_s);
	printf("solve 2       %s, %s ordering, %.3f s (reversed nodes, elements, loads)\n",
	       r2.method, r2.ordering, r2.total_s);
	printf("max |u|       %.17g at node %lld\n", r1.max_u, (long long)r1.max_u_node);
	printf("agreement     %.3g (needs <= %g)\n", agree, TRUTH_AGREEMENT_REL);
	printf("equilibrium   %.3g (needs <= %g)\n", equil, TRUTH_EQUILIBRIUM_REL);
	exit_code = EXIT_FAILED;
	if (!(agree <= TRUTH_AGREEMENT_REL) || !(equil <= TRUTH_EQUILIBRIUM_REL)) {
		cli_errorf("'%s': the two solves disagree or equilibrium fails; no truth written",
			   deck);
		goto done;
	}
	const char *slash = strrchr(deck, '/');
	if (write_deck_truth(out, slash ? slash + 1 : deck, &m, &r1, agree, equil) < 0)
		goto done;
	printf("wrote         %s\n", out);
	exit_code = 0;
done:
	engi_fe_solid_result_release(&r1);
	engi_fe_solid_result_release(&r2);
	engi_fe_solid_release(&g);
	engi_fe_solid_release(&m);
	return exit_code;
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
	size_t mlen = strlen(model);
	int deck = mlen > 4 && !strcasecmp(model + mlen - 4, ".inp");
	if (!out) {
		size_t n = mlen;
		if (n > 5 && !strcmp(model + n - 5, ".json"))
			n -= 5;
		else if (deck)
			n -= 4;
		snprintf(outbuf, sizeof(outbuf), "%.*s.truth.json", (int)n, model);
		out = outbuf;
	}
	if (deck)
		return truth_deck(model, out);
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
