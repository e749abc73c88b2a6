/*
 * Verifier kind "structural": the delivered structural model (JSON,
 * tasks/SCHEMA-structural.md) is matched strictly against the task's
 * reference model, then re-solved and its displacements, reactions and
 * member end forces compared with the frozen truth (`engisweep truth`).
 *
 * Assertions, all required, stage "model" then "results": nodes, elements,
 * restraints, properties, loads, combinations (precision and recall 1, no
 * mismatch), solves, displacements, reactions, member_forces (every
 * compared value within result_tol_rel or result_tol_abs). Results are
 * unavailable when the model does not match: numbers of a different model
 * mean nothing.
 */
#include "engi/verify.h"

#include "engi/alloc.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct structural_criteria {
	char reference[PATH_MAX], truth[PATH_MAX];
	struct engi_match_tol tol;
	double result_rel, result_abs;
};

static void structural_free(void *criteria)
{
	engi_free(criteria);
}

static int rel_path(json_t *ver, const char *key, const char *file, const char *pointer, char *out,
		    struct engi_error *err)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), pointer, key);
	json_t *j = json_object_get(ver, key);
	if (!json_is_string(j))
		return engi_parse_error(err, file, p,
					"expected a path relative to the task folder");
	const char *s = json_string_value(j);
	if (!*s || s[0] == '/' || strstr(s, "..") || strlen(s) >= PATH_MAX)
		return engi_parse_error(err, file, p, "'%s' must stay inside the task folder", s);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int structural_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
			    void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind",	     "file",	       "reference",
					   "truth",	     "node_tol",       "prop_tol_rel",
					   "result_tol_rel", "result_tol_abs", NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	struct structural_criteria *c = engi_calloc(1, sizeof(*c));
	if (!c)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	c->tol.node_dist = ENGI_MATCH_NODE_DIST;
	c->tol.prop_rel = ENGI_MATCH_PROP_REL;
	c->result_rel = ENGI_STRUCT_RESULT_REL;
	c->result_abs = ENGI_STRUCT_RESULT_ABS;
	int present, rc = rel_path(ver, "reference", file, pointer, c->reference, err);
	if (rc == 0)
		rc = rel_path(ver, "truth", file, pointer, c->truth, err);
	struct {
		const char *key;
		double *v;
	} nums[] = {{"node_tol", &c->tol.node_dist},
		    {"prop_tol_rel", &c->tol.prop_rel},
		    {"result_tol_rel", &c->result_rel},
		    {"result_tol_abs", &c->result_abs}};
	for (size_t i = 0; i < 4 && rc == 0; i++) {
		rc = engi_json_number(ver, nums[i].key, file, pointer, &present, nums[i].v, err);
		if (rc == 0 && present && !(*nums[i].v >= 0)) {
			char p[ENGI_POINTER_MAX];
			engi_json_pointer(p, sizeof(p), pointer, nums[i].key);
			rc = engi_parse_error(err, file, p, "must not be negative");
		}
	}
	if (rc < 0) {
		engi_free(c);
		return rc;
	}
	*criteria = c;
	return 0;
}

static int add(struct engi_verdict *v, const char *name, const char *stage, int pass, double value,
	       double expected, const char *detail)
{
	return engi_verdict_add(v, name, stage, pass ? ENGI_PASS : ENGI_FAIL, 1, value, expected,
				"%s", detail);
}

static int unavailable(struct engi_verdict *v, const char *stage, const char *const *names,
		       const char *why)
{
	for (size_t i = 0; names[i]; i++)
		TRY(engi_verdict_add(v, names[i], stage, ENGI_UNAVAILABLE, 1, NAN, NAN, "%s", why));
	return 0;
}

static const char *const model_names[] = {"nodes", "elements",	   "restraints", "properties",
					  "loads", "combinations", NULL};
static const char *const result_names[] = {"solves", "displacements", "reactions", "member_forces",
					   NULL};

static int structural_verify(const void *criteria, const char *target,
			     const struct engi_verify_ctx *ctx, struct engi_verdict *v,
			     struct engi_error *err)
{
	const struct structural_criteria *c = criteria;
	char path[PATH_MAX * 2];
	struct engi_error e;
	struct engi_structural ref, cand;
	struct engi_structural_truth truth;
	struct engi_match m;
	struct engi_frame_result r;
	engi_structural_init(&ref);
	engi_structural_init(&cand);
	engi_structural_truth_init(&truth);
	engi_match_init(&m);
	engi_frame_result_init(&r);
	engi_error_init(&e);
	int rc = 0;
	/* the task's own files: failing to read them is the task's fault */
	snprintf(path, sizeof(path), "%s/%s", ctx->task_dir, c->reference);
	int trc = engi_structural_read(path, &ref, &e);
	if (trc == 0) {
		snprintf(path, sizeof(path), "%s/%s", ctx->task_dir, c->truth);
		trc = engi_structural_truth_read(path, &truth, &e);
	}
	if (trc == ENGI_ENOMEM) {
		rc = engi_raise(err, trc, "%s", e.msg);
		goto out;
	}
	if (trc < 0) {
		char why[ENGI_ERROR_MSG_MAX + 32];
		snprintf(why, sizeof(why), "task reference: %s", e.msg);
		if ((rc = unavailable(v, "model", model_names, why)) == 0)
			rc = unavailable(v, "results", result_names, why);
		goto out;
	}
	engi_error_init(&e);
	snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	int crc = engi_structural_read(path, &cand, &e);
	if (crc == ENGI_ENOMEM) {
		rc = engi_raise(err, crc, "%s", e.msg);
		goto out;
	}
	if (crc < 0) {
		/* the reader names the file by its full path; the detail keeps it */
		for (size_t i = 0; model_names[i] && rc == 0; i++)
			rc = engi_verdict_add(v, model_names[i], "model", ENGI_FAIL, 1, NAN, NAN,
					      "%s", e.msg);
		if (rc == 0)
			rc = unavailable(v, "results", result_names,
					 "the delivered model does not read");
		goto out;
	}
	if ((rc = engi_structural_match(&ref, &cand, &c->tol, &m, err)) < 0)
		goto out;
	char d[ENGI_DETAIL_MAX];
	snprintf(d, sizeof(d), "%zu of %zu reference nodes paired, %zu delivered", m.matched_nodes,
		 m.ref_nodes, m.cand_nodes);
	rc = add(v, "nodes", "model",
		 m.matched_nodes == m.ref_nodes && m.matched_nodes == m.cand_nodes,
		 (double)m.matched_nodes, (double)m.ref_nodes, d);
	snprintf(d, sizeof(d), "%zu of %zu reference elements paired, %zu delivered",
		 m.matched_elems, m.ref_elems, m.cand_elems);
	if (rc == 0)
		rc = add(v, "elements", "model",
			 m.matched_elems == m.ref_elems && m.matched_elems == m.cand_elems,
			 (double)m.matched_elems, (double)m.ref_elems, d);
	snprintf(d, sizeof(d), "%zu paired nodes restrained differently", m.restraint_mismatch);
	if (rc == 0)
		rc = add(v, "restraints", "model", !m.restraint_mismatch,
			 (double)m.restraint_mismatch, 0, d);
	snprintf(d, sizeof(d),
		 "%zu paired elements with properties or releases off by more than %g",
		 m.property_mismatch, c->tol.prop_rel);
	if (rc == 0)
		rc = add(v, "properties", "model", !m.property_mismatch,
			 (double)m.property_mismatch, 0, d);
	snprintf(d, sizeof(d), "%zu of %zu reference loads matched, %zu delivered", m.matched_loads,
		 m.ref_loads, m.cand_loads);
	if (rc == 0)
		rc = add(v, "loads", "model",
			 m.matched_loads == m.ref_loads && m.matched_loads == m.cand_loads,
			 (double)m.matched_loads, (double)m.ref_loads, d);
	snprintf(d, sizeof(d), "%zu combinations without a counterpart", m.combo_mismatch);
	if (rc == 0)
		rc = add(v, "combinations", "model", !m.combo_mismatch, (double)m.combo_mismatch, 0,
			 d);
	if (rc < 0)
		goto out;
	if (!engi_match_perfect(&m)) {
		snprintf(d, sizeof(d), "the model does not match: %s", m.first_problem);
		rc = unavailable(v, "results", result_names, d);
		goto out;
	}
	engi_error_init(&e);
	int src = engi_frame_solve(&cand.f, NULL, &r, &e);
	if (src == ENGI_ENOMEM) {
		rc = engi_raise(err, src, "%s", e.msg);
		goto out;
	}
	if (src < 0) {
		if ((rc = add(v, "solves", "results", 0, NAN, NAN, e.msg)) == 0)
			rc =
			    unavailable(v, "results", result_names + 1, "the model does not solve");
		goto out;
	}
	if ((rc = add(v, "solves", "results", 1, NAN, NAN, "")) < 0)
		goto out;
	struct engi_structural_cmp cmp;
	if ((rc = engi_structural_compare(&truth, &cand, &r, &m, c->result_rel, c->result_abs, &cmp,
					  err)) < 0)
		goto out;
	snprintf(d, sizeof(d), "worst |error| / tolerance %.3g%s%s", cmp.u_ratio,
		 cmp.u_ratio > 1 ? "; " : "", cmp.u_ratio > 1 ? cmp.where : "");
	rc = add(v, "displacements", "results", cmp.u_ratio <= 1, cmp.u_ratio, 1, d);
	snprintf(d, sizeof(d), "worst |error| / tolerance %.3g", cmp.reaction_ratio);
	if (rc == 0)
		rc = add(v, "reactions", "results", cmp.reaction_ratio <= 1, cmp.reaction_ratio, 1,
			 d);
	snprintf(d, sizeof(d),
		 "worst |error| / tolerance %.3g (reversed members compared end by end)",
		 cmp.force_ratio);
	if (rc == 0)
		rc =
		    add(v, "member_forces", "results", cmp.force_ratio <= 1, cmp.force_ratio, 1, d);
	if (rc == 0 && r.nstates)
		rc = engi_verdict_metric(v, "max_u", r.state[0].max_u);
out:
	engi_frame_result_release(&r);
	engi_match_release(&m);
	engi_structural_truth_release(&truth);
	engi_structural_release(&cand);
	engi_structural_release(&ref);
	return rc;
}

/* Every model and result check, whatever the criteria. */
static size_t structural_names(const void *criteria, const char **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; model_names[i]; i++, n++)
		if (n < cap)
			out[n] = model_names[i];
	for (size_t i = 0; result_names[i]; i++, n++)
		if (n < cap)
			out[n] = result_names[i];
	return n;
}

const struct engi_verifier_kind engi_verifier_structural = {
    .name = "structural",
    .summary = "structural model JSON: strict model matching, then re-solved results vs truth",
    .version = 2, /* 2: states paired as the match pairs load cases */
    .parse = structural_parse,
    .verify = structural_verify,
    .free_criteria = structural_free,
    .names = structural_names,
};
