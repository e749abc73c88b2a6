/*
 * Verifier kind "cad_similarity": geometry similarity of a delivered mesh to
 * the task's held-back reference mesh (tasks/SCHEMA-cad.md, parametric CAD scoring).
 *
 *   "verifier": {"kind": "cad_similarity", "file": "part.stl",
 *                "reference": "part/reference/part.stl",
 *                "criteria": [{"name": "geometry", "check": "similarity", "min": 0.5},
 *                             {"name": "extents", "check": "obb_extent_gate"},
 *                             {"name": "counts", "check": "count_gate"}]}
 *
 * The score, its terms and gates are described in engi/cad_geometry.h
 * (shared with "param_spec"); the metric "geometry_similarity" carries it
 * for continuous rewards.
 */
#include "engi/cad_geometry.h"
#include "engi/verify.h"

#include "engi/alloc.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define POINTER_MAX ENGI_POINTER_MAX

enum cad_check {
	CHECK_SIMILARITY,
	CHECK_OBB_GATE,
	CHECK_COUNT_GATE,
	CHECK_DOCUMENT_GATE,
	CHECK_SPEC,
	CHECK_PCB_SCORE
};
static const char *const check_names[] = {
    "similarity",	"obb_extent_gate", "count_gate", "document_gate",
    "spec_consistency", "pcb_score",	   NULL};

struct cad_criterion {
	struct engi_criterion c;
	int check;
};

struct cad_criteria {
	int method; /* enum engi_cad_method */
	char reference[PATH_MAX];
	char spec[PATH_MAX]; /* pcb-v2's spec.json, "" none */
	size_t n;
	struct cad_criterion v[];
};

static void cad_free(void *criteria)
{
	engi_free(criteria);
}

static int cad_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		     void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind",     "file",	    "reference", "spec", "geometry",
					   "criteria", "objective", "reward",	 NULL};
	static const char *const item_keys[] = {"name", "check", "value",    "tol_rel", "tol_abs",
						"min",	"max",	 "required", "stage",	NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	char rs[PATH_MAX];
	TRY(engi_cad_parse_reference(ver, 1, file, pointer, rs, sizeof(rs), err));
	int method;
	TRY(engi_cad_parse_method(ver, file, pointer, &method, err));
	char spec[PATH_MAX];
	TRY(engi_cad_parse_task_path(ver, "spec", 0, file, pointer, spec, sizeof(spec), err));
	if (spec[0] && method != ENGI_CAD_PCB_V2) {
		char sp[POINTER_MAX];
		engi_json_pointer(sp, sizeof(sp), pointer, "spec");
		return engi_parse_error(err, file, sp,
					"a spec is checked by \"geometry\": \"pcb-v2\" only "
					"(meshes: kind param_spec)");
	}
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct cad_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct cad_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	snprintf(cc->reference, sizeof(cc->reference), "%s", rs);
	snprintf(cc->spec, sizeof(cc->spec), "%s", spec);
	cc->method = method;
	cc->n = n;
	char base[POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ptr[POINTER_MAX], what[64];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		json_t *item = json_array_get(arr, i);
		struct cad_criterion *c = &cc->v[i];
		rc = engi_json_only_keys(item, item_keys, file, ptr, err);
		if (rc == 0)
			rc = engi_json_choice(item, "check", check_names, "check", 1, file, ptr,
					      &c->check, err);
		if (rc < 0)
			break;
		snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
		if (c->check == CHECK_DOCUMENT_GATE && method != ENGI_CAD_PCB_V2) {
			char cp[POINTER_MAX];
			engi_json_pointer(cp, sizeof(cp), ptr, "check");
			rc = engi_parse_error(err, file, cp,
					      "check 'document_gate' needs \"geometry\": "
					      "\"pcb-v2\" (a mesh is no document)");
			break;
		}
		if ((c->check == CHECK_SPEC || c->check == CHECK_PCB_SCORE) && !spec[0]) {
			char cp[POINTER_MAX];
			engi_json_pointer(cp, sizeof(cp), ptr, "check");
			rc = engi_parse_error(err, file, cp,
					      "check '%s' needs the verifier's \"spec\" (the "
					      "task's spec.json)",
					      check_names[c->check]);
			break;
		}
		int scored = c->check == CHECK_SIMILARITY || c->check == CHECK_SPEC ||
			     c->check == CHECK_PCB_SCORE;
		rc = engi_criterion_parse(
		    item, file, ptr, what,
		    scored ? (ENGI_CMP_VALUE | ENGI_CMP_RANGE) : ENGI_CMP_NONE,
		    c->check == CHECK_SPEC ? "specification" : "geometry", &c->c, err);
		if (rc == 0)
			rc = engi_criterion_name_unique(&cc->v[0].c, sizeof(cc->v[0]), i, 0, file,
							base, ptr, err);
	}
	if (rc < 0) {
		cad_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

static int cad_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		      struct engi_verdict *v, struct engi_error *err)
{
	const struct cad_criteria *cc = criteria;
	struct engi_cad_similarity s;
	if (cc->method == ENGI_CAD_PCB_V2)
		TRY(engi_cad_pcb_run(ctx, target, cc->reference, cc->spec[0] ? cc->spec : NULL, &s,
				     err));
	else
		TRY(engi_cad_similarity_run(ctx, target, cc->reference, cc->method, &s, err));
	if (s.status != ENGI_CAD_MEASURED) {
		/* a broken reference is ours to fix: unavailable; a broken
		 * delivery fails */
		int st = s.status == ENGI_CAD_NO_REFERENCE ? ENGI_UNAVAILABLE : ENGI_FAIL;
		for (size_t i = 0; i < cc->n; i++)
			TRY(engi_criterion_report(&cc->v[i].c, st, NAN, v, err, "%s", s.why));
		return engi_cad_similarity_record(&s, v, err);
	}
	for (size_t i = 0; i < cc->n; i++) {
		const struct cad_criterion *c = &cc->v[i];
		if (c->check == CHECK_SIMILARITY) {
			char note[400];
			if (s.method == ENGI_CAD_PCB_V2 && s.gate[0])
				snprintf(note, sizeof(note), "(" ENGI_PCB_SCORER ": %s gate: %s)",
					 s.gate, s.gate_why);
			else if (s.method == ENGI_CAD_PCB_V2)
				snprintf(note, sizeof(note),
					 "(" ENGI_PCB_SCORER ": surface types %.3g, volume %.3g, "
					 "area %.3g, moments %.3g credit; ICP %.3g, worst face "
					 "residual %.4g)",
					 s.s_surface, s.s_volume, s.s_area, s.s_moments, s.q_icp,
					 s.icp_d_max);
			else
				snprintf(
				    note, sizeof(note),
				    "(volume %.3g, area %.3g, moments %.3g credit; ICP %.3g%s)",
				    s.s_volume, s.s_area, s.s_moments, s.q_icp,
				    s.obb_ok && s.counts_ok ? "" : "; a gate failed");
			TRY(engi_criterion_judge(&c->c, "geometry similarity", s.score, note, v,
						 err));
		} else if ((c->check == CHECK_SPEC || c->check == CHECK_PCB_SCORE) &&
			   s.spec_state != ENGI_CAD_SPEC_MEASURED) {
			/* the benchmark's spec is at fault: never a score */
			TRY(engi_criterion_report(&c->c, ENGI_UNAVAILABLE, NAN, v, err, "%s",
						  s.spec_why));
		} else if (c->check == CHECK_SPEC) {
			char note[700];
			snprintf(note, sizeof(note),
				 "(" ENGI_PCB_SCORER ": %zu consistent, %zu inconsistent, %zu not "
				 "found; failure budget %d%s%s)",
				 s.spec_consistent, s.spec_inconsistent, s.spec_not_found,
				 ENGI_PCB_SPEC_BUDGET, s.spec_why[0] ? ": " : "", s.spec_why);
			TRY(engi_criterion_judge(&c->c, "spec consistency", s.spec_score, note, v,
						 err));
		} else if (c->check == CHECK_PCB_SCORE) {
			char note[200];
			snprintf(note, sizeof(note),
				 "(" ENGI_PCB_SCORER ": harmonic mean of geometry %.4g and spec "
				 "%.4g)",
				 s.score, s.spec_score);
			TRY(engi_criterion_judge(&c->c, "validator score", s.combined, note, v,
						 err));
		} else if (c->check == CHECK_DOCUMENT_GATE) {
			TRY(engi_criterion_report(
			    &c->c, s.doc_ok ? ENGI_PASS : ENGI_FAIL, s.doc_ok ? 1 : 0, v, err, "%s",
			    s.doc_ok
				? "one PartDesign Body with one solid, its Tip set and agreeing, "
				  "native features only"
				: s.gate_why));
		} else if (c->check == CHECK_OBB_GATE && isnan(s.e_obb)) {
			TRY(engi_criterion_report(&c->c, ENGI_FAIL, NAN, v, err,
						  "no oriented box to compare (none is made of a "
						  "shape over %d faces, or it could not be made)",
						  ENGI_PCB_MAX_FACES));
		} else if (c->check == CHECK_OBB_GATE) {
			TRY(engi_criterion_report(
			    &c->c, s.obb_ok ? ENGI_PASS : ENGI_FAIL, s.e_obb, v, err,
			    "oriented-box extents off by %.3g %% (gate: under "
			    "%.0f %%)",
			    100 * s.e_obb, 100 * ENGI_CAD_OBB_GATE));
		} else if (s.method == ENGI_CAD_PCB_V2) {
			TRY(engi_criterion_report(
			    &c->c, s.counts_ok ? ENGI_PASS : ENGI_FAIL, s.e_faces, v, err,
			    "B-rep faces %zu against %zu, vertices %zu against %zu (gates: at most "
			    "%d faces, counts within %.0f %% of the larger)",
			    s.faces[0], s.faces[1], s.vertices[0], s.vertices[1],
			    ENGI_PCB_MAX_FACES, 100 * ENGI_CAD_COUNT_GATE));
		} else {
			TRY(engi_criterion_report(
			    &c->c, s.counts_ok ? ENGI_PASS : ENGI_FAIL, s.e_faces, v, err,
			    "faces (patches) off by %.3g %%, vertices (their corners) by %.3g %% "
			    "(gate: at most %.0f %%)",
			    100 * s.e_faces, 100 * s.e_verts, 100 * ENGI_CAD_COUNT_GATE));
		}
	}
	return engi_cad_similarity_record(&s, v, err);
}

static size_t cad_names(const void *criteria, const char **out, size_t cap)
{
	const struct cad_criteria *cc = criteria;
	return engi_criteria_names(&cc->v[0].c, sizeof(cc->v[0]), cc->n, out, cap);
}

static const char *cad_scoring(const void *criteria)
{
	const struct cad_criteria *cc = criteria;
	return cc->method == ENGI_CAD_PCB_V2 ? "pcb-v2@0.6.0" : NULL;
}

const struct engi_verifier_kind engi_verifier_cad_similarity = {
    .name = "cad_similarity",
    .summary =
	"geometry similarity to a reference (meshes, or FreeCAD documents as pcb-v2 scores them)",
    .version = 1,
    .parse = cad_parse,
    .verify = cad_verify,
    .free_criteria = cad_free,
    .names = cad_names,
    .scoring = cad_scoring,
};
