/*
 * Conjugate gradients preconditioned by smoothed-aggregation algebraic
 * multigrid, for the stiffness of 3D lattices, where a direct factor costs
 * as much as a solid's.
 *
 * Levels: the nodes of a level are grouped into aggregates (a node and its
 * neighbours, within two steps on the finest level, then the rest attached
 * to a neighbouring aggregate); the caller's near-null space (rigid-body
 * modes) restricted to an aggregate and orthonormalised gives the tentative
 * prolongator, one damped block-Jacobi step smooths it, and the coarse
 * matrix is the Galerkin product. Each coarse aggregate becomes a coarse
 * node with up to nns equations. The coarsest level is solved by dense
 * Cholesky. The V-cycle smooths with Chebyshev polynomials in the
 * block-Jacobi preconditioned matrix, so that it is symmetric and runs as
 * matrix-vector products, in single precision. The load cases iterate in
 * lockstep (one pass over each matrix serves all), with a probe: a random
 * right-hand side, which converges unless the matrix is singular. A matrix
 * that is not positive definite, a singular one, or a solve that does not
 * reach the tolerance is reported, not hidden: the caller falls back to the
 * direct factorisation, which also names a mechanism.
 */
#include "engi/fe.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Coarsening stops at this many equations: dense Cholesky from there. */
#define AMG_COARSEST   1000
#define AMG_MAX_LEVELS 12
/* Most equations of a node (frames: 6) or of a coarse node (nns). */
#define AMG_MAX_BLOCK 16
/* Vectors one V-cycle carries at once: load cases and the probe. */
#define AMG_NV_MAX 4
/* Chebyshev smoothing interval [hi / AMG_CHEB_RATIO, hi], hi = AMG_CHEB_HI times
 * the power-iteration estimate of lambda_max (an estimate from below) */
#define AMG_CHEB_HI	1.15
#define AMG_CHEB_RATIO	30.0
#define AMG_CHEB_DEGREE 2
#define AMG_POWER_STEPS 15
/* Loops shorter than this run on one thread: a parallel region costs more. */
#define AMG_PAR_MIN    16384
#define AMG_PAR_FOR(n) _Pragma("omp parallel for schedule(static) if ((n) > AMG_PAR_MIN)")
/* A residual stalled at most this many times the tolerance is accepted. */
#define AMG_FLOOR 10.0
/* The probe's relative residual that shows the matrix regular: a singular
 * one keeps it above about 1 / sqrt(n) (1e-3 at a million equations). */
#define AMG_PROBE_OK 1e-8
/* A lane whose residual falls less than tenfold in this many iterations has
 * stalled: a singular matrix (the probe), or one the direct solver will
 * solve sooner (a load case). */
#define AMG_STALL_IT 30
/* The coarsest factor's squared ratio of smallest to largest pivot below
 * this: singular (the direct solver's own test). */
#define AMG_RCOND_MIN ENGI_FE_RCOND_MIN

/* Compressed rows, n x m. */
struct csr {
	int32_t n, m;
	int32_t *p, *j;
	double *x;
};

static void csr_free(struct csr *a)
{
	engi_free(a->p);
	engi_free(a->j);
	engi_free(a->x);
	memset(a, 0, sizeof(*a));
}

static int csr_alloc(struct csr *a, int32_t n, int32_t m, size_t nnz)
{
	a->n = n;
	a->m = m;
	a->p = engi_calloc((size_t)n + 1, sizeof(*a->p));
	a->j = engi_malloc((nnz ? nnz : 1) * sizeof(*a->j));
	a->x = engi_malloc((nnz ? nnz : 1) * sizeof(*a->x));
	return a->p && a->j && a->x ? 0 : ENGI_ENOMEM;
}

/* A matrix as the V-cycle applies it, in single precision (half the
 * memory traffic; the preconditioner only has to be a fixed symmetric
 * operator): compressed rows, or dense blocks between node groups when the
 * blocks are mostly filled (coarse matrices, prolongators). */
struct fop {
	int32_t n, m;
	int vbr;
	int32_t *p, *j; /* rows: n + 1; vbr: block rows + 1 */
	float *x;
	const int32_t *rg, *cg; /* vbr: row and column group bounds */
	int32_t nrg;
	int64_t *boff; /* vbr: offset of each block's values */
};

struct level {
	struct csr A, P, R; /* P, R (= P') absent on the coarsest */
	struct fop Af, Pf, Rf;
	int32_t nblk;
	int32_t *blk;		   /* nblk + 1 */
	double *dinv;		   /* inverse diagonal blocks, packed */
	size_t *doff;		   /* nblk + 1 offsets into dinv */
	double lam;		   /* largest eigenvalue of Dinv A */
	double *b, *x, *r, *t, *z; /* work vectors of length A.n */
	double *chol;		   /* coarsest: dense Cholesky factor */
};

struct engi_fe_amg {
	int nlev;
	struct level lev[AMG_MAX_LEVELS];
};

static void fop_free(struct fop *o)
{
	engi_free(o->p);
	engi_free(o->j);
	engi_free(o->x);
	engi_free(o->boff);
	memset(o, 0, sizeof(*o));
}

/* o = a in single precision; row groups rg (nrg of them) and column groups
 * cg (ncg) decide the dense blocks. */
static int fop_make(const struct csr *a, int32_t nrg, const int32_t *rg, int32_t ncg,
		    const int32_t *cg, struct fop *o)
{
	memset(o, 0, sizeof(*o));
	o->n = a->n;
	o->m = a->m;
	int32_t *gof = engi_malloc(((size_t)a->m + 1) * sizeof(*gof));
	int32_t *mark = engi_malloc(((size_t)ncg + 1) * sizeof(*mark));
	int rc = ENGI_ENOMEM;
	if (!gof || !mark)
		goto out;
	for (int32_t g = 0; g < ncg; g++)
		for (int32_t c = cg[g]; c < cg[g + 1]; c++)
			gof[c] = g;
	for (int32_t g = 0; g < ncg; g++)
		mark[g] = -1;
	/* dense entries the blocks would hold */
	int64_t nblocks = 0, dense = 0, nnz = a->p[a->n];
	for (int32_t r = 0; r < nrg; r++)
		for (int32_t i = rg[r]; i < rg[r + 1]; i++)
			for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
				int32_t g = gof[a->j[q]];
				if (mark[g] != r) {
					mark[g] = r;
					nblocks++;
					dense += (int64_t)(rg[r + 1] - rg[r]) * (cg[g + 1] - cg[g]);
				}
			}
	int narrow = 1;
	for (int32_t r = 0; r < nrg; r++)
		narrow &= rg[r + 1] - rg[r] <= AMG_MAX_BLOCK;
	if (dense > nnz + nnz / 2 || nblocks >= INT32_MAX || !narrow) {
		/* compressed rows */
		o->p = engi_malloc(((size_t)a->n + 1) * sizeof(*o->p));
		o->j = engi_malloc(((size_t)nnz + 1) * sizeof(*o->j));
		o->x = engi_malloc(((size_t)nnz + 1) * sizeof(*o->x));
		if (!o->p || !o->j || !o->x)
			goto out;
		memcpy(o->p, a->p, ((size_t)a->n + 1) * sizeof(*o->p));
		memcpy(o->j, a->j, (size_t)nnz * sizeof(*o->j));
		for (int64_t q = 0; q < nnz; q++)
			o->x[q] = (float)a->x[q];
		rc = 0;
		goto out;
	}
	o->vbr = 1;
	o->nrg = nrg;
	o->rg = rg;
	o->cg = cg;
	o->p = engi_calloc((size_t)nrg + 1, sizeof(*o->p));
	o->j = engi_malloc(((size_t)nblocks + 1) * sizeof(*o->j));
	o->boff = engi_malloc(((size_t)nblocks + 1) * sizeof(*o->boff));
	o->x = engi_calloc((size_t)dense + 1, sizeof(*o->x));
	if (!o->p || !o->j || !o->boff || !o->x)
		goto out;
	for (int32_t g = 0; g < ncg; g++)
		mark[g] = -1;
	int64_t nb = 0, off = 0;
	for (int32_t r = 0; r < nrg; r++) {
		int32_t w = rg[r + 1] - rg[r];
		int64_t first = nb;
		for (int32_t i = rg[r]; i < rg[r + 1]; i++)
			for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
				int32_t g = gof[a->j[q]];
				if (mark[g] < first) {
					mark[g] = (int32_t)nb;
					o->j[nb] = g;
					o->boff[nb++] = off;
					off += (int64_t)w * (cg[g + 1] - cg[g]);
				}
			}
		o->p[r + 1] = (int32_t)nb;
		for (int32_t i = rg[r]; i < rg[r + 1]; i++)
			for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
				int32_t c = a->j[q], g = gof[c], wc = cg[g + 1] - cg[g];
				o->x[o->boff[mark[g]] + (int64_t)(i - rg[r]) * wc + (c - cg[g])] +=
				    (float)a->x[q];
			}
	}
	o->boff[nb] = off;
	rc = 0;
out:
	engi_free(gof);
	engi_free(mark);
	if (rc < 0)
		fop_free(o);
	return rc;
}

/* The multi-vector kernels are written once for a vector count nv and
 * expanded for the counts 1 to AMG_NV_MAX as constants, so that the loops
 * over the vectors unroll. */
#define AMG_NV_SWITCH(nv, call)                                                                    \
	switch (nv) {                                                                              \
	case 1:                                                                                    \
		call(1);                                                                           \
		break;                                                                             \
	case 2:                                                                                    \
		call(2);                                                                           \
		break;                                                                             \
	case 3:                                                                                    \
		call(3);                                                                           \
		break;                                                                             \
	default:                                                                                   \
		call(AMG_NV_MAX);                                                                  \
		break;                                                                             \
	}

/* This thread's share [*lo, *hi) of n rows, in static contiguous parts. */
static void share(int32_t n, int32_t *lo, int32_t *hi)
{
	int t = omp_get_thread_num(), nt = omp_get_num_threads();
	*lo = (int32_t)((int64_t)n * t / nt);
	*hi = (int32_t)((int64_t)n * (t + 1) / nt);
}

static inline __attribute__((always_inline)) void fop_csr_k(const struct fop *o, const double *X,
							    const double *B, double s, double t,
							    double *Y, int32_t lo, int32_t hi,
							    const int nv)
{
	for (int32_t i = lo; i < hi; i++) {
		double acc[AMG_NV_MAX] = {0};
		for (int32_t q = o->p[i]; q < o->p[i + 1]; q++) {
			double a = (double)o->x[q];
			const double *xj = X + (size_t)o->j[q] * nv;
			for (int v = 0; v < nv; v++)
				acc[v] += a * xj[v];
		}
		for (int v = 0; v < nv; v++) {
			size_t at = (size_t)i * nv + v;
			Y[at] = (s != 0 ? s * B[at] : 0) + t * acc[v];
		}
	}
}

static inline __attribute__((always_inline)) void fop_vbr_k(const struct fop *o, const double *X,
							    const double *B, double s, double t,
							    double *Y, int32_t lo, int32_t hi,
							    const int nv)
{
	for (int32_t r = lo; r < hi; r++) {
		int32_t r0 = o->rg[r], w = o->rg[r + 1] - r0;
		double acc[AMG_MAX_BLOCK * AMG_NV_MAX];
		for (int32_t i = 0; i < w * nv; i++)
			acc[i] = 0;
		for (int32_t q = o->p[r]; q < o->p[r + 1]; q++) {
			int32_t g = o->j[q], c0 = o->cg[g], wc = o->cg[g + 1] - c0;
			const float *val = o->x + o->boff[q];
			const double *xc = X + (size_t)c0 * nv;
			if (wc == 6) { /* the common width, unrolled */
				for (int32_t i = 0; i < w; i++, val += 6)
					for (int v = 0; v < nv; v++)
						acc[i * nv + v] += (double)val[0] * xc[v] +
								   (double)val[1] * xc[nv + v] +
								   (double)val[2] * xc[2 * nv + v] +
								   (double)val[3] * xc[3 * nv + v] +
								   (double)val[4] * xc[4 * nv + v] +
								   (double)val[5] * xc[5 * nv + v];
				continue;
			}
			for (int32_t i = 0; i < w; i++, val += wc)
				for (int32_t jj = 0; jj < wc; jj++) {
					double a = (double)val[jj];
					for (int v = 0; v < nv; v++)
						acc[i * nv + v] += a * xc[jj * nv + v];
				}
		}
		for (int32_t i = 0; i < w * nv; i++) {
			size_t at = (size_t)r0 * nv + (size_t)i;
			Y[at] = (s != 0 ? s * B[at] : 0) + t * acc[i];
		}
	}
}

/* Y = s B + t (o X) for nv vectors stored interleaved (X[i * nv + v]); B
 * may be NULL when s is 0. */
static void fop_apply(const struct fop *o, const double *X, const double *B, double s, double t,
		      double *Y, int nv)
{
	int32_t rows = o->vbr ? o->nrg : o->n;
#define FOP_CALL(k)                                                                                \
	do {                                                                                       \
		if (o->vbr)                                                                        \
			fop_vbr_k(o, X, B, s, t, Y, lo, hi, k);                                    \
		else                                                                               \
			fop_csr_k(o, X, B, s, t, Y, lo, hi, k);                                    \
	} while (0)
#pragma omp parallel if (o->n > AMG_PAR_MIN)
	{
		int32_t lo, hi;
		share(rows, &lo, &hi);
		AMG_NV_SWITCH(nv, FOP_CALL)
	}
#undef FOP_CALL
}

static void spmv(const struct csr *a, const double *x, double *y)
{
#pragma omp parallel for schedule(static) if (a->n > AMG_PAR_MIN)
	for (int32_t i = 0; i < a->n; i++) {
		double s = 0;
		for (int32_t q = a->p[i]; q < a->p[i + 1]; q++)
			s += a->x[q] * x[a->j[q]];
		y[i] = s;
	}
}

static inline __attribute__((always_inline)) void
dinv_k(const struct level *l, const double *X, double *Y, int32_t lo, int32_t hi, const int nv)
{
	for (int32_t k = lo; k < hi; k++) {
		int32_t a = l->blk[k], w = l->blk[k + 1] - a;
		const double *d = l->dinv + l->doff[k];
		const double *x = X + (size_t)a * nv;
		for (int32_t i = 0; i < w; i++) {
			double acc[AMG_NV_MAX] = {0};
			for (int32_t j = 0; j < w; j++)
				for (int v = 0; v < nv; v++)
					acc[v] += d[i * w + j] * x[j * nv + v];
			for (int v = 0; v < nv; v++)
				Y[((size_t)a + (size_t)i) * nv + v] = acc[v];
		}
	}
}

/* Y = Dinv X, block by block, nv interleaved vectors */
static void dinv_apply(const struct level *l, const double *X, double *Y, int nv)
{
#define DINV_CALL(k) dinv_k(l, X, Y, lo, hi, k)
#pragma omp parallel if (l->A.n > AMG_PAR_MIN)
	{
		int32_t lo, hi;
		share(l->nblk, &lo, &hi);
		AMG_NV_SWITCH(nv, DINV_CALL)
	}
#undef DINV_CALL
}

/* Per-thread scratch of a product with b: one int32 a column of b, all -1;
 * NULL when out of memory. */
static int32_t *spgemm_marks(const struct csr *b)
{
	int32_t *mark = engi_malloc(((size_t)b->m + 1) * sizeof(*mark));
	for (int32_t k = 0; mark && k < b->m; k++)
		mark[k] = -1;
	return mark;
}

/*
 * C = A B, rows in parallel, columns in the order they first appear. The
 * rows of A come in ngrp groups (grp[g] .. grp[g+1]) that share one pattern,
 * as the rows of a coarse node do in R = P': one pass over the group's
 * pattern serves all its rows (at most AMG_MAX_BLOCK of them). grp NULL:
 * every row is its own group (ngrp = a->n). Each entry of C sums its
 * products in the order of A's and B's entries, whatever the grouping.
 */
static int spgemm(const struct csr *a, const struct csr *b, int32_t ngrp, const int32_t *grp,
		  struct csr *c)
{
#define GRP(g) (grp ? grp[g] : (g))
	int rc = 0;
	/* a group is a few rows: smaller chunks; a matrix of single rows is
	 * parallel only when it is large enough */
	const int chunk = grp ? 32 : 256, par = grp || a->n > AMG_PAR_MIN;
	/* what the first product is added to: -0.0 leaves every product as
	 * it is; grouped rows start from +0.0, which turns a first product
	 * of -0.0 into +0.0, as their zeroed sums always did */
	const double base = grp ? 0.0 : -0.0;
	memset(c, 0, sizeof(*c));
	c->n = a->n;
	c->m = b->m;
	c->p = engi_calloc((size_t)a->n + 1, sizeof(*c->p));
	if (!c->p)
		return ENGI_ENOMEM;
	int64_t total = 0;
#pragma omp parallel reduction(+ : total) if (par)
	{
		int32_t *mark = spgemm_marks(b);
		if (!mark) {
#pragma omp atomic write
			rc = ENGI_ENOMEM;
		}
#pragma omp for schedule(dynamic, chunk)
		for (int32_t g = 0; g < ngrp; g++) {
			int32_t i = GRP(g), cnt = 0;
			if (!mark || GRP(g + 1) == i) /* no memory: to the barrier */
				continue;
			for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
				int32_t k = a->j[q];
				for (int32_t t = b->p[k]; t < b->p[k + 1]; t++)
					if (mark[b->j[t]] != g) {
						mark[b->j[t]] = g;
						cnt++;
					}
			}
			for (int32_t i2 = i; i2 < GRP(g + 1); i2++)
				c->p[i2 + 1] = cnt;
			total += (int64_t)cnt * (GRP(g + 1) - i);
		}
		engi_free(mark);
	}
	if (rc < 0 || total >= INT32_MAX) {
		csr_free(c);
		return rc < 0 ? rc : ENGI_ETOOBIG;
	}
	for (int32_t i = 0; i < a->n; i++)
		c->p[i + 1] += c->p[i];
	c->j = engi_malloc((size_t)(total ? total : 1) * sizeof(*c->j));
	c->x = engi_malloc((size_t)(total ? total : 1) * sizeof(*c->x));
	if (!c->j || !c->x) {
		csr_free(c);
		return ENGI_ENOMEM;
	}
#pragma omp parallel if (par)
	{
		int32_t *pos = spgemm_marks(b);
		if (!pos) {
#pragma omp atomic write
			rc = ENGI_ENOMEM;
		}
#pragma omp for schedule(dynamic, chunk)
		for (int32_t g = 0; g < ngrp; g++) {
			int32_t i0 = GRP(g), w = GRP(g + 1) - i0;
			if (!pos || !w) /* no memory: to the barrier */
				continue;
			int32_t *cols = c->j + c->p[i0], u = 0;
			/* the rows' entries at the same position of the
			 * shared pattern: column q of a row i0 is column
			 * q of the others */
			for (int32_t q = a->p[i0]; q < a->p[i0 + 1]; q++) {
				int32_t k = a->j[q];
				int32_t off = q - a->p[i0];
				double av[AMG_MAX_BLOCK];
				for (int32_t t = 0; t < w; t++)
					av[t] = a->x[a->p[i0 + t] + off];
				for (int32_t t = b->p[k]; t < b->p[k + 1]; t++) {
					int32_t col = b->j[t];
					double v = b->x[t];
					if (pos[col] < 0) {
						pos[col] = u;
						for (int32_t s2 = 0; s2 < w; s2++)
							c->x[c->p[i0 + s2] + u] = base + av[s2] * v;
						cols[u++] = col;
						continue;
					}
					int32_t at = pos[col];
					for (int32_t s2 = 0; s2 < w; s2++)
						c->x[c->p[i0 + s2] + at] += av[s2] * v;
				}
			}
			for (int32_t s2 = 1; s2 < w; s2++)
				memcpy(c->j + c->p[i0 + s2], cols, (size_t)u * sizeof(*cols));
			for (int32_t t = 0; t < u; t++)
				pos[cols[t]] = -1;
		}
		engi_free(pos);
	}
	if (rc < 0)
		csr_free(c);
	return rc;
#undef GRP
}

/* Whether the rows of each group have one pattern (and at most
 * AMG_MAX_BLOCK rows). */
static int same_patterns(const struct csr *r, int32_t ngrp, const int32_t *grp)
{
	for (int32_t g = 0; g < ngrp; g++) {
		int32_t i0 = grp[g], len = r->p[i0 + 1] - r->p[i0];
		if (grp[g + 1] - i0 > AMG_MAX_BLOCK)
			return 0;
		for (int32_t i = i0 + 1; i < grp[g + 1]; i++) {
			if (r->p[i + 1] - r->p[i] != len)
				return 0;
			if (memcmp(r->j + r->p[i], r->j + r->p[i0], (size_t)len * sizeof(*r->j)))
				return 0;
		}
	}
	return 1;
}

static int transpose(const struct csr *a, struct csr *t)
{
	size_t nnz = (size_t)a->p[a->n];
	if (csr_alloc(t, a->m, a->n, nnz) < 0) {
		csr_free(t);
		return ENGI_ENOMEM;
	}
	for (size_t q = 0; q < nnz; q++)
		t->p[a->j[q] + 1]++;
	for (int32_t i = 0; i < a->m; i++)
		t->p[i + 1] += t->p[i];
	int32_t *fill = engi_malloc(((size_t)a->m + 1) * sizeof(*fill));
	if (!fill) {
		csr_free(t);
		return ENGI_ENOMEM;
	}
	memcpy(fill, t->p, (size_t)a->m * sizeof(*fill));
	for (int32_t i = 0; i < a->n; i++)
		for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
			int32_t at = fill[a->j[q]]++;
			t->j[at] = i;
			t->x[at] = a->x[q];
		}
	engi_free(fill);
	return 0;
}

/* The full symmetric matrix of an upper triangle, exact zeros left out. */
static int full_of_upper(const struct engi_fe_csc *u, struct csr *a)
{
	size_t n = u->n;
	int32_t *cnt = engi_calloc(n + 1, sizeof(*cnt));
	if (!cnt)
		return ENGI_ENOMEM;
	for (size_t j = 0; j < n; j++)
		for (int32_t q = u->colptr[j]; q < u->colptr[j + 1]; q++) {
			int32_t i = u->rowind[q];
			if (u->val[q] == 0 && i != (int32_t)j)
				continue;
			cnt[j + 1]++;
			if (i != (int32_t)j)
				cnt[i + 1]++;
		}
	for (size_t j = 0; j < n; j++)
		cnt[j + 1] += cnt[j];
	if (csr_alloc(a, (int32_t)n, (int32_t)n, (size_t)cnt[n]) < 0) {
		engi_free(cnt);
		csr_free(a);
		return ENGI_ENOMEM;
	}
	memcpy(a->p, cnt, (n + 1) * sizeof(*cnt));
	for (size_t j = 0; j < n; j++)
		for (int32_t q = u->colptr[j]; q < u->colptr[j + 1]; q++) {
			int32_t i = u->rowind[q];
			double v = u->val[q];
			if (v == 0 && i != (int32_t)j)
				continue;
			a->j[cnt[j]] = i;
			a->x[cnt[j]++] = v;
			if (i != (int32_t)j) {
				a->j[cnt[i]] = (int32_t)j;
				a->x[cnt[i]++] = v;
			}
		}
	engi_free(cnt);
	return 0;
}

/* In-place inverse of an SPD w x w block (row-major) by Cholesky; 0 when
 * not SPD. Blocks are small (a node's equations): no BLAS call, whose
 * thread pool would compete with the OpenMP team. */
static int spd_inverse(double *d, int w)
{
	double l[AMG_MAX_BLOCK * AMG_MAX_BLOCK], li[AMG_MAX_BLOCK * AMG_MAX_BLOCK];
	if (w > AMG_MAX_BLOCK)
		return 0;
	for (int j = 0; j < w; j++) {
		double s = d[j * w + j];
		for (int k = 0; k < j; k++)
			s -= l[j * w + k] * l[j * w + k];
		if (!(s > 0))
			return 0;
		l[j * w + j] = sqrt(s);
		for (int i = j + 1; i < w; i++) {
			double t = d[i * w + j];
			for (int k = 0; k < j; k++)
				t -= l[i * w + k] * l[j * w + k];
			l[i * w + j] = t / l[j * w + j];
		}
	}
	/* li = L^-1 (lower), then d = li' li */
	for (int j = 0; j < w; j++) {
		for (int i = 0; i < j; i++)
			li[i * w + j] = 0;
		li[j * w + j] = 1 / l[j * w + j];
		for (int i = j + 1; i < w; i++) {
			double t = 0;
			for (int k = j; k < i; k++)
				t -= l[i * w + k] * li[k * w + j];
			li[i * w + j] = t / l[i * w + i];
		}
	}
	for (int i = 0; i < w; i++)
		for (int j = 0; j < w; j++) {
			double t = 0;
			for (int k = i > j ? i : j; k < w; k++)
				t += li[k * w + i] * li[k * w + j];
			d[i * w + j] = t;
		}
	return 1;
}

/* Inverse diagonal blocks of the level; ENGI_EINVALID when one is not
 * positive definite. */
static int block_diag(struct level *l)
{
	l->doff = engi_malloc(((size_t)l->nblk + 1) * sizeof(*l->doff));
	if (!l->doff)
		return ENGI_ENOMEM;
	size_t tot = 0;
	for (int32_t k = 0; k < l->nblk; k++) {
		size_t w = (size_t)(l->blk[k + 1] - l->blk[k]);
		l->doff[k] = tot;
		tot += w * w;
	}
	l->doff[l->nblk] = tot;
	l->dinv = engi_calloc(tot ? tot : 1, sizeof(*l->dinv));
	if (!l->dinv)
		return ENGI_ENOMEM;
	int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (l->A.n > AMG_PAR_MIN)
	for (int32_t k = 0; k < l->nblk; k++) {
		int32_t a = l->blk[k], w = l->blk[k + 1] - a;
		double *d = l->dinv + l->doff[k];
		for (int32_t i = 0; i < w; i++)
			for (int32_t q = l->A.p[a + i]; q < l->A.p[a + i + 1]; q++) {
				int32_t j = l->A.j[q] - a;
				if (j >= 0 && j < w)
					d[i * w + j] += l->A.x[q];
			}
		if (!spd_inverse(d, w))
			bad = 1;
	}
	return bad ? ENGI_EINVALID : 0;
}

/* Largest eigenvalue of Dinv A by power iteration (an estimate from below,
 * which the smoother widens by AMG_CHEB_HI). */
static int lambda_max(struct level *l)
{
	int32_t n = l->A.n;
	double *v = l->x, *w = l->r;
	uint32_t h = 2463534242u;
	for (int32_t i = 0; i < n; i++) { /* xorshift: no smooth start */
		h ^= h << 13;
		h ^= h >> 17;
		h ^= h << 5;
		v[i] = (double)(h >> 8) / 16777216.0 - 0.5;
	}
	double lam = 0;
	for (int it = 0; it < AMG_POWER_STEPS; it++) {
		spmv(&l->A, v, l->t);
		dinv_apply(l, l->t, w, 1);
		double num = 0, den = 0;
		for (int32_t i = 0; i < n; i++) {
			num += w[i] * w[i];
			den += v[i] * v[i];
		}
		lam = sqrt(num / den);
		double s = 1 / sqrt(num);
		for (int32_t i = 0; i < n; i++)
			v[i] = w[i] * s;
	}
	l->lam = lam;
	return lam > 0 && isfinite(lam) ? 0 : ENGI_EINVALID;
}

/* The node graph of a level (each node's neighbours once, itself left
 * out), or with dist2 the nodes within two steps. */
static int node_graph(const struct level *l, int dist2, int32_t **gpo, int32_t **gjo)
{
	int32_t nb = l->nblk, n = l->A.n;
	int32_t *nodeof = engi_malloc(((size_t)n + 1) * sizeof(*nodeof));
	int32_t *mark = engi_malloc(((size_t)nb + 1) * sizeof(*mark));
	int32_t *gp = engi_calloc((size_t)nb + 1, sizeof(*gp)), *gj = NULL;
	int32_t *hp = NULL, *hj = NULL;
	int rc = ENGI_ENOMEM;
	if (!nodeof || !mark || !gp)
		goto out;
	for (int32_t k = 0; k < nb; k++)
		for (int32_t i = l->blk[k]; i < l->blk[k + 1]; i++)
			nodeof[i] = k;
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t k = 0; k < nb; k++)
			mark[k] = -1;
		for (int32_t k = 0; k < nb; k++) {
			int32_t cnt = pass ? gp[k] : 0;
			mark[k] = k;
			for (int32_t i = l->blk[k]; i < l->blk[k + 1]; i++)
				for (int32_t q = l->A.p[i]; q < l->A.p[i + 1]; q++) {
					int32_t o = nodeof[l->A.j[q]];
					if (mark[o] == k)
						continue;
					mark[o] = k;
					if (pass)
						gj[cnt] = o;
					cnt++;
				}
			if (!pass)
				gp[k + 1] = cnt;
		}
		if (!pass) {
			for (int32_t k = 0; k < nb; k++)
				gp[k + 1] += gp[k];
			gj = engi_malloc(((size_t)gp[nb] + 1) * sizeof(*gj));
			if (!gj)
				goto out;
		}
	}
	if (dist2) {
		hp = engi_calloc((size_t)nb + 1, sizeof(*hp));
		if (!hp)
			goto out;
		for (int pass = 0; pass < 2; pass++) {
			for (int32_t k = 0; k < nb; k++)
				mark[k] = -1;
			for (int32_t k = 0; k < nb; k++) {
				int64_t cnt = pass ? hp[k] : 0;
				mark[k] = k;
				for (int32_t q = gp[k]; q < gp[k + 1]; q++) {
					/* the neighbour (t = -1), then its neighbours */
					int32_t m = gj[q];
					for (int32_t t = gp[m] - 1; t < gp[m + 1]; t++) {
						int32_t o = t < gp[m] ? m : gj[t];
						if (mark[o] == k)
							continue;
						mark[o] = k;
						if (pass)
							hj[cnt] = o;
						cnt++;
					}
				}
				if (!pass) {
					if (cnt >= INT32_MAX) {
						rc = ENGI_ETOOBIG;
						goto out;
					}
					hp[k + 1] = (int32_t)cnt;
				}
			}
			if (!pass) {
				for (int32_t k = 0; k < nb; k++) {
					if ((int64_t)hp[k + 1] + hp[k] >= INT32_MAX) {
						rc = ENGI_ETOOBIG;
						goto out;
					}
					hp[k + 1] += hp[k];
				}
				hj = engi_malloc(((size_t)hp[nb] + 1) * sizeof(*hj));
				if (!hj)
					goto out;
			}
		}
		engi_free(gp);
		engi_free(gj);
		gp = hp, gj = hj;
		hp = hj = NULL;
	}
	*gpo = gp, *gjo = gj;
	gp = gj = NULL;
	rc = 0;
out:
	engi_free(nodeof);
	engi_free(mark);
	engi_free(gp);
	engi_free(gj);
	engi_free(hp);
	engi_free(hj);
	return rc;
}

/* Aggregates of a node graph: agg[node], count returned. A node whose
 * neighbours are all free starts an aggregate with them; the rest join a
 * neighbouring aggregate; isolated leftovers stand alone. */
static int32_t aggregate(int32_t nb, const int32_t *gp, const int32_t *gj, int32_t *agg)
{
	for (int32_t k = 0; k < nb; k++)
		agg[k] = -1;
	int32_t na = 0;
	for (int32_t k = 0; k < nb; k++) {
		if (agg[k] >= 0)
			continue;
		int ok = 1;
		for (int32_t q = gp[k]; q < gp[k + 1] && ok; q++)
			ok = agg[gj[q]] < 0;
		if (!ok)
			continue;
		for (int32_t q = gp[k]; q < gp[k + 1]; q++)
			agg[gj[q]] = na;
		agg[k] = na++;
	}
	for (int32_t k = 0; k < nb; k++) {
		if (agg[k] >= 0)
			continue;
		for (int32_t q = gp[k]; q < gp[k + 1]; q++)
			if (agg[gj[q]] >= 0) {
				agg[k] = -2 - agg[gj[q]];
				break;
			}
	}
	for (int32_t k = 0; k < nb; k++)
		if (agg[k] <= -2)
			agg[k] = -2 - agg[k];
	for (int32_t k = 0; k < nb; k++)
		if (agg[k] < 0)
			agg[k] = na++;
	return na;
}

/* Tentative prolongator T (n x nc) and the coarse near-null space. The
 * columns of B restricted to each aggregate are orthonormalised (modified
 * Gram-Schmidt); a column that is dependent on the earlier ones is left out,
 * so a coarse node has between 1 and nns equations. */
static int tentative(const struct level *l, const double *B, int nns, const int32_t *agg,
		     int32_t na, struct csr *T, double **Bc, int32_t **cblk)
{
	int32_t n = l->A.n, nb = l->nblk;
	int rc = ENGI_ENOMEM;
	int32_t *cnt = engi_calloc((size_t)na + 1, sizeof(*cnt));
	int32_t *order = engi_malloc(((size_t)nb + 1) * sizeof(*order));
	int32_t *rows = engi_malloc(((size_t)n + 1) * sizeof(*rows));
	double *q = NULL, *r = NULL;
	int32_t *keep = engi_malloc(((size_t)na * (size_t)nns + 1) * sizeof(*keep));
	*Bc = NULL;
	*cblk = engi_malloc(((size_t)na + 1) * sizeof(**cblk));
	if (!cnt || !order || !rows || !keep || !*cblk || csr_alloc(T, n, 0, (size_t)n * nns) < 0)
		goto out;
	for (int32_t k = 0; k < nb; k++)
		cnt[agg[k] + 1]++;
	for (int32_t a = 0; a < na; a++)
		cnt[a + 1] += cnt[a];
	{
		int32_t *fill = engi_malloc(((size_t)na + 1) * sizeof(*fill));
		if (!fill)
			goto out;
		memcpy(fill, cnt, (size_t)na * sizeof(*fill));
		for (int32_t k = 0; k < nb; k++)
			order[fill[agg[k]]++] = k;
		engi_free(fill);
	}
	int32_t maxrows = 0;
	for (int32_t a = 0; a < na; a++) {
		int32_t m = 0;
		for (int32_t t = cnt[a]; t < cnt[a + 1]; t++)
			m += l->blk[order[t] + 1] - l->blk[order[t]];
		if (m > maxrows)
			maxrows = m;
	}
	q = engi_malloc(((size_t)maxrows * nns + 1) * sizeof(*q));
	r = engi_malloc((size_t)nns * nns * sizeof(*r));
	*Bc = engi_calloc((size_t)na * nns * nns + 1, sizeof(**Bc));
	if (!q || !r || !*Bc)
		goto out;
	/* T rows: each fine row has the kept columns of its aggregate */
	int32_t nc = 0;
	int32_t *rowcol = engi_malloc(((size_t)n + 1) * sizeof(*rowcol)); /* first coarse col */
	int32_t *rowk = engi_malloc(((size_t)n + 1) * sizeof(*rowk));	  /* how many */
	double *rowv = engi_malloc(((size_t)n * nns + 1) * sizeof(*rowv));
	if (!rowcol || !rowk || !rowv) {
		engi_free(rowcol);
		engi_free(rowk);
		engi_free(rowv);
		goto out;
	}
	for (int32_t a = 0; a < na; a++) {
		int32_t m = 0;
		for (int32_t t = cnt[a]; t < cnt[a + 1]; t++)
			for (int32_t i = l->blk[order[t]]; i < l->blk[order[t] + 1]; i++)
				rows[m++] = i;
		int kept = 0;
		memset(r, 0, (size_t)nns * nns * sizeof(*r));
		for (int c = 0; c < nns; c++) {
			double *v = q + (size_t)kept * m;
			double n0 = 0;
			for (int32_t t = 0; t < m; t++) {
				v[t] = B[(size_t)c * n + rows[t]];
				n0 += v[t] * v[t];
			}
			for (int pass = 0; pass < 2; pass++) /* twice is enough */
				for (int p = 0; p < kept; p++) {
					const double *u = q + (size_t)p * m;
					double s = 0;
					for (int32_t t = 0; t < m; t++)
						s += u[t] * v[t];
					for (int32_t t = 0; t < m; t++)
						v[t] -= s * u[t];
					r[p * nns + c] += s;
				}
			double nv = 0;
			for (int32_t t = 0; t < m; t++)
				nv += v[t] * v[t];
			if (!(nv > 1e-20 * n0) || !(nv > 0))
				continue;
			nv = sqrt(nv);
			for (int32_t t = 0; t < m; t++)
				v[t] /= nv;
			r[kept * nns + c] = nv;
			kept++;
		}
		(*cblk)[a] = nc;
		for (int32_t t = 0; t < m; t++) {
			rowcol[rows[t]] = nc;
			rowk[rows[t]] = kept;
			for (int p = 0; p < kept; p++)
				rowv[(size_t)rows[t] * nns + p] = q[(size_t)p * m + t];
		}
		/* coarse near-null space rows: R's kept rows, stored per coarse
		 * equation (column-major later) */
		for (int p = 0; p < kept; p++)
			for (int c = 0; c < nns; c++)
				(*Bc)[(size_t)(nc + p) * nns + c] = r[p * nns + c];
		nc += kept;
	}
	(*cblk)[na] = nc;
	T->m = nc;
	for (int32_t i = 0; i < n; i++)
		T->p[i + 1] = T->p[i] + rowk[i];
	for (int32_t i = 0; i < n; i++)
		for (int32_t p = 0; p < rowk[i]; p++) {
			T->j[T->p[i] + p] = rowcol[i] + p;
			T->x[T->p[i] + p] = rowv[(size_t)i * nns + p];
		}
	engi_free(rowcol);
	engi_free(rowk);
	engi_free(rowv);
	/* Bc to column-major nc x nns */
	{
		double *cm = engi_malloc(((size_t)nc * nns + 1) * sizeof(*cm));
		if (!cm)
			goto out;
		for (int32_t i = 0; i < nc; i++)
			for (int c = 0; c < nns; c++)
				cm[(size_t)c * nc + i] = (*Bc)[(size_t)i * nns + c];
		engi_free(*Bc);
		*Bc = cm;
	}
	rc = 0;
out:
	engi_free(cnt);
	engi_free(order);
	engi_free(rows);
	engi_free(keep);
	engi_free(q);
	engi_free(r);
	if (rc < 0) {
		engi_free(*Bc);
		engi_free(*cblk);
		*Bc = NULL;
		*cblk = NULL;
		csr_free(T);
	}
	return rc;
}

static int level_vectors(struct level *l)
{
	size_t n = ((size_t)l->A.n + 1) * AMG_NV_MAX;
	l->b = engi_malloc(n * sizeof(double));
	l->x = engi_malloc(n * sizeof(double));
	l->r = engi_malloc(n * sizeof(double));
	l->t = engi_malloc(n * sizeof(double));
	l->z = engi_malloc(n * sizeof(double));
	return l->b && l->x && l->r && l->t && l->z ? 0 : ENGI_ENOMEM;
}

/* P = (I - w Dinv A) T, then the coarse matrix P' A P. */
static int coarsen(struct level *l, const struct csr *T, int32_t ncb, const int32_t *cblk,
		   struct csr *Ac)
{
	int rc;
	struct csr AT = {0}, AP = {0};
	if ((rc = spgemm(&l->A, T, l->A.n, NULL, &AT)) < 0)
		return rc;
	double w = 4.0 / 3.0 / l->lam;
	/* P = T - w Dinv (A T): Dinv mixes the rows of a node, whose
	 * patterns are merged */
	int32_t n = l->A.n;
	int32_t *cnt = engi_calloc((size_t)n + 1, sizeof(*cnt));
	int32_t *pos = engi_malloc(((size_t)AT.m + 1) * sizeof(*pos));
	if (!cnt || !pos) {
		rc = ENGI_ENOMEM;
		goto out;
	}
	for (int32_t c = 0; c < AT.m; c++)
		pos[c] = -1;
	/* union pattern per node block, shared by its rows */
	size_t tot = 0;
	for (int32_t k = 0; k < l->nblk; k++) {
		int32_t a = l->blk[k], wdt = l->blk[k + 1] - a, u = 0;
		for (int32_t i = a; i < a + wdt; i++) {
			for (int32_t q = AT.p[i]; q < AT.p[i + 1]; q++)
				if (pos[AT.j[q]] != k) {
					pos[AT.j[q]] = k;
					u++;
				}
			for (int32_t q = T->p[i]; q < T->p[i + 1]; q++)
				if (pos[T->j[q]] != k) {
					pos[T->j[q]] = k;
					u++;
				}
		}
		for (int32_t i = a; i < a + wdt; i++)
			cnt[i + 1] = u;
		tot += (size_t)u * (size_t)wdt;
	}
	if (tot >= INT32_MAX) {
		rc = ENGI_ETOOBIG;
		goto out;
	}
	if ((rc = csr_alloc(&l->P, n, AT.m, tot)) < 0)
		goto out;
	for (int32_t i = 0; i < n; i++)
		l->P.p[i + 1] = l->P.p[i] + cnt[i + 1];
	for (int32_t c = 0; c < AT.m; c++)
		pos[c] = -1;
	for (int32_t k = 0; k < l->nblk; k++) {
		int32_t a = l->blk[k], wdt = l->blk[k + 1] - a, u = 0;
		int32_t *cols = l->P.j + l->P.p[a];
		for (int32_t i = a; i < a + wdt; i++) {
			for (int32_t q = AT.p[i]; q < AT.p[i + 1]; q++)
				if (pos[AT.j[q]] < 0) {
					pos[AT.j[q]] = u;
					cols[u++] = AT.j[q];
				}
			for (int32_t q = T->p[i]; q < T->p[i + 1]; q++)
				if (pos[T->j[q]] < 0) {
					pos[T->j[q]] = u;
					cols[u++] = T->j[q];
				}
		}
		const double *d = l->dinv + l->doff[k];
		for (int32_t i = 0; i < wdt; i++) {
			double *row = l->P.x + l->P.p[a + i];
			if (i)
				memcpy(l->P.j + l->P.p[a + i], cols, (size_t)u * sizeof(*cols));
			memset(row, 0, (size_t)u * sizeof(*row));
			for (int32_t q = T->p[a + i]; q < T->p[a + i + 1]; q++)
				row[pos[T->j[q]]] += T->x[q];
			for (int32_t j = 0; j < wdt; j++) {
				double c = -w * d[i * wdt + j];
				if (c == 0)
					continue;
				for (int32_t q = AT.p[a + j]; q < AT.p[a + j + 1]; q++)
					row[pos[AT.j[q]]] += c * AT.x[q];
			}
		}
		for (int32_t t = 0; t < u; t++)
			pos[cols[t]] = -1;
	}
	if ((rc = transpose(&l->P, &l->R)) < 0)
		goto out;
	if ((rc = spgemm(&l->A, &l->P, l->A.n, NULL, &AP)) < 0)
		goto out;
	if (same_patterns(&l->R, ncb, cblk))
		rc = spgemm(&l->R, &AP, ncb, cblk, Ac);
	else
		rc = spgemm(&l->R, &AP, l->R.n, NULL, Ac);
out:
	engi_free(cnt);
	engi_free(pos);
	csr_free(&AT);
	csr_free(&AP);
	return rc;
}

static int coarsest(struct level *l)
{
	int32_t n = l->A.n;
	l->chol = engi_calloc((size_t)n * n + 1, sizeof(double));
	if (!l->chol)
		return ENGI_ENOMEM;
	for (int32_t i = 0; i < n; i++)
		for (int32_t q = l->A.p[i]; q < l->A.p[i + 1]; q++)
			l->chol[(size_t)i * n + l->A.j[q]] += l->A.x[q];
	if (n && LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', n, l->chol, n) != 0)
		return ENGI_EINVALID;
	double lo = HUGE_VAL, hi = 0;
	for (int32_t i = 0; i < n; i++) {
		double d = l->chol[(size_t)i * n + i];
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	if (n && !((lo / hi) * (lo / hi) >= AMG_RCOND_MIN))
		return ENGI_EINVALID;
	return 0;
}

void engi_fe_amg_free(struct engi_fe_amg *h)
{
	if (!h)
		return;
	for (int k = 0; k < AMG_MAX_LEVELS; k++) {
		struct level *l = &h->lev[k];
		csr_free(&l->A);
		csr_free(&l->P);
		csr_free(&l->R);
		fop_free(&l->Af);
		fop_free(&l->Pf);
		fop_free(&l->Rf);
		engi_free(l->blk);
		engi_free(l->dinv);
		engi_free(l->doff);
		engi_free(l->b);
		engi_free(l->x);
		engi_free(l->r);
		engi_free(l->t);
		engi_free(l->z);
		engi_free(l->chol);
	}
	engi_free(h);
}

static int amg_setup(const struct engi_fe_csc *a, const double *nullsp, int nns,
		     struct engi_fe_amg **out, struct engi_error *err)
{
	int rc;
	double *B = NULL;
	struct engi_fe_amg *h = engi_calloc(1, sizeof(*h));
	*out = NULL;
	if (!h)
		RAISE(err, ENGI_ENOMEM, "multigrid setup: out of memory");
	struct level *l = &h->lev[0];
	if (!a->blk || a->n >= INT32_MAX || nns < 1 || nns > AMG_MAX_BLOCK) {
		rc = engi_raise(err, ENGI_EINVALID, "multigrid setup: no node partition");
		goto fail;
	}
	for (size_t k = 0; k < a->nblk; k++)
		if (a->blk[k + 1] - a->blk[k] > AMG_MAX_BLOCK) {
			rc = engi_raise(err, ENGI_EINVALID,
					"multigrid setup: a node of %d equations",
					a->blk[k + 1] - a->blk[k]);
			goto fail;
		}
	if ((rc = full_of_upper(a, &l->A)) < 0)
		goto nomem;
	l->nblk = (int32_t)a->nblk;
	l->blk = engi_malloc((a->nblk + 1) * sizeof(*l->blk));
	if (!l->blk)
		goto nomem;
	memcpy(l->blk, a->blk, (a->nblk + 1) * sizeof(*l->blk));
	const double *Bl = nullsp;
	for (int k = 0;; k++) {
		l = &h->lev[k];
		h->nlev = k + 1;
		if ((rc = level_vectors(l)) < 0)
			goto nomem;
		if (l->A.n <= AMG_COARSEST || k == AMG_MAX_LEVELS - 1) {
			rc = coarsest(l);
			if (rc == ENGI_EINVALID) {
				rc = engi_raise(err, rc,
						"multigrid: coarse matrix not positive definite");
				goto fail;
			}
			if (rc < 0)
				goto nomem;
			break;
		}
		rc = block_diag(l);
		if (rc == ENGI_EINVALID) {
			rc = engi_raise(err, rc,
					"multigrid: a diagonal block is not positive definite");
			goto fail;
		}
		if (rc < 0)
			goto nomem;
		if (lambda_max(l) < 0) {
			rc = engi_raise(err, ENGI_EINVALID, "multigrid: no spectral estimate");
			goto fail;
		}
		/* the finest level by distance two: aggregates of 25 to 100
		 * nodes, a coarse level of 1,000 to 2,300 equations on the 70k
		 * lattices instead of 4,000 to 9,000 (a few more iterations,
		 * each much cheaper) */
		int32_t *agg = engi_malloc(((size_t)l->nblk + 1) * sizeof(*agg));
		int32_t *gp = NULL, *gj = NULL;
		if (!agg || (rc = node_graph(l, k == 0, &gp, &gj)) < 0) {
			engi_free(agg);
			goto nomem;
		}
		int32_t na = aggregate(l->nblk, gp, gj, agg);
		engi_free(gp);
		engi_free(gj);
		struct csr T = {0};
		double *Bc = NULL;
		int32_t *cblk = NULL;
		rc = tentative(l, Bl, nns, agg, na, &T, &Bc, &cblk);
		engi_free(agg);
		if (rc < 0)
			goto nomem;
		struct level *c = &h->lev[k + 1];
		c->nblk = na;
		c->blk = cblk;
		rc = coarsen(l, &T, na, cblk, &c->A);
		csr_free(&T);
		engi_free(B);
		B = Bc;
		Bl = B;
		if (rc < 0)
			goto nomem;
		if (fop_make(&l->A, l->nblk, l->blk, l->nblk, l->blk, &l->Af) < 0 ||
		    fop_make(&l->P, l->nblk, l->blk, c->nblk, c->blk, &l->Pf) < 0 ||
		    fop_make(&l->R, c->nblk, c->blk, l->nblk, l->blk, &l->Rf) < 0)
			goto nomem;
		csr_free(&l->P);
		csr_free(&l->R);
		if (c->A.n >= l->A.n) { /* no progress: stop here */
			rc = engi_raise(err, ENGI_EINVALID, "multigrid: coarsening stalled");
			goto fail;
		}
	}
	engi_free(B);
	*out = h;
	return 0;
nomem:
	rc = engi_raise(err, rc == ENGI_ETOOBIG ? rc : ENGI_ENOMEM,
			"multigrid setup: out of memory");
fail:
	engi_free(B);
	engi_fe_amg_free(h);
	return rc;
}

/* Chebyshev smoothing of A X = B from X (zero when x0 is 0), nv vectors. */
static void chebyshev(struct level *l, const double *B, double *X, int x0, int deg, int nv)
{
	size_t n = (size_t)l->A.n * nv;
	double hi = AMG_CHEB_HI * l->lam, lo = hi / AMG_CHEB_RATIO;
	double th = (hi + lo) / 2, de = (hi - lo) / 2, sg = th / de, rho = 1 / sg;
	double *r = l->r, *d = l->t, *z = l->z;
	if (x0)
		fop_apply(&l->Af, X, B, 1, -1, r, nv);
	else
		memcpy(r, B, n * sizeof(*r));
	dinv_apply(l, r, z, nv);
	AMG_PAR_FOR(n)
	for (size_t i = 0; i < n; i++)
		d[i] = z[i] / th;
	for (int k = 0; k < deg; k++) {
		if (x0 || k)
			AMG_PAR_FOR(n)
		for (size_t i = 0; i < n; i++)
			X[i] += d[i];
		else memcpy(X, d, n * sizeof(*X));
		if (k == deg - 1)
			break;
		fop_apply(&l->Af, d, r, 1, -1, r, nv); /* r -= A d */
		dinv_apply(l, r, z, nv);
		double rho1 = 1 / (2 * sg - rho);
		AMG_PAR_FOR(n)
		for (size_t i = 0; i < n; i++)
			d[i] = rho1 * rho * d[i] + 2 * rho1 / de * z[i];
		rho = rho1;
	}
}

/* l->x = V-cycle applied to l->b, level k down, nv vectors. */
static void vcycle(struct engi_fe_amg *h, int k, int nv)
{
	struct level *l = &h->lev[k];
	int32_t n = l->A.n;
	if (l->chol) {
		/* A = U'U, U upper in column-major: U' y = b, then U x = y */
		const double *u = l->chol;
		double *x = l->x;
		for (int32_t j = 0; j < n; j++) {
			const double *col = u + (size_t)j * n;
			for (int v = 0; v < nv; v++) {
				double t = l->b[(size_t)j * nv + v];
				for (int32_t i = 0; i < j; i++)
					t -= col[i] * x[(size_t)i * nv + v];
				x[(size_t)j * nv + v] = t / col[j];
			}
		}
		for (int32_t j = n - 1; j >= 0; j--) {
			const double *col = u + (size_t)j * n;
			for (int v = 0; v < nv; v++) {
				double t = x[(size_t)j * nv + v] / col[j];
				x[(size_t)j * nv + v] = t;
				for (int32_t i = 0; i < j; i++)
					x[(size_t)i * nv + v] -= col[i] * t;
			}
		}
		return;
	}
	struct level *c = &h->lev[k + 1];
	chebyshev(l, l->b, l->x, 0, AMG_CHEB_DEGREE, nv);
	fop_apply(&l->Af, l->x, l->b, 1, -1, l->r, nv);
	fop_apply(&l->Rf, l->r, NULL, 0, 1, c->b, nv);
	vcycle(h, k + 1, nv);
	fop_apply(&l->Pf, c->x, l->x, 1, 1, l->x, nv);
	chebyshev(l, l->b, l->x, 1, AMG_CHEB_DEGREE, nv);
}

static inline __attribute__((always_inline)) void resid_k(const struct csr *a, const double *X,
							  const double *B, double *Y, int32_t lo,
							  int32_t hi, const int nv)
{
	for (int32_t i = lo; i < hi; i++) {
		double acc[AMG_NV_MAX] = {0};
		for (int32_t q = a->p[i]; q < a->p[i + 1]; q++) {
			double v0 = a->x[q];
			const double *xj = X + (size_t)a->j[q] * nv;
			for (int v = 0; v < nv; v++)
				acc[v] += v0 * xj[v];
		}
		for (int v = 0; v < nv; v++) {
			size_t at = (size_t)i * nv + v;
			Y[at] = B ? B[at] - acc[v] : acc[v];
		}
	}
}

/* Y = B - A X (B NULL: Y = A X), the exact matrix, nv vectors */
static void resid_m(const struct csr *a, const double *X, const double *B, double *Y, int nv)
{
#define RESID_CALL(k) resid_k(a, X, B, Y, lo, hi, k)
#pragma omp parallel if (a->n > AMG_PAR_MIN)
	{
		int32_t lo, hi;
		share(a->n, &lo, &hi);
		AMG_NV_SWITCH(nv, RESID_CALL)
	}
#undef RESID_CALL
}

/* Per-vector dot products of interleaved X and Y into out[nv]. */
static void dots(const double *X, const double *Y, int32_t n, int nv, double *out)
{
	double s[AMG_NV_MAX] = {0};
#pragma omp parallel for schedule(static) reduction(+ : s[:AMG_NV_MAX]) if (n > AMG_PAR_MIN)
	for (int32_t i = 0; i < n; i++)
		for (int v = 0; v < nv; v++)
			s[v] += X[(size_t)i * nv + v] * Y[(size_t)i * nv + v];
	memcpy(out, s, (size_t)nv * sizeof(*out));
}

/* Interleaved vectors of nv lanes to nv - 1, in place. */
static void drop_last_lane(double *X, int32_t n, int nv)
{
	for (int32_t i = 0; i < n; i++)
		for (int v = 0; v < nv - 1; v++)
			X[(size_t)i * (nv - 1) + v] = X[(size_t)i * nv + v];
}

/* One lane of the lockstep conjugate gradients. */
struct lane {
	double nf, rz, prev, res;
	double mark_res; /* the residual at iteration mark_it */
	int it, restarts, mark_it;
	int state; /* LANE_* */
};
enum { LANE_RUN = 0, LANE_DONE, LANE_FAIL };

/* Conjugate gradients on nv interleaved right-hand sides B at once, one
 * V-cycle and one product with A per iteration for all of them; X gets the
 * solutions. Every lane ends LANE_DONE or LANE_FAIL. With probe, the last
 * lane is the probe, done at AMG_PROBE_OK. */
static int pcg_lanes(struct engi_fe_amg *h, double *B, double *X, int *nvp, int probe, double tol,
		     int maxit, struct lane *ln)
{
	struct level *l = &h->lev[0];
	int32_t n = l->A.n;
	int nv = *nvp;
	size_t len = (size_t)n * nv;
	double *R = engi_malloc((len + 1) * sizeof(*R));
	double *P = engi_calloc(len + 1, sizeof(*P));
	double *Q = engi_malloc((len + 1) * sizeof(*Q));
	if (!R || !P || !Q) {
		engi_free(R);
		engi_free(P);
		engi_free(Q);
		return ENGI_ENOMEM;
	}
	memcpy(R, B, len * sizeof(*R));
	memset(X, 0, len * sizeof(*X));
	double nf[AMG_NV_MAX], ltol[AMG_NV_MAX];
	dots(B, B, n, nv, nf);
	for (int v = 0; v < nv; v++)
		ltol[v] = probe && v == nv - 1 ? AMG_PROBE_OK : tol;
	for (int v = 0; v < nv; v++) {
		memset(&ln[v], 0, sizeof(ln[v]));
		ln[v].nf = sqrt(nf[v]);
		ln[v].prev = HUGE_VAL;
		ln[v].mark_res = 1;
		ln[v].state = ln[v].nf > 0 ? LANE_RUN : LANE_DONE;
	}
	for (int it = 0; it < maxit; it++) {
		int running = 0;
		for (int v = 0; v < nv; v++)
			running |= ln[v].state == LANE_RUN;
		if (!running)
			break;
		if (probe && nv > 1 && ln[nv - 1].state != LANE_RUN) {
			/* the probe has decided: the load cases go on alone */
			drop_last_lane(B, n, nv);
			drop_last_lane(X, n, nv);
			drop_last_lane(R, n, nv);
			drop_last_lane(P, n, nv);
			nv--;
			len = (size_t)n * nv;
			probe = 0;
			*nvp = nv;
		}
		memcpy(l->b, R, len * sizeof(*R));
		vcycle(h, 0, nv);
		const double *Z = l->x;
		double rz[AMG_NV_MAX], beta[AMG_NV_MAX], pq[AMG_NV_MAX], al[AMG_NV_MAX];
		dots(R, Z, n, nv, rz);
		for (int v = 0; v < nv; v++) {
			beta[v] = 0;
			if (ln[v].state != LANE_RUN)
				continue;
			if (!(rz[v] > 0)) { /* the preconditioner is not positive */
				ln[v].state = LANE_FAIL;
				continue;
			}
			beta[v] = ln[v].rz > 0 ? rz[v] / ln[v].rz : 0;
			ln[v].rz = rz[v];
		}
#pragma omp parallel for schedule(static) if (n > AMG_PAR_MIN)
		for (int32_t i = 0; i < n; i++)
			for (int v = 0; v < nv; v++) {
				size_t at = (size_t)i * nv + v;
				P[at] = ln[v].state == LANE_RUN ? Z[at] + beta[v] * P[at] : 0;
			}
		resid_m(&l->A, P, NULL, Q, nv);
		dots(P, Q, n, nv, pq);
		int check = 0;
		for (int v = 0; v < nv; v++) {
			al[v] = 0;
			if (ln[v].state != LANE_RUN)
				continue;
			if (!(pq[v] > 0)) { /* A is not positive definite */
				ln[v].state = LANE_FAIL;
				continue;
			}
			al[v] = ln[v].rz / pq[v];
		}
		double rr[AMG_NV_MAX] = {0};
#pragma omp parallel for schedule(static) reduction(+ : rr[:AMG_NV_MAX]) if (n > AMG_PAR_MIN)
		for (int32_t i = 0; i < n; i++)
			for (int v = 0; v < nv; v++) {
				size_t at = (size_t)i * nv + v;
				X[at] += al[v] * P[at];
				R[at] -= al[v] * Q[at];
				rr[v] += R[at] * R[at];
			}
		for (int v = 0; v < nv; v++)
			if (ln[v].state == LANE_RUN) {
				ln[v].it = it + 1;
				ln[v].res = sqrt(rr[v]) / ln[v].nf;
				check |= ln[v].res <= ltol[v];
				if (ln[v].it - ln[v].mark_it < AMG_STALL_IT)
					continue;
				if (!(ln[v].res < 0.1 * ln[v].mark_res)) {
					ln[v].state = LANE_FAIL; /* stalled */
					continue;
				}
				ln[v].mark_res = ln[v].res;
				ln[v].mark_it = ln[v].it;
			}
		if (!check)
			continue;
		/* a lane claims convergence: its true residual decides; one a
		 * restart no longer halves is the rounding floor of A x in
		 * double precision, accepted within AMG_FLOOR times tol */
		resid_m(&l->A, X, B, Q, nv);
		double tr[AMG_NV_MAX];
		dots(Q, Q, n, nv, tr);
		for (int v = 0; v < nv; v++) {
			if (ln[v].state != LANE_RUN || ln[v].res > ltol[v])
				continue;
			double res = sqrt(tr[v]) / ln[v].nf;
			ln[v].res = res;
			if (res <= ltol[v] ||
			    (res > 0.5 * ln[v].prev && res <= AMG_FLOOR * ltol[v])) {
				ln[v].state = LANE_DONE;
				continue;
			}
			if (++ln[v].restarts > 3) {
				ln[v].state = LANE_FAIL;
				continue;
			}
			ln[v].prev = res;
			ln[v].rz = 0; /* restart from the true residual */
			for (int32_t i = 0; i < n; i++)
				R[(size_t)i * nv + v] = Q[(size_t)i * nv + v];
		}
	}
	for (int v = 0; v < nv; v++)
		if (ln[v].state == LANE_RUN)
			ln[v].state = LANE_FAIL;
	engi_free(R);
	engi_free(P);
	engi_free(Q);
	return 0;
}

static int amg_pcg(struct engi_fe_amg *h, double *b, size_t nrhs, double tol, int maxit,
		   struct engi_fe_pcg_stats *st)
{
	struct level *l = &h->lev[0];
	int32_t n = l->A.n;
	size_t nb = (size_t)n + 1;
	double *B = engi_malloc(nb * AMG_NV_MAX * sizeof(*B));
	double *X = engi_malloc(nb * AMG_NV_MAX * sizeof(*X));
	int rc = 0, probed = 0;
	if (!B || !X) {
		rc = ENGI_ENOMEM;
		goto out;
	}
	/* load cases in batches, the probe riding with the first: a random
	 * right-hand side, which a singular A leaves with a residual of about
	 * 1 / sqrt(n) that no iteration removes */
	for (size_t c0 = 0; c0 < nrhs && rc == 0; c0 += AMG_NV_MAX - 1) {
		int nr = (int)(nrhs - c0 < AMG_NV_MAX - 1 ? nrhs - c0 : AMG_NV_MAX - 1);
		int nv = nr + !probed;
		for (int32_t i = 0; i < n; i++)
			for (int v = 0; v < nr; v++)
				B[(size_t)i * nv + v] = b[(c0 + (size_t)v) * n + (size_t)i];
		if (!probed) {
			uint32_t s = 2463534242u;
			for (int32_t i = 0; i < n; i++) {
				s ^= s << 13;
				s ^= s >> 17;
				s ^= s << 5;
				B[(size_t)i * nv + nr] = (double)(s >> 8) / 16777216.0 - 0.5;
			}
		}
		struct lane ln[AMG_NV_MAX];
		rc = pcg_lanes(h, B, X, &nv, !probed, tol, maxit, ln); /* nv: the lanes left */
		if (rc < 0)
			break;
		for (int v = 0; v < nr; v++) {
			if (st) {
				st->iterations =
				    ln[v].it > st->iterations ? ln[v].it : st->iterations;
				st->residual = ln[v].res > st->residual ? ln[v].res : st->residual;
			}
			if (ln[v].state != LANE_DONE)
				rc = 1;
		}
		if (!probed) {
			probed = 1;
			if (st) {
				st->probe_residual = ln[nr].res;
				st->probe_iterations = ln[nr].it;
			}
			if (rc == 0 && ln[nr].state != LANE_DONE)
				rc = 2; /* singular, or too ill-conditioned to tell */
		}
		if (rc == 0)
			for (int32_t i = 0; i < n; i++)
				for (int v = 0; v < nr; v++)
					b[(c0 + (size_t)v) * n + (size_t)i] = X[(size_t)i * nv + v];
	}
out:
	engi_free(B);
	engi_free(X);
	return rc;
}

/* The loops here are short (one matrix product, one V-cycle level), so a
 * team thread that the system has descheduled stalls the other at every
 * barrier: on a busy machine two threads can be slower than one. Teams take
 * the thread count they are given (OMP_NUM_THREADS, or the runner's share
 * of the node); OMP_DYNAMIC=true lets libgomp size them by the cores the
 * 15-minute load average leaves free, which on an otherwise idle node after
 * a busy quarter of an hour halves the speed. */
static int dynamic_teams(void)
{
	return omp_get_dynamic();
}

int engi_fe_amg_setup(const struct engi_fe_csc *a, const double *nullsp, int nns,
		      struct engi_fe_amg **out, struct engi_error *err)
{
	int dyn = dynamic_teams();
	int rc = amg_setup(a, nullsp, nns, out, err);
	omp_set_dynamic(dyn);
	return rc;
}

int engi_fe_amg_pcg(struct engi_fe_amg *h, double *b, size_t nrhs, double tol, int maxit,
		    struct engi_fe_pcg_stats *st)
{
	int dyn = dynamic_teams();
	int rc = amg_pcg(h, b, nrhs, tol, maxit, st);
	omp_set_dynamic(dyn);
	return rc;
}

/* Breadth-first levels of the node graph from node s: lev[node], the last
 * level returned, the farthest node of the last level in *far. */
static int32_t bfs(const int32_t *gp, const int32_t *gj, int32_t nb, int32_t s, int32_t *lev,
		   int32_t *queue, int32_t *far)
{
	for (int32_t k = 0; k < nb; k++)
		lev[k] = -1;
	int32_t head = 0, tail = 0, last = 0;
	lev[s] = 0;
	queue[tail++] = s;
	*far = s;
	while (head < tail) {
		int32_t k = queue[head++];
		if (lev[k] > last ||
		    (lev[k] == last && gp[k + 1] - gp[k] < gp[*far + 1] - gp[*far])) {
			last = lev[k];
			*far = k; /* of the last level, the one of least degree */
		}
		for (int32_t q = gp[k]; q < gp[k + 1]; q++)
			if (lev[gj[q]] < 0) {
				lev[gj[q]] = lev[k] + 1;
				queue[tail++] = gj[q];
			}
	}
	return tail < nb ? -1 : last; /* -1: not connected */
}

double engi_fe_csc_band_flops(const struct engi_fe_csc *a)
{
	if (!a->blk || !a->nblk || a->nblk >= INT32_MAX)
		return 0;
	int32_t nb = (int32_t)a->nblk;
	double flops = 0;
	int32_t *nodeof = engi_malloc((a->n + 1) * sizeof(*nodeof));
	int32_t *mark = engi_malloc(((size_t)nb + 1) * sizeof(*mark));
	int32_t *gp = engi_calloc((size_t)nb + 2, sizeof(*gp));
	int32_t *lev = engi_malloc(((size_t)nb + 1) * sizeof(*lev));
	int32_t *queue = engi_malloc(((size_t)nb + 1) * sizeof(*queue));
	int32_t *gj = NULL;
	double *width = NULL;
	if (!nodeof || !mark || !gp || !lev || !queue)
		goto out;
	for (int32_t k = 0; k < nb; k++)
		for (int32_t i = a->blk[k]; i < a->blk[k + 1]; i++)
			nodeof[i] = k;
	/* undirected node graph: each lower neighbour once per node, both ways */
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t k = 0; k < nb; k++)
			mark[k] = -1;
		for (int32_t k = 0; k < nb; k++) {
			mark[k] = k;
			for (int32_t j = a->blk[k]; j < a->blk[k + 1]; j++)
				for (int32_t q = a->colptr[j]; q < a->colptr[j + 1]; q++) {
					int32_t o = nodeof[a->rowind[q]];
					if (mark[o] == k)
						continue;
					mark[o] = k;
					if (pass) {
						gj[gp[k + 1]++] = o;
						gj[gp[o + 1]++] = k;
					} else {
						gp[k + 1]++;
						gp[o + 1]++;
					}
				}
		}
		if (!pass) {
			for (int32_t k = 0; k < nb; k++)
				gp[k + 1] += gp[k];
			gj = engi_malloc(((size_t)gp[nb] + 1) * sizeof(*gj));
			if (!gj)
				goto out;
			/* gp[k + 1] now counts up from gp[k]: shift down */
			for (int32_t k = nb; k > 0; k--)
				gp[k] = gp[k - 1];
			gp[0] = 0;
		}
	}
	int32_t far, far2;
	if (bfs(gp, gj, nb, 0, lev, queue, &far) < 0)
		goto out; /* a disconnected model: leave it to the direct solver */
	int32_t last = bfs(gp, gj, nb, far, lev, queue, &far2);
	width = engi_calloc((size_t)last + 2, sizeof(*width));
	if (!width)
		goto out;
	for (int32_t k = 0; k < nb; k++)
		width[lev[k]] += a->blk[k + 1] - a->blk[k];
	/* a column of level l reaches the rest of its level and the next */
	for (int32_t l = 0; l <= last; l++) {
		double b = width[l] + width[l + 1];
		flops += width[l] * b * b;
	}
out:
	engi_free(nodeof);
	engi_free(mark);
	engi_free(gp);
	engi_free(gj);
	engi_free(lev);
	engi_free(queue);
	engi_free(width);
	return flops;
}
