/*
 * Strict matching of a delivered structural model against the reference.
 *
 * Nodes pair one-to-one with the nearest unpaired candidate within the
 * distance tolerance; elements pair when their type matches and their ends
 * map onto a candidate element's ends (either way round: a reversed member
 * is the same member, its releases swapped). Loads are compared as vectors
 * in global axes per node (nodal) and per element (member loads), case by
 * case; combinations by the load vectors they produce.
 */
#include "engi/structural.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void engi_match_init(struct engi_match *m)
{
	memset(m, 0, sizeof(*m));
}

void engi_match_release(struct engi_match *m)
{
	engi_free(m->node_map);
	engi_free(m->elem_map);
	engi_free(m->elem_flip);
	engi_free(m->case_map);
	engi_free(m->combo_map);
	engi_match_init(m);
}

int engi_match_perfect(const struct engi_match *m)
{
	return m->matched_nodes == m->ref_nodes && m->matched_nodes == m->cand_nodes &&
	       m->matched_elems == m->ref_elems && m->matched_elems == m->cand_elems &&
	       m->matched_loads == m->ref_loads && m->matched_loads == m->cand_loads &&
	       !m->restraint_mismatch && !m->property_mismatch && !m->combo_mismatch;
}

__attribute__((format(printf, 2, 3))) static void problem(struct engi_match *m, const char *fmt,
							  ...)
{
	if (m->first_problem[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->first_problem, sizeof(m->first_problem), fmt, ap);
	va_end(ap);
}

static int close_rel(double a, double b, double rel)
{
	return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

struct xsort {
	double x;
	size_t i;
};

static int cmp_x(const void *a, const void *b)
{
	double x = ((const struct xsort *)a)->x, y = ((const struct xsort *)b)->x;
	return (x > y) - (x < y);
}

/* Load vectors of one case or combination (weights w over cases):
 * nodal[6 * nnodes], member[3 * nelems] in global axes. */
static void load_vectors(const struct engi_frame *f, const double *w, double *nodal, double *member)
{
	memset(nodal, 0, 6 * f->nnodes * sizeof(double));
	memset(member, 0, 3 * f->nelems * sizeof(double));
	for (size_t i = 0; i < f->nnodal; i++) {
		double k = w[f->nodal[i].lcase];
		for (int d = 0; d < 6; d++)
			nodal[6 * (size_t)f->nodal[i].node + (size_t)d] += k * f->nodal[i].f[d];
	}
	for (size_t i = 0; i < f->nmember; i++) {
		const struct engi_frame_member_load *ml = &f->member[i];
		double k = w[ml->lcase], g[3];
		if (ml->local) {
			double R[3][3], L;
			engi_frame_axes(f, ml->elem, R, &L);
			for (int d = 0; d < 3; d++)
				g[d] = R[0][d] * ml->w[0] + R[1][d] * ml->w[1] + R[2][d] * ml->w[2];
		} else {
			memcpy(g, ml->w, sizeof(g));
		}
		for (int d = 0; d < 3; d++)
			member[3 * (size_t)ml->elem + (size_t)d] += k * g[d];
	}
}

static double norm(const double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * v[i];
	return sqrt(s);
}

static int vec_close(const double *a, const double *b, int n, double rel)
{
	double d[6];
	for (int i = 0; i < n; i++)
		d[i] = a[i] - b[i];
	return norm(d, n) <= rel * fmax(norm(a, n), norm(b, n));
}

/* Compares the load vectors of a reference state and a candidate state;
 * counts entries (nonzero vectors) and matches. */
static void compare_loads(const struct engi_structural *ref, const struct engi_structural *cand,
			  const struct engi_match *m, const double *rn, const double *rm,
			  const double *cn, const double *cm, double rel, size_t *nref,
			  size_t *ncand, size_t *nmatch, struct engi_match *mp, const char *what)
{
	const struct engi_frame *rf = &ref->f, *cf = &cand->f;
	for (size_t i = 0; i < cf->nnodes; i++)
		*ncand += norm(cn + 6 * i, 6) > 0;
	for (size_t e = 0; e < cf->nelems; e++)
		*ncand += norm(cm + 3 * e, 3) > 0;
	for (size_t i = 0; i < rf->nnodes; i++) {
		if (!(norm(rn + 6 * i, 6) > 0))
			continue;
		(*nref)++;
		long c = m->node_map[i];
		if (c >= 0 && vec_close(rn + 6 * i, cn + 6 * (size_t)c, 6, rel))
			(*nmatch)++;
		else
			problem(mp, "%s: the load at node %lld differs", what,
				(long long)rf->node_id[i]);
	}
	for (size_t e = 0; e < rf->nelems; e++) {
		if (!(norm(rm + 3 * e, 3) > 0))
			continue;
		(*nref)++;
		long c = m->elem_map[e];
		if (c >= 0 && vec_close(rm + 3 * e, cm + 3 * (size_t)c, 3, rel))
			(*nmatch)++;
		else
			problem(mp, "%s: the member load on element %lld differs", what,
				(long long)rf->elem_id[e]);
	}
}

int engi_structural_match(const struct engi_structural *ref, const struct engi_structural *cand,
			  const struct engi_match_tol *tol, struct engi_match *m,
			  struct engi_error *err)
{
	const struct engi_frame *rf = &ref->f, *cf = &cand->f;
	struct engi_match_tol def = {ENGI_MATCH_NODE_DIST, ENGI_MATCH_PROP_REL};
	if (!tol)
		tol = &def;
	engi_match_release(m);
	m->ref_nodes = rf->nnodes;
	m->cand_nodes = cf->nnodes;
	m->ref_elems = rf->nelems;
	m->cand_elems = cf->nelems;
	m->node_map = engi_malloc((rf->nnodes + 1) * sizeof(long));
	m->elem_map = engi_malloc((rf->nelems + 1) * sizeof(long));
	m->elem_flip = engi_calloc(rf->nelems + 1, sizeof(int));
	m->ref_cases = rf->ncases;
	m->ref_combos = rf->ncombos;
	m->cand_cases = cf->ncases;
	m->case_map = engi_malloc((rf->ncases + 1) * sizeof(long));
	m->combo_map = engi_malloc((rf->ncombos + 1) * sizeof(long));
	struct xsort *xs = engi_malloc((cf->nnodes + 1) * sizeof(*xs));
	long *cand_used = engi_malloc((cf->nnodes + cf->nelems + 1) * sizeof(long));
	size_t *ce_off = engi_calloc(cf->nnodes + 1, sizeof(size_t));
	size_t *ce = engi_malloc((2 * cf->nelems + 1) * sizeof(size_t));
	size_t nvec = 6 * (rf->nnodes + cf->nnodes) + 3 * (rf->nelems + cf->nelems);
	double *vecs = engi_malloc((nvec + 1) * sizeof(double));
	double *wr = engi_calloc(rf->ncases + 1, sizeof(double));
	double *wc = engi_calloc(cf->ncases + 1, sizeof(double));
	int rc = 0;
	if (!m->node_map || !m->elem_map || !m->elem_flip || !m->case_map || !m->combo_map || !xs ||
	    !cand_used || !ce_off || !ce || !vecs || !wr || !wc) {
		rc = engi_raise(err, ENGI_ENOMEM, "cannot match models: out of memory");
		goto out;
	}
	/* nodes: nearest unpaired candidate within the distance */
	for (size_t i = 0; i < cf->nnodes; i++) {
		xs[i].x = cf->xyz[3 * i];
		xs[i].i = i;
		cand_used[i] = -1;
	}
	qsort(xs, cf->nnodes, sizeof(*xs), cmp_x);
	double d = tol->node_dist;
	for (size_t i = 0; i < rf->nnodes; i++) {
		const double *p = rf->xyz + 3 * i;
		size_t lo = 0, hi = cf->nnodes;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (xs[mid].x < p[0] - d)
				lo = mid + 1;
			else
				hi = mid;
		}
		long best = -1;
		double bd = INFINITY;
		for (size_t k = lo; k < cf->nnodes && xs[k].x <= p[0] + d; k++) {
			const double *q = cf->xyz + 3 * xs[k].i;
			double dd =
			    sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
				 (p[2] - q[2]) * (p[2] - q[2]));
			if (dd <= d && dd < bd && cand_used[xs[k].i] < 0) {
				bd = dd;
				best = (long)xs[k].i;
			}
		}
		m->node_map[i] = best;
		if (best >= 0) {
			cand_used[best] = (long)i;
			m->matched_nodes++;
		} else {
			problem(m, "node %lld has no counterpart within %g",
				(long long)rf->node_id[i], d);
		}
	}
	/* restraints of paired nodes (a 2D model's out-of-plane dofs aside) */
	uint8_t plane = rf->dim == 2 ? 0x23 : 0x3f;
	for (size_t i = 0; i < rf->nnodes; i++) {
		long c = m->node_map[i];
		if (c < 0)
			continue;
		uint8_t a = rf->restraint[i] & plane, b = cf->restraint[c] & plane;
		if (cf->dim != rf->dim || a != b) {
			m->restraint_mismatch++;
			problem(m, "node %lld: restraints differ", (long long)rf->node_id[i]);
		}
	}
	/* elements: candidate elements by node */
	for (size_t e = 0; e < cf->nelems; e++) {
		ce_off[cf->elem[e].node[0] + 1]++;
		ce_off[cf->elem[e].node[1] + 1]++;
	}
	for (size_t i = 0; i < cf->nnodes; i++)
		ce_off[i + 1] += ce_off[i];
	{
		size_t *cur = engi_malloc((cf->nnodes + 1) * sizeof(size_t));
		if (!cur) {
			rc = engi_raise(err, ENGI_ENOMEM, "cannot match models: out of memory");
			goto out;
		}
		memcpy(cur, ce_off, (cf->nnodes + 1) * sizeof(size_t));
		for (size_t e = 0; e < cf->nelems; e++) {
			ce[cur[cf->elem[e].node[0]]++] = e;
			ce[cur[cf->elem[e].node[1]]++] = e;
		}
		engi_free(cur);
	}
	long *eused = cand_used + cf->nnodes;
	for (size_t e = 0; e < cf->nelems; e++)
		eused[e] = -1;
	for (size_t e = 0; e < rf->nelems; e++) {
		const struct engi_frame_elem *r = &rf->elem[e];
		long a = m->node_map[r->node[0]], b = m->node_map[r->node[1]];
		m->elem_map[e] = -1;
		if (a < 0 || b < 0) {
			problem(m, "element %lld: an end node has no counterpart",
				(long long)rf->elem_id[e]);
			continue;
		}
		for (size_t t = ce_off[a]; t < ce_off[a + 1]; t++) {
			size_t c = ce[t];
			const struct engi_frame_elem *q = &cf->elem[c];
			int same = q->node[0] == (uint32_t)a && q->node[1] == (uint32_t)b;
			int flip = q->node[0] == (uint32_t)b && q->node[1] == (uint32_t)a;
			if ((!same && !flip) || eused[c] >= 0 || q->type != r->type)
				continue;
			m->elem_map[e] = (long)c;
			m->elem_flip[e] = flip;
			eused[c] = (long)e;
			m->matched_elems++;
			/* properties */
			int ok = close_rel(r->young, q->young, tol->prop_rel) &&
				 close_rel(r->area, q->area, tol->prop_rel);
			if (r->type == ENGI_FRAME_BEAM) {
				ok &= close_rel(r->iz, q->iz, tol->prop_rel);
				if (rf->dim == 3)
					ok &= close_rel(r->iy, q->iy, tol->prop_rel) &&
					      close_rel(r->torsion, q->torsion, tol->prop_rel) &&
					      close_rel(r->shear, q->shear, tol->prop_rel);
				/* a reversed member's first end is the reference's second */
				ok &= r->release[0] == q->release[flip] &&
				      r->release[1] == q->release[!flip];
			}
			if (!ok) {
				m->property_mismatch++;
				problem(m, "element %lld: properties or releases differ",
					(long long)rf->elem_id[e]);
			}
			break;
		}
		if (m->elem_map[e] < 0)
			problem(m, "element %lld has no counterpart of the same type",
				(long long)rf->elem_id[e]);
	}
	/* load cases by name, then combinations by name or by their vectors */
	double *rn = vecs, *rm = rn + 6 * rf->nnodes, *cn = rm + 3 * rf->nelems,
	       *cm = cn + 6 * cf->nnodes;
	for (size_t c = 0; c < rf->ncases; c++) {
		m->case_map[c] = -1;
		for (size_t k = 0; k < cf->ncases; k++)
			if (!strcmp(ref->case_name[c], cand->case_name[k]))
				m->case_map[c] = (long)k;
		if (m->case_map[c] < 0 && rf->ncases == cf->ncases)
			m->case_map[c] = (long)c; /* same count: by position */
		memset(wr, 0, rf->ncases * sizeof(double));
		memset(wc, 0, cf->ncases * sizeof(double));
		wr[c] = 1;
		if (m->case_map[c] >= 0)
			wc[m->case_map[c]] = 1;
		load_vectors(rf, wr, rn, rm);
		load_vectors(cf, wc, cn, cm);
		compare_loads(ref, cand, m, rn, rm, cn, cm, tol->prop_rel, &m->ref_loads,
			      &m->cand_loads, &m->matched_loads, m, ref->case_name[c]);
	}
	for (size_t k = 0; k < cf->ncases; k++) {
		int mapped = 0;
		for (size_t c = 0; c < rf->ncases; c++)
			mapped |= m->case_map[c] == (long)k;
		if (!mapped) { /* its loads count against precision */
			memset(wc, 0, cf->ncases * sizeof(double));
			wc[k] = 1;
			load_vectors(cf, wc, cn, cm);
			for (size_t i = 0; i < cf->nnodes; i++)
				m->cand_loads += norm(cn + 6 * i, 6) > 0;
			for (size_t e = 0; e < cf->nelems; e++)
				m->cand_loads += norm(cm + 3 * e, 3) > 0;
			problem(m, "load case '%s' has no counterpart", cand->case_name[k]);
		}
	}
	for (size_t b = 0; b < rf->ncombos; b++) {
		m->combo_map[b] = -1;
		load_vectors(rf, rf->combo + b * rf->ncases, rn, rm);
		for (size_t k = 0; k < cf->ncombos && m->combo_map[b] < 0; k++) {
			load_vectors(cf, cf->combo + k * cf->ncases, cn, cm);
			size_t nr = 0, nc = 0, nmt = 0;
			struct engi_match scratch;
			engi_match_init(&scratch);
			compare_loads(ref, cand, m, rn, rm, cn, cm, tol->prop_rel, &nr, &nc, &nmt,
				      &scratch, "");
			if (nr == nmt && nc == nmt)
				m->combo_map[b] = (long)k;
		}
		if (m->combo_map[b] < 0) {
			m->combo_mismatch++;
			problem(m, "combination '%s' has no counterpart with the same load vector",
				ref->combo_name[b]);
		}
	}
	if (cf->ncombos != rf->ncombos) {
		m->combo_mismatch++;
		problem(m, "%zu combinations delivered, %zu expected", cf->ncombos, rf->ncombos);
	}
	if (m->cand_nodes > m->matched_nodes)
		problem(m, "%zu delivered nodes have no counterpart",
			m->cand_nodes - m->matched_nodes);
	if (m->cand_elems > m->matched_elems)
		problem(m, "%zu delivered elements have no counterpart",
			m->cand_elems - m->matched_elems);
out:
	engi_free(xs);
	engi_free(cand_used);
	engi_free(ce_off);
	engi_free(ce);
	engi_free(vecs);
	engi_free(wr);
	engi_free(wc);
	if (rc < 0)
		engi_match_release(m);
	return rc;
}
