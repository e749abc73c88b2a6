/*
 * Linear-elastic solids: C3D4 (one point, exact), C3D10 (four-point rule,
 * as CalculiX), C3D8 (2x2x2 Gauss, as CalculiX's full-integration C3D8).
 * Face pressures become consistent nodal forces by face quadrature; the
 * outward side of a face is the side away from the element's centroid, so
 * face node order in a deck does not matter.
 */
#include "engi/fe.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define NMAX 20 /* most nodes per element */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int engi_fe_etype_nodes(enum engi_fe_etype t)
{
	static const int n[] = {4, 10, 8};
	return t < ENGI_FE_ETYPE_COUNT ? n[t] : 0;
}

const char *engi_fe_etype_name(enum engi_fe_etype t)
{
	static const char *n[] = {"C3D4", "C3D10", "C3D8"};
	return t < ENGI_FE_ETYPE_COUNT ? n[t] : "?";
}

void engi_fe_solid_init(struct engi_fe_solid *m)
{
	memset(m, 0, sizeof(*m));
}

void engi_fe_solid_release(struct engi_fe_solid *m)
{
	engi_free(m->xyz);
	engi_free(m->node_id);
	engi_free(m->etype);
	engi_free(m->off);
	engi_free(m->conn);
	engi_free(m->elem_id);
	engi_free(m->young);
	engi_free(m->poisson);
	engi_free(m->bc);
	engi_free(m->force);
	engi_free(m->press);
	engi_fe_solid_init(m);
}

void engi_fe_solid_result_init(struct engi_fe_solid_result *r)
{
	memset(r, 0, sizeof(*r));
}

void engi_fe_solid_result_release(struct engi_fe_solid_result *r)
{
	engi_free(r->u);
	engi_free(r->reaction);
	engi_fe_solid_result_init(r);
}

/* Shape functions and their natural derivatives at (r, s, t). */
static void shape(enum engi_fe_etype t, const double x[3], double *N, double (*dN)[3])
{
	double r = x[0], s = x[1], u = x[2];
	switch (t) {
	case ENGI_FE_C3D4: {
		double L0 = 1 - r - s - u;
		N[0] = L0, N[1] = r, N[2] = s, N[3] = u;
		static const double d[4][3] = {{-1, -1, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
		memcpy(dN, d, sizeof(d));
		break;
	}
	case ENGI_FE_C3D10: {
		double L[4] = {1 - r - s - u, r, s, u};
		/* dL/d(r,s,t) */
		static const double dL[4][3] = {{-1, -1, -1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
		/* CalculiX / Abaqus edge order: 5:1-2 6:2-3 7:3-1 8:1-4 9:2-4 10:3-4 */
		static const int ed[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
		for (int i = 0; i < 4; i++) {
			N[i] = L[i] * (2 * L[i] - 1);
			for (int k = 0; k < 3; k++)
				dN[i][k] = (4 * L[i] - 1) * dL[i][k];
		}
		for (int m = 0; m < 6; m++) {
			int a = ed[m][0], b = ed[m][1];
			N[4 + m] = 4 * L[a] * L[b];
			for (int k = 0; k < 3; k++)
				dN[4 + m][k] = 4 * (dL[a][k] * L[b] + L[a] * dL[b][k]);
		}
		break;
	}
	case ENGI_FE_C3D8: {
		static const double c[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
					       {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
		for (int i = 0; i < 8; i++) {
			double a = 1 + c[i][0] * r, b = 1 + c[i][1] * s, g = 1 + c[i][2] * u;
			N[i] = a * b * g / 8;
			dN[i][0] = c[i][0] * b * g / 8;
			dN[i][1] = a * c[i][1] * g / 8;
			dN[i][2] = a * b * c[i][2] / 8;
		}
		break;
	}
	default:
		BUG_ON(1);
	}
}

/* Integration points (natural coordinates) and weights. */
static int quadrature(enum engi_fe_etype t, double (*pt)[3], double *w)
{
	switch (t) {
	case ENGI_FE_C3D4:
		pt[0][0] = pt[0][1] = pt[0][2] = 0.25;
		w[0] = 1.0 / 6;
		return 1;
	case ENGI_FE_C3D10: {
		const double a = 0.5854101966249685, b = 0.1381966011250105;
		const double p[4][3] = {{b, b, b}, {a, b, b}, {b, a, b}, {b, b, a}};
		for (int i = 0; i < 4; i++) {
			memcpy(pt[i], p[i], sizeof(p[i]));
			w[i] = 1.0 / 24;
		}
		return 4;
	}
	case ENGI_FE_C3D8: {
		const double g = 1 / sqrt(3.0);
		int k = 0;
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				for (int l = 0; l < 2; l++) {
					pt[k][0] = i ? g : -g;
					pt[k][1] = j ? g : -g;
					pt[k][2] = l ? g : -g;
					w[k++] = 1;
				}
		return 8;
	}
	default:
		BUG_ON(1);
	}
	return 0;
}

/* Physical derivatives dNx (n x 3) and det J at a point; 0 on a bad element. */
static int phys_deriv(const struct engi_fe_solid *m, size_t e, const double xi[3], int n,
		      double (*dNx)[3], double *detj)
{
	double N[NMAX], dN[NMAX][3], J[3][3] = {{0}};
	shape((enum engi_fe_etype)m->etype[e], xi, N, dN);
	for (int i = 0; i < n; i++) {
		const double *x = m->xyz + 3 * (size_t)m->conn[m->off[e] + (size_t)i];
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				J[a][b] += dN[i][a] * x[b]; /* J[a][b] = d x_b / d xi_a */
	}
	double d = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
		   J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
		   J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
	*detj = d;
	if (!(d > 0))
		return 0;
	double I[3][3];
	I[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / d;
	I[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / d;
	I[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / d;
	I[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / d;
	I[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / d;
	I[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / d;
	I[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / d;
	I[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / d;
	I[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / d;
	/* dN/dx_b = sum_a (J^-1)[b][a] dN/dxi_a */
	for (int i = 0; i < n; i++)
		for (int b = 0; b < 3; b++)
			dNx[i][b] = I[b][0] * dN[i][0] + I[b][1] * dN[i][1] + I[b][2] * dN[i][2];
	return 1;
}

static void elastic_d(double E, double nu, double D[6][6])
{
	memset(D, 0, 36 * sizeof(double));
	double f = E / ((1 + nu) * (1 - 2 * nu));
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			D[i][j] = f * nu;
		D[i][i] = f * (1 - nu);
		D[3 + i][3 + i] = E / (2 * (1 + nu));
	}
}

/* B (6 x 3n): strains xx yy zz, gamma xy yz zx */
static void bmat(int n, double (*dNx)[3], double *B)
{
	int nd = 3 * n;
	memset(B, 0, 6 * (size_t)nd * sizeof(double));
	for (int i = 0; i < n; i++) {
		double x = dNx[i][0], y = dNx[i][1], z = dNx[i][2];
		int c = 3 * i;
		B[0 * nd + c] = x;
		B[1 * nd + c + 1] = y;
		B[2 * nd + c + 2] = z;
		B[3 * nd + c] = y, B[3 * nd + c + 1] = x;
		B[4 * nd + c + 1] = z, B[4 * nd + c + 2] = y;
		B[5 * nd + c] = z, B[5 * nd + c + 2] = x;
	}
}

/* Element stiffness (3n x 3n, row-major); 0 on a degenerate element. */
static int element_k(const struct engi_fe_solid *m, size_t e, double *ke)
{
	enum engi_fe_etype t = (enum engi_fe_etype)m->etype[e];
	int n = engi_fe_etype_nodes(t), nd = 3 * n;
	double pt[8][3], w[8], dNx[NMAX][3], D[6][6], B[6 * 3 * NMAX], DB[6 * 3 * NMAX], detj;
	int np = quadrature(t, pt, w);
	elastic_d(m->young[e], m->poisson[e], D);
	memset(ke, 0, (size_t)nd * (size_t)nd * sizeof(double));
	for (int g = 0; g < np; g++) {
		if (!phys_deriv(m, e, pt[g], n, dNx, &detj))
			return 0;
		bmat(n, dNx, B);
		double wd = w[g] * detj;
		for (int i = 0; i < 6; i++)
			for (int c = 0; c < nd; c++) {
				double s = 0;
				for (int k = 0; k < 6; k++)
					s += D[i][k] * B[k * nd + c];
				DB[i * nd + c] = s * wd;
			}
		for (int a = 0; a < nd; a++)
			for (int b = a; b < nd; b++) {
				double s = 0;
				for (int k = 0; k < 6; k++)
					s += B[k * nd + a] * DB[k * nd + b];
				ke[a * nd + b] += s;
			}
	}
	for (int a = 0; a < nd; a++)
		for (int b = 0; b < a; b++)
			ke[a * nd + b] = ke[b * nd + a];
	return 1;
}

/* Local node numbers of face f (1-based), CalculiX numbering; count in *nf. */
static const int *face_nodes(enum engi_fe_etype t, int f, int *nf)
{
	static const int tet4[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
	static const int tet10[4][6] = {
	    {0, 1, 2, 4, 5, 6}, {0, 3, 1, 7, 8, 4}, {1, 3, 2, 8, 9, 5}, {2, 3, 0, 9, 7, 6}};
	static const int hex8[6][4] = {{0, 1, 2, 3}, {4, 7, 6, 5}, {0, 4, 5, 1},
				       {1, 5, 6, 2}, {2, 6, 7, 3}, {3, 7, 4, 0}};
	if (t == ENGI_FE_C3D8) {
		if (f < 1 || f > 6)
			return NULL;
		*nf = 4;
		return hex8[f - 1];
	}
	if (f < 1 || f > 4)
		return NULL;
	*nf = t == ENGI_FE_C3D4 ? 3 : 6;
	return t == ENGI_FE_C3D4 ? tet4[f - 1] : tet10[f - 1];
}

/* Adds the consistent nodal forces of a pressure on a face to f. */
static int pressure_load(const struct engi_fe_solid *m, const struct engi_fe_pressure *p, double *f)
{
	enum engi_fe_etype t = (enum engi_fe_etype)m->etype[p->elem];
	int nf = 0;
	const int *fn = face_nodes(t, p->face, &nf);
	if (!fn)
		return 0;
	const uint32_t *en = m->conn + m->off[p->elem];
	int n = engi_fe_etype_nodes(t);
	double cen[3] = {0}, fc[3] = {0};
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			cen[k] += m->xyz[3 * (size_t)en[i] + (size_t)k] / n;
	for (int i = 0; i < nf; i++)
		for (int k = 0; k < 3; k++)
			fc[k] += m->xyz[3 * (size_t)en[fn[i]] + (size_t)k] / nf;
	/* face quadrature: triangles a degree-2 three-point rule (exact for
	 * flat quadratic faces), quadrilaterals 2x2 Gauss */
	double qp[4][2], qw[4];
	int nq;
	if (nf == 4) {
		const double g = 1 / sqrt(3.0);
		for (int i = 0; i < 4; i++) {
			qp[i][0] = (i & 1) ? g : -g;
			qp[i][1] = (i & 2) ? g : -g;
			qw[i] = 1;
		}
		nq = 4;
	} else {
		const double q[3][2] = {{1.0 / 6, 1.0 / 6}, {2.0 / 3, 1.0 / 6}, {1.0 / 6, 2.0 / 3}};
		for (int i = 0; i < 3; i++) {
			qp[i][0] = q[i][0];
			qp[i][1] = q[i][1];
			qw[i] = 1.0 / 6;
		}
		nq = 3;
	}
	double sign = 0;
	for (int g = 0; g < nq; g++) {
		double r = qp[g][0], s = qp[g][1], N[8], dN[8][2];
		if (nf == 3) {
			N[0] = 1 - r - s, N[1] = r, N[2] = s;
			double d[3][2] = {{-1, -1}, {1, 0}, {0, 1}};
			memcpy(dN, d, sizeof(d));
		} else if (nf == 6) {
			double L[3] = {1 - r - s, r, s};
			double dL[3][2] = {{-1, -1}, {1, 0}, {0, 1}};
			static const int ed[3][2] = {{0, 1}, {1, 2}, {2, 0}};
			for (int i = 0; i < 3; i++) {
				N[i] = L[i] * (2 * L[i] - 1);
				for (int k = 0; k < 2; k++)
					dN[i][k] = (4 * L[i] - 1) * dL[i][k];
			}
			for (int i = 0; i < 3; i++) {
				int a = ed[i][0], b = ed[i][1];
				N[3 + i] = 4 * L[a] * L[b];
				for (int k = 0; k < 2; k++)
					dN[3 + i][k] = 4 * (dL[a][k] * L[b] + L[a] * dL[b][k]);
			}
		} else {
			static const double c[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
			for (int i = 0; i < 4; i++) {
				N[i] = (1 + c[i][0] * r) * (1 + c[i][1] * s) / 4;
				dN[i][0] = c[i][0] * (1 + c[i][1] * s) / 4;
				dN[i][1] = (1 + c[i][0] * r) * c[i][1] / 4;
			}
		}
		double tr[3] = {0}, ts[3] = {0};
		for (int i = 0; i < nf; i++)
			for (int k = 0; k < 3; k++) {
				double x = m->xyz[3 * (size_t)en[fn[i]] + (size_t)k];
				tr[k] += dN[i][0] * x;
				ts[k] += dN[i][1] * x;
			}
		double nrm[3] = {tr[1] * ts[2] - tr[2] * ts[1], tr[2] * ts[0] - tr[0] * ts[2],
				 tr[0] * ts[1] - tr[1] * ts[0]};
		if (sign == 0) {
			double d = 0;
			for (int k = 0; k < 3; k++)
				d += nrm[k] * (fc[k] - cen[k]);
			sign = d >= 0 ? 1 : -1;
		}
		for (int i = 0; i < nf; i++)
			for (int k = 0; k < 3; k++)
				f[3 * (size_t)en[fn[i]] + (size_t)k] -=
				    sign * p->value * qw[g] * N[i] * nrm[k];
	}
	return 1;
}

int engi_fe_solid_stress(const struct engi_fe_solid *m, const double *u, size_t e, double s[6],
			 double *mises)
{
	enum engi_fe_etype t = (enum engi_fe_etype)m->etype[e];
	int n = engi_fe_etype_nodes(t), nd = 3 * n;
	double pt[8][3], w[8], dNx[NMAX][3], D[6][6], B[6 * 3 * NMAX], ue[3 * NMAX], detj;
	int np = quadrature(t, pt, w);
	elastic_d(m->young[e], m->poisson[e], D);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			ue[3 * i + k] = u[3 * (size_t)m->conn[m->off[e] + (size_t)i] + (size_t)k];
	memset(s, 0, 6 * sizeof(double));
	for (int g = 0; g < np; g++) {
		if (!phys_deriv(m, e, pt[g], n, dNx, &detj))
			return ENGI_EINVALID;
		bmat(n, dNx, B);
		double eps[6] = {0};
		for (int i = 0; i < 6; i++)
			for (int c = 0; c < nd; c++)
				eps[i] += B[i * nd + c] * ue[c];
		for (int i = 0; i < 6; i++)
			for (int k = 0; k < 6; k++)
				s[i] += D[i][k] * eps[k] / np;
	}
	if (mises) {
		double a = s[0] - s[1], b = s[1] - s[2], c = s[2] - s[0];
		*mises = sqrt(0.5 * (a * a + b * b + c * c) +
			      3 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]));
	}
	return 0;
}

/* Stress of element e at natural coordinates xi; 0 on a bad element. */
static int stress_at(const struct engi_fe_solid *m, const double *u, size_t e, const double xi[3],
		     double s[6])
{
	enum engi_fe_etype t = (enum engi_fe_etype)m->etype[e];
	int n = engi_fe_etype_nodes(t), nd = 3 * n;
	double dNx[NMAX][3], D[6][6], B[6 * 3 * NMAX], eps[6] = {0}, detj;
	if (!phys_deriv(m, e, xi, n, dNx, &detj))
		return 0;
	bmat(n, dNx, B);
	for (int i = 0; i < 6; i++)
		for (int c = 0; c < nd; c++)
			eps[i] +=
			    B[i * nd + c] *
			    u[3 * (size_t)m->conn[m->off[e] + (size_t)(c / 3)] + (size_t)(c % 3)];
	elastic_d(m->young[e], m->poisson[e], D);
	for (int i = 0; i < 6; i++) {
		s[i] = 0;
		for (int k = 0; k < 6; k++)
			s[i] += D[i][k] * eps[k];
	}
	return 1;
}

int engi_fe_solid_stress_node(const struct engi_fe_solid *m, const double *u, size_t e, int j,
			      double s[6])
{
	static const double c8[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
					{-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
	static const double tet[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	static const int ed[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
	enum engi_fe_etype t = (enum engi_fe_etype)m->etype[e];
	if (j < 0 || j >= engi_fe_etype_nodes(t))
		return ENGI_EINVALID;
	if (t != ENGI_FE_C3D8) {
		/* the strain of a straight-sided tetrahedron is linear (C3D10) or
		 * constant (C3D4): the value at the node is what a linear fit
		 * through the integration points gives there */
		double xi[3];
		for (int k = 0; k < 3; k++)
			xi[k] =
			    j < 4 ? tet[j][k] : (tet[ed[j - 4][0]][k] + tet[ed[j - 4][1]][k]) / 2;
		return stress_at(m, u, e, xi, s) ? 0 : ENGI_EINVALID;
	}
	/* trilinear extrapolation of the 2x2x2 point values: in coordinates
	 * where the points sit at +-1, the corners sit at +-sqrt(3) */
	double pt[8][3], w[8], sg[6];
	int np = quadrature(t, pt, w);
	memset(s, 0, 6 * sizeof(double));
	for (int g = 0; g < np; g++) {
		if (!stress_at(m, u, e, pt[g], sg))
			return ENGI_EINVALID;
		double f = 1;
		for (int k = 0; k < 3; k++)
			f *= (1 + (pt[g][k] > 0 ? 1 : -1) * c8[j][k] * sqrt(3.0)) / 2;
		for (int i = 0; i < 6; i++)
			s[i] += f * sg[i];
	}
	return 0;
}

int engi_fe_solid_solve(const struct engi_fe_solid *m, const struct engi_fe_solve_opts *opts,
			struct engi_fe_solid_result *r, struct engi_error *err)
{
	double t0 = now_s();
	size_t ndof = 3 * m->nnodes;
	int rc = ENGI_ENOMEM;
	int64_t *eq = engi_malloc((ndof ? ndof : 1) * sizeof(*eq));
	double *ubar = engi_calloc(ndof ? ndof : 1, sizeof(*ubar));
	double *fext = engi_calloc(ndof ? ndof : 1, sizeof(*fext));
	double *ke = engi_malloc(9 * NMAX * NMAX * sizeof(*ke));
	double *rhs = NULL;
	struct engi_fe_csc a;
	engi_fe_csc_init(&a);
	engi_fe_solid_result_release(r);
	r->u = engi_calloc(ndof ? ndof : 1, sizeof(*r->u));
	r->reaction = engi_calloc(ndof ? ndof : 1, sizeof(*r->reaction));
	if (!eq || !ubar || !fext || !ke || !r->u || !r->reaction) {
		engi_raise(err, ENGI_ENOMEM, "cannot solve the deck: out of memory");
		goto out;
	}
	if (m->nelems == 0) {
		rc = engi_raise(err, ENGI_EINVALID, "the model has no elements");
		goto out;
	}
	for (size_t i = 0; i < ndof; i++)
		eq[i] = 0;
	for (size_t i = 0; i < m->nbc; i++) {
		size_t d = 3 * (size_t)m->bc[i].node + m->bc[i].dof;
		eq[d] = -1;
		ubar[d] = m->bc[i].value;
	}
	/* nodes no element uses carry no stiffness: restrain them quietly */
	{
		unsigned char *used = engi_calloc(m->nnodes ? m->nnodes : 1, 1);
		if (!used) {
			engi_raise(err, ENGI_ENOMEM, "cannot solve the deck: out of memory");
			goto out;
		}
		for (size_t q = 0; q < m->off[m->nelems]; q++)
			used[m->conn[q]] = 1;
		for (size_t i = 0; i < m->nnodes; i++)
			if (!used[i])
				for (int k = 0; k < 3; k++)
					eq[3 * i + (size_t)k] = -1;
		engi_free(used);
	}
	size_t neq = 0;
	for (size_t i = 0; i < ndof; i++)
		if (eq[i] == 0)
			eq[i] = (int64_t)neq++;
	r->nnodes = m->nnodes;
	r->ndof = ndof;
	r->neq = neq;
	if (m->force)
		memcpy(fext, m->force, ndof * sizeof(*fext));
	for (size_t i = 0; i < m->npress; i++)
		if (!pressure_load(m, &m->press[i], fext)) {
			rc = engi_raise(err, ENGI_EINVALID, "element %lld has no face %d",
					(long long)m->elem_id[m->press[i].elem], m->press[i].face);
			goto out;
		}
	for (size_t i = 0; i < ndof; i++)
		r->load_sum[i % 3] += fext[i];
	rc = engi_fe_csc_pattern(&a, m->nnodes, 3, eq, neq, m->nelems, m->off, m->conn, err);
	if (rc < 0)
		goto out;
	rhs = engi_calloc(neq ? neq : 1, sizeof(*rhs));
	if (!rhs) {
		rc = engi_raise(err, ENGI_ENOMEM, "cannot solve the deck: out of memory");
		goto out;
	}
	for (size_t i = 0; i < ndof; i++)
		if (eq[i] >= 0)
			rhs[eq[i]] += fext[i];
	for (size_t e = 0; e < m->nelems; e++) {
		int n = (int)(m->off[e + 1] - m->off[e]);
		size_t dofs[3 * NMAX];
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 3; k++)
				dofs[3 * i + k] =
				    3 * (size_t)m->conn[m->off[e] + (size_t)i] + (size_t)k;
		if (!element_k(m, e, ke)) {
			rc = engi_raise(err, ENGI_EINVALID,
					"element %lld is inverted or degenerate (Jacobian <= 0)",
					(long long)m->elem_id[e]);
			goto out;
		}
		engi_fe_csc_add(&a, eq, ke, 3 * n, dofs, ubar, rhs);
	}
	double t1 = now_s();
	r->assemble_s = t1 - t0;
	int64_t bad = -1;
	struct engi_fe_solve_stats st = {0};
	rc = engi_fe_csc_solve(&a, rhs, 1, opts, &bad, &st, err);
	if (rc < 0) {
		if (bad >= 0)
			for (size_t i = 0; i < ndof; i++)
				if (eq[i] == bad) {
					engi_error_prefix(
					    err,
					    "the model is a mechanism or under-restrained "
					    "(free degree of freedom u%c of node %lld)",
					    "xyz"[i % 3], (long long)m -> node_id[i / 3]);
					break;
				}
		goto out;
	}
	r->factor_s = st.factor_s;
	r->solve_s = st.solve_s;
	r->lnz = st.lnz;
	r->method = st.method;
	r->ordering = st.ordering;
	for (size_t i = 0; i < ndof; i++)
		r->u[i] = eq[i] >= 0 ? rhs[eq[i]] : ubar[i];
	/* reactions: internal force minus applied load at restrained dofs */
	for (size_t e = 0; e < m->nelems; e++) {
		int n = (int)(m->off[e + 1] - m->off[e]), nd = 3 * n;
		size_t dofs[3 * NMAX];
		int any = 0;
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 3; k++) {
				dofs[3 * i + k] =
				    3 * (size_t)m->conn[m->off[e] + (size_t)i] + (size_t)k;
				any |= eq[dofs[3 * i + k]] < 0;
			}
		if (!any)
			continue;
		element_k(m, e, ke);
		for (int p = 0; p < nd; p++) {
			if (eq[dofs[p]] >= 0)
				continue;
			double s = 0;
			for (int q = 0; q < nd; q++)
				s += ke[p * nd + q] * r->u[dofs[q]];
			r->reaction[dofs[p]] += s;
		}
	}
	for (size_t i = 0; i < ndof; i++)
		if (eq[i] < 0) {
			r->reaction[i] -= fext[i];
			r->reaction_sum[i % 3] += r->reaction[i];
		}
	r->max_u = -1;
	for (size_t i = 0; i < m->nnodes; i++) {
		const double *u = r->u + 3 * i;
		double mag = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
		if (mag > r->max_u) {
			r->max_u = mag;
			r->max_u_node = m->node_id[i];
		}
	}
	r->total_s = now_s() - t0;
	rc = 0;
out:
	engi_free(eq);
	engi_free(ubar);
	engi_free(fext);
	engi_free(ke);
	engi_free(rhs);
	engi_fe_csc_release(&a);
	if (rc < 0)
		engi_fe_solid_result_release(r);
	return rc;
}
