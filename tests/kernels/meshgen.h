/*
 * meshgen.h - meshes with known answers and STL writers, for the kernel and
 * verifier tests. Header-only; every function aborts on out-of-memory since
 * a test cannot go on without its fixture.
 */
#ifndef ENGI_TEST_MESHGEN_H
#define ENGI_TEST_MESHGEN_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engi/alloc.h"
#include "engi/mesh.h"

/* Capacity grows in powers of two, derived from the counts, so the mesh
 * struct needs no capacity fields. */
static inline size_t gen_cap(size_t n)
{
	size_t c = 16;
	while (c < n)
		c *= 2;
	return c;
}

static inline void gen_reserve(struct engi_mesh *m, size_t nv, size_t nt)
{
	if (!m->xyz || gen_cap(nv) != gen_cap(m->nverts)) {
		double *x = engi_reallocarray(m->xyz, 3 * gen_cap(nv), sizeof(double));
		if (!x)
			abort();
		m->xyz = x;
	}
	if (!m->tri || gen_cap(nt) != gen_cap(m->ntris)) {
		uint32_t *t = engi_reallocarray(m->tri, 3 * gen_cap(nt), sizeof(uint32_t));
		if (!t)
			abort();
		m->tri = t;
	}
}

static inline uint32_t gen_vertex(struct engi_mesh *m, double x, double y, double z)
{
	gen_reserve(m, m->nverts + 1, m->ntris);
	m->xyz[3 * m->nverts] = x;
	m->xyz[3 * m->nverts + 1] = y;
	m->xyz[3 * m->nverts + 2] = z;
	return (uint32_t)m->nverts++;
}

static inline void gen_tri(struct engi_mesh *m, uint32_t a, uint32_t b, uint32_t c)
{
	gen_reserve(m, m->nverts, m->ntris + 1);
	m->tri[3 * m->ntris] = a;
	m->tri[3 * m->ntris + 1] = b;
	m->tri[3 * m->ntris + 2] = c;
	m->ntris++;
}

/* Corner c of a unit cell is (c & 1, c >> 1 & 1, c >> 2 & 1). Faces in the
 * order -z, +z, -y, +y, -x, +x, each as a quad counter-clockwise seen from
 * outside. */
static const int gen_cube_quads[6][4] = {
    {0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5},
};

/* Appends an axis-aligned box [x0, x0+a] x [y0, y0+b] x [z0, z0+c]. */
static inline void gen_box(struct engi_mesh *m, double x0, double y0, double z0, double a, double b,
			   double c)
{
	uint32_t v0 = (uint32_t)m->nverts;
	for (int k = 0; k < 8; k++)
		gen_vertex(m, x0 + a * (k & 1), y0 + b * (k >> 1 & 1), z0 + c * (k >> 2 & 1));
	for (int f = 0; f < 6; f++) {
		const int *q = gen_cube_quads[f];
		gen_tri(m, v0 + q[0], v0 + q[1], v0 + q[2]);
		gen_tri(m, v0 + q[0], v0 + q[2], v0 + q[3]);
	}
}

/*
 * Appends the boundary of a union of unit voxels: occ[i + nx*(j + ny*k)]
 * non-zero marks voxel (i, j, k). Vertices are grid points, shared, so the
 * result is closed wherever voxels meet face to face.
 */
static inline void gen_voxels(struct engi_mesh *m, int nx, int ny, int nz, const unsigned char *occ,
			      double h)
{
	uint32_t v0 = (uint32_t)m->nverts;
	for (int k = 0; k <= nz; k++)
		for (int j = 0; j <= ny; j++)
			for (int i = 0; i <= nx; i++)
				gen_vertex(m, i * h, j * h, k * h);
#define GEN_OCC(i, j, k)                                                                           \
	((i) >= 0 && (j) >= 0 && (k) >= 0 && (i) < nx && (j) < ny && (k) < nz &&                   \
	 occ[(i) + nx * ((j) + ny * (k))])
	static const int dir[6][3] = {{0, 0, -1}, {0, 0, 1},  {0, -1, 0},
				      {0, 1, 0},  {-1, 0, 0}, {1, 0, 0}};
	for (int k = 0; k < nz; k++)
		for (int j = 0; j < ny; j++)
			for (int i = 0; i < nx; i++) {
				if (!GEN_OCC(i, j, k))
					continue;
				for (int f = 0; f < 6; f++) {
					if (GEN_OCC(i + dir[f][0], j + dir[f][1], k + dir[f][2]))
						continue;
					uint32_t q[4];
					for (int c = 0; c < 4; c++) {
						int cc = gen_cube_quads[f][c];
						int gi = i + (cc & 1), gj = j + (cc >> 1 & 1),
						    gk = k + (cc >> 2 & 1);
						q[c] =
						    v0 + (uint32_t)(gi + (nx + 1) *
									     (gj + (ny + 1) * gk));
					}
					gen_tri(m, q[0], q[1], q[2]);
					gen_tri(m, q[0], q[2], q[3]);
				}
			}
#undef GEN_OCC
}

/* Appends a polyhedral torus about z: nu segments around, nv around the
 * tube, outward faces. */
static inline void gen_torus(struct engi_mesh *m, double R, double r, int nu, int nv)
{
	uint32_t v0 = (uint32_t)m->nverts;
	const double pi = 3.14159265358979323846;
	for (int i = 0; i < nu; i++)
		for (int j = 0; j < nv; j++) {
			double u = 2 * pi * i / nu, v = 2 * pi * j / nv;
			gen_vertex(m, (R + r * cos(v)) * cos(u), (R + r * cos(v)) * sin(u),
				   r * sin(v));
		}
	for (int i = 0; i < nu; i++)
		for (int j = 0; j < nv; j++) {
			uint32_t a = v0 + (uint32_t)(i * nv + j);
			uint32_t b = v0 + (uint32_t)(((i + 1) % nu) * nv + j);
			uint32_t c = v0 + (uint32_t)(((i + 1) % nu) * nv + (j + 1) % nv);
			uint32_t d = v0 + (uint32_t)(i * nv + (j + 1) % nv);
			gen_tri(m, a, b, c);
			gen_tri(m, a, c, d);
		}
}

/* Gives every triangle its own three vertices, as an STL file does. */
static inline void gen_soup(struct engi_mesh *m)
{
	struct engi_mesh s;
	engi_mesh_init(&s);
	gen_reserve(&s, 3 * m->ntris, m->ntris);
	for (size_t f = 0; f < m->ntris; f++) {
		for (int k = 0; k < 3; k++) {
			const double *p = m->xyz + 3 * (size_t)m->tri[3 * f + k];
			memcpy(s.xyz + 3 * (3 * f + k), p, 3 * sizeof(double));
			s.tri[3 * f + k] = (uint32_t)(3 * f + k);
		}
	}
	s.nverts = 3 * m->ntris;
	s.ntris = m->ntris;
	engi_mesh_release(m);
	*m = s;
}

static inline void gen_put_le32(unsigned char *p, uint32_t u)
{
	p[0] = (unsigned char)u;
	p[1] = (unsigned char)(u >> 8);
	p[2] = (unsigned char)(u >> 16);
	p[3] = (unsigned char)(u >> 24);
}

/* Writes binary STL; header (may be NULL) fills the first 80 bytes. */
static inline int gen_write_stl_binary(const char *path, const struct engi_mesh *m,
				       const char *header)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	unsigned char head[84];
	memset(head, ' ', 80);
	if (header)
		memcpy(head, header, strlen(header) < 80 ? strlen(header) : 80);
	gen_put_le32(head + 80, (uint32_t)m->ntris);
	fwrite(head, 1, 84, f);
	for (size_t t = 0; t < m->ntris; t++) {
		unsigned char rec[50];
		memset(rec, 0, sizeof(rec));
		for (int k = 0; k < 3; k++)
			for (int c = 0; c < 3; c++) {
				float v = (float)m->xyz[3 * (size_t)m->tri[3 * t + k] + c];
				uint32_t u;
				memcpy(&u, &v, 4);
				gen_put_le32(rec + 12 + 12 * k + 4 * c, u);
			}
		fwrite(rec, 1, 50, f);
	}
	return fclose(f);
}

/* Writes ASCII STL with full double precision. */
static inline int gen_write_stl_ascii(const char *path, const struct engi_mesh *m)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "solid test part\n");
	for (size_t t = 0; t < m->ntris; t++) {
		fprintf(f, "  facet normal 0 0 0\n    outer loop\n");
		for (int k = 0; k < 3; k++) {
			const double *p = m->xyz + 3 * (size_t)m->tri[3 * t + k];
			fprintf(f, "      vertex %.17g %.17g %.17g\n", p[0], p[1], p[2]);
		}
		fprintf(f, "    endloop\n  endfacet\n");
	}
	fprintf(f, "endsolid test part\n");
	return fclose(f);
}

/* Writes text or bytes to a file; returns 0 or -1. */
static inline int gen_write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(data, 1, n, f);
	return fclose(f) == 0 && w == n ? 0 : -1;
}

#endif
