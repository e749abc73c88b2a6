/*
 * Poisoned coordinates through every geometry entry point a verifier uses:
 * NaN, infinities, values beyond ENGI_MESH_COORD_MAX (1e308, 1e160, sums
 * and squares that overflow), 1e20 beside 1, denormals, all points equal,
 * collinear or coplanar. Each must give a clean error naming the vertex, or
 * a sane result: finite numbers, and an oriented box that holds every
 * vertex. Written as ASCII and binary STL and read back, and handed to the
 * kernels directly, bypassing the reader.
 */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/occupancy.h"
#include "engi/pointcloud.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];

static const char *tmp(const char *name)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A mesh of ntri triangles over the points pts (3 consecutive points per
 * triangle). */
static void soup(struct engi_mesh *m, const double (*pts)[3], size_t ntri)
{
	engi_mesh_init(m);
	for (size_t i = 0; i < 3 * ntri; i++)
		gen_vertex(m, pts[i][0], pts[i][1], pts[i][2]);
	for (size_t t = 0; t < ntri; t++)
		gen_tri(m, (uint32_t)(3 * t), (uint32_t)(3 * t + 1), (uint32_t)(3 * t + 2));
}

/* A closed box with corners (x0, y0, z0) and (x1, y1, z1). */
static void box(struct engi_mesh *m, double x0, double y0, double z0, double x1, double y1,
		double z1)
{
	engi_mesh_init(m);
	gen_box(m, x0, y0, z0, x1 - x0, y1 - y0, z1 - z0);
}

static int finite_n(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* The box o holds every vertex the triangles use (to a relative slack),
 * its axes are orthonormal and its extents finite and non-negative. */
static int obb_sane(const struct engi_mesh *m, const struct engi_obb *o)
{
	if (!finite_n(o->center, 3) || !finite_n(o->axis, 9) || !finite_n(o->half, 3) ||
	    !isfinite(o->volume))
		return 0;
	for (int i = 0; i < 3; i++) {
		if (!(o->half[i] >= 0))
			return 0;
		for (int j = 0; j < 3; j++) {
			double d = 0;
			for (int k = 0; k < 3; k++)
				d += o->axis[3 * i + k] * o->axis[3 * j + k];
			if (fabs(d - (i == j)) > 1e-9)
				return 0;
		}
	}
	double scale = 0;
	for (size_t i = 0; i < 3 * m->nverts; i++)
		scale = fmax(scale, fabs(m->xyz[i]));
	for (size_t t = 0; t < 3 * m->ntris; t++) {
		const double *p = m->xyz + 3 * (size_t)m->tri[t];
		for (int k = 0; k < 3; k++) {
			double d = 0;
			for (int c = 0; c < 3; c++)
				d += o->axis[3 * k + c] * (p[c] - o->center[c]);
			if (fabs(d) > o->half[k] + 1e-9 * scale)
				return 0;
		}
	}
	return 1;
}

/* Every entry point on a mesh the kernels accept: all succeed with finite
 * results. */
static void all_sane(const char *what, struct engi_mesh *m)
{
	struct engi_error e;
	engi_error_init(&e);
	int ok = 1;
	ok &= engi_mesh_weld(m, 0, &e) == 0;
	struct engi_mesh_report r;
	ok &= engi_mesh_analyze(m, &r, &e) == 0;
	ok &= isfinite(r.area) && isfinite(r.volume) && finite_n(r.centroid, 3) &&
	      finite_n(r.second_moment, 6) && finite_n(r.principal, 3);
	struct engi_obb o;
	int orc = engi_mesh_obb(m, &o, &e);
	ok &= orc == 0 && obb_sane(m, &o);
	struct engi_selfx x;
	ok &= engi_mesh_self_intersections(m, 0, 16, &x, &e) == 0;
	engi_selfx_release(&x);
	struct engi_region reg = {.kind = ENGI_REGION_BOX};
	for (int d = 0; d < 3; d++) {
		reg.lo[d] = r.bbox_min[d];
		reg.hi[d] = r.bbox_max[d];
	}
	double vol;
	ok &= engi_mesh_material_volume(m, &reg, 16, &vol, &e) == 0 && isfinite(vol);
	struct engi_cloud_distance cd;
	ok &= engi_cloud_distance(m->xyz, m->nverts, m->xyz, m->nverts, &cd, &e) == 0 &&
	      cd.hausdorff == 0;
	if (m->nverts >= 3) {
		struct engi_icp_options io;
		engi_icp_options_default(&io);
		io.method = ENGI_ICP_POINT_TO_POINT;
		io.init_pca = 1;
		struct engi_icp_report ir;
		ok &= engi_icp(m->xyz, m->nverts, m->xyz, m->nverts, &io, &ir, &e) == 0 &&
		      finite_n(ir.transform, 16);
	}
	if (!ok)
		fprintf(stderr, "%s: not sane (%s)\n", what, e.msg);
	CHECK(ok);
}

/* Every entry point refuses m, naming the vertex and the problem. */
static void all_refuse(const char *what, const struct engi_mesh *m, const char *problem)
{
	struct engi_error e;
	struct engi_mesh c;
	engi_mesh_init(&c);
	gen_reserve(&c, m->nverts, m->ntris);
	memcpy(c.xyz, m->xyz, 3 * m->nverts * sizeof(double));
	memcpy(c.tri, m->tri, 3 * m->ntris * sizeof(uint32_t));
	c.nverts = m->nverts;
	c.ntris = m->ntris;
	int rc[8];
	const char *name[8] = {"weld",	"analyze", "obb", "selfx",
			       "solid", "kdtree",  "icp", "distance"};
	char msg[8][ENGI_ERROR_MSG_MAX];
	struct engi_mesh_report r;
	struct engi_obb o;
	struct engi_selfx x;
	struct engi_solid s;
	struct engi_kdtree t;
	struct engi_icp_options io;
	struct engi_icp_report ir;
	struct engi_cloud_distance cd;
	engi_icp_options_default(&io);
	for (int k = 0; k < 8; k++) {
		engi_error_init(&e);
		switch (k) {
		case 0:
			rc[k] = engi_mesh_weld(&c, 1e-6, &e);
			break;
		case 1:
			rc[k] = engi_mesh_analyze(&c, &r, &e);
			break;
		case 2:
			rc[k] = engi_mesh_obb(&c, &o, &e);
			break;
		case 3:
			rc[k] = engi_mesh_self_intersections(&c, 0, 16, &x, &e);
			break;
		case 4:
			rc[k] = engi_solid_build(&s, &c, NULL, NULL, &e);
			break;
		case 5:
			rc[k] = engi_kdtree_build(&t, c.xyz, c.nverts, &e);
			break;
		case 6:
			rc[k] = engi_icp(c.xyz, c.nverts, c.xyz, c.nverts, &io, &ir, &e);
			break;
		default:
			rc[k] = engi_cloud_distance(c.xyz, c.nverts, c.xyz, c.nverts, &cd, &e);
		}
		snprintf(msg[k], sizeof(msg[k]), "%s", e.msg);
	}
	for (int k = 0; k < 8; k++) {
		int good = rc[k] == ENGI_EINVALID && strstr(msg[k], problem) &&
			   (strstr(msg[k], "vertex ") || strstr(msg[k], "point "));
		if (!good)
			fprintf(stderr, "%s: %s gave %d '%s', expected a refusal saying '%s'\n",
				what, name[k], rc[k], msg[k], problem);
		CHECK(good);
	}
	engi_mesh_release(&c);
}

/* Written as STL (ASCII and binary) and read back: the reader refuses it
 * with problem, or every kernel takes it sanely. */
static void through_files(const char *what, const struct engi_mesh *m, const char *problem,
			  const char *bin_problem)
{
	for (int bin = 0; bin < 2; bin++) {
		const char *path = tmp(bin ? "p-bin.stl" : "p-ascii.stl");
		CHECK_INT(bin ? gen_write_stl_binary(path, m, "poison")
			      : gen_write_stl_ascii(path, m),
			  0);
		struct engi_mesh r;
		struct engi_error e;
		engi_mesh_init(&r);
		engi_error_init(&e);
		int rc = engi_stl_read(path, &r, 1000, &e);
		const char *want = bin ? bin_problem : problem;
		if (want) {
			int good = rc == ENGI_EPARSE && strstr(e.msg, want) &&
				   strstr(e.msg, "facet ") && strstr(e.msg, "vertex ") &&
				   r.nverts == 0 && r.xyz == NULL;
			if (!good)
				fprintf(stderr, "%s (%s): read gave %d '%s', expected '%s'\n", what,
					bin ? "binary" : "ASCII", rc, e.msg, want);
			CHECK(good);
		} else {
			if (rc != 0)
				fprintf(stderr, "%s (%s): read gave %d '%s'\n", what,
					bin ? "binary" : "ASCII", rc, e.msg);
			CHECK_INT(rc, 0);
			if (rc == 0) {
				char label[128];
				snprintf(label, sizeof(label), "%s (%s)", what,
					 bin ? "binary" : "ASCII");
				all_sane(label, &r);
			}
		}
		engi_mesh_release(&r);
	}
}

static const char *const NOT_FINITE = "is not finite";
static const char *const TOO_BIG = "exceeds 1e+30 in magnitude";

static void test_refused(void)
{
	const double nan = NAN, inf = INFINITY;
	struct {
		const char *what;
		double p[6][3];
		const char *problem, *bin_problem;
	} cases[] = {
	    {"NaN",
	     {{0, 0, 0}, {1, 0, 0}, {nan, nan, nan}, {0, 0, 1}, {1, 1, 1}, {0, 1, 0}},
	     NOT_FINITE,
	     NOT_FINITE},
	    {"inf",
	     {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {inf, -inf, 0}, {0, 1, 0}},
	     NOT_FINITE,
	     NOT_FINITE},
	    {"1e308",
	     {{-1e308, -1e308, 0},
	      {1e308, 0, 1},
	      {0, 1e308, 1e308},
	      {0, 0, 0},
	      {1, 0, 0},
	      {0, 1, 0}},
	     TOO_BIG,
	     NOT_FINITE},
	    {"sum overflows",
	     {{1.7e308, 0, 0},
	      {-1.7e308, 0, 0},
	      {0, 1.7e308, 0},
	      {0, 0, -1.7e308},
	      {1, 1, 1},
	      {1.7e308, 1.7e308, 1.7e308}},
	     TOO_BIG,
	     NOT_FINITE},
	    {"square overflows",
	     {{1e160, 0, 0},
	      {0, 1e160, 0},
	      {0, 0, 1e160},
	      {1, 2, 3},
	      {1e160, 1e160, 0},
	      {0, 1, 1e155}},
	     TOO_BIG,
	     NOT_FINITE},
	    {"1e38",
	     {{3.3e38, 0, 0}, {0, -3.3e38, 0}, {0, 0, 1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}},
	     TOO_BIG,
	     TOO_BIG},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct engi_mesh m;
		soup(&m, cases[i].p, 2);
		all_refuse(cases[i].what, &m, cases[i].problem);
		through_files(cases[i].what, &m, cases[i].problem, cases[i].bin_problem);
		engi_mesh_release(&m);
	}
	/* "nan", "inf", "-Infinity" and "1e400" as text */
	static const char *const words[] = {"nan", "inf", "-Infinity", "1e400", "NAN"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		char text[512];
		int n = snprintf(text, sizeof(text),
				 "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 "
				 "0 0\nvertex 0 %s 0\nendloop\nendfacet\nendsolid t\n",
				 words[i]);
		CHECK_INT(gen_write_file(tmp("w.stl"), text, (size_t)n), 0);
		struct engi_mesh m;
		struct engi_error e;
		engi_mesh_init(&m);
		engi_error_init(&e);
		CHECK_INT(engi_stl_read(tmp("w.stl"), &m, 10, &e), ENGI_EPARSE);
		CHECK(strstr(e.msg, "line 6: facet 0, vertex 3: coordinate y = ") != NULL);
		CHECK(strstr(e.msg, NOT_FINITE) != NULL);
		engi_mesh_release(&m);
	}
}

static void test_extreme_but_accepted(void)
{
	struct {
		const char *what;
		double p[12][3];
		size_t ntri;
	} cases[] = {
	    /* the outside review's case: 1e20 beside 1 */
	    {"1e20 beside 1",
	     {{1e20, 0, 0},
	      {1, 1, 0},
	      {0, 0, 1},
	      {1, 2, 3},
	      {1e20, 1, 7},
	      {4, 5, 6},
	      {0, 0, 1e20},
	      {1, 0, 0},
	      {0, 1, 1e-20},
	      {1e20, 1e20, 1},
	      {2, 1, 1},
	      {1, 2, 1}},
	     4},
	    /* 9e29: 1e30 as a float is a little more than 1e30 */
	    {"9e29 beside 1e-30",
	     {{9e29, -9e29, 0},
	      {1e-30, 1, 0},
	      {0, 0, 1e-30},
	      {-9e29, 2, 3},
	      {1, 9e29, 7},
	      {4, 5, -9e29},
	      {0, 0, 9e29},
	      {1e-30, 0, 0},
	      {0, 1, 1e-30},
	      {1, 1, 1},
	      {1e29, 3e29, 1},
	      {1, 2, 1}},
	     4},
	    {"denormals",
	     {{5e-324, 0, 0},
	      {0, 1e-310, 0},
	      {0, 0, 2e-310},
	      {1e-320, 1e-320, 1e-320},
	      {0, 0, 0},
	      {4e-323, 1e-315, 0}},
	     2},
	    {"denormals beside 1",
	     {{1, 0, 0}, {0, 1e-310, 0}, {0, 0, 1}, {1e-320, 1, 1e-320}, {0, 0, 0}, {1, 1, 5e-324}},
	     2},
	    {"all equal", {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, 2},
	    {"collinear",
	     {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {1e20, 1e20, 1e20}, {-5, -5, -5}},
	     2},
	    {"coplanar",
	     {{0, 0, 0},
	      {1, 0, 0},
	      {0, 1, 0},
	      {5, 5, 0},
	      {1e20, 3, 0},
	      {-7, 1e-20, 0},
	      {2, 9, 0},
	      {3, 1, 0},
	      {1, 1, 0}},
	     3},
	    {"coplanar, tilted",
	     {{0, 0, 0},
	      {1, 1, 1},
	      {2, 0, 2},
	      {1e20, 0, 1e20},
	      {3, 1e-20, 3},
	      {-1, 5, -1},
	      {7, 7, 7},
	      {1, 9, 1},
	      {-1e20, 1, -1e20}},
	     3},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct engi_mesh m;
		soup(&m, cases[i].p, cases[i].ntri);
		all_sane(cases[i].what, &m);
		engi_mesh_release(&m);
		soup(&m, cases[i].p, cases[i].ntri);
		/* binary STL rounds to float: 5e-324 and 1e-310 become 0 */
		through_files(cases[i].what, &m, NULL, NULL);
		engi_mesh_release(&m);
	}
	/* closed boxes far out and lopsided */
	struct engi_mesh m;
	box(&m, 1e20, 1e20, 1e20, 1e20 + 1e6, 1e20 + 1e6, 1e20 + 1e6);
	all_sane("box at 1e20", &m);
	engi_mesh_release(&m);
	box(&m, -1e20, 0, 0, 1, 1, 1);
	all_sane("box 1e20 by 1", &m);
	engi_mesh_release(&m);
	box(&m, -1e30, -1e30, -1e30, 1e30, 1e30, 1e30);
	all_sane("box of 1e30", &m);
	engi_mesh_release(&m);
}

/* Random triangles whose coordinates spread over 10^-320 .. 10^30 (and
 * their negatives and zero): the oriented box must hold them all. */
static void test_wild_ranges(void)
{
	srand(12345);
	int bad = 0;
	for (int it = 0; it < 300; it++) {
		double p[30][3];
		size_t ntri = 1 + (size_t)(rand() % 10);
		int flat = rand() % 4; /* 0: coplanar in z, 1: collinear-ish */
		for (size_t i = 0; i < 3 * ntri; i++)
			for (int d = 0; d < 3; d++) {
				int k = rand() % 8;
				double mag =
				    k == 0 ? 0 : pow(10, -320 + 350 * (double)rand() / RAND_MAX);
				p[i][d] = (rand() & 1 ? -1 : 1) * mag;
				if (k == 1)
					p[i][d] = 1;
			}
		for (size_t i = 0; i < 3 * ntri; i++) {
			if (flat == 0)
				p[i][2] = 0;
			if (flat == 1)
				p[i][1] = p[i][2] = p[i][0];
		}
		struct engi_mesh m;
		soup(&m, p, ntri);
		struct engi_obb o;
		struct engi_error e;
		engi_error_init(&e);
		if (engi_mesh_obb(&m, &o, &e) != 0 || !obb_sane(&m, &o)) {
			if (bad++ < 5)
				fprintf(stderr, "wild set %d: obb failed or does not hold (%s)\n",
					it, e.msg);
		}
		struct engi_selfx x;
		if (engi_mesh_self_intersections(&m, 0, 4, &x, &e) != 0)
			bad++;
		engi_selfx_release(&x);
		engi_mesh_release(&m);
	}
	CHECK_INT(bad, 0);
}

/* A query of NaN coordinates still names a point of the tree. */
static void test_nan_query(void)
{
	double pts[3 * 40];
	for (int i = 0; i < 120; i++)
		pts[i] = (double)(i * 7 % 13);
	struct engi_kdtree t;
	CHECK_INT(engi_kdtree_build(&t, pts, 40, NULL), 0);
	double q[3] = {NAN, 0, 0}, d2 = 0;
	uint32_t id = UINT32_MAX;
	engi_kdtree_nearest(&t, q, &id, &d2);
	CHECK(id < 40);
	CHECK(isnan(d2));
	uint32_t ids[4];
	double dd[4];
	CHECK_INT(engi_kdtree_knn(&t, q, 4, ids, dd), 4);
	CHECK(ids[0] < 40 && ids[3] < 40);
	engi_kdtree_release(&t);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/engi-poison-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_refused();
	test_extreme_but_accepted();
	test_wild_ranges();
	test_nan_query();
	unlink(tmp("p-ascii.stl"));
	unlink(tmp("p-bin.stl"));
	unlink(tmp("w.stl"));
	rmdir(dir);
	return check_exit();
}
