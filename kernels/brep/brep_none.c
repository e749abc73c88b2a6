/*
 * brep_none.c - the shape half of the B-rep kernel when the build has no
 * OpenCASCADE (ENGI_BREP off, docs/building.md): it says so.
 */
#include "engi/brep.h"
#include "engi/error.h"

#include <string.h>

int engi_brep_built(void)
{
	return 0;
}

int engi_brep_measure_file(const char *path, unsigned flags, struct engi_brep_report *rep,
			   struct engi_error *err)
{
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
	RAISE(err, ENGI_ENOTSUP,
	      "'%s': the B-rep kernel is not built into this binary (configure with "
	      "OpenCASCADE, -DENGI_BREP=ON; docs/building.md)",
	      path);
}

void engi_brep_report_release(struct engi_brep_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
}
