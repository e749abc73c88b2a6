/*
 * pcb_bank.c - the validator's surface measurements of a shape, for its
 * spec-consistency checks (engi/pcb_spec.h): cylinder clusters, plane
 * pairs and cones from the B-rep report's faces, with its tolerances and
 * its rounding.
 */
#include "engi/pcb_spec.h"

#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/vec3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLUSTER_RADIUS_REL 0.01
#define PAIR_PARALLEL	   0.999
#define PAIR_OFFSET_MIN	   1e-6

double engi_pcb_round(double x, int digits)
{
	if (!isfinite(x))
		return x;
	char buf[512];
	snprintf(buf, sizeof(buf), "%.*f", digits, x);
	return strtod(buf, NULL);
}

static double r9(double x)
{
	return engi_pcb_round(x, 9);
}

static void unit(const double *a, double *out)
{
	double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
	for (int k = 0; k < 3; k++)
		out[k] = n < 1e-12 ? 0 : a[k] / n;
}

/* A candidate plane pair, with its place among the candidates. */
struct cand {
	struct engi_pcb_plane_pair p;
	double key[4]; /* offset and |normal| to 6 decimals: the validator's dedupe */
	size_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	for (int k = 0; k < 4; k++)
		if (x->key[k] != y->key[k])
			return x->key[k] < y->key[k] ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int cmp_offset(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->p.offset != y->p.offset)
		return x->p.offset < y->p.offset ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int clusters(const struct engi_brep_props *pr, struct engi_pcb_bank *b)
{
	const double cos2 = cos(2.0 * M_PI / 180.0);
	for (size_t i = 0; i < pr->faces; i++) {
		const struct engi_brep_face *f = &pr->face[i];
		if (f->type != ENGI_SURF_CYLINDER)
			continue;
		double ax[3];
		unit(f->axis, ax);
		double r = f->radius, len = fabs(f->vmax - f->vmin);
		struct engi_pcb_cluster *c = NULL;
		for (size_t k = 0; k < b->nclusters && !c; k++) {
			struct engi_pcb_cluster *o = &b->cluster[k];
			double rel = fabs(o->radius - r) / fmax(fmax(o->radius, r), 1e-9);
			if (o->convex == f->forward && !(rel > CLUSTER_RADIUS_REL) &&
			    !(fabs(engi_dot3(o->axis, ax)) < cos2))
				c = o;
		}
		if (!c) {
			struct engi_pcb_cluster *nc =
			    engi_reallocarray(b->cluster, b->nclusters + 1, sizeof(*nc));
			if (!nc)
				return ENGI_ENOMEM;
			b->cluster = nc;
			c = &b->cluster[b->nclusters++];
			memset(c, 0, sizeof(*c));
			c->convex = f->forward;
			c->radius = r;
			memcpy(c->axis, ax, sizeof(ax));
		}
		double(*cc)[3] = engi_reallocarray(c->centroids, c->count + 1, sizeof(*cc));
		if (!cc)
			return ENGI_ENOMEM;
		c->centroids = cc;
		memcpy(c->centroids[c->count++], f->centroid, sizeof(f->centroid));
		c->axial_extent = fmax(c->axial_extent, len);
	}
	for (size_t k = 0; k < b->nclusters; k++) {
		struct engi_pcb_cluster *c = &b->cluster[k];
		c->radius = r9(c->radius);
		c->axial_extent = r9(c->axial_extent);
		for (int d = 0; d < 3; d++) {
			c->axis[d] = r9(c->axis[d]);
			for (size_t j = 0; j < c->count; j++)
				c->centroids[j][d] = r9(c->centroids[j][d]);
		}
	}
	return 0;
}

static int pairs(const struct engi_brep_props *pr, struct engi_pcb_bank *b)
{
	struct cand *c = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < pr->faces && !b->pairs_capped; i++) {
		const struct engi_brep_face *fi = &pr->face[i];
		if (fi->type != ENGI_SURF_PLANE)
			continue;
		double ni[3];
		unit(fi->axis, ni);
		for (size_t j = i + 1; j < pr->faces; j++) {
			const struct engi_brep_face *fj = &pr->face[j];
			if (fj->type != ENGI_SURF_PLANE)
				continue;
			double nj[3];
			unit(fj->axis, nj);
			if (fabs(engi_dot3(ni, nj)) < PAIR_PARALLEL)
				continue;
			double d[3] = {fj->loc[0] - fi->loc[0], fj->loc[1] - fi->loc[1],
				       fj->loc[2] - fi->loc[2]};
			double off = fabs(engi_dot3(d, ni));
			if (off < PAIR_OFFSET_MIN)
				continue;
			if (n >= ENGI_PCB_PAIRS_MAX) {
				b->pairs_capped = 1;
				break;
			}
			if (engi_grow((void **)&c, &cap, n + 1, sizeof(*c)) < 0) {
				engi_free(c);
				return ENGI_ENOMEM;
			}
			struct cand *x = &c[n];
			memcpy(x->p.normal, ni, sizeof(ni));
			x->p.offset = off;
			x->p.min_area = fmin(fi->area, fj->area);
			x->key[0] = engi_pcb_round(off, 6);
			for (int k = 0; k < 3; k++)
				x->key[1 + k] = engi_pcb_round(fabs(ni[k]), 6);
			x->idx = n++;
		}
	}
	/* the first of each key, then a stable sort by the rounded offset */
	if (n)
		qsort(c, n, sizeof(*c), cmp_key);
	size_t kept = 0;
	for (size_t k = 0; k < n; k++)
		if (k == 0 || memcmp(c[k].key, c[kept - 1].key, sizeof(c[k].key)))
			c[kept++] = c[k];
	for (size_t k = 0; k < kept; k++) {
		struct engi_pcb_plane_pair *p = &c[k].p;
		p->offset = r9(p->offset);
		p->min_area = r9(p->min_area);
		for (int d = 0; d < 3; d++)
			p->normal[d] = r9(p->normal[d]);
	}
	if (kept)
		qsort(c, kept, sizeof(*c), cmp_offset);
	if (kept) {
		b->pair = engi_calloc(kept, sizeof(*b->pair));
		if (!b->pair) {
			engi_free(c);
			return ENGI_ENOMEM;
		}
	}
	for (size_t k = 0; k < kept; k++)
		b->pair[k] = c[k].p;
	b->npairs = kept;
	engi_free(c);
	return 0;
}

static int cones(const struct engi_brep_props *pr, struct engi_pcb_bank *b)
{
	for (size_t i = 0; i < pr->faces; i++) {
		const struct engi_brep_face *f = &pr->face[i];
		if (f->type != ENGI_SURF_CONE)
			continue;
		double t = tan(f->semi_angle);
		double lo = f->radius + f->vmin * t, hi = f->radius + f->vmax * t;
		struct engi_pcb_cone *nc = engi_reallocarray(b->cone, b->ncones + 1, sizeof(*nc));
		if (!nc)
			return ENGI_ENOMEM;
		b->cone = nc;
		struct engi_pcb_cone *c = &b->cone[b->ncones++];
		memset(c, 0, sizeof(*c));
		c->radius_min = r9(fmax(0.0, fmin(lo, hi)));
		c->radius_max = r9(fmax(lo, hi));
		c->axial_extent = r9(fabs(f->vmax - f->vmin));
		double ax[3];
		unit(f->axis, ax);
		for (int d = 0; d < 3; d++)
			c->axis[d] = r9(ax[d]);
		c->apex_radius = r9(f->radius);
		c->semi_angle = engi_pcb_round(f->semi_angle, 10);
	}
	return 0;
}

int engi_pcb_bank_build(const struct engi_brep_report *rep, struct engi_pcb_bank *b,
			struct engi_error *err)
{
	memset(b, 0, sizeof(*b));
	const struct engi_brep_props *pr = &rep->props;
	b->volume = r9(pr->volume);
	b->area = r9(pr->area);
	for (int d = 0; d < 3; d++)
		b->centroid[d] = r9(pr->centroid[d]);
	b->has_aabb = pr->aabb_ok;
	if (pr->aabb_ok) {
		for (int d = 0; d < 3; d++) {
			b->aabb_sorted[d] = r9(pr->aabb_max[d] - pr->aabb_min[d]);
			b->aabb_min[d] = r9(pr->aabb_min[d]);
			b->aabb_max[d] = r9(pr->aabb_max[d]);
		}
		/* sorted ascending (three values) */
		double *v = b->aabb_sorted;
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2 - i; j++)
				if (v[j] > v[j + 1]) {
					double t = v[j];
					v[j] = v[j + 1];
					v[j + 1] = t;
				}
	}
	for (int d = 0; d < 3; d++)
		b->obb_sorted[d] = pr->pca_ok ? r9(pr->pca_sorted[d]) : b->aabb_sorted[d];
	int rc = clusters(pr, b);
	if (rc == 0)
		rc = pairs(pr, b);
	if (rc == 0)
		rc = cones(pr, b);
	if (rc < 0) {
		engi_pcb_bank_release(b);
		RAISE(err, rc, "out of memory measuring the spec's bank");
	}
	return 0;
}

void engi_pcb_bank_release(struct engi_pcb_bank *b)
{
	for (size_t k = 0; k < b->nclusters; k++)
		engi_free(b->cluster[k].centroids);
	engi_free(b->cluster);
	engi_free(b->pair);
	engi_free(b->cone);
	engi_free(b->feature);
	engi_free(b->prop);
	engi_free(b->line_angle);
	engi_free(b->grid);
	engi_free(b->circular);
	memset(b, 0, sizeof(*b));
}
