/* Solid-void occupancy: voxel plates with a square bore probed on every grid
 * line (columns through edges and vertices), a torus against its analytic
 * inside, and material volumes of boxes and cylinders with exact answers. */
#include "check.h"
#include "kernels/cloudgen.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/occupancy.h"

#define PI 3.14159265358979323846
#define NX 6
#define NY 6
#define NZ 2
#define H  5.0

/* 30 x 30 x 10 plate with a 10 x 10 square bore through its middle. */
static unsigned char plate_occ[NX * NY * NZ];

static void make_plate(struct engi_mesh *m)
{
	for (int k = 0; k < NZ; k++)
		for (int j = 0; j < NY; j++)
			for (int i = 0; i < NX; i++)
				plate_occ[i + NX * (j + NY * k)] =
				    !(i >= 2 && i <= 3 && j >= 2 && j <= 3);
	engi_mesh_init(m);
	gen_voxels(m, NX, NY, NZ, plate_occ, H);
}

static int occ(int i, int j, int k)
{
	if (i < 0 || j < 0 || k < 0 || i >= NX || j >= NY || k >= NZ)
		return 0;
	return plate_occ[i + NX * (j + NY * k)];
}

static void test_plate_points(void)
{
	struct engi_mesh m;
	make_plate(&m);
	struct engi_solid s;
	CHECK_INT(engi_solid_build(&s, &m, NULL, NULL, NULL), 0);
	int centres = 1, lines = 1;
	for (int k = 0; k < NZ; k++)
		for (int j = 0; j < NY; j++)
			for (int i = 0; i < NX; i++) {
				double p[3] = {(i + 0.5) * H, (j + 0.5) * H, (k + 0.5) * H};
				centres &= engi_solid_contains(&s, p) == occ(i, j, k);
			}
	/* Columns exactly on grid lines pass through edges and vertices; the
	 * perturbed point (x + e, y + e^2) lies in voxel (i, j). */
	for (int k = 0; k < NZ; k++)
		for (int j = 0; j <= NY; j++)
			for (int i = 0; i <= NX; i++) {
				double p[3] = {i * H, j * H, (k + 0.5) * H};
				int want = occ(i, j, k);
				if (engi_solid_contains(&s, p) != want) {
					lines = 0;
					fprintf(stderr, "grid point (%d, %d, %d): expected %d\n", i,
						j, k, want);
				}
			}
	CHECK(centres);
	CHECK(lines);
	/* outside the plate entirely, and on its top face */
	double far[3] = {-1, 15, 5}, above[3] = {5, 5, 10.5}, top[3] = {2.5, 2.5, 10};
	CHECK_INT(engi_solid_contains(&s, far), 0);
	CHECK_INT(engi_solid_contains(&s, above), 0);
	CHECK_INT(engi_solid_contains(&s, top), 1);
	engi_solid_release(&s);

	/* the same plate along a tilted axis: same answers at the centres */
	double axis[3] = {1, 2, 2}, origin[3] = {3, -4, 5};
	CHECK_INT(engi_solid_build(&s, &m, axis, origin, NULL), 0);
	centres = 1;
	for (int k = 0; k < NZ; k++)
		for (int j = 0; j < NY; j++)
			for (int i = 0; i < NX; i++) {
				double p[3] = {(i + 0.5) * H, (j + 0.5) * H, (k + 0.5) * H};
				centres &= engi_solid_contains(&s, p) == occ(i, j, k);
			}
	CHECK(centres);
	engi_solid_release(&s);
	engi_mesh_release(&m);
}

static void test_torus_points(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	gen_torus(&m, 10, 3, 96, 48);
	struct engi_solid s;
	CHECK_INT(engi_solid_build(&s, &m, NULL, NULL, NULL), 0);
	uint64_t seed = 99;
	int agree = 1, tested = 0;
	for (int n = 0; n < 20000; n++) {
		double p[3] = {30 * gen_rand01(&seed) - 15, 30 * gen_rand01(&seed) - 15,
			       8 * gen_rand01(&seed) - 4};
		double rho = sqrt(p[0] * p[0] + p[1] * p[1]);
		double d = sqrt((rho - 10) * (rho - 10) + p[2] * p[2]) - 3;
		if (fabs(d) < 0.05)
			continue; /* the tessellation is within 0.01 of the torus */
		tested++;
		agree &= engi_solid_contains(&s, p) == (d < 0);
	}
	CHECK(agree);
	CHECK(tested > 15000);
	engi_solid_release(&s);
	engi_mesh_release(&m);
}

static double volume(const struct engi_mesh *m, const struct engi_region *r, int res)
{
	double v = NAN;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_mesh_material_volume(m, r, res, &v, &e);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	return v;
}

static void test_material_volume(void)
{
	struct engi_mesh m;
	make_plate(&m);
	struct engi_region r;
	memset(&r, 0, sizeof(r));
	r.kind = ENGI_REGION_BOX;
	double hi[3] = {30, 30, 10};
	memcpy(r.hi, hi, sizeof(hi));
	/* column centres never on the bore's walls: exact */
	CHECK_NEAR(volume(&m, &r, 60), 30 * 30 * 10 - 10 * 10 * 10, 1e-9);
	/* the bore itself holds no material */
	r.kind = ENGI_REGION_CYLINDER;
	double base[3] = {15, 15, 0}, up[3] = {0, 0, 1};
	memcpy(r.base, base, sizeof(base));
	memcpy(r.axis, up, sizeof(up));
	r.radius = 4.9;
	r.length = 10;
	CHECK_NEAR(volume(&m, &r, 256), 0, 0);
	/* a wider cylinder cuts into the walls: pi r^2 h minus its part
	 * inside the bore, integrated here finely */
	r.radius = 6;
	double inside = 0;
	int steps = 200000;
	for (int i = 0; i < steps; i++) {
		double x = -5 + 10 * (i + 0.5) / steps, y = sqrt(36 - x * x);
		inside += 2 * (y < 5 ? y : 5) * 10.0 / steps;
	}
	double want = (PI * 36 - inside) * 10;
	/* midpoint columns: the error is about wall area x column pitch / 2 */
	double got = volume(&m, &r, 1024);
	printf("cylinder r=6 in the bore: %.6f, expected %.6f\n", got, want);
	CHECK_NEAR(got, want, 0.01 * want);
	/* along x through solid wall: all material */
	double bx[3] = {0, 5, 5}, ax[3] = {1, 0, 0};
	memcpy(r.base, bx, sizeof(bx));
	memcpy(r.axis, ax, sizeof(ax));
	r.radius = 2;
	r.length = 30;
	CHECK_NEAR(volume(&m, &r, 64), PI * 4 * 30, 1e-9);
	/* along x through the bore: only the two walls */
	double bx2[3] = {0, 15, 5};
	memcpy(r.base, bx2, sizeof(bx2));
	CHECK_NEAR(volume(&m, &r, 64), PI * 4 * 20, 1e-9);

	struct engi_error e;
	engi_error_init(&e);
	double v;
	CHECK_INT(engi_mesh_material_volume(&m, &r, 0, &v, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "occupancy resolution 0 is not within 1..4096");
	r.axis[0] = 0;
	engi_error_init(&e);
	CHECK_INT(engi_mesh_material_volume(&m, &r, 8, &v, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "occupancy axis (0, 0, 0) is not a direction");
	engi_mesh_release(&m);
}

int main(void)
{
	test_plate_points();
	test_torus_points();
	test_material_volume();
	return check_exit();
}
