/*
 * kd-tree, normals, ICP and cloud distances.
 *
 * The tree splits the widest side of each node's bounding box at the median
 * (quickselect on copies of the points, moved whole so that partitioning
 * reads contiguous memory; large subtrees are built as OpenMP tasks into
 * preassigned node numbers) down to leaves of at most LEAF_SIZE points. It
 * keeps the tight box of every node, to prune by the exact distance from a
 * query to a box, and the cell the splits leave it, to stop a search that
 * starts in a leaf: queries start from a candidate (the point's previous
 * match, or the previous query's), scan its leaf and climb only while the
 * ball of the best distance leaves the cell searched so far. Points are
 * kept in leaf order so that a leaf scan reads contiguous memory. Results
 * are those of a full scan, ties to the smaller id.
 *
 * ICP takes the source points along a Morton curve, so that consecutive
 * queries are neighbours, and starts large clouds on an even subsample.
 *
 * Determinism: per-point work is independent; sums over points are taken
 * in fixed blocks of BLOCK points whose partial sums are added in block
 * order, so results do not depend on the number of threads.
 */
#include "engi/pointcloud.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/morton.h"
#include "engi/vec3.h"

#include "mat3.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE  16
#define BLOCK	   2048
#define NODE_NONE  UINT32_MAX
#define KNN_MAX	   64
#define PCA_STARTS 4
/* subtrees of at least this many points are built as OpenMP tasks */
#define BUILD_TASK_MIN 16384
/* loops over fewer points than this run on the calling thread */
#define PAR_MIN 4096

struct engi_kdnode {
	double lo[3], hi[3];  /* tight box of the node's points */
	uint32_t begin, end;  /* range of leaf positions */
	uint32_t left, right; /* NODE_NONE for a leaf */
};

/* ---- build ---- */

/* A point with its id, moved as a whole while the tree is built so that
 * the partitioning reads contiguous memory. */
struct rec {
	double x[3];
	uint32_t id;
};

struct build {
	struct rec *r;
	struct engi_kdtree *t;
};

static inline int rec_before(const struct rec *a, const struct rec *b, int d)
{
	return a->x[d] < b->x[d] || (a->x[d] == b->x[d] && a->id < b->id);
}

static inline void swap_rec(struct rec *a, struct rec *b)
{
	struct rec x = *a;
	*a = *b;
	*b = x;
}

/* Places the k-th smallest (by coordinate d, ties by id) of r[lo, hi) at
 * position k, smaller ones before it and larger ones after. */
static void select_kth(struct rec *r, size_t lo, size_t hi, size_t k, int d)
{
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, last = hi - 1;
		/* median of three as pivot */
		int ab = rec_before(&r[lo], &r[mid], d), bc = rec_before(&r[mid], &r[last], d),
		    ac = rec_before(&r[lo], &r[last], d);
		size_t piv = ab == bc ? mid : (ab != ac ? lo : last);
		swap_rec(&r[piv], &r[last]);
		struct rec pv = r[last];
		size_t store = lo;
		for (size_t i = lo; i < last; i++)
			if (rec_before(&r[i], &pv, d))
				swap_rec(&r[i], &r[store++]);
		swap_rec(&r[store], &r[last]);
		if (store == k)
			return;
		if (k < store)
			hi = store;
		else
			lo = store + 1;
	}
}

/* Nodes of the tree over m points. */
static size_t subtree_nodes(size_t m)
{
	if (m <= LEAF_SIZE)
		return 1;
	return 1 + subtree_nodes(m / 2) + subtree_nodes(m - m / 2);
}

/* Builds the subtree over r[begin, end) as node id (children numbered in
 * preorder, so the layout does not depend on the threads), inside the cell
 * clo..chi that the ancestors' splits leave it. */
static void build_node(struct build *b, uint32_t id, uint32_t parent, size_t begin, size_t end,
		       const double clo[3], const double chi[3])
{
	struct engi_kdnode *nd = &b->t->node[id];
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	for (size_t i = begin; i < end; i++)
		for (int d = 0; d < 3; d++) {
			double v = b->r[i].x[d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	memcpy(nd->lo, lo, sizeof(lo));
	memcpy(nd->hi, hi, sizeof(hi));
	nd->begin = (uint32_t)begin;
	nd->end = (uint32_t)end;
	nd->left = nd->right = NODE_NONE;
	b->t->parent[id] = parent;
	memcpy(b->t->cell + 6 * (size_t)id, clo, 3 * sizeof(double));
	memcpy(b->t->cell + 6 * (size_t)id + 3, chi, 3 * sizeof(double));
	if (end - begin <= LEAF_SIZE) {
		for (size_t i = begin; i < end; i++)
			b->t->leaf[i] = id;
		return;
	}
	int axis = 0;
	for (int d = 1; d < 3; d++)
		if (hi[d] - lo[d] > hi[axis] - lo[axis])
			axis = d;
	size_t mid = begin + (end - begin) / 2;
	select_kth(b->r, begin, end, mid, axis);
	/* left points have coordinate <= s, right ones >= s */
	double s = b->r[mid].x[axis];
	double lhi[3], rlo[3];
	memcpy(lhi, chi, sizeof(lhi));
	memcpy(rlo, clo, sizeof(rlo));
	lhi[axis] = s;
	rlo[axis] = s;
	uint32_t l = id + 1, r = (uint32_t)(id + 1 + subtree_nodes(mid - begin));
	nd->left = l;
	nd->right = r;
	if (end - begin >= BUILD_TASK_MIN) {
#pragma omp task
		build_node(b, l, id, begin, mid, clo, lhi);
		build_node(b, r, id, mid, end, rlo, chi);
#pragma omp taskwait
	} else {
		build_node(b, l, id, begin, mid, clo, lhi);
		build_node(b, r, id, mid, end, rlo, chi);
	}
}

int engi_kdtree_build(struct engi_kdtree *t, const double *xyz, size_t n, struct engi_error *err)
{
	memset(t, 0, sizeof(*t));
	if (n == 0)
		RAISE(err, ENGI_EINVALID, "cannot index an empty point cloud");
	if (n >= UINT32_MAX / 2)
		RAISE(err, ENGI_ETOOBIG, "point cloud has %zu points, over the cap of %u", n,
		      UINT32_MAX / 2 - 1);
	TRY(engi_coords_check(xyz, n, "point", err));
	size_t nnodes = subtree_nodes(n);
	struct rec *r = engi_malloc(n * sizeof(*r));
	t->perm = engi_malloc(n * sizeof(*t->perm));
	t->leaf = engi_malloc(n * sizeof(*t->leaf));
	t->node = engi_malloc(nnodes * sizeof(*t->node));
	t->parent = engi_malloc(nnodes * sizeof(*t->parent));
	t->cell = engi_malloc(6 * nnodes * sizeof(*t->cell));
	t->pts = engi_malloc(3 * n * sizeof(*t->pts));
	if (!r || !t->perm || !t->leaf || !t->node || !t->parent || !t->cell || !t->pts) {
		engi_free(r);
		engi_kdtree_release(t);
		RAISE(err, ENGI_ENOMEM, "out of memory indexing %zu points", n);
	}
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
	for (size_t i = 0; i < n; i++) {
		memcpy(r[i].x, xyz + 3 * i, sizeof(r[i].x));
		r[i].id = (uint32_t)i;
	}
	struct build b = {r, t};
	const double clo[3] = {-INFINITY, -INFINITY, -INFINITY},
		     chi[3] = {INFINITY, INFINITY, INFINITY};
#pragma omp parallel if (n >= 2 * BUILD_TASK_MIN)
#pragma omp single
	build_node(&b, 0, NODE_NONE, 0, n, clo, chi);
	t->nnodes = nnodes;
	t->n = n;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
	for (size_t i = 0; i < n; i++) {
		memcpy(t->pts + 3 * i, r[i].x, sizeof(r[i].x));
		t->perm[i] = r[i].id;
	}
	engi_free(r);
	return 0;
}

void engi_kdtree_release(struct engi_kdtree *t)
{
	engi_free(t->perm);
	engi_free(t->leaf);
	engi_free(t->node);
	engi_free(t->parent);
	engi_free(t->cell);
	engi_free(t->pts);
	memset(t, 0, sizeof(*t));
}

/* ---- queries ---- */

/*
 * Exactness: a distance is always computed the same way, as the rounded
 * sum of the rounded squares of rounded coordinate differences. Rounding is
 * monotone, so the computed distance to a point is never below the
 * computed distance to a box that holds it, nor below the rounded square of
 * the gap to a plane that separates it from the query: pruning by either
 * never drops a point the full scan would have chosen (ties included, as
 * they compare equal).
 */
static inline double box_dist2(const struct engi_kdnode *nd, const double q[3])
{
	double s = 0;
	for (int d = 0; d < 3; d++) {
		double e =
		    q[d] < nd->lo[d] ? nd->lo[d] - q[d] : (q[d] > nd->hi[d] ? q[d] - nd->hi[d] : 0);
		s += e * e;
	}
	return s;
}

static inline double pt_dist2(const double *p, const double q[3])
{
	double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
	return dx * dx + dy * dy + dz * dz;
}

/* 1 when every point outside node id's cell is strictly farther from q than
 * the squared distance r2: the ball around q lies inside the cell with a
 * margin, and the search need not leave the node. */
static inline int ball_inside(const struct engi_kdtree *t, uint32_t id, const double q[3],
			      double r2)
{
	const double *c = t->cell + 6 * (size_t)id;
	for (int d = 0; d < 3; d++) {
		double a = q[d] - c[d], b = c[3 + d] - q[d];
		if (!(a > 0 && a * a > r2 && b > 0 && b * b > r2))
			return 0;
	}
	return 1;
}

static inline int in_cell(const struct engi_kdtree *t, uint32_t id, const double q[3])
{
	const double *c = t->cell + 6 * (size_t)id;
	return c[0] <= q[0] && q[0] <= c[3] && c[1] <= q[1] && q[1] <= c[4] && c[2] <= q[2] &&
	       q[2] <= c[5];
}

/* The leaf whose cell holds q (the left one where cells touch), found by
 * climbing from node id until its cell holds q and descending from there. */
static uint32_t locate(const struct engi_kdtree *t, uint32_t id, const double q[3])
{
	while (id != 0 && !in_cell(t, id, q))
		id = t->parent[id];
	while (t->node[id].left != NODE_NONE) {
		uint32_t l = t->node[id].left;
		id = in_cell(t, l, q) ? l : t->node[id].right;
	}
	return id;
}

/* Nearest by leaf position: *best (UINT32_MAX for none) and *bd2 hold the
 * best so far. Ties go to the smaller point id. */
static inline void nearest_leaf(const struct engi_kdtree *t, const struct engi_kdnode *nd,
				const double q[3], uint32_t *best, double *bd2)
{
	for (uint32_t i = nd->begin; i < nd->end; i++) {
		double d2 = pt_dist2(t->pts + 3 * (size_t)i, q);
		/* the first point seen is taken whatever d2 is, so that a query
		 * whose distances are NaN still gets a point of the tree */
		if (*best == UINT32_MAX || d2 < *bd2 ||
		    (d2 == *bd2 && t->perm[i] < t->perm[*best])) {
			*bd2 = d2;
			*best = i;
		}
	}
}

/* Top-down search of the subtree at id, children pruned by the exact
 * distance to their tight boxes, which on points sampled from surfaces
 * are far smaller than the split cells. */
static void nearest_down(const struct engi_kdtree *t, uint32_t id, const double q[3],
			 uint32_t *best, double *bd2)
{
	const struct engi_kdnode *nd = &t->node[id];
	if (nd->left == NODE_NONE) {
		nearest_leaf(t, nd, q, best, bd2);
		return;
	}
	uint32_t a = nd->left, b = nd->right;
	double da = box_dist2(&t->node[a], q), db = box_dist2(&t->node[b], q);
	if (db < da) {
		uint32_t x = a;
		a = b;
		b = x;
		double y = da;
		da = db;
		db = y;
	}
	if (da <= *bd2)
		nearest_down(t, a, q, best, bd2);
	if (db <= *bd2)
		nearest_down(t, b, q, best, bd2);
}

/* Bottom-up search from a leaf: the leaf, then at each ancestor the
 * sibling subtree, until the ball of the best distance lies inside the
 * cell searched so far. */
static void nearest_up(const struct engi_kdtree *t, uint32_t leaf, const double q[3],
		       uint32_t *best, double *bd2)
{
	nearest_leaf(t, &t->node[leaf], q, best, bd2);
	uint32_t c = leaf;
	while (c != 0 && !ball_inside(t, c, q, *bd2)) {
		uint32_t p = t->parent[c];
		uint32_t s = t->node[p].left == c ? t->node[p].right : t->node[p].left;
		if (box_dist2(&t->node[s], q) <= *bd2)
			nearest_down(t, s, q, best, bd2);
		c = p;
	}
}

/* Nearest leaf position to q. The closer of two candidate leaf positions
 * (UINT32_MAX: none) bounds the search, which starts in the leaf whose cell
 * holds q, reached from the candidate's leaf: points move little from one
 * query to the next, so both are usually close. */
static uint32_t nearest_pos(const struct engi_kdtree *t, const double q[3], uint32_t h1,
			    uint32_t h2, double *dist2)
{
	uint32_t best = UINT32_MAX;
	double bd2 = INFINITY;
	if (h1 != UINT32_MAX) {
		best = h1;
		bd2 = pt_dist2(t->pts + 3 * (size_t)h1, q);
	}
	if (h2 != UINT32_MAX && h2 != h1) {
		double d2 = pt_dist2(t->pts + 3 * (size_t)h2, q);
		if (best == UINT32_MAX || d2 < bd2 || (d2 == bd2 && t->perm[h2] < t->perm[best])) {
			best = h2;
			bd2 = d2;
		}
	}
	nearest_up(t, locate(t, best == UINT32_MAX ? 0 : t->leaf[best], q), q, &best, &bd2);
	*dist2 = bd2;
	return best;
}

void engi_kdtree_nearest(const struct engi_kdtree *t, const double q[3], uint32_t *id,
			 double *dist2)
{
	uint32_t pos = nearest_pos(t, q, UINT32_MAX, UINT32_MAX, dist2);
	*id = t->perm[pos];
}

/* The k best so far, sorted; pos are leaf positions, ties go to the
 * smaller point id. */
struct knn {
	size_t k, n;
	const uint32_t *perm;
	uint32_t *pos;
	double *d2;
};

static inline int knn_before(const struct knn *h, double d2, uint32_t pos, size_t i)
{
	return d2 < h->d2[i] || (d2 == h->d2[i] && h->perm[pos] < h->perm[h->pos[i]]);
}

static inline void knn_offer(struct knn *h, uint32_t pos, double d2)
{
	if (h->n == h->k && !knn_before(h, d2, pos, h->n - 1))
		return;
	size_t i = h->n < h->k ? h->n++ : h->n - 1;
	while (i > 0 && knn_before(h, d2, pos, i - 1)) {
		h->d2[i] = h->d2[i - 1];
		h->pos[i] = h->pos[i - 1];
		i--;
	}
	h->d2[i] = d2;
	h->pos[i] = pos;
}

/* The squared radius that still admits a point: the k-th distance, or
 * infinity while fewer than k are held. */
static inline double knn_radius(const struct knn *h)
{
	return h->n < h->k ? INFINITY : h->d2[h->n - 1];
}

static inline void knn_leaf(const struct engi_kdtree *t, const struct engi_kdnode *nd,
			    const double q[3], struct knn *h)
{
	for (uint32_t i = nd->begin; i < nd->end; i++)
		knn_offer(h, i, pt_dist2(t->pts + 3 * (size_t)i, q));
}

static void knn_down(const struct engi_kdtree *t, uint32_t id, const double q[3], struct knn *h)
{
	const struct engi_kdnode *nd = &t->node[id];
	if (nd->left == NODE_NONE) {
		knn_leaf(t, nd, q, h);
		return;
	}
	uint32_t a = nd->left, b = nd->right;
	double da = box_dist2(&t->node[a], q), db = box_dist2(&t->node[b], q);
	if (db < da) {
		uint32_t x = a;
		a = b;
		b = x;
		double y = da;
		da = db;
		db = y;
	}
	if (da <= knn_radius(h))
		knn_down(t, a, q, h);
	if (db <= knn_radius(h))
		knn_down(t, b, q, h);
}

/* k nearest as leaf positions, searched bottom-up from leaf. */
static size_t knn_pos(const struct engi_kdtree *t, const double q[3], uint32_t leaf, size_t k,
		      uint32_t *pos, double *dist2)
{
	if (k == 0 || t->n == 0)
		return 0;
	struct knn h = {k, 0, t->perm, pos, dist2};
	knn_leaf(t, &t->node[leaf], q, &h);
	uint32_t c = leaf;
	while (c != 0 && !ball_inside(t, c, q, knn_radius(&h))) {
		uint32_t p = t->parent[c];
		uint32_t s = t->node[p].left == c ? t->node[p].right : t->node[p].left;
		if (box_dist2(&t->node[s], q) <= knn_radius(&h))
			knn_down(t, s, q, &h);
		c = p;
	}
	return h.n;
}

size_t engi_kdtree_knn(const struct engi_kdtree *t, const double q[3], size_t k, uint32_t *ids,
		       double *dist2)
{
	if (k == 0 || t->n == 0)
		return 0;
	size_t m = knn_pos(t, q, locate(t, 0, q), k, ids, dist2);
	for (size_t i = 0; i < m; i++)
		ids[i] = t->perm[ids[i]];
	return m;
}

/* ---- small dense linear algebra ---- */

/* Eigen-decomposition of a symmetric 3x3 (row-major, full) by cyclic Jacobi:
 * eigenvalues ascending in w, eigenvectors in the columns of v. */
static void sym3_eigen(const double a_in[9], double w[3], double v[9])
{
	double a[9];
	memcpy(a, a_in, sizeof(a));
	for (int i = 0; i < 9; i++)
		v[i] = (i % 4 == 0) ? 1 : 0;
	for (int sweep = 0; sweep < 50; sweep++) {
		double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
		double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
		if (off <= 1e-36 * diag || off == 0)
			break;
		for (int p = 0; p < 2; p++)
			for (int q = p + 1; q < 3; q++) {
				double apq = a[3 * p + q];
				if (apq == 0)
					continue;
				double theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
				double tt =
				    (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
				double c = 1 / sqrt(tt * tt + 1), s = tt * c;
				for (int k = 0; k < 3; k++) {
					double akp = a[3 * k + p], akq = a[3 * k + q];
					a[3 * k + p] = c * akp - s * akq;
					a[3 * k + q] = s * akp + c * akq;
				}
				for (int k = 0; k < 3; k++) {
					double apk = a[3 * p + k], aqk = a[3 * q + k];
					a[3 * p + k] = c * apk - s * aqk;
					a[3 * q + k] = s * apk + c * aqk;
				}
				for (int k = 0; k < 3; k++) {
					double vkp = v[3 * k + p], vkq = v[3 * k + q];
					v[3 * k + p] = c * vkp - s * vkq;
					v[3 * k + q] = s * vkp + c * vkq;
				}
			}
	}
	int idx[3] = {0, 1, 2};
	for (int i = 0; i < 3; i++)
		for (int j = i + 1; j < 3; j++)
			if (a[4 * idx[j]] < a[4 * idx[i]]) {
				int x = idx[i];
				idx[i] = idx[j];
				idx[j] = x;
			}
	double vs[9];
	for (int i = 0; i < 3; i++) {
		w[i] = a[4 * idx[i]];
		for (int k = 0; k < 3; k++)
			vs[3 * k + i] = v[3 * k + idx[i]];
	}
	memcpy(v, vs, sizeof(vs));
}

/* A unit vector v with (a - lam I) v ~ 0: the longest cross product of two
 * rows of a - lam I; 0 when they are all parallel (lam is then at least a
 * double eigenvalue, and sym3_least takes another route). */
static int null_vector(const double a[9], double lam, double v[3])
{
	double r[3][3];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			r[i][j] = a[3 * i + j] - (i == j ? lam : 0);
	double c[3][3], best = 0;
	engi_cross3(r[0], r[1], c[0]);
	engi_cross3(r[0], r[2], c[1]);
	engi_cross3(r[1], r[2], c[2]);
	int k = -1;
	for (int i = 0; i < 3; i++) {
		double l = c[i][0] * c[i][0] + c[i][1] * c[i][1] + c[i][2] * c[i][2];
		if (l > best) {
			best = l;
			k = i;
		}
	}
	if (k < 0)
		return 0;
	double l = sqrt(best);
	for (int d = 0; d < 3; d++)
		v[d] = c[k][d] / l;
	return 1;
}

/*
 * Unit eigenvector of the least eigenvalue of a symmetric 3x3 (row-major,
 * full) without iterating: the eigenvalues in closed form (the
 * trigonometric solution of the characteristic cubic, on the matrix scaled
 * to unit largest entry), the vector as the longest cross product of two
 * rows of a - lam I, then lam once more as the vector's Rayleigh quotient
 * (error squared) and the vector from it. When the least eigenvalue is
 * repeated any vector of its plane is returned; the zero matrix gives the z
 * axis.
 */
static void sym3_least(const double a_in[9], double v[3])
{
	double s = 0, a[9];
	for (int i = 0; i < 9; i++)
		s = fabs(a_in[i]) > s ? fabs(a_in[i]) : s;
	v[0] = v[1] = 0;
	v[2] = 1;
	if (s == 0)
		return;
	for (int i = 0; i < 9; i++)
		a[i] = a_in[i] / s;
	double q = (a[0] + a[4] + a[8]) / 3;
	double c0 = a[0] - q, c4 = a[4] - q, c8 = a[8] - q;
	double p2 =
	    (c0 * c0 + c4 * c4 + c8 * c8 + 2 * (a[1] * a[1] + a[2] * a[2] + a[5] * a[5])) / 6;
	double p = sqrt(p2);
	if (p == 0)
		return; /* a multiple of the identity */
	double det = c0 * (c4 * c8 - a[5] * a[5]) - a[1] * (a[1] * c8 - a[5] * a[2]) +
		     a[2] * (a[1] * a[5] - c4 * a[2]);
	double r = det / (2 * p2 * p);
	r = r < -1 ? -1 : (r > 1 ? 1 : r);
	double phi = acos(r) / 3;
	double lam = q + 2 * p * cos(phi + 2 * 3.14159265358979323846 / 3);
	if (!null_vector(a, lam, v)) {
		/* repeated least eigenvalue: a - lam I has rank one, and any
		 * vector across its nonzero row will do */
		int k = 0;
		double rn[3];
		for (int i = 0; i < 3; i++) {
			rn[i] = 0;
			for (int j = 0; j < 3; j++)
				rn[i] += (a[3 * i + j] - (i == j ? lam : 0)) *
					 (a[3 * i + j] - (i == j ? lam : 0));
			k = rn[i] > rn[k] ? i : k;
		}
		double row[3], e[3] = {0, 0, 0}, c[3];
		for (int j = 0; j < 3; j++)
			row[j] = a[3 * k + j] - (k == j ? lam : 0);
		int m = 0;
		for (int j = 1; j < 3; j++)
			m = fabs(row[j]) < fabs(row[m]) ? j : m;
		e[m] = 1;
		engi_cross3(row, e, c);
		double l = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
		v[0] = v[1] = 0;
		v[2] = 1;
		if (l > 0)
			for (int d = 0; d < 3; d++)
				v[d] = c[d] / l;
		return;
	}
	double av[3];
	for (int i = 0; i < 3; i++)
		av[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
	double rq = v[0] * av[0] + v[1] * av[1] + v[2] * av[2], w[3];
	if (null_vector(a, rq, w))
		memcpy(v, w, sizeof(w));
}

int engi_kabsch(const double H_in[9], const double pc[3], const double qc[3], double R[9],
		double t[3])
{
	/* H = U S V^T, R = V diag(1, 1, det(V U^T)) U^T */
	double H[9], S[3], U[9], VT[9], superb[2];
	memcpy(H, H_in, sizeof(H));
	lapack_int info =
	    LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', 3, 3, H, 3, S, U, 3, VT, 3, superb);
	if (info != 0)
		return ENGI_EINVALID;
	double V[9], UT[9];
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++) {
			V[3 * r + c] = VT[3 * c + r];
			UT[3 * r + c] = U[3 * c + r];
		}
	double VU[9];
	mat3_mul(V, UT, VU);
	if (mat3_det(VU) < 0) {
		for (int r = 0; r < 3; r++)
			V[3 * r + 2] = -V[3 * r + 2];
		mat3_mul(V, UT, VU);
	}
	memcpy(R, VU, sizeof(VU));
	for (int d = 0; d < 3; d++) {
		t[d] = qc[d] - (R[3 * d] * pc[0] + R[3 * d + 1] * pc[1] + R[3 * d + 2] * pc[2]);
		if (!isfinite(t[d]))
			return ENGI_EINVALID;
	}
	return 0;
}

/* Rotation by the vector w (axis times angle), Rodrigues. */
static void rotation_from_vector(const double w[3], double r[9])
{
	double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
	double k[3] = {0, 0, 0};
	if (th > 0)
		for (int d = 0; d < 3; d++)
			k[d] = w[d] / th;
	double c = cos(th), s = sin(th), C = 1 - c;
	r[0] = c + k[0] * k[0] * C;
	r[1] = k[0] * k[1] * C - k[2] * s;
	r[2] = k[0] * k[2] * C + k[1] * s;
	r[3] = k[1] * k[0] * C + k[2] * s;
	r[4] = c + k[1] * k[1] * C;
	r[5] = k[1] * k[2] * C - k[0] * s;
	r[6] = k[2] * k[0] * C - k[1] * s;
	r[7] = k[2] * k[1] * C + k[0] * s;
	r[8] = c + k[2] * k[2] * C;
}

static double rotation_angle3(const double r[9])
{
	double c = (r[0] + r[4] + r[8] - 1) / 2;
	double s = 0.5 * sqrt((r[7] - r[5]) * (r[7] - r[5]) + (r[2] - r[6]) * (r[2] - r[6]) +
			      (r[3] - r[1]) * (r[3] - r[1]));
	return atan2(s, c);
}

double engi_transform_angle(const double m[16])
{
	double r[9] = {m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10]};
	return rotation_angle3(r);
}

/* ---- normals ---- */

static void centroid_cov(const double *xyz, size_t n, double c[3], double cov[9])
{
	size_t nb = (n + BLOCK - 1) / BLOCK;
	double s[3] = {0, 0, 0};
	for (size_t b = 0; b < nb; b++) {
		double p[3] = {0, 0, 0};
		for (size_t i = b * BLOCK; i < n && i < (b + 1) * BLOCK; i++)
			for (int d = 0; d < 3; d++)
				p[d] += xyz[3 * i + d];
		for (int d = 0; d < 3; d++)
			s[d] += p[d];
	}
	for (int d = 0; d < 3; d++)
		c[d] = s[d] / (double)n;
	double m[9] = {0};
	for (size_t b = 0; b < nb; b++) {
		double p[9] = {0};
		for (size_t i = b * BLOCK; i < n && i < (b + 1) * BLOCK; i++) {
			double x[3] = {xyz[3 * i] - c[0], xyz[3 * i + 1] - c[1],
				       xyz[3 * i + 2] - c[2]};
			for (int r = 0; r < 3; r++)
				for (int q = 0; q < 3; q++)
					p[3 * r + q] += x[r] * x[q];
		}
		for (int k = 0; k < 9; k++)
			m[k] += p[k];
	}
	for (int k = 0; k < 9; k++)
		cov[k] = m[k] / (double)n;
}

/* Unit normal of the neighbourhood of the point at leaf position i,
 * unoriented. */
static void local_normal(const struct engi_kdtree *t, size_t i, size_t k, double nrm[3])
{
	uint32_t pos[KNN_MAX];
	double d2[KNN_MAX];
	size_t m = knn_pos(t, t->pts + 3 * i, t->leaf[i], k, pos, d2);
	double mu[3] = {0, 0, 0};
	for (size_t j = 0; j < m; j++)
		for (int d = 0; d < 3; d++)
			mu[d] += t->pts[3 * (size_t)pos[j] + d];
	for (int d = 0; d < 3; d++)
		mu[d] /= (double)m;
	double cov[9] = {0};
	for (size_t j = 0; j < m; j++) {
		const double *p = t->pts + 3 * (size_t)pos[j];
		double x[3] = {p[0] - mu[0], p[1] - mu[1], p[2] - mu[2]};
		for (int r = 0; r < 3; r++)
			for (int c = r; c < 3; c++)
				cov[3 * r + c] += x[r] * x[c];
	}
	cov[3] = cov[1];
	cov[6] = cov[2];
	cov[7] = cov[5];
	sym3_least(cov, nrm);
}

/* Normals into out by point id (by_id) or in leaf order. */
static void cloud_normals(const struct engi_kdtree *t, size_t k, double *normals, int by_id)
{
	size_t n = t->n;
	double c[3], cov[9];
	centroid_cov(t->pts, n, c, cov);
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
	for (size_t i = 0; i < n; i++) {
		const double *p = t->pts + 3 * i;
		double nrm[3];
		local_normal(t, i, k, nrm);
		double s = (p[0] - c[0]) * nrm[0] + (p[1] - c[1]) * nrm[1] + (p[2] - c[2]) * nrm[2];
		double *out = normals + 3 * (by_id ? (size_t)t->perm[i] : i);
		for (int d = 0; d < 3; d++)
			out[d] = s < 0 ? -nrm[d] : nrm[d];
	}
}

int engi_cloud_normals(const struct engi_kdtree *t, size_t k, double *normals,
		       struct engi_error *err)
{
	if (k < 3 || k > KNN_MAX)
		RAISE(err, ENGI_EINVALID, "normal neighbourhood of %zu points is not within 3..%d",
		      k, KNN_MAX);
	cloud_normals(t, k, normals, 1);
	return 0;
}

/* ---- ICP ---- */

const char *engi_icp_stop_name(int stop)
{
	switch (stop) {
	case ENGI_ICP_CONVERGED:
		return "converged";
	case ENGI_ICP_MAX_ITERATIONS:
		return "max_iterations";
	case ENGI_ICP_NO_CORRESPONDENCES:
		return "no_correspondences";
	}
	return "unknown";
}

void engi_icp_options_default(struct engi_icp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->method = ENGI_ICP_POINT_TO_PLANE;
	o->max_dist = INFINITY;
	o->max_iterations = ENGI_ICP_MAX_ITERATIONS_DEFAULT;
	o->step_angle_rad = ENGI_ICP_STEP_ANGLE_DEFAULT;
	o->step_trans_rel = ENGI_ICP_STEP_TRANS_REL_DEFAULT;
	o->normal_k = ENGI_ICP_NORMAL_K_DEFAULT;
}

/* Sums of one iteration: point-to-point needs the centroids and the cross
 * covariance, point-to-plane the 6x6 normal equations. */
enum {
	A_COUNT,
	A_ERR2,
	A_P,		  /* 3 */
	A_Q = A_P + 3,	  /* 3 */
	A_PQ = A_Q + 3,	  /* 9: sum p q^T */
	A_JJ = A_PQ + 9,  /* 21: upper triangle of J^T J */
	A_JR = A_JJ + 21, /* 6 */
	A_N = A_JR + 6,
};

struct icp_ws {
	const double *src;
	size_t nsrc;
	const struct engi_kdtree *dst;
	double *dnorm; /* in the dst tree's leaf order */
	double max_d2;
	int method;
	double *part; /* A_N per block */
	/* source ids in the order the passes take them, then the coarse
	 * subsample (ncoarse, 0 for none); the last match of each of them
	 * (leaf position) */
	uint32_t *order, *hint;
	size_t ncoarse, stride;
};

static void icp_ws_release(struct icp_ws *w)
{
	engi_free(w->dnorm);
	engi_free(w->part);
	engi_free(w->order);
	engi_free(w->hint);
}

/* One pass: correspondences under (R, t) and the sums for the next step. */
static void icp_pass(struct icp_ws *w, int coarse, const double R[9], const double t[3],
		     double sum[A_N])
{
	size_t n = coarse ? w->ncoarse : w->nsrc, nb = (n + BLOCK - 1) / BLOCK;
	const uint32_t *order = w->order + (coarse ? w->nsrc : 0);
	uint32_t *hint = w->hint + (coarse ? w->nsrc : 0);
#pragma omp parallel for schedule(dynamic, 1) if (n > PAR_MIN)
	for (size_t b = 0; b < nb; b++) {
		double a[A_N];
		memset(a, 0, sizeof(a));
		uint32_t prev = UINT32_MAX;
		for (size_t i = b * BLOCK; i < n && i < (b + 1) * BLOCK; i++) {
			const double *s = w->src + 3 * (size_t)order[i];
			double p[3];
			for (int d = 0; d < 3; d++)
				p[d] = R[3 * d] * s[0] + R[3 * d + 1] * s[1] + R[3 * d + 2] * s[2] +
				       t[d];
			/* the point's last match and the previous point's
			 * match bound the search: points move little from one
			 * iteration to the next, and neighbours follow each
			 * other in the order */
			double bd2;
			uint32_t pos = nearest_pos(w->dst, p, hint[i], prev, &bd2);
			hint[i] = pos;
			prev = pos;
			if (bd2 > w->max_d2)
				continue;
			const double *q = w->dst->pts + 3 * (size_t)pos;
			a[A_COUNT] += 1;
			a[A_ERR2] += bd2;
			if (w->method == ENGI_ICP_POINT_TO_POINT) {
				for (int r = 0; r < 3; r++) {
					a[A_P + r] += p[r];
					a[A_Q + r] += q[r];
					for (int c = 0; c < 3; c++)
						a[A_PQ + 3 * r + c] += p[r] * q[c];
				}
			} else {
				const double *nm = w->dnorm + 3 * (size_t)pos;
				double J[6] = {p[1] * nm[2] - p[2] * nm[1],
					       p[2] * nm[0] - p[0] * nm[2],
					       p[0] * nm[1] - p[1] * nm[0],
					       nm[0],
					       nm[1],
					       nm[2]};
				double r = (q[0] - p[0]) * nm[0] + (q[1] - p[1]) * nm[1] +
					   (q[2] - p[2]) * nm[2];
				int k = 0;
				for (int i2 = 0; i2 < 6; i2++) {
					for (int j = i2; j < 6; j++)
						a[A_JJ + k++] += J[i2] * J[j];
					a[A_JR + i2] += J[i2] * r;
				}
			}
		}
		memcpy(w->part + b * A_N, a, sizeof(a));
	}
	memset(sum, 0, A_N * sizeof(double));
	for (size_t b = 0; b < nb; b++)
		for (int k = 0; k < A_N; k++)
			sum[k] += w->part[b * A_N + k];
}

/* The rigid step (dR, dt) that the sums ask for; 0 or ENGI_EINVALID when
 * the system is singular. */
static int icp_step(int method, const double sum[A_N], double dR[9], double dt[3])
{
	double n = sum[A_COUNT];
	if (method == ENGI_ICP_POINT_TO_POINT) {
		double pc[3], qc[3], H[9];
		for (int d = 0; d < 3; d++) {
			pc[d] = sum[A_P + d] / n;
			qc[d] = sum[A_Q + d] / n;
		}
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 3; c++)
				H[3 * r + c] = sum[A_PQ + 3 * r + c] - n * pc[r] * qc[c];
		return engi_kabsch(H, pc, qc, dR, dt);
	}
	double A[36], x[6];
	int k = 0;
	for (int i = 0; i < 6; i++)
		for (int j = i; j < 6; j++) {
			A[6 * i + j] = A[6 * j + i] = sum[A_JJ + k++];
		}
	for (int i = 0; i < 6; i++)
		x[i] = sum[A_JR + i];
	lapack_int info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', 6, 1, A, 6, x, 1);
	if (info != 0)
		return ENGI_EINVALID;
	/* a nearly singular system may still solve to an overflowing step */
	for (int i = 0; i < 6; i++)
		if (!isfinite(x[i]))
			return ENGI_EINVALID;
	rotation_from_vector(x, dR);
	for (int d = 0; d < 3; d++)
		dt[d] = x[3 + d];
	return 0;
}

struct icp_run {
	double R[9], t[3];
	int iterations, stop;
	double fitness, rmse;
	size_t inliers;
};

/* Rotation vector (axis times angle) of a rotation matrix. */
static void rotation_vector(const double r[9], double w[3])
{
	double th = rotation_angle3(r), v[3] = {r[7] - r[5], r[2] - r[6], r[3] - r[1]};
	double s = sin(th), k = th < 1e-12 ? 0.5 : th / (2 * s);
	for (int d = 0; d < 3; d++)
		w[d] = k * v[d];
}

/*
 * Point-to-point ICP slides along a surface in many small, nearly equal
 * steps. When two successive steps point the same way (in the 6D space of
 * rotation vector times the target's size and translation) and shrink
 * geometrically, the remaining steps are about r / (1 - r) times the last
 * one; jumping there (at most ICP_EXTRAPOLATE_MAX steps ahead) is tried, and
 * undone when the next correspondences are worse than before the jump
 * (the idea of Besl and McKay's accelerated ICP). Convergence is always
 * judged on ordinary steps.
 */
#define ICP_EXTRAPOLATE_COS  0.995
#define ICP_EXTRAPOLATE_MAX  25.0
#define ICP_EXTRAPOLATE_REST 3

/*
 * Clouds of at least ICP_COARSE_MIN source points start on a subsample of
 * about ICP_COARSE_POINTS of them (every k-th in the spatial order, so it
 * covers the cloud evenly): the first steps, which move the source by many
 * point spacings, cost a fraction of a full pass. All points take over
 * once a step moves the source by less than ICP_COARSE_STEP_REL times the
 * target's size (or the subsample finds too few pairs); convergence is
 * judged on all points only.
 */
#define ICP_COARSE_MIN	    65536
#define ICP_COARSE_POINTS   16384
#define ICP_COARSE_STEP_REL 1e-4

/* First candidates for all points from the subsample's last matches: the
 * match of the sampled point at or before each one in the order. */
static void icp_seed_hints(struct icp_ws *w)
{
	const uint32_t *ch = w->hint + w->nsrc;
#pragma omp parallel for schedule(static) if (w->nsrc > PAR_MIN)
	for (size_t i = 0; i < w->nsrc; i++) {
		size_t j = i / w->stride;
		w->hint[i] = ch[j < w->ncoarse ? j : w->ncoarse - 1];
	}
}

static void icp_iterate(struct icp_ws *w, const struct engi_icp_options *o, double size,
			struct icp_run *run)
{
	double sum[A_N];
	double prev_step[6] = {0}, prev_len = 0, saved_R[9], saved_t[3], err_before = INFINITY;
	int jumped = 0, rest = 0, have_prev = 0, coarse = w->ncoarse > 0;
	run->stop = ENGI_ICP_MAX_ITERATIONS;
	run->iterations = 0;
	for (int it = 0; it < o->max_iterations; it++) {
		icp_pass(w, coarse, run->R, run->t, sum);
		if (coarse && sum[A_COUNT] < 3) {
			coarse = 0;
			icp_seed_hints(w);
			continue;
		}
		if (sum[A_COUNT] < 3) {
			run->stop = ENGI_ICP_NO_CORRESPONDENCES;
			break;
		}
		double err = sum[A_ERR2] / sum[A_COUNT];
		run->iterations = it + 1;
		if (jumped) {
			jumped = 0;
			if (!(err < err_before)) {
				/* the jump made things worse: back to where it started */
				memcpy(run->R, saved_R, sizeof(saved_R));
				memcpy(run->t, saved_t, sizeof(saved_t));
				rest = ICP_EXTRAPOLATE_REST;
				have_prev = 0;
				continue;
			}
			have_prev = 0;
		}
		double dR[9], dt[3];
		if (icp_step(w->method, sum, dR, dt) < 0) {
			run->stop = ENGI_ICP_NO_CORRESPONDENCES;
			break;
		}
		mat3_mul(dR, run->R, run->R);
		double nt[3];
		for (int d = 0; d < 3; d++)
			nt[d] = dR[3 * d] * run->t[0] + dR[3 * d + 1] * run->t[1] +
				dR[3 * d + 2] * run->t[2] + dt[d];
		memcpy(run->t, nt, sizeof(nt));
		/* The step's displacement of a point at the target's scale. */
		double ang = rotation_angle3(dR);
		double tl = sqrt(dt[0] * dt[0] + dt[1] * dt[1] + dt[2] * dt[2]);
		if (coarse && ang * size + tl < ICP_COARSE_STEP_REL * size) {
			/* the subsample has done its part: on to all points,
			 * extrapolation starting afresh */
			coarse = 0;
			have_prev = 0;
			rest = 0;
			icp_seed_hints(w);
			continue;
		}
		if (ang < o->step_angle_rad && tl < o->step_trans_rel * size) {
			run->stop = ENGI_ICP_CONVERGED;
			break;
		}
		if (w->method != ENGI_ICP_POINT_TO_POINT)
			continue;
		double step[6], len = 0, dot = 0;
		rotation_vector(dR, step);
		for (int d = 0; d < 3; d++) {
			step[d] *= size;
			step[3 + d] = dt[d];
		}
		for (int d = 0; d < 6; d++) {
			len += step[d] * step[d];
			dot += step[d] * prev_step[d];
		}
		len = sqrt(len);
		int aligned = have_prev && len > 0 && prev_len > len &&
			      dot > ICP_EXTRAPOLATE_COS * len * prev_len;
		memcpy(prev_step, step, sizeof(step));
		prev_len = len;
		have_prev = 1;
		if (rest > 0) {
			rest--;
			continue;
		}
		if (!aligned)
			continue;
		double r = len / prev_len, k = r / (1 - r);
		if (k > ICP_EXTRAPOLATE_MAX)
			k = ICP_EXTRAPOLATE_MAX;
		memcpy(saved_R, run->R, sizeof(saved_R));
		memcpy(saved_t, run->t, sizeof(saved_t));
		err_before = err;
		double wv[3], J[9];
		for (int d = 0; d < 3; d++)
			wv[d] = k * step[d] / size;
		rotation_from_vector(wv, J);
		mat3_mul(J, run->R, run->R);
		for (int d = 0; d < 3; d++)
			nt[d] = J[3 * d] * run->t[0] + J[3 * d + 1] * run->t[1] +
				J[3 * d + 2] * run->t[2] + k * dt[d];
		memcpy(run->t, nt, sizeof(nt));
		jumped = 1;
	}
	icp_pass(w, 0, run->R, run->t, sum);
	run->inliers = (size_t)sum[A_COUNT];
	run->fitness = w->nsrc ? sum[A_COUNT] / (double)w->nsrc : 0;
	run->rmse = sum[A_COUNT] > 0 ? sqrt(sum[A_ERR2] / sum[A_COUNT]) : INFINITY;
}

/* Principal axes as a proper rotation (columns, ascending variance). */
static void pca_frame(const double *xyz, size_t n, double c[3], double E[9])
{
	double cov[9], w[3];
	centroid_cov(xyz, n, c, cov);
	sym3_eigen(cov, w, E);
	if (mat3_det(E) < 0)
		for (int r = 0; r < 3; r++)
			E[3 * r + 2] = -E[3 * r + 2];
}

int engi_icp(const double *src, size_t nsrc, const double *dst, size_t ndst,
	     const struct engi_icp_options *o, struct engi_icp_report *r, struct engi_error *err)
{
	memset(r, 0, sizeof(*r));
	if (nsrc < 3 || ndst < 3)
		RAISE(err, ENGI_EINVALID,
		      "ICP needs at least 3 points in each cloud (source %zu, target %zu)", nsrc,
		      ndst);
	if (o->method != ENGI_ICP_POINT_TO_POINT && o->method != ENGI_ICP_POINT_TO_PLANE)
		RAISE(err, ENGI_EINVALID, "unknown ICP method %d", o->method);
	if (!(o->max_dist > 0))
		RAISE(err, ENGI_EINVALID, "ICP max_dist %g is not positive", o->max_dist);
	if (o->max_iterations < 1)
		RAISE(err, ENGI_EINVALID, "ICP max_iterations %d is below 1", o->max_iterations);
	TRY(engi_coords_check(src, nsrc, "source point", err));
	size_t nk = o->normal_k ? o->normal_k : ENGI_ICP_NORMAL_K_DEFAULT;
	if (o->method == ENGI_ICP_POINT_TO_PLANE && !o->dst_normals && (nk < 3 || nk > KNN_MAX))
		RAISE(err, ENGI_EINVALID, "normal neighbourhood of %zu points is not within 3..%d",
		      nk, KNN_MAX);
	struct engi_kdtree tree;
	TRY(engi_kdtree_build(&tree, dst, ndst, err));
	struct icp_ws w = {src,	 nsrc, &tree, NULL, o->max_dist * o->max_dist, o->method, NULL,
			   NULL, NULL, 0,     0};
	size_t nb = (nsrc + BLOCK - 1) / BLOCK;
	w.part = engi_malloc(nb * A_N * sizeof(double));
	w.stride = nsrc >= ICP_COARSE_MIN ? nsrc / ICP_COARSE_POINTS : 0;
	w.ncoarse = w.stride ? nsrc / w.stride : 0;
	w.hint = engi_malloc((nsrc + w.ncoarse) * sizeof(uint32_t));
	w.order = engi_malloc((nsrc + w.ncoarse) * sizeof(uint32_t));
	if (o->method == ENGI_ICP_POINT_TO_PLANE)
		w.dnorm = engi_malloc(3 * ndst * sizeof(double));
	if (!w.part || !w.hint || !w.order || (o->method == ENGI_ICP_POINT_TO_PLANE && !w.dnorm) ||
	    engi_morton_order(src, nsrc, w.order) < 0) {
		icp_ws_release(&w);
		engi_kdtree_release(&tree);
		RAISE(err, ENGI_ENOMEM, "out of memory aligning %zu to %zu points", nsrc, ndst);
	}
	for (size_t j = 0; j < w.ncoarse; j++)
		w.order[nsrc + j] = w.order[j * w.stride];
	if (w.dnorm && o->dst_normals) {
		for (size_t i = 0; i < ndst; i++)
			memcpy(w.dnorm + 3 * i, o->dst_normals + 3 * (size_t)tree.perm[i],
			       3 * sizeof(double));
	} else if (w.dnorm) {
		cloud_normals(&tree, nk, w.dnorm, 0);
	}
	const struct engi_kdnode *root = &tree.node[0];
	double size = 0;
	for (int d = 0; d < 3; d++)
		size += (root->hi[d] - root->lo[d]) * (root->hi[d] - root->lo[d]);
	size = sqrt(size);
	if (size == 0)
		size = 1;

	struct icp_run best, run;
	memset(&best, 0, sizeof(best));
	int nstarts = 1 + (o->init_pca ? PCA_STARTS : 0);
	double cs[3], cd[3], Es[9], Ed[9];
	if (o->init_pca) {
		pca_frame(src, nsrc, cs, Es);
		pca_frame(dst, ndst, cd, Ed);
	}
	for (int s = 0; s < nstarts; s++) {
		memset(&run, 0, sizeof(run));
		if (s == 0) {
			run.R[0] = run.R[4] = run.R[8] = 1;
		} else {
			/* Ed diag(flip) Es^T: the axes matched up to the sign
			 * symmetries that keep a proper rotation. */
			static const double flips[PCA_STARTS][3] = {
			    {1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
			double F[9] = {0}, EsT[9];
			for (int d = 0; d < 3; d++)
				F[4 * d] = flips[s - 1][d];
			for (int a = 0; a < 3; a++)
				for (int b = 0; b < 3; b++)
					EsT[3 * a + b] = Es[3 * b + a];
			mat3_mul(Ed, F, run.R);
			mat3_mul(run.R, EsT, run.R);
			for (int d = 0; d < 3; d++)
				run.t[d] =
				    cd[d] - (run.R[3 * d] * cs[0] + run.R[3 * d + 1] * cs[1] +
					     run.R[3 * d + 2] * cs[2]);
		}
		for (size_t i = 0; i < nsrc + w.ncoarse; i++)
			w.hint[i] = UINT32_MAX;
		icp_iterate(&w, o, size, &run);
		int better = s == 0 || run.fitness > best.fitness ||
			     (run.fitness == best.fitness && run.rmse < best.rmse);
		if (better) {
			best = run;
			r->start = s;
		}
	}
	icp_ws_release(&w);
	engi_kdtree_release(&tree);
	for (int a = 0; a < 3; a++) {
		for (int b = 0; b < 3; b++)
			r->transform[4 * a + b] = best.R[3 * a + b];
		r->transform[4 * a + 3] = best.t[a];
	}
	r->transform[15] = 1;
	r->iterations = best.iterations;
	r->stop = best.stop;
	r->fitness = best.fitness;
	r->rmse = best.rmse;
	r->inliers = best.inliers;
	return 0;
}

/* ---- distances ---- */

/* Nearest distances from every point of ta to tb. The points are taken in
 * ta's leaf order, where neighbours follow each other, so the previous
 * answer is a close candidate that prunes the next search. */
static void one_way(const struct engi_kdtree *ta, const struct engi_kdtree *tb, double *part,
		    double *mean, double *max)
{
	size_t na = ta->n, nb = (na + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 1) if (na > PAR_MIN)
	for (size_t b = 0; b < nb; b++) {
		double s = 0, m = 0;
		uint32_t hint = UINT32_MAX;
		for (size_t i = b * BLOCK; i < na && i < (b + 1) * BLOCK; i++) {
			double d2;
			hint = nearest_pos(tb, ta->pts + 3 * i, hint, UINT32_MAX, &d2);
			double d = sqrt(d2);
			s += d;
			m = d > m ? d : m;
		}
		part[2 * b] = s;
		part[2 * b + 1] = m;
	}
	double s = 0, m = 0;
	for (size_t b = 0; b < nb; b++) {
		s += part[2 * b];
		m = part[2 * b + 1] > m ? part[2 * b + 1] : m;
	}
	*mean = s / (double)na;
	*max = m;
}

int engi_cloud_distance(const double *a, size_t na, const double *b, size_t nb,
			struct engi_cloud_distance *d, struct engi_error *err)
{
	memset(d, 0, sizeof(*d));
	struct engi_kdtree ta, tb;
	TRY(engi_kdtree_build(&ta, a, na, err));
	int rc = engi_kdtree_build(&tb, b, nb, err);
	if (rc < 0) {
		engi_kdtree_release(&ta);
		return rc;
	}
	size_t nblk = ((na > nb ? na : nb) + BLOCK - 1) / BLOCK;
	double *part = engi_malloc(2 * nblk * sizeof(double));
	if (!part) {
		engi_kdtree_release(&ta);
		engi_kdtree_release(&tb);
		RAISE(err, ENGI_ENOMEM, "out of memory measuring distances");
	}
	one_way(&ta, &tb, part, &d->mean_ab, &d->max_ab);
	one_way(&tb, &ta, part, &d->mean_ba, &d->max_ba);
	d->chamfer = d->mean_ab + d->mean_ba;
	d->hausdorff = d->max_ab > d->max_ba ? d->max_ab : d->max_ba;
	engi_free(part);
	engi_kdtree_release(&ta);
	engi_kdtree_release(&tb);
	return 0;
}
