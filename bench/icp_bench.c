/*
 * Point-cloud kernel benchmark on the same generated inputs the anchors
 * (bench/geom_anchors: Open3D and PCL, when installed) read: an egg-shaped
 * cloud of N points (default 100,000) and a copy moved by a known rigid
 * transform (10 degrees, 1.5 mm), and a second independent sample of the
 * same surface, written as PLY and, on request, as ASCII PCD. Times ICP
 * point-to-plane (target normals included) and point-to-point to
 * convergence, wall and process CPU (all threads), the error against the
 * known transform, and Chamfer + Hausdorff both ways. Prints one
 * "name value" line per figure.
 *
 * --eval NAME "m00 m01 ... m23" only prints NAME_err_deg and NAME_err_mm of
 * a row-major 3x4 (or 4x4) transform against the known one: an anchor's
 * answer measured the same way.
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

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ASCII PCD (PCL's point format), float fields as PCL's PointXYZ reads
 * them. */
static int write_pcd(const char *path, const double *p, size_t n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f,
		"# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS x y z\n"
		"SIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\nWIDTH %zu\nHEIGHT 1\n"
		"VIEWPOINT 0 0 0 1 0 0 0\nPOINTS %zu\nDATA ascii\n",
		n, n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.9g %.9g %.9g\n", p[3 * i], p[3 * i + 1], p[3 * i + 2]);
	return fclose(f);
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
	if (s >= 0) {
		printf("%s_s %.3f\n", name, s);
		printf("%s_iterations %d\n", name, r->iterations);
		printf("%s_stop %s\n", name, engi_icp_stop_name(r->stop));
	}
	printf("%s_err_deg %.3g\n", name, engi_transform_angle(E) * 180 / PI);
	printf("%s_err_mm %.3g\n", name, sqrt(dt));
}

int main(int argc, char **argv)
{
	size_t n = 100000;
	const char *src_path = "icp_src.ply", *dst_path = "icp_dst.ply",
		   *other_path = "icp_other.ply", *pcd = NULL;
	double R[9], t[3] = {1.2, -0.6, 0.6};
	gen_rotation(10, 1, 2, 3, R);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--points"))
			n = (size_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--src"))
			src_path = argv[i + 1];
		else if (!strcmp(argv[i], "--dst"))
			dst_path = argv[i + 1];
		else if (!strcmp(argv[i], "--other"))
			other_path = argv[i + 1];
		else if (!strcmp(argv[i], "--pcd"))
			pcd = argv[i + 1]; /* prefix: PREFIXsrc.pcd, dst, other */
		else if (!strcmp(argv[i], "--eval") && i + 2 < argc) {
			struct engi_icp_report r;
			memset(&r, 0, sizeof(r));
			char *e = argv[i + 2];
			for (int k = 0; k < 12; k++)
				r.transform[k] = strtod(e, &e);
			report(argv[i + 1], &r, -1, R, t);
			return 0;
		}
	}
	double *src = gen_egg_cloud(n, 3);
	double *dst = gen_transformed(src, n, R, t, 11);
	if (write_ply(src_path, src, n) || write_ply(dst_path, dst, n)) {
		perror("write");
		return 1;
	}
	double *other = gen_egg_cloud(n, 4);
	if (pcd) {
		char path[4096];
		const char *name[3] = {"src", "dst", "other"};
		const double *cloud[3] = {src, dst, other};
		for (int k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "%s%s.pcd", pcd, name[k]);
			if (write_pcd(path, cloud[k], n)) {
				perror(path);
				return 1;
			}
		}
	}
	struct engi_icp_options o;
	struct engi_icp_report r;
	struct engi_error e;
	engi_error_init(&e);
	engi_icp_options_default(&o);
	o.method = ENGI_ICP_POINT_TO_PLANE;
	double t0 = now(), c0 = cpu_now();
	if (engi_icp(src, n, dst, n, &o, &r, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	double c1 = cpu_now();
	report("icp_point_to_plane", &r, now() - t0, R, t);
	printf("icp_point_to_plane_cpu_s %.3f\n", c1 - c0);
	o.method = ENGI_ICP_POINT_TO_POINT;
	t0 = now();
	c0 = cpu_now();
	if (engi_icp(src, n, dst, n, &o, &r, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	c1 = cpu_now();
	report("icp_point_to_point", &r, now() - t0, R, t);
	printf("icp_point_to_point_cpu_s %.3f\n", c1 - c0);
	/* distances between two independent samples of the same surface */
	if (write_ply(other_path, other, n)) {
		perror(other_path);
		return 1;
	}
	struct engi_cloud_distance d;
	t0 = now();
	c0 = cpu_now();
	if (engi_cloud_distance(src, n, other, n, &d, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	c1 = cpu_now();
	printf("chamfer_hausdorff_s %.3f\n", now() - t0);
	printf("chamfer_hausdorff_cpu_s %.3f\n", c1 - c0);
	printf("chamfer %.9g\n", d.chamfer);
	printf("hausdorff %.9g\n", d.hausdorff);
	free(src);
	free(dst);
	free(other);
	return 0;
}
