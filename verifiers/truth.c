/*
 * Ground truth by two independent solves (engi/truth.h): the reversed
 * copies of a structural model and of a CalculiX deck, the agreement of the
 * two solves, and the fe-solid-truth/1 file of a deck. The structural
 * truth's own file is structural_truth.c's.
 */
#include "engi/truth.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int engi_truth_accepted(const struct engi_truth_check *c)
{
	return c->agreement_rel <= ENGI_TRUTH_AGREEMENT_REL &&
	       c->equilibrium_rel <= ENGI_TRUTH_EQUILIBRIUM_REL;
}

/* The same model with nodes, elements and loads in reverse order and every
 * member running the other way; member loads become global. Only r->f's
 * arrays but combo are r's own; the names are not copied. */
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

/* max |a - b| / max |a| over n values, b's entity j = perm[i / w] against
 * a's i / w, w = 6 per node, or 12 per member with b's two ends swapped. */
static double disagreement(const double *a, const double *b, size_t n, const size_t *perm,
			   int swap12)
{
	double d = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = perm[i / (swap12 ? 12 : 6)];
		size_t k = i % (swap12 ? 12 : 6);
		double bv = swap12 ? b[12 * j + (k + 6) % 12] : b[6 * j + k];
		d = fmax(d, fabs(a[i] - bv));
		m = fmax(m, fabs(a[i]));
	}
	return m > 0 ? d / m : d;
}

/* Agreement of t1 (as written) and t2 (reversed), state by state. */
static int structural_agreement(const struct engi_structural_truth *t1,
				const struct engi_structural_truth *t2, double *agree,
				struct engi_error *err)
{
	size_t nn = t1->nnodes, ne = t1->nelems;
	size_t *pn = engi_malloc((nn + 1) * sizeof(size_t)),
	       *pe = engi_malloc((ne + 1) * sizeof(size_t));
	if (!pn || !pe) {
		engi_free(pn);
		engi_free(pe);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nn; i++)
		pn[i] = nn - 1 - i;
	for (size_t e = 0; e < ne; e++)
		pe[e] = ne - 1 - e;
	double a = 0;
	for (size_t k = 0; k < t1->nstates; k++) {
		a = fmax(a, disagreement(t1->u + 6 * nn * k, t2->u + 6 * nn * k, 6 * nn, pn, 0));
		a = fmax(a, disagreement(t1->reaction + 6 * nn * k, t2->reaction + 6 * nn * k,
					 6 * nn, pn, 0));
		a = fmax(a, disagreement(t1->end_force + 12 * ne * k, t2->end_force + 12 * ne * k,
					 12 * ne, pe, 1));
	}
	engi_free(pn);
	engi_free(pe);
	*agree = a;
	return 0;
}

static void solve_info(struct engi_truth_solve *s, const char *method, const char *ordering,
		       double seconds)
{
	s->method = method;
	s->ordering = ordering;
	s->seconds = seconds;
}

int engi_structural_truth_build(const struct engi_structural *s, struct engi_structural_truth *t,
				struct engi_truth_check *c, struct engi_error *err)
{
	struct engi_structural rs;
	struct engi_frame_result r1, r2;
	struct engi_structural_truth t2;
	struct engi_fe_solve_opts o1 = {ENGI_FE_ORDER_AMD, 0}, o2 = {ENGI_FE_ORDER_METIS, 1};
	memset(c, 0, sizeof(*c));
	engi_structural_init(&rs);
	engi_frame_result_init(&r1);
	engi_frame_result_init(&r2);
	engi_structural_truth_init(&t2);
	int rc = engi_frame_solve(&s->f, &o1, &r1, err);
	if (rc == 0 && reversed(s, &rs) < 0)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	if (rc == 0)
		rc = engi_frame_solve(&rs.f, &o2, &r2, err);
	if (rc == 0) {
		/* the reversed copy shares the names of s */
		rs.case_name = s->case_name;
		rs.combo_name = s->combo_name;
		rc = engi_structural_truth_from(s, &r1, t, err);
		if (rc == 0)
			rc = engi_structural_truth_from(&rs, &r2, &t2, err);
		rs.case_name = NULL;
		rs.combo_name = NULL;
	}
	if (rc == 0)
		rc = structural_agreement(t, &t2, &c->agreement_rel, err);
	if (rc == 0) {
		t->agreement_rel = c->agreement_rel;
		c->equilibrium_rel = fmax(t->equilibrium_rel, t2.equilibrium_rel);
		c->ndof = r1.ndof;
		c->neq = r1.neq;
		solve_info(&c->solve[0], r1.method, r1.ordering, r1.total_s);
		solve_info(&c->solve[1], r2.method, r2.ordering, r2.total_s);
	}
	engi_structural_truth_release(&t2);
	engi_frame_result_release(&r1);
	engi_frame_result_release(&r2);
	rs.f.combo = NULL; /* borrowed from s */
	engi_frame_release(&rs.f);
	if (rc < 0)
		engi_structural_truth_release(t);
	return rc;
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

int engi_fe_solid_truth_build(const struct engi_fe_solid *m, struct engi_fe_solid_result *r,
			      struct engi_truth_check *c, struct engi_error *err)
{
	struct engi_fe_solid g;
	struct engi_fe_solid_result r2;
	memset(c, 0, sizeof(*c));
	engi_fe_solid_init(&g);
	engi_fe_solid_result_init(&r2);
	int rc = engi_fe_solid_solve(m, NULL, r, err);
	if (rc == 0 && solid_reversed(m, &g) < 0)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	/* the other ordering, and the simplicial factorisation */
	struct engi_fe_solve_opts o2 = {ENGI_FE_ORDER_METIS, 1};
	if (rc == 0 && r->ordering && strcmp(r->ordering, "amd") != 0)
		o2.order = ENGI_FE_ORDER_AMD;
	if (rc == 0)
		rc = engi_fe_solid_solve(&g, &o2, &r2, err);
	if (rc == 0) {
		size_t nn = m->nnodes;
		double d = fabs(r->max_u - r2.max_u);
		for (size_t i = 0; i < nn; i++)
			for (size_t k = 0; k < 3; k++)
				d = fmax(d, fabs(r->u[3 * i + k] - r2.u[3 * (nn - 1 - i) + k]));
		c->agreement_rel = r->max_u > 0 ? d / r->max_u : d;
		c->equilibrium_rel = fmax(solid_equilibrium(r), solid_equilibrium(&r2));
		c->ndof = r->ndof;
		c->neq = r->neq;
		solve_info(&c->solve[0], r->method, r->ordering, r->total_s);
		solve_info(&c->solve[1], r2.method, r2.ordering, r2.total_s);
	}
	engi_fe_solid_result_release(&r2);
	engi_fe_solid_release(&g);
	return rc;
}

int engi_fe_solid_truth_write(const char *path, const char *deck_name,
			      const struct engi_fe_solid *m, const struct engi_fe_solid_result *r,
			      const struct engi_truth_check *c, struct engi_error *err)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *fp = fopen(tmp, "w");
	if (!fp)
		RAISE(err, ENGI_EIO, "cannot write '%s': %s", tmp, strerror(errno));
	size_t nn = m->nnodes,
	       step = (nn + ENGI_TRUTH_DECK_NODES_MAX - 1) / ENGI_TRUTH_DECK_NODES_MAX;
	if (step < 1)
		step = 1;
	fprintf(fp, "{\"format\": \"fe-solid-truth/1\",\n \"deck\": \"");
	for (const char *p = deck_name; *p; p++)
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
		r->load_sum[1], r->load_sum[2], c->agreement_rel, c->equilibrium_rel, step);
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
	if (fclose(fp) != 0 || bad || rename(tmp, path) != 0) {
		int rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", path, strerror(errno));
		remove(tmp);
		return rc;
	}
	return 0;
}
