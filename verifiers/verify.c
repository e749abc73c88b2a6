/*
 * Verdicts, scoring (tasks/SCHEMA.md, "Scoring"), the delivery check, and
 * the criterion helpers every kind uses.
 */
#include "engi/verify.h"

#include "engi/alloc.h"
#include "engi/mesh.h"
#include "engi/meshio.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define POINTER_MAX	 ENGI_POINTER_MAX
#define DELIVERED_PREFIX "delivered:"

const char *engi_astate_name(int state)
{
	switch (state) {
	case ENGI_PASS:
		return "pass";
	case ENGI_FAIL:
		return "fail";
	case ENGI_INAPPLICABLE:
		return "inapplicable";
	case ENGI_UNAVAILABLE:
		return "unavailable";
	}
	return "?";
}

void engi_verdict_init(struct engi_verdict *v)
{
	memset(v, 0, sizeof(*v));
}

void engi_verdict_release(struct engi_verdict *v)
{
	engi_free(v->a);
	engi_free(v->m);
	engi_verdict_init(v);
}

static void copy_field(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

int engi_verdict_add(struct engi_verdict *v, const char *name, const char *stage, int state,
		     int required, double value, double expected, const char *detail, ...)
{
	if (v->na == v->alloc_a) {
		if (v->na >= ENGI_VERDICT_ASSERTIONS_MAX)
			return ENGI_ETOOBIG;
		size_t n = v->alloc_a ? 2 * v->alloc_a : 16;
		if (n > ENGI_VERDICT_ASSERTIONS_MAX)
			n = ENGI_VERDICT_ASSERTIONS_MAX;
		struct engi_assertion *a = engi_reallocarray(v->a, n, sizeof(*a));
		if (!a)
			return ENGI_ENOMEM;
		v->a = a;
		v->alloc_a = n;
	}
	struct engi_assertion *a = &v->a[v->na++];
	memset(a, 0, sizeof(*a));
	copy_field(a->name, sizeof(a->name), name);
	copy_field(a->stage, sizeof(a->stage), stage);
	a->state = state;
	a->required = required ? 1 : 0;
	a->value = value;
	a->expected = expected;
	if (detail) {
		va_list ap;
		va_start(ap, detail);
		vsnprintf(a->detail, sizeof(a->detail), detail, ap);
		va_end(ap);
	}
	return 0;
}

int engi_verdict_metric(struct engi_verdict *v, const char *name, double value)
{
	for (size_t i = 0; i < v->nm; i++)
		if (!strncmp(v->m[i].name, name, ENGI_NAME_MAX - 1)) {
			v->m[i].value = value;
			return 0;
		}
	if (v->nm == v->alloc_m) {
		if (v->nm >= ENGI_VERDICT_METRICS_MAX)
			return ENGI_ETOOBIG;
		size_t n = v->alloc_m ? 2 * v->alloc_m : 16;
		if (n > ENGI_VERDICT_METRICS_MAX)
			n = ENGI_VERDICT_METRICS_MAX;
		struct engi_metric *m = engi_reallocarray(v->m, n, sizeof(*m));
		if (!m)
			return ENGI_ENOMEM;
		v->m = m;
		v->alloc_m = n;
	}
	struct engi_metric *m = &v->m[v->nm++];
	copy_field(m->name, sizeof(m->name), name);
	m->value = value;
	return 0;
}

int engi_verdict_get_metric(const struct engi_verdict *v, const char *name, double *value)
{
	for (size_t i = 0; i < v->nm; i++)
		if (!strncmp(v->m[i].name, name, ENGI_NAME_MAX - 1)) {
			*value = v->m[i].value;
			return 0;
		}
	return ENGI_ENOTFOUND;
}

static double clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* A metric for scoring: missing or NaN counts as the worst value. */
static int scoring_metric(const struct engi_verdict *v, const char *name, double *out)
{
	return engi_verdict_get_metric(v, name, out) == 0 && !isnan(*out);
}

static double optimization_quality(const struct engi_verdict *v,
				   const struct engi_scoring_spec *spec)
{
	double m;
	if (!scoring_metric(v, spec->metric, &m))
		return 0;
	if (spec->cost_based)
		return clamp01(1 - spec->lambda * m);
	double span = spec->reference - spec->baseline;
	if (span == 0 || !isfinite(span)) /* the loader rejects this; stay defined */
		return (spec->minimize ? m <= spec->reference : m >= spec->reference) ? 1 : 0;
	/* (m - baseline)/(reference - baseline) already points the right way for
	 * both senses: minimising, reference < baseline and both factors are
	 * negative for an improvement. */
	return clamp01((m - spec->baseline) / span);
}

void engi_verdict_score(struct engi_verdict *v, const struct engi_scoring_spec *spec)
{
	int all_pass = 1;
	for (size_t i = 0; i < v->na; i++) {
		const struct engi_assertion *a = &v->a[i];
		if (a->state == ENGI_INAPPLICABLE || !a->required)
			continue;
		if (a->state != ENGI_PASS) /* unavailable counts as failed */
			all_pass = 0;
	}
	v->feasible = all_pass;
	int mode = spec ? spec->mode : ENGI_SCORING_BINARY;
	if (mode == ENGI_SCORING_OPTIMIZATION) {
		v->quality = all_pass ? optimization_quality(v, spec) : 0;
		v->score = v->quality;
		v->success = all_pass && v->quality > 0;
	} else if (mode == ENGI_SCORING_CONTINUOUS) {
		double g = 0, s = 0;
		if (!scoring_metric(v, spec->geometry_metric, &g))
			g = 0;
		if (!scoring_metric(v, spec->spec_metric, &s))
			s = 0;
		g = clamp01(g);
		s = clamp01(s);
		/* required assertions act as gates: a failed one zeroes the reward */
		v->quality = all_pass && g > 0 && s > 0 ? 2 * g * s / (g + s) : 0;
		v->score = v->quality;
		v->success = v->quality >= 1;
	} else {
		v->success = all_pass;
		v->quality = all_pass ? 1 : 0;
		v->score = v->quality;
	}
}

/* The delivery check of target: delivered:TARGET passes for a regular file. */
static int check_delivered(const char *target, const struct engi_verify_ctx *ctx,
			   struct engi_verdict *v, struct engi_error *err)
{
	char name[ENGI_NAME_MAX];
	engi_delivered_name(name, sizeof(name), target);
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	struct stat st;
	int rc, req = !ctx->file_optional;
	if (n < 0 || (size_t)n >= sizeof(path))
		rc = engi_verdict_add(v, name, "delivery", ENGI_FAIL, req, NAN, NAN,
				      "path of '%s' is too long", target);
	else if (lstat(path, &st) < 0)
		rc = engi_verdict_add(v, name, "delivery", ENGI_FAIL, req, NAN, NAN,
				      "'%s' was not delivered%s", target,
				      req ? "" : " (an optional deliverable)");
	else if (!S_ISREG(st.st_mode))
		rc = engi_verdict_add(v, name, "delivery", ENGI_FAIL, req, NAN, NAN,
				      "'%s' is not a regular file", target);
	else
		rc = engi_verdict_add(v, name, "delivery", ENGI_PASS, req, (double)st.st_size, NAN,
				      "'%s' delivered, %lld bytes", target, (long long)st.st_size);
	if (rc < 0)
		RAISE(err, rc, "cannot record assertion '%s': %s", name, engi_strerror(rc));
	return 0;
}

int engi_verify_file(const struct engi_verifier_kind *kind, const void *criteria,
		     const char *target, const struct engi_verify_ctx *ctx, struct engi_verdict *v,
		     struct engi_error *err)
{
	BUG_ON(!kind || !target || !ctx || !ctx->artifact_dir);
	TRY(check_delivered(target, ctx, v, err));
	if (!kind->verify)
		RAISE(err, ENGI_ENOTSUP, "verifier kind '%s' judges in an environment, not files",
		      kind->name);
	return kind->verify(criteria, target, ctx, v, err);
}

int engi_verifier_env(const struct engi_verifier_kind *kind, const void *criteria)
{
	return kind && kind->env ? kind->env(criteria) : ENGI_VENV_NONE;
}

int engi_verify_in_env(const struct engi_verifier_kind *kind, const void *criteria,
		       const char *target, const struct engi_verify_env_ops *env,
		       const struct engi_verify_ctx *ctx, struct engi_verdict *v,
		       struct engi_error *err)
{
	BUG_ON(!kind || !target || !env || !ctx || !ctx->artifact_dir);
	TRY(check_delivered(target, ctx, v, err));
	if (!kind->verify_env)
		RAISE(err, ENGI_ENOTSUP, "verifier kind '%s' does not judge in an environment",
		      kind->name);
	return kind->verify_env(criteria, env, ctx, v, err);
}

void engi_delivered_name(char *out, size_t cap, const char *target)
{
	snprintf(out, cap, "%s%s", DELIVERED_PREFIX, target);
}

int engi_verify_resolve(const struct engi_verifier_kind *kind, const void *criteria,
			struct engi_verdict *v, struct engi_error *err)
{
	if (!kind || !kind->resolve)
		return 0;
	return kind->resolve(criteria, v, err);
}

void engi_verifier_free(const struct engi_verifier_kind *kind, void *criteria)
{
	if (kind && criteria && kind->free_criteria)
		kind->free_criteria(criteria);
}

/* ---- criterion helpers ---- */

int engi_criterion_name_unique(const struct engi_criterion *first, size_t stride, size_t i,
			       size_t skip, const char *file, const char *base, const char *pointer,
			       struct engi_error *err)
{
	const char *at = (const char *)first;
	const char *name = ((const struct engi_criterion *)(at + i * stride))->name;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(((const struct engi_criterion *)(at + j * stride))->name, name)) {
			char p[POINTER_MAX];
			engi_json_pointer(p, sizeof(p), pointer, "name");
			return engi_parse_error(err, file, p, "'%s' is already %s/%zu", name + skip,
						base, j);
		}
	return 0;
}

size_t engi_criteria_names(const struct engi_criterion *first, size_t stride, size_t n,
			   const char **out, size_t cap)
{
	const char *at = (const char *)first;
	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = ((const struct engi_criterion *)(at + i * stride))->name;
	return n;
}

int engi_criteria_array(json_t *verifier, const char *file, const char *pointer, json_t **criteria,
			struct engi_error *err)
{
	json_t *arr;
	TRY(engi_json_field(verifier, "criteria", JSON_ARRAY, 1, file, pointer, &arr, err));
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), pointer, "criteria");
	size_t n = json_array_size(arr);
	if (n == 0)
		return engi_parse_error(err, file, p, "needs at least one criterion");
	if (n > ENGI_CRITERIA_MAX)
		return engi_parse_error(err, file, p, "%zu criteria, over the cap of %d", n,
					ENGI_CRITERIA_MAX);
	for (size_t i = 0; i < n; i++) {
		char pi[POINTER_MAX];
		engi_json_pointer_index(pi, sizeof(pi), p, i);
		TRY(engi_json_expect(json_array_get(arr, i), JSON_OBJECT, file, pi, err));
	}
	*criteria = arr;
	return 0;
}

static int parse_string(json_t *item, const char *key, const char *file, const char *pointer,
			size_t cap, char *out, int required, struct engi_error *err)
{
	json_t *j;
	TRY(engi_json_field(item, key, JSON_STRING, required, file, pointer, &j, err));
	if (!j)
		return 0;
	size_t n = json_string_length(j);
	const char *s = json_string_value(j);
	if (n == 0 || n >= cap || strlen(s) != n) {
		char p[POINTER_MAX];
		engi_json_pointer(p, sizeof(p), pointer, key);
		return engi_parse_error(err, file, p, "must be 1 to %zu characters", cap - 1);
	}
	memcpy(out, s, n + 1);
	return 0;
}

static const char *cmp_words(unsigned allowed)
{
	switch (allowed & (ENGI_CMP_EQUALS | ENGI_CMP_VALUE | ENGI_CMP_RANGE)) {
	case ENGI_CMP_EQUALS | ENGI_CMP_VALUE | ENGI_CMP_RANGE:
		return "equals, value, or min and/or max";
	case ENGI_CMP_VALUE | ENGI_CMP_RANGE:
		return "value, or min and/or max";
	case ENGI_CMP_EQUALS | ENGI_CMP_RANGE:
		return "equals, or min and/or max";
	case ENGI_CMP_EQUALS:
		return "equals";
	case ENGI_CMP_VALUE:
		return "value";
	case ENGI_CMP_RANGE:
		return "min and/or max";
	}
	return "none";
}

int engi_criterion_parse(json_t *item, const char *file, const char *pointer, const char *what,
			 unsigned allowed, const char *default_stage, struct engi_criterion *c,
			 struct engi_error *err)
{
	char p[POINTER_MAX];
	memset(c, 0, sizeof(*c));
	c->required = 1;
	c->min = -INFINITY;
	c->max = INFINITY;
	c->value = c->tol_rel = c->tol_abs = NAN;

	TRY(parse_string(item, "name", file, pointer, sizeof(c->name), c->name, 1, err));
	if (!engi_json_name_valid(c->name, strlen(c->name))) {
		engi_json_pointer(p, sizeof(p), pointer, "name");
		return engi_parse_error(
		    err, file, p, "'%s' is not a valid name ([A-Za-z0-9][A-Za-z0-9._-]*)", c->name);
	}
	snprintf(c->stage, sizeof(c->stage), "%s", default_stage);
	TRY(parse_string(item, "stage", file, pointer, sizeof(c->stage), c->stage, 0, err));
	TRY(engi_json_bool(item, "required", 1, file, pointer, &c->required, err));

	/* Which comparator keys are present, in a fixed order for messages. */
	static const char *const keys[] = {"equals", "value", "tol_rel", "tol_abs", "min", "max"};
	json_t *k[6];
	int nk = 0;
	for (int i = 0; i < 6; i++) {
		k[i] = json_object_get(item, keys[i]);
		nk += k[i] != NULL;
	}
	if (allowed == ENGI_CMP_NONE) {
		for (int i = 0; i < 6; i++)
			if (k[i]) {
				engi_json_pointer(p, sizeof(p), pointer, keys[i]);
				return engi_parse_error(err, file, p, "%s takes no comparator",
							what);
			}
		c->cmp = ENGI_CMP_NONE;
		return 0;
	}
	if (nk == 0)
		return engi_parse_error(err, file, pointer, "%s needs a comparator (%s)", what,
					cmp_words(allowed));
	int has_range = k[4] || k[5];
	if ((k[0] != NULL) + (k[1] != NULL) + has_range > 1)
		return engi_parse_error(err, file, pointer,
					"give one comparator: equals, value, or min and/or max");
	for (int i = 0; i < 6; i++) {
		if (!k[i])
			continue;
		engi_json_pointer(p, sizeof(p), pointer, keys[i]);
		TRY(engi_json_expect(k[i], i == 0 ? JSON_INTEGER : JSON_REAL, file, p, err));
		if (i > 0 && !isfinite(json_number_value(k[i])))
			return engi_parse_error(err, file, p, "must be finite");
	}
	if (!k[1]) {
		for (int i = 2; i < 4; i++)
			if (k[i]) {
				engi_json_pointer(p, sizeof(p), pointer, keys[i]);
				return engi_parse_error(err, file, p, "only applies with value");
			}
	}
	if (k[0]) {
		engi_json_pointer(p, sizeof(p), pointer, "equals");
		if (!(allowed & ENGI_CMP_EQUALS))
			return engi_parse_error(err, file, p, "%s is not an integer count; use %s",
						what, cmp_words(allowed));
		c->cmp = ENGI_CMP_EQUALS;
		c->equals = json_integer_value(k[0]);
		return 0;
	}
	if (k[1]) {
		if (!(allowed & ENGI_CMP_VALUE)) {
			engi_json_pointer(p, sizeof(p), pointer, "value");
			return engi_parse_error(err, file, p, "%s does not take value; use %s",
						what, cmp_words(allowed));
		}
		c->cmp = ENGI_CMP_VALUE;
		c->value = json_number_value(k[1]);
		c->tol_rel = k[2] ? json_number_value(k[2]) : k[3] ? 0 : ENGI_TOL_REL_DEFAULT;
		c->tol_abs = k[3] ? json_number_value(k[3]) : 0;
		for (int i = 2; i < 4; i++) {
			if (k[i] && json_number_value(k[i]) < 0) {
				engi_json_pointer(p, sizeof(p), pointer, keys[i]);
				return engi_parse_error(err, file, p, "must be at least 0");
			}
		}
		return 0;
	}
	if (!(allowed & ENGI_CMP_RANGE)) {
		engi_json_pointer(p, sizeof(p), pointer, k[4] ? "min" : "max");
		return engi_parse_error(err, file, p, "%s does not take bounds; use %s", what,
					cmp_words(allowed));
	}
	c->cmp = ENGI_CMP_RANGE;
	if (k[4])
		c->min = json_number_value(k[4]);
	if (k[5])
		c->max = json_number_value(k[5]);
	if (c->min > c->max) {
		engi_json_pointer(p, sizeof(p), pointer, "max");
		return engi_parse_error(err, file, p, "must be at least min (%.17g)", c->min);
	}
	return 0;
}

int engi_criterion_holds(const struct engi_criterion *c, double m)
{
	if (isnan(m))
		return 0;
	switch (c->cmp) {
	case ENGI_CMP_EQUALS:
		return m == (double)c->equals;
	case ENGI_CMP_VALUE: {
		double tol = c->tol_rel * fabs(c->value);
		if (c->tol_abs > tol)
			tol = c->tol_abs;
		return fabs(m - c->value) <= tol;
	}
	case ENGI_CMP_RANGE:
		return m >= c->min && m <= c->max;
	}
	return m != 0; /* a boolean check: 1 passes */
}

double engi_criterion_expected(const struct engi_criterion *c)
{
	switch (c->cmp) {
	case ENGI_CMP_EQUALS:
		return (double)c->equals;
	case ENGI_CMP_VALUE:
		return c->value;
	case ENGI_CMP_RANGE:
		return isfinite(c->min) ? c->min : c->max;
	}
	return 1;
}

int engi_criterion_judge(const struct engi_criterion *c, const char *label, double measured,
			 const char *note, struct engi_verdict *v, struct engi_error *err)
{
	char how[160];
	switch (c->cmp) {
	case ENGI_CMP_EQUALS:
		snprintf(how, sizeof(how), ", expected %lld", c->equals);
		break;
	case ENGI_CMP_VALUE:
		if (c->tol_rel * fabs(c->value) >= c->tol_abs)
			snprintf(how, sizeof(how), " vs %.8g ± %g%%", c->value, 100 * c->tol_rel);
		else
			snprintf(how, sizeof(how), " vs %.8g ± %g", c->value, c->tol_abs);
		break;
	case ENGI_CMP_RANGE:
		if (isfinite(c->min) && isfinite(c->max))
			snprintf(how, sizeof(how), ", expected in [%.8g, %.8g]", c->min, c->max);
		else if (isfinite(c->min))
			snprintf(how, sizeof(how), ", expected at least %.8g", c->min);
		else
			snprintf(how, sizeof(how), ", expected at most %.8g", c->max);
		break;
	default:
		how[0] = '\0';
	}
	int state = engi_criterion_holds(c, measured) ? ENGI_PASS : ENGI_FAIL;
	return engi_criterion_report(c, state, measured, v, err, "%s %.8g%s%s%s", label, measured,
				     how, note ? " " : "", note ? note : "");
}

int engi_criterion_report(const struct engi_criterion *c, int state, double value,
			  struct engi_verdict *v, struct engi_error *err, const char *detail, ...)
{
	char text[ENGI_DETAIL_MAX];
	va_list ap;
	va_start(ap, detail);
	vsnprintf(text, sizeof(text), detail, ap);
	va_end(ap);
	int rc = engi_verdict_add(v, c->name, c->stage, state, c->required, value,
				  engi_criterion_expected(c), "%s", text);
	if (rc < 0)
		RAISE(err, rc, "cannot record assertion '%s': %s", c->name, engi_strerror(rc));
	return 0;
}

int engi_verify_load_mesh(const struct engi_verify_ctx *ctx, const char *target, int stl_only,
			  size_t max_tris, double weld_tol, struct engi_mesh *m,
			  struct engi_mesh_report *r, struct engi_error *e)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	if (n < 0 || (size_t)n >= sizeof(path))
		RAISE(e, ENGI_EINVALID, "cannot read %s '%s': path too long",
		      stl_only ? "STL" : "mesh", target);
	TRY(stl_only ? engi_stl_read(path, m, max_tris, e)
		     : engi_mesh_read(path, m, max_tris, max_tris, e));
	TRY(engi_mesh_weld(m, weld_tol, e));
	return engi_mesh_analyze(m, r, e);
}
