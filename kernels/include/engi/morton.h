/*
 * morton.h - the ids of points along a Morton (z-order) curve.
 */
#ifndef ENGI_MORTON_H
#define ENGI_MORTON_H

#include <stddef.h>
#include <stdint.h>

/* ord[0..n) = the ids of the n points (xyz, 3 per point) along a Morton
 * curve over a 2^16 grid on their bounding box, ties by id (a stable radix
 * sort of 48-bit keys). 0, or ENGI_ENOMEM. */
int engi_morton_order(const double *xyz, size_t n, uint32_t *ord);

#endif
