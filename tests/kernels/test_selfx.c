/* Self-intersections: clean closed meshes report none; hand-made pairs
 * (crossing, touching, coplanar, sharing a vertex) with known answers; a
 * second body piercing the first; the grid against all pairs on random
 * triangles; early exit. Oriented bounding boxes of rotated boxes. */
#include "check.h"
#include "kernels/cloudgen.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <omp.h>

static size_t count(const struct engi_mesh *m, int early)
{
	struct engi_selfx x;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_mesh_self_intersections(m, early, 16, &x, &e);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	size_t n = x.count;
	engi_selfx_release(&x);
	return n;
}

static size_t pair_of(const double t1[9], const double t2[9])
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	for (int k = 0; k < 3; k++)
		gen_vertex(&m, t1[3 * k], t1[3 * k + 1], t1[3 * k + 2]);
	for (int k = 0; k < 3; k++)
		gen_vertex(&m, t2[3 * k], t2[3 * k + 1], t2[3 * k + 2]);
	gen_tri(&m, 0, 1, 2);
	gen_tri(&m, 3, 4, 5);
	size_t n = count(&m, 0);
	engi_mesh_release(&m);
	return n;
}

static void test_pairs(void)
{
	const double base[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	const double crossing[9] = {0.2, 0.2, -1, 0.3, 0.2, 1, 0.2, 0.3, 1};
	const double above[9] = {0, 0, 1e-300, 1, 0, 1e-300, 0, 1, 1e-300};
	const double apex_touch[9] = {0.25, 0.25, 0, 0.3, 0.2, 1, 0.2, 0.3, 1};
	const double edge_touch[9] = {0.5, 0.5, 0, 1, 1,
				      1,   1,	1, -1}; /* vertex on the hypotenuse */
	const double coplanar_overlap[9] = {0.1, 0.1, 0, 2, 0.1, 0, 0.1, 2, 0};
	const double coplanar_apart[9] = {1, 1, 0, 2, 1, 0, 1, 2, 0};
	const double coplanar_inside[9] = {0.1, 0.1, 0, 0.2, 0.1, 0, 0.1, 0.2, 0};
	/* 0.1 + 0.2 is not 0.3 in doubles: a plane through points that
	 * only rounding puts off it */
	const double tilted[9] = {0, 0, 0, 3, 0, 0.3, 0, 3, 0.3};
	const double nearly[9] = {1, 1, 0.1 + 0.2, 1, 1, 5, 5, 1, 1};
	CHECK_INT(pair_of(base, crossing), 1);
	CHECK_INT(pair_of(base, above), 0);
	CHECK_INT(pair_of(base, apex_touch), 1);
	CHECK_INT(pair_of(base, edge_touch), 1);
	CHECK_INT(pair_of(base, coplanar_overlap), 1);
	CHECK_INT(pair_of(base, coplanar_apart), 0);
	CHECK_INT(pair_of(base, coplanar_inside), 1);
	/* (1, 1, 0.30000000000000004) lies just above the plane z = 0.1 x +
	 * 0.1 y through tilted, whose value there is 0.2: clear of it */
	CHECK_INT(pair_of(tilted, nearly), 0);

	/* sharing one vertex: a fin through the face, and a fin that only
	 * meets it at the shared vertex */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_vertex(&m, 0, 0, 0);
	gen_vertex(&m, 1, 0, 0);
	gen_vertex(&m, 0, 1, 0);
	gen_vertex(&m, 0.2, 0.2, -1);
	gen_vertex(&m, 0.2, 0.2, 1);
	gen_vertex(&m, -1, 0, 1);
	gen_tri(&m, 0, 1, 2);
	gen_tri(&m, 0, 3, 4);
	CHECK_INT(count(&m, 0), 1);
	m.tri[4] = 5; /* (0, 5, 4): above the face, meets it at vertex 0 only */
	m.tri[5] = 4;
	m.xyz[3 * 4 + 0] = -1;
	m.xyz[3 * 4 + 1] = -1;
	CHECK_INT(count(&m, 0), 0);
	engi_mesh_release(&m);
}

static void test_closed(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_torus(&m, 10, 3, 64, 32);
	CHECK_INT(count(&m, 0), 0);
	engi_mesh_release(&m);
	/* voxel plate: many coplanar neighbours sharing vertices */
	unsigned char occ[6 * 6 * 2];
	for (int i = 0; i < 72; i++)
		occ[i] = (unsigned char)(i % 7 != 3);
	gen_voxels(&m, 6, 6, 2, occ, 1);
	CHECK_INT(count(&m, 0), 0);
	engi_mesh_release(&m);
}

static void test_piercing(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_box(&m, 0.5, 0.25, 0.25, 1, 0.5, 0.5);
	struct engi_selfx x;
	CHECK_INT(engi_mesh_self_intersections(&m, 0, 100, &x, NULL), 0);
	/* the +x face of the first box (faces 10, 11) against the four
	 * sides of the second that cross x = 1 (faces 12..19: -z, +z, -y,
	 * +y): every reported pair is one of them, and each of those faces is
	 * in some pair */
	CHECK(x.count > 0);
	CHECK_INT(x.npairs, x.count);
	int ok = 1, seen[24] = {0};
	for (size_t i = 0; i < x.npairs; i++) {
		uint32_t a = x.pair[2 * i], b = x.pair[2 * i + 1];
		ok &= (a == 10 || a == 11) && b >= 12 && b <= 19;
		seen[a] = seen[b] = 1;
		if (i)
			ok &= x.pair[2 * i - 2] < a ||
			      (x.pair[2 * i - 2] == a && x.pair[2 * i - 1] < b);
	}
	CHECK(ok);
	for (int f = 12; f <= 19; f++)
		CHECK(seen[f]);
	CHECK(seen[10] && seen[11]);
	printf("piercing boxes: %zu pairs\n", x.count);
	engi_selfx_release(&x);
	CHECK_INT(count(&m, 1), 1);
	engi_mesh_release(&m);
}

static void test_grid_vs_all_pairs(void)
{
	/* 300 random small triangles in a unit cube, a few of them large */
	struct engi_mesh m;
	engi_mesh_init(&m);
	uint64_t s = 5;
	for (int t = 0; t < 300; t++) {
		double c[3] = {gen_rand01(&s), gen_rand01(&s), gen_rand01(&s)};
		double r = t % 50 == 0 ? 0.8 : 0.08;
		uint32_t v0 = (uint32_t)m.nverts;
		for (int k = 0; k < 3; k++)
			gen_vertex(&m, c[0] + r * (gen_rand01(&s) - 0.5),
				   c[1] + r * (gen_rand01(&s) - 0.5),
				   c[2] + r * (gen_rand01(&s) - 0.5));
		gen_tri(&m, v0, v0 + 1, v0 + 2);
	}
	size_t brute = 0;
	struct engi_mesh two;
	engi_mesh_init(&two);
	for (size_t a = 0; a < m.ntris; a++)
		for (size_t b = a + 1; b < m.ntris; b++) {
			double t1[9], t2[9];
			memcpy(t1, m.xyz + 9 * a, sizeof(t1));
			memcpy(t2, m.xyz + 9 * b, sizeof(t2));
			brute += pair_of(t1, t2);
		}
	size_t grid = count(&m, 0);
	printf("random triangles: %zu intersecting pairs (all pairs: %zu)\n", grid, brute);
	CHECK_INT(grid, brute);
	CHECK(brute > 5);
	int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	CHECK_INT(count(&m, 0), brute);
	omp_set_num_threads(threads);
	engi_mesh_release(&m);
}

static void test_obb(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, -1, -2, -3, 2, 4, 6);
	struct engi_obb o;
	CHECK_INT(engi_mesh_obb(&m, &o, NULL), 0);
	CHECK_NEAR(o.half[0], 3, 1e-12);
	CHECK_NEAR(o.half[1], 2, 1e-12);
	CHECK_NEAR(o.half[2], 1, 1e-12);
	CHECK_NEAR(o.volume, 48, 1e-12);
	double R[9];
	gen_rotation(33, 1, -2, 0.5, R);
	for (size_t v = 0; v < m.nverts; v++) {
		double *p = m.xyz + 3 * v, q[3];
		for (int d = 0; d < 3; d++)
			q[d] = R[3 * d] * p[0] + R[3 * d + 1] * p[1] + R[3 * d + 2] * p[2] + 10;
		memcpy(p, q, sizeof(q));
	}
	CHECK_INT(engi_mesh_obb(&m, &o, NULL), 0);
	CHECK_NEAR(o.half[0], 3, 1e-9);
	CHECK_NEAR(o.half[1], 2, 1e-9);
	CHECK_NEAR(o.half[2], 1, 1e-9);
	for (int d = 0; d < 3; d++)
		CHECK_NEAR(o.center[d], 10, 1e-9);
	/* the longest axis is the box's z axis, rotated */
	CHECK_NEAR(fabs(o.axis[0] * R[2] + o.axis[1] * R[5] + o.axis[2] * R[8]), 1, 1e-9);
	engi_mesh_release(&m);
}

int main(void)
{
	test_pairs();
	test_closed();
	test_piercing();
	test_grid_vs_all_pairs();
	test_obb();
	return check_exit();
}
