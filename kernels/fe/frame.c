/*
 * Frames and trusses by the direct stiffness method, all load cases solved
 * against one factorisation; combinations are the same linear combination
 * of the case states (the analysis is linear).
 */
#include "engi/fe.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A translation whose diagonal stiffness is at most this times the largest
 * diagonal is treated as having none (a mechanism). */
#define FRAME_ZERO_STIFFNESS_REL 1e-14
/* How many such translations a mechanism message names. */
#define FRAME_LOOSE_NAMED 6
/* --solver auto takes conjugate gradients when a breadth-first band
 * factor of the stiffness would cost more than FRAME_CG_BAND_FLOPS with an
 * average band wider than FRAME_CG_BAND equations: 3D lattices (from about
 * 7,000 dof, where the multigrid solve already takes a third of the direct
 * one's time; at 70k dof 8e11 to 3e12 flops, bands of 3,500 to 6,600),
 * not plane or slender models (a plane frame of 70k dof: 3e10 flops, a band
 * of 650, solved directly in half a second). */
#define FRAME_CG_BAND_FLOPS 1e10
#define FRAME_CG_BAND	    1000.0
/* Conjugate gradients: relative residual and iteration cap, beyond which
 * the direct solver takes over. */
#define FRAME_CG_TOL   1e-12
#define FRAME_CG_MAXIT 200

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void engi_frame_init(struct engi_frame *f)
{
	memset(f, 0, sizeof(*f));
}

void engi_frame_release(struct engi_frame *f)
{
	engi_free(f->xyz);
	engi_free(f->node_id);
	engi_free(f->elem);
	engi_free(f->elem_id);
	engi_free(f->restraint);
	engi_free(f->nodal);
	engi_free(f->member);
	engi_free(f->combo);
	engi_frame_init(f);
}

void engi_frame_result_init(struct engi_frame_result *r)
{
	memset(r, 0, sizeof(*r));
}

void engi_frame_result_release(struct engi_frame_result *r)
{
	for (size_t k = 0; k < r->nstates && r->state; k++) {
		engi_free(r->state[k].u);
		engi_free(r->state[k].reaction);
		engi_free(r->state[k].end_force);
	}
	engi_free(r->state);
	engi_frame_result_init(r);
}

/* Rotation matrix rows: local x, y, z in global coordinates; length in *len.
 * 0 when the element has zero length or its reference is parallel to it. */
int engi_frame_axes(const struct engi_frame *f, size_t e, double R[3][3], double *len)
{
	const struct engi_frame_elem *el = &f->elem[e];
	const double *a = f->xyz + 3 * (size_t)el->node[0], *b = f->xyz + 3 * (size_t)el->node[1];
	double x[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double L = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
	*len = L;
	if (!(L > 0))
		return 0;
	for (int k = 0; k < 3; k++)
		x[k] /= L;
	double z[3] = {el->zref[0], el->zref[1], el->zref[2]};
	if (z[0] == 0 && z[1] == 0 && z[2] == 0) {
		if (fabs(x[2]) > 1 - 1e-9)
			z[1] = 1;
		else
			z[2] = 1;
	}
	double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2],
		       z[0] * x[1] - z[1] * x[0]};
	double ny = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
	if (!(ny > 1e-9))
		return 0;
	for (int k = 0; k < 3; k++)
		y[k] /= ny;
	double zz[3] = {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
			x[0] * y[1] - x[1] * y[0]};
	memcpy(R[0], x, sizeof(x));
	memcpy(R[1], y, sizeof(y));
	memcpy(R[2], zz, sizeof(zz));
	return 1;
}

/* Local 12 x 12 stiffness before releases. */
static void local_k(const struct engi_frame_elem *el, double L, double k[12][12])
{
	memset(k, 0, 144 * sizeof(double));
	double EA = el->young * el->area / L;
	k[0][0] = k[6][6] = EA;
	k[0][6] = k[6][0] = -EA;
	if (el->type == ENGI_FRAME_TRUSS)
		return;
	double GJ = el->shear * el->torsion / L;
	k[3][3] = k[9][9] = GJ;
	k[3][9] = k[9][3] = -GJ;
	double L2 = L * L, L3 = L2 * L;
	double z = el->young * el->iz, y = el->young * el->iy;
	/* bending in the local x-y plane (v, rz) */
	k[1][1] = k[7][7] = 12 * z / L3;
	k[1][7] = -12 * z / L3;
	k[1][5] = k[1][11] = 6 * z / L2;
	k[5][7] = k[7][11] = -6 * z / L2;
	k[5][5] = k[11][11] = 4 * z / L;
	k[5][11] = 2 * z / L;
	/* bending in the local x-z plane (w, ry) */
	k[2][2] = k[8][8] = 12 * y / L3;
	k[2][8] = -12 * y / L3;
	k[2][4] = k[2][10] = -6 * y / L2;
	k[4][8] = k[8][10] = 6 * y / L2;
	k[4][4] = k[10][10] = 4 * y / L;
	k[4][10] = 2 * y / L;
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < i; j++)
			if (k[j][i] != 0)
				k[i][j] = k[j][i];
			else
				k[j][i] = k[i][j];
}

/* Fixed-end equivalent nodal loads of a uniform local load w over L. */
static void local_feq(const struct engi_frame_elem *el, const double w[3], double L, double fq[12])
{
	memset(fq, 0, 12 * sizeof(double));
	fq[0] = fq[6] = w[0] * L / 2;
	fq[1] = fq[7] = w[1] * L / 2;
	fq[2] = fq[8] = w[2] * L / 2;
	if (el->type == ENGI_FRAME_TRUSS)
		return;
	fq[5] = w[1] * L * L / 12;
	fq[11] = -w[1] * L * L / 12;
	fq[4] = -w[2] * L * L / 12;
	fq[10] = w[2] * L * L / 12;
}

/* Static condensation of released dofs out of k and the load vectors fq
 * (nq of them, 12 each). Released rows and columns become zero. */
static int condense(const struct engi_frame_elem *el, double k[12][12], double *fq, int nq)
{
	int rel[12], nr = 0;
	if (el->type == ENGI_FRAME_TRUSS)
		return 1;
	for (int end = 0; end < 2; end++)
		for (int d = 0; d < 6; d++)
			if (el->release[end] & (1u << d))
				rel[nr++] = 6 * end + d;
	/* eliminate one released dof at a time (Gauss on the symmetric matrix) */
	for (int t = 0; t < nr; t++) {
		int r = rel[t];
		double p = k[r][r];
		if (!(fabs(p) > 0)) {
			/* already no stiffness there: nothing couples to it */
			for (int i = 0; i < 12; i++)
				k[i][r] = k[r][i] = 0;
			for (int q = 0; q < nq; q++)
				fq[12 * q + r] = 0;
			continue;
		}
		for (int i = 0; i < 12; i++) {
			if (i == r)
				continue;
			double c = k[i][r] / p;
			if (c == 0)
				continue;
			for (int j = 0; j < 12; j++)
				k[i][j] -= c * k[r][j];
			for (int q = 0; q < nq; q++)
				fq[12 * q + i] -= c * fq[12 * q + r];
		}
		for (int i = 0; i < 12; i++)
			k[i][r] = k[r][i] = 0;
		for (int q = 0; q < nq; q++)
			fq[12 * q + r] = 0;
	}
	return 1;
}

/* T^T k T for T = blockdiag(R, R, R, R), 3 x 3 block by block; blocks of k
 * that are zero (all but the translations of a truss) stay zero. */
static void to_global(double R[3][3], double k[12][12], double kg[12][12])
{
	for (int I = 0; I < 4; I++)
		for (int J = 0; J < 4; J++) {
			int nz = 0;
			for (int a = 0; a < 3 && !nz; a++)
				for (int b = 0; b < 3; b++)
					nz |= k[3 * I + a][3 * J + b] != 0;
			double t[3][3];
			for (int a = 0; a < 3; a++)
				for (int b = 0; b < 3; b++) {
					double s = 0;
					for (int c = 0; nz && c < 3; c++)
						s += k[3 * I + a][3 * J + c] * R[c][b];
					t[a][b] = s;
				}
			for (int a = 0; a < 3; a++)
				for (int b = 0; b < 3; b++) {
					double s = 0;
					for (int c = 0; nz && c < 3; c++)
						s += R[c][a] * t[c][b];
					kg[3 * I + a][3 * J + b] = s;
				}
		}
}

static void vec_to_global(double R[3][3], const double *l, double *g)
{
	for (int I = 0; I < 4; I++)
		for (int a = 0; a < 3; a++)
			g[3 * I + a] =
			    R[0][a] * l[3 * I] + R[1][a] * l[3 * I + 1] + R[2][a] * l[3 * I + 2];
}

static void vec_to_local(double R[3][3], const double *g, double *l)
{
	for (int I = 0; I < 4; I++)
		for (int a = 0; a < 3; a++)
			l[3 * I + a] =
			    R[a][0] * g[3 * I] + R[a][1] * g[3 * I + 1] + R[a][2] * g[3 * I + 2];
}

/* Element data for all cases: condensed local k, rotation, local fixed-end
 * loads per case (ncases * 12). */
static int element_setup(const struct engi_frame *f, const size_t *mlo, const size_t *mli, size_t e,
			 double R[3][3], double k[12][12], double *fq, double *len)
{
	const struct engi_frame_elem *el = &f->elem[e];
	if (!engi_frame_axes(f, e, R, len))
		return 0;
	local_k(el, *len, k);
	memset(fq, 0, f->ncases * 12 * sizeof(double));
	for (size_t t = mlo[e]; t < mlo[e + 1]; t++) {
		const struct engi_frame_member_load *ml = &f->member[mli[t]];
		double w[3], q[12];
		if (ml->local)
			memcpy(w, ml->w, sizeof(w));
		else
			for (int a = 0; a < 3; a++)
				w[a] = R[a][0] * ml->w[0] + R[a][1] * ml->w[1] + R[a][2] * ml->w[2];
		local_feq(el, w, *len, q);
		for (int d = 0; d < 12; d++)
			fq[12 * ml->lcase + d] += q[d];
	}
	condense(el, k, fq, (int)f->ncases);
	return 1;
}

/* The six rigid-body modes of the free equations (column-major, neq
 * each), about the nodes' centroid: what multigrid must keep on its coarse
 * levels. Modes that no free equation carries come out zero and drop. */
static double *rigid_modes(const struct engi_frame *f, const int64_t *eq, size_t neq)
{
	double *B = engi_calloc(6 * (neq ? neq : 1), sizeof(*B));
	double c[3] = {0, 0, 0};
	if (!B)
		return NULL;
	for (size_t n = 0; n < f->nnodes; n++)
		for (int k = 0; k < 3; k++)
			c[k] += f->xyz[3 * n + (size_t)k] / (double)f->nnodes;
	for (size_t n = 0; n < f->nnodes; n++) {
		double x = f->xyz[3 * n] - c[0], y = f->xyz[3 * n + 1] - c[1];
		double z = f->xyz[3 * n + 2] - c[2];
		/* translations, then rotations about x, y, z: u = w x r */
		double rot[3][3] = {{0, -z, y}, {z, 0, -x}, {-y, x, 0}};
		for (int d = 0; d < 6; d++) {
			int64_t e = eq[6 * n + (size_t)d];
			if (e < 0)
				continue;
			if (d < 3) {
				B[(size_t)d * neq + (size_t)e] = 1;
				for (int w = 0; w < 3; w++)
					B[(size_t)(3 + w) * neq + (size_t)e] = rot[w][d];
			} else {
				B[(size_t)d * neq + (size_t)e] = 1;
			}
		}
	}
	return B;
}

/* The sparse Cholesky factorisation on every load case; a singular
 * stiffness names the node and direction where it broke down. a is
 * consumed. */
static int direct_solve(const struct engi_frame *f, const int64_t *eq, struct engi_fe_csc *a,
			double *rhs, size_t nc, const struct engi_fe_solve_opts *opts,
			struct engi_frame_result *r, struct engi_error *err)
{
	int64_t bad = -1;
	struct engi_fe_solve_stats st = {0};
	int rc = engi_fe_csc_solve(a, rhs, nc, opts, &bad, &st, err);
	if (rc < 0) {
		if (bad >= 0)
			for (size_t x = 0; x < 6 * f->nnodes; x++)
				if (eq[x] == bad) {
					static const char *dn[] = {"ux", "uy", "uz",
								   "rx", "ry", "rz"};
					engi_error_prefix(
					    err,
					    "the model is a mechanism or under-restrained "
					    "(free degree of freedom %s of node %lld)",
					    dn[x % 6], (long long)f->node_id[x / 6]);
					break;
				}
		return rc;
	}
	r->factor_s = st.factor_s;
	r->solve_s = st.solve_s;
	r->method = st.method;
	r->ordering = st.ordering;
	r->solver = "direct";
	return 0;
}

/* Conjugate gradients on every load case. 0: rhs holds the
 * displacements; 1: not solved (not converged, or the matrix showed itself
 * singular), r->cg_failed says why and rhs is unchanged; ENGI_ENOMEM. */
static int solve_cg(const struct engi_frame *f, const int64_t *eq, const struct engi_fe_csc *a,
		    double *rhs, size_t nc, struct engi_frame_result *r, struct engi_error *err)
{
	double t0 = now_s();
	struct engi_error e2;
	struct engi_fe_amg *h = NULL;
	struct engi_fe_pcg_stats st = {0};
	engi_error_init(&e2);
	double *B = rigid_modes(f, eq, a->n);
	if (!B)
		return engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
	int rc = engi_fe_amg_setup(a, B, 6, &h, &e2);
	engi_free(B);
	if (rc == ENGI_ENOMEM || rc == ENGI_ETOOBIG)
		return engi_raise(err, rc, "%s", e2.msg);
	if (rc < 0) {
		r->cg_failed = "the multigrid setup found the matrix not positive definite";
		return 1;
	}
	double t1 = now_s();
	double *x = engi_malloc((a->n ? a->n : 1) * nc * sizeof(*x));
	if (!x) {
		engi_fe_amg_free(h);
		return engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
	}
	memcpy(x, rhs, a->n * nc * sizeof(*x));
	rc = engi_fe_amg_pcg(h, x, nc, FRAME_CG_TOL, FRAME_CG_MAXIT, &st);
	engi_fe_amg_free(h);
	r->iterations = st.iterations;
	r->residual = st.residual;
	if (rc == 0) {
		memcpy(rhs, x, a->n * nc * sizeof(*x));
		r->factor_s = t1 - t0; /* the multigrid setup */
		r->solve_s = now_s() - t1;
		r->method = "pcg-amg";
		r->ordering = "aggregation";
		r->solver = "cg";
	} else if (rc == 2) {
		r->cg_failed = "the stiffness matrix is singular (a random load did not converge)";
		rc = 1;
	} else if (rc > 0) {
		r->cg_failed = "conjugate gradients did not converge";
	}
	engi_free(x);
	if (rc < 0)
		return engi_raise(err, rc, "cannot solve the frame: out of memory");
	return rc;
}

int engi_frame_solve(const struct engi_frame *f, const struct engi_fe_solve_opts *opts,
		     struct engi_frame_result *r, struct engi_error *err)
{
	return engi_frame_solve_with(f, opts, ENGI_FE_SOLVER_DIRECT, r, err);
}

int engi_frame_solve_with(const struct engi_frame *f, const struct engi_fe_solve_opts *opts,
			  enum engi_fe_solver solver, struct engi_frame_result *r,
			  struct engi_error *err)
{
	double t0 = now_s();
	size_t nn = f->nnodes, ndof = 6 * nn, nc = f->ncases ? f->ncases : 1;
	size_t ns = f->ncases + f->ncombos;
	int rc = 0;
	engi_frame_result_release(r);
	if (f->nelems == 0)
		return engi_raise(err, ENGI_EINVALID, "the model has no elements");
	if (f->ncombos && !f->ncases)
		return engi_raise(err, ENGI_EINVALID, "combinations without load cases");
	int64_t *eq = engi_malloc(ndof * sizeof(*eq));
	double *diag = engi_calloc(ndof, sizeof(*diag));
	double *fext = engi_calloc(ndof * nc, sizeof(*fext)); /* nodal + equivalent */
	double *fnod = engi_calloc(ndof * nc, sizeof(*fnod));
	double *fq = engi_malloc(nc * 12 * sizeof(*fq));
	size_t *off = engi_malloc((f->nelems + 1) * sizeof(*off));
	uint32_t *conn = engi_malloc(2 * f->nelems * sizeof(*conn));
	size_t *mlo = engi_calloc(f->nelems + 1, sizeof(*mlo));
	size_t *mli = engi_malloc((f->nmember + 1) * sizeof(*mli));
	double *rhs = NULL;
	struct engi_fe_csc a;
	engi_fe_csc_init(&a);
	r->state = engi_calloc(ns ? ns : 1, sizeof(*r->state));
	if (!eq || !diag || !fext || !fnod || !fq || !off || !conn || !r->state || !mlo || !mli) {
		rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
		goto out;
	}
	r->nstates = ns;
	r->nnodes = nn;
	r->nelems = f->nelems;
	r->ndof = ndof;
	for (size_t k = 0; k < ns; k++) {
		struct engi_frame_state *s = &r->state[k];
		s->u = engi_calloc(ndof, sizeof(double));
		s->reaction = engi_calloc(ndof, sizeof(double));
		s->end_force = engi_calloc(12 * f->nelems, sizeof(double));
		if (!s->u || !s->reaction || !s->end_force) {
			rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
			goto out;
		}
	}
	/* member loads bucketed by element */
	for (size_t i = 0; i < f->nmember; i++)
		mlo[f->member[i].elem + 1]++;
	for (size_t e = 0; e < f->nelems; e++)
		mlo[e + 1] += mlo[e];
	{
		size_t *cur = engi_malloc((f->nelems + 1) * sizeof(*cur));
		if (!cur) {
			rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
			goto out;
		}
		memcpy(cur, mlo, (f->nelems + 1) * sizeof(*cur));
		for (size_t i = 0; i < f->nmember; i++)
			mli[cur[f->member[i].elem]++] = i;
		engi_free(cur);
	}
	/* pass 1: geometry checks, diagonal stiffness, equivalent loads */
	double R[3][3], k[12][12], kg[12][12], L, dmax = 0;
	for (size_t e = 0; e < f->nelems; e++) {
		off[e] = 2 * e;
		conn[2 * e] = f->elem[e].node[0];
		conn[2 * e + 1] = f->elem[e].node[1];
		if (!element_setup(f, mlo, mli, e, R, k, fq, &L)) {
			rc = engi_raise(err, ENGI_EINVALID,
					"element %lld has zero length or a reference vector "
					"parallel to its axis",
					(long long)f->elem_id[e]);
			goto out;
		}
		to_global(R, k, kg);
		for (int i = 0; i < 12; i++) {
			size_t d = 6 * (size_t)conn[2 * e + (size_t)(i / 6)] + (size_t)(i % 6);
			diag[d] += kg[i][i];
			if (kg[i][i] > dmax)
				dmax = kg[i][i];
		}
		for (size_t c = 0; c < f->ncases; c++) {
			double g[12];
			vec_to_global(R, fq + 12 * c, g);
			for (int i = 0; i < 12; i++)
				fext[c * ndof + 6 * (size_t)conn[2 * e + (size_t)(i / 6)] +
				     (size_t)(i % 6)] += g[i];
		}
	}
	off[f->nelems] = 2 * f->nelems;
	for (size_t i = 0; i < f->nnodal; i++)
		for (int d = 0; d < 6; d++) {
			size_t x =
			    f->nodal[i].lcase * ndof + 6 * (size_t)f->nodal[i].node + (size_t)d;
			fext[x] += f->nodal[i].f[d];
			fnod[x] += f->nodal[i].f[d];
		}
	unsigned char *used = engi_calloc(nn + 1, 1);
	if (!used) {
		rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
		goto out;
	}
	for (size_t q = 0; q < 2 * f->nelems; q++)
		used[conn[q]] = 1;
	/* numbering: restraints, plane of a 2D model, rotations nobody
	 * stiffens; nodes no element uses carry nothing and are left out */
	size_t neq = 0, nloose = 0;
	char loose[ENGI_ERROR_MSG_MAX / 2] = "";
	for (size_t n = 0; n < nn; n++)
		for (int d = 0; d < 6; d++) {
			size_t x = 6 * n + (size_t)d;
			int fixed = (f->restraint[n] >> d) & 1;
			if (!used[n])
				fixed = 1;
			if (f->dim == 2 && (d == 2 || d == 3 || d == 4))
				fixed = 1;
			if (!fixed && !(diag[x] > FRAME_ZERO_STIFFNESS_REL * dmax)) {
				if (d >= 3) {
					fixed = 1;
					r->nauto++;
				} else if (nloose++ < FRAME_LOOSE_NAMED) {
					size_t at = strlen(loose);
					snprintf(loose + at, sizeof(loose) - at,
						 "%su%c of node %lld", at ? ", " : "", "xyz"[d],
						 (long long)f -> node_id[n]);
				}
			}
			eq[x] = fixed ? -1 : (int64_t)neq++;
		}
	if (nloose) {
		rc = engi_raise(err, ENGI_EINVALID,
				"the model is a mechanism: %zu free degree%s of freedom with no "
				"stiffness: %s%s",
				nloose, nloose > 1 ? "s" : "", loose,
				nloose > FRAME_LOOSE_NAMED ? ", ..." : "");
		engi_free(used);
		goto out;
	}
	engi_free(used);
	r->neq = neq;
	rc = engi_fe_csc_pattern(&a, nn, 6, eq, neq, f->nelems, off, conn, err);
	if (rc < 0)
		goto out;
	rhs = engi_calloc((neq ? neq : 1) * nc, sizeof(*rhs));
	if (!rhs) {
		rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the frame: out of memory");
		goto out;
	}
	for (size_t c = 0; c < nc; c++)
		for (size_t x = 0; x < ndof; x++)
			if (eq[x] >= 0)
				rhs[c * neq + (size_t)eq[x]] = fext[c * ndof + x];
	for (size_t e = 0; e < f->nelems; e++) {
		element_setup(f, mlo, mli, e, R, k, fq, &L);
		to_global(R, k, kg);
		size_t dofs[12];
		for (int i = 0; i < 12; i++)
			dofs[i] = 6 * (size_t)conn[2 * e + (size_t)(i / 6)] + (size_t)(i % 6);
		engi_fe_csc_add(&a, eq, &kg[0][0], 12, dofs, NULL, NULL);
	}
	double t1 = now_s();
	r->assemble_s = t1 - t0;
	int cg = solver == ENGI_FE_SOLVER_CG;
	if (solver == ENGI_FE_SOLVER_AUTO && neq) {
		double fl = engi_fe_csc_band_flops(&a);
		cg = fl > FRAME_CG_BAND_FLOPS && fl > FRAME_CG_BAND * FRAME_CG_BAND * (double)neq;
	}
	if (cg && neq) {
		rc = solve_cg(f, eq, &a, rhs, nc, r, err);
		if (rc < 0)
			goto out;
	}
	if (!r->solver) { /* the direct solver, also for a diagnosis CG cannot give */
		rc = direct_solve(f, eq, &a, rhs, nc, opts, r, err);
		if (rc < 0)
			goto out;
	}
	rc = 0;
	/* case states */
	for (size_t c = 0; c < f->ncases; c++) {
		struct engi_frame_state *s = &r->state[c];
		for (size_t x = 0; x < ndof; x++)
			s->u[x] = eq[x] >= 0 ? rhs[c * neq + (size_t)eq[x]] : 0;
	}
	for (size_t e = 0; e < f->nelems; e++) {
		element_setup(f, mlo, mli, e, R, k, fq, &L);
		for (size_t c = 0; c < f->ncases; c++) {
			struct engi_frame_state *s = &r->state[c];
			double ug[12], ul[12], fl[12], fg[12];
			for (int i = 0; i < 12; i++)
				ug[i] = s->u[6 * (size_t)conn[2 * e + (size_t)(i / 6)] +
					     (size_t)(i % 6)];
			vec_to_local(R, ug, ul);
			for (int i = 0; i < 12; i++) {
				double t = -fq[12 * c + (size_t)i];
				for (int j = 0; j < 12; j++)
					t += k[i][j] * ul[j];
				fl[i] = t;
			}
			memcpy(s->end_force + 12 * e, fl, sizeof(fl));
			vec_to_global(R, fl, fg);
			for (int i = 0; i < 12; i++)
				s->reaction[6 * (size_t)conn[2 * e + (size_t)(i / 6)] +
					    (size_t)(i % 6)] += fg[i];
		}
	}
	for (size_t c = 0; c < f->ncases; c++) {
		struct engi_frame_state *s = &r->state[c];
		for (size_t x = 0; x < ndof; x++)
			s->reaction[x] = eq[x] < 0 ? s->reaction[x] - fnod[c * ndof + x] : 0;
	}
	/* combinations */
	for (size_t m = 0; m < f->ncombos; m++) {
		struct engi_frame_state *s = &r->state[f->ncases + m];
		for (size_t c = 0; c < f->ncases; c++) {
			double w = f->combo[m * f->ncases + c];
			const struct engi_frame_state *cs = &r->state[c];
			for (size_t x = 0; x < ndof; x++) {
				s->u[x] += w * cs->u[x];
				s->reaction[x] += w * cs->reaction[x];
			}
			for (size_t x = 0; x < 12 * f->nelems; x++)
				s->end_force[x] += w * cs->end_force[x];
		}
	}
	/* sums, equilibrium, extremes: the total applied load is the nodal
	 * loads plus each member load's resultant at the member's middle */
	for (size_t k2 = 0; k2 < ns; k2++) {
		struct engi_frame_state *s = &r->state[k2];
		double load[6] = {0};
		for (size_t c = 0; c < f->ncases; c++) {
			double w =
			    k2 < f->ncases ? (c == k2) : f->combo[(k2 - f->ncases) * f->ncases + c];
			if (w == 0)
				continue;
			for (size_t i = 0; i < f->nnodal; i++) {
				const struct engi_frame_nodal_load *nl = &f->nodal[i];
				if (nl->lcase != c)
					continue;
				const double *p = f->xyz + 3 * (size_t)nl->node;
				const double *F = nl->f;
				double mom[3] = {p[1] * F[2] - p[2] * F[1],
						 p[2] * F[0] - p[0] * F[2],
						 p[0] * F[1] - p[1] * F[0]};
				for (int d = 0; d < 3; d++) {
					load[d] += w * F[d];
					load[3 + d] += w * (F[3 + d] + mom[d]);
				}
			}
			for (size_t i = 0; i < f->nmember; i++) {
				const struct engi_frame_member_load *ml = &f->member[i];
				if (ml->lcase != c)
					continue;
				engi_frame_axes(f, ml->elem, R, &L);
				double F[3];
				for (int d = 0; d < 3; d++)
					F[d] = L * (ml->local
							? R[0][d] * ml->w[0] + R[1][d] * ml->w[1] +
							      R[2][d] * ml->w[2]
							: ml->w[d]);
				const double *a0 = f->xyz + 3 * (size_t)f->elem[ml->elem].node[0];
				const double *a1 = f->xyz + 3 * (size_t)f->elem[ml->elem].node[1];
				double p[3] = {(a0[0] + a1[0]) / 2, (a0[1] + a1[1]) / 2,
					       (a0[2] + a1[2]) / 2};
				double mom[3] = {p[1] * F[2] - p[2] * F[1],
						 p[2] * F[0] - p[0] * F[2],
						 p[0] * F[1] - p[1] * F[0]};
				for (int d = 0; d < 3; d++) {
					load[d] += w * F[d];
					load[3 + d] += w * mom[d];
				}
			}
		}
		double res = 0, mag = 0;
		memcpy(s->load_sum, load, sizeof(load));
		for (size_t n = 0; n < nn; n++) {
			const double *p = f->xyz + 3 * n, *Rn = s->reaction + 6 * n;
			double mom[3] = {p[1] * Rn[2] - p[2] * Rn[1], p[2] * Rn[0] - p[0] * Rn[2],
					 p[0] * Rn[1] - p[1] * Rn[0]};
			for (int d = 0; d < 3; d++) {
				s->reaction_sum[d] += Rn[d];
				s->reaction_sum[3 + d] += Rn[3 + d] + mom[d];
			}
			const double *u = s->u + 6 * n;
			double um = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
			if (n == 0 || um > s->max_u) {
				s->max_u = um;
				s->max_u_node = f->node_id[n];
			}
		}
		for (int d = 0; d < 6; d++) {
			double t = s->reaction_sum[d] + load[d];
			res += t * t;
			mag += load[d] * load[d] + s->reaction_sum[d] * s->reaction_sum[d];
		}
		s->equilibrium_rel = mag > 0 ? sqrt(res / mag) : 0;
	}
	r->total_s = now_s() - t0;
	rc = 0;
out:
	engi_free(eq);
	engi_free(diag);
	engi_free(fext);
	engi_free(fnod);
	engi_free(fq);
	engi_free(off);
	engi_free(conn);
	engi_free(mlo);
	engi_free(mli);
	engi_free(rhs);
	engi_fe_csc_release(&a);
	if (rc < 0)
		engi_frame_result_release(r);
	return rc;
}
