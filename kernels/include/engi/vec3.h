/*
 * vec3.h - the dot and cross products of 3-vectors, for the kernels and
 * verifiers that each had their own.
 */
#ifndef ENGI_VEC3_H
#define ENGI_VEC3_H

static inline double engi_dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* c = a x b; c may not be a or b. */
static inline void engi_cross3(const double a[3], const double b[3], double c[3])
{
	c[0] = a[1] * b[2] - a[2] * b[1];
	c[1] = a[2] * b[0] - a[0] * b[2];
	c[2] = a[0] * b[1] - a[1] * b[0];
}

#endif
