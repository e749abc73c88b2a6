/*
 * predicates.h - exact orientation tests on double coordinates (private to
 * kernels/mesh). A floating-point evaluation decides when its error bound
 * allows (Shewchuk's static filter); otherwise the determinant is evaluated
 * exactly with floating-point expansions. The sign is always right.
 */
#ifndef ENGI_MESH_PREDICATES_H
#define ENGI_MESH_PREDICATES_H

/* Sign of det [a-d; b-d; c-d]: positive when d lies below the plane of
 * a, b, c seen with a, b, c counter-clockwise (d on the side the normal
 * (b-a)x(c-a) points away from). */
int engi_pred_orient3d(const double a[3], const double b[3], const double c[3], const double d[3]);

/* Sign of (b-a) x (c-a) in the plane of coordinates i and j. */
int engi_pred_orient2d(const double a[3], const double b[3], const double c[3], int i, int j);

#endif
