/*
 * Triangle-mesh welding and analysis.
 *
 * Determinism: every parallel loop either writes disjoint data or reduces
 * integers, or sums fixed blocks of faces whose partial sums are then added in
 * block order, so the report does not depend on the number of threads.
 *
 * Edge map: each edge of a proper face (three distinct indices) is a half-edge
 * filed under its smaller vertex (a counting sort) as (larger vertex << 32 |
 * half-edge id); sorting each small bucket groups the uses of every undirected
 * edge. Faces with a repeated index are degenerate and stay out of the
 * topology: they have no area, no volume and no proper edges.
 */
#include "engi/mesh.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "parallel.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NONE		  UINT32_MAX
#define BLOCK_FACES	  4096
#define RADIX_CHUNK_MIN	  65536
#define WELD_EDGE_SAMPLES 1024
#define WELD_CELL_MAX_TOL 64

void engi_mesh_init(struct engi_mesh *m)
{
	m->xyz = NULL;
	m->tri = NULL;
	m->nverts = 0;
	m->ntris = 0;
}

void engi_mesh_release(struct engi_mesh *m)
{
	engi_free(m->xyz);
	engi_free(m->tri);
	engi_mesh_init(m);
}

/* ---- compensated sums (Neumaier) ---- */

struct nsum {
	double s, c;
};

static inline void nsum_add(struct nsum *k, double x)
{
	double t = k->s + x;
	if (fabs(k->s) >= fabs(x))
		k->c += (k->s - t) + x;
	else
		k->c += (x - t) + k->s;
	k->s = t;
}

static inline double nsum_get(const struct nsum *k)
{
	return k->s + k->c;
}

/* ---- coordinates ---- */

const char *engi_coord_problem(double x)
{
	if (engi_coord_ok(x))
		return NULL;
	return isfinite(x) ? "exceeds 1e+30 in magnitude" : "is not finite";
}

int engi_coords_check(const double *xyz, size_t n, const char *noun, struct engi_error *err)
{
	size_t bad = SIZE_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static) if (n > MESH_PAR_MIN)
	for (size_t v = 0; v < n; v++)
		if (!(engi_coord_ok(xyz[3 * v]) && engi_coord_ok(xyz[3 * v + 1]) &&
		      engi_coord_ok(xyz[3 * v + 2])) &&
		    v < bad)
			bad = v;
	if (bad == SIZE_MAX)
		return 0;
	int d = 0;
	while (d < 2 && engi_coord_ok(xyz[3 * bad + d]))
		d++;
	double x = xyz[3 * bad + d];
	RAISE(err, ENGI_EINVALID, "%s %zu: coordinate %c = %g %s", noun, bad, "xyz"[d], x,
	      engi_coord_problem(x));
}

/* ---- input checks shared by weld and analyze ---- */

static int check_mesh(const struct engi_mesh *m, struct engi_error *err)
{
	if (m->nverts >= NONE)
		RAISE(err, ENGI_ETOOBIG, "mesh has %zu vertices, more than 32-bit indices address",
		      m->nverts);
	if (m->ntris > (NONE - 1) / 3)
		RAISE(err, ENGI_ETOOBIG, "mesh has %zu triangles, over the cap of %u", m->ntris,
		      (NONE - 1) / 3);
	size_t ntris = m->ntris, nverts = m->nverts, bad = SIZE_MAX;
	const uint32_t *t = m->tri;
#pragma omp parallel for reduction(min : bad) schedule(static) if (ntris > MESH_PAR_MIN)
	for (size_t f = 0; f < ntris; f++)
		for (int k = 0; k < 3; k++)
			if (t[3 * f + k] >= nverts && f < bad)
				bad = f;
	if (bad != SIZE_MAX) {
		uint32_t v = t[3 * bad];
		for (int k = 1; k < 3 && v < nverts; k++)
			v = t[3 * bad + k];
		RAISE(err, ENGI_EINVALID,
		      "triangle %zu refers to vertex %u, but the mesh has %zu vertices", bad,
		      (unsigned)v, nverts);
	}
	return engi_coords_check(m->xyz, nverts, "vertex", err);
}

/* ---- stable LSD radix sort of 64-bit words on bits [lo_bit, 64) ---- */

static int radix_sort_u64(uint64_t *a, size_t n, int lo_bit)
{
	if (n < 2)
		return 0;
	uint64_t *tmp = engi_malloc(n * sizeof(*tmp));
	size_t nchunks = (size_t)omp_get_max_threads();
	if (nchunks > n / RADIX_CHUNK_MIN + 1)
		nchunks = n / RADIX_CHUNK_MIN + 1;
	size_t *hist = engi_malloc(nchunks * 256 * sizeof(*hist));
	if (!tmp || !hist) {
		engi_free(tmp);
		engi_free(hist);
		return ENGI_ENOMEM;
	}
	uint64_t *src = a, *dst = tmp;
	for (int shift = lo_bit; shift < 64; shift += 8) {
		memset(hist, 0, nchunks * 256 * sizeof(*hist));
#pragma omp parallel for schedule(static) if (nchunks > 1)
		for (size_t c = 0; c < nchunks; c++) {
			size_t *h = hist + 256 * c;
			for (size_t i = n * c / nchunks; i < n * (c + 1) / nchunks; i++)
				h[(src[i] >> shift) & 255]++;
		}
		/* A digit every key shares moves nothing. */
		int trivial = 0;
		for (int d = 0; d < 256 && !trivial; d++) {
			size_t tot = 0;
			for (size_t c = 0; c < nchunks; c++)
				tot += hist[256 * c + d];
			if (tot == n)
				trivial = 1;
			else if (tot)
				break;
		}
		if (trivial)
			continue;
		size_t off = 0;
		for (int d = 0; d < 256; d++)
			for (size_t c = 0; c < nchunks; c++) {
				size_t k = hist[256 * c + d];
				hist[256 * c + d] = off;
				off += k;
			}
#pragma omp parallel for schedule(static) if (nchunks > 1)
		for (size_t c = 0; c < nchunks; c++) {
			size_t *h = hist + 256 * c;
			for (size_t i = n * c / nchunks; i < n * (c + 1) / nchunks; i++)
				dst[h[(src[i] >> shift) & 255]++] = src[i];
		}
		uint64_t *sw = src;
		src = dst;
		dst = sw;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	engi_free(tmp);
	engi_free(hist);
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

static void sort_small_u64(uint64_t *a, size_t n)
{
	if (n > 24) {
		qsort(a, n, sizeof(*a), cmp_u64);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		uint64_t x = a[i];
		size_t j = i;
		while (j > 0 && a[j - 1] > x) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/* ---- welding ---- */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t coord_bits(double v)
{
	uint64_t b;
	v = v == 0 ? 0.0 : v; /* -0 and +0 are the same point */
	memcpy(&b, &v, sizeof(b));
	return b;
}

static inline int same_point(const double *p, const double *q)
{
	return p[0] == q[0] && p[1] == q[1] && p[2] == q[2];
}

/*
 * canon[v] = the smallest index with exactly v's coordinates. Sorts
 * (32-bit coordinate hash << 32 | index); within a run of equal hashes,
 * points are told apart by comparing coordinates.
 */
static int exact_duplicates(const double *xyz, size_t n, uint32_t *canon)
{
	uint64_t *key = engi_malloc((n ? n : 1) * sizeof(*key));
	if (!key)
		return ENGI_ENOMEM;
#pragma omp parallel for schedule(static) if (n > MESH_PAR_MIN)
	for (size_t v = 0; v < n; v++) {
		const double *p = xyz + 3 * v;
		uint64_t h = mix64(coord_bits(p[0]));
		h = mix64(h ^ coord_bits(p[1]));
		h = mix64(h ^ coord_bits(p[2]));
		key[v] = (h & 0xffffffff00000000ULL) | v;
	}
	int rc = radix_sort_u64(key, n, 32);
	if (rc < 0) {
		engi_free(key);
		return rc;
	}
	size_t i = 0;
	while (i < n) {
		size_t j = i + 1;
		while (j < n && (key[j] >> 32) == (key[i] >> 32))
			j++;
		/* Indices ascend inside the run: the first of each point is its
		 * smallest index. */
		for (size_t a = i; a < j; a++) {
			uint32_t va = (uint32_t)key[a];
			canon[va] = va;
			for (size_t b = i; b < a; b++) {
				uint32_t vb = (uint32_t)key[b];
				if (canon[vb] == vb && same_point(xyz + 3 * va, xyz + 3 * vb)) {
					canon[va] = vb;
					break;
				}
			}
		}
		i = j;
	}
	engi_free(key);
	return 0;
}

struct cell {
	int64_t c[3];
	uint32_t head; /* first representative in the cell, NONE when empty */
};

static inline size_t cell_hash(const int64_t c[3], size_t mask)
{
	uint64_t h = mix64((uint64_t)c[0]);
	h = mix64(h ^ (uint64_t)c[1]);
	h = mix64(h ^ (uint64_t)c[2]);
	return (size_t)h & mask;
}

static struct cell *cell_find(struct cell *tab, size_t mask, const int64_t c[3])
{
	size_t i = cell_hash(c, mask);
	while (tab[i].head != NONE &&
	       (tab[i].c[0] != c[0] || tab[i].c[1] != c[1] || tab[i].c[2] != c[2]))
		i = (i + 1) & mask;
	return &tab[i];
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* Median length of the non-zero edges of up to WELD_EDGE_SAMPLES evenly
 * spaced triangles; 0 when there are none. */
static double median_edge(const struct engi_mesh *m)
{
	double len[3 * WELD_EDGE_SAMPLES];
	size_t n = 0, step = m->ntris / WELD_EDGE_SAMPLES + 1;
	for (size_t f = 0; f < m->ntris && n + 3 <= 3 * WELD_EDGE_SAMPLES; f += step)
		for (int k = 0; k < 3; k++) {
			const double *p = m->xyz + 3 * (size_t)m->tri[3 * f + k];
			const double *q = m->xyz + 3 * (size_t)m->tri[3 * f + (k + 1) % 3];
			double d =
			    sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
				 (p[2] - q[2]) * (p[2] - q[2]));
			if (d > 0)
				len[n++] = d;
		}
	if (n == 0)
		return 0;
	qsort(len, n, sizeof(len[0]), cmp_double);
	return len[n / 2];
}

int engi_mesh_weld(struct engi_mesh *m, double tol, struct engi_error *err)
{
	if (!(tol >= 0) || !isfinite(tol))
		RAISE(err, ENGI_EINVALID, "weld tolerance %g is not a finite number >= 0", tol);
	TRY(check_mesh(m, err));
	size_t n = m->nverts;
	if (n == 0)
		return 0;
	uint32_t *canon = engi_malloc(n * sizeof(*canon));
	uint32_t *newidx = engi_malloc(n * sizeof(*newidx));
	uint32_t *reps = engi_malloc(n * sizeof(*reps)); /* ordinal -> vertex */
	uint32_t *next = NULL;
	struct cell *tab = NULL;
	double *xyz = NULL;
	int rc = ENGI_ENOMEM;
	if (!canon || !newidx || !reps)
		goto out;
	rc = exact_duplicates(m->xyz, n, canon);
	if (rc < 0)
		goto out;

	size_t nunique = 0;
	for (size_t v = 0; v < n; v++)
		nunique += canon[v] == v;
	size_t mask = 0;
	double h = 0, lo[3] = {0, 0, 0};
	if (tol > 0) {
		double hi[3];
		for (int d = 0; d < 3; d++)
			lo[d] = hi[d] = m->xyz[d];
		for (size_t v = 0; v < n; v++)
			for (int d = 0; d < 3; d++) {
				double c = m->xyz[3 * v + d];
				lo[d] = c < lo[d] ? c : lo[d];
				hi[d] = c > hi[d] ? c : hi[d];
			}
		/* Any cell size at least 2 tol is correct: the tol-box of a point
		 * then meets at most 2 x 2 x 2 cells, and only the distance test
		 * decides. Cells near half the typical edge length make the box
		 * fall inside one cell almost always; capping them at
		 * WELD_CELL_MAX_TOL tol bounds how many representatives (more than
		 * tol apart) a cell can hold. At most 2^40 cells per axis keeps
		 * cell numbers far from int64 overflow. */
		double ext = 0;
		for (int d = 0; d < 3; d++)
			ext = hi[d] - lo[d] > ext ? hi[d] - lo[d] : ext;
		h = 0.5 * median_edge(m);
		if (h > WELD_CELL_MAX_TOL * tol)
			h = WELD_CELL_MAX_TOL * tol;
		if (h < 2 * tol)
			h = 2 * tol;
		if (h < ext / 1099511627776.0)
			h = ext / 1099511627776.0;
		size_t cap = 16;
		while (cap < 2 * nunique)
			cap *= 2;
		mask = cap - 1;
		tab = engi_malloc(cap * sizeof(*tab));
		next = engi_malloc(n * sizeof(*next));
		if (!tab || !next) {
			rc = ENGI_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < cap; i++)
			tab[i].head = NONE;
	}

	uint32_t nrep = 0;
	double tol2 = tol * tol;
	for (size_t v = 0; v < n; v++) {
		if (canon[v] != v) {
			newidx[v] = newidx[canon[v]];
			continue;
		}
		if (tol == 0) {
			reps[nrep] = (uint32_t)v;
			newidx[v] = nrep++;
			continue;
		}
		/* The earliest representative within tol wins. */
		const double *p = m->xyz + 3 * v;
		int64_t c0[3], c1[3], own[3];
		for (int d = 0; d < 3; d++) {
			c0[d] = (int64_t)floor((p[d] - tol - lo[d]) / h);
			c1[d] = (int64_t)floor((p[d] + tol - lo[d]) / h);
			own[d] = (int64_t)floor((p[d] - lo[d]) / h);
		}
		uint32_t best = NONE;
		int64_t c[3];
		for (c[0] = c0[0]; c[0] <= c1[0]; c[0]++)
			for (c[1] = c0[1]; c[1] <= c1[1]; c[1]++)
				for (c[2] = c0[2]; c[2] <= c1[2]; c[2]++) {
					struct cell *e = cell_find(tab, mask, c);
					for (uint32_t r = e->head; r != NONE; r = next[r]) {
						if (r >= best)
							continue;
						const double *q = m->xyz + 3 * (size_t)reps[r];
						double dx = p[0] - q[0], dy = p[1] - q[1],
						       dz = p[2] - q[2];
						if (dx * dx + dy * dy + dz * dz <= tol2)
							best = r;
					}
				}
		if (best != NONE) {
			newidx[v] = best;
			continue;
		}
		struct cell *e = cell_find(tab, mask, own);
		if (e->head == NONE)
			memcpy(e->c, own, sizeof(own));
		next[nrep] = e->head;
		e->head = nrep;
		reps[nrep] = (uint32_t)v;
		newidx[v] = nrep++;
	}

	xyz = engi_malloc((size_t)nrep * 3 * sizeof(*xyz));
	if (!xyz) {
		rc = ENGI_ENOMEM;
		goto out;
	}
	for (uint32_t r = 0; r < nrep; r++)
		memcpy(xyz + 3 * (size_t)r, m->xyz + 3 * (size_t)reps[r], 3 * sizeof(*xyz));
	size_t nidx = 3 * m->ntris;
	uint32_t *t = m->tri;
#pragma omp parallel for schedule(static) if (nidx > MESH_PAR_MIN)
	for (size_t i = 0; i < nidx; i++)
		t[i] = newidx[t[i]];
	engi_free(m->xyz);
	m->xyz = xyz;
	m->nverts = nrep;
	xyz = NULL;
	rc = 0;
out:
	engi_free(canon);
	engi_free(newidx);
	engi_free(reps);
	engi_free(next);
	engi_free(tab);
	engi_free(xyz);
	if (rc == ENGI_ENOMEM)
		RAISE(err, ENGI_ENOMEM, "out of memory welding %zu vertices", n);
	return rc;
}

/* ---- analysis ---- */

enum {
	S_AREA2,	 /* twice the area */
	S_VOL6,		 /* six times the signed volume */
	S_M1,		 /* 24 * first moments: 3 slots */
	S_M2 = S_M1 + 3, /* 120 * second moments xx yy zz xy xz yz: 6 slots */
	S_AC = S_M2 + 6, /* 6 * area-weighted face centroid: 3 slots */
	S_N = S_AC + 3,
};

static const int pair_i[6] = {0, 1, 2, 0, 0, 1};
static const int pair_j[6] = {0, 1, 2, 1, 2, 2};

static inline int proper_face(const uint32_t *t)
{
	return t[0] != t[1] && t[1] != t[2] && t[0] != t[2];
}

/* Sums of one block of faces, relative to origin o; counts degenerates. */
static size_t mass_block(const struct engi_mesh *m, const double o[3], size_t f0, size_t f1,
			 double out[S_N])
{
	struct nsum acc[S_N];
	memset(acc, 0, sizeof(acc));
	size_t degenerate = 0;
	for (size_t f = f0; f < f1; f++) {
		const uint32_t *t = m->tri + 3 * f;
		if (!proper_face(t)) {
			degenerate++;
			continue;
		}
		double a[3], b[3], c[3];
		for (int d = 0; d < 3; d++) {
			a[d] = m->xyz[3 * (size_t)t[0] + d] - o[d];
			b[d] = m->xyz[3 * (size_t)t[1] + d] - o[d];
			c[d] = m->xyz[3 * (size_t)t[2] + d] - o[d];
		}
		double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
		double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
		double z[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
		double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
			       u[0] * w[1] - u[1] * w[0]};
		double cross = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		double e2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
		double l = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
		e2 = l > e2 ? l : e2;
		l = z[0] * z[0] + z[1] * z[1] + z[2] * z[2];
		e2 = l > e2 ? l : e2;
		if (cross <= ENGI_MESH_ZERO_AREA_REL * e2)
			degenerate++;
		/* det [a b c] = a . (b x c): six times the signed volume of the
		 * tetrahedron (o, a, b, c). */
		double det = a[0] * (b[1] * c[2] - b[2] * c[1]) +
			     a[1] * (b[2] * c[0] - b[0] * c[2]) +
			     a[2] * (b[0] * c[1] - b[1] * c[0]);
		double s[3] = {a[0] + b[0] + c[0], a[1] + b[1] + c[1], a[2] + b[2] + c[2]};
		nsum_add(&acc[S_AREA2], cross);
		nsum_add(&acc[S_VOL6], det);
		for (int d = 0; d < 3; d++) {
			nsum_add(&acc[S_M1 + d], det * s[d]);
			nsum_add(&acc[S_AC + d], cross * s[d]);
		}
		/* Over a tetrahedron with one vertex at the origin:
		 * int x_i x_j dV = det/120 (sum_k v_ki v_kj + s_i s_j). */
		for (int k = 0; k < 6; k++) {
			int i = pair_i[k], j = pair_j[k];
			double p = a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j];
			nsum_add(&acc[S_M2 + k], det * p);
		}
	}
	for (int k = 0; k < S_N; k++)
		out[k] = nsum_get(&acc[k]);
	return degenerate;
}

static inline uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static inline void uf_union(uint32_t *p, uint32_t a, uint32_t b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a < b)
		p[b] = a;
	else if (b < a)
		p[a] = b;
}

/* Workspace of the topology pass, released together. */
struct topo {
	uint32_t *start;	 /* nverts + 1 bucket starts */
	uint64_t *he;		 /* (other vertex << 32 | half-edge id) per bucket */
	uint32_t *parent;	 /* union-find over faces */
	uint32_t *shell;	 /* root -> shell label */
	uint32_t *vshell;	 /* first shell seen at each vertex */
	size_t *fcount, *vcount; /* per shell */
	uint64_t *extra;	 /* (shell << 32 | vertex) of vertices in several shells */
};

static void topo_release(struct topo *w)
{
	engi_free(w->start);
	engi_free(w->he);
	engi_free(w->parent);
	engi_free(w->shell);
	engi_free(w->vshell);
	engi_free(w->fcount);
	engi_free(w->vcount);
	engi_free(w->extra);
}

static size_t count_duplicates(const struct engi_mesh *m, struct topo *w)
{
	size_t nv = m->nverts, nf = m->ntris;
	uint32_t *start = w->start;
	memset(start, 0, (nv + 1) * sizeof(*start));
	for (size_t f = 0; f < nf; f++) {
		const uint32_t *t = m->tri + 3 * f;
		uint32_t lo = t[0] < t[1] ? t[0] : t[1];
		lo = t[2] < lo ? t[2] : lo;
		start[lo + 1]++;
	}
	for (size_t v = 0; v < nv; v++)
		start[v + 1] += start[v];
	for (size_t f = 0; f < nf; f++) {
		uint32_t s[3] = {m->tri[3 * f], m->tri[3 * f + 1], m->tri[3 * f + 2]};
		uint32_t x;
		if (s[0] > s[1]) {
			x = s[0];
			s[0] = s[1];
			s[1] = x;
		}
		if (s[1] > s[2]) {
			x = s[1];
			s[1] = s[2];
			s[2] = x;
		}
		if (s[0] > s[1]) {
			x = s[0];
			s[0] = s[1];
			s[1] = x;
		}
		w->he[start[s[0]]++] = (uint64_t)s[1] << 32 | s[2];
	}
	/* start[v] now holds the end of bucket v, i.e. the start of v + 1. */
	size_t dups = 0;
#pragma omp parallel for reduction(+ : dups) schedule(dynamic, 4096) if (nv > MESH_PAR_MIN)
	for (size_t v = 0; v < nv; v++) {
		size_t b0 = v ? start[v - 1] : 0, b1 = start[v];
		sort_small_u64(w->he + b0, b1 - b0);
		for (size_t i = b0 + 1; i < b1; i++)
			dups += w->he[i] == w->he[i - 1];
	}
	return dups;
}

/* Files the half-edges of proper faces under their smaller vertex and sorts
 * each bucket. Returns the number of half-edges. */
static size_t build_edges(const struct engi_mesh *m, struct topo *w)
{
	size_t nv = m->nverts, nf = m->ntris;
	uint32_t *start = w->start;
	memset(start, 0, (nv + 1) * sizeof(*start));
	for (size_t f = 0; f < nf; f++) {
		const uint32_t *t = m->tri + 3 * f;
		if (!proper_face(t))
			continue;
		for (int k = 0; k < 3; k++) {
			uint32_t a = t[k], b = t[(k + 1) % 3];
			start[(a < b ? a : b) + 1]++;
		}
	}
	for (size_t v = 0; v < nv; v++)
		start[v + 1] += start[v];
	size_t nhe = start[nv];
	for (size_t f = 0; f < nf; f++) {
		const uint32_t *t = m->tri + 3 * f;
		if (!proper_face(t))
			continue;
		for (int k = 0; k < 3; k++) {
			uint32_t a = t[k], b = t[(k + 1) % 3];
			uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
			w->he[start[lo]++] = (uint64_t)hi << 32 | (uint32_t)(3 * f + (size_t)k);
		}
	}
	for (size_t v = nv; v > 0; v--)
		start[v] = start[v - 1];
	start[0] = 0;
#pragma omp parallel for schedule(dynamic, 4096) if (nv > MESH_PAR_MIN)
	for (size_t v = 0; v < nv; v++)
		sort_small_u64(w->he + start[v], start[v + 1] - start[v]);
	return nhe;
}

/* Walks the edge runs: counts edges by use, unions the faces of each edge. */
static void walk_edges(const struct engi_mesh *m, struct topo *w, struct engi_mesh_report *r)
{
	size_t nv = m->nverts;
	size_t nedges = 0, boundary = 0, nonmanifold = 0, inconsistent = 0;
	const uint32_t *tri = m->tri;
	const uint32_t *start = w->start;
	const uint64_t *he = w->he;
#pragma omp parallel for reduction(+ : nedges, boundary, nonmanifold, inconsistent) \
	schedule(dynamic, 4096) if (nv > MESH_PAR_MIN)
	for (size_t v = 0; v < nv; v++) {
		size_t i = start[v], end = start[v + 1];
		while (i < end) {
			size_t j = i + 1;
			while (j < end && (he[j] >> 32) == (he[i] >> 32))
				j++;
			nedges++;
			size_t uses = j - i;
			if (uses == 1) {
				boundary++;
			} else if (uses > 2) {
				nonmanifold++;
			} else {
				/* Consistent neighbours traverse a shared edge in
				 * opposite directions. */
				uint32_t h0 = (uint32_t)he[i], h1 = (uint32_t)he[i + 1];
				int fwd0 = tri[h0] == v, fwd1 = tri[h1] == v;
				inconsistent += fwd0 == fwd1;
			}
			i = j;
		}
	}
	for (size_t v = 0; v < nv; v++) {
		size_t i = start[v], end = start[v + 1];
		while (i < end) {
			size_t j = i + 1;
			while (j < end && (he[j] >> 32) == (he[i] >> 32)) {
				uf_union(w->parent, (uint32_t)he[i] / 3, (uint32_t)he[j] / 3);
				j++;
			}
			i = j;
		}
	}
	r->nedges = nedges;
	r->boundary_edges = boundary;
	r->nonmanifold_edges = nonmanifold;
	r->inconsistent_edges = inconsistent;
}

/* Labels shells, counts faces and vertices per shell; fills shells, euler
 * and genus. */
static int count_shells(const struct engi_mesh *m, struct topo *w, struct engi_mesh_report *r)
{
	size_t nv = m->nverts, nf = m->ntris;
	size_t nshell = 0, nextra = 0, alloc_extra = 0, nproper = 0, vref = 0;
	for (size_t f = 0; f < nf; f++)
		w->shell[f] = NONE;
	for (size_t v = 0; v < nv; v++)
		w->vshell[v] = NONE;
	for (size_t f = 0; f < nf; f++) {
		const uint32_t *t = m->tri + 3 * f;
		if (!proper_face(t))
			continue;
		nproper++;
		uint32_t root = uf_find(w->parent, (uint32_t)f);
		if (w->shell[root] == NONE)
			w->shell[root] = (uint32_t)nshell++;
		uint32_t s = w->shell[root];
		w->fcount[s]++;
		for (int k = 0; k < 3; k++) {
			uint32_t v = t[k];
			if (w->vshell[v] == NONE) {
				w->vshell[v] = s;
				w->vcount[s]++;
				vref++;
			} else if (w->vshell[v] != s) {
				if (nextra == alloc_extra) {
					size_t na = alloc_extra ? 2 * alloc_extra : 64;
					uint64_t *p = engi_reallocarray(w->extra, na, sizeof(*p));
					if (!p)
						return ENGI_ENOMEM;
					w->extra = p;
					alloc_extra = na;
				}
				w->extra[nextra++] = (uint64_t)s << 32 | v;
			}
		}
	}
	sort_small_u64(w->extra, nextra);
	for (size_t i = 0; i < nextra; i++)
		if (i == 0 || w->extra[i] != w->extra[i - 1])
			w->vcount[w->extra[i] >> 32]++;
	r->shells = nshell;
	r->euler = (long)vref - (long)r->nedges + (long)nproper;
	r->watertight = nproper > 0 && r->boundary_edges == 0 && r->nonmanifold_edges == 0;
	r->genus = -1;
	if (r->watertight) {
		/* Closed 2-manifold shells: every edge has two uses, E = 3F/2. */
		long genus = 0;
		for (size_t s = 0; s < nshell; s++) {
			long f = (long)w->fcount[s], e = 3 * f / 2;
			long chi = (long)w->vcount[s] - e + f;
			genus += (2 - chi) / 2;
		}
		r->genus = genus;
	}
	return 0;
}

static int analyze_topology(const struct engi_mesh *m, struct engi_mesh_report *r)
{
	size_t nv = m->nverts, nf = m->ntris;
	struct topo w;
	memset(&w, 0, sizeof(w));
	w.start = engi_malloc((nv + 1) * sizeof(*w.start));
	w.he = engi_malloc((3 * nf + 1) * sizeof(*w.he));
	w.parent = engi_malloc((nf + 1) * sizeof(*w.parent));
	w.shell = engi_malloc((nf + 1) * sizeof(*w.shell));
	w.vshell = engi_malloc((nv + 1) * sizeof(*w.vshell));
	w.fcount = engi_calloc(nf + 1, sizeof(*w.fcount));
	w.vcount = engi_calloc(nf + 1, sizeof(*w.vcount));
	if (!w.start || !w.he || !w.parent || !w.shell || !w.vshell || !w.fcount || !w.vcount) {
		topo_release(&w);
		return ENGI_ENOMEM;
	}
	r->duplicate_faces = count_duplicates(m, &w);
	for (size_t f = 0; f < nf; f++)
		w.parent[f] = (uint32_t)f;
	build_edges(m, &w);
	walk_edges(m, &w, r);
	int rc = count_shells(m, &w, r);
	topo_release(&w);
	return rc;
}

int engi_sym3_eigenvalues(const double a_in[9], double w[3])
{
	double a[9];
	memcpy(a, a_in, sizeof(a));
	return LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', 3, a, 3, w) != 0 ? ENGI_EINVALID : 0;
}

int engi_sym3_eigen(const double a[9], double w[3], double v[9])
{
	memcpy(v, a, 9 * sizeof(*v));
	return LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', 3, v, 3, w) != 0 ? ENGI_EINVALID : 0;
}

static int principal_moments(const double s[6], double out[3])
{
	/* Inertia tensor from second moments: I_xx = int y^2 + z^2,
	 * I_xy = -int xy, ... */
	double a[9] = {s[1] + s[2], -s[3], -s[4], -s[3],      s[0] + s[2],
		       -s[5],	    -s[4], -s[5], s[0] + s[1]};
	return engi_sym3_eigenvalues(a, out);
}

int engi_mesh_analyze(const struct engi_mesh *m, struct engi_mesh_report *r, struct engi_error *err)
{
	memset(r, 0, sizeof(*r));
	r->genus = -1;
	TRY(check_mesh(m, err));
	size_t nv = m->nverts, nf = m->ntris;
	r->nverts = nv;
	r->ntris = nf;

	/* Bounding box over referenced vertices. */
	unsigned char *used = engi_calloc(nv + 1, 1);
	if (!used)
		RAISE(err, ENGI_ENOMEM, "out of memory analysing a mesh of %zu triangles", nf);
	for (size_t i = 0; i < 3 * nf; i++)
		used[m->tri[i]] = 1;
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	double lo0 = lo[0], lo1 = lo[1], lo2 = lo[2], hi0 = hi[0], hi1 = hi[1], hi2 = hi[2];
	const double *x = m->xyz;
#pragma omp parallel for reduction(min                                                             \
				   : lo0, lo1, lo2) reduction(max                                  \
							      : hi0, hi1, hi2)                     \
    schedule(static) if (nv > MESH_PAR_MIN)
	for (size_t v = 0; v < nv; v++) {
		if (!used[v])
			continue;
		lo0 = fmin(lo0, x[3 * v]);
		lo1 = fmin(lo1, x[3 * v + 1]);
		lo2 = fmin(lo2, x[3 * v + 2]);
		hi0 = fmax(hi0, x[3 * v]);
		hi1 = fmax(hi1, x[3 * v + 1]);
		hi2 = fmax(hi2, x[3 * v + 2]);
	}
	engi_free(used);
	if (nf == 0)
		return 0;
	double bmin[3] = {lo0, lo1, lo2}, bmax[3] = {hi0, hi1, hi2};
	double o[3], diag2 = 0;
	for (int d = 0; d < 3; d++) {
		r->bbox_min[d] = bmin[d];
		r->bbox_max[d] = bmax[d];
		o[d] = 0.5 * (bmin[d] + bmax[d]);
		diag2 += (bmax[d] - bmin[d]) * (bmax[d] - bmin[d]);
	}

	/* Mass properties: fixed blocks, partial sums added in block order. */
	size_t nblocks = (nf + BLOCK_FACES - 1) / BLOCK_FACES;
	double *part = engi_malloc(nblocks * S_N * sizeof(*part));
	if (!part)
		RAISE(err, ENGI_ENOMEM, "out of memory analysing a mesh of %zu triangles", nf);
	size_t degenerate = 0;
#pragma omp parallel for reduction(+ : degenerate) schedule(static) if (nf > MESH_PAR_MIN)
	for (size_t b = 0; b < nblocks; b++) {
		size_t f1 = (b + 1) * BLOCK_FACES;
		degenerate += mass_block(m, o, b * BLOCK_FACES, f1 < nf ? f1 : nf, part + b * S_N);
	}
	struct nsum tot[S_N];
	memset(tot, 0, sizeof(tot));
	for (size_t b = 0; b < nblocks; b++)
		for (int k = 0; k < S_N; k++)
			nsum_add(&tot[k], part[b * S_N + k]);
	engi_free(part);
	double sum[S_N];
	for (int k = 0; k < S_N; k++)
		sum[k] = nsum_get(&tot[k]);
	r->degenerate_faces = degenerate;
	r->area = sum[S_AREA2] / 2;
	double vol = sum[S_VOL6] / 6;
	r->volume = vol;
	double diag3 = diag2 * sqrt(diag2);
	if (fabs(vol) > ENGI_MESH_ZERO_VOLUME_REL * diag3) {
		double d[3], sgn = vol > 0 ? 1 : -1;
		for (int k = 0; k < 3; k++) {
			d[k] = sum[S_M1 + k] / 24 / vol;
			r->centroid[k] = o[k] + d[k];
		}
		/* Parallel-axis shift to the centroid; an inside-out solid has the
		 * same moments as the right way round. */
		for (int k = 0; k < 6; k++)
			r->second_moment[k] =
			    sgn * (sum[S_M2 + k] / 120 - vol * d[pair_i[k]] * d[pair_j[k]]);
		if (principal_moments(r->second_moment, r->principal) < 0)
			RAISE(err, ENGI_EINVALID,
			      "eigenvalues of the inertia tensor did not converge");
	} else if (sum[S_AREA2] > 0) {
		for (int k = 0; k < 3; k++)
			r->centroid[k] = o[k] + sum[S_AC + k] / 3 / sum[S_AREA2];
	} else {
		for (int k = 0; k < 3; k++)
			r->centroid[k] = o[k];
	}

	if (analyze_topology(m, r) < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory analysing a mesh of %zu triangles", nf);
	r->oriented =
	    r->watertight && r->inconsistent_edges == 0 && vol > ENGI_MESH_ZERO_VOLUME_REL * diag3;
	return 0;
}
