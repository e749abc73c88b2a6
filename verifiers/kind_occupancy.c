/*
 * Verifier kind "occupancy": solid-void checks on a delivered closed mesh
 * (STL, OBJ, PLY or STEP by extension). A criterion names either a region
 * and asks how much material it holds, or a point and asks whether it is
 * in material:
 *
 *   {"name": "bore_MH1", "check": "material_volume", "max": 0.1,
 *    "region": {"cylinder": {"base": [50, 20, -1], "axis": [0, 0, 1],
 *                            "radius": 4.9, "length": 12}}}
 *   {"name": "web", "check": "material_fraction", "min": 0.999,
 *    "region": {"box": {"min": [0, 0, 0], "max": [10, 2, 30]}}}
 *   {"name": "channel", "check": "void", "point": [5, 5, 9.5]}
 *   {"name": "boss", "check": "solid", "point": [20, 20, 3]}
 *
 * "The channel is cut from the top face" is a material_volume of 0 over the
 * box from the channel floor to above the part. A mesh that is not
 * watertight has no inside: every criterion then fails, saying why.
 */
#include "engi/mesh.h"
#include "engi/meshio.h"
#include "engi/occupancy.h"
#include "engi/verify.h"

#include "engi/alloc.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define OCC_WELD_TOL_DEFAULT 1e-6
#define OCC_MAX_TRIS	     ((size_t)20 * 1000 * 1000)
#define POINTER_MAX	     ENGI_POINTER_MAX
#define PI		     3.14159265358979323846

enum occ_check { CHECK_MATERIAL_VOLUME, CHECK_MATERIAL_FRACTION, CHECK_SOLID, CHECK_VOID };

static const char *const check_names[] = {"material_volume", "material_fraction", "solid", "void",
					  NULL};

struct occ_criterion {
	struct engi_criterion c;
	int check;
	struct engi_region region; /* material_* */
	double point[3];	   /* solid, void */
};

struct occ_criteria {
	double weld_tol;
	int resolution;
	size_t n;
	struct occ_criterion v[];
};

static void occ_free(void *criteria)
{
	engi_free(criteria);
}

static int parse_item(json_t *item, const char *file, const char *ptr, struct occ_criterion *c,
		      struct engi_error *err)
{
	static const char *const item_keys[] = {"name",	    "check",   "region",  "point", "equals",
						"value",    "tol_rel", "tol_abs", "min",   "max",
						"required", "stage",   NULL};
	char what[64], p[POINTER_MAX];
	TRY(engi_json_only_keys(item, item_keys, file, ptr, err));
	TRY(engi_json_choice(item, "check", check_names, "check", 1, file, ptr, &c->check, err));
	int regional = c->check == CHECK_MATERIAL_VOLUME || c->check == CHECK_MATERIAL_FRACTION;
	const char *other = regional ? "point" : "region";
	if (json_object_get(item, other)) {
		engi_json_pointer(p, sizeof(p), ptr, other);
		return engi_parse_error(err, file, p, "does not apply to check '%s'",
					check_names[c->check]);
	}
	snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
	TRY(engi_criterion_parse(item, file, ptr, what,
				 regional ? (ENGI_CMP_VALUE | ENGI_CMP_RANGE) : ENGI_CMP_NONE,
				 "occupancy", &c->c, err));
	if (regional)
		return engi_json_region(item, "region", file, ptr, &c->region, err);
	return engi_json_vec3(item, "point", file, ptr, c->point, err);
}

static int occ_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		     void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind",     "file",	    "weld_tol", "resolution",
					   "criteria", "objective", "reward",	NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	double weld_tol = OCC_WELD_TOL_DEFAULT, res = ENGI_OCCUPANCY_RES_DEFAULT;
	int present;
	char p[POINTER_MAX];
	TRY(engi_json_number(ver, "weld_tol", file, pointer, &present, &weld_tol, err));
	if (present && weld_tol < 0) {
		engi_json_pointer(p, sizeof(p), pointer, "weld_tol");
		return engi_parse_error(err, file, p, "must be at least 0");
	}
	TRY(engi_json_number(ver, "resolution", file, pointer, &present, &res, err));
	if (present && !(res >= 1 && res <= ENGI_OCCUPANCY_RES_MAX && res == floor(res))) {
		engi_json_pointer(p, sizeof(p), pointer, "resolution");
		return engi_parse_error(err, file, p, "must be an integer from 1 to %d",
					ENGI_OCCUPANCY_RES_MAX);
	}
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct occ_criteria *oc = engi_calloc(1, sizeof(*oc) + n * sizeof(struct occ_criterion));
	if (!oc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	oc->weld_tol = weld_tol;
	oc->resolution = (int)res;
	oc->n = n;
	char base[POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ptr[POINTER_MAX];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		rc = parse_item(json_array_get(arr, i), file, ptr, &oc->v[i], err);
		if (rc == 0)
			rc = engi_criterion_name_unique(&oc->v[0].c, sizeof(oc->v[0]), i, 0, file,
							base, ptr, err);
	}
	if (rc < 0) {
		occ_free(oc);
		return rc;
	}
	*criteria = oc;
	return 0;
}

static double region_volume(const struct engi_region *r)
{
	if (r->kind == ENGI_REGION_BOX)
		return (r->hi[0] - r->lo[0]) * (r->hi[1] - r->lo[1]) * (r->hi[2] - r->lo[2]);
	return PI * r->radius * r->radius * r->length;
}

static int judge(const struct occ_criteria *oc, const struct occ_criterion *c,
		 const struct engi_mesh *m, const struct engi_solid *s, struct engi_verdict *v,
		 struct engi_error *err)
{
	char label[96];
	if (c->check == CHECK_SOLID || c->check == CHECK_VOID) {
		int in = engi_solid_contains(s, c->point);
		int want_in = c->check == CHECK_SOLID;
		return engi_criterion_report(&c->c, in == want_in ? ENGI_PASS : ENGI_FAIL, in, v,
					     err, "point (%g, %g, %g) is in %s", c->point[0],
					     c->point[1], c->point[2], in ? "material" : "void");
	}
	double vol;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_mesh_material_volume(m, &c->region, oc->resolution, &vol, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0)
		return engi_criterion_report(&c->c, ENGI_UNAVAILABLE, NAN, v, err, "%s", e.msg);
	if (c->check == CHECK_MATERIAL_VOLUME) {
		snprintf(label, sizeof(label), "material volume in the %s",
			 c->region.kind == ENGI_REGION_BOX ? "box" : "cylinder");
		return engi_criterion_judge(&c->c, label, vol, NULL, v, err);
	}
	snprintf(label, sizeof(label), "material fraction of the %s",
		 c->region.kind == ENGI_REGION_BOX ? "box" : "cylinder");
	return engi_criterion_judge(&c->c, label, vol / region_volume(&c->region), NULL, v, err);
}

static int occ_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		      struct engi_verdict *v, struct engi_error *err)
{
	const struct occ_criteria *oc = criteria;
	struct engi_error e;
	engi_error_init(&e);
	struct engi_mesh m;
	engi_mesh_init(&m);
	struct engi_mesh_report r;
	int rc = engi_verify_load_mesh(ctx, target, 0, OCC_MAX_TRIS, oc->weld_tol, &m, &r, &e);
	struct engi_solid s;
	memset(&s, 0, sizeof(s));
	if (rc == 0 && r.watertight)
		rc = engi_solid_build(&s, &m, NULL, NULL, &e);
	if (rc == ENGI_ENOMEM) {
		engi_mesh_release(&m);
		RAISE(err, rc, "%s", e.msg);
	}
	if (rc < 0 || !r.watertight) {
		for (size_t i = 0; i < oc->n; i++) {
			int st = rc < 0 ? ENGI_UNAVAILABLE : ENGI_FAIL;
			int rr = rc < 0 ? engi_criterion_report(&oc->v[i].c, st, NAN, v, err, "%s",
								e.msg)
					: engi_criterion_report(
					      &oc->v[i].c, st, NAN, v, err,
					      "occupancy undefined: not watertight (%zu boundary, "
					      "%zu non-manifold edges)",
					      r.boundary_edges, r.nonmanifold_edges);
			if (rr < 0) {
				engi_solid_release(&s);
				engi_mesh_release(&m);
				return rr;
			}
		}
		engi_solid_release(&s);
		engi_mesh_release(&m);
		return 0;
	}
	for (size_t i = 0; i < oc->n && rc == 0; i++)
		rc = judge(oc, &oc->v[i], &m, &s, v, err);
	engi_solid_release(&s);
	engi_mesh_release(&m);
	return rc;
}

static size_t occ_names(const void *criteria, const char **out, size_t cap)
{
	const struct occ_criteria *oc = criteria;
	return engi_criteria_names(&oc->v[0].c, sizeof(oc->v[0]), oc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_occupancy = {
    .name = "occupancy",
    .summary = "solid-void checks: material in boxes and cylinders, points in material or void",
    .version = 1,
    .parse = occ_parse,
    .verify = occ_verify,
    .free_criteria = occ_free,
    .names = occ_names,
};
