/*
 * cloudgen.h - point clouds with known answers for the point-cloud tests and
 * benchmarks: deterministic samples of an asymmetric closed surface, rigid
 * transforms and permutations. Header-only; aborts on out-of-memory.
 */
#ifndef ENGI_TEST_CLOUDGEN_H
#define ENGI_TEST_CLOUDGEN_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t gen_rand_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double gen_rand01(uint64_t *s)
{
	return (double)(gen_rand_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* n points on an egg-shaped surface of about 60 x 40 x 25 (mm): an
 * ellipsoid whose radius grows with x, so no rotation maps it onto itself
 * and its principal axes are distinct. */
static inline double *gen_egg_cloud(size_t n, uint64_t seed)
{
	double *p = malloc(3 * n * sizeof(double));
	if (!p)
		abort();
	uint64_t s = seed;
	for (size_t i = 0; i < n; i++) {
		double u = 2 * gen_rand01(&s) - 1, ph = 2 * 3.14159265358979323846 * gen_rand01(&s);
		double r = sqrt(1 - u * u);
		double x = u, y = r * cos(ph), z = r * sin(ph);
		double k = 1 + 0.3 * x + 0.1 * y * y;
		p[3 * i] = 30 * x;
		p[3 * i + 1] = 20 * y * k;
		p[3 * i + 2] = 12.5 * z * k;
	}
	return p;
}

/* Row-major rotation of angle deg about the axis (ax, ay, az). */
static inline void gen_rotation(double deg, double ax, double ay, double az, double R[9])
{
	double l = sqrt(ax * ax + ay * ay + az * az), th = deg * 3.14159265358979323846 / 180;
	double k[3] = {ax / l, ay / l, az / l}, c = cos(th), s = sin(th), C = 1 - c;
	R[0] = c + k[0] * k[0] * C;
	R[1] = k[0] * k[1] * C - k[2] * s;
	R[2] = k[0] * k[2] * C + k[1] * s;
	R[3] = k[1] * k[0] * C + k[2] * s;
	R[4] = c + k[1] * k[1] * C;
	R[5] = k[1] * k[2] * C - k[0] * s;
	R[6] = k[2] * k[0] * C - k[1] * s;
	R[7] = k[2] * k[1] * C + k[0] * s;
	R[8] = c + k[2] * k[2] * C;
}

/* out[i] = R p[perm(i)] + t, with a seeded shuffle so that no index pairs
 * the clouds. */
static inline double *gen_transformed(const double *p, size_t n, const double R[9],
				      const double t[3], uint64_t seed)
{
	double *q = malloc(3 * n * sizeof(double));
	size_t *perm = malloc(n * sizeof(size_t));
	if (!q || !perm)
		abort();
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	uint64_t s = seed;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(gen_rand_next(&s) % i);
		size_t x = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		const double *a = p + 3 * perm[i];
		for (int d = 0; d < 3; d++)
			q[3 * i + d] =
			    R[3 * d] * a[0] + R[3 * d + 1] * a[1] + R[3 * d + 2] * a[2] + t[d];
	}
	free(perm);
	return q;
}

#endif
