/*
 * Self-intersection of a triangle mesh, and its oriented bounding box.
 *
 * Broad phase: every proper face is filed under each grid cell its bounding
 * box touches, as (hashed cell key, face) entries in buckets by the key's
 * low bits (a counting sort); a pair of faces is tested only in the lowest
 * cell both boxes touch, so each pair is tested once (barring a collision
 * of two cells' 64-bit keys). Narrow phase, exact: two
 * non-coplanar triangles meet iff an edge of one meets the other; an edge
 * meets a triangle iff its ends are not strictly on one side of the plane
 * and the three orientations of the edge's line against the triangle's
 * edges agree. Coplanar cases are decided in the projection on the plane
 * of the two largest normal components.
 */
#include "engi/mesh.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "parallel.h"
#include "predicates.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t cell_key(int64_t i, int64_t j, int64_t k)
{
	return mix64(mix64(mix64((uint64_t)i) ^ (uint64_t)j) ^ (uint64_t)k);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

/* ---- narrow phase ---- */

static int dominant_axes(const double *a, const double *b, const double *c, int *i, int *j)
{
	double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
	double n[3] = {fabs(u[1] * w[2] - u[2] * w[1]), fabs(u[2] * w[0] - u[0] * w[2]),
		       fabs(u[0] * w[1] - u[1] * w[0])};
	int k = n[0] >= n[1] && n[0] >= n[2] ? 0 : (n[1] >= n[2] ? 1 : 2);
	*i = (k + 1) % 3;
	*j = (k + 2) % 3;
	return 0;
}

static int point_in_tri2(const double *p, const double *a, const double *b, const double *c, int i,
			 int j)
{
	int o0 = engi_pred_orient2d(a, b, p, i, j), o1 = engi_pred_orient2d(b, c, p, i, j),
	    o2 = engi_pred_orient2d(c, a, p, i, j);
	return (o0 >= 0 && o1 >= 0 && o2 >= 0) || (o0 <= 0 && o1 <= 0 && o2 <= 0);
}

static int seg_seg2(const double *p, const double *q, const double *r, const double *s, int i,
		    int j)
{
	int o1 = engi_pred_orient2d(p, q, r, i, j), o2 = engi_pred_orient2d(p, q, s, i, j);
	int o3 = engi_pred_orient2d(r, s, p, i, j), o4 = engi_pred_orient2d(r, s, q, i, j);
	if (o1 == 0 && o2 == 0) {
		/* collinear: overlap of the projections on both coordinates */
		for (int d = 0; d < 2; d++) {
			int k = d ? j : i;
			double lo1 = fmin(p[k], q[k]), hi1 = fmax(p[k], q[k]);
			double lo2 = fmin(r[k], s[k]), hi2 = fmax(r[k], s[k]);
			if (hi1 < lo2 || hi2 < lo1)
				return 0;
		}
		return 1;
	}
	return o1 * o2 <= 0 && o3 * o4 <= 0;
}

static int coplanar_seg_tri(const double *s0, const double *s1, const double *a, const double *b,
			    const double *c)
{
	int i, j;
	dominant_axes(a, b, c, &i, &j);
	if (point_in_tri2(s0, a, b, c, i, j) || point_in_tri2(s1, a, b, c, i, j))
		return 1;
	return seg_seg2(s0, s1, a, b, i, j) || seg_seg2(s0, s1, b, c, i, j) ||
	       seg_seg2(s0, s1, c, a, i, j);
}

static int seg_tri(const double *s0, const double *s1, const double *a, const double *b,
		   const double *c)
{
	int d0 = engi_pred_orient3d(a, b, c, s0), d1 = engi_pred_orient3d(a, b, c, s1);
	if (d0 == d1 && d0 != 0)
		return 0;
	if (d0 == 0 && d1 == 0)
		return coplanar_seg_tri(s0, s1, a, b, c);
	int e0 = engi_pred_orient3d(s0, s1, a, b), e1 = engi_pred_orient3d(s0, s1, b, c),
	    e2 = engi_pred_orient3d(s0, s1, c, a);
	return (e0 >= 0 && e1 >= 0 && e2 >= 0) || (e0 <= 0 && e1 <= 0 && e2 <= 0);
}

static int tri_tri(const double *P[3], const double *Q[3])
{
	int q0 = engi_pred_orient3d(P[0], P[1], P[2], Q[0]),
	    q1 = engi_pred_orient3d(P[0], P[1], P[2], Q[1]),
	    q2 = engi_pred_orient3d(P[0], P[1], P[2], Q[2]);
	if (q0 == q1 && q1 == q2 && q0 != 0)
		return 0;
	int p0 = engi_pred_orient3d(Q[0], Q[1], Q[2], P[0]),
	    p1 = engi_pred_orient3d(Q[0], Q[1], Q[2], P[1]),
	    p2 = engi_pred_orient3d(Q[0], Q[1], Q[2], P[2]);
	if (p0 == p1 && p1 == p2 && p0 != 0)
		return 0;
	for (int k = 0; k < 3; k++)
		if (seg_tri(P[k], P[(k + 1) % 3], Q[0], Q[1], Q[2]) ||
		    seg_tri(Q[k], Q[(k + 1) % 3], P[0], P[1], P[2]))
			return 1;
	return 0;
}

/* Faces f and g sharing exactly vertex v: they meet elsewhere iff the edge
 * of one opposite v meets the other. */
static int tri_tri_shared(const struct engi_mesh *m, const uint32_t *f, const uint32_t *g)
{
	int sf = -1, sg = -1;
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
			if (f[a] == g[b]) {
				sf = a;
				sg = b;
			}
	const double *F[3], *G[3];
	for (int k = 0; k < 3; k++) {
		F[k] = m->xyz + 3 * (size_t)f[(sf + k) % 3];
		G[k] = m->xyz + 3 * (size_t)g[(sg + k) % 3];
	}
	return seg_tri(F[1], F[2], G[0], G[1], G[2]) || seg_tri(G[1], G[2], F[0], F[1], F[2]);
}

static inline int proper(const struct engi_mesh *m, const uint32_t *t)
{
	if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
		return 0;
	const double *a = m->xyz + 3 * (size_t)t[0], *b = m->xyz + 3 * (size_t)t[1],
		     *c = m->xyz + 3 * (size_t)t[2];
	/* collinear corners: no interior to meet */
	return engi_pred_orient2d(a, b, c, 0, 1) || engi_pred_orient2d(a, b, c, 1, 2) ||
	       engi_pred_orient2d(a, b, c, 2, 0);
}

/* ---- broad phase ---- */

/* Per-face box in floats rounded outward (conservative), and the grid
 * cells it touches, computed once from that box. */
struct fbox {
	float lo[3], hi[3];
	int32_t c0[3], c1[3];
};

struct grid {
	double lo[3], h;
};

static inline void face_box(const struct engi_mesh *m, const uint32_t *t, struct fbox *b)
{
	for (int d = 0; d < 3; d++) {
		double x = m->xyz[3 * (size_t)t[0] + d], y = m->xyz[3 * (size_t)t[1] + d],
		       z = m->xyz[3 * (size_t)t[2] + d];
		double mn = fmin(x, fmin(y, z)), mx = fmax(x, fmax(y, z));
		float fl = (float)mn, fh = (float)mx;
		if ((double)fl > mn)
			fl = nextafterf(fl, -INFINITY);
		if ((double)fh < mx)
			fh = nextafterf(fh, INFINITY);
		b->lo[d] = fl;
		b->hi[d] = fh;
	}
}

static inline void face_cells(const struct grid *g, struct fbox *b)
{
	for (int d = 0; d < 3; d++) {
		b->c0[d] = (int32_t)floor(((double)b->lo[d] - g->lo[d]) / g->h);
		b->c1[d] = (int32_t)floor(((double)b->hi[d] - g->lo[d]) / g->h);
	}
}

static inline int boxes_overlap(const struct fbox *a, const struct fbox *b)
{
	return !(a->hi[0] < b->lo[0] || b->hi[0] < a->lo[0] || a->hi[1] < b->lo[1] ||
		 b->hi[1] < a->lo[1] || a->hi[2] < b->lo[2] || b->hi[2] < a->lo[2]);
}

void engi_selfx_release(struct engi_selfx *x)
{
	engi_free(x->pair);
	memset(x, 0, sizeof(*x));
}

#define CELLS_PER_FACE_MAX 64

/* 1 when faces fa and fb (proper, boxes overlapping) meet; -1 when they
 * share an edge and are not tested. */
static int pair_meets(const struct engi_mesh *m, uint32_t fa, uint32_t fb)
{
	const uint32_t *ta = m->tri + 3 * (size_t)fa, *tb = m->tri + 3 * (size_t)fb;
	int shared = 0;
	for (int p = 0; p < 3; p++)
		for (int q = 0; q < 3; q++)
			shared += ta[p] == tb[q];
	if (shared >= 2)
		return -1;
	if (shared == 1)
		return tri_tri_shared(m, ta, tb);
	const double *P[3], *Q[3];
	for (int p = 0; p < 3; p++) {
		P[p] = m->xyz + 3 * (size_t)ta[p];
		Q[p] = m->xyz + 3 * (size_t)tb[p];
	}
	return tri_tri(P, Q);
}

struct found {
	uint64_t *v;
	size_t n, alloc;
};

static int found_add(struct found *f, uint32_t a, uint32_t b)
{
	if (f->n >= ENGI_SELFX_KEEP_MAX)
		return 0;
	if (f->n == f->alloc) {
		size_t na = f->alloc ? 2 * f->alloc : 256;
		uint64_t *p = engi_reallocarray(f->v, na, sizeof(uint64_t));
		if (!p)
			return ENGI_ENOMEM;
		f->v = p;
		f->alloc = na;
	}
	uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
	f->v[f->n++] = (uint64_t)lo << 32 | hi;
	return 0;
}

int engi_mesh_self_intersections(const struct engi_mesh *m, int early_exit, size_t keep,
				 struct engi_selfx *x, struct engi_error *err)
{
	memset(x, 0, sizeof(*x));
	if (keep > ENGI_SELFX_KEEP_MAX)
		keep = ENGI_SELFX_KEEP_MAX;
	size_t nf = m->ntris;
	if (nf >= UINT32_MAX / 4)
		RAISE(err, ENGI_ETOOBIG, "mesh has %zu triangles, over the cap", nf);
	for (size_t i = 0; i < 3 * nf; i++)
		if (m->tri[i] >= m->nverts)
			RAISE(err, ENGI_EINVALID,
			      "triangle %zu refers to vertex %u, but the mesh has %zu vertices",
			      i / 3, (unsigned)m->tri[i], m->nverts);
	/* within the bound, the float boxes below are finite */
	TRY(engi_coords_check(m->xyz, m->nverts, "vertex", err));
	if (nf < 2)
		return 0;
	unsigned char *ok = engi_malloc(nf);
	struct fbox *box = engi_malloc(nf * sizeof(*box));
	if (!ok || !box) {
		engi_free(ok);
		engi_free(box);
		RAISE(err, ENGI_ENOMEM, "out of memory testing %zu faces", nf);
	}
	double glo[3] = {INFINITY, INFINITY, INFINITY}, ghi[3] = {-INFINITY, -INFINITY, -INFINITY};
	double ext_sum = 0;
	size_t nproper = 0;
	double lo0 = glo[0], lo1 = glo[1], lo2 = glo[2], hi0 = ghi[0], hi1 = ghi[1], hi2 = ghi[2];
#pragma omp parallel for schedule(static) if (nf > MESH_PAR_MIN) reduction(+ : ext_sum, nproper) \
	reduction(min : lo0, lo1, lo2) reduction(max : hi0, hi1, hi2)
	for (size_t f = 0; f < nf; f++) {
		const uint32_t *t = m->tri + 3 * f;
		ok[f] = (unsigned char)proper(m, t);
		face_box(m, t, &box[f]);
		if (!ok[f])
			continue;
		nproper++;
		struct fbox *b = &box[f];
		lo0 = fmin(lo0, b->lo[0]);
		lo1 = fmin(lo1, b->lo[1]);
		lo2 = fmin(lo2, b->lo[2]);
		hi0 = fmax(hi0, b->hi[0]);
		hi1 = fmax(hi1, b->hi[1]);
		hi2 = fmax(hi2, b->hi[2]);
		double e =
		    fmax(b->hi[0] - b->lo[0], fmax(b->hi[1] - b->lo[1], b->hi[2] - b->lo[2]));
		ext_sum += e;
	}
	struct grid g = {{lo0, lo1, lo2}, 1};
	double span = fmax(hi0 - lo0, fmax(hi1 - lo1, hi2 - lo2));
	/* cells twice the mean face extent, at most 2^20 per axis */
	g.h = nproper ? 2 * ext_sum / (double)nproper : 1;
	if (!(g.h > span / 1048576.0))
		g.h = span > 0 ? span / 1048576.0 : 1;
	size_t nent = 0;
#pragma omp parallel for schedule(static) reduction(+ : nent) if (nf > MESH_PAR_MIN)
	for (size_t f = 0; f < nf; f++) {
		if (!ok[f])
			continue;
		face_cells(&g, &box[f]);
		uint64_t cells = 1;
		for (int d = 0; d < 3; d++)
			cells *= (uint64_t)(box[f].c1[d] - box[f].c0[d] + 1);
		/* faces over many cells are tested against all others instead */
		if (cells > CELLS_PER_FACE_MAX)
			ok[f] = 2;
		else
			nent += cells;
	}
	if (nent >= UINT32_MAX) {
		engi_free(ok);
		engi_free(box);
		RAISE(err, ENGI_ETOOBIG, "%zu grid entries for %zu faces, over the cap", nent, nf);
	}
	/* counting sort of (cell key, face) into buckets by the key's low bits */
	size_t nb = 16;
	while (nb < nent)
		nb *= 2;
	uint32_t *bstart = engi_calloc(nb + 1, sizeof(*bstart));
	uint64_t *ekey = engi_malloc((nent ? nent : 1) * sizeof(*ekey));
	uint32_t *eface = engi_malloc((nent ? nent : 1) * sizeof(*eface));
	if (!bstart || !ekey || !eface) {
		engi_free(ok);
		engi_free(box);
		engi_free(bstart);
		engi_free(ekey);
		engi_free(eface);
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu grid entries", nent);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t f = 0; f < nf; f++) {
			if (ok[f] != 1)
				continue;
			const struct fbox *b = &box[f];
			for (int32_t i = b->c0[0]; i <= b->c1[0]; i++)
				for (int32_t j = b->c0[1]; j <= b->c1[1]; j++)
					for (int32_t k = b->c0[2]; k <= b->c1[2]; k++) {
						uint64_t key = cell_key(i, j, k);
						size_t bk = (size_t)(key & (nb - 1));
						if (pass == 0) {
							bstart[bk + 1]++;
						} else {
							uint32_t at = bstart[bk]++;
							ekey[at] = key;
							eface[at] = (uint32_t)f;
						}
					}
		}
		if (pass == 0)
			for (size_t i = 0; i < nb; i++)
				bstart[i + 1] += bstart[i];
	}
	for (size_t i = nb; i > 0; i--)
		bstart[i] = bstart[i - 1];
	bstart[0] = 0;

	int nthreads = omp_get_max_threads();
	struct found *found = engi_calloc((size_t)nthreads, sizeof(*found));
	size_t count = 0, tested = 0;
	int stop = 0, oom = 0;
	if (!found)
		oom = 1;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : count, tested) \
	if (!oom && nb + nf > MESH_PAR_MIN / 8)
	for (size_t gi = 0; gi < nb + nf; gi++) {
		int stop_now;
#pragma omp atomic read
		stop_now = stop;
		if (stop_now || oom)
			continue;
		struct found *mine = &found[omp_get_thread_num()];
		if (gi >= nb) {
			/* a big face against every small face, and every big
			 * face after it */
			uint32_t fa = (uint32_t)(gi - nb);
			if (ok[fa] != 2)
				continue;
			for (size_t fb = 0; fb < nf; fb++) {
				if (fb == fa || !ok[fb] || (ok[fb] == 2 && fb < fa))
					continue;
				if (!boxes_overlap(&box[fa], &box[fb]))
					continue;
				int hit = pair_meets(m, fa, (uint32_t)fb);
				if (hit < 0)
					continue;
				tested++;
				if (!hit)
					continue;
				count++;
				if (early_exit) {
#pragma omp atomic write
					stop = 1;
				}
				if (found_add(mine, fa, (uint32_t)fb) < 0)
					oom = 1;
			}
			continue;
		}
		for (uint32_t a = bstart[gi]; a < bstart[gi + 1]; a++) {
			uint32_t fa = eface[a];
			const struct fbox *ba = &box[fa];
			for (uint32_t b = a + 1; b < bstart[gi + 1]; b++) {
				if (ekey[b] != ekey[a])
					continue; /* another cell in the same bucket */
				uint32_t fb = eface[b];
				const struct fbox *bb = &box[fb];
				if (!boxes_overlap(ba, bb))
					continue;
				/* tested only in the lowest cell both boxes touch */
				int32_t lo[3];
				for (int d = 0; d < 3; d++)
					lo[d] = ba->c0[d] > bb->c0[d] ? ba->c0[d] : bb->c0[d];
				if (cell_key(lo[0], lo[1], lo[2]) != ekey[a])
					continue;
				int hit = pair_meets(m, fa, fb);
				if (hit < 0)
					continue;
				tested++;
				if (!hit)
					continue;
				count++;
				if (early_exit) {
#pragma omp atomic write
					stop = 1;
				}
				if (found_add(mine, fa, fb) < 0)
					oom = 1;
			}
		}
	}
	int rc = 0;
	if (oom) {
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory collecting intersecting pairs");
	} else {
		size_t total = 0;
		for (int t = 0; t < nthreads; t++)
			total += found[t].n;
		uint64_t *all = engi_malloc((total ? total : 1) * sizeof(*all));
		if (!all) {
			rc = engi_raise(err, ENGI_ENOMEM,
					"out of memory collecting intersecting pairs");
		} else {
			size_t o = 0;
			for (int t = 0; t < nthreads; t++) {
				if (found[t].n)
					memcpy(all + o, found[t].v, found[t].n * sizeof(*all));
				o += found[t].n;
			}
			qsort(all, total, sizeof(*all), cmp_u64);
			size_t kept = total < keep ? total : keep;
			if (early_exit && kept > 1)
				kept = 1;
			x->pair = engi_malloc((kept ? kept : 1) * 2 * sizeof(uint32_t));
			if (!x->pair) {
				rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
			} else {
				for (size_t i = 0; i < kept; i++) {
					x->pair[2 * i] = (uint32_t)(all[i] >> 32);
					x->pair[2 * i + 1] = (uint32_t)all[i];
				}
				x->npairs = kept;
				x->count = early_exit && count ? 1 : count;
				x->tested = tested;
			}
			engi_free(all);
		}
	}
	for (int t = 0; found && t < nthreads; t++)
		engi_free(found[t].v);
	engi_free(found);
	engi_free(bstart);
	engi_free(ekey);
	engi_free(eface);
	engi_free(box);
	engi_free(ok);
	if (rc < 0)
		engi_selfx_release(x);
	return rc;
}
