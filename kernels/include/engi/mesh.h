/*
 * mesh.h - triangle-mesh validity and mass properties.
 *
 * A struct engi_mesh is an indexed triangle soup owned by the caller
 * (engi_mesh_init / engi_mesh_release). engi_mesh_weld merges vertices closer
 * than a tolerance, in place. engi_mesh_analyze reports, never repairs: edge
 * topology (boundary, non-manifold, inconsistently oriented edges),
 * degenerate and duplicate faces, shells (edge-connected components), Euler
 * characteristic and genus, area, signed volume, centroid, second moments
 * and principal moments, axis-aligned bounding box. All sums in double
 * precision with compensation; deterministic; no I/O. Nothing blocks.
 *
 * Coordinates: every kernel here (and in occupancy.h and pointcloud.h)
 * takes only coordinates that are finite and at most ENGI_MESH_COORD_MAX
 * in magnitude; anything else is ENGI_EINVALID with a message naming the
 * vertex ("vertex 3: coordinate z = 1e+308 exceeds 1e+30 in magnitude"),
 * and the readers refuse such files the same way, naming the facet, vertex
 * or line. Under that bound the differences, cross products, squared
 * distances, triple products and fifth powers (second moments) the kernels
 * form stay finite, so no result is infinite or NaN because of overflow.
 * Tiny values (denormals included) are accepted: they may round to zero in
 * areas and volumes, never beyond that.
 */
#ifndef ENGI_MESH_H
#define ENGI_MESH_H

#include <stddef.h>
#include <stdint.h>

struct engi_error;

struct engi_mesh {
	double *xyz;   /* 3 * nverts coordinates */
	uint32_t *tri; /* 3 * ntris vertex indices */
	size_t nverts, ntris;
};

/* The bound on coordinate magnitude (model units): far beyond any part in
 * any unit, and small enough that fifth powers of extents stay finite. */
#define ENGI_MESH_COORD_MAX 1e30

/* 1 when x is finite and within the bound (NaN is not). */
static inline int engi_coord_ok(double x)
{
	return x >= -ENGI_MESH_COORD_MAX && x <= ENGI_MESH_COORD_MAX;
}

/* What is wrong with a coordinate engi_coord_ok refuses: "is not finite"
 * or "exceeds 1e+30 in magnitude"; NULL when it is fine. */
const char *engi_coord_problem(double x);

/* Checks the n points xyz (3 each): ENGI_EINVALID naming the first bad one
 * as "<noun> <index>: coordinate <axis> = <value> <problem>". */
int engi_coords_check(const double *xyz, size_t n, const char *noun, struct engi_error *err);

void engi_mesh_init(struct engi_mesh *m);
void engi_mesh_release(struct engi_mesh *m);

/* Merges vertices within tol (absolute, model units) of each other and
 * rewrites triangle indices; tol = 0 merges exact duplicates only. */
int engi_mesh_weld(struct engi_mesh *m, double tol, struct engi_error *err);

struct engi_mesh_report {
	size_t nverts, ntris, nedges;
	size_t boundary_edges;	   /* edges used by one face */
	size_t nonmanifold_edges;  /* edges used by three or more faces */
	size_t inconsistent_edges; /* two faces traverse the edge the same way */
	size_t degenerate_faces;   /* repeated index or zero area */
	size_t duplicate_faces;	   /* same vertex set as an earlier face */
	size_t shells;		   /* connected components over shared edges */
	int watertight;		   /* no boundary and no non-manifold edge */
	int oriented;		   /* watertight, no inconsistent edge and
				      positive volume */
	long euler;		   /* V - E + F over referenced vertices */
	long genus;		   /* sum over closed shells of (2 - chi)/2;
				      -1 when not watertight */
	double area;
	double volume;	    /* signed: positive for outward normals */
	double centroid[3]; /* of the enclosed solid (of the surface if volume ~ 0) */
	/* second moments of the solid about its centroid, unit density:
	 * [0]=int x^2, [1]=int y^2, [2]=int z^2, [3]=int xy, [4]=int xz, [5]=int yz */
	double second_moment[6];
	double principal[3]; /* principal moments of inertia, ascending */
	double bbox_min[3], bbox_max[3];
};

int engi_mesh_analyze(const struct engi_mesh *m, struct engi_mesh_report *r,
		      struct engi_error *err);

/* Eigenvalues, ascending, of the symmetric 3x3 a (row-major, its upper
 * triangle read): LAPACK's dsyev. ENGI_EINVALID when it fails. */
int engi_sym3_eigenvalues(const double a[9], double w[3]);
/* The same with the eigenvectors: v (row-major) holds eigenvector j in its
 * column j, as numpy's eigh returns them (LAPACK's dsyevd on the lower
 * triangle). */
int engi_sym3_eigen(const double a[9], double w[3], double v[9]);

/*
 * The faces a mesh was tessellated from, recovered (kernels/mesh/patches.c):
 * triangles are joined across each edge exactly two of them share where
 * their normals turn by less than angle_deg (a degenerate triangle joins
 * its neighbours); patches counts the groups, corners the vertices where
 * three or more patches meet. A box gives 6 and 8 and a cylinder 3 and 0
 * however finely tessellated, as long as one facet turns by less than
 * angle_deg (ENGI_MESH_PATCH_ANGLE: a circle of 13 or more segments).
 */
#define ENGI_MESH_PATCH_ANGLE 30.0

struct engi_mesh_patches {
	size_t patches, corners;
};

int engi_mesh_patches(const struct engi_mesh *m, double angle_deg, struct engi_mesh_patches *p,
		      struct engi_error *err);

/* A face with three distinct indices is degenerate (zero area) when twice its
 * area is at most this times its longest edge squared. */
#define ENGI_MESH_ZERO_AREA_REL 1e-10
/* A volume at most this times the bounding-box diagonal cubed counts as zero:
 * the centroid is then the surface's and the second moments are zero. */
#define ENGI_MESH_ZERO_VOLUME_REL 1e-12

/*
 * Self-intersections: pairs of faces that meet although they share no
 * vertex, or that share exactly one vertex and meet elsewhere as well
 * (faces sharing an edge are not tested). A uniform grid over the mesh's
 * bounding box proposes pairs whose boxes overlap; exact orientation
 * predicates decide (touching counts as meeting). Pairs are (smaller face,
 * larger face), sorted; at most ENGI_SELFX_KEEP_MAX are kept, all are
 * counted. early_exit stops at the first pair found (count 1). Parallel
 * (OpenMP) and deterministic. Degenerate faces are skipped.
 */
#define ENGI_SELFX_KEEP_MAX ((size_t)1 << 20)

struct engi_selfx {
	size_t count;	/* intersecting pairs */
	size_t npairs;	/* kept in pair */
	uint32_t *pair; /* 2 * npairs face ids, owned; engi_selfx_release */
	size_t tested;	/* pairs the exact test looked at */
};

int engi_mesh_self_intersections(const struct engi_mesh *m, int early_exit, size_t keep,
				 struct engi_selfx *x, struct engi_error *err);
void engi_selfx_release(struct engi_selfx *x);

/*
 * Oriented bounding box of the vertices the triangles use, from their
 * convex hull (exact predicates): the smallest of the boxes along the
 * coordinate axes, along the principal directions of the hull's surface
 * (area-weighted, so neither vertex density nor anything inside the hull
 * biases them), and flush with each of the largest hull faces, turned in
 * its plane to the minimum-area rectangle of the hull's outline (rotating
 * calipers). Exact for boxes; coplanar or collinear vertices give a box of
 * zero thickness in their plane or along their line. axis rows are unit
 * vectors; half the extents along them. Deterministic.
 * The hull is built on the vertices centred on their box and snapped to
 * multiples of 2^-61 of its half extent, so that its exact predicates
 * never over- or underflow (1e20 beside 1, denormals): vertices that are
 * coplanar or collinear to within that count as such (method planar or
 * linear), and the extents are always taken over the vertices as given,
 * so the box holds every one of them.
 */
enum engi_obb_method {
	ENGI_OBB_AXIS_ALIGNED = 0, /* the coordinate axes were smallest */
	ENGI_OBB_HULL_PCA = 1,	   /* principal directions of the hull's surface */
	ENGI_OBB_HULL_FACE = 2,	   /* flush with a hull face */
	ENGI_OBB_PLANAR = 3,	   /* coplanar vertices */
	ENGI_OBB_LINEAR = 4,	   /* collinear vertices */
};

struct engi_obb {
	double center[3];
	double axis[9];
	double half[3]; /* descending */
	double volume;
	int method; /* enum engi_obb_method */
};

int engi_mesh_obb(const struct engi_mesh *m, struct engi_obb *o, struct engi_error *err);
const char *engi_obb_method_name(int method);

/* Reads binary or ASCII STL (detected from content). At most max_tris
 * triangles; a coordinate engi_coord_ok refuses (NaN, infinite, beyond
 * ENGI_MESH_COORD_MAX) is an error naming the facet and vertex.
 * Vertices are not welded: call engi_mesh_weld. m must have been initialised;
 * its contents are replaced on success and left empty on error. */
int engi_stl_read(const char *path, struct engi_mesh *m, size_t max_tris, struct engi_error *err);

#endif
