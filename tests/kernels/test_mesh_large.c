/* A million triangles, as an STL soup: weld and analyse, with timings. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <omp.h>

int main(void)
{
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	gen_torus(&m, 100, 30, 1000, 500);
	gen_soup(&m);
	CHECK_INT(m.ntris, 1000000);
	engi_error_init(&e);
	double t0 = omp_get_wtime();
	CHECK_INT(engi_mesh_weld(&m, 1e-6, &e), 0);
	double t1 = omp_get_wtime();
	CHECK_INT(m.nverts, 500000);
	struct engi_mesh_report r;
	CHECK_INT(engi_mesh_analyze(&m, &r, &e), 0);
	double t2 = omp_get_wtime();
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.genus, 1);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.nedges, 1500000);
	const double pi = 3.14159265358979323846;
	CHECK_NEAR(r.volume / (2 * pi * pi * 100 * 900), 1, 1e-4);
	printf("%d threads: weld %.3f s, analyze %.3f s for %zu triangles\n", omp_get_max_threads(),
	       t1 - t0, t2 - t1, m.ntris);
	engi_mesh_release(&m);
	return check_exit();
}
