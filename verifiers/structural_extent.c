/*
 * The extent of a structural model as StructureClaw-Bench's model_matches
 * measures it (engi/structural.h, tasks/SCHEMA-structural.md).
 */
#include "engi/structural.h"

#include <math.h>
#include <string.h>

void engi_structural_extent(const struct engi_structural *s, struct engi_structural_extent *x)
{
	const struct engi_frame *f = &s->f;
	/* the vertical axis: StructureClaw's z, which a 2D model reads as y */
	int up = f->dim == 2 ? 1 : 2;
	memset(x, 0, sizeof(*x));
	x->nodes = f->nnodes;
	x->elements = f->nelems;
	if (f->nnodes) {
		double lo[3], hi[3];
		for (int d = 0; d < 3; d++)
			lo[d] = hi[d] = f->xyz[d];
		for (size_t i = 1; i < f->nnodes; i++)
			for (int d = 0; d < 3; d++) {
				double c = f->xyz[3 * i + (size_t)d];
				lo[d] = c < lo[d] ? c : lo[d];
				hi[d] = c > hi[d] ? c : hi[d];
			}
		x->span = hi[0] - lo[0];
		x->height = hi[up] - lo[up];
	}
	double load = 0;
	for (size_t i = 0; i < f->nnodal; i++) {
		const double *F = f->nodal[i].f;
		load += F[up] != 0 ? fabs(F[up]) : fabs(F[0]);
	}
	for (size_t i = 0; i < f->nmember; i++)
		load += fabs(f->member[i].w[up]);
	x->load = load;
}
