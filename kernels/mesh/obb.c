/*
 * Oriented bounding box from the convex hull of the vertices.
 *
 * The hull is built by Quickhull (each face keeps the points outside it;
 * the farthest of them is added, the faces it sees are replaced by a cone
 * over their horizon) with the exact orientation test of predicates.c, so
 * that it is a true convex hull whatever the input's degeneracies. Then
 * candidate frames are measured and the smallest box kept:
 *
 *   - the coordinate axes;
 *   - the principal directions of the hull's surface, area-weighted over
 *     its triangles, so that neither vertex density nor anything inside the
 *     hull biases them;
 *   - for each of the largest hull faces (one per normal): the face's
 *     normal, and in the plane across it the minimum-area rectangle of the
 *     hull's outline (rotating calipers over the outline's convex polygon;
 *     the outline is the projection of the silhouette edges, those between
 *     a face turned towards the normal and one turned away).
 *
 * A box flush with a hull face is the minimum-volume box for boxes and
 * for most engineering parts (the optimum always has a face flush with a
 * hull face or two hull edges flush with adjacent faces of the box). The
 * extents of the chosen frame are taken over all vertices. Points that are
 * all coplanar or collinear are boxed in their plane or along their line,
 * with zero thickness. Everything runs in a fixed order: deterministic.
 *
 * Robustness: the hull and the outlines are built on a copy of the
 * vertices centred on their box, scaled by a power of two into [-1, 1] and
 * snapped to multiples of 2^-SNAP_BITS (a change of at most 2^-61 of the
 * box's half extent),
 * and the outlines' points the same way. Every difference, product and
 * error term the exact predicates form is then a multiple of 2^-180 at
 * most 2^4: nothing over- or underflows, the predicates are exact, and
 * Quickhull and the monotone chain see a consistent geometry whatever the
 * input (1e20 beside 1, denormals). The chosen frame's extents are taken
 * over the original vertices. A hull step whose horizon is not one closed
 * loop (impossible with exact predicates) stops with an error rather than
 * linking faces wrongly.
 */
#include "engi/mesh.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/morton.h"
#include "engi/vec3.h"
#include "predicates.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* face normals tried: at most this many, and fewer on large hulls so that
 * the silhouette scans stay within OBB_FACE_WORK face visits */
#define OBB_FACES_MAX 256
#define OBB_FACES_MIN 16
#define OBB_FACE_WORK 8000000.0
/* two face normals closer than this (1 - cosine) count as one */
#define OBB_SAME_NORMAL 1e-12
/* coordinates in (-1, 1) are snapped to multiples of 2^-SNAP_BITS */
#define SNAP_BITS 60
/* a hull step found a horizon that is not one loop */
#define HULL_INCONSISTENT (-2)
/* points of frame_across's scratch for m points: m to sort, and a chain of
 * up to 2 m (what a monotone chain can push, whatever its predicate) */
#define FRAME_WORK(m) (3 * (m) + 2)

const char *engi_obb_method_name(int method)
{
	switch (method) {
	case ENGI_OBB_AXIS_ALIGNED:
		return "axis_aligned";
	case ENGI_OBB_HULL_PCA:
		return "hull_pca";
	case ENGI_OBB_HULL_FACE:
		return "hull_face";
	case ENGI_OBB_PLANAR:
		return "planar";
	case ENGI_OBB_LINEAR:
		return "linear";
	}
	return "unknown";
}

/* ---- small vector helpers ---- */

static inline void sub3(const double a[3], const double b[3], double c[3])
{
	for (int d = 0; d < 3; d++)
		c[d] = a[d] - b[d];
}

static int normalize3(double a[3])
{
	double l = sqrt(engi_dot3(a, a));
	if (!(l > 0))
		return -1;
	for (int d = 0; d < 3; d++)
		a[d] /= l;
	return 0;
}

/* Completes the unit vector n to a right-handed orthonormal frame
 * (u, v, n). */
static void frame_around(const double n[3], double u[3], double v[3])
{
	int m = 0;
	for (int d = 1; d < 3; d++)
		if (fabs(n[d]) < fabs(n[m]))
			m = d;
	double e[3] = {0, 0, 0};
	e[m] = 1;
	engi_cross3(n, e, u);
	normalize3(u);
	engi_cross3(n, u, v);
}

/* Reorders the n points along a Morton curve over their bounding box
 * (stable radix sort of 48-bit keys): the hull's outside lists then hold
 * points that are close in memory as well as in space. */
static int morton_sort(double *p, size_t n)
{
	uint32_t *ord = engi_malloc(n * sizeof(*ord) + 1);
	double *q = engi_malloc(3 * n * sizeof(*q) + 1);
	if (!ord || !q || engi_morton_order(p, n, ord) < 0) {
		engi_free(ord);
		engi_free(q);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(q + 3 * i, p + 3 * (size_t)ord[i], 3 * sizeof(double));
	memcpy(p, q, 3 * n * sizeof(double));
	engi_free(ord);
	engi_free(q);
	return 0;
}

/* ---- the hull ---- */

struct hface {
	/* the plane: n = (v1 - v0) x (v2 - v0), and the largest sum of the
	 * absolute products behind one of its components (error bound) */
	double n[3], na;
	uint32_t v[3];	/* counter-clockwise seen from outside */
	uint32_t nb[3]; /* the face across edge v[k] -> v[k + 1] */
	uint32_t out;	/* first point of the outside list, NONE when empty */
	uint32_t seen;	/* search stamp */
	unsigned char visible, dead;
};

/* A list of face ids. */
struct ids {
	uint32_t *id;
	size_t n, cap;
};

static int ids_push(struct ids *l, uint32_t x)
{
	if (engi_grow((void **)&l->id, &l->cap, l->n + 1, sizeof(*l->id)) < 0)
		return -1;
	l->id[l->n++] = x;
	return 0;
}

struct hull {
	const double *p; /* points, 3 each */
	size_t np;
	struct hface *f; /* slots: dead faces' slots are reused */
	size_t nf, cap;
	uint32_t *next;	    /* outside-list link of each point */
	uint32_t *start_at; /* new face whose horizon edge starts at a point */
	uint32_t *hstamp;   /* step in which start_at of a point was set */
	/* faces with outside points (may repeat, or name dead or reused
	 * slots), free slots, and a step's search stack, visible faces,
	 * horizon (3 per edge) and new faces */
	struct ids work, freel, stack, vis, hor, fresh;
	uint32_t stamp;
	int oom;
};

static inline const double *P(const struct hull *h, uint32_t i)
{
	return h->p + 3 * (size_t)i;
}

/*
 * q strictly outside face f (on the side its normal points to). The
 * face's plane, kept in floating point, decides when the value clears an
 * error bound of the same form as the orientation predicate's static
 * filter (the determinant expanded along q's row, with the bound doubled);
 * otherwise the exact predicate does.
 */
static inline int outside(const struct hull *h, const struct hface *f, uint32_t q)
{
	const double *o = P(h, f->v[0]), *x = P(h, q);
	double dx = x[0] - o[0], dy = x[1] - o[1], dz = x[2] - o[2];
	double v = f->n[0] * dx + f->n[1] * dy + f->n[2] * dz;
	double bound = 16 * (DBL_EPSILON / 2) * f->na * (fabs(dx) + fabs(dy) + fabs(dz));
	if (v > bound)
		return 1;
	if (-v > bound)
		return 0;
	return engi_pred_orient3d(o, P(h, f->v[1]), P(h, f->v[2]), x) < 0;
}

/* A new face in a free slot or at the end; its id, NONE when out of
 * memory. */
static uint32_t add_face(struct hull *h, uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t id;
	if (h->freel.n > 0) {
		id = h->freel.id[--h->freel.n];
	} else {
		if (engi_grow((void **)&h->f, &h->cap, h->nf + 1, sizeof(*h->f)) < 0)
			return NONE;
		id = (uint32_t)h->nf++;
	}
	struct hface *f = &h->f[id];
	memset(f, 0, sizeof(*f));
	f->v[0] = a;
	f->v[1] = b;
	f->v[2] = c;
	double e[3], g[3];
	sub3(P(h, b), P(h, a), e);
	sub3(P(h, c), P(h, a), g);
	engi_cross3(e, g, f->n);
	double na[3] = {fabs(e[1] * g[2]) + fabs(e[2] * g[1]),
			fabs(e[2] * g[0]) + fabs(e[0] * g[2]),
			fabs(e[0] * g[1]) + fabs(e[1] * g[0])};
	f->na = na[0] > na[1] ? na[0] : na[1];
	f->na = na[2] > f->na ? na[2] : f->na;
	f->nb[0] = f->nb[1] = f->nb[2] = NONE;
	f->out = NONE;
	return id;
}

/* Pushes q onto the outside list of the first of the faces fs[0..nfs) it
 * is outside of; a point outside none is inside the hull and dropped. */
static void assign(struct hull *h, uint32_t q, const uint32_t *fs, size_t nfs)
{
	for (size_t i = 0; i < nfs; i++) {
		struct hface *F = &h->f[fs[i]];
		if (outside(h, F, q)) {
			if (F->out == NONE && ids_push(&h->work, fs[i]) < 0)
				h->oom = 1;
			h->next[q] = F->out;
			F->out = q;
			return;
		}
	}
}

/* The point of face f's outside list farthest from its plane. */
static uint32_t farthest(const struct hull *h, const struct hface *f)
{
	const double *n = f->n;
	uint32_t best = f->out;
	double bd = -INFINITY;
	for (uint32_t q = f->out; q != NONE; q = h->next[q]) {
		double x[3];
		sub3(P(h, q), P(h, f->v[0]), x);
		double d = engi_dot3(n, x);
		if (d > bd) {
			bd = d;
			best = q;
		}
	}
	return best;
}

/* Adds point q, outside face f0: removes the faces q sees (a connected
 * set around f0), closes the hole with a cone from q over its horizon and
 * hands the removed faces' outside points to the new faces, whose slots
 * are then free. */
static int add_point(struct hull *h, uint32_t f0, uint32_t q)
{
	h->stamp++;
	h->vis.n = h->hor.n = h->fresh.n = h->stack.n = 0;
	h->f[f0].seen = h->stamp;
	h->f[f0].visible = 1;
	if (ids_push(&h->stack, f0) < 0)
		return -1;
	while (h->stack.n > 0) {
		uint32_t fi = h->stack.id[--h->stack.n];
		if (ids_push(&h->vis, fi) < 0)
			return -1;
		for (int k = 0; k < 3; k++) {
			uint32_t g = h->f[fi].nb[k];
			if (g == NONE)
				return HULL_INCONSISTENT;
			struct hface *G = &h->f[g];
			if (G->seen != h->stamp) {
				G->seen = h->stamp;
				G->visible = (unsigned char)outside(h, G, q);
				if (G->visible && ids_push(&h->stack, g) < 0)
					return -1;
			}
			if (!G->visible && (ids_push(&h->hor, h->f[fi].v[k]) < 0 ||
					    ids_push(&h->hor, h->f[fi].v[(k + 1) % 3]) < 0 ||
					    ids_push(&h->hor, g) < 0))
				return -1;
		}
	}
	/* the horizon must be one loop: each of its vertices starts exactly
	 * one of its edges and ends another (checked below) */
	if (h->hor.n < 9)
		return HULL_INCONSISTENT;
	for (size_t i = 0; i < h->hor.n; i += 3) {
		const uint32_t *e = h->hor.id + i;
		if (h->hstamp[e[0]] == h->stamp)
			return HULL_INCONSISTENT;
		uint32_t nf = add_face(h, e[0], e[1], q);
		if (nf == NONE || ids_push(&h->fresh, nf) < 0)
			return -1;
		h->f[nf].nb[0] = e[2];
		struct hface *G = &h->f[e[2]];
		for (int k = 0; k < 3; k++)
			if (G->v[k] == e[1] && G->v[(k + 1) % 3] == e[0])
				G->nb[k] = nf;
		h->start_at[e[0]] = nf;
		h->hstamp[e[0]] = h->stamp;
	}
	for (size_t i = 0; i < h->fresh.n; i++)
		if (h->hstamp[h->f[h->fresh.id[i]].v[1]] != h->stamp)
			return HULL_INCONSISTENT;
	for (size_t i = 0; i < h->fresh.n; i++) {
		uint32_t x = h->fresh.id[i], y = h->start_at[h->f[x].v[1]];
		h->f[x].nb[1] = y;
		h->f[y].nb[2] = x;
	}
	for (size_t i = 0; i < h->vis.n; i++) {
		struct hface *F = &h->f[h->vis.id[i]];
		F->dead = 1;
		uint32_t x = F->out;
		F->out = NONE;
		while (x != NONE) {
			uint32_t nx = h->next[x];
			if (x != q)
				assign(h, x, h->fresh.id, h->fresh.n);
			x = nx;
		}
	}
	for (size_t i = 0; i < h->vis.n; i++)
		if (ids_push(&h->freel, h->vis.id[i]) < 0)
			return -1;
	return h->oom ? -1 : 0;
}

/* Collinear: the exact 2D orientations in all three coordinate planes
 * vanish. */
static int collinear(const double *a, const double *b, const double *c)
{
	return engi_pred_orient2d(a, b, c, 0, 1) == 0 && engi_pred_orient2d(a, b, c, 1, 2) == 0 &&
	       engi_pred_orient2d(a, b, c, 2, 0) == 0;
}

/*
 * Four points spanning a tetrahedron: the farthest pair among the six
 * axis extremes, the point farthest from their line, the point farthest
 * from that plane (each checked exactly, with an exact scan as fallback).
 * Returns the dimension of the point set (0 to 3); s[] holds its first
 * dimension + 1 spanning points.
 */
static int initial_simplex(const double *p, size_t n, uint32_t s[4])
{
	uint32_t ext[6] = {0, 0, 0, 0, 0, 0};
	s[0] = s[1] = s[2] = s[3] = 0;
	for (size_t i = 1; i < n; i++)
		for (int d = 0; d < 3; d++) {
			if (p[3 * i + d] < p[3 * (size_t)ext[2 * d] + d])
				ext[2 * d] = (uint32_t)i;
			if (p[3 * i + d] > p[3 * (size_t)ext[2 * d + 1] + d])
				ext[2 * d + 1] = (uint32_t)i;
		}
	double best = -1;
	for (int a = 0; a < 6; a++)
		for (int b = a + 1; b < 6; b++) {
			double x[3];
			sub3(p + 3 * (size_t)ext[a], p + 3 * (size_t)ext[b], x);
			if (engi_dot3(x, x) > best) {
				best = engi_dot3(x, x);
				s[0] = ext[a];
				s[1] = ext[b];
			}
		}
	if (!(best > 0))
		return 0;
	const double *a = p + 3 * (size_t)s[0], *b = p + 3 * (size_t)s[1];
	double ab[3];
	sub3(b, a, ab);
	best = -1;
	for (size_t i = 0; i < n; i++) {
		double x[3], c[3];
		sub3(p + 3 * i, a, x);
		engi_cross3(ab, x, c);
		if (engi_dot3(c, c) > best) {
			best = engi_dot3(c, c);
			s[2] = (uint32_t)i;
		}
	}
	if (collinear(a, b, p + 3 * (size_t)s[2])) {
		size_t i = 0;
		while (i < n && collinear(a, b, p + 3 * i))
			i++;
		if (i == n)
			return 1;
		s[2] = (uint32_t)i;
	}
	const double *c = p + 3 * (size_t)s[2];
	double ac[3], nrm[3];
	sub3(c, a, ac);
	engi_cross3(ab, ac, nrm);
	best = -1;
	for (size_t i = 0; i < n; i++) {
		double x[3];
		sub3(p + 3 * i, a, x);
		double d = fabs(engi_dot3(nrm, x));
		if (d > best) {
			best = d;
			s[3] = (uint32_t)i;
		}
	}
	if (engi_pred_orient3d(a, b, c, p + 3 * (size_t)s[3]) == 0) {
		size_t i = 0;
		while (i < n && engi_pred_orient3d(a, b, c, p + 3 * i) == 0)
			i++;
		if (i == n)
			return 2;
		s[3] = (uint32_t)i;
	}
	return 3;
}

static void hull_release(struct hull *h)
{
	engi_free(h->f);
	engi_free(h->next);
	engi_free(h->start_at);
	engi_free(h->hstamp);
	engi_free(h->work.id);
	engi_free(h->freel.id);
	engi_free(h->stack.id);
	engi_free(h->vis.id);
	engi_free(h->hor.id);
	engi_free(h->fresh.id);
	memset(h, 0, sizeof(*h));
}

/* The hull of a point set spanning 3D from the tetrahedron s. */
static int hull_build(struct hull *h, const double *p, size_t n, const uint32_t s_in[4])
{
	memset(h, 0, sizeof(*h));
	h->p = p;
	h->np = n;
	h->next = engi_malloc(n * sizeof(*h->next));
	h->start_at = engi_malloc(n * sizeof(*h->start_at));
	h->hstamp = engi_calloc(n, sizeof(*h->hstamp));
	if (!h->next || !h->start_at || !h->hstamp)
		return -1;
	uint32_t s[4];
	memcpy(s, s_in, sizeof(s));
	if (engi_pred_orient3d(P(h, s[0]), P(h, s[1]), P(h, s[2]), P(h, s[3])) < 0) {
		uint32_t x = s[1];
		s[1] = s[2];
		s[2] = x;
	}
	/* s[3] lies below the plane of s[0], s[1], s[2] */
	const uint32_t tet[4][3] = {
	    {s[0], s[1], s[2]}, {s[0], s[3], s[1]}, {s[1], s[3], s[2]}, {s[2], s[3], s[0]}};
	uint32_t first[4];
	for (int i = 0; i < 4; i++) {
		first[i] = add_face(h, tet[i][0], tet[i][1], tet[i][2]);
		if (first[i] == NONE)
			return -1;
	}
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 3; k++)
			for (int j = 0; j < 4; j++)
				for (int l = 0; l < 3; l++)
					if (h->f[j].v[l] == h->f[i].v[(k + 1) % 3] &&
					    h->f[j].v[(l + 1) % 3] == h->f[i].v[k])
						h->f[i].nb[k] = (uint32_t)j;
	for (size_t i = 0; i < n; i++)
		if (i != s[0] && i != s[1] && i != s[2] && i != s[3])
			assign(h, (uint32_t)i, first, 4);
	while (h->work.n > 0 && !h->oom) {
		uint32_t fi = h->work.id[--h->work.n];
		if (h->f[fi].dead || h->f[fi].out == NONE)
			continue;
		int rc = add_point(h, fi, farthest(h, &h->f[fi]));
		if (rc < 0)
			return rc;
	}
	return h->oom ? -1 : 0;
}

/* ---- boxes ---- */

/* The centre and half extents of the box lo..hi along the rows of ax. */
static void box_finish(const double lo[3], const double hi[3], const double ax[9], double center[3],
		       double half[3])
{
	double mid[3];
	for (int k = 0; k < 3; k++) {
		mid[k] = 0.5 * (lo[k] + hi[k]);
		half[k] = 0.5 * (hi[k] - lo[k]);
	}
	for (int d = 0; d < 3; d++)
		center[d] = ax[d] * mid[0] + ax[3 + d] * mid[1] + ax[6 + d] * mid[2];
}

static inline void box_extend(const double ax[9], const double *q, double lo[3], double hi[3])
{
	for (int k = 0; k < 3; k++) {
		double t = engi_dot3(ax + 3 * k, q);
		lo[k] = t < lo[k] ? t : lo[k];
		hi[k] = t > hi[k] ? t : hi[k];
	}
}

/* Box of the points idx (all n when idx is NULL) along the rows of ax. */
static void box_along(const double *p, const uint32_t *idx, size_t n, const double ax[9],
		      double center[3], double half[3])
{
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t i = 0; i < n; i++)
		box_extend(ax, p + 3 * (idx ? (size_t)idx[i] : i), lo, hi);
	box_finish(lo, hi, ax, center, half);
}

struct best {
	double vol, ax[9];
	int method;
};

static void try_frame(const double *p, const uint32_t *idx, size_t n, const double ax[9],
		      int method, struct best *b)
{
	double c[3], h[3];
	box_along(p, idx, n, ax, c, h);
	double vol = 8 * h[0] * h[1] * h[2];
	if (vol < b->vol) {
		b->vol = vol;
		memcpy(b->ax, ax, sizeof(b->ax));
		b->method = method;
	}
}

struct pt2 {
	double x, y;
};

static int pt2_cmp(const void *a, const void *b)
{
	const struct pt2 *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	if (p->y != q->y)
		return p->y < q->y ? -1 : 1;
	return 0;
}

/* Sign of (a - o) x (b - o), exactly. */
static inline int turn(struct pt2 o, struct pt2 a, struct pt2 b)
{
	const double O[3] = {o.x, o.y, 0}, A[3] = {a.x, a.y, 0}, B[3] = {b.x, b.y, 0};
	return engi_pred_orient2d(O, A, B, 0, 1);
}

/* Convex polygon (counter-clockwise, no repeated point) of the m points
 * (sorted in place) into out (2 m places: with an exact turn the chain
 * holds at most m + 1, and 2 m whatever the turn); returns its size.
 * Andrew's monotone chain. */
static size_t hull2d(struct pt2 *q, size_t m, struct pt2 *out)
{
	qsort(q, m, sizeof(*q), pt2_cmp);
	if (m < 3) {
		memcpy(out, q, m * sizeof(*q));
		return m == 2 && !pt2_cmp(&q[0], &q[1]) ? 1 : m;
	}
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		while (k >= 2 && turn(out[k - 2], out[k - 1], q[i]) <= 0)
			k--;
		out[k++] = q[i];
	}
	for (size_t i = m - 1, t = k + 1; i-- > 0;) {
		while (k >= t && turn(out[k - 2], out[k - 1], q[i]) <= 0)
			k--;
		out[k++] = q[i];
	}
	return k - 1;
}

static inline double dot2(struct pt2 a, double ux, double uy)
{
	return a.x * ux + a.y * uy;
}

/* Direction (ux, uy) of the minimum-area rectangle around the convex
 * polygon c (m >= 3, counter-clockwise): one side lies on an edge, and
 * rotating calipers follow the three other supporting points as the edge
 * advances. */
static void min_rect(const struct pt2 *c, size_t m, double *bux, double *buy)
{
	double best = INFINITY;
	size_t jmax = 0, jfar = 0, jmin = 0;
	int started = 0;
	*bux = 1;
	*buy = 0;
	for (size_t i = 0; i < m; i++) {
		struct pt2 a = c[i], b = c[(i + 1) % m];
		double ux = b.x - a.x, uy = b.y - a.y, l = sqrt(ux * ux + uy * uy);
		if (!(l > 0))
			continue;
		ux /= l;
		uy /= l;
		double wx = -uy, wy = ux; /* inward normal */
		if (!started) {
			started = 1;
			for (size_t j = 0; j < m; j++) {
				if (dot2(c[j], ux, uy) > dot2(c[jmax], ux, uy))
					jmax = j;
				if (dot2(c[j], wx, wy) > dot2(c[jfar], wx, wy))
					jfar = j;
				if (dot2(c[j], ux, uy) < dot2(c[jmin], ux, uy))
					jmin = j;
			}
		} else {
			for (size_t s = 0;
			     s < m && dot2(c[(jmax + 1) % m], ux, uy) > dot2(c[jmax], ux, uy); s++)
				jmax = (jmax + 1) % m;
			for (size_t s = 0;
			     s < m && dot2(c[(jfar + 1) % m], wx, wy) > dot2(c[jfar], wx, wy); s++)
				jfar = (jfar + 1) % m;
			for (size_t s = 0;
			     s < m && dot2(c[(jmin + 1) % m], ux, uy) < dot2(c[jmin], ux, uy); s++)
				jmin = (jmin + 1) % m;
		}
		double area = (dot2(c[jmax], ux, uy) - dot2(c[jmin], ux, uy)) *
			      (dot2(c[jfar], wx, wy) - dot2(a, wx, wy));
		if (area < best) {
			best = area;
			*bux = ux;
			*buy = uy;
		}
	}
}

/* x in [-2, 2] to the nearest multiple of 2^-SNAP_BITS. */
static inline double snap(double x)
{
	return ldexp(rint(ldexp(x, SNAP_BITS)), -SNAP_BITS);
}

/* The frame whose third axis is n and whose first two follow the
 * minimum-area rectangle of the points idx[0..m) projected across n
 * (work holds FRAME_WORK(m) points). */
static void frame_across(const double *p, const uint32_t *idx, size_t m, const double n[3],
			 struct pt2 *work, double ax[9])
{
	double u[3], v[3];
	frame_around(n, u, v);
	struct pt2 *q = work, *c = work + m + 1;
	for (size_t i = 0; i < m; i++) {
		const double *x = p + 3 * (size_t)idx[i];
		q[i].x = snap(engi_dot3(u, x));
		q[i].y = snap(engi_dot3(v, x));
	}
	size_t k = hull2d(q, m, c);
	double ux = 1, uy = 0;
	if (k >= 3)
		min_rect(c, k, &ux, &uy);
	else if (k == 2 && (c[1].x != c[0].x || c[1].y != c[0].y)) {
		ux = c[1].x - c[0].x;
		uy = c[1].y - c[0].y;
		double l = sqrt(ux * ux + uy * uy);
		ux /= l;
		uy /= l;
	}
	for (int d = 0; d < 3; d++) {
		ax[d] = ux * u[d] + uy * v[d];
		ax[3 + d] = -uy * u[d] + ux * v[d];
		ax[6 + d] = n[d];
	}
}

/* Area-weighted principal axes (rows, largest variance first) of the
 * triangles tri[0..nt) over the points p; -1 when they have no area. */
static int surface_axes(const double *p, const uint32_t *tri, size_t nt, double pa[9])
{
	const double *p0 = p + 3 * (size_t)tri[0];
	double area = 0, s1[3] = {0, 0, 0}, s2[9] = {0};
	for (size_t f = 0; f < nt; f++) {
		double v[3][3];
		for (int k = 0; k < 3; k++)
			sub3(p + 3 * (size_t)tri[3 * f + k], p0, v[k]);
		double u[3], w[3], n[3];
		sub3(v[1], v[0], u);
		sub3(v[2], v[0], w);
		engi_cross3(u, w, n);
		double A = 0.5 * sqrt(engi_dot3(n, n));
		double s[3] = {v[0][0] + v[1][0] + v[2][0], v[0][1] + v[1][1] + v[2][1],
			       v[0][2] + v[1][2] + v[2][2]};
		area += A;
		for (int i = 0; i < 3; i++) {
			s1[i] += A * s[i] / 3;
			for (int j = 0; j < 3; j++) {
				double q = s[i] * s[j];
				for (int k = 0; k < 3; k++)
					q += v[k][i] * v[k][j];
				s2[3 * i + j] += A / 12 * q;
			}
		}
	}
	if (!(area > 0))
		return -1;
	double cov[9], wv[3];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			cov[3 * i + j] = s2[3 * i + j] / area - s1[i] * s1[j] / (area * area);
	if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', 3, cov, 3, wv) != 0)
		return -1;
	for (int k = 0; k < 3; k++)
		for (int d = 0; d < 3; d++)
			pa[3 * k + d] = cov[3 * d + (2 - k)];
	return 0;
}

struct cand {
	double area, n[3];
	uint32_t face;
};

static inline int cand_before(const struct cand *p, const struct cand *q)
{
	return p->area > q->area || (p->area == q->area && p->face < q->face);
}

/* The m largest faces (area descending, ties by face id) into top;
 * returns how many. fn holds the faces' unnormalised normals. */
static size_t largest_faces(const uint32_t *live, size_t nl, const double *fn, size_t m,
			    struct cand *top)
{
	size_t k = 0;
	for (size_t i = 0; i < nl; i++) {
		struct cand c;
		memcpy(c.n, fn + 3 * i, sizeof(c.n));
		c.area = 0.5 * sqrt(engi_dot3(c.n, c.n));
		c.face = live[i];
		if (k == m && !cand_before(&c, &top[m - 1]))
			continue;
		size_t j = k < m ? k++ : m - 1;
		while (j > 0 && cand_before(&c, &top[j - 1])) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = c;
	}
	for (size_t i = 0; i < k; i++)
		normalize3(top[i].n);
	return k;
}

/* Scratch of one thread measuring face frames. */
struct face_ws {
	unsigned char *front;
	uint32_t *mark, *sil;
	struct pt2 *work;
};

/* The frame flush with the face whose unit normal is n: its outline across
 * n is the projection of the edges between a face turned towards n and
 * one turned away. */
static void face_frame(const struct hull *h, const uint32_t *live, size_t nl, const double *fn,
		       const uint32_t *hv, size_t nhv, const double n[3], uint32_t stamp,
		       struct face_ws *w, double ax[9])
{
	for (size_t k = 0; k < nl; k++)
		w->front[live[k]] = engi_dot3(fn + 3 * k, n) > 0;
	size_t ns = 0;
	for (size_t k = 0; k < nl; k++) {
		const struct hface *F = &h->f[live[k]];
		if (!w->front[live[k]])
			continue;
		for (int e = 0; e < 3; e++) {
			if (w->front[F->nb[e]])
				continue;
			for (int t = 0; t < 2; t++) {
				uint32_t v = F->v[(e + t) % 3];
				if (w->mark[v] != stamp) {
					w->mark[v] = stamp;
					w->sil[ns++] = v;
				}
			}
		}
	}
	const uint32_t *pts = w->sil;
	if (ns < 3) {
		pts = hv;
		ns = nhv;
	}
	frame_across(h->p, pts, ns, n, w->work, ax);
}

/* Frames flush with the largest hull faces (one per normal), measured in
 * parallel, the smallest kept in candidate order. */
static int try_faces(const struct hull *h, const uint32_t *live, size_t nl, const uint32_t *hv,
		     size_t nhv, struct best *b)
{
	size_t want = (size_t)(OBB_FACE_WORK / (double)nl);
	want = want < OBB_FACES_MIN ? OBB_FACES_MIN : (want > OBB_FACES_MAX ? OBB_FACES_MAX : want);
	size_t m = 8 * want;
	double *fn = engi_malloc(3 * nl * sizeof(*fn));
	struct cand *c = engi_malloc(m * sizeof(*c));
	double *res = engi_malloc(10 * want * sizeof(*res));
	if (!fn || !c || !res) {
		engi_free(fn);
		engi_free(c);
		engi_free(res);
		return -1;
	}
	for (size_t i = 0; i < nl; i++) {
		const struct hface *F = &h->f[live[i]];
		double e1[3], e2[3];
		sub3(P(h, F->v[1]), P(h, F->v[0]), e1);
		sub3(P(h, F->v[2]), P(h, F->v[0]), e2);
		engi_cross3(e1, e2, fn + 3 * i);
	}
	size_t k = largest_faces(live, nl, fn, m, c), taken = 0;
	for (size_t i = 0; i < k && taken < want; i++) {
		int dup = 0;
		for (size_t j = 0; j < taken && !dup; j++)
			dup = 1 - fabs(engi_dot3(c[i].n, c[j].n)) < OBB_SAME_NORMAL;
		if (!dup)
			c[taken++] = c[i];
	}
	int oom = 0;
#pragma omp parallel if (taken > 1 && nl > 4096) reduction(| : oom)
	{
		struct face_ws w;
		w.front = engi_malloc(h->nf);
		w.mark = engi_calloc(h->np, sizeof(*w.mark));
		w.sil = engi_malloc(nhv * sizeof(*w.sil));
		w.work = engi_malloc(FRAME_WORK(nhv) * sizeof(*w.work));
		oom = !w.front || !w.mark || !w.sil || !w.work;
#pragma omp for schedule(dynamic, 1)
		for (size_t i = 0; i < taken; i++) {
			double *ax = res + 10 * i;
			ax[9] = INFINITY;
			if (oom)
				continue;
			face_frame(h, live, nl, fn, hv, nhv, c[i].n, (uint32_t)i + 1, &w, ax);
			double ctr[3], half[3];
			box_along(h->p, hv, nhv, ax, ctr, half);
			ax[9] = 8 * half[0] * half[1] * half[2];
		}
		engi_free(w.front);
		engi_free(w.mark);
		engi_free(w.sil);
		engi_free(w.work);
	}
	for (size_t i = 0; i < taken && !oom; i++)
		if (res[10 * i + 9] < b->vol) {
			b->vol = res[10 * i + 9];
			memcpy(b->ax, res + 10 * i, sizeof(b->ax));
			b->method = ENGI_OBB_HULL_FACE;
		}
	engi_free(fn);
	engi_free(c);
	engi_free(res);
	return oom ? -1 : 0;
}

/* The full-dimensional case: hull, its surface's axes, its faces. */
static int obb_solid(const double *p, size_t n, const uint32_t s[4], struct best *b)
{
	struct hull h;
	int rc = -1;
	uint32_t *live = NULL, *tri = NULL, *hv = NULL;
	int hrc = hull_build(&h, p, n, s);
	if (hrc < 0) {
		rc = hrc;
		goto out;
	}
	size_t nl = 0, nhv = 0;
	live = engi_malloc(h.nf * sizeof(*live));
	tri = engi_malloc(3 * h.nf * sizeof(*tri));
	hv = engi_malloc(n * sizeof(*hv));
	if (!live || !tri || !hv)
		goto out;
	for (size_t i = 0; i < h.nf; i++)
		if (!h.f[i].dead) {
			memcpy(tri + 3 * nl, h.f[i].v, sizeof(h.f[i].v));
			live[nl++] = (uint32_t)i;
		}
	if (nl < 4) {
		rc = HULL_INCONSISTENT;
		goto out;
	}
	/* hull vertices, in index order */
	memset(h.start_at, 0, n * sizeof(*h.start_at));
	for (size_t i = 0; i < 3 * nl; i++)
		h.start_at[tri[i]] = 1;
	for (size_t i = 0; i < n; i++)
		if (h.start_at[i])
			hv[nhv++] = (uint32_t)i;
	double pa[9];
	if (surface_axes(p, tri, nl, pa) == 0)
		try_frame(p, hv, nhv, pa, ENGI_OBB_HULL_PCA, b);
	if (try_faces(&h, live, nl, hv, nhv, b) < 0)
		goto out;
	rc = 0;
out:
	engi_free(live);
	engi_free(tri);
	engi_free(hv);
	hull_release(&h);
	return rc;
}

/* All points in the plane through a, b, c: the minimum-area rectangle in
 * it, zero thickness. */
static int obb_planar(const double *p, size_t n, const uint32_t s[3], struct best *b)
{
	double e1[3], e2[3], nrm[3], ax[9];
	sub3(p + 3 * (size_t)s[1], p + 3 * (size_t)s[0], e1);
	sub3(p + 3 * (size_t)s[2], p + 3 * (size_t)s[0], e2);
	engi_cross3(e1, e2, nrm);
	normalize3(nrm);
	uint32_t *idx = engi_malloc(n * sizeof(*idx));
	struct pt2 *work = engi_malloc(FRAME_WORK(n) * sizeof(*work));
	if (!idx || !work) {
		engi_free(idx);
		engi_free(work);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	frame_across(p, idx, n, nrm, work, ax);
	engi_free(idx);
	engi_free(work);
	b->vol = INFINITY;
	try_frame(p, NULL, n, ax, ENGI_OBB_PLANAR, b);
	return 0;
}

/* All points on the line through a and b. */
static void obb_linear(const double *p, size_t n, const uint32_t s[2], struct best *b)
{
	double ax[9];
	sub3(p + 3 * (size_t)s[1], p + 3 * (size_t)s[0], ax);
	normalize3(ax);
	frame_around(ax, ax + 3, ax + 6);
	b->vol = INFINITY;
	try_frame(p, NULL, n, ax, ENGI_OBB_LINEAR, b);
}

/* Copies the vertices marked in used into p, moved so that their box is
 * centred on the origin, scaled by a power of two so that the largest
 * magnitude falls in [1/2, 1) and snapped to multiples of 2^-SNAP_BITS:
 * the snap is then relative to the extent, wherever the part lies. */
static void scaled_copy(const struct engi_mesh *m, const unsigned char *used, double *p)
{
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t v = 0; v < m->nverts; v++)
		if (used[v])
			for (int d = 0; d < 3; d++) {
				lo[d] = fmin(lo[d], m->xyz[3 * v + d]);
				hi[d] = fmax(hi[d], m->xyz[3 * v + d]);
			}
	double c[3], big = 0;
	for (int d = 0; d < 3; d++) {
		c[d] = 0.5 * lo[d] + 0.5 * hi[d];
		big = fmax(big, fmax(hi[d] - c[d], c[d] - lo[d]));
	}
	int e = 0;
	if (big > 0)
		frexp(big, &e);
	size_t n = 0;
	for (size_t v = 0; v < m->nverts; v++)
		if (used[v]) {
			for (int d = 0; d < 3; d++)
				p[3 * n + d] =
				    ldexp(rint(ldexp(m->xyz[3 * v + d] - c[d], SNAP_BITS - e)),
					  -SNAP_BITS);
			n++;
		}
}

/* The box of the original vertices marked in used along the rows of ax. */
static void box_used(const struct engi_mesh *m, const unsigned char *used, const double ax[9],
		     double center[3], double half[3])
{
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t v = 0; v < m->nverts; v++)
		if (used[v])
			box_extend(ax, m->xyz + 3 * v, lo, hi);
	box_finish(lo, hi, ax, center, half);
}

int engi_mesh_obb(const struct engi_mesh *m, struct engi_obb *o, struct engi_error *err)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < 3 * m->ntris; i++)
		if (m->tri[i] >= m->nverts)
			RAISE(err, ENGI_EINVALID,
			      "triangle %zu refers to vertex %u, but the mesh has %zu vertices",
			      i / 3, (unsigned)m->tri[i], m->nverts);
	if (m->ntris == 0)
		RAISE(err, ENGI_EINVALID, "cannot bound a mesh without triangles");
	if (m->nverts >= NONE)
		RAISE(err, ENGI_ETOOBIG, "mesh has %zu vertices, more than 32-bit indices address",
		      m->nverts);
	TRY(engi_coords_check(m->xyz, m->nverts, "vertex", err));
	unsigned char *used = engi_calloc(m->nverts, 1);
	if (!used)
		RAISE(err, ENGI_ENOMEM, "out of memory bounding %zu vertices", m->nverts);
	for (size_t i = 0; i < 3 * m->ntris; i++)
		used[m->tri[i]] = 1;
	size_t n = 0;
	for (size_t v = 0; v < m->nverts; v++)
		n += used[v];
	double *p = engi_malloc(3 * n * sizeof(*p));
	if (!p) {
		engi_free(used);
		RAISE(err, ENGI_ENOMEM, "out of memory bounding %zu vertices", m->nverts);
	}
	scaled_copy(m, used, p);

	struct best b = {INFINITY, {1, 0, 0, 0, 1, 0, 0, 0, 1}, ENGI_OBB_AXIS_ALIGNED};
	uint32_t s[4];
	if (morton_sort(p, n) < 0) {
		engi_free(p);
		engi_free(used);
		RAISE(err, ENGI_ENOMEM, "out of memory bounding %zu vertices", n);
	}
	int dim = initial_simplex(p, n, s), rc = 0;
	if (dim == 3) {
		try_frame(p, NULL, n, b.ax, ENGI_OBB_AXIS_ALIGNED, &b);
		rc = obb_solid(p, n, s, &b);
	} else if (dim == 2) {
		rc = obb_planar(p, n, s, &b);
	} else if (dim == 1) {
		obb_linear(p, n, s, &b);
	}
	engi_free(p);
	if (rc < 0) {
		engi_free(used);
		if (rc == HULL_INCONSISTENT)
			RAISE(err, ENGI_EINVALID,
			      "cannot bound %zu vertices: their convex hull came out inconsistent",
			      n);
		RAISE(err, ENGI_ENOMEM, "out of memory bounding %zu vertices", n);
	}
	box_used(m, used, b.ax, o->center, o->half);
	engi_free(used);
	memcpy(o->axis, b.ax, sizeof(b.ax));
	o->method = b.method;
	/* sort the extents descending, axes along */
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (o->half[j] > o->half[i]) {
				double t = o->half[i];
				o->half[i] = o->half[j];
				o->half[j] = t;
				for (int d = 0; d < 3; d++) {
					t = o->axis[3 * i + d];
					o->axis[3 * i + d] = o->axis[3 * j + d];
					o->axis[3 * j + d] = t;
				}
			}
	o->volume = 8 * o->half[0] * o->half[1] * o->half[2];
	return 0;
}
