/*
 * engisweep kernel mesh | icp | distance - the geometry kernels by hand:
 * mesh validity and mass properties (optionally self-intersections), ICP
 * alignment of two clouds, and Chamfer / Hausdorff distances. Rows of the
 * table in cmd_kernel.c. Files are read by extension (meshio.h); a mesh
 * given where a cloud is expected contributes its vertices.
 */
#include "cli.h"

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/meshio.h"
#include "engi/pointcloud.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GEOM_MAX_VERTS	 ((size_t)50 * 1000 * 1000)
#define GEOM_MAX_TRIS	 ((size_t)50 * 1000 * 1000)
#define GEOM_PAIRS_SHOWN 10
#define PI		 3.14159265358979323846

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A JSON string literal of s. */
static void json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void json_vec(const char *name, const double *v, int n, const char *after)
{
	printf("\"%s\": [", name);
	for (int i = 0; i < n; i++)
		printf("%s%.17g", i ? ", " : "", v[i]);
	printf("]%s", after);
}

/* ---- mesh ---- */

static const char mesh_help[] =
    "usage: engisweep kernel mesh [options] FILE\n"
    "\n"
    "Validity, topology and mass properties of a triangle mesh (.stl, .obj,\n"
    ".ply, or .step/.stp through gmsh): edges by use, degenerate and\n"
    "duplicate faces, shells, Euler characteristic and genus, area, signed\n"
    "volume, centroid, second moments, principal moments, axis-aligned and\n"
    "oriented bounding boxes, and the time each step took.\n"
    "\n"
    "options:\n"
    "      --self-intersections  also find intersecting face pairs\n"
    "      --weld-tol T          merge vertices closer than T (default 1e-6)\n"
    "      --json                one JSON object instead of text\n"
    "  -h, --help                this text\n";

int kernel_geom_mesh(int argc, char **argv)
{
	enum { O_JSON = 256, O_SELFX, O_WELD };
	static const struct option opts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"self-intersections", no_argument, NULL, O_SELFX},
	    {"weld-tol", required_argument, NULL, O_WELD},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int json = 0, selfx = 0, c;
	double weld = 1e-6;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			json = 1;
			break;
		case O_SELFX:
			selfx = 1;
			break;
		case O_WELD:
			if (cli_num("--weld-tol", optarg, 0, 1e300, &weld) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(mesh_help, stdout);
			return 0;
		default:
			fputs(mesh_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(mesh_help, stderr);
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	struct engi_error err;
	engi_error_init(&err);
	struct engi_mesh m;
	engi_mesh_init(&m);
	struct engi_mesh_report r;
	struct engi_obb o;
	struct engi_selfx x;
	memset(&x, 0, sizeof(x));
	double t0 = now_s(), t_read, t_weld, t_an, t_obb, t_sx = 0;
	int rc = engi_mesh_read(path, &m, GEOM_MAX_VERTS, GEOM_MAX_TRIS, &err);
	t_read = now_s();
	if (rc == 0)
		rc = engi_mesh_weld(&m, weld, &err);
	t_weld = now_s();
	if (rc == 0)
		rc = engi_mesh_analyze(&m, &r, &err);
	t_an = now_s();
	if (rc == 0)
		rc = engi_mesh_obb(&m, &o, &err);
	t_obb = now_s();
	if (rc == 0 && selfx) {
		rc = engi_mesh_self_intersections(&m, 0, GEOM_PAIRS_SHOWN, &x, &err);
		t_sx = now_s() - t_obb;
	}
	engi_mesh_release(&m);
	if (rc < 0) {
		cli_error(&err);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO || rc == ENGI_EENV ? EXIT_FAILED
									      : EXIT_USAGE;
	}
	double total = now_s() - t0;
	if (json) {
		printf("{\"file\": ");
		json_str(path);
		printf(", \"vertices\": %zu, \"triangles\": %zu, \"edges\": %zu,\n", r.nverts,
		       r.ntris, r.nedges);
		printf(" \"boundary_edges\": %zu, \"nonmanifold_edges\": %zu, "
		       "\"inconsistent_edges\": %zu,\n",
		       r.boundary_edges, r.nonmanifold_edges, r.inconsistent_edges);
		printf(" \"degenerate_faces\": %zu, \"duplicate_faces\": %zu, \"shells\": %zu,\n",
		       r.degenerate_faces, r.duplicate_faces, r.shells);
		printf(" \"watertight\": %s, \"oriented\": %s, \"euler\": %ld, \"genus\": %ld,\n",
		       r.watertight ? "true" : "false", r.oriented ? "true" : "false", r.euler,
		       r.genus);
		printf(" \"area\": %.17g, \"volume\": %.17g, ", r.area, r.volume);
		json_vec("centroid", r.centroid, 3, ",\n ");
		json_vec("second_moment", r.second_moment, 6, ", ");
		json_vec("principal_moments", r.principal, 3, ",\n ");
		json_vec("bbox_min", r.bbox_min, 3, ", ");
		json_vec("bbox_max", r.bbox_max, 3, ",\n ");
		printf("\"obb\": {");
		json_vec("center", o.center, 3, ", ");
		json_vec("axes", o.axis, 9, ", ");
		json_vec("half_extents", o.half, 3, ", ");
		printf("\"volume\": %.17g, \"method\": \"%s\"},\n", o.volume,
		       engi_obb_method_name(o.method));
		if (selfx) {
			printf(" \"self_intersections\": %zu, \"pairs_tested\": %zu, \"pairs\": [",
			       x.count, x.tested);
			for (size_t i = 0; i < x.npairs; i++)
				printf("%s[%u, %u]", i ? ", " : "", (unsigned)x.pair[2 * i],
				       (unsigned)x.pair[2 * i + 1]);
			printf("], \"self_intersections_s\": %.6f,\n", t_sx);
		}
		printf(" \"read_s\": %.6f, \"weld_s\": %.6f, \"analyze_s\": %.6f, \"obb_s\": %.6f, "
		       "\"total_s\": %.6f}\n",
		       t_read - t0, t_weld - t_read, t_an - t_weld, t_obb - t_an, total);
	} else {
		printf("file          %s\n", path);
		printf("size          %zu vertices, %zu triangles, %zu edges\n", r.nverts, r.ntris,
		       r.nedges);
		printf("edges         %zu boundary, %zu non-manifold, %zu inconsistent\n",
		       r.boundary_edges, r.nonmanifold_edges, r.inconsistent_edges);
		printf("faces         %zu degenerate, %zu duplicate\n", r.degenerate_faces,
		       r.duplicate_faces);
		printf("topology      %zu shells, euler %ld, genus %ld, %s, %s\n", r.shells,
		       r.euler, r.genus, r.watertight ? "watertight" : "not watertight",
		       r.oriented ? "oriented" : "not oriented");
		printf("area          %.10g\n", r.area);
		printf("volume        %.10g\n", r.volume);
		printf("centroid      %.10g %.10g %.10g\n", r.centroid[0], r.centroid[1],
		       r.centroid[2]);
		printf("principal     %.10g %.10g %.10g\n", r.principal[0], r.principal[1],
		       r.principal[2]);
		printf("bbox          [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g]\n", r.bbox_min[0],
		       r.bbox_max[0], r.bbox_min[1], r.bbox_max[1], r.bbox_min[2], r.bbox_max[2]);
		printf("obb           %.6g x %.6g x %.6g, volume %.6g (%s)\n", 2 * o.half[0],
		       2 * o.half[1], 2 * o.half[2], o.volume, engi_obb_method_name(o.method));
		if (selfx) {
			printf("self-x        %zu intersecting face pairs", x.count);
			for (size_t i = 0; i < x.npairs; i++)
				printf("%s(%u, %u)", i ? " " : ": ", (unsigned)x.pair[2 * i],
				       (unsigned)x.pair[2 * i + 1]);
			printf("\n");
		}
		printf("time          read %.3f s, weld %.3f s, analyze %.3f s, obb %.3f s%s",
		       t_read - t0, t_weld - t_read, t_an - t_weld, t_obb - t_an,
		       selfx ? "" : "\n");
		if (selfx)
			printf(", self-intersections %.3f s\n", t_sx);
	}
	engi_selfx_release(&x);
	return 0;
}

/* ---- clouds ---- */

static int read_cloud(const char *path, struct engi_mesh *m, struct engi_error *err)
{
	engi_mesh_init(m);
	return engi_cloud_read(path, m, GEOM_MAX_VERTS, err);
}

static const char icp_help[] =
    "usage: engisweep kernel icp [options] SOURCE TARGET\n"
    "\n"
    "Aligns the SOURCE cloud to the TARGET cloud (.ply, .xyz, or the vertices\n"
    "of a mesh) by ICP and prints the rigid transform (TARGET ~ R SOURCE + t),\n"
    "iterations, stop reason, fitness, inlier RMSE and the time.\n"
    "\n"
    "options:\n"
    "      --method M          point-to-plane (default) or point-to-point\n"
    "      --max-dist D        drop correspondences farther apart than D\n"
    "      --max-iterations N  default 100\n"
    "      --init pca          also start from the principal axes and their\n"
    "                          symmetric variants, keep the best\n"
    "      --json              one JSON object instead of text\n"
    "  -h, --help              this text\n";

int kernel_geom_icp(int argc, char **argv)
{
	enum { O_JSON = 256, O_METHOD, O_MAXD, O_ITER, O_INIT };
	static const struct option opts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"method", required_argument, NULL, O_METHOD},
	    {"max-dist", required_argument, NULL, O_MAXD},
	    {"max-iterations", required_argument, NULL, O_ITER},
	    {"init", required_argument, NULL, O_INIT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct engi_icp_options io;
	engi_icp_options_default(&io);
	int json = 0, c;
	long iters;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			json = 1;
			break;
		case O_METHOD:
			if (!strcmp(optarg, "point-to-plane"))
				io.method = ENGI_ICP_POINT_TO_PLANE;
			else if (!strcmp(optarg, "point-to-point"))
				io.method = ENGI_ICP_POINT_TO_POINT;
			else {
				cli_errorf("--method: '%s' is not one of point-to-plane, "
					   "point-to-point",
					   optarg);
				return EXIT_USAGE;
			}
			break;
		case O_MAXD:
			if (cli_num("--max-dist", optarg, 1e-300, INFINITY, &io.max_dist) < 0)
				return EXIT_USAGE;
			break;
		case O_ITER:
			if (cli_int("--max-iterations", optarg, 1, 100000, &iters) < 0)
				return EXIT_USAGE;
			io.max_iterations = (int)iters;
			break;
		case O_INIT:
			if (strcmp(optarg, "pca")) {
				cli_errorf("--init: '%s' is not 'pca'", optarg);
				return EXIT_USAGE;
			}
			io.init_pca = 1;
			break;
		case 'h':
			fputs(icp_help, stdout);
			return 0;
		default:
			fputs(icp_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fputs(icp_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct engi_mesh a, b;
	double t0 = now_s();
	int rc = read_cloud(argv[optind], &a, &err);
	engi_mesh_init(&b);
	if (rc == 0)
		rc = read_cloud(argv[optind + 1], &b, &err);
	double t_read = now_s();
	struct engi_icp_report r;
	if (rc == 0)
		rc = engi_icp(a.xyz, a.nverts, b.xyz, b.nverts, &io, &r, &err);
	double t_icp = now_s();
	size_t na = a.nverts, nb = b.nverts;
	engi_mesh_release(&a);
	engi_mesh_release(&b);
	if (rc < 0) {
		cli_error(&err);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
	}
	double ang = engi_transform_angle(r.transform) * 180 / PI;
	double t[3] = {r.transform[3], r.transform[7], r.transform[11]};
	const char *method =
	    io.method == ENGI_ICP_POINT_TO_PLANE ? "point-to-plane" : "point-to-point";
	if (json) {
		printf("{\"source\": ");
		json_str(argv[optind]);
		printf(", \"target\": ");
		json_str(argv[optind + 1]);
		printf(", \"source_points\": %zu, \"target_points\": %zu,\n \"method\": \"%s\", ",
		       na, nb, method);
		json_vec("transform", r.transform, 16, ",\n ");
		printf("\"rotation_deg\": %.17g, ", ang);
		json_vec("translation", t, 3, ",\n ");
		printf("\"iterations\": %d, \"stop\": \"%s\", \"fitness\": %.17g, \"rmse\": %.17g, "
		       "\"inliers\": %zu, \"start\": %d,\n",
		       r.iterations, engi_icp_stop_name(r.stop), r.fitness, r.rmse, r.inliers,
		       r.start);
		printf(" \"read_s\": %.6f, \"icp_s\": %.6f}\n", t_read - t0, t_icp - t_read);
	} else {
		printf("clouds        %zu source points, %zu target points\n", na, nb);
		printf("method        %s\n", method);
		for (int i = 0; i < 4; i++)
			printf("%s%12.9f %12.9f %12.9f %14.9g\n",
			       i ? "              " : "transform     ", r.transform[4 * i],
			       r.transform[4 * i + 1], r.transform[4 * i + 2],
			       r.transform[4 * i + 3]);
		printf("rotation      %.9g deg\n", ang);
		printf("result        %d iterations, %s, fitness %.6f, rmse %.6g (%zu inliers)\n",
		       r.iterations, engi_icp_stop_name(r.stop), r.fitness, r.rmse, r.inliers);
		printf("time          read %.3f s, icp %.3f s\n", t_read - t0, t_icp - t_read);
	}
	return 0;
}

static const char distance_help[] =
    "usage: engisweep kernel distance [options] A B\n"
    "\n"
    "Exact nearest-point distances between two clouds (.ply, .xyz, or the\n"
    "vertices of a mesh) both ways: means, maxima, Chamfer (sum of the means)\n"
    "and Hausdorff (the larger maximum), and the time.\n"
    "\n"
    "options:\n"
    "      --json   one JSON object instead of text\n"
    "  -h, --help   this text\n";

int kernel_geom_distance(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int json = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(distance_help, stdout);
			return 0;
		default:
			fputs(distance_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 2) {
		fputs(distance_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	struct engi_mesh a, b;
	double t0 = now_s();
	int rc = read_cloud(argv[optind], &a, &err);
	engi_mesh_init(&b);
	if (rc == 0)
		rc = read_cloud(argv[optind + 1], &b, &err);
	double t_read = now_s();
	struct engi_cloud_distance d;
	if (rc == 0)
		rc = engi_cloud_distance(a.xyz, a.nverts, b.xyz, b.nverts, &d, &err);
	double t_d = now_s();
	size_t na = a.nverts, nb = b.nverts;
	engi_mesh_release(&a);
	engi_mesh_release(&b);
	if (rc < 0) {
		cli_error(&err);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
	}
	if (json) {
		printf("{\"a\": ");
		json_str(argv[optind]);
		printf(", \"b\": ");
		json_str(argv[optind + 1]);
		printf(", \"a_points\": %zu, \"b_points\": %zu,\n \"mean_ab\": %.17g, "
		       "\"mean_ba\": %.17g, \"max_ab\": %.17g, \"max_ba\": %.17g,\n \"chamfer\": "
		       "%.17g, "
		       "\"hausdorff\": %.17g, \"read_s\": %.6f, \"distance_s\": %.6f}\n",
		       na, nb, d.mean_ab, d.mean_ba, d.max_ab, d.max_ba, d.chamfer, d.hausdorff,
		       t_read - t0, t_d - t_read);
	} else {
		printf("clouds        %zu and %zu points\n", na, nb);
		printf("a -> b        mean %.9g, max %.9g\n", d.mean_ab, d.max_ab);
		printf("b -> a        mean %.9g, max %.9g\n", d.mean_ba, d.max_ba);
		printf("chamfer       %.9g\n", d.chamfer);
		printf("hausdorff     %.9g\n", d.hausdorff);
		printf("time          read %.3f s, distances %.3f s\n", t_read - t0, t_d - t_read);
	}
	return 0;
}
