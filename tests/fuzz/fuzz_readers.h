/*
 * fuzz_readers.h - what every reader fuzz target checks after a parse: on
 * success the mesh is well formed (indices in range, finite coordinates)
 * and the kernels accept it; on failure the mesh is empty and the message
 * names the format. The kernels a verifier runs then take the mesh:
 * analysis, the oriented box (hull), self-intersections, occupancy and
 * cloud distances, each with a finite result. Any violation aborts, which
 * both libFuzzer and the corpus replay report.
 */
#ifndef ENGI_FUZZ_READERS_H
#define ENGI_FUZZ_READERS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/occupancy.h"
#include "engi/pointcloud.h"

#define FUZZ_MAX_VERTS 4096
#define FUZZ_MAX_TRIS  4096

static inline void fuzz_check(int rc, const struct engi_mesh *m, const struct engi_error *e,
			      const char *prefix)
{
	if (rc < 0) {
		if (m->nverts || m->ntris || m->xyz || m->tri)
			abort();
		if (strncmp(e->msg, prefix, strlen(prefix)) != 0)
			abort();
		return;
	}
	if (rc != 0 || m->nverts > FUZZ_MAX_VERTS || m->ntris > FUZZ_MAX_TRIS)
		abort();
	for (size_t i = 0; i < 3 * m->ntris; i++)
		if (m->tri[i] >= m->nverts)
			abort();
	for (size_t i = 0; i < 3 * m->nverts; i++)
		if (!engi_coord_ok(m->xyz[i]))
			abort();
	struct engi_mesh_report r;
	if (engi_mesh_analyze(m, &r, NULL) != 0)
		abort();
	if (!isfinite(r.area) || !isfinite(r.volume) || !isfinite(r.principal[2]))
		abort();
	/* the cloud kernels on the vertices, the mesh kernels on the faces */
	if (m->nverts) {
		struct engi_cloud_distance cd;
		if (engi_cloud_distance(m->xyz, m->nverts, m->xyz, m->nverts, &cd, NULL) != 0 ||
		    cd.hausdorff != 0)
			abort();
	}
	if (!m->ntris)
		return;
	struct engi_obb o;
	if (engi_mesh_obb(m, &o, NULL) != 0 || !isfinite(o.volume) || !(o.half[2] >= 0))
		abort();
	struct engi_selfx x;
	if (engi_mesh_self_intersections(m, 0, 16, &x, NULL) != 0)
		abort();
	engi_selfx_release(&x);
	struct engi_solid s;
	if (engi_solid_build(&s, m, NULL, NULL, NULL) != 0)
		abort();
	double p[3] = {r.centroid[0], r.centroid[1], r.centroid[2]};
	(void)engi_solid_contains(&s, p);
	engi_solid_release(&s);
	struct engi_region reg = {.kind = ENGI_REGION_BOX};
	for (int d = 0; d < 3; d++) {
		reg.lo[d] = r.bbox_min[d];
		reg.hi[d] = r.bbox_max[d];
	}
	double vol;
	if (engi_mesh_material_volume(m, &reg, 8, &vol, NULL) != 0 || !isfinite(vol))
		abort();
}

#endif
