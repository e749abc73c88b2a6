/*
 * Exact orientation predicates: a double evaluation under a static error
 * bound, else an exact evaluation by expansion arithmetic (two_sum,
 * two_product with fma, grow and scale of non-overlapping expansions; see
 * Shewchuk, "Adaptive precision floating-point arithmetic and fast robust
 * geometric predicates", 1997). Over- or underflow of the inputs (beyond
 * about 1e100 or below 1e-100) is outside its guarantee of exactness, not
 * of memory safety: the expansions never outgrow their arrays. The mesh
 * kernels bound coordinates (ENGI_MESH_COORD_MAX); the hull of the oriented
 * box also snaps them to a grid so that nothing underflows.
 */
#include "predicates.h"

#include <float.h>
#include <math.h>

/* Room for the longest expansion any caller forms even when no component
 * vanishes (non-finite or underflowing inputs keep every component): 334
 * terms for the sum of orient3d's three products, each of 1 + 22 * 5. */
#define EXP_MAX 336

static inline void two_sum(double a, double b, double *x, double *y)
{
	double s = a + b, bv = s - a, av = s - bv;
	*x = s;
	*y = (a - av) + (b - bv);
}

static inline void two_product(double a, double b, double *x, double *y)
{
	double p = a * b;
	*x = p;
	*y = fma(a, b, -p);
}

/* h = e + b; returns the length (zero components dropped). */
static int grow(int elen, const double *e, double b, double *h)
{
	double q = b;
	int n = 0;
	for (int i = 0; i < elen; i++) {
		double s, t;
		two_sum(q, e[i], &s, &t);
		if (t != 0)
			h[n++] = t;
		q = s;
	}
	if (q != 0 || n == 0)
		h[n++] = q;
	return n;
}

/* h = e + f */
static int sum(int elen, const double *e, int flen, const double *f, double *h)
{
	double a[EXP_MAX], b[EXP_MAX];
	int n = elen;
	for (int i = 0; i < elen; i++)
		a[i] = e[i];
	for (int j = 0; j < flen; j++) {
		n = grow(n, a, f[j], b);
		for (int i = 0; i < n; i++)
			a[i] = b[i];
	}
	for (int i = 0; i < n; i++)
		h[i] = a[i];
	return n;
}

/* h = e * b */
static int scale(int elen, const double *e, double b, double *h)
{
	double acc[EXP_MAX], tmp[EXP_MAX];
	int n = 1;
	acc[0] = 0;
	for (int i = 0; i < elen; i++) {
		double p[2];
		two_product(e[i], b, &p[1], &p[0]);
		n = sum(n, acc, 2, p, tmp);
		for (int k = 0; k < n; k++)
			acc[k] = tmp[k];
	}
	for (int k = 0; k < n; k++)
		h[k] = acc[k];
	return n;
}

/* h = e * f */
static int mul(int elen, const double *e, int flen, const double *f, double *h)
{
	double acc[EXP_MAX], part[EXP_MAX], tmp[EXP_MAX];
	int n = 1;
	acc[0] = 0;
	for (int j = 0; j < flen; j++) {
		int m = scale(elen, e, f[j], part);
		n = sum(n, acc, m, part, tmp);
		for (int k = 0; k < n; k++)
			acc[k] = tmp[k];
	}
	for (int k = 0; k < n; k++)
		h[k] = acc[k];
	return n;
}

static int sign_of(int n, const double *e)
{
	/* the largest component (the last non-zero one) decides */
	for (int i = n - 1; i >= 0; i--)
		if (e[i] != 0)
			return e[i] > 0 ? 1 : -1;
	return 0;
}

/* x - y as a two-term expansion (low, high). */
static inline void diff(double x, double y, double out[2])
{
	double s = x - y, bv = x - s, av = s + bv;
	out[1] = s;
	out[0] = (x - av) + (bv - y);
}

static int orient3d_exact(const double a[3], const double b[3], const double c[3],
			  const double d[3])
{
	double A[3][2], B[3][2], C[3][2];
	for (int k = 0; k < 3; k++) {
		diff(a[k], d[k], A[k]);
		diff(b[k], d[k], B[k]);
		diff(c[k], d[k], C[k]);
	}
	/* det = A0 (B1 C2 - B2 C1) + A1 (B2 C0 - B0 C2) + A2 (B0 C1 - B1 C0) */
	double t1[EXP_MAX], t2[EXP_MAX], m[EXP_MAX], r[EXP_MAX], acc[EXP_MAX], tmp[EXP_MAX];
	int n = 1;
	acc[0] = 0;
	static const int idx[3][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}};
	for (int t = 0; t < 3; t++) {
		int i = idx[t][0], j = idx[t][1], k = idx[t][2];
		int n1 = mul(2, B[j], 2, C[k], t1);
		int n2 = mul(2, B[k], 2, C[j], t2);
		for (int q = 0; q < n2; q++)
			t2[q] = -t2[q];
		int nm = sum(n1, t1, n2, t2, m);
		int nr = mul(2, A[i], nm, m, r);
		n = sum(n, acc, nr, r, tmp);
		for (int q = 0; q < n; q++)
			acc[q] = tmp[q];
	}
	return sign_of(n, acc);
}

int engi_pred_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
	double adx = a[0] - d[0], bdx = b[0] - d[0], cdx = c[0] - d[0];
	double ady = a[1] - d[1], bdy = b[1] - d[1], cdy = c[1] - d[1];
	double adz = a[2] - d[2], bdz = b[2] - d[2], cdz = c[2] - d[2];
	double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
	double cdxady = cdx * ady, adxcdy = adx * cdy;
	double adxbdy = adx * bdy, bdxady = bdx * ady;
	double det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
	double perm = (fabs(bdxcdy) + fabs(cdxbdy)) * fabs(adz) +
		      (fabs(cdxady) + fabs(adxcdy)) * fabs(bdz) +
		      (fabs(adxbdy) + fabs(bdxady)) * fabs(cdz);
	const double eps = DBL_EPSILON / 2;
	double bound = (7.0 + 56.0 * eps) * eps * perm;
	if (det > bound)
		return 1;
	if (-det > bound)
		return -1;
	if (perm == 0)
		return 0;
	return orient3d_exact(a, b, c, d);
}

int engi_pred_orient2d(const double a[3], const double b[3], const double c[3], int i, int j)
{
	double l = (b[i] - a[i]) * (c[j] - a[j]), r = (b[j] - a[j]) * (c[i] - a[i]);
	double det = l - r, perm = fabs(l) + fabs(r);
	const double eps = DBL_EPSILON / 2;
	double bound = (3.0 + 16.0 * eps) * eps * perm;
	if (det > bound)
		return 1;
	if (-det > bound)
		return -1;
	if (perm == 0)
		return 0;
	double B[2][2], C[2][2];
	diff(b[i], a[i], B[0]);
	diff(b[j], a[j], B[1]);
	diff(c[i], a[i], C[0]);
	diff(c[j], a[j], C[1]);
	double t1[EXP_MAX], t2[EXP_MAX], s[EXP_MAX];
	int n1 = mul(2, B[0], 2, C[1], t1);
	int n2 = mul(2, B[1], 2, C[0], t2);
	for (int q = 0; q < n2; q++)
		t2[q] = -t2[q];
	int n = sum(n1, t1, n2, t2, s);
	return sign_of(n, s);
}
