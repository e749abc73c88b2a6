/* Mesh analysis and welding on meshes with known answers. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <omp.h>

static struct engi_mesh_report analyze(const struct engi_mesh *m)
{
	struct engi_mesh_report r;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_mesh_analyze(m, &r, &e);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "analyze: %s\n", e.msg);
	return r;
}

static void test_unit_cube(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	struct engi_mesh_report r = analyze(&m);
	CHECK_INT(r.nverts, 8);
	CHECK_INT(r.ntris, 12);
	CHECK_INT(r.nedges, 18);
	CHECK_INT(r.boundary_edges, 0);
	CHECK_INT(r.nonmanifold_edges, 0);
	CHECK_INT(r.inconsistent_edges, 0);
	CHECK_INT(r.degenerate_faces, 0);
	CHECK_INT(r.duplicate_faces, 0);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.euler, 2);
	CHECK_INT(r.genus, 0);
	CHECK_NEAR(r.volume, 1, 1e-14);
	CHECK_NEAR(r.area, 6, 1e-14);
	for (int d = 0; d < 3; d++) {
		CHECK_NEAR(r.centroid[d], 0.5, 1e-14);
		CHECK_NEAR(r.second_moment[d], 1.0 / 12, 1e-14);
		CHECK_NEAR(r.second_moment[3 + d], 0, 1e-14);
		CHECK_NEAR(r.principal[d], 1.0 / 6, 1e-14);
		CHECK_NEAR(r.bbox_min[d], 0, 0);
		CHECK_NEAR(r.bbox_max[d], 1, 0);
	}
	engi_mesh_release(&m);
}

static void rotate(struct engi_mesh *m, double ax, double az)
{
	for (size_t v = 0; v < m->nverts; v++) {
		double *p = m->xyz + 3 * v;
		double x = p[0], y = p[1], z = p[2];
		double y1 = cos(ax) * y - sin(ax) * z, z1 = sin(ax) * y + cos(ax) * z;
		p[0] = cos(az) * x - sin(az) * y1;
		p[1] = sin(az) * x + cos(az) * y1;
		p[2] = z1;
	}
}

static void test_box_moments(void)
{
	/* 2 x 3 x 4 box away from the origin: int (x - cx)^2 = V a^2 / 12. */
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 10, 20, 30, 2, 3, 4);
	struct engi_mesh_report r = analyze(&m);
	CHECK_NEAR(r.volume, 24, 1e-12);
	CHECK_NEAR(r.area, 2 * (6 + 8 + 12), 1e-12);
	CHECK_NEAR(r.centroid[0], 11, 1e-12);
	CHECK_NEAR(r.centroid[1], 21.5, 1e-12);
	CHECK_NEAR(r.centroid[2], 32, 1e-12);
	CHECK_NEAR(r.second_moment[0], 8, 1e-11);
	CHECK_NEAR(r.second_moment[1], 18, 1e-11);
	CHECK_NEAR(r.second_moment[2], 32, 1e-11);
	CHECK_NEAR(r.second_moment[3], 0, 1e-11);
	CHECK_NEAR(r.second_moment[4], 0, 1e-11);
	CHECK_NEAR(r.second_moment[5], 0, 1e-11);
	CHECK_NEAR(r.principal[0], 26, 1e-11);
	CHECK_NEAR(r.principal[1], 40, 1e-11);
	CHECK_NEAR(r.principal[2], 50, 1e-11);

	/* Rotated: principal moments and volume do not change, the products
	 * of inertia appear. */
	rotate(&m, 0.3, 0.7);
	r = analyze(&m);
	CHECK_NEAR(r.volume, 24, 1e-11);
	CHECK_NEAR(r.principal[0], 26, 1e-10);
	CHECK_NEAR(r.principal[1], 40, 1e-10);
	CHECK_NEAR(r.principal[2], 50, 1e-10);
	CHECK(fabs(r.second_moment[3]) > 1);
	CHECK_NEAR(r.second_moment[0] + r.second_moment[1] + r.second_moment[2], 58, 1e-10);

	/* Inside out: negative volume, not oriented, same moments. */
	for (size_t f = 0; f < m.ntris; f++) {
		uint32_t t = m.tri[3 * f + 1];
		m.tri[3 * f + 1] = m.tri[3 * f + 2];
		m.tri[3 * f + 2] = t;
	}
	r = analyze(&m);
	CHECK_NEAR(r.volume, -24, 1e-11);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.inconsistent_edges, 0);
	CHECK_INT(r.oriented, 0);
	CHECK_NEAR(r.principal[0], 26, 1e-10);
	CHECK_NEAR(r.principal[2], 50, 1e-10);
	engi_mesh_release(&m);
}

static void test_through_hole(void)
{
	/* 3 x 3 x 1 voxels without the middle one: a box with a square
	 * through-hole. */
	unsigned char occ[9] = {1, 1, 1, 1, 0, 1, 1, 1, 1};
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_voxels(&m, 3, 3, 1, occ, 2.0);
	struct engi_mesh_report r = analyze(&m);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.genus, 1);
	CHECK_INT(r.euler, 0);
	CHECK_NEAR(r.volume, 8 * 8, 1e-12);
	CHECK_NEAR(r.area, 32 * 4, 1e-12);
	CHECK_NEAR(r.centroid[0], 3, 1e-12);
	CHECK_NEAR(r.centroid[2], 1, 1e-12);
	engi_mesh_release(&m);

	/* 5 x 3 x 1 with two holes: genus 2. */
	unsigned char occ2[15] = {1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1};
	engi_mesh_init(&m);
	gen_voxels(&m, 5, 3, 1, occ2, 1.0);
	r = analyze(&m);
	CHECK_INT(r.genus, 2);
	CHECK_INT(r.euler, -2);
	CHECK_NEAR(r.volume, 13, 1e-12);
	engi_mesh_release(&m);
}

static void test_two_cubes(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_box(&m, 3, 0, 0, 1, 1, 1);
	struct engi_mesh_report r = analyze(&m);
	CHECK_INT(r.shells, 2);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.genus, 0);
	CHECK_INT(r.euler, 4);
	CHECK_NEAR(r.volume, 2, 1e-13);
	CHECK_NEAR(r.centroid[0], 2, 1e-13);
	/* Each cube: 1/12 + 1 * 1.5^2 about x = 2. */
	CHECK_NEAR(r.second_moment[0], 2 * (1.0 / 12 + 2.25), 1e-12);
	CHECK_NEAR(r.bbox_max[0], 4, 0);
	engi_mesh_release(&m);

	/* Two cubes sharing one corner: still two edge-connected shells, each
	 * a sphere. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_box(&m, 1, 1, 1, 1, 1, 1);
	CHECK_INT(engi_mesh_weld(&m, 0, NULL), 0);
	CHECK_INT(m.nverts, 15);
	r = analyze(&m);
	CHECK_INT(r.shells, 2);
	CHECK_INT(r.genus, 0);
	engi_mesh_release(&m);
}

static void test_torus(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_torus(&m, 10, 3, 96, 48);
	struct engi_mesh_report r = analyze(&m);
	const double pi = 3.14159265358979323846;
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.genus, 1);
	CHECK_INT(r.euler, 0);
	CHECK_NEAR(r.volume / (2 * pi * pi * 10 * 9), 1, 0.01);
	CHECK_NEAR(r.area / (4 * pi * pi * 10 * 3), 1, 0.01);
	CHECK_NEAR(r.centroid[0], 0, 1e-9);
	CHECK_NEAR(r.centroid[2], 0, 1e-9);
	engi_mesh_release(&m);
}

static void test_defects(void)
{
	struct engi_mesh m;
	struct engi_mesh_report r;

	/* A hole: one triangle missing. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	m.ntris--;
	r = analyze(&m);
	CHECK_INT(r.boundary_edges, 3);
	CHECK_INT(r.watertight, 0);
	CHECK_INT(r.oriented, 0);
	CHECK_INT(r.genus, -1);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.euler, 1);
	engi_mesh_release(&m);

	/* A flipped face: its three edges are inconsistent. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	uint32_t t = m.tri[1];
	m.tri[1] = m.tri[2];
	m.tri[2] = t;
	r = analyze(&m);
	CHECK_INT(r.inconsistent_edges, 3);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 0);
	CHECK_INT(r.genus, 0);
	engi_mesh_release(&m);

	/* A duplicate face, once the same way round and once reversed. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_tri(&m, m.tri[0], m.tri[1], m.tri[2]);
	gen_tri(&m, m.tri[5], m.tri[4], m.tri[3]);
	r = analyze(&m);
	CHECK_INT(r.duplicate_faces, 2);
	CHECK_INT(r.nonmanifold_edges, 5); /* the two faces share an edge */
	CHECK_INT(r.watertight, 0);
	CHECK_INT(r.degenerate_faces, 0);
	engi_mesh_release(&m);

	/* Degenerate faces: a repeated index, and three distinct collinear
	 * vertices. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_tri(&m, 0, 0, 1);
	uint32_t mid = gen_vertex(&m, 0.5, 0, 0);
	gen_tri(&m, 0, mid, 1);
	r = analyze(&m);
	CHECK_INT(r.degenerate_faces, 2);
	CHECK_NEAR(r.volume, 1, 1e-14);
	CHECK_NEAR(r.area, 6, 1e-14);
	engi_mesh_release(&m);

	/* A repeated-index face alone changes nothing in the topology. */
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_tri(&m, 3, 5, 3);
	r = analyze(&m);
	CHECK_INT(r.degenerate_faces, 1);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.oriented, 1);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.genus, 0);
	engi_mesh_release(&m);

	/* A non-manifold edge: three faces on edge 0-1. */
	engi_mesh_init(&m);
	gen_vertex(&m, 0, 0, 0);
	gen_vertex(&m, 1, 0, 0);
	gen_vertex(&m, 0, 1, 0);
	gen_vertex(&m, 0, -1, 0);
	gen_vertex(&m, 0, 0, 1);
	gen_tri(&m, 0, 1, 2);
	gen_tri(&m, 1, 0, 3);
	gen_tri(&m, 0, 1, 4);
	r = analyze(&m);
	CHECK_INT(r.nonmanifold_edges, 1);
	CHECK_INT(r.boundary_edges, 6);
	CHECK_INT(r.nedges, 7);
	CHECK_INT(r.shells, 1);
	CHECK_INT(r.watertight, 0);
	CHECK_INT(r.genus, -1);
	CHECK_NEAR(r.area, 1.5, 1e-15);
	engi_mesh_release(&m);

	/* A flat open square: no volume, the centroid is the surface's. */
	engi_mesh_init(&m);
	gen_vertex(&m, 0, 0, 0);
	gen_vertex(&m, 2, 0, 0);
	gen_vertex(&m, 2, 1, 0);
	gen_vertex(&m, 0, 1, 0);
	gen_tri(&m, 0, 1, 2);
	gen_tri(&m, 0, 2, 3);
	r = analyze(&m);
	CHECK_INT(r.boundary_edges, 4);
	CHECK_INT(r.euler, 1);
	CHECK_NEAR(r.volume, 0, 0);
	CHECK_NEAR(r.area, 2, 1e-15);
	CHECK_NEAR(r.centroid[0], 1, 1e-15);
	CHECK_NEAR(r.centroid[1], 0.5, 1e-15);
	CHECK_NEAR(r.second_moment[0], 0, 0);
	engi_mesh_release(&m);
}

static void test_bad_input(void)
{
	struct engi_mesh m;
	struct engi_mesh_report r;
	struct engi_error e;

	engi_mesh_init(&m);
	r = analyze(&m);
	CHECK_INT(r.ntris, 0);
	CHECK_INT(r.shells, 0);
	CHECK_INT(r.watertight, 0);
	CHECK_INT(r.genus, -1);
	CHECK_INT(engi_mesh_weld(&m, 0.1, NULL), 0);

	gen_box(&m, 0, 0, 0, 1, 1, 1);
	m.tri[7] = 8;
	engi_error_init(&e);
	CHECK_INT(engi_mesh_analyze(&m, &r, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "triangle 2 refers to vertex 8, but the mesh has 8 vertices");
	engi_error_init(&e);
	CHECK_INT(engi_mesh_weld(&m, 0, &e), ENGI_EINVALID);
	m.tri[7] = 7;
	m.xyz[5] = NAN;
	engi_error_init(&e);
	CHECK_INT(engi_mesh_analyze(&m, &r, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "vertex 1: coordinate z = nan is not finite");
	m.xyz[5] = 0;
	engi_error_init(&e);
	CHECK_INT(engi_mesh_weld(&m, -1, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "weld tolerance -1 is not a finite number >= 0");
	engi_mesh_release(&m);
}

static void test_weld(void)
{
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	gen_box(&m, 0, 0, 0, 1, 1, 1);
	gen_soup(&m);
	CHECK_INT(m.nverts, 36);
	struct engi_mesh_report r = analyze(&m);
	CHECK_INT(r.boundary_edges, 36);
	CHECK_INT(r.shells, 12);
	engi_error_init(&e);
	CHECK_INT(engi_mesh_weld(&m, 0, &e), 0);
	CHECK_INT(m.nverts, 8);
	r = analyze(&m);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.shells, 1);
	CHECK_NEAR(r.volume, 1, 1e-14);
	engi_mesh_release(&m);

	/* Copies displaced by up to 1e-9 merge at 1e-6 but not at 1e-12. */
	for (int pass = 0; pass < 2; pass++) {
		engi_mesh_init(&m);
		gen_box(&m, 0, 0, 0, 1, 1, 1);
		gen_soup(&m);
		for (size_t i = 0; i < 3 * m.nverts; i++)
			m.xyz[i] += 1e-9 * (double)((i * 7919) % 11) / 10;
		CHECK_INT(engi_mesh_weld(&m, pass ? 1e-12 : 1e-6, NULL), 0);
		if (pass == 0) {
			CHECK_INT(m.nverts, 8);
			r = analyze(&m);
			CHECK_INT(r.watertight, 1);
			CHECK_INT(r.genus, 0);
		} else {
			CHECK(m.nverts > 8);
		}
		engi_mesh_release(&m);
	}

	/* Greedy, no chaining: 0 and 0.6 merge into the first; 1.2 is more
	 * than tol from it and stays. -0 and +0 are the same point. */
	engi_mesh_init(&m);
	gen_vertex(&m, 0, 0, 0);
	gen_vertex(&m, 0.6, 0, 0);
	gen_vertex(&m, 1.2, 0, 0);
	gen_vertex(&m, -0.0, 0, 0);
	gen_tri(&m, 0, 1, 2);
	gen_tri(&m, 3, 2, 1);
	CHECK_INT(engi_mesh_weld(&m, 1.0, NULL), 0);
	CHECK_INT(m.nverts, 2);
	CHECK_INT(m.tri[0], 0);
	CHECK_INT(m.tri[1], 0);
	CHECK_INT(m.tri[2], 1);
	CHECK_INT(m.tri[3], 0);
	CHECK_NEAR(m.xyz[3], 1.2, 0);
	engi_mesh_release(&m);

	/* A tolerance tiny next to the coordinates stays correct. */
	engi_mesh_init(&m);
	gen_box(&m, 1e6, 1e6, 1e6, 1e3, 1e3, 1e3);
	gen_soup(&m);
	CHECK_INT(engi_mesh_weld(&m, 1e-300, NULL), 0);
	CHECK_INT(m.nverts, 8);
	engi_mesh_release(&m);
}

static void test_alloc_failures(void)
{
	/* Every allocation failing in turn gives ENGI_ENOMEM, never a crash. */
	for (long n = 1; n < 40; n++) {
		struct engi_mesh m;
		engi_mesh_init(&m);
		gen_torus(&m, 3, 1, 12, 8);
		gen_soup(&m);
		struct engi_mesh_report r;
		engi_alloc_fail_after(n);
		int rc = engi_mesh_weld(&m, 1e-9, NULL);
		if (rc == 0)
			rc = engi_mesh_analyze(&m, &r, NULL);
		engi_alloc_fail_after(0);
		CHECK(rc == 0 || rc == ENGI_ENOMEM);
		engi_mesh_release(&m);
	}
}

static void test_deterministic(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_torus(&m, 5, 2, 300, 200);
	rotate(&m, 0.1, 0.2);
	struct engi_mesh_report a, b;
	omp_set_num_threads(1);
	CHECK_INT(engi_mesh_analyze(&m, &a, NULL), 0);
	omp_set_num_threads(4);
	CHECK_INT(engi_mesh_analyze(&m, &b, NULL), 0);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	engi_mesh_release(&m);
}

int main(void)
{
	test_unit_cube();
	test_box_moments();
	test_through_hole();
	test_two_cubes();
	test_torus();
	test_defects();
	test_bad_input();
	test_weld();
	test_alloc_failures();
	test_deterministic();
	return check_exit();
}
