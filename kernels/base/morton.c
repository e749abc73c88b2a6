/*
 * morton.c - points in Morton (z-order) order: the one curve the point-cloud
 * kernel (ICP queries walk the target's tree in small steps) and the hull
 * of the oriented box (outside lists close in memory) both take.
 */
#include "engi/morton.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Loops over fewer points than this run on the calling thread. */
#define MORTON_PAR_MIN 4096

/* Spreads the low 16 bits of x to every third bit. */
static uint64_t spread3(uint64_t x)
{
	x &= 0xffff;
	x = (x | x << 32) & 0x1f00000000ffffULL;
	x = (x | x << 16) & 0x1f0000ff0000ffULL;
	x = (x | x << 8) & 0x100f00f00f00f00fULL;
	x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
	x = (x | x << 2) & 0x1249249249249249ULL;
	return x;
}

int engi_morton_order(const double *xyz, size_t n, uint32_t *ord)
{
	uint64_t *key = engi_malloc(2 * n * sizeof(*key) + 1);
	uint32_t *tmp = engi_malloc(n * sizeof(*tmp) + 1);
	if (!key || !tmp) {
		engi_free(key);
		engi_free(tmp);
		return ENGI_ENOMEM;
	}
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 3; d++) {
			double v = xyz[3 * i + d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	double sc[3];
	for (int d = 0; d < 3; d++)
		sc[d] = hi[d] > lo[d] ? 65535.0 / (hi[d] - lo[d]) : 0;
	uint64_t *k0 = key, *k1 = key + n;
#pragma omp parallel for schedule(static) if (n > MORTON_PAR_MIN)
	for (size_t i = 0; i < n; i++) {
		uint64_t c = 0;
		for (int d = 0; d < 3; d++) {
			double g = (xyz[3 * i + d] - lo[d]) * sc[d];
			c |= spread3(g < 65535 ? (uint64_t)g : 65535) << d;
		}
		k0[i] = c;
		ord[i] = (uint32_t)i;
	}
	for (int shift = 0; shift < 48; shift += 8) {
		size_t cnt[257] = {0};
		for (size_t i = 0; i < n; i++)
			cnt[((k0[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++) {
			size_t j = cnt[(k0[i] >> shift) & 0xff]++;
			k1[j] = k0[i];
			tmp[j] = ord[i];
		}
		uint64_t *x = k0;
		k0 = k1;
		k1 = x;
		memcpy(ord, tmp, n * sizeof(*ord));
	}
	engi_free(key);
	engi_free(tmp);
	return 0;
}
