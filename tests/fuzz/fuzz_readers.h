/*
 * fuzz_readers.h - what every reader fuzz target checks after a parse: on
 * success the mesh is well formed (indices in range, finite coordinates)
 * and the kernels accept it; on failure the mesh is empty and the message
 * names the format. Any violation aborts, which both libFuzzer and the
 * corpus replay report.
 */
#ifndef ENGI_FUZZ_READERS_H
#define ENGI_FUZZ_READERS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/occupancy.h"

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
		if (!isfinite(m->xyz[i]))
			abort();
	struct engi_mesh_report r;
	if (engi_mesh_analyze(m, &r, NULL) != 0)
		abort();
	if (m->ntris) {
		struct engi_solid s;
		int brc = engi_solid_build(&s, m, NULL, NULL, NULL);
		if (brc == ENGI_EINVALID)
			return; /* extents beyond double range */
		if (brc != 0)
			abort();
		double p[3] = {r.centroid[0], r.centroid[1], r.centroid[2]};
		(void)engi_solid_contains(&s, p);
		engi_solid_release(&s);
	}
}

#endif
