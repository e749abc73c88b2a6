/*
 * pcb_tree.c - the feature-tree half of the validator's measurement bank
 * (engi/pcb_spec.h): the listed numeric properties of every object, each
 * sketch's circles, arcs, line lengths, line-pair angles and angle
 * constraints, then its two detectors: grids (equal circles, or a cylinder
 * cluster's faces, in rows and columns of even spacing) and circular
 * patterns (evenly around a centre), with its tolerances and rounding.
 */
#include "engi/pcb_spec.h"

#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/mesh.h"
#include "engi/vec3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MIN	 1e-9 /* shorter lines give no direction */
#define LINE_ANGLE_MIN	 1e-4 /* smaller angles between lines are not kept */
#define GRID_BIN_TOL	 0.05 /* of the larger projected range */
#define GRID_SPACING_TOL 0.05
#define CIRC_RADIUS_TOL	 0.05
#define CIRC_GAP_TOL	 0.05

static double r9(double x)
{
	return engi_pcb_round(x, 9);
}

static double r10(double x)
{
	return engi_pcb_round(x, 10);
}

static int skipped_type(const char *t)
{
	static const char *const skip[] = {"App::Origin", "App::Line", "App::Plane",
					   "App::DocumentObjectGroup",
					   "PartDesign::CoordinateSystem"};
	for (size_t i = 0; i < sizeof(skip) / sizeof(*skip); i++)
		if (!strcmp(t, skip[i]))
			return 1;
	return 0;
}

static int is_angle_name(const char *n)
{
	return !strcmp(n, "Angle") || !strcmp(n, "Angle1") || !strcmp(n, "Angle2") ||
	       !strcmp(n, "TaperAngle") || !strcmp(n, "TaperAngle2");
}

static int push(void **arr, size_t *n, size_t *cap, size_t size, void **out)
{
	if (engi_grow(arr, cap, *n + 1, size))
		return ENGI_ENOMEM;
	*out = (char *)*arr + *n * size;
	memset(*out, 0, size);
	(*n)++;
	return 0;
}

/* The line-pair angles of one sketch's lines (unit directions d[0, n)). */
static int line_angles(struct engi_pcb_bank *b, const double (*d)[3], size_t n, size_t *cap)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double c = fabs(engi_dot3(d[i], d[j]));
			double a = acos(c > 1 ? 1 : c);
			if (a < LINE_ANGLE_MIN)
				continue;
			if (b->nline_angles >= ENGI_PCB_LINE_ANGLES_MAX) {
				b->line_angles_capped = 1;
				return 0;
			}
			double *slot;
			if (push((void **)&b->line_angle, &b->nline_angles, cap, sizeof(double),
				 (void **)&slot))
				return ENGI_ENOMEM;
			*slot = r10(a);
		}
	return 0;
}

struct caps {
	size_t feature, prop, angle, grid, circ, dirs;
};

static int features(const struct engi_fc_doc *doc, struct engi_pcb_bank *b, struct caps *cp)
{
	double(*dirs)[3] = NULL;
	/* the values by object, each object's in document order (ObjectData
	 * need not list the objects in the order of Objects) */
	size_t *start = engi_calloc(doc->n + 1, sizeof(*start));
	size_t *order = engi_malloc((doc->nvals + 1) * sizeof(*order));
	if (!start || !order) {
		engi_free(start);
		engi_free(order);
		return ENGI_ENOMEM;
	}
	for (size_t i = 0; i < doc->nvals; i++)
		start[doc->vals[i].obj + 1]++;
	for (size_t o = 0; o < doc->n; o++)
		start[o + 1] += start[o];
	for (size_t i = 0; i < doc->nvals; i++)
		order[start[doc->vals[i].obj]++] = i;
	for (size_t o = doc->n; o > 0; o--)
		start[o] = start[o - 1];
	start[0] = 0;
	int rc = 0;
	for (size_t o = 0; o < doc->n && rc == 0; o++) {
		if (skipped_type(doc->objs[o].type))
			continue;
		struct engi_pcb_feature *f;
		if ((rc = push((void **)&b->feature, &b->nfeatures, &cp->feature, sizeof(*f),
			       (void **)&f)))
			break;
		memcpy(f->name, doc->objs[o].name, sizeof(f->name));
		f->sketch = !strcmp(doc->objs[o].type, "Sketcher::SketchObject");
		f->prop = b->nprops;
		size_t ndirs = 0;
		for (size_t v = start[o]; v < start[o + 1] && rc == 0; v++) {
			const struct engi_fc_value *x = &doc->vals[order[v]];
			if (x->construction || x->kind == ENGI_FCV_GEOMETRY)
				continue;
			struct engi_pcb_prop *p;
			if ((rc = push((void **)&b->prop, &b->nprops, &cp->prop, sizeof(*p),
				       (void **)&p)))
				break;
			p->index = x->index;
			switch (x->kind) {
			case ENGI_FCV_NUMBER:
				p->kind = ENGI_PCB_P_NAMED;
				memcpy(p->name, x->name, sizeof(p->name));
				p->value =
				    is_angle_name(x->name) ? r10(x->v * (M_PI / 180.0)) : r9(x->v);
				break;
			case ENGI_FCV_CIRCLE:
			case ENGI_FCV_ARC:
				p->kind =
				    x->kind == ENGI_FCV_ARC ? ENGI_PCB_P_ARC : ENGI_PCB_P_CIRCLE;
				p->value = r9(x->v);
				for (int k = 0; k < 3; k++)
					p->centre[k] = r9(x->p[k]);
				break;
			case ENGI_FCV_LINE: {
				p->kind = ENGI_PCB_P_LINE;
				double d[3] = {x->q[0] - x->p[0], x->q[1] - x->p[1],
					       x->q[2] - x->p[2]};
				double len = sqrt(engi_dot3(d, d));
				p->value = r9(len);
				f->nlines++;
				if (len > LINE_MIN) {
					double *slot;
					if ((rc = push((void **)&dirs, &ndirs, &cp->dirs,
						       sizeof(*dirs), (void **)&slot)))
						break;
					for (int k = 0; k < 3; k++)
						slot[k] = d[k] / len;
				}
				break;
			}
			default: /* ENGI_FCV_ANGLE_CONSTRAINT */
				p->kind = ENGI_PCB_P_ANGLE;
				p->value = r10(x->v);
				break;
			}
		}
		if (rc == 0) {
			f = &b->feature[b->nfeatures - 1];
			f->nprops = b->nprops - f->prop;
			rc = line_angles(b, (const double(*)[3])dirs, ndirs, &cp->angle);
		}
	}
	engi_free(dirs);
	engi_free(start);
	engi_free(order);
	return rc;
}

/* ---- the detectors ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void centroid(const double (*pts)[3], size_t n, double mean[3])
{
	for (int k = 0; k < 3; k++) {
		mean[k] = 0;
		for (size_t i = 0; i < n; i++)
			mean[k] += pts[i][k];
		mean[k] /= (double)n;
	}
}

/* The validator's principal axes of pts: numpy's sample covariance (for
 * two points the outer product of the first, centred), eigh's vectors. */
static int axes(const double (*pts)[3], size_t n, double mean[3], double w[3], double v[9])
{
	centroid(pts, n, mean);
	double a[9] = {0};
	if (n >= 3) {
		for (size_t i = 0; i < n; i++)
			for (int r = 0; r < 3; r++)
				for (int c = 0; c < 3; c++)
					a[3 * r + c] +=
					    (pts[i][r] - mean[r]) * (pts[i][c] - mean[c]);
		for (int k = 0; k < 9; k++)
			a[k] /= (double)(n - 1);
	} else {
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 3; c++)
				a[3 * r + c] = (pts[0][r] - mean[r]) * (pts[0][c] - mean[c]);
	}
	return engi_sym3_eigen(a, w, v);
}

/* Bins of the projections s[0, n) (sorted here): their count and mean
 * spacing; 0 when the spacings are not even. */
static int bins(double *s, size_t n, double tol, size_t *nb, double *spacing)
{
	qsort(s, n, sizeof(*s), cmp_double);
	if (s[n - 1] - s[0] < tol) {
		*nb = 1;
		*spacing = 0;
		return 1;
	}
	double *centre = engi_malloc(n * sizeof(*centre));
	if (!centre)
		return -1;
	size_t k = 0, in = 1;
	double sum = s[0], last = s[0];
	for (size_t i = 1; i < n; i++) {
		if (s[i] - last < tol) {
			sum += s[i];
			in++;
		} else {
			centre[k++] = sum / (double)in;
			sum = s[i];
			in = 1;
		}
		last = s[i];
	}
	centre[k++] = sum / (double)in;
	*nb = k;
	int ok = 1;
	if (k < 2) {
		*spacing = 0;
	} else {
		double mean = 0;
		for (size_t i = 0; i + 1 < k; i++)
			mean += centre[i + 1] - centre[i];
		mean /= (double)(k - 1);
		*spacing = mean;
		if (!(mean > 0))
			ok = 0;
		for (size_t i = 0; ok && i + 1 < k; i++)
			if (fabs(centre[i + 1] - centre[i] - mean) / mean > GRID_SPACING_TOL)
				ok = 0;
	}
	engi_free(centre);
	return ok;
}

static int grid(struct engi_pcb_bank *b, struct caps *cp, const double (*pts)[3], size_t n,
		size_t count)
{
	if (n < 2)
		return 0;
	double mean[3], w[3], v[9];
	if (axes(pts, n, mean, w, v))
		return 0;
	double *pm = engi_malloc(4 * n * sizeof(double));
	if (!pm)
		return ENGI_ENOMEM;
	double *pn = pm + n, *sm = pn + n, *sn = sm + n;
	double lo_m = INFINITY, hi_m = -INFINITY, lo_n = INFINITY, hi_n = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double d[3] = {pts[i][0] - mean[0], pts[i][1] - mean[1], pts[i][2] - mean[2]};
		pm[i] = d[0] * v[2] + d[1] * v[5] + d[2] * v[8]; /* column 2: the largest */
		pn[i] = d[0] * v[1] + d[1] * v[4] + d[2] * v[7];
		lo_m = fmin(lo_m, pm[i]), hi_m = fmax(hi_m, pm[i]);
		lo_n = fmin(lo_n, pn[i]), hi_n = fmax(hi_n, pn[i]);
	}
	double tol = GRID_BIN_TOL * fmax(fmax(hi_m - lo_m, hi_n - lo_n), 1e-6);
	memcpy(sm, pm, n * sizeof(double));
	memcpy(sn, pn, n * sizeof(double));
	size_t nm, nn;
	double gm, gn;
	int rc = 0;
	int ok_m = bins(sm, n, tol, &nm, &gm), ok_n = ok_m > 0 ? bins(sn, n, tol, &nn, &gn) : 0;
	if (ok_m < 0 || ok_n < 0)
		rc = ENGI_ENOMEM;
	else if (ok_m && ok_n && nm * nn == n) {
		size_t best = 0;
		double bd = INFINITY;
		for (size_t i = 0; i < n; i++) {
			double d = hypot(pm[i] - lo_m, pn[i] - lo_n);
			if (d < bd)
				bd = d, best = i;
		}
		struct engi_pcb_grid *g;
		if ((rc = push((void **)&b->grid, &b->ngrids, &cp->grid, sizeof(*g),
			       (void **)&g)) == 0) {
			g->count = count;
			/* cols the larger count, the major axis's on a tie */
			int major_cols = nm >= nn;
			g->cols = major_cols ? nm : nn;
			g->rows = major_cols ? nn : nm;
			g->spacing_cols = r9(major_cols ? gm : gn);
			g->spacing_rows = r9(major_cols ? gn : gm);
			for (int k = 0; k < 3; k++)
				g->origin[k] = r9(pts[best][k]);
		}
	}
	engi_free(pm);
	return rc;
}

static int circular(struct engi_pcb_bank *b, struct caps *cp, const double (*pts)[3], size_t n,
		    const double *hint)
{
	if (n < 3)
		return 0;
	double mean[3], w[3], v[9], ax[3];
	if (hint) {
		/* a cluster's axis: only the centre is needed, no decomposition */
		double l = sqrt(engi_dot3(hint, hint));
		if (l < 1e-9)
			return 0;
		centroid(pts, n, mean);
		for (int k = 0; k < 3; k++)
			ax[k] = hint[k] / l;
	} else {
		if (axes(pts, n, mean, w, v))
			return 0;
		for (int k = 0; k < 3; k++)
			ax[k] = v[3 * k]; /* column 0: the smallest */
	}
	double tmp[3] = {0, 0, 1}, e1[3], e2[3];
	if (!(fabs(ax[2]) < 0.9))
		tmp[0] = 1, tmp[2] = 0;
	engi_cross3(ax, tmp, e1);
	double l1 = sqrt(engi_dot3(e1, e1));
	if (l1 < 1e-9)
		return 0;
	for (int k = 0; k < 3; k++)
		e1[k] /= l1;
	engi_cross3(ax, e1, e2);
	double *r = engi_malloc(2 * n * sizeof(double));
	if (!r)
		return ENGI_ENOMEM;
	double *th = r + n, mean_r = 0;
	int ok = 1;
	for (size_t i = 0; i < n && ok; i++) {
		double d[3] = {pts[i][0] - mean[0], pts[i][1] - mean[1], pts[i][2] - mean[2]};
		double along = engi_dot3(d, ax);
		double perp[3] = {d[0] - along * ax[0], d[1] - along * ax[1], d[2] - along * ax[2]};
		r[i] = sqrt(engi_dot3(perp, perp));
		if (r[i] < 1e-9)
			ok = 0;
		th[i] = atan2(engi_dot3(perp, e2), engi_dot3(perp, e1));
		mean_r += r[i];
	}
	mean_r /= (double)n;
	if (ok && mean_r < 1e-6)
		ok = 0;
	for (size_t i = 0; i < n && ok; i++)
		if (fabs(r[i] - mean_r) / mean_r > CIRC_RADIUS_TOL)
			ok = 0;
	double gap = 0;
	if (ok) {
		/* the radii are done with: r holds the angular gaps */
		qsort(th, n, sizeof(*th), cmp_double);
		for (size_t i = 0; i < n; i++) {
			double g = th[(i + 1) % n] - th[i];
			r[i] = g <= 0 ? g + 2 * M_PI : g;
			gap += r[i];
		}
		gap /= (double)n;
		for (size_t i = 0; i < n && ok; i++)
			if (fabs(r[i] - gap) / gap > CIRC_GAP_TOL)
				ok = 0;
		double even = 2 * M_PI / (double)n;
		if (ok && fabs(gap - even) / even > CIRC_GAP_TOL)
			ok = 0;
	}
	engi_free(r);
	if (!ok)
		return 0;
	struct engi_pcb_circular *c;
	TRY(push((void **)&b->circular, &b->ncirculars, &cp->circ, sizeof(*c), (void **)&c));
	c->count = n;
	c->radius = r9(mean_r);
	for (int k = 0; k < 3; k++) {
		c->centre[k] = r9(mean[k]);
		c->axis[k] = r9(ax[k]);
	}
	c->pitch = r10(gap);
	return 0;
}

/* A sketch circle or arc: its radius to 6 decimals and its place. */
struct circ_item {
	double key;
	size_t idx;
};

static int cmp_item(const void *a, const void *b)
{
	const struct circ_item *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A group of equal radii: its items it[at, at + n), first the place of
 * its first. */
struct circ_group {
	size_t at, n, first;
};

static int cmp_group(const void *a, const void *b)
{
	const struct circ_group *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* The validator's groups of feature f's circles and arcs by radius (to 6
 * decimals), in the order of each group's first, each detected. */
static int sketch_groups(struct engi_pcb_bank *b, struct caps *cp, const struct engi_pcb_feature *f,
			 int circ)
{
	struct circ_item *it = engi_malloc(f->nprops * sizeof(*it));
	struct circ_group *g = engi_malloc(f->nprops * sizeof(*g));
	double(*pts)[3] = engi_malloc(f->nprops * sizeof(*pts));
	int rc = 0;
	if (!it || !g || !pts)
		rc = ENGI_ENOMEM;
	size_t n = 0, ng = 0;
	for (size_t i = 0; rc == 0 && i < f->nprops; i++) {
		const struct engi_pcb_prop *p = &b->prop[f->prop + i];
		if (p->kind == ENGI_PCB_P_CIRCLE || p->kind == ENGI_PCB_P_ARC)
			it[n++] = (struct circ_item){engi_pcb_round(p->value, 6), f->prop + i};
	}
	if (rc == 0 && n) {
		qsort(it, n, sizeof(*it), cmp_item);
		for (size_t i = 0; i < n; i++)
			if (i == 0 || it[i].key != it[i - 1].key)
				g[ng++] = (struct circ_group){i, 0, it[i].idx};
		for (size_t k = 0; k < ng; k++)
			g[k].n = (k + 1 < ng ? g[k + 1].at : n) - g[k].at;
		qsort(g, ng, sizeof(*g), cmp_group);
	}
	for (size_t k = 0; rc == 0 && k < ng; k++) {
		for (size_t i = 0; i < g[k].n; i++)
			memcpy(pts[i], b->prop[it[g[k].at + i].idx].centre, sizeof(*pts));
		rc = circ ? circular(b, cp, (const double(*)[3])pts, g[k].n, NULL)
			  : grid(b, cp, (const double(*)[3])pts, g[k].n, g[k].n);
	}
	engi_free(it);
	engi_free(g);
	engi_free(pts);
	return rc;
}

static int detect(struct engi_pcb_bank *b, struct caps *cp, int circ)
{
	int rc = 0;
	for (size_t fi = 0; fi < b->nfeatures && rc == 0; fi++)
		if (b->feature[fi].nprops)
			rc = sketch_groups(b, cp, &b->feature[fi], circ);
	for (size_t k = 0; k < b->nclusters && rc == 0; k++) {
		const struct engi_pcb_cluster *c = &b->cluster[k];
		rc = circ ? circular(b, cp, (const double(*)[3])c->centroids, c->count, c->axis)
			  : grid(b, cp, (const double(*)[3])c->centroids, c->count, c->count);
	}
	return rc;
}

int engi_pcb_bank_tree(const struct engi_fc_doc *doc, struct engi_pcb_bank *b,
		       struct engi_error *err)
{
	struct caps cp = {0};
	int rc = features(doc, b, &cp);
	if (rc == 0)
		rc = detect(b, &cp, 0);
	if (rc == 0)
		rc = detect(b, &cp, 1);
	if (rc)
		RAISE(err, ENGI_ENOMEM, "out of memory reading the feature tree for the spec");
	return 0;
}

int engi_pcb_bank_of(const struct engi_brep_report *rep, const char *path, struct engi_pcb_bank *b,
		     int *found, struct engi_error *err)
{
	memset(b, 0, sizeof(*b));
	*found = 0;
	if (!rep->is_doc || rep->measured < 0)
		return 0;
	struct engi_fc_doc doc;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_fc_doc_read(path, &doc, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0)
		return 0; /* the B-rep kernel read it; a file changed since is not found */
	rc = engi_pcb_bank_build(rep, b, err);
	if (rc == 0) {
		rc = engi_pcb_bank_tree(&doc, b, err);
		if (rc)
			engi_pcb_bank_release(b);
	}
	engi_fc_doc_release(&doc);
	*found = rc == 0;
	return rc;
}
