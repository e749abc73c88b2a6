/*
 * occupancy.h - solid-void classification of a closed triangle mesh: which
 * points lie in material, and how much material a region (a box or a
 * cylinder) holds, so that a task can require "the bore holds at most 0.1 mm3
 * of material".
 *
 * Classification is by winding number along a ray parallel to a local z
 * axis. The ray is moved off every edge and vertex by a symbolic
 * perturbation (simulation of simplicity: the query point becomes
 * (x + e, y + e^2) with e infinitesimal) and every edge is tested in one
 * canonical direction, so a ray through an edge or a vertex is counted
 * exactly once and the answer never depends on which triangle is looked at
 * first. A point on the surface counts as material. The mesh should be
 * closed; an open mesh still gives an answer but not a meaningful one.
 *
 * A struct engi_solid holds a copy of the triangles in its local frame and
 * a uniform grid over the frame's xy plane (engi_solid_build /
 * engi_solid_release); queries are read-only and may run in parallel.
 * engi_mesh_material_volume integrates exactly along the region's axis and
 * samples res x res columns across it. No I/O. Mesh coordinates, the
 * origin and the region's numbers are bounded as in engi/mesh.h
 * (ENGI_MESH_COORD_MAX); anything else is ENGI_EINVALID.
 */
#ifndef ENGI_OCCUPANCY_H
#define ENGI_OCCUPANCY_H

#include <stddef.h>
#include <stdint.h>

struct engi_error;
struct engi_mesh;

struct engi_solid {
	double frame[9];  /* rows: the local x, y, z axes (orthonormal) */
	double origin[3]; /* local = frame (p - origin) */
	double *tri;	  /* 9 local coordinates per proper triangle */
	size_t ntris;
	double lo[2], cell; /* grid: cell (i, j) starts at lo + (i, j) cell */
	size_t nx, ny;
	uint32_t *start; /* nx * ny + 1 offsets into items */
	uint32_t *items; /* triangle ids per cell */
};

/* axis: the local z direction (any length > 0); NULL means +z. */
int engi_solid_build(struct engi_solid *s, const struct engi_mesh *m, const double axis[3],
		     const double origin[3], struct engi_error *err);
void engi_solid_release(struct engi_solid *s);

/* 1 when the point (world coordinates) lies in material or on the surface. */
int engi_solid_contains(const struct engi_solid *s, const double p[3]);

/* Length of material along the local z line at local (x, y) between local
 * heights z0 <= z1. */
double engi_solid_column(const struct engi_solid *s, double x, double y, double z0, double z1);

enum engi_region_kind {
	ENGI_REGION_BOX = 0,	  /* axis-aligned: lo, hi */
	ENGI_REGION_CYLINDER = 1, /* base centre, axis, radius, length */
};

struct engi_region {
	int kind;
	double lo[3], hi[3];
	double base[3], axis[3]; /* axis: any length > 0 */
	double radius, length;
};

#define ENGI_OCCUPANCY_RES_DEFAULT 256
#define ENGI_OCCUPANCY_RES_MAX	   4096

/* Material volume of m inside the region; res columns per side. For the
 * cylinder the column weights are scaled so that a region full of material
 * gives exactly pi r^2 length. */
int engi_mesh_material_volume(const struct engi_mesh *m, const struct engi_region *r, int res,
			      double *volume, struct engi_error *err);

#endif
