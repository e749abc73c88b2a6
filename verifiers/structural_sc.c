/*
 * StructureClaw structural models (schema 2.x, the model objects of
 * StructureClaw-Bench's ground truths) read into the frame kernel's model,
 * normalised to its axes and units (tasks/SCHEMA-structural.md,
 * "StructureClaw models"). What the format says and no more: every field
 * that would change the analysis and is not read is refused with the file
 * and the JSON pointer, never ignored.
 *
 * Conventions, StructureClaw's own (its canonical coordinate contract):
 * right-handed, z up; a 2D model lies in the x-z plane with ux, uz, ry
 * active; member local axes: x from the first node to the second, the
 * reference vector global Z, or global X for a member within acos(0.9) of
 * vertical, y = normalise(ref x x), z = x cross y (OpenSees' vecxz), so a 2D
 * member's local y is normal to the plane and Iy is its in-plane inertia.
 * Units "SI": m, kN, kN m, kN/m, and E (and the sections' G) in MPa.
 */
#include "structural_sc.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* StructureClaw's coordinate tolerance: a 2D model's nodes have |y| at
 * most this; a member is longer than this. */
#define SC_COORD_TOL 1e-9
/* A member whose axis has |cos| with global Z above this takes global X
 * instead of Z as its reference vector. */
#define SC_VERTICAL_COS 0.9
/* "SI" gives E and G in MPa with forces in kN and lengths in m. */
#define SC_MPA_TO_KN_M2 1000.0
#define SC_MAX_TABLE	100000
#define SC_MAX_CASES	10000

/* An id and its position in its array; the name points into the JSON. */
struct sc_name {
	const char *name;
	size_t i;
};

struct sc_mat {
	double E, nu; /* kN/m^2 */
};

enum { SEC_IY = 1, SEC_IZ = 2, SEC_J = 4, SEC_G = 8 };

struct sc_sec {
	double A, Iy, Iz, J, G; /* G in kN/m^2 */
	unsigned has;
};

struct sc {
	const char *file;
	struct engi_error *err;
	int dim;
	int floor_loads; /* a story carries a floor load */
	struct sc_name *story, *node, *elem, *mat, *sec, *lcase, *combo;
	size_t nstory, nnode, nelem, nmat, nsec, nlcase, ncombo;
	struct sc_mat *mats;
	struct sc_sec *secs;
	uint8_t *elem_type; /* 0 beam or column, 1 truss */
	int renumbered;	    /* string ids numbered in file order */
	char version[24];
};

static const char *const dof_names[] = {"ux", "uy", "uz", "rx", "ry", "rz"};

/* engisweep's 2D dof d is StructureClaw's dof sc_2d[d]: (x, y, z) -> (x, z,
 * -y), a proper rotation, takes rotations alike (rz = -ry). */
static const int sc_2d[6] = {0, 2, 1, 3, 5, 4};

#define SC_ERR(c, ptr, ...) engi_parse_error((c)->err, (c)->file, (ptr), __VA_ARGS__)

int engi_structural_sc_detect(const json_t *root)
{
	return json_is_object(root) && json_object_get(root, "schema_version") &&
	       json_object_get(root, "nodes");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct sc_name *)a)->name, ((const struct sc_name *)b)->name);
}

static long find_name(const struct sc_name *t, size_t n, const char *name)
{
	struct sc_name key = {name, 0};
	const struct sc_name *p = n ? bsearch(&key, t, n, sizeof(*t), cmp_name) : NULL;
	return p ? (long)p->i : -1;
}

/* Sorts t for lookups; a duplicate names the later of the two entries. */
static int sort_names(struct sc *c, struct sc_name *t, size_t n, const char *array,
		      const char *what)
{
	if (n > 1)
		qsort(t, n, sizeof(*t), cmp_name);
	for (size_t k = 1; k < n; k++)
		if (!strcmp(t[k].name, t[k - 1].name)) {
			char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
			engi_json_pointer_index(p, sizeof(p), array,
						t[k].i > t[k - 1].i ? t[k].i : t[k - 1].i);
			engi_json_pointer(q, sizeof(q), p, "id");
			return SC_ERR(c, q, "duplicate %s id '%s'", what, t[k].name);
		}
	return 0;
}

/* An id or a reference to one: a string of 1 to ENGI_STRUCT_NAME_MAX - 1
 * characters (StructureClaw's ids are strings). */
static int get_ref(struct sc *c, json_t *v, const char *p, const char **out)
{
	if (!v)
		return SC_ERR(c, p, "required string is missing");
	if (!json_is_string(v))
		return SC_ERR(c, p, "expected a string, found %s", engi_json_kind(v));
	size_t n = json_string_length(v);
	if (n == 0 || n >= ENGI_STRUCT_NAME_MAX)
		return SC_ERR(c, p, "must have 1 to %d characters", ENGI_STRUCT_NAME_MAX - 1);
	if (strlen(json_string_value(v)) != n)
		return SC_ERR(c, p, "contains a NUL character");
	*out = json_string_value(v);
	return 0;
}

static int get_key_ref(struct sc *c, json_t *o, const char *key, const char *ptr, const char **out)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	return get_ref(c, json_object_get(o, key), p, out);
}

/* A number member: 1 when present, 0 when absent (an error if required). */
static int get_num(struct sc *c, json_t *o, const char *key, const char *ptr, int required,
		   int positive, double *out)
{
	int present = 0;
	TRY(engi_json_number(o, key, c->file, ptr, &present, out, c->err));
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	if (!present && required)
		return SC_ERR(c, p, "required number is missing");
	if (present && positive && !(*out > 0))
		return SC_ERR(c, p, "must be positive, found %g", *out);
	return present;
}

static int get_array(struct sc *c, json_t *o, const char *key, const char *ptr, int required,
		     size_t max, json_t **out)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *a = json_object_get(o, key);
	*out = NULL;
	if (!a)
		return required ? SC_ERR(c, p, "required array is missing") : 0;
	if (!json_is_array(a))
		return SC_ERR(c, p, "expected an array, found %s", engi_json_kind(a));
	if (json_array_size(a) > max)
		return SC_ERR(c, p, "more than %zu entries", max);
	*out = a;
	return 0;
}

static int expect_object(struct sc *c, const json_t *o, const char *p)
{
	if (!json_is_object(o))
		return SC_ERR(c, p, "expected an object, found %s", engi_json_kind(o));
	return 0;
}

/* An optional string member that must be one of want[] when present. */
static int get_choice(struct sc *c, json_t *o, const char *key, const char *ptr,
		      const char *const *want, const char *what, int *out)
{
	return engi_json_choice(o, key, want, what, 0, c->file, ptr, out, c->err);
}

/* Local axes as StructureClaw builds them, in its own coordinates; 0 for a
 * member not longer than SC_COORD_TOL. ref receives the reference vector. */
static int sc_axes(const double a[3], const double b[3], double R[3][3], double ref[3])
{
	double x[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double L = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
	if (!(L > SC_COORD_TOL))
		return 0;
	for (int k = 0; k < 3; k++)
		x[k] /= L;
	int vertical = fabs(x[2]) > SC_VERTICAL_COS;
	ref[0] = vertical ? 1 : 0;
	ref[1] = 0;
	ref[2] = vertical ? 0 : 1;
	double y[3] = {ref[1] * x[2] - ref[2] * x[1], ref[2] * x[0] - ref[0] * x[2],
		       ref[0] * x[1] - ref[1] * x[0]};
	double ny = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
	for (int k = 0; k < 3; k++)
		y[k] /= ny; /* ny >= sqrt(1 - 0.9^2) */
	double z[3] = {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
		       x[0] * y[1] - x[1] * y[0]};
	memcpy(R[0], x, sizeof(x));
	memcpy(R[1], y, sizeof(y));
	memcpy(R[2], z, sizeof(z));
	return 1;
}

/* A StructureClaw vector (x, y, z) in engisweep's axes. */
static void to_engi(int dim, const double v[3], double out[3])
{
	if (dim == 2) {
		out[0] = v[0];
		out[1] = v[2];
		out[2] = -v[1];
	} else {
		memcpy(out, v, 3 * sizeof(double));
	}
}

/* Node and element ids: the integers they spell when every one is a plain
 * decimal, else 1..n in file order. 1 when renumbered. */
static int number_ids(const struct sc_name *t, size_t n, int64_t *id)
{
	int plain = 1;
	for (size_t i = 0; i < n && plain; i++) {
		const char *s = t[i].name;
		size_t len = strlen(s);
		plain = len <= 18 && (s[0] != '0' || len == 1);
		for (size_t k = 0; k < len && plain; k++)
			plain = s[k] >= '0' && s[k] <= '9';
	}
	for (size_t i = 0; i < n; i++)
		id[i] = plain ? (int64_t)strtoll(t[i].name, NULL, 10) : (int64_t)(i + 1);
	return !plain;
}

static int read_header(struct sc *c, json_t *root)
{
	static const char *const top[] = {
	    "schema_version", "unit_system", "coordinate_system", "metadata",
	    "stories",	      "nodes",	     "elements",	  "materials",
	    "sections",	      "load_cases",  "load_combinations", NULL};
	TRY(engi_json_only_keys(root, top, c->file, "", c->err));
	json_t *v = json_object_get(root, "schema_version");
	if (!json_is_string(v))
		return SC_ERR(c, "/schema_version", "expected a string such as \"2.0.0\", found %s",
			      engi_json_kind(v));
	const char *sv = json_string_value(v);
	if (strcmp(sv, "2") != 0 && strncmp(sv, "2.", 2) != 0)
		return SC_ERR(c, "/schema_version",
			      "StructureClaw schema 2.x is read, found '%.32s'", sv);
	size_t k = 0;
	for (const char *q = sv; *q && k + 1 < sizeof(c->version); q++)
		c->version[k++] = (*q >= '0' && *q <= '9') || *q == '.' ? *q : '?';
	c->version[k] = '\0';
	v = json_object_get(root, "unit_system");
	if (!v)
		return SC_ERR(c, "/unit_system", "required; the unit system known is \"SI\"");
	if (!json_is_string(v) || strcmp(json_string_value(v), "SI") != 0 ||
	    json_string_length(v) != 2)
		return SC_ERR(c, "/unit_system",
			      "unknown unit system (known: \"SI\": m, kN, E and G in MPa)");
	return 0;
}

static int read_coordinate_system(struct sc *c, json_t *cs, int *dim)
{
	static const char *const keys[] = {"semantics", "version",   "dimension",
					   "plane",	"dof_order", NULL};
	static const char *const dims[] = {"2d", "3d", NULL};
	const char *P = "/coordinate_system";
	TRY(expect_object(c, cs, P));
	TRY(engi_json_only_keys(cs, keys, c->file, P, c->err));
	json_t *v = json_object_get(cs, "semantics");
	if (!json_is_string(v) || strcmp(json_string_value(v), "global-z-up") != 0)
		return SC_ERR(c, "/coordinate_system/semantics", "expected \"global-z-up\"");
	v = json_object_get(cs, "version");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return SC_ERR(c, "/coordinate_system/version", "expected 1");
	int d = 0;
	TRY(engi_json_choice(cs, "dimension", dims, "dimension", 1, c->file, P, &d, c->err));
	*dim = d + 2;
	v = json_object_get(cs, "plane");
	if (*dim == 2 && !(json_is_string(v) && !strcmp(json_string_value(v), "xz")))
		return SC_ERR(c, "/coordinate_system/plane", "a 2d model lies in the \"xz\" plane");
	if (*dim == 3 && v && !json_is_null(v))
		return SC_ERR(c, "/coordinate_system/plane", "a 3d model has no plane (null)");
	v = json_object_get(cs, "dof_order");
	int ok = json_is_array(v) && json_array_size(v) == 6;
	for (size_t i = 0; ok && i < 6; i++) {
		json_t *x = json_array_get(v, i);
		ok = json_is_string(x) && !strcmp(json_string_value(x), dof_names[i]);
	}
	if (!ok)
		return SC_ERR(c, "/coordinate_system/dof_order",
			      "expected [\"ux\", \"uy\", \"uz\", \"rx\", \"ry\", \"rz\"]");
	return 0;
}

/* The model's dimension, from coordinate_system or metadata.frameDimension,
 * which must agree; metadata is descriptive but for the coordinate keys. */
static int read_dimension(struct sc *c, json_t *root)
{
	static const char *const dims[] = {"2d", "3d", NULL};
	int cs_dim = 0, md_dim = -1;
	json_t *cs = json_object_get(root, "coordinate_system");
	if (cs)
		TRY(read_coordinate_system(c, cs, &cs_dim));
	json_t *md = json_object_get(root, "metadata");
	if (md) {
		TRY(expect_object(c, md, "/metadata"));
		TRY(get_choice(c, md, "frameDimension", "/metadata", dims, "frame dimension",
			       &md_dim));
		json_t *v = json_object_get(md, "coordinateSemantics");
		if (v && !(json_is_string(v) && !strcmp(json_string_value(v), "global-z-up")))
			return SC_ERR(c, "/metadata/coordinateSemantics",
				      "expected \"global-z-up\"");
		v = json_object_get(md, "coordinateContractVersion");
		if (v && !(json_is_integer(v) && json_integer_value(v) == 1))
			return SC_ERR(c, "/metadata/coordinateContractVersion", "expected 1");
		if (json_object_get(md, "elementReferenceVectors"))
			return SC_ERR(c, "/metadata/elementReferenceVectors",
				      "members' own reference vectors are not read (each takes "
				      "global Z, or X near vertical)");
	}
	md_dim = md_dim >= 0 ? md_dim + 2 : 0;
	if (cs_dim && md_dim && cs_dim != md_dim)
		return SC_ERR(c, "/metadata/frameDimension",
			      "says %dd where /coordinate_system/dimension says %dd", md_dim,
			      cs_dim);
	if (!cs_dim && !md_dim)
		return SC_ERR(c, "",
			      "neither /coordinate_system/dimension nor "
			      "/metadata/frameDimension says whether the model is 2d or 3d");
	c->dim = cs_dim ? cs_dim : md_dim;
	return 0;
}

/* Stories are descriptive, but their floor loads are what StructureClaw
 * spreads over a load case that has no loads of its own. */
static int read_stories(struct sc *c, json_t *root)
{
	static const char *const keys[] = {"id",
					   "height",
					   "elevation",
					   "floorLoad",
					   "floorLoadUnit",
					   "liveLoad",
					   "liveLoadUnit",
					   "equivalentLineLoad",
					   "tributaryWidthM",
					   "floor_loads",
					   "dead_load",
					   "live_load",
					   "is_basement",
					   "rigid_diaphragm",
					   "standard_floor_group",
					   NULL};
	static const char *const loads[] = {"floorLoad", "liveLoad", "dead_load", "live_load",
					    NULL};
	static const char *const nums[] = {"height", "elevation", "equivalentLineLoad",
					   "tributaryWidthM", NULL};
	json_t *a;
	TRY(get_array(c, root, "stories", "", 0, SC_MAX_TABLE, &a));
	c->nstory = a ? json_array_size(a) : 0;
	c->story = engi_calloc(c->nstory + 1, sizeof(*c->story));
	if (!c->story)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nstory; i++) {
		json_t *o = json_array_get(a, i);
		char p[ENGI_POINTER_MAX];
		double x;
		engi_json_pointer_index(p, sizeof(p), "/stories", i);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->story[i].name));
		c->story[i].i = i;
		for (int k = 0; loads[k]; k++) {
			int has;
			TRY(has = get_num(c, o, loads[k], p, 0, 0, &x));
			if (has && x != 0)
				c->floor_loads = 1;
		}
		for (int k = 0; nums[k]; k++)
			TRY(get_num(c, o, nums[k], p, 0, 0, &x));
		json_t *fl;
		TRY(get_array(c, o, "floor_loads", p, 0, SC_MAX_TABLE, &fl));
		if (fl && json_array_size(fl))
			c->floor_loads = 1;
	}
	return sort_names(c, c->story, c->nstory, "/stories", "story");
}

static int read_materials(struct sc *c, json_t *root)
{
	/* name, rho, fy, fc, grade and category are descriptive */
	static const char *const keys[] = {"id", "name", "E",	  "nu",	      "rho",
					   "fy", "fc",	 "grade", "category", NULL};
	json_t *a;
	TRY(get_array(c, root, "materials", "", 1, SC_MAX_TABLE, &a));
	c->nmat = json_array_size(a);
	c->mat = engi_calloc(c->nmat + 1, sizeof(*c->mat));
	c->mats = engi_calloc(c->nmat + 1, sizeof(*c->mats));
	if (!c->mat || !c->mats)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nmat; i++) {
		json_t *o = json_array_get(a, i);
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
		engi_json_pointer_index(p, sizeof(p), "/materials", i);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->mat[i].name));
		c->mat[i].i = i;
		TRY(get_num(c, o, "E", p, 1, 1, &c->mats[i].E));
		c->mats[i].E *= SC_MPA_TO_KN_M2;
		if (!isfinite(c->mats[i].E)) {
			engi_json_pointer(q, sizeof(q), p, "E");
			return SC_ERR(c, q, "too large");
		}
		TRY(get_num(c, o, "nu", p, 1, 0, &c->mats[i].nu));
		if (!(c->mats[i].nu >= 0 && c->mats[i].nu <= 0.5)) {
			engi_json_pointer(q, sizeof(q), p, "nu");
			return SC_ERR(c, q, "must be in [0, 0.5], found %g", c->mats[i].nu);
		}
	}
	return sort_names(c, c->mat, c->nmat, "/materials", "material");
}

static int read_sections(struct sc *c, json_t *root)
{
	/* all but properties are descriptive: the analysis reads properties */
	static const char *const keys[] = {
	    "id",	  "name",  "type",   "purpose",	 "shape",     "standard_steel_name",
	    "properties", "width", "height", "diameter", "thickness", NULL};
	static const char *const props[] = {"A", "Iy", "Iz", "J", "G", NULL};
	json_t *a;
	TRY(get_array(c, root, "sections", "", 1, SC_MAX_TABLE, &a));
	c->nsec = json_array_size(a);
	c->sec = engi_calloc(c->nsec + 1, sizeof(*c->sec));
	c->secs = engi_calloc(c->nsec + 1, sizeof(*c->secs));
	if (!c->sec || !c->secs)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < c->nsec; i++) {
		json_t *o = json_array_get(a, i);
		struct sc_sec *S = &c->secs[i];
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
		engi_json_pointer_index(p, sizeof(p), "/sections", i);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->sec[i].name));
		c->sec[i].i = i;
		json_t *pr = json_object_get(o, "properties");
		engi_json_pointer(q, sizeof(q), p, "properties");
		if (!pr)
			return SC_ERR(c, q,
				      "required object is missing (A, and Iy, Iz, J, G "
				      "for beams and columns)");
		TRY(expect_object(c, pr, q));
		TRY(engi_json_only_keys(pr, props, c->file, q, c->err));
		int has;
		TRY(get_num(c, pr, "A", q, 1, 1, &S->A));
		TRY(has = get_num(c, pr, "Iy", q, 0, 1, &S->Iy));
		S->has |= has ? SEC_IY : 0;
		TRY(has = get_num(c, pr, "Iz", q, 0, 1, &S->Iz));
		S->has |= has ? SEC_IZ : 0;
		TRY(has = get_num(c, pr, "J", q, 0, 1, &S->J));
		S->has |= has ? SEC_J : 0;
		TRY(has = get_num(c, pr, "G", q, 0, 1, &S->G));
		S->has |= has ? SEC_G : 0;
		S->G *= SC_MPA_TO_KN_M2;
		if (!isfinite(S->G)) {
			engi_json_pointer(p, sizeof(p), q, "G");
			return SC_ERR(c, p, "too large");
		}
	}
	return sort_names(c, c->sec, c->nsec, "/sections", "section");
}

static int read_nodes(struct sc *c, json_t *root, struct engi_frame *f)
{
	static const char *const keys[] = {"id", "x", "y", "z", "restraints", "story", NULL};
	json_t *a;
	TRY(get_array(c, root, "nodes", "", 1, ENGI_STRUCT_MAX_ENTITIES, &a));
	size_t nn = json_array_size(a);
	c->nnode = nn;
	c->node = engi_calloc(nn + 1, sizeof(*c->node));
	f->nnodes = nn;
	f->xyz = engi_calloc(3 * nn + 1, sizeof(double));
	f->node_id = engi_calloc(nn + 1, sizeof(int64_t));
	f->restraint = engi_calloc(nn + 1, 1);
	if (!c->node || !f->xyz || !f->node_id || !f->restraint)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < nn; i++) {
		json_t *o = json_array_get(a, i);
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
		double v[3];
		engi_json_pointer_index(p, sizeof(p), "/nodes", i);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->node[i].name));
		c->node[i].i = i;
		TRY(get_num(c, o, "x", p, 1, 0, &v[0]));
		TRY(get_num(c, o, "y", p, 1, 0, &v[1]));
		TRY(get_num(c, o, "z", p, 1, 0, &v[2]));
		if (c->dim == 2) {
			if (fabs(v[1]) > SC_COORD_TOL) {
				engi_json_pointer(q, sizeof(q), p, "y");
				return SC_ERR(c, q,
					      "a 2d model lies in the x-z plane (y = 0), found %g",
					      v[1]);
			}
			v[1] = 0;
		}
		to_engi(c->dim, v, f->xyz + 3 * i);
		json_t *r = json_object_get(o, "restraints");
		engi_json_pointer(q, sizeof(q), p, "restraints");
		if (r && !(json_is_array(r) && json_array_size(r) == 6))
			return SC_ERR(c, q, "expected six booleans [ux, uy, uz, rx, ry, rz]");
		for (int d = 0; r && d < 6; d++) {
			json_t *b = json_array_get(r, (size_t)(c->dim == 2 ? sc_2d[d] : d));
			if (!json_is_boolean(b)) {
				char q2[ENGI_POINTER_MAX];
				engi_json_pointer_index(q2, sizeof(q2), q,
							(size_t)(c->dim == 2 ? sc_2d[d] : d));
				return SC_ERR(c, q2, "expected a boolean, found %s",
					      engi_json_kind(b));
			}
			if (json_is_true(b))
				f->restraint[i] |= (uint8_t)(1u << d);
		}
		if (json_object_get(o, "story")) {
			const char *st;
			TRY(get_key_ref(c, o, "story", p, &st));
			if (find_name(c->story, c->nstory, st) < 0) {
				engi_json_pointer(q, sizeof(q), p, "story");
				return SC_ERR(c, q, "unknown story '%s'", st);
			}
		}
	}
	c->renumbered |= number_ids(c->node, nn, f->node_id);
	return sort_names(c, c->node, nn, "/nodes", "node");
}

/* An element's section, checked for what its type and the dimension need. */
static int element_section(struct sc *c, const char *p, const char *sname, long si, int truss,
			   struct engi_frame_elem *el, const struct sc_mat *M)
{
	const struct sc_sec *S = &c->secs[si];
	el->area = S->A;
	el->young = M->E;
	el->shear = S->has & SEC_G ? S->G : M->E / (2 * (1 + M->nu));
	if (truss)
		return 0;
	unsigned need = c->dim == 2 ? SEC_IY : SEC_IY | SEC_IZ | SEC_J | SEC_G;
	unsigned miss = need & ~S->has;
	if (miss) {
		char q[ENGI_POINTER_MAX];
		engi_json_pointer(q, sizeof(q), p, "section");
		const char *what = miss & SEC_IY   ? "Iy"
				   : miss & SEC_IZ ? "Iz"
				   : miss & SEC_J  ? "J"
						   : "G";
		return SC_ERR(c, q,
			      "section '%s' has no properties.%s, which a %s %dd member needs",
			      sname, what, "beam or column", c->dim);
	}
	if (c->dim == 2) {
		/* local y is normal to the x-z plane: Iy bends in the plane,
		 * which is engisweep's local z bending (Iz) in the x-y plane */
		el->iz = S->Iy;
		el->iy = S->has & SEC_IZ ? S->Iz : 0;
		el->torsion = S->has & SEC_J ? S->J : 0;
	} else {
		el->iy = S->Iy;
		el->iz = S->Iz;
		el->torsion = S->J;
	}
	return 0;
}

static int read_elements(struct sc *c, json_t *root, struct engi_frame *f)
{
	/* story and the grades are descriptive */
	static const char *const keys[] = {
	    "id",	   "type",	  "nodes",	    "material",
	    "section",	   "story",	  "rotation_angle", "concrete_grade",
	    "steel_grade", "rebar_grade", "seismic_grade",  NULL};
	static const char *const types[] = {"beam", "column", "truss", NULL};
	json_t *a;
	TRY(get_array(c, root, "elements", "", 1, ENGI_STRUCT_MAX_ENTITIES, &a));
	size_t ne = json_array_size(a);
	c->nelem = ne;
	c->elem = engi_calloc(ne + 1, sizeof(*c->elem));
	c->elem_type = engi_calloc(ne + 1, 1);
	f->nelems = ne;
	f->elem = engi_calloc(ne + 1, sizeof(*f->elem));
	f->elem_id = engi_calloc(ne + 1, sizeof(int64_t));
	if (!c->elem || !c->elem_type || !f->elem || !f->elem_id)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < ne; i++) {
		json_t *o = json_array_get(a, i);
		struct engi_frame_elem *el = &f->elem[i];
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX], q2[ENGI_POINTER_MAX];
		int type = -1;
		engi_json_pointer_index(p, sizeof(p), "/elements", i);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->elem[i].name));
		c->elem[i].i = i;
		TRY(engi_json_choice(o, "type", types, "element type", 1, c->file, p, &type,
				     c->err));
		int truss = type == 2;
		c->elem_type[i] = (uint8_t)truss;
		el->type = truss ? ENGI_FRAME_TRUSS : ENGI_FRAME_BEAM;
		json_t *en = json_object_get(o, "nodes");
		engi_json_pointer(q, sizeof(q), p, "nodes");
		if (!json_is_array(en) || json_array_size(en) != 2)
			return SC_ERR(c, q, "expected two node ids");
		for (size_t t = 0; t < 2; t++) {
			const char *nid;
			engi_json_pointer_index(q2, sizeof(q2), q, t);
			TRY(get_ref(c, json_array_get(en, t), q2, &nid));
			long ix = find_name(c->node, c->nnode, nid);
			if (ix < 0)
				return SC_ERR(c, q2, "unknown node '%s'", nid);
			el->node[t] = (uint32_t)ix;
		}
		if (el->node[0] == el->node[1])
			return SC_ERR(c, q, "both ends on the same node");
		const char *mname, *sname;
		TRY(get_key_ref(c, o, "material", p, &mname));
		TRY(get_key_ref(c, o, "section", p, &sname));
		long mi = find_name(c->mat, c->nmat, mname), si = find_name(c->sec, c->nsec, sname);
		if (mi < 0 || si < 0) {
			engi_json_pointer(q, sizeof(q), p, mi < 0 ? "material" : "section");
			return SC_ERR(c, q, "unknown %s '%s'", mi < 0 ? "material" : "section",
				      mi < 0 ? mname : sname);
		}
		TRY(element_section(c, p, sname, si, truss, el, &c->mats[mi]));
		double rot = 0;
		TRY(get_num(c, o, "rotation_angle", p, 0, 0, &rot));
		if (rot != 0) {
			engi_json_pointer(q, sizeof(q), p, "rotation_angle");
			return SC_ERR(c, q, "a section rotated about its member is not read");
		}
		if (json_object_get(o, "story")) {
			const char *st;
			TRY(get_key_ref(c, o, "story", p, &st));
			if (find_name(c->story, c->nstory, st) < 0) {
				engi_json_pointer(q, sizeof(q), p, "story");
				return SC_ERR(c, q, "unknown story '%s'", st);
			}
		}
		/* the member in StructureClaw's own coordinates */
		const double *A = f->xyz + 3 * (size_t)el->node[0],
			     *B = f->xyz + 3 * (size_t)el->node[1];
		double a3[3], b3[3], R[3][3], ref[3];
		if (c->dim == 2) {
			double ta[3] = {A[0], -A[2], A[1]}, tb[3] = {B[0], -B[2], B[1]};
			memcpy(a3, ta, sizeof(ta));
			memcpy(b3, tb, sizeof(tb));
		} else {
			memcpy(a3, A, sizeof(a3));
			memcpy(b3, B, sizeof(b3));
		}
		if (!sc_axes(a3, b3, R, ref)) {
			engi_json_pointer(q, sizeof(q), p, "nodes");
			return SC_ERR(c, q, "the member has zero length");
		}
		if (c->dim == 3 && !truss)
			memcpy(el->zref, ref, sizeof(ref));
	}
	c->renumbered |= number_ids(c->elem, ne, f->elem_id);
	return sort_names(c, c->elem, ne, "/elements", "element");
}

/* A component that a 2D model cannot carry must be absent or zero. */
static int in_plane(struct sc *c, const char *p, const char *key, double v, const char *why)
{
	if (c->dim != 2 || v == 0)
		return 0;
	char q[ENGI_POINTER_MAX];
	engi_json_pointer(q, sizeof(q), p, key);
	return SC_ERR(c, q, "%s of the x-z plane of a 2d model: must be 0, found %g", why, v);
}

static int read_nodal(struct sc *c, json_t *l, const char *p, long node, uint32_t lcase,
		      struct engi_frame *f)
{
	static const char *const comp[] = {"fx", "fy", "fz", "mx", "my", "mz"};
	static const int out_of_plane[] = {0, 1, 0, 1, 0, 1};
	double v[6] = {0};
	char q[ENGI_POINTER_MAX];
	static const char *const wkeys[] = {"wx", "wy", "wz", NULL};
	for (int k = 0; wkeys[k]; k++)
		if (json_object_get(l, wkeys[k])) {
			engi_json_pointer(q, sizeof(q), p, wkeys[k]);
			return SC_ERR(c, q, "a nodal load has fx, fy, fz, mx, my, mz or forces");
		}
	json_t *fa = json_object_get(l, "forces");
	if (fa) {
		engi_json_pointer(q, sizeof(q), p, "forces");
		for (int k = 0; k < 6; k++)
			if (json_object_get(l, comp[k]))
				return SC_ERR(c, q, "forces and %s together", comp[k]);
		if (!json_is_array(fa) || json_array_size(fa) != 6)
			return SC_ERR(c, q, "expected six numbers [fx, fy, fz, mx, my, mz]");
		for (size_t k = 0; k < 6; k++) {
			json_t *x = json_array_get(fa, k);
			char q2[ENGI_POINTER_MAX], idx[4];
			engi_json_pointer_index(q2, sizeof(q2), q, k);
			if (!json_is_number(x) || !isfinite(json_number_value(x)))
				return SC_ERR(c, q2, "expected a finite number, found %s",
					      engi_json_kind(x));
			v[k] = json_number_value(x);
			snprintf(idx, sizeof(idx), "%zu", k);
			if (out_of_plane[k])
				TRY(in_plane(c, q, idx, v[k], "out"));
		}
	} else {
		for (int k = 0; k < 6; k++) {
			TRY(get_num(c, l, comp[k], p, 0, 0, &v[k]));
			if (out_of_plane[k])
				TRY(in_plane(c, p, comp[k], v[k], "out"));
		}
	}
	struct engi_frame_nodal_load *L = &f->nodal[f->nnodal++];
	L->node = (uint32_t)node;
	L->lcase = lcase;
	to_engi(c->dim, v, L->f);
	to_engi(c->dim, v + 3, L->f + 3);
	return 0;
}

static int read_member(struct sc *c, json_t *l, const char *p, long e, int local, uint32_t lcase,
		       struct engi_frame *f)
{
	static const char *const fkeys[] = {"fx", "fy", "fz", "mx", "my", "mz", "forces", NULL};
	static const char *const comp[] = {"wx", "wy", "wz"};
	char q[ENGI_POINTER_MAX];
	for (int k = 0; fkeys[k]; k++)
		if (json_object_get(l, fkeys[k])) {
			engi_json_pointer(q, sizeof(q), p, fkeys[k]);
			return SC_ERR(c, q, "a distributed load has wx, wy, wz");
		}
	if (c->elem_type[e]) {
		engi_json_pointer(q, sizeof(q), p, "element");
		return SC_ERR(c, q,
			      "a distributed load on truss '%s' (a truss carries axial "
			      "force at its ends only)",
			      json_string_value(json_object_get(l, "element")));
	}
	double w[3] = {0};
	for (int k = 0; k < 3; k++)
		TRY(get_num(c, l, comp[k], p, 0, 0, &w[k]));
	TRY(in_plane(c, p, "wy", w[1], local ? "local wy is out" : "out"));
	struct engi_frame_member_load *L = &f->member[f->nmember++];
	L->elem = (uint32_t)e;
	L->lcase = lcase;
	if (local && c->dim == 3) {
		/* the member's local axes are StructureClaw's (zref) */
		memcpy(L->w, w, sizeof(w));
		L->local = 1;
		return 0;
	}
	double g[3];
	if (local) {
		/* 2D: local x and z lie in the plane; to global, then map */
		const struct engi_frame_elem *el = &f->elem[e];
		const double *A = f->xyz + 3 * (size_t)el->node[0],
			     *B = f->xyz + 3 * (size_t)el->node[1];
		double a3[3] = {A[0], -A[2], A[1]}, b3[3] = {B[0], -B[2], B[1]}, R[3][3], ref[3];
		sc_axes(a3, b3, R, ref);
		for (int d = 0; d < 3; d++)
			g[d] = R[0][d] * w[0] + R[1][d] * w[1] + R[2][d] * w[2];
	} else {
		memcpy(g, w, sizeof(g));
	}
	to_engi(c->dim, g, L->w);
	L->local = 0;
	return 0;
}

static int read_load(struct sc *c, json_t *l, const char *p, uint32_t lcase, struct engi_frame *f)
{
	static const char *const keys[] = {"type", "node", "element", "reference_frame",
					   "fx",   "fy",   "fz",      "mx",
					   "my",   "mz",   "forces",  "wx",
					   "wy",   "wz",   NULL};
	static const char *const types[] = {"nodal", "distributed", NULL};
	static const char *const frames[] = {"global", "element-local", NULL};
	char q[ENGI_POINTER_MAX];
	TRY(expect_object(c, l, p));
	TRY(engi_json_only_keys(l, keys, c->file, p, c->err));
	int type = -1, frame = 0;
	TRY(get_choice(c, l, "type", p, types, "load type", &type));
	TRY(get_choice(c, l, "reference_frame", p, frames, "reference frame", &frame));
	json_t *node = json_object_get(l, "node"), *elem = json_object_get(l, "element");
	if (!node == !elem)
		return SC_ERR(c, p, "a load names exactly one node or element");
	if (type >= 0 && (type == 0) != !!node) {
		engi_json_pointer(q, sizeof(q), p, "type");
		return SC_ERR(c, q, "a %s load is on %s", types[type],
			      type == 0 ? "a node" : "an element");
	}
	const char *id;
	if (node) {
		TRY(get_key_ref(c, l, "node", p, &id));
		long ix = find_name(c->node, c->nnode, id);
		engi_json_pointer(q, sizeof(q), p, "node");
		if (ix < 0)
			return SC_ERR(c, q, "unknown node '%s'", id);
		if (frame) {
			engi_json_pointer(q, sizeof(q), p, "reference_frame");
			return SC_ERR(c, q, "a nodal load is global");
		}
		return read_nodal(c, l, p, ix, lcase, f);
	}
	TRY(get_key_ref(c, l, "element", p, &id));
	long ix = find_name(c->elem, c->nelem, id);
	if (ix < 0) {
		engi_json_pointer(q, sizeof(q), p, "element");
		return SC_ERR(c, q, "unknown element '%s'", id);
	}
	return read_member(c, l, p, ix, frame, lcase, f);
}

static int read_load_cases(struct sc *c, json_t *root, struct engi_structural *s)
{
	/* type, kind and description are descriptive */
	static const char *const keys[] = {"id", "type", "kind", "loads", "description", NULL};
	static const char *const types[] = {"dead",	  "live",  "wind", "seismic", "temperature",
					    "settlement", "crane", "snow", "other",   NULL};
	static const char *const kinds[] = {"permanent", "variable", "accidental", NULL};
	struct engi_frame *f = &s->f;
	json_t *a;
	TRY(get_array(c, root, "load_cases", "", 0, SC_MAX_CASES, &a));
	size_t nc = a ? json_array_size(a) : 0, nl = 0;
	for (size_t i = 0; i < nc; i++) {
		json_t *o = json_array_get(a, i), *ls;
		char p[ENGI_POINTER_MAX];
		engi_json_pointer_index(p, sizeof(p), "/load_cases", i);
		TRY(expect_object(c, o, p));
		TRY(get_array(c, o, "loads", p, 0, ENGI_STRUCT_MAX_ENTITIES, &ls));
		nl += ls ? json_array_size(ls) : 0;
		if (nl > ENGI_STRUCT_MAX_ENTITIES)
			return SC_ERR(c, p, "more than %d loads in all", ENGI_STRUCT_MAX_ENTITIES);
	}
	c->nlcase = nc;
	c->lcase = engi_calloc(nc + 1, sizeof(*c->lcase));
	s->case_name = engi_calloc(nc + 1, sizeof(*s->case_name));
	f->nodal = engi_calloc(nl + 1, sizeof(*f->nodal));
	f->member = engi_calloc(nl + 1, sizeof(*f->member));
	if (!c->lcase || !s->case_name || !f->nodal || !f->member)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	f->ncases = nc;
	for (size_t i = 0; i < nc; i++) {
		json_t *o = json_array_get(a, i), *ls;
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
		int x;
		engi_json_pointer_index(p, sizeof(p), "/load_cases", i);
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->lcase[i].name));
		c->lcase[i].i = i;
		memcpy(s->case_name[i], c->lcase[i].name, strlen(c->lcase[i].name) + 1);
		TRY(get_choice(c, o, "type", p, types, "load case type", &x));
		TRY(get_choice(c, o, "kind", p, kinds, "load case kind", &x));
		TRY(get_array(c, o, "loads", p, 0, ENGI_STRUCT_MAX_ENTITIES, &ls));
		size_t n = ls ? json_array_size(ls) : 0;
		if (!n && c->floor_loads) {
			engi_json_pointer(q, sizeof(q), p, "loads");
			return SC_ERR(c, q,
				      "no loads: StructureClaw would spread the stories' floor "
				      "loads over the model, which is not read");
		}
		engi_json_pointer(q, sizeof(q), p, "loads");
		for (size_t k = 0; k < n; k++) {
			char q2[ENGI_POINTER_MAX];
			engi_json_pointer_index(q2, sizeof(q2), q, k);
			TRY(read_load(c, json_array_get(ls, k), q2, (uint32_t)i, f));
		}
	}
	return sort_names(c, c->lcase, nc, "/load_cases", "load case");
}

static int read_combinations(struct sc *c, json_t *root, struct engi_structural *s)
{
	/* combination_type and code_reference are descriptive */
	static const char *const keys[] = {"id", "factors", "combination_type", "code_reference",
					   NULL};
	struct engi_frame *f = &s->f;
	json_t *a;
	TRY(get_array(c, root, "load_combinations", "", 0, SC_MAX_CASES, &a));
	size_t nb = a ? json_array_size(a) : 0, nc = f->ncases;
	if (!nb)
		return 0;
	if (nc && nb > ENGI_STRUCT_MAX_ENTITIES / nc)
		return SC_ERR(c, "/load_combinations",
			      "%zu combinations of %zu load cases are more "
			      "factors than %d",
			      nb, nc, ENGI_STRUCT_MAX_ENTITIES);
	c->ncombo = nb;
	c->combo = engi_calloc(nb + 1, sizeof(*c->combo));
	s->combo_name = engi_calloc(nb + 1, sizeof(*s->combo_name));
	f->combo = engi_calloc(nb * nc + 1, sizeof(double));
	if (!c->combo || !s->combo_name || !f->combo)
		RAISE(c->err, ENGI_ENOMEM, "out of memory");
	f->ncombos = nb;
	for (size_t m = 0; m < nb; m++) {
		json_t *o = json_array_get(a, m);
		char p[ENGI_POINTER_MAX], q[ENGI_POINTER_MAX];
		engi_json_pointer_index(p, sizeof(p), "/load_combinations", m);
		TRY(expect_object(c, o, p));
		TRY(engi_json_only_keys(o, keys, c->file, p, c->err));
		TRY(get_key_ref(c, o, "id", p, &c->combo[m].name));
		c->combo[m].i = m;
		memcpy(s->combo_name[m], c->combo[m].name, strlen(c->combo[m].name) + 1);
		json_t *fa = json_object_get(o, "factors");
		engi_json_pointer(q, sizeof(q), p, "factors");
		if (!json_is_object(fa) || json_object_size(fa) == 0)
			return SC_ERR(c, q, "expected an object of load case factors");
		const char *key;
		json_t *val;
		json_object_foreach(fa, key, val)
		{
			char q2[ENGI_POINTER_MAX];
			engi_json_pointer(q2, sizeof(q2), q, key);
			long ci = find_name(c->lcase, c->nlcase, key);
			if (ci < 0)
				return SC_ERR(c, q2, "unknown load case");
			if (!json_is_number(val) || !isfinite(json_number_value(val)))
				return SC_ERR(c, q2, "expected a number");
			f->combo[m * nc + (size_t)ci] = json_number_value(val);
		}
	}
	return sort_names(c, c->combo, nb, "/load_combinations", "load combination");
}

static void describe(const struct sc *c, struct engi_structural *s)
{
	snprintf(s->normalised, sizeof(s->normalised),
		 "StructureClaw %s; SI: kN, m, E and G MPa -> kN/m^2; %s%s", c->version,
		 c->dim == 2 ? "2D x-z plane -> x-y, (x, y, z) -> (x, z, -y), rz = -ry; in-plane "
			       "inertia Iy"
			     : "3D axes kept; local axes from reference Z (X near vertical)",
		 c->renumbered ? "; string ids numbered in file order" : "");
	snprintf(s->length_unit, sizeof(s->length_unit), "m");
	snprintf(s->force_unit, sizeof(s->force_unit), "kN");
}

int engi_structural_sc_convert(const char *file, json_t *root, struct engi_structural *s,
			       struct engi_error *err)
{
	struct sc c;
	memset(&c, 0, sizeof(c));
	c.file = file;
	c.err = err;
	int rc;
	if ((rc = read_header(&c, root)) < 0 || (rc = read_dimension(&c, root)) < 0 ||
	    (rc = read_stories(&c, root)) < 0 || (rc = read_materials(&c, root)) < 0 ||
	    (rc = read_sections(&c, root)) < 0 || (rc = read_nodes(&c, root, &s->f)) < 0 ||
	    (rc = read_elements(&c, root, &s->f)) < 0 || (rc = read_load_cases(&c, root, s)) < 0 ||
	    (rc = read_combinations(&c, root, s)) < 0)
		goto out;
	s->f.dim = c.dim;
	describe(&c, s);
	rc = 0;
out:
	engi_free(c.story);
	engi_free(c.node);
	engi_free(c.elem);
	engi_free(c.mat);
	engi_free(c.sec);
	engi_free(c.lcase);
	engi_free(c.combo);
	engi_free(c.mats);
	engi_free(c.secs);
	engi_free(c.elem_type);
	return rc;
}
