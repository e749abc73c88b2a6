/*
 * Solid-void occupancy by winding numbers along local z columns.
 *
 * A column at (x, y) crosses a triangle when the perturbed point lies
 * strictly inside the triangle's xy projection: all three edge predicates
 * have the same sign, +1 for a counter-clockwise projection (outward normal
 * pointing up) and -1 for a clockwise one. Each edge predicate is computed
 * with the edge's endpoints in a canonical (lexicographic) order and negated
 * for the other direction, so the two triangles sharing an edge always see
 * the same answer, bit for bit. Walking a column upward, an entry face
 * (normal down) raises the winding number by one and an exit face lowers it;
 * material is where it is positive.
 */
#include "engi/occupancy.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "parallel.h"
#include "engi/mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID_CELLS_MAX	((size_t)1 << 22)
#define COLUMN_HITS_MAX 256 /* on the stack; more spill to the heap */
#define PI		3.14159265358979323846

struct hit {
	double z;
	int sign;
};

static void make_frame(const double axis[3], double f[9])
{
	double z[3] = {0, 0, 1};
	if (axis) {
		/* scaled by the largest component first: no over- or underflow */
		double s = fmax(fabs(axis[0]), fmax(fabs(axis[1]), fabs(axis[2])));
		for (int d = 0; d < 3; d++)
			z[d] = axis[d] / s;
		double l = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
		for (int d = 0; d < 3; d++)
			z[d] /= l;
	}
	/* x: the world axis least aligned with z, made orthogonal */
	int k = 0;
	for (int d = 1; d < 3; d++)
		if (fabs(z[d]) < fabs(z[k]))
			k = d;
	double x[3] = {0, 0, 0};
	x[k] = 1;
	double dot = x[0] * z[0] + x[1] * z[1] + x[2] * z[2];
	for (int d = 0; d < 3; d++)
		x[d] -= dot * z[d];
	double l = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
	for (int d = 0; d < 3; d++)
		x[d] /= l;
	double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2],
		       z[0] * x[1] - z[1] * x[0]};
	if (!axis || (axis[0] == 0 && axis[1] == 0 && axis[2] > 0)) {
		/* +z: keep the world frame exactly */
		memset(f, 0, 9 * sizeof(double));
		f[0] = f[4] = f[8] = 1;
		return;
	}
	memcpy(f, x, sizeof(x));
	memcpy(f + 3, y, sizeof(y));
	memcpy(f + 6, z, sizeof(z));
}

static void to_local(const struct engi_solid *s, const double p[3], double out[3])
{
	double q[3] = {p[0] - s->origin[0], p[1] - s->origin[1], p[2] - s->origin[2]};
	for (int d = 0; d < 3; d++)
		out[d] = s->frame[3 * d] * q[0] + s->frame[3 * d + 1] * q[1] +
			 s->frame[3 * d + 2] * q[2];
}

void engi_solid_release(struct engi_solid *s)
{
	engi_free(s->tri);
	engi_free(s->start);
	engi_free(s->items);
	memset(s, 0, sizeof(*s));
}

static inline size_t clampi(double v, size_t n)
{
	if (!(v > 0))
		return 0;
	if (v >= (double)n)
		return n - 1;
	return (size_t)v;
}

int engi_solid_build(struct engi_solid *s, const struct engi_mesh *m, const double axis[3],
		     const double origin[3], struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	if (axis && !(isfinite(axis[0]) && isfinite(axis[1]) && isfinite(axis[2]) &&
		      (axis[0] != 0 || axis[1] != 0 || axis[2] != 0)))
		RAISE(err, ENGI_EINVALID, "occupancy axis (%g, %g, %g) is not a direction", axis[0],
		      axis[1], axis[2]);
	if (origin)
		TRY(engi_coords_check(origin, 1, "occupancy origin", err));
	make_frame(axis, s->frame);
	if (origin)
		memcpy(s->origin, origin, sizeof(s->origin));
	for (size_t i = 0; i < 3 * m->ntris; i++)
		if (m->tri[i] >= m->nverts)
			RAISE(err, ENGI_EINVALID,
			      "triangle %zu refers to vertex %u, but the mesh has %zu vertices",
			      i / 3, (unsigned)m->tri[i], m->nverts);
	/* within the bound, local coordinates, their extents and the edge
	 * products of the column test stay finite */
	TRY(engi_coords_check(m->xyz, m->nverts, "vertex", err));
	if (m->ntris >= UINT32_MAX / 4)
		RAISE(err, ENGI_ETOOBIG, "mesh has %zu triangles, over the occupancy cap",
		      m->ntris);
	s->tri = engi_malloc((m->ntris ? m->ntris : 1) * 9 * sizeof(double));
	if (!s->tri)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu triangles", m->ntris);
	double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
	size_t nt = 0;
	for (size_t f = 0; f < m->ntris; f++) {
		const uint32_t *t = m->tri + 3 * f;
		if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
			continue;
		double *out = s->tri + 9 * nt;
		for (int k = 0; k < 3; k++) {
			const double *p = m->xyz + 3 * (size_t)t[k];
			to_local(s, p, out + 3 * k);
			for (int d = 0; d < 2; d++) {
				lo[d] = out[3 * k + d] < lo[d] ? out[3 * k + d] : lo[d];
				hi[d] = out[3 * k + d] > hi[d] ? out[3 * k + d] : hi[d];
			}
		}
		nt++;
	}
	s->ntris = nt;
	if (nt == 0) {
		s->nx = s->ny = 1;
		s->cell = 1;
		s->lo[0] = s->lo[1] = 0;
	} else {
		/* about one triangle per cell */
		double w = hi[0] - lo[0], h = hi[1] - lo[1];
		if (!(isfinite(w) && isfinite(h) && isfinite(w * h))) {
			engi_solid_release(s);
			RAISE(err, ENGI_EINVALID, "mesh extent %g x %g overflows a double", w, h);
		}
		double cells =
		    (double)nt < (double)GRID_CELLS_MAX ? (double)nt : (double)GRID_CELLS_MAX;
		double c = sqrt(w * h / cells);
		double ext = w > h ? w : h;
		if (!(c > 0))
			c = ext > 0 ? ext / sqrt(cells) : 1;
		if (c < ext / 4096)
			c = ext / 4096;
		s->cell = c;
		s->lo[0] = lo[0];
		s->lo[1] = lo[1];
		s->nx = (size_t)(w / c) + 1;
		s->ny = (size_t)(h / c) + 1;
	}
	size_t ncell = s->nx * s->ny;
	s->start = engi_calloc(ncell + 1, sizeof(*s->start));
	if (!s->start) {
		engi_solid_release(s);
		RAISE(err, ENGI_ENOMEM, "out of memory for an occupancy grid of %zu cells", ncell);
	}
	size_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t f = 0; f < nt; f++) {
			const double *t = s->tri + 9 * f;
			double x0 = fmin(t[0], fmin(t[3], t[6])), x1 = fmax(t[0], fmax(t[3], t[6]));
			double y0 = fmin(t[1], fmin(t[4], t[7])), y1 = fmax(t[1], fmax(t[4], t[7]));
			size_t i0 = clampi(floor((x0 - s->lo[0]) / s->cell), s->nx);
			size_t i1 = clampi(floor((x1 - s->lo[0]) / s->cell), s->nx);
			size_t j0 = clampi(floor((y0 - s->lo[1]) / s->cell), s->ny);
			size_t j1 = clampi(floor((y1 - s->lo[1]) / s->cell), s->ny);
			for (size_t j = j0; j <= j1; j++)
				for (size_t i = i0; i <= i1; i++) {
					size_t c = j * s->nx + i;
					if (pass == 0)
						s->start[c + 1]++;
					else
						s->items[s->start[c]++] = (uint32_t)f;
				}
		}
		if (pass == 0) {
			for (size_t c = 0; c < ncell; c++)
				s->start[c + 1] += s->start[c];
			total = s->start[ncell];
			s->items = engi_malloc((total ? total : 1) * sizeof(*s->items));
			if (!s->items) {
				engi_solid_release(s);
				RAISE(err, ENGI_ENOMEM, "out of memory for an occupancy grid");
			}
		}
	}
	for (size_t c = ncell; c > 0; c--)
		s->start[c] = s->start[c - 1];
	s->start[0] = 0;
	return 0;
}

static inline int lex_less(const double *u, const double *v)
{
	return u[0] < v[0] || (u[0] == v[0] && u[1] < v[1]);
}

/* Sign of orient(u, v, p + delta): positive when the perturbed p is left
 * of u -> v. Also returns the unperturbed value through *val. */
static inline int edge_side(const double *u, const double *v, double px, double py, double *val)
{
	const double *a = u, *b = v;
	int flip = 0;
	if (lex_less(v, u)) {
		a = v;
		b = u;
		flip = 1;
	}
	double o = (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
	int sg;
	if (o > 0)
		sg = 1;
	else if (o < 0)
		sg = -1;
	else if (b[1] != a[1])
		sg = b[1] > a[1] ? -1 : 1;
	else
		sg = b[0] > a[0] ? 1 : (b[0] < a[0] ? -1 : 0);
	*val = flip ? -o : o;
	return flip ? -sg : sg;
}

/* Crossing of the column at (x, y) with triangle t: 0 none, else the sign
 * and the height. */
static inline int crossing(const double *t, double x, double y, double *z)
{
	double o0, o1, o2;
	int s0 = edge_side(t + 3, t + 6, x, y, &o0); /* opposite vertex 0 */
	int s1 = edge_side(t + 6, t + 0, x, y, &o1); /* opposite vertex 1 */
	int s2 = edge_side(t + 0, t + 3, x, y, &o2); /* opposite vertex 2 */
	if (s0 == 0 || s0 != s1 || s1 != s2)
		return 0;
	double sum = o0 + o1 + o2;
	if (sum != 0)
		*z = (o0 * t[2] + o1 * t[5] + o2 * t[8]) / sum;
	else
		*z = (t[2] + t[5] + t[8]) / 3;
	return s0;
}

static int cmp_hit(const void *pa, const void *pb)
{
	const struct hit *a = pa, *b = pb;
	if (a->z != b->z)
		return a->z < b->z ? -1 : 1;
	return a->sign - b->sign;
}

/* Crossings of the column, sorted by height; *heap set when they did not fit
 * in buf (the caller frees it). Returns the count, or SIZE_MAX on
 * out-of-memory. */
static size_t column_hits(const struct engi_solid *s, double x, double y, struct hit *buf,
			  struct hit **out)
{
	*out = buf;
	if (s->ntris == 0)
		return 0;
	double fi = floor((x - s->lo[0]) / s->cell), fj = floor((y - s->lo[1]) / s->cell);
	if (!(fi >= 0 && fj >= 0 && fi < (double)s->nx && fj < (double)s->ny))
		return 0;
	size_t c = (size_t)fj * s->nx + (size_t)fi;
	size_t n = 0, cap = COLUMN_HITS_MAX;
	struct hit *h = buf;
	for (uint32_t k = s->start[c]; k < s->start[c + 1]; k++) {
		double z;
		int sg = crossing(s->tri + 9 * (size_t)s->items[k], x, y, &z);
		if (!sg)
			continue;
		if (n == cap) {
			struct hit *nh = engi_malloc(2 * cap * sizeof(*nh));
			if (!nh) {
				if (h != buf)
					engi_free(h);
				*out = buf;
				return SIZE_MAX;
			}
			memcpy(nh, h, n * sizeof(*nh));
			if (h != buf)
				engi_free(h);
			h = nh;
			cap *= 2;
		}
		h[n].z = z;
		h[n].sign = sg;
		n++;
	}
	qsort(h, n, sizeof(*h), cmp_hit);
	*out = h;
	return n;
}

int engi_solid_contains(const struct engi_solid *s, const double p[3])
{
	double q[3];
	to_local(s, p, q);
	struct hit buf[COLUMN_HITS_MAX], *h;
	size_t n = column_hits(s, q[0], q[1], buf, &h);
	if (n == SIZE_MAX)
		return 0;
	long below = 0;
	int on_surface = 0;
	for (size_t i = 0; i < n; i++) {
		if (h[i].z < q[2])
			below -= h[i].sign;
		on_surface |= h[i].z == q[2];
	}
	if (h != buf)
		engi_free(h);
	return below > 0 || on_surface;
}

double engi_solid_column(const struct engi_solid *s, double x, double y, double z0, double z1)
{
	struct hit buf[COLUMN_HITS_MAX], *h;
	size_t n = column_hits(s, x, y, buf, &h);
	if (n == SIZE_MAX)
		return NAN;
	double len = 0, enter = 0;
	long w = 0;
	for (size_t i = 0; i < n; i++) {
		long nw = w - h[i].sign;
		if (w <= 0 && nw > 0) {
			enter = h[i].z;
		} else if (w > 0 && nw <= 0) {
			double a = enter > z0 ? enter : z0, b = h[i].z < z1 ? h[i].z : z1;
			if (b > a)
				len += b - a;
		}
		w = nw;
	}
	if (h != buf)
		engi_free(h);
	return len;
}

int engi_mesh_material_volume(const struct engi_mesh *m, const struct engi_region *r, int res,
			      double *volume, struct engi_error *err)
{
	*volume = NAN;
	if (res < 1 || res > ENGI_OCCUPANCY_RES_MAX)
		RAISE(err, ENGI_EINVALID, "occupancy resolution %d is not within 1..%d", res,
		      ENGI_OCCUPANCY_RES_MAX);
	struct engi_solid s;
	double x0, x1, y0, y1, z0, z1;
	if (r->kind == ENGI_REGION_BOX) {
		for (int d = 0; d < 3; d++)
			if (!(engi_coord_ok(r->lo[d]) && engi_coord_ok(r->hi[d]) &&
			      r->lo[d] <= r->hi[d]))
				RAISE(err, ENGI_EINVALID,
				      "box region is empty, not finite or beyond 1e+30 along %c",
				      "xyz"[d]);
		TRY(engi_solid_build(&s, m, NULL, NULL, err));
		x0 = r->lo[0];
		x1 = r->hi[0];
		y0 = r->lo[1];
		y1 = r->hi[1];
		z0 = r->lo[2];
		z1 = r->hi[2];
	} else if (r->kind == ENGI_REGION_CYLINDER) {
		if (!(r->radius > 0 && engi_coord_ok(r->radius) && r->length > 0 &&
		      engi_coord_ok(r->length)))
			RAISE(err, ENGI_EINVALID,
			      "cylinder region needs a positive radius and length of at most "
			      "1e+30 (%g, %g)",
			      r->radius, r->length);
		for (int d = 0; d < 3; d++)
			if (!engi_coord_ok(r->base[d]))
				RAISE(err, ENGI_EINVALID,
				      "cylinder base is not finite or beyond 1e+30");
		TRY(engi_solid_build(&s, m, r->axis, r->base, err));
		x0 = y0 = -r->radius;
		x1 = y1 = r->radius;
		z0 = 0;
		z1 = r->length;
	} else {
		RAISE(err, ENGI_EINVALID, "unknown region kind %d", r->kind);
	}
	double dx = (x1 - x0) / res, dy = (y1 - y0) / res;
	double total = 0;
	long inside_cols = 0;
	int oom = 0;
	/* rows summed in order: the result does not depend on threads */
	double *row = engi_calloc((size_t)res, sizeof(double));
	long *rowcols = engi_calloc((size_t)res, sizeof(long));
	if (!row || !rowcols) {
		engi_free(row);
		engi_free(rowcols);
		engi_solid_release(&s);
		RAISE(err, ENGI_ENOMEM, "out of memory sampling occupancy");
	}
#pragma omp parallel for schedule(dynamic, 1) reduction(| : oom) if ((long)res * res > MESH_PAR_MIN)
	for (int j = 0; j < res; j++) {
		double y = y0 + (j + 0.5) * dy, acc = 0;
		long cols = 0;
		for (int i = 0; i < res; i++) {
			double x = x0 + (i + 0.5) * dx;
			if (r->kind == ENGI_REGION_CYLINDER &&
			    x * x + y * y > r->radius * r->radius)
				continue;
			cols++;
			double l = engi_solid_column(&s, x, y, z0, z1);
			if (isnan(l))
				oom = 1;
			else
				acc += l;
		}
		row[j] = acc;
		rowcols[j] = cols;
	}
	for (int j = 0; j < res; j++) {
		total += row[j];
		inside_cols += rowcols[j];
	}
	engi_free(row);
	engi_free(rowcols);
	engi_solid_release(&s);
	if (oom)
		RAISE(err, ENGI_ENOMEM, "out of memory sampling occupancy");
	if (r->kind == ENGI_REGION_BOX)
		*volume = total * dx * dy;
	else
		*volume =
		    inside_cols ? total * (PI * r->radius * r->radius) / (double)inside_cols : 0;
	return 0;
}
