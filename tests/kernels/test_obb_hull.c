/* White-box test of the convex hull behind the oriented bounding box
 * (kernels/mesh/obb.c is compiled into this test): on random, spherical,
 * gridded (coplanar and repeated) and nearly flat point sets, no point lies
 * outside any hull face by the exact predicate, the faces' neighbours are
 * mutual, and V - E + F = 2. */
#include "../../kernels/mesh/obb.c"

#include "check.h"
#include "kernels/cloudgen.h"

static void check_hull(const double *p, size_t n, const char *what, size_t want_v)
{
	uint32_t s[4];
	CHECK_INT(initial_simplex(p, n, s), 3);
	struct hull h;
	CHECK_INT(hull_build(&h, p, n, s), 0);
	size_t nf = 0, outside_pts = 0, bad_nb = 0, nv = 0;
	unsigned char *on = calloc(n, 1);
	for (size_t i = 0; i < h.nf; i++) {
		const struct hface *F = &h.f[i];
		if (F->dead)
			continue;
		nf++;
		for (int k = 0; k < 3; k++) {
			on[F->v[k]] = 1;
			uint32_t g = F->nb[k];
			int mutual = 0;
			for (int l = 0; g != NONE && l < 3; l++)
				mutual |= !h.f[g].dead && h.f[g].nb[l] == i &&
					  h.f[g].v[l] == F->v[(k + 1) % 3] &&
					  h.f[g].v[(l + 1) % 3] == F->v[k];
			bad_nb += !mutual;
		}
		for (size_t q = 0; q < n; q++)
			outside_pts += engi_pred_orient3d(P(&h, F->v[0]), P(&h, F->v[1]),
							  P(&h, F->v[2]), p + 3 * q) < 0;
	}
	for (size_t i = 0; i < n; i++)
		nv += on[i];
	printf("%s: %zu points, hull %zu vertices, %zu faces\n", what, n, nv, nf);
	CHECK_INT(outside_pts, 0);
	CHECK_INT(bad_nb, 0);
	CHECK_INT((long)nv - (long)(3 * nf / 2) + (long)nf, 2);
	if (want_v)
		CHECK_INT(nv, want_v);
	free(on);
	hull_release(&h);
}

int main(void)
{
	size_t n = 3000, k = 0;
	double *p = malloc(3 * 4000 * sizeof(double));
	uint64_t s = 1;
	for (size_t i = 0; i < 3 * n; i++)
		p[i] = gen_rand01(&s);
	check_hull(p, n, "random in a cube", 0);
	for (size_t i = 0; i < n; i++) {
		double u = 2 * gen_rand01(&s) - 1, ph = 6.283185307179586 * gen_rand01(&s);
		double r = sqrt(1 - u * u);
		p[3 * i] = r * cos(ph);
		p[3 * i + 1] = r * sin(ph);
		p[3 * i + 2] = u;
	}
	check_hull(p, n, "on a sphere", n);
	for (int x = 0; x < 10; x++)
		for (int y = 0; y < 10; y++)
			for (int z = 0; z < 10; z++) {
				p[3 * k] = x;
				p[3 * k + 1] = y;
				p[3 * k + 2] = z;
				k++;
			}
	for (size_t i = 0; i < 1000; i++, k++)
		memcpy(p + 3 * k, p + 3 * (i * 7 % 1000), 3 * sizeof(double));
	check_hull(p, k, "integer grid, every point twice", 8);
	for (size_t i = 0; i < n; i++) {
		p[3 * i] = gen_rand01(&s);
		p[3 * i + 1] = gen_rand01(&s);
		p[3 * i + 2] = 1e-12 * gen_rand01(&s);
	}
	check_hull(p, n, "thin slab", 0);
	free(p);
	return check_exit();
}
