/*
 * meshio.h - readers for meshes and point clouds beside STL: Wavefront OBJ,
 * PLY (ASCII and binary little-endian), XYZ point lists, and dispatch by
 * extension, STEP files through a converter the program provides.
 *
 * Each reader exists twice: on a file (engi_*_read, which reads at most
 * ENGI_MESHIO_BYTES_MAX bytes) and on bytes in memory (engi_*_parse, what
 * the fuzz targets drive); name is what messages call the input. Every
 * message reads "cannot read <FORMAT> '<name>': <what>", with the line or
 * the element that is wrong. Sizes are bounded by the caller's caps; a
 * coordinate engi_coord_ok refuses (NaN, infinite, beyond
 * ENGI_MESH_COORD_MAX, engi/mesh.h) is an error naming the element, the
 * axis, the value and the problem. Polygons are split
 * into triangle fans. m must have been initialised; its contents are
 * replaced on success and left empty on error. Point clouds are returned as
 * a mesh without triangles. Nothing here blocks except on the file system
 * (and on the STEP converter).
 */
#ifndef ENGI_MESHIO_H
#define ENGI_MESHIO_H

#include <stddef.h>

struct engi_error;
struct engi_mesh;

#define ENGI_MESHIO_BYTES_MAX	((size_t)1 << 31)
#define ENGI_MESHIO_POLYGON_MAX 1024 /* vertices of one face */

int engi_obj_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		  struct engi_error *err);
int engi_obj_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, size_t max_tris, struct engi_error *err);

int engi_ply_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		  struct engi_error *err);
int engi_ply_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, size_t max_tris, struct engi_error *err);

/* One point a line: x y z and optional further columns, separated by white
 * space or commas; '#' starts a comment. */
int engi_xyz_read(const char *path, struct engi_mesh *m, size_t max_verts, struct engi_error *err);
int engi_xyz_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, struct engi_error *err);

/* By extension (case-insensitive): .stl, .obj, .ply, .step/.stp (through
 * the converter of engi_meshio_set_step). */
int engi_mesh_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		   struct engi_error *err);
/* Points by extension: .ply, .xyz (also .txt, .pts), or the vertices of any
 * mesh engi_mesh_read takes. */
int engi_cloud_read(const char *path, struct engi_mesh *m, size_t max_verts,
		    struct engi_error *err);

/*
 * STEP files: kernels/ start no programs, and a STEP file is a mesh only
 * once a program (gmsh) has tessellated it. The program that links the
 * kernels hands engi_mesh_read a converter for .step/.stp files (engisweep:
 * step_install, src/core/step.c, which runs gmsh and reads its STL with
 * engi_stl_read); without one such a file is ENGI_ENOTSUP. fn NULL removes
 * it. Set it once, before any thread reads meshes.
 */
typedef int (*engi_step_fn)(const char *path, struct engi_mesh *m, size_t max_tris,
			    struct engi_error *err);
void engi_meshio_set_step(engi_step_fn fn);

#endif
