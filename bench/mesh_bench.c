/*
 * Mesh kernel benchmark: a generated torus of about N triangles (default
 * one million) as an STL soup, read, welded and analysed (topology and mass
 * properties), its self-intersections (all pairs counted), its oriented
 * bounding box, and the peak resident memory. The STL is left at --stl for
 * the anchors (admesh) that bench/mesh_anchors runs on the same file.
 * Prints one "name value" line per figure.
 */
#include "engi/error.h"
#include "engi/mesh.h"
#include "kernels/meshgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	long ntris = 1000000;
	const char *stl = "torus.stl";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tris"))
			ntris = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--stl"))
			stl = argv[i + 1];
	}
	/* nu x nv quads, nu = 2 nv */
	int nv = 1;
	while (2L * (2 * nv) * nv < ntris)
		nv++;
	int nu = 2 * nv;
	struct engi_mesh m;
	engi_mesh_init(&m);
	const double R = 50, r = 20, pi = 3.14159265358979323846;
	gen_torus(&m, R, r, nu, nv);
	gen_soup(&m);
	if (gen_write_stl_binary(stl, &m, "engisweep bench torus") != 0) {
		perror(stl);
		return 1;
	}
	engi_mesh_release(&m);
	struct engi_error e;
	engi_error_init(&e);
	double t0 = now();
	if (engi_stl_read(stl, &m, (size_t)ntris * 2, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double t1 = now();
	struct engi_mesh_report rep;
	if (engi_mesh_weld(&m, 0, &e) < 0 || engi_mesh_analyze(&m, &rep, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double t2 = now();
	struct engi_selfx x;
	if (engi_mesh_self_intersections(&m, 0, 16, &x, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double t3 = now();
	struct engi_obb o;
	if (engi_mesh_obb(&m, &o, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double t4 = now();
	/* closed form of the polyhedral torus: the float-rounded vertices
	 * make the STL differ from it by about 1e-7 relative */
	double a = 2 * pi / nu, b = 2 * pi / nv;
	double vol_poly = 0.5 * nu * sin(a) * nv * sin(b) * r * r * R;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("triangles %zu\n", rep.ntris);
	printf("read_s %.3f\n", t1 - t0);
	printf("weld_analyze_s %.3f\n", t2 - t1);
	printf("self_intersections_s %.3f\n", t3 - t2);
	printf("self_intersection_pairs %zu\n", x.count);
	printf("pairs_tested %zu\n", x.tested);
	printf("obb_s %.3f\n", t4 - t3);
	printf("volume %.10g\n", rep.volume);
	printf("volume_rel_err %.3g\n", fabs(rep.volume - vol_poly) / vol_poly);
	printf("genus %ld\n", rep.genus);
	printf("watertight %d\n", rep.watertight);
	printf("peak_rss_mb %.1f\n", ru.ru_maxrss / 1024.0);
	engi_selfx_release(&x);
	engi_mesh_release(&m);
	return 0;
}
