/*
 * Point-cloud kernel benchmark on the same generated inputs the anchors
 * (bench/icp_anchors.py: Open3D, when installed) read: an egg-shaped cloud
 * of N points (default 100,000) and a copy moved by a known rigid transform
 * (10 degrees, 1.5 mm), and a second independent sample of the same
 * surface, all written as PLY. Times ICP point-to-plane
 * (target normals included) and point-to-point to convergence, the error
 * against the known transform, and Chamfer + Hausdorff both ways. Prints
 * one "name value" line per figure.
 */
#include "engi/error.h"
#include "engi/pointcloud.h"
#include "kernels/cloudgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PI 3.14159265358979323846

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_ply(const char *path, const double *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	fprintf(f,
		"ply\nformat binary_little_endian 1.0\nelement vertex %zu\n"
		"property double x\nproperty double y\nproperty double z\nend_header\n",
		n);
	fwrite(p, sizeof(double), 3 * n, f); /* the bench machines are little-endian */
	return fclose(f);
}

static void report(const char *name, const struct engi_icp_report *r, double s, const double R[9],
		   const double t[3])
{
	double E[16] = {0};
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
			for (int k = 0; k < 3; k++)
				E[4 * a + b] += r->transform[4 * a + k] * R[3 * b + k];
	double dt = 0;
	for (int d = 0; d < 3; d++)
		dt += (r->transform[4 * d + 3] - t[d]) * (r->transform[4 * d + 3] - t[d]);
	printf("%s_s %.3f\n", name, s);
	printf("%s_iterations %d\n", name, r->iterations);
	printf("%s_stop %s\n", name, engi_icp_stop_name(r->stop));
	printf("%s_err_deg %.3g\n", name, engi_transform_angle(E) * 180 / PI);
	printf("%s_err_mm %.3g\n", name, sqrt(dt));
}

int main(int argc, char **argv)
{
	size_t n = 100000;
	const char *src_path = "icp_src.ply", *dst_path = "icp_dst.ply",
		   *other_path = "icp_other.ply";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--points"))
			n = (size_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--src"))
			src_path = argv[i + 1];
		else if (!strcmp(argv[i], "--dst"))
			dst_path = argv[i + 1];
		else if (!strcmp(argv[i], "--other"))
			other_path = argv[i + 1];
	}
	double *src = gen_egg_cloud(n, 3);
	double R[9], t[3] = {1.2, -0.6, 0.6};
	gen_rotation(10, 1, 2, 3, R);
	double *dst = gen_transformed(src, n, R, t, 11);
	if (write_ply(src_path, src, n) || write_ply(dst_path, dst, n)) {
		perror("write");
		return 1;
	}
	struct engi_icp_options o;
	struct engi_icp_report r;
	struct engi_error e;
	engi_error_init(&e);
	engi_icp_options_default(&o);
	o.method = ENGI_ICP_POINT_TO_PLANE;
	double t0 = now();
	if (engi_icp(src, n, dst, n, &o, &r, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	report("icp_point_to_plane", &r, now() - t0, R, t);
	o.method = ENGI_ICP_POINT_TO_POINT;
	t0 = now();
	if (engi_icp(src, n, dst, n, &o, &r, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	report("icp_point_to_point", &r, now() - t0, R, t);
	/* distances between two independent samples of the same surface */
	double *other = gen_egg_cloud(n, 4);
	if (write_ply(other_path, other, n)) {
		perror(other_path);
		return 1;
	}
	struct engi_cloud_distance d;
	t0 = now();
	if (engi_cloud_distance(src, n, other, n, &d, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	printf("chamfer_hausdorff_s %.3f\n", now() - t0);
	printf("chamfer %.9g\n", d.chamfer);
	printf("hausdorff %.9g\n", d.hausdorff);
	free(src);
	free(dst);
	free(other);
	return 0;
}
