/*
 * Verifier kind "mesh": validity, topology and mass properties of a
 * delivered STL (tasks/SCHEMA.md, "Kind mesh"). Self-intersections are
 * counted by the mesh kernel's exact test, only when a criterion asks.
 */
#include "engi/mesh.h"
#include "engi/verify.h"

#include "engi/alloc.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MESH_WELD_TOL_DEFAULT 1e-6
#define MESH_MAX_TRIS	      ((size_t)20 * 1000 * 1000)
#define POINTER_MAX	      ENGI_POINTER_MAX
/* intersecting face pairs named in a self_intersections detail */
#define MESH_SELFX_SHOWN 3

enum mesh_check {
	CHECK_WATERTIGHT,
	CHECK_ORIENTED,
	CHECK_SHELLS,
	CHECK_GENUS,
	CHECK_VOLUME,
	CHECK_AREA,
	CHECK_BBOX_SPAN,
	CHECK_SECTION_INERTIA,
	CHECK_SELF_INTERSECTIONS,
};

static const char *const check_names[] = {
    "watertight",      "oriented",	     "shells", "genus", "volume", "area", "bbox_span",
    "section_inertia", "self_intersections", NULL,
};

static const char *const check_stages[] = {
    "validity", "validity", "validity",	   "topology", "geometry",
    "geometry", "geometry", "performance", "validity",
};

#define ANY_CMP	 (ENGI_CMP_EQUALS | ENGI_CMP_VALUE | ENGI_CMP_RANGE)
#define REAL_CMP (ENGI_CMP_VALUE | ENGI_CMP_RANGE)

/* self_intersections takes max alone (parse_selfx_limit) */
static const unsigned check_cmps[] = {
    ENGI_CMP_NONE, ENGI_CMP_NONE, ANY_CMP,  ANY_CMP,	    REAL_CMP,
    REAL_CMP,	   REAL_CMP,	  REAL_CMP, ENGI_CMP_RANGE,
};

static const char *const axis_names[] = {"x", "y", "z", NULL};

struct mesh_criterion {
	struct engi_criterion c;
	int check;
	int axis;      /* bbox_span */
	int beam_axis; /* section_inertia */
	int about;     /* section_inertia */
};

struct mesh_criteria {
	double weld_tol;
	size_t n;
	struct mesh_criterion v[];
};

static int parse_axes(json_t *item, const char *file, const char *ptr, struct mesh_criterion *mc,
		      struct engi_error *err)
{
	char p[POINTER_MAX];
	static const struct {
		const char *key;
		int for_check;
	} fields[] = {
	    {"axis", CHECK_BBOX_SPAN},
	    {"beam_axis", CHECK_SECTION_INERTIA},
	    {"about", CHECK_SECTION_INERTIA},
	};
	int *dst[] = {&mc->axis, &mc->beam_axis, &mc->about};
	for (int i = 0; i < 3; i++) {
		int wanted = fields[i].for_check == mc->check;
		if (!wanted && json_object_get(item, fields[i].key)) {
			engi_json_pointer(p, sizeof(p), ptr, fields[i].key);
			return engi_parse_error(err, file, p, "only applies to check '%s'",
						check_names[fields[i].for_check]);
		}
		if (wanted)
			TRY(engi_json_choice(item, fields[i].key, axis_names, "axis", 1, file, ptr,
					     dst[i], err));
	}
	if (mc->check == CHECK_SECTION_INERTIA && mc->about == mc->beam_axis) {
		engi_json_pointer(p, sizeof(p), ptr, "about");
		return engi_parse_error(err, file, p, "must differ from beam_axis ('%s')",
					axis_names[mc->beam_axis]);
	}
	return 0;
}

/* The one comparator of self_intersections: max, the intersecting face
 * pairs allowed, an integer of at least 0; without it the limit is 0. */
static int parse_selfx_limit(json_t *item, const char *file, const char *ptr,
			     struct engi_error *err)
{
	static const char *const others[] = {"equals", "value", "tol_rel", "tol_abs", "min", NULL};
	char p[POINTER_MAX];
	for (const char *const *k = others; *k; k++) {
		if (!json_object_get(item, *k))
			continue;
		engi_json_pointer(p, sizeof(p), ptr, *k);
		return engi_parse_error(err, file, p,
					"check 'self_intersections' takes only max (the "
					"intersecting face pairs allowed, default 0)");
	}
	json_t *j = json_object_get(item, "max");
	if (!j)
		return 0;
	engi_json_pointer(p, sizeof(p), ptr, "max");
	if (!json_is_integer(j))
		return engi_parse_error(err, file, p, "expected an integer, found %s",
					engi_json_kind(j));
	if (json_integer_value(j) < 0)
		return engi_parse_error(err, file, p, "must be at least 0");
	return 0;
}

static void mesh_free(void *criteria)
{
	engi_free(criteria);
}

static int mesh_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		      void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind",	"file",	  "weld_tol", "criteria",
					   "objective", "reward", NULL};
	static const char *const item_keys[] = {
	    "name", "check", "equals",	  "value", "tol_rel",  "tol_abs", "min",
	    "max",  "axis",  "beam_axis", "about", "required", "stage",	  NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	double weld_tol = MESH_WELD_TOL_DEFAULT;
	int present;
	TRY(engi_json_number(ver, "weld_tol", file, pointer, &present, &weld_tol, err));
	if (present && weld_tol < 0) {
		char p[POINTER_MAX];
		engi_json_pointer(p, sizeof(p), pointer, "weld_tol");
		return engi_parse_error(err, file, p, "must be at least 0");
	}
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct mesh_criteria *mc = engi_calloc(1, sizeof(*mc) + n * sizeof(struct mesh_criterion));
	if (!mc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	mc->weld_tol = weld_tol;
	mc->n = n;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *item = json_array_get(arr, i);
		struct mesh_criterion *c = &mc->v[i];
		char ptr[POINTER_MAX], what[64];
		char base[POINTER_MAX];
		engi_json_pointer(base, sizeof(base), pointer, "criteria");
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		rc = engi_json_only_keys(item, item_keys, file, ptr, err);
		if (rc == 0)
			rc = engi_json_choice(item, "check", check_names, "check", 1, file, ptr,
					      &c->check, err);
		if (rc < 0)
			break;
		snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
		unsigned cmps = check_cmps[c->check];
		int selfx = c->check == CHECK_SELF_INTERSECTIONS;
		if (selfx) {
			rc = parse_selfx_limit(item, file, ptr, err);
			if (!json_object_get(item, "max"))
				cmps = ENGI_CMP_NONE;
		}
		if (rc == 0)
			rc = engi_criterion_parse(item, file, ptr, what, cmps,
						  check_stages[c->check], &c->c, err);
		if (rc == 0 && selfx && c->c.cmp == ENGI_CMP_NONE) {
			c->c.cmp = ENGI_CMP_RANGE;
			c->c.max = 0;
		}
		if (rc == 0)
			rc = engi_criterion_name_unique(&mc->v[0].c, sizeof(mc->v[0]), i, 0, file,
							base, ptr, err);
		if (rc == 0)
			rc = parse_axes(item, file, ptr, c, err);
	}
	if (rc < 0) {
		mesh_free(mc);
		return rc;
	}
	*criteria = mc;
	return 0;
}

/* The self-intersections of a delivery, measured when a criterion asks:
 * the kernel's count and first pairs, or why they are not known. */
struct mesh_selfx {
	int wanted, measured;
	struct engi_selfx x;
	struct engi_error why;
};

static int judge_selfx(const struct engi_criterion *c, const struct mesh_selfx *sx,
		       struct engi_verdict *v, struct engi_error *err)
{
	if (!sx->measured)
		return engi_criterion_report(c, ENGI_UNAVAILABLE, NAN, v, err,
					     "self-intersections not measured: %s", sx->why.msg);
	char pairs[160] = "";
	size_t len = 0;
	for (size_t i = 0; i < sx->x.npairs && len < sizeof(pairs); i++) {
		int n =
		    snprintf(pairs + len, sizeof(pairs) - len, "%s(%u, %u)", i ? " " : ": faces ",
			     (unsigned)sx->x.pair[2 * i], (unsigned)sx->x.pair[2 * i + 1]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (sx->x.count > sx->x.npairs && len < sizeof(pairs))
		snprintf(pairs + len, sizeof(pairs) - len, " and %zu more",
			 sx->x.count - sx->x.npairs);
	double count = (double)sx->x.count;
	int state = engi_criterion_holds(c, count) ? ENGI_PASS : ENGI_FAIL;
	return engi_criterion_report(c, state, count, v, err,
				     "%zu intersecting face pairs, at most %.0f allowed%s",
				     sx->x.count, c->max, pairs);
}

static int judge(const struct mesh_criterion *mc, const struct engi_mesh_report *r,
		 const struct mesh_selfx *sx, struct engi_verdict *v, struct engi_error *err)
{
	const struct engi_criterion *c = &mc->c;
	const char *leaky = r->watertight ? NULL : "(not watertight)";
	char label[96];
	switch (mc->check) {
	case CHECK_WATERTIGHT:
		if (r->watertight)
			return engi_criterion_report(
			    c, ENGI_PASS, 1, v, err,
			    "watertight: %zu edges, each used by two faces", r->nedges);
		return engi_criterion_report(c, ENGI_FAIL, 0, v, err,
					     "not watertight: %zu boundary edges, %zu non-manifold "
					     "edges%s",
					     r->boundary_edges, r->nonmanifold_edges,
					     r->ntris ? "" : " (no triangles)");
	case CHECK_ORIENTED:
		if (r->oriented)
			return engi_criterion_report(
			    c, ENGI_PASS, 1, v, err,
			    "oriented: consistent outward faces, volume %.8g", r->volume);
		if (!r->watertight)
			return engi_criterion_report(c, ENGI_FAIL, 0, v, err,
						     "not oriented: not watertight (%zu boundary, "
						     "%zu non-manifold edges)",
						     r->boundary_edges, r->nonmanifold_edges);
		if (r->inconsistent_edges)
			return engi_criterion_report(c, ENGI_FAIL, 0, v, err,
						     "not oriented: %zu edges where neighbouring "
						     "faces disagree",
						     r->inconsistent_edges);
		return engi_criterion_report(c, ENGI_FAIL, 0, v, err,
					     "not oriented: volume %.8g is not positive (faces "
					     "point inwards)",
					     r->volume);
	case CHECK_SHELLS:
		return engi_criterion_judge(c, "shells", (double)r->shells, NULL, v, err);
	case CHECK_GENUS:
		if (r->genus < 0)
			return engi_criterion_report(
			    c, ENGI_FAIL, -1, v, err,
			    "genus undefined: not watertight (%zu boundary, "
			    "%zu non-manifold edges)",
			    r->boundary_edges, r->nonmanifold_edges);
		return engi_criterion_judge(c, "genus", (double)r->genus, NULL, v, err);
	case CHECK_VOLUME:
		return engi_criterion_judge(c, "volume", r->volume, leaky, v, err);
	case CHECK_AREA:
		return engi_criterion_judge(c, "area", r->area, NULL, v, err);
	case CHECK_BBOX_SPAN:
		snprintf(label, sizeof(label), "span along %s", axis_names[mc->axis]);
		return engi_criterion_judge(c, label, r->bbox_max[mc->axis] - r->bbox_min[mc->axis],
					    NULL, v, err);
	case CHECK_SECTION_INERTIA: {
		double span = r->bbox_max[mc->beam_axis] - r->bbox_min[mc->beam_axis];
		if (!(span > 0))
			return engi_criterion_report(c, ENGI_FAIL, NAN, v, err,
						     "section inertia undefined: zero span along "
						     "the beam axis %s",
						     axis_names[mc->beam_axis]);
		/* Engineering convention: the moment about y of a beam along x
		 * sums distances from the y axis, int (z - zbar)^2 dA. */
		int other = 3 - mc->beam_axis - mc->about;
		snprintf(label, sizeof(label), "section inertia about %s (beam along %s)",
			 axis_names[mc->about], axis_names[mc->beam_axis]);
		return engi_criterion_judge(c, label, r->second_moment[other] / span, leaky, v,
					    err);
	}
	case CHECK_SELF_INTERSECTIONS:
		return judge_selfx(c, sx, v, err);
	}
	BUG_ON(1);
	return 0;
}

/* The report's metrics, and self_intersections when measured. */
static int record_metrics(const struct engi_mesh_report *r, const struct mesh_selfx *sx,
			  struct engi_verdict *v, struct engi_error *err)
{
	const struct {
		const char *name;
		double value;
	} m[] = {
	    {"volume", r->volume},
	    {"area", r->area},
	    {"shells", (double)r->shells},
	    {"genus", (double)r->genus},
	    {"span_x", r->bbox_max[0] - r->bbox_min[0]},
	    {"span_y", r->bbox_max[1] - r->bbox_min[1]},
	    {"span_z", r->bbox_max[2] - r->bbox_min[2]},
	    {"self_intersections", (double)sx->x.count},
	};
	size_t n = sizeof(m) / sizeof(m[0]) - !sx->measured;
	for (size_t i = 0; i < n; i++) {
		int rc = engi_verdict_metric(v, m[i].name, m[i].value);
		if (rc < 0)
			RAISE(err, rc, "cannot record metric '%s': %s", m[i].name,
			      engi_strerror(rc));
	}
	return 0;
}

/* Counts the self-intersections of m when a criterion asks for them; a
 * mesh the kernel refuses leaves sx->why for unavailable assertions. */
static int measure_selfx(const struct mesh_criteria *mc, const struct engi_mesh *m,
			 struct mesh_selfx *sx, struct engi_error *err)
{
	for (size_t i = 0; i < mc->n; i++)
		sx->wanted |= mc->v[i].check == CHECK_SELF_INTERSECTIONS;
	if (!sx->wanted)
		return 0;
	int rc = engi_mesh_self_intersections(m, 0, MESH_SELFX_SHOWN, &sx->x, &sx->why);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", sx->why.msg);
	sx->measured = rc == 0;
	return 0;
}

static int mesh_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		       struct engi_verdict *v, struct engi_error *err)
{
	const struct mesh_criteria *mc = criteria;
	struct engi_error e;
	engi_error_init(&e);
	struct engi_mesh m;
	engi_mesh_init(&m);
	struct engi_mesh_report r;
	struct mesh_selfx sx;
	memset(&sx, 0, sizeof(sx));
	engi_error_init(&sx.why);
	int rc = engi_verify_load_mesh(ctx, target, 1, MESH_MAX_TRIS, mc->weld_tol, &m, &r, &e);
	int xrc = rc == 0 ? measure_selfx(mc, &m, &sx, err) : 0;
	engi_mesh_release(&m);
	if (xrc < 0)
		return xrc;
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		for (size_t i = 0; i < mc->n; i++)
			TRY(engi_criterion_report(&mc->v[i].c, ENGI_UNAVAILABLE, NAN, v, err, "%s",
						  e.msg));
		return 0;
	}
	for (size_t i = 0; i < mc->n && rc == 0; i++)
		rc = judge(&mc->v[i], &r, &sx, v, err);
	if (rc == 0)
		rc = record_metrics(&r, &sx, v, err);
	engi_selfx_release(&sx.x);
	return rc;
}

static size_t mesh_names(const void *criteria, const char **out, size_t cap)
{
	const struct mesh_criteria *mc = criteria;
	return engi_criteria_names(&mc->v[0].c, sizeof(mc->v[0]), mc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_mesh = {
    .name = "mesh",
    .summary = "STL validity, topology and mass properties",
    .version = 1,
    .parse = mesh_parse,
    .verify = mesh_verify,
    .free_criteria = mesh_free,
    .names = mesh_names,
};
