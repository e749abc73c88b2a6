/* Oriented bounding boxes from the convex hull: boxes and cubes turned at
 * random must come back with their exact dimensions whatever lies inside
 * them or however one face is tessellated; planar and collinear vertices;
 * determinism across thread counts. */
#include "check.h"
#include "kernels/cloudgen.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <omp.h>

static void transform(struct engi_mesh *m, const double R[9], const double t[3])
{
	for (size_t v = 0; v < m->nverts; v++) {
		double *p = m->xyz + 3 * v, q[3];
		for (int d = 0; d < 3; d++)
			q[d] = R[3 * d] * p[0] + R[3 * d + 1] * p[1] + R[3 * d + 2] * p[2] + t[d];
		memcpy(p, q, sizeof(q));
	}
}

/* Every used vertex lies in the box (to tol). */
static int contains(const struct engi_mesh *m, const struct engi_obb *o, double tol)
{
	for (size_t v = 0; v < m->nverts; v++) {
		const double *p = m->xyz + 3 * v;
		for (int k = 0; k < 3; k++) {
			const double *a = o->axis + 3 * k;
			double s = a[0] * (p[0] - o->center[0]) + a[1] * (p[1] - o->center[1]) +
				   a[2] * (p[2] - o->center[2]);
			if (fabs(s) > o->half[k] + tol)
				return 0;
		}
	}
	return 1;
}

/* A tiny triangle around point (x, y, z). */
static void speck(struct engi_mesh *m, double x, double y, double z)
{
	uint32_t a = gen_vertex(m, x, y, z), b = gen_vertex(m, x + 1e-3, y, z),
		 c = gen_vertex(m, x, y + 1e-3, z);
	gen_tri(m, a, b, c);
}

static void check_box(struct engi_mesh *m, double a, double b, double c, const char *what)
{
	struct engi_obb o;
	CHECK_INT(engi_mesh_obb(m, &o, NULL), 0);
	printf("%s: %.12g x %.12g x %.12g (%s)\n", what, 2 * o.half[0], 2 * o.half[1],
	       2 * o.half[2], engi_obb_method_name(o.method));
	CHECK_NEAR(o.half[0], a / 2, 1e-9);
	CHECK_NEAR(o.half[1], b / 2, 1e-9);
	CHECK_NEAR(o.half[2], c / 2, 1e-9);
	CHECK_NEAR(o.volume, a * b * c, 1e-8);
	CHECK(contains(m, &o, 1e-9));
}

static void test_rotated_boxes(void)
{
	uint64_t s = 3;
	for (int k = 0; k < 20; k++) {
		struct engi_mesh m;
		engi_mesh_init(&m);
		double a = 1 + 9 * gen_rand01(&s), b = 1 + 9 * gen_rand01(&s),
		       c = 1 + 9 * gen_rand01(&s);
		gen_box(&m, -a / 2, -b / 2, -c / 2, a, b, c);
		double R[9], t[3] = {100 * gen_rand01(&s), -50 * gen_rand01(&s), 7};
		gen_rotation(360 * gen_rand01(&s), gen_rand01(&s) - 0.5, gen_rand01(&s) - 0.5,
			     gen_rand01(&s) - 0.5, R);
		transform(&m, R, t);
		double e[3] = {a, b, c};
		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (e[j] > e[i]) {
					double x = e[i];
					e[i] = e[j];
					e[j] = x;
				}
		check_box(&m, e[0], e[1], e[2], "rotated box");
		engi_mesh_release(&m);
	}
}

/*
 * A cube (principal axes undefined) whose top face is tessellated into a
 * fan crowded towards one corner, with specks of triangles inside it
 * clustered along a skew line: the box must still be the cube.
 */
static void test_cube_with_clutter(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, -1, -1, -1, 2, 2, 2);
	uint64_t s = 11;
	uint32_t c0 = gen_vertex(&m, -1, -1, 1);
	uint32_t prev = UINT32_MAX;
	for (int i = 0; i < 400; i++) {
		/* points on the top face, dense near (-1, -1, 1) */
		double u = gen_rand01(&s), v = gen_rand01(&s);
		uint32_t p = gen_vertex(&m, -1 + 2 * u * u * u, -1 + 2 * v * v * v, 1);
		if (prev != UINT32_MAX)
			gen_tri(&m, c0, prev, p);
		prev = p;
	}
	for (int i = 0; i < 2000; i++) {
		double r = gen_rand01(&s);
		speck(&m, -0.9 + 1.7 * r, -0.8 + 1.2 * r * r, 0.5 * r - 0.2);
	}
	double R[9], t[3] = {3, 4, 5};
	gen_rotation(37, 1, 2, -0.7, R);
	transform(&m, R, t);
	check_box(&m, 2, 2, 2, "cube with clutter");
	engi_mesh_release(&m);
}

/* A 6 x 4 x 2 box whose vertices are mostly interior samples crowded into
 * one end: surface principal axes of everything would tilt; the hull's do
 * not. */
static void test_box_with_interior_points(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, -3, -2, -1, 6, 4, 2);
	uint64_t s = 5;
	for (int i = 0; i < 5000; i++) {
		double u = gen_rand01(&s), v = gen_rand01(&s), w = gen_rand01(&s);
		speck(&m, -2.9 + 5.8 * u * u * u * u, -1.9 + 3.8 * v * u, -0.9 + 1.8 * w * v);
	}
	double R[9], t[3] = {-1, 0.5, 20};
	gen_rotation(71, -0.3, 1, 0.2, R);
	transform(&m, R, t);
	check_box(&m, 6, 4, 2, "box with interior points");
	engi_mesh_release(&m);
}

static void test_degenerate(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	/* one right triangle, legs 3 and 4, turned: a flat 3 x 4 rectangle
	 * (or 5 x 2.4: the same area) */
	uint32_t a = gen_vertex(&m, 0, 0, 0), b = gen_vertex(&m, 3, 0, 0),
		 c = gen_vertex(&m, 0, 4, 0);
	gen_tri(&m, a, b, c);
	double R[9], t[3] = {1, 2, 3};
	gen_rotation(20, 1, 1, 0, R);
	transform(&m, R, t);
	struct engi_obb o;
	CHECK_INT(engi_mesh_obb(&m, &o, NULL), 0);
	CHECK_STR(engi_obb_method_name(o.method), "planar");
	CHECK_NEAR(4 * o.half[0] * o.half[1], 12, 1e-9);
	CHECK_NEAR(o.half[2], 0, 1e-12);
	CHECK(contains(&m, &o, 1e-9));
	engi_mesh_release(&m);

	/* collinear: a sliver along (1, 2, 2), length 9 */
	engi_mesh_init(&m);
	a = gen_vertex(&m, 1, 1, 1);
	b = gen_vertex(&m, 2, 3, 3);
	c = gen_vertex(&m, 4, 7, 7);
	gen_tri(&m, a, b, c);
	CHECK_INT(engi_mesh_obb(&m, &o, NULL), 0);
	CHECK_STR(engi_obb_method_name(o.method), "linear");
	CHECK_NEAR(o.half[0], 4.5, 1e-12);
	CHECK_NEAR(o.half[1], 0, 1e-12);
	CHECK_NEAR(o.volume, 0, 0);
	engi_mesh_release(&m);

	/* one point */
	engi_mesh_init(&m);
	a = gen_vertex(&m, 1, 2, 3);
	gen_tri(&m, a, a, a);
	CHECK_INT(engi_mesh_obb(&m, &o, NULL), 0);
	CHECK_NEAR(o.center[2], 3, 0);
	CHECK_NEAR(o.half[0], 0, 0);
	engi_mesh_release(&m);

	struct engi_error e;
	engi_error_init(&e);
	engi_mesh_init(&m);
	CHECK_INT(engi_mesh_obb(&m, &o, &e), ENGI_EINVALID);
	engi_mesh_release(&m);
}

/* Random specks in a turned box with its corners: the box again, the same
 * bits with one thread and with all, never larger than the axis-aligned
 * box. Points on a sphere: the box holds them and is no larger than the
 * axis-aligned one. */
static void test_random(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	uint64_t s = 9;
	for (int k = 0; k < 8; k++) {
		uint32_t v = gen_vertex(&m, 5 * (k & 1), 3 * (k >> 1 & 1), 1.5 * (k >> 2 & 1));
		gen_tri(&m, v, v, v);
	}
	for (int i = 0; i < 20000; i++)
		speck(&m, 0.01 + 4.98 * gen_rand01(&s), 0.01 + 2.97 * gen_rand01(&s),
		      0.01 + 1.48 * gen_rand01(&s));
	double R[9], t[3] = {0, 0, 0};
	gen_rotation(123, 0.2, -0.5, 1, R);
	transform(&m, R, t);
	check_box(&m, 5, 3, 1.5, "random specks in a box");
	struct engi_obb o1, o2;
	int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	CHECK_INT(engi_mesh_obb(&m, &o1, NULL), 0);
	omp_set_num_threads(threads > 1 ? threads : 2);
	CHECK_INT(engi_mesh_obb(&m, &o2, NULL), 0);
	omp_set_num_threads(threads);
	CHECK(!memcmp(&o1, &o2, sizeof(o1)));
	engi_mesh_release(&m);

	engi_mesh_init(&m);
	for (int i = 0; i < 30000; i++) {
		double u = 2 * gen_rand01(&s) - 1, ph = 6.283185307179586 * gen_rand01(&s);
		double r = sqrt(1 - u * u);
		uint32_t v = gen_vertex(&m, 3 * r * cos(ph), 2 * r * sin(ph), u);
		gen_tri(&m, v, v, v);
	}
	CHECK_INT(engi_mesh_obb(&m, &o1, NULL), 0);
	CHECK(contains(&m, &o1, 1e-9));
	CHECK(o1.volume <= 6 * 4 * 2 * (1 + 1e-12));
	printf("ellipsoid 3 x 2 x 1: box %.6g x %.6g x %.6g (%s)\n", 2 * o1.half[0], 2 * o1.half[1],
	       2 * o1.half[2], engi_obb_method_name(o1.method));
	engi_mesh_release(&m);
}

int main(void)
{
	test_rotated_boxes();
	test_cube_with_clutter();
	test_box_with_interior_points();
	test_degenerate();
	test_random();
	return check_exit();
}
