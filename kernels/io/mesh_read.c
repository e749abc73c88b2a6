/*
 * Mesh and point-cloud files by extension. STEP files go to the converter
 * the program installed (engi/meshio.h): kernels/ start no programs.
 */
#include "engi/meshio.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <string.h>
#include <strings.h>

/* Set once at start-up by the program (engi_meshio_set_step). */
static engi_step_fn step_fn;

void engi_meshio_set_step(engi_step_fn fn)
{
	step_fn = fn;
}

static const char *ext_of(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash))
		return "";
	return dot + 1;
}

int engi_mesh_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		   struct engi_error *err)
{
	const char *e = ext_of(path);
	if (!strcasecmp(e, "stl"))
		return engi_stl_read(path, m, max_tris, err);
	if (!strcasecmp(e, "obj"))
		return engi_obj_read(path, m, max_verts, max_tris, err);
	if (!strcasecmp(e, "ply"))
		return engi_ply_read(path, m, max_verts, max_tris, err);
	if (!strcasecmp(e, "step") || !strcasecmp(e, "stp")) {
		if (!step_fn)
			RAISE(err, ENGI_ENOTSUP,
			      "cannot read mesh '%s': STEP files need a tessellating program, "
			      "and none was installed (engi_meshio_set_step)",
			      path);
		return step_fn(path, m, max_tris, err);
	}
	RAISE(err, ENGI_ENOTSUP,
	      "cannot read mesh '%s': unknown extension '.%s' (valid: .stl, .obj, .ply, .step, "
	      ".stp)",
	      path, e);
}

int engi_cloud_read(const char *path, struct engi_mesh *m, size_t max_verts, struct engi_error *err)
{
	const char *e = ext_of(path);
	if (!strcasecmp(e, "xyz") || !strcasecmp(e, "txt") || !strcasecmp(e, "pts"))
		return engi_xyz_read(path, m, max_verts, err);
	return engi_mesh_read(path, m, max_verts, max_verts, err);
}
