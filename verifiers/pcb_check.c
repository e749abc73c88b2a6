/*
 * pcb_check.c - the validator's spec-consistency checks (freecad-validator
 * 0.6.0, its generic checks; engi/pcb_spec.h): each key parameter is
 * routed by the tokens of its key to one of ten checks, which gathers its
 * candidates from the measurement bank and calls the parameter consistent
 * when the closest is within 1 % (counts: equal; positions: within 1 % of
 * the principal-axes box's diagonal). Strings are never found. The score
 * spends a failure budget of 10.
 */
#include "engi/pcb_spec.h"

#include "engi/alloc.h"
#include "engi/vec3.h"

#include <math.h>
#include <string.h>

#define TOL_SCALAR 0.01
#define TOL_POS	   0.01

/* 1 when tok is one of the "_"-separated tokens of key. */
static int has(const char *key, const char *tok)
{
	size_t tl = strlen(tok);
	for (const char *s = key;;) {
		const char *e = strchr(s, '_');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == tl && !memcmp(s, tok, tl))
			return 1;
		if (!e)
			return 0;
		s = e + 1;
	}
}

/* 1 when one of the NULL-terminated toks is a token of key. */
static int has_any(const char *key, const char *const *toks)
{
	for (; *toks; toks++)
		if (has(key, *toks))
			return 1;
	return 0;
}

#define ANY(key, ...) has_any((key), (const char *const[]){__VA_ARGS__, NULL})

static int route(const char *k)
{
	if (ANY(k, "num", "number", "count", "rows", "cols", "columns", "teeth") &&
	    !ANY(k, "angle", "depth", "diameter", "distance", "height", "length", "offset", "pitch",
		 "radius", "size", "spacing", "thickness", "width"))
		return ENGI_PCB_C_COUNT;
	if (has(k, "volume"))
		return ENGI_PCB_C_VOLUME;
	if (has(k, "area"))
		return ENGI_PCB_C_AREA;
	if (ANY(k, "diameter", "dia", "pcd"))
		return ENGI_PCB_C_DIAMETER;
	if (has(k, "radius"))
		return ENGI_PCB_C_RADIUS;
	if (ANY(k, "thickness", "wall", "material"))
		return ENGI_PCB_C_THICKNESS;
	if (ANY(k, "distance", "spacing", "pitch"))
		return ENGI_PCB_C_DISTANCE;
	if (ANY(k, "center", "centre", "position", "corner", "origin"))
		return ENGI_PCB_C_VECTOR;
	if (ANY(k, "angle", "taper"))
		return ENGI_PCB_C_ANGLE;
	if (ANY(k, "length", "height", "depth", "width", "rise", "run", "riser", "clearance", "gap",
		"span", "size", "offset", "plane"))
		return ENGI_PCB_C_LENGTH;
	return ENGI_PCB_C_NONE;
}

const char *engi_pcb_check_name(int check)
{
	static const char *const names[] = {"count",  "volume",	   "area",     "diameter",
					    "radius", "thickness", "distance", "vector",
					    "angle",  "length",	   "none"};
	return check >= 0 && check <= ENGI_PCB_C_NONE ? names[check] : "none";
}

/* ---- candidates ---- */

struct cands {
	double *v;
	size_t n, cap;
	int nomem;
};

static void add(struct cands *c, double x)
{
	if (c->nomem)
		return;
	if (engi_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v))) {
		c->nomem = 1;
		return;
	}
	c->v[c->n++] = x;
}

static const struct engi_pcb_prop *fprops(const struct engi_pcb_bank *b, size_t f, size_t *n)
{
	*n = b->feature[f].nprops;
	return *n ? b->prop + b->feature[f].prop : NULL; /* no values: maybe no array */
}

static int named(const struct engi_pcb_prop *p, const char *name)
{
	return p->kind == ENGI_PCB_P_NAMED && !strcmp(p->name, name);
}

static void length_cands(const char *k, const struct engi_pcb_bank *b, struct cands *c)
{
	/* the properties wanted (a name twice is one candidate: the loop
	 * below stops at the first) */
	const char *want[9];
	int nw = 0;
	if (ANY(k, "length", "run", "span", "height", "rise", "riser", "depth"))
		want[nw++] = "Length", want[nw++] = "Length2";
	if (ANY(k, "height", "rise", "riser"))
		want[nw++] = "Height";
	if (has(k, "depth"))
		want[nw++] = "Depth";
	if (has(k, "width"))
		want[nw++] = "Width";
	if (has(k, "size"))
		want[nw++] = "Size";
	for (size_t f = 0; f < b->nfeatures; f++) {
		size_t n;
		const struct engi_pcb_prop *p = fprops(b, f, &n);
		for (size_t i = 0; i < n; i++)
			for (int w = 0; w < nw; w++)
				if (named(&p[i], want[w])) {
					add(c, p[i].value);
					break;
				}
	}
	if (ANY(k, "length", "height", "depth", "span", "rise", "riser"))
		for (size_t i = 0; i < b->nclusters; i++)
			if (b->cluster[i].axial_extent > 0)
				add(c, b->cluster[i].axial_extent);
	if (b->has_aabb &&
	    ANY(k, "length", "height", "depth", "width", "span", "size", "rise", "run", "riser"))
		for (int d = 0; d < 3; d++)
			add(c, b->aabb_sorted[d]);
	if (ANY(k, "clearance", "gap", "span", "offset"))
		for (size_t i = 0; i < b->npairs; i++)
			add(c, b->pair[i].offset);
	if (b->has_aabb && has(k, "plane")) {
		for (int d = 0; d < 3; d++)
			add(c, fabs(b->aabb_min[d]));
		for (int d = 0; d < 3; d++)
			add(c, fabs(b->aabb_max[d]));
	}
	if (has(k, "offset")) {
		int any_axis = ANY(k, "x", "y", "z");
		static const char *const ax[] = {"x", "y", "z"};
		for (size_t i = 0; i < b->nclusters; i++)
			for (size_t j = 0; j < b->cluster[i].count; j++)
				for (int d = 0; d < 3; d++)
					if (!any_axis || has(k, ax[d]))
						add(c, fabs(b->cluster[i].centroids[j][d]));
	}
}

static void radius_cands(const struct engi_pcb_bank *b, struct cands *c)
{
	static const char *const names[] = {"Radius", "Radius1", "Radius2", "MajorRadius",
					    "MinorRadius"};
	for (size_t f = 0; f < b->nfeatures; f++) {
		size_t n;
		const struct engi_pcb_prop *p = fprops(b, f, &n);
		for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
			for (size_t i = 0; i < n; i++)
				if (named(&p[i], names[k]))
					add(c, p[i].value);
		for (size_t i = 0; i < n; i++) {
			if (p[i].kind == ENGI_PCB_P_CIRCLE || p[i].kind == ENGI_PCB_P_ARC)
				add(c, p[i].value); /* CircleRadius */
			if (p[i].kind == ENGI_PCB_P_ARC)
				add(c, p[i].value); /* ArcRadius */
		}
	}
	for (size_t i = 0; i < b->nclusters; i++)
		add(c, b->cluster[i].radius);
	for (size_t i = 0; i < b->ncirculars; i++)
		add(c, b->circular[i].radius);
	for (size_t i = 0; i < b->ncones; i++)
		add(c, b->cone[i].radius_min);
	for (size_t i = 0; i < b->ncones; i++)
		add(c, b->cone[i].radius_max);
}

static int coaxial(const struct engi_pcb_cluster *a, const struct engi_pcb_cluster *b)
{
	if (fabs(engi_dot3(a->axis, b->axis)) < 0.999 || !a->count || !b->count)
		return 0;
	double l = sqrt(engi_dot3(a->axis, a->axis));
	if (!(l > 1e-12))
		return 0;
	double u[3] = {a->axis[0] / l, a->axis[1] / l, a->axis[2] / l};
	for (size_t i = 0; i < a->count; i++)
		for (size_t j = 0; j < b->count; j++) {
			double v[3] = {a->centroids[i][0] - b->centroids[j][0],
				       a->centroids[i][1] - b->centroids[j][1],
				       a->centroids[i][2] - b->centroids[j][2]};
			double along = engi_dot3(v, u);
			if (engi_dot3(v, v) - along * along <= 1e-6)
				return 1;
		}
	return 0;
}

static void thickness_cands(const char *k, const struct engi_pcb_bank *b, struct cands *c)
{
	for (size_t i = 0; i < b->npairs; i++)
		add(c, b->pair[i].offset);
	if (has(k, "shaft") && has(k, "material") && has(k, "thickness")) {
		double L = 0;
		for (size_t i = 0; i < b->nclusters; i++)
			L = fmax(L, b->cluster[i].axial_extent);
		for (size_t i = 0; i < b->nclusters; i++) {
			const struct engi_pcb_cluster *ci = &b->cluster[i];
			if (!(L > 0) || ci->axial_extent < 0.8 * L)
				continue;
			for (size_t j = i + 1; j < b->nclusters; j++) {
				const struct engi_pcb_cluster *cj = &b->cluster[j];
				if (cj->axial_extent < 0.8 * L || !coaxial(ci, cj))
					continue;
				double t = fabs(cj->radius - ci->radius);
				if (t > 0)
					add(c, t);
			}
		}
	}
	/* radial walls: each hole's nearest larger coaxial boss (by radius) */
	size_t nconvex = 0;
	for (size_t i = 0; i < b->nclusters; i++)
		nconvex += b->cluster[i].convex != 0;
	if (!nconvex)
		return;
	const struct engi_pcb_cluster **cx = engi_malloc(nconvex * sizeof(*cx));
	if (!cx) {
		c->nomem = 1;
		return;
	}
	size_t m = 0;
	for (size_t i = 0; i < b->nclusters; i++)
		if (b->cluster[i].convex) {
			/* insertion keeps the sort stable */
			size_t j = m++;
			while (j > 0 && cx[j - 1]->radius > b->cluster[i].radius) {
				cx[j] = cx[j - 1];
				j--;
			}
			cx[j] = &b->cluster[i];
		}
	for (size_t i = 0; i < b->nclusters; i++) {
		const struct engi_pcb_cluster *in = &b->cluster[i];
		if (in->convex)
			continue;
		for (size_t j = 0; j < m; j++)
			if (cx[j]->radius > in->radius && coaxial(in, cx[j])) {
				add(c, cx[j]->radius - in->radius);
				break;
			}
	}
	engi_free(cx);
}

static void angle_cands(const struct engi_pcb_bank *b, struct cands *c)
{
	for (size_t f = 0; f < b->nfeatures; f++) {
		size_t n;
		const struct engi_pcb_prop *p = fprops(b, f, &n);
		for (size_t i = 0; i < n; i++)
			if ((p[i].kind == ENGI_PCB_P_NAMED && strstr(p[i].name, "Angle")) ||
			    p[i].kind == ENGI_PCB_P_ANGLE)
				add(c, p[i].value);
	}
	for (size_t i = 0; i < b->nline_angles; i++)
		add(c, b->line_angle[i]);
}

static void scalar_cands(int check, const char *k, const struct engi_pcb_bank *b, struct cands *c)
{
	switch (check) {
	case ENGI_PCB_C_VOLUME:
		add(c, b->volume);
		break;
	case ENGI_PCB_C_AREA:
		add(c, b->area);
		break;
	case ENGI_PCB_C_DIAMETER: {
		struct cands r = {0};
		radius_cands(b, &r);
		for (size_t i = 0; i < r.n; i++)
			add(c, 2 * r.v[i]);
		c->nomem |= r.nomem;
		engi_free(r.v);
		if (has(k, "pcd"))
			for (size_t i = 0; i < b->ncirculars; i++)
				add(c, 2 * b->circular[i].radius);
		break;
	}
	case ENGI_PCB_C_RADIUS:
		radius_cands(b, c);
		break;
	case ENGI_PCB_C_THICKNESS:
		thickness_cands(k, b, c);
		break;
	case ENGI_PCB_C_DISTANCE:
		for (size_t i = 0; i < b->ngrids; i++) {
			if (b->grid[i].spacing_rows > 0)
				add(c, b->grid[i].spacing_rows);
			if (b->grid[i].spacing_cols > 0)
				add(c, b->grid[i].spacing_cols);
		}
		for (size_t i = 0; i < b->npairs; i++)
			add(c, b->pair[i].offset);
		break;
	case ENGI_PCB_C_ANGLE:
		angle_cands(b, c);
		break;
	default: /* ENGI_PCB_C_LENGTH */
		length_cands(k, b, c);
		break;
	}
}

static void count_cands(const char *k, const struct engi_pcb_bank *b, struct cands *c)
{
#define CIRCULAR_NOUNS                                                                             \
	"bore", "bores", "boss", "bosses", "cylinder", "cylinders", "hole", "holes", "pin",        \
	    "pins", "post", "posts", "stud", "studs", "tube", "tubes"
#define REPEATED_NOUNS                                                                             \
	"blade", "blades", "lobe", "lobes", "rib", "ribs", "spline", "splines", "teeth", "tooth",  \
	    "vane", "vanes"
	if (ANY(k, CIRCULAR_NOUNS)) {
		for (size_t i = 0; i < b->nclusters; i++)
			add(c, (double)b->cluster[i].count);
		for (size_t f = 0; f < b->nfeatures; f++) {
			size_t n, circles = 0;
			const struct engi_pcb_prop *p = fprops(b, f, &n);
			for (size_t i = 0; i < n; i++)
				circles +=
				    p[i].kind == ENGI_PCB_P_CIRCLE || p[i].kind == ENGI_PCB_P_ARC;
			if (circles)
				add(c, (double)circles);
		}
		for (size_t i = 0; i < b->ngrids; i++)
			add(c, (double)b->grid[i].count);
	} else if (ANY(k, REPEATED_NOUNS)) {
		for (size_t i = 0; i < b->nclusters; i++)
			if (b->cluster[i].count > 1)
				add(c, (double)b->cluster[i].count);
	}
	if (ANY(k, CIRCULAR_NOUNS, REPEATED_NOUNS, "pattern", "patterns"))
		for (size_t i = 0; i < b->ncirculars; i++)
			add(c, (double)b->circular[i].count);
	for (size_t f = 0; f < b->nfeatures; f++) {
		size_t n;
		const struct engi_pcb_prop *p = fprops(b, f, &n);
		for (size_t i = 0; i < n; i++)
			if (named(&p[i], "Occurrences"))
				add(c, p[i].value);
	}
	for (size_t f = 0; f < b->nfeatures; f++) {
		size_t n = b->feature[f].nlines;
		if (!b->feature[f].sketch)
			continue;
		if (ANY(k, "rectangle", "rectangles", "rung", "rungs", "slot", "slots", "keyway") &&
		    n >= 8 && n <= 200 && n % 4 == 0)
			add(c, (double)(n / 4));
		if (ANY(k, "step", "steps", "tier", "tiers", "riser", "risers") && n >= 6 &&
		    n <= 200 && n % 2 == 0)
			add(c, (double)((n - 2) / 2));
		if (ANY(k, "spline", "splines", "teeth", "tooth") && n >= 12 && n <= 400 &&
		    n % 2 == 0)
			add(c, (double)(n / 2));
	}
#undef CIRCULAR_NOUNS
#undef REPEATED_NOUNS
}

/* ---- the checks ---- */

static double rel_err(double a, double b)
{
	return fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-9);
}

/* Python's int() of a finite double, as a comparable integer (values past
 * the range of long long compare as unequal to any spec). */
static int to_int(double x, long long *out)
{
	if (!isfinite(x) || fabs(x) >= 9.2e18)
		return 0;
	*out = (long long)x;
	return 1;
}

static void check_count(const struct engi_pcb_param *p, const struct engi_pcb_bank *b,
			struct engi_pcb_finding *f, struct cands *c)
{
	double v = p->kind == ENGI_PCB_COUNT	? (double)p->count
		   : p->kind == ENGI_PCB_SCALAR ? p->value
						: NAN;
	if (!isfinite(v) || v != floor(v) || fabs(v) >= 9.2e18) {
		f->state = ENGI_PCB_INCONSISTENT;
		f->rel = 1.0;
		return;
	}
	long long s = (long long)v;
	const char *k = p->key;
	if (ANY(k, "rows", "cols", "columns")) {
		for (size_t i = 0; i < b->ngrids; i++) {
			if (has(k, "rows"))
				add(c, (double)b->grid[i].rows);
			if (ANY(k, "cols", "columns"))
				add(c, (double)b->grid[i].cols);
		}
	} else {
		count_cands(k, b, c);
	}
	if (!c->n) {
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "no measurement available";
		return;
	}
	long long best = 0;
	int have = 0;
	unsigned long long bd = 0;
	for (size_t i = 0; i < c->n; i++) {
		long long m;
		if (!to_int(c->v[i], &m))
			continue;
		if (m == s) {
			f->state = ENGI_PCB_CONSISTENT;
			f->has_measured = 1;
			f->measured[0] = (double)m;
			f->rel = 0;
			return;
		}
		unsigned long long d = m > s ? (unsigned long long)m - (unsigned long long)s
					     : (unsigned long long)s - (unsigned long long)m;
		if (!have || d < bd)
			have = 1, bd = d, best = m;
	}
	f->state = ENGI_PCB_INCONSISTENT;
	if (have) {
		f->has_measured = 1;
		f->measured[0] = (double)best;
		f->rel = (double)bd / fmax(1.0, (double)s);
	} else {
		f->rel = 1.0;
	}
}

static void check_vector(const struct engi_pcb_param *p, const struct engi_pcb_bank *b,
			 struct engi_pcb_finding *f, struct cands *c)
{
	if (p->kind != ENGI_PCB_VECTOR) {
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "expected a tuple";
		return;
	}
	if (p->nvec != 2 && p->nvec != 3) {
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "expected 2 or 3 components";
		return;
	}
	/* candidates as triples in c */
	if (ANY(p->key, "corner", "origin")) {
		if (b->has_aabb) {
			for (int d = 0; d < 3; d++)
				add(c, b->aabb_min[d]);
			for (int d = 0; d < 3; d++)
				add(c, b->aabb_max[d]);
		}
	} else {
		for (size_t i = 0; i < b->ngrids; i++)
			for (int d = 0; d < 3; d++)
				add(c, b->grid[i].origin[d]);
		for (size_t i = 0; i < b->nclusters; i++)
			for (size_t j = 0; j < b->cluster[i].count; j++)
				for (int d = 0; d < 3; d++)
					add(c, b->cluster[i].centroids[j][d] - b->centroid[d]);
	}
	if (!c->n) {
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "no measurement available";
		return;
	}
	double best = INFINITY;
	size_t bi = 0;
	for (size_t i = 0; i + 3 <= c->n; i += 3) {
		double s = 0;
		for (int d = 0; d < p->nvec; d++)
			s += (p->vec[d] - c->v[i + d]) * (p->vec[d] - c->v[i + d]);
		double dist = sqrt(s);
		if (i == 0 || dist < best)
			best = dist, bi = i;
	}
	double diag =
	    sqrt(b->obb_sorted[0] * b->obb_sorted[0] + b->obb_sorted[1] * b->obb_sorted[1] +
		 b->obb_sorted[2] * b->obb_sorted[2]);
	f->has_measured = 1;
	for (int d = 0; d < 3; d++)
		f->measured[d] = c->v[bi + d];
	f->rel = best / fmax(diag, 1e-9);
	f->state = best <= TOL_POS * diag ? ENGI_PCB_CONSISTENT : ENGI_PCB_INCONSISTENT;
}

/* The default check: the closest candidate within 1 %. */
static void check_scalar(const struct engi_pcb_param *p, const struct engi_pcb_bank *b,
			 struct engi_pcb_finding *f, struct cands *c,
			 struct engi_pcb_spec_result *out)
{
	scalar_cands(f->check, p->key, b, c);
	if (p->kind == ENGI_PCB_VECTOR && (f->check == ENGI_PCB_C_ANGLE || c->n)) {
		/* float() of the tuple: the validator raises */
		out->raises = "a parenthesised value given to a key of a single measure";
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "the validator raises on a vector here";
		return;
	}
	if (!c->n) {
		f->state = ENGI_PCB_NOT_FOUND;
		f->reason = "no measurement available";
		return;
	}
	double v = p->kind == ENGI_PCB_COUNT ? (double)p->count : p->value;
	double best = 0, bv = 0;
	for (size_t i = 0; i < c->n; i++) {
		double e = rel_err(v, c->v[i]);
		if (i == 0 || e < best)
			best = e, bv = c->v[i];
	}
	f->has_measured = 1;
	f->measured[0] = bv;
	f->rel = best;
	f->state = best <= TOL_SCALAR ? ENGI_PCB_CONSISTENT : ENGI_PCB_INCONSISTENT;
}

int engi_pcb_spec_check(const struct engi_pcb_spec *spec, const struct engi_pcb_bank *bank,
			struct engi_pcb_spec_result *out, struct engi_error *err)
{
	memset(out, 0, sizeof(*out));
	if (spec->n) {
		out->f = engi_calloc(spec->n, sizeof(*out->f));
		if (!out->f)
			RAISE(err, ENGI_ENOMEM, "no memory to check %zu parameters", spec->n);
	}
	static const int order[] = {ENGI_PCB_SCALAR, ENGI_PCB_VECTOR, ENGI_PCB_COUNT,
				    ENGI_PCB_STRING};
	for (int o = 0; o < 4; o++)
		for (size_t i = 0; i < spec->n; i++) {
			const struct engi_pcb_param *p = &spec->p[i];
			if (p->kind != order[o])
				continue;
			struct engi_pcb_finding *f = &out->f[out->n++];
			f->param = p;
			f->check = p->kind == ENGI_PCB_STRING ? ENGI_PCB_C_NONE : route(p->key);
			struct cands c = {0};
			if (!bank) {
				f->state = ENGI_PCB_NOT_FOUND;
				f->reason = "no parametric solid to measure";
			} else if (p->kind == ENGI_PCB_STRING) {
				f->state = ENGI_PCB_NOT_FOUND;
				f->reason = "no generic CAD string measurement available";
			} else if (f->check == ENGI_PCB_C_NONE) {
				f->state = ENGI_PCB_NOT_FOUND;
				f->reason = "unknown property kind";
			} else if (f->check == ENGI_PCB_C_COUNT) {
				check_count(p, bank, f, &c);
			} else if (f->check == ENGI_PCB_C_VECTOR) {
				check_vector(p, bank, f, &c);
			} else {
				check_scalar(p, bank, f, &c, out);
			}
			int nomem = c.nomem;
			engi_free(c.v);
			if (nomem) {
				engi_pcb_spec_result_release(out);
				RAISE(err, ENGI_ENOMEM, "no memory for the candidates of '%s'",
				      p->key);
			}
			out->consistent += f->state == ENGI_PCB_CONSISTENT;
			out->inconsistent += f->state == ENGI_PCB_INCONSISTENT;
			out->not_found += f->state == ENGI_PCB_NOT_FOUND;
		}
	return 0;
}

void engi_pcb_spec_result_release(struct engi_pcb_spec_result *r)
{
	engi_free(r->f);
	memset(r, 0, sizeof(*r));
}

double engi_pcb_spec_score(size_t total, size_t failures, int budget)
{
	if (total == 0)
		return 0;
	size_t den = budget > 0 && (size_t)budget < total ? (size_t)budget : total;
	double s = 1.0 - (double)failures / (double)den;
	return s > 0 ? s : 0;
}
