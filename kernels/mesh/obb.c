/*
 * Oriented bounding box from the area-weighted principal directions of the
 * surface (LAPACK dsyev on the surface's covariance); the axis-aligned box
 * is kept when it is not larger.
 */
#include "engi/mesh.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

static void box_along(const struct engi_mesh *m, const unsigned char *used, const double ax[9],
		      double center[3], double half[3])
{
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t v = 0; v < m->nverts; v++) {
		if (!used[v])
			continue;
		const double *p = m->xyz + 3 * v;
		for (int k = 0; k < 3; k++) {
			double t = ax[3 * k] * p[0] + ax[3 * k + 1] * p[1] + ax[3 * k + 2] * p[2];
			lo[k] = t < lo[k] ? t : lo[k];
			hi[k] = t > hi[k] ? t : hi[k];
		}
	}
	double mid[3];
	for (int k = 0; k < 3; k++) {
		mid[k] = 0.5 * (lo[k] + hi[k]);
		half[k] = 0.5 * (hi[k] - lo[k]);
	}
	for (int d = 0; d < 3; d++)
		center[d] = ax[d] * mid[0] + ax[3 + d] * mid[1] + ax[6 + d] * mid[2];
}

int engi_mesh_obb(const struct engi_mesh *m, struct engi_obb *o, struct engi_error *err)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < 3 * m->ntris; i++)
		if (m->tri[i] >= m->nverts)
			RAISE(err, ENGI_EINVALID,
			      "triangle %zu refers to vertex %u, but the mesh has %zu vertices",
			      i / 3, (unsigned)m->tri[i], m->nverts);
	if (m->ntris == 0)
		RAISE(err, ENGI_EINVALID, "cannot bound a mesh without triangles");
	unsigned char *used = engi_calloc(m->nverts, 1);
	if (!used)
		RAISE(err, ENGI_ENOMEM, "out of memory bounding %zu vertices", m->nverts);
	for (size_t i = 0; i < 3 * m->ntris; i++)
		used[m->tri[i]] = 1;
	const double *p0 = m->xyz + 3 * (size_t)m->tri[0];
	double area = 0, s1[3] = {0, 0, 0}, s2[9] = {0};
	for (size_t f = 0; f < m->ntris; f++) {
		double v[3][3];
		for (int k = 0; k < 3; k++)
			for (int d = 0; d < 3; d++)
				v[k][d] = m->xyz[3 * (size_t)m->tri[3 * f + k] + d] - p0[d];
		double u[3], w[3];
		for (int d = 0; d < 3; d++) {
			u[d] = v[1][d] - v[0][d];
			w[d] = v[2][d] - v[0][d];
		}
		double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
			       u[0] * w[1] - u[1] * w[0]};
		double A = 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		double s[3] = {v[0][0] + v[1][0] + v[2][0], v[0][1] + v[1][1] + v[2][1],
			       v[0][2] + v[1][2] + v[2][2]};
		area += A;
		for (int i = 0; i < 3; i++) {
			s1[i] += A * s[i] / 3;
			for (int j = 0; j < 3; j++) {
				double q = s[i] * s[j];
				for (int k = 0; k < 3; k++)
					q += v[k][i] * v[k][j];
				s2[3 * i + j] += A / 12 * q;
			}
		}
	}
	double ax[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c[3], h[3];
	box_along(m, used, ax, c, h);
	double best = 8 * h[0] * h[1] * h[2];
	memcpy(o->axis, ax, sizeof(ax));
	memcpy(o->center, c, sizeof(c));
	memcpy(o->half, h, sizeof(h));
	if (area > 0) {
		double cov[9], wv[3];
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				cov[3 * i + j] =
				    s2[3 * i + j] / area - s1[i] * s1[j] / (area * area);
		if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, cov, 3, wv) == 0) {
			double pa[9];
			/* rows: eigenvectors (columns of cov), largest variance first */
			for (int k = 0; k < 3; k++)
				for (int d = 0; d < 3; d++)
					pa[3 * k + d] = cov[3 * d + (2 - k)];
			box_along(m, used, pa, c, h);
			double vol = 8 * h[0] * h[1] * h[2];
			if (vol < best) {
				best = vol;
				memcpy(o->axis, pa, sizeof(pa));
				memcpy(o->center, c, sizeof(c));
				memcpy(o->half, h, sizeof(h));
			}
		}
	}
	engi_free(used);
	/* sort the extents descending, axes along */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (o->half[j] > o->half[i]) {
				double t = o->half[i];
				o->half[i] = o->half[j];
				o->half[j] = t;
				for (int d = 0; d < 3; d++) {
					t = o->axis[3 * i + d];
					o->axis[3 * i + d] = o->axis[3 * j + d];
					o->axis[3 * j + d] = t;
				}
			}
	o->volume = best;
	return 0;
}
