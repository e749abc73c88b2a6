/*
 * Verifier kind "structureclaw": StructureClaw-Bench's assertions on what
 * an agent delivered (tasks/SCHEMA-structural.md, "Verifier kind
 * structureclaw"). The benchmark judges its agent's state (the model, the
 * analysis result, the report); here the agent delivers them as files: the
 * verifier's file (a structural model in StructureClaw's format or ours),
 * and the files the criteria name, all taken from the deliverables.
 *
 *   {"kind": "structureclaw", "file": "model.json", "criteria": [
 *     {"name": "has_model", "check": "has_model", "min_nodes": 2, "min_elements": 1},
 *     {"name": "model_matches", "check": "model_matches",
 *      "reference": "fixtures/ground-truth-models.json", "id": "beam-simple-6m"},
 *     {"name": "strict", "check": "model_matches_strict",
 *      "reference": "fixtures/ground-truth-models.json", "id": "beam-simple-6m"},
 *     {"name": "has_analysis", "check": "has_analysis", "file": "analysis.json"},
 *     {"name": "has_report", "check": "has_report", "file": "report.md"},
 *     {"name": "no_bad_model", "check": "no_bad_model"},
 *     {"name": "should_not_analyze", "check": "no_analysis"},
 *     {"name": "skill_match", "check": "inapplicable", "reason": "..."},
 *     {"name": "either", "check": "any_of", "of": ["has_analysis", "asked"]}]}
 *
 * The reference entry is read when the task loads (its absence is the
 * task's error); any_of is judged on the episode's whole verdict
 * (engi_verify_resolve), once every other assertion is in. Every file is
 * read under a cap; a file that is missing, too big, not JSON or not a
 * model fails the criteria that need it, with the reason as detail.
 */
#include "engi/verify.h"

#include "engi/alloc.h"
#include "engi/slurp.h"
#include "engi/structural.h"
#include "engi/truth.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCK_PATH_MAX	 256
#define SCK_FILE_MAX	 ((size_t)64 << 20) /* model, analysis, reference list */
#define SCK_REPORT_MAX	 ((size_t)64 << 20) /* read to count its characters */
#define SCK_OF_MAX	 16
#define SCK_REASON_MAX	 200
#define SCK_SPAN_TOL	 0.5
#define SCK_LOAD_TOL	 0.2
#define SCK_COUNT_MAX	 ENGI_STRUCT_MAX_ENTITIES
#define SCK_CHARS_MAX	 1000000000L
#define POINTER_MAX	 ENGI_POINTER_MAX
#define DEFAULT_ANALYSIS "analysis.json"
#define DEFAULT_REPORT	 "report.md"
#define INAPPLICABLE_WHY "not judged in this environment"

enum sck_check {
	CHECK_HAS_MODEL,
	CHECK_NO_BAD_MODEL,
	CHECK_MODEL_MATCHES,
	CHECK_MODEL_STRICT,
	CHECK_HAS_ANALYSIS,
	CHECK_NO_ANALYSIS,
	CHECK_HAS_REPORT,
	CHECK_INAPPLICABLE,
	CHECK_ANY_OF,
	CHECK_ANALYSIS_MATCHES,
	CHECK_RESPONSES_MATCH,
	CHECK_REPORT_MATCHES,
};

static const char *const check_names[] = {"has_model",
					  "no_bad_model",
					  "model_matches",
					  "model_matches_strict",
					  "has_analysis",
					  "no_analysis",
					  "has_report",
					  "inapplicable",
					  "any_of",
					  "analysis_matches",
					  "responses_match",
					  "report_matches",
					  NULL};

static const char *const default_stage[] = {"model",	"model",    "model",   "model",
					    "analysis", "analysis", "report",  "skill",
					    "outcome",	"analysis", "results", "report"};

/* The keys each check takes besides name, check, stage and required. */
static const char *const *const check_keys[] = {
    (const char *const[]){"min_nodes", "min_elements", NULL},
    (const char *const[]){NULL},
    (const char *const[]){"reference", "id", "span_tol", "load_tol", NULL},
    (const char *const[]){"reference", "id", "node_tol", "prop_tol_rel", NULL},
    (const char *const[]){"file", NULL},
    (const char *const[]){"file", NULL},
    (const char *const[]){"file", "min_chars", NULL},
    (const char *const[]){"reason", NULL},
    (const char *const[]){"of", NULL},
    (const char *const[]){"file", "tol_rel", "tol_abs", NULL},
    (const char *const[]){"reference", "id", "node_tol", "prop_tol_rel", "tol_rel", "tol_abs",
			  NULL},
    (const char *const[]){"file", "reference", "id", "tol_rel", NULL},
};

/* The reference entry of model_matches, model_matches_strict and
 * responses_match (which also has its truth: two solves that agree). */
struct sck_ref {
	char label[SCK_PATH_MAX + 80]; /* "PATH 'ID'", for details */
	struct engi_structural s;
	struct engi_structural_extent x;
	int has_truth;
	struct engi_structural_truth truth;
};

struct sck_criterion {
	struct engi_criterion c;
	int check;
	long min_nodes, min_elements, min_chars;
	double span_tol, load_tol;
	double tol_rel, tol_abs; /* analysis_matches */
	struct engi_match_tol tol;
	char file[SCK_PATH_MAX];
	char reason[SCK_REASON_MAX];
	struct sck_ref *ref;
	size_t nof;
	char of[SCK_OF_MAX][ENGI_NAME_MAX];
};

struct sck_criteria {
	size_t n;
	struct sck_criterion v[];
};

static void sck_free(void *criteria)
{
	struct sck_criteria *cc = criteria;
	if (!cc)
		return;
	for (size_t i = 0; i < cc->n; i++)
		if (cc->v[i].ref) {
			engi_structural_release(&cc->v[i].ref->s);
			engi_structural_truth_release(&cc->v[i].ref->truth);
			engi_free(cc->v[i].ref);
		}
	engi_free(cc);
}

/* A path inside a folder (the deliverables or the task's): relative, no
 * "..", no control characters, shorter than cap. */
static int inside_path(json_t *item, const char *key, const char *dflt, const char *what,
		       const char *file, const char *ptr, char *out, size_t cap,
		       struct engi_error *err)
{
	const char *s = NULL;
	TRY(engi_json_string(item, key, dflt == NULL, 1, file, ptr, &s, err));
	if (!s)
		s = dflt;
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	size_t n = strlen(s);
	if (n >= cap)
		return engi_parse_error(err, file, p, "longer than %zu bytes", cap - 1);
	int bad = s[0] == '/' || !strcmp(s, "..") || !strncmp(s, "../", 3) || strstr(s, "/../") ||
		  (n >= 3 && !strcmp(s + n - 3, "/.."));
	for (size_t i = 0; i < n && !bad; i++)
		bad = (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
	if (bad)
		return engi_parse_error(err, file, p, "'%s' must be a path inside %s", s, what);
	memcpy(out, s, n + 1);
	return 0;
}

/* The truth of a reference: two solves (engi/truth.h) that agree and hold
 * equilibrium, else the task's error (a mechanism names its node). */
static int ref_truth(json_t *item, const char *file, const char *ptr, struct sck_criterion *c,
		     struct engi_error *err)
{
	(void)item;
	char pid[POINTER_MAX];
	engi_json_pointer(pid, sizeof(pid), ptr, "id");
	struct engi_truth_check chk;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_structural_truth_build(&c->ref->s, &c->ref->truth, &chk, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0)
		return engi_parse_error(err, file, pid, "%s has no truth: %s", c->ref->label,
					e.msg);
	if (!engi_truth_accepted(&chk))
		return engi_parse_error(err, file, pid,
					"%s has no truth: its two solves agree to %.3g, "
					"equilibrium to %.3g",
					c->ref->label, chk.agreement_rel, chk.equilibrium_rel);
	c->ref->has_truth = 1;
	return 0;
}

static int count_key(json_t *item, const char *key, long dflt, long max, const char *file,
		     const char *ptr, long *out, struct engi_error *err)
{
	return engi_json_int(item, key, 0, max, dflt, file, ptr, out, err);
}

/* The reference list (a JSON array of {"id", "model"}) read from the task's
 * folder, the entry id converted. A missing file or entry, or a model that
 * does not read, is the task's error. */
static int load_ref(json_t *item, const char *file, const char *dir, const char *ptr,
		    struct sck_criterion *c, struct engi_error *err)
{
	char rel[SCK_PATH_MAX], p[POINTER_MAX], pid[POINTER_MAX];
	const char *id = NULL;
	TRY(inside_path(item, "reference", NULL, "the task folder", file, ptr, rel, sizeof(rel),
			err));
	TRY(engi_json_string(item, "id", 1, 1, file, ptr, &id, err));
	engi_json_pointer(p, sizeof(p), ptr, "reference");
	engi_json_pointer(pid, sizeof(pid), ptr, "id");
	if (strlen(id) > 200)
		return engi_parse_error(err, file, pid, "longer than 200 bytes");
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path))
		return engi_parse_error(err, file, p, "the path is too long");
	c->ref = engi_calloc(1, sizeof(*c->ref));
	if (!c->ref)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	engi_structural_init(&c->ref->s);
	engi_structural_truth_init(&c->ref->truth);
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_structural_read_entry(path, rel, id, &c->ref->s, c->ref->label,
					    sizeof(c->ref->label), &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) /* the file's problems at reference, the entry's at id */
		return engi_parse_error(err, file, rc == ENGI_EIO || rc == ENGI_EPARSE ? p : pid,
					"%s", e.msg);
	engi_structural_extent(&c->ref->s, &c->ref->x);
	return 0;
}

static int tol_key(json_t *item, const char *key, double dflt, const char *file, const char *ptr,
		   double *out, struct engi_error *err)
{
	return engi_json_number_min(item, key, 0, dflt, file, ptr, out, err);
}

static int parse_of(json_t *item, const char *file, const char *ptr, struct sck_criterion *c,
		    struct engi_error *err)
{
	json_t *a;
	char p[POINTER_MAX];
	TRY(engi_json_field(item, "of", JSON_ARRAY, 1, file, ptr, &a, err));
	engi_json_pointer(p, sizeof(p), ptr, "of");
	size_t n = json_array_size(a);
	if (n == 0 || n > SCK_OF_MAX)
		return engi_parse_error(err, file, p, "expected 1 to %d assertion names, found %zu",
					SCK_OF_MAX, n);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		char pi[POINTER_MAX];
		engi_json_pointer_index(pi, sizeof(pi), p, i);
		if (!json_is_string(x) || json_string_length(x) == 0 ||
		    json_string_length(x) >= ENGI_NAME_MAX ||
		    strlen(json_string_value(x)) != json_string_length(x))
			return engi_parse_error(err, file, pi,
						"expected the name of an assertion (1 to %d "
						"characters)",
						ENGI_NAME_MAX - 1);
		const char *s = json_string_value(x);
		if (!strcmp(s, c->c.name))
			return engi_parse_error(err, file, pi, "'%s' is this criterion", s);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->of[j], s))
				return engi_parse_error(err, file, pi, "'%s' is already %s/%zu", s,
							p, j);
		memcpy(c->of[i], s, strlen(s) + 1);
	}
	c->nof = n;
	return 0;
}

static int parse_item(json_t *item, const char *file, const char *dir, const char *ptr,
		      struct sck_criterion *c, struct engi_error *err)
{
	static const char *const common[] = {"name", "check", "stage", "required"};
	char p[POINTER_MAX];
	TRY(engi_json_choice(item, "check", check_names, "check", 1, file, ptr, &c->check, err));
	const char *allowed[16];
	size_t na = 0;
	for (size_t i = 0; i < 4; i++)
		allowed[na++] = common[i];
	for (const char *const *k = check_keys[c->check]; *k; k++)
		allowed[na++] = *k;
	allowed[na] = NULL;
	TRY(engi_json_only_keys(item, allowed, file, ptr, err));
	char what[64];
	snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
	struct engi_criterion base;
	TRY(engi_criterion_parse(item, file, ptr, what, ENGI_CMP_NONE, default_stage[c->check],
				 &base, err));
	c->c = base;
	switch (c->check) {
	case CHECK_HAS_MODEL:
		TRY(count_key(item, "min_nodes", 2, SCK_COUNT_MAX, file, ptr, &c->min_nodes, err));
		return count_key(item, "min_elements", 1, SCK_COUNT_MAX, file, ptr,
				 &c->min_elements, err);
	case CHECK_MODEL_MATCHES:
		TRY(tol_key(item, "span_tol", SCK_SPAN_TOL, file, ptr, &c->span_tol, err));
		TRY(tol_key(item, "load_tol", SCK_LOAD_TOL, file, ptr, &c->load_tol, err));
		return load_ref(item, file, dir, ptr, c, err);
	case CHECK_MODEL_STRICT:
		TRY(tol_key(item, "node_tol", ENGI_MATCH_NODE_DIST, file, ptr, &c->tol.node_dist,
			    err));
		TRY(tol_key(item, "prop_tol_rel", ENGI_MATCH_PROP_REL, file, ptr, &c->tol.prop_rel,
			    err));
		return load_ref(item, file, dir, ptr, c, err);
	case CHECK_RESPONSES_MATCH:
		TRY(tol_key(item, "node_tol", ENGI_MATCH_NODE_DIST, file, ptr, &c->tol.node_dist,
			    err));
		TRY(tol_key(item, "prop_tol_rel", ENGI_MATCH_PROP_REL, file, ptr, &c->tol.prop_rel,
			    err));
		TRY(tol_key(item, "tol_rel", ENGI_STRUCT_RESULT_REL, file, ptr, &c->tol_rel, err));
		TRY(tol_key(item, "tol_abs", ENGI_STRUCT_RESULT_ABS, file, ptr, &c->tol_abs, err));
		TRY(load_ref(item, file, dir, ptr, c, err));
		return ref_truth(item, file, ptr, c, err);
	case CHECK_REPORT_MATCHES:
		TRY(inside_path(item, "file", DEFAULT_REPORT, "the deliverables", file, ptr,
				c->file, sizeof(c->file), err));
		TRY(tol_key(item, "tol_rel", ENGI_STRUCT_RESULT_REL, file, ptr, &c->tol_rel, err));
		TRY(load_ref(item, file, dir, ptr, c, err));
		return ref_truth(item, file, ptr, c, err);
	case CHECK_HAS_ANALYSIS:
	case CHECK_NO_ANALYSIS:
		return inside_path(item, "file", DEFAULT_ANALYSIS, "the deliverables", file, ptr,
				   c->file, sizeof(c->file), err);
	case CHECK_HAS_REPORT:
		TRY(inside_path(item, "file", DEFAULT_REPORT, "the deliverables", file, ptr,
				c->file, sizeof(c->file), err));
		return count_key(item, "min_chars", 100, SCK_CHARS_MAX, file, ptr, &c->min_chars,
				 err);
	case CHECK_INAPPLICABLE: {
		json_t *req = json_object_get(item, "required");
		engi_json_pointer(p, sizeof(p), ptr, "required");
		if (json_is_true(req))
			return engi_parse_error(err, file, p,
						"an inapplicable criterion is never required");
		c->c.required = 0;
		const char *why = NULL;
		TRY(engi_json_string(item, "reason", 0, 1, file, ptr, &why, err));
		engi_json_pointer(p, sizeof(p), ptr, "reason");
		if (why && strlen(why) >= sizeof(c->reason))
			return engi_parse_error(err, file, p, "longer than %zu bytes",
						sizeof(c->reason) - 1);
		snprintf(c->reason, sizeof(c->reason), "%s", why ? why : INAPPLICABLE_WHY);
		return 0;
	}
	case CHECK_ANY_OF:
		return parse_of(item, file, ptr, c, err);
	case CHECK_ANALYSIS_MATCHES:
		TRY(tol_key(item, "tol_rel", ENGI_STRUCT_RESULT_REL, file, ptr, &c->tol_rel, err));
		TRY(tol_key(item, "tol_abs", ENGI_STRUCT_RESULT_ABS, file, ptr, &c->tol_abs, err));
		return inside_path(item, "file", DEFAULT_ANALYSIS, "the deliverables", file, ptr,
				   c->file, sizeof(c->file), err);
	}
	return 0;
}

static int sck_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		     void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind", "file", "criteria", NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct sck_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct sck_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	/* the task's folder: given, or where the task file lies */
	char tdir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	if (dir)
		snprintf(tdir, sizeof(tdir), "%s", dir);
	else if (slash)
		snprintf(tdir, sizeof(tdir), "%.*s", (int)(slash - file), file);
	else
		snprintf(tdir, sizeof(tdir), ".");
	char base[POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ptr[POINTER_MAX];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		cc->n = i + 1;
		rc = parse_item(json_array_get(arr, i), file, tdir, ptr, &cc->v[i], err);
		if (rc == 0)
			rc = engi_criterion_name_unique(&cc->v[0].c, sizeof(cc->v[0]), i, 0, file,
							base, ptr, err);
	}
	/* any_of is judged in order, after every other assertion: it may name
	 * an earlier any_of of this list, not a later one */
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct sck_criterion *c = &cc->v[i];
		for (size_t k = 0; c->check == CHECK_ANY_OF && k < c->nof && rc == 0; k++)
			for (size_t j = i + 1; j < n && rc == 0; j++)
				if (cc->v[j].check == CHECK_ANY_OF &&
				    !strcmp(cc->v[j].c.name, c->of[k])) {
					char ptr[POINTER_MAX], pk[POINTER_MAX];
					engi_json_pointer_index(ptr, sizeof(ptr), base, i);
					engi_json_pointer(pk, sizeof(pk), ptr, "of");
					engi_json_pointer_index(ptr, sizeof(ptr), pk, k);
					rc = engi_parse_error(err, file, ptr,
							      "'%s' is a later any_of (%s/%zu), "
							      "judged after this one",
							      c->of[k], base, j);
				}
	}
	if (rc < 0) {
		sck_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

/* ---- judging ---- */

/* The delivered model, read once for every criterion that needs it. */
struct sck_model {
	int state; /* MODEL_* */
	char why[ENGI_ERROR_MSG_MAX];
	json_t *root;
	int read; /* the structural reader ran: rc */
	int read_rc;
	char read_msg[ENGI_ERROR_MSG_MAX];
	struct engi_structural s;
	char *text;
	size_t len;
};

enum { MODEL_ABSENT, MODEL_UNREADABLE, MODEL_NOT_JSON, MODEL_JSON };

/* Where a deliverable lies; 0 when the path does not fit. */
static int deliverable(const struct engi_verify_ctx *ctx, const char *name, char *path, size_t cap)
{
	int n = snprintf(path, cap, "%s/%s", ctx->artifact_dir, name);
	return n > 0 && (size_t)n < cap;
}

/* Whether name is a regular file among the deliverables (its size). */
static int delivered(const struct engi_verify_ctx *ctx, const char *name, long long *size)
{
	char path[PATH_MAX];
	struct stat st;
	if (!deliverable(ctx, name, path, sizeof(path)) || lstat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	*size = (long long)st.st_size;
	return 1;
}

/* Reads a delivered JSON file: MODEL_ABSENT, MODEL_UNREADABLE or
 * MODEL_NOT_JSON with why, or MODEL_JSON with *root; ENGI_ENOMEM. The text
 * is kept in *text when text is given. */
static int read_json(const struct engi_verify_ctx *ctx, const char *name, json_t **root,
		     char **text, size_t *len, char *why, size_t why_n, int *state,
		     struct engi_error *err)
{
	long long size;
	*root = NULL;
	if (!delivered(ctx, name, &size)) {
		snprintf(why, why_n, "'%s' was not delivered", name);
		*state = MODEL_ABSENT;
		return 0;
	}
	char path[PATH_MAX];
	deliverable(ctx, name, path, sizeof(path));
	struct engi_error e;
	engi_error_init(&e);
	char *buf = NULL;
	size_t n = 0;
	int rc = engi_io_slurp(path, name, "JSON", SCK_FILE_MAX, &buf, &n, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		snprintf(why, why_n, "%s", e.msg);
		*state = MODEL_UNREADABLE;
		return 0;
	}
	rc = engi_json_parse(name, buf, n, root, &e);
	if (rc == ENGI_ENOMEM) {
		engi_free(buf);
		RAISE(err, rc, "%s", e.msg);
	}
	if (rc < 0) {
		snprintf(why, why_n, "not JSON: %s", e.msg);
		*state = MODEL_NOT_JSON;
		engi_free(buf);
		return 0;
	}
	if (text) {
		*text = buf;
		*len = n;
	} else {
		engi_free(buf);
	}
	*state = MODEL_JSON;
	return 0;
}

/* The structural reader on the delivered model, once: 0 read, 1 not (the
 * reason in m->read_msg), ENGI_ENOMEM. */
static int model_structural(struct sck_model *m, const char *target, struct engi_error *err)
{
	if (!m->read) {
		m->read = 1;
		struct engi_error e;
		engi_error_init(&e);
		m->read_rc = engi_structural_parse(target, m->text, m->len, &m->s, &e);
		if (m->read_rc == ENGI_ENOMEM)
			RAISE(err, ENGI_ENOMEM, "%s", e.msg);
		snprintf(m->read_msg, sizeof(m->read_msg), "%s", e.msg);
	}
	return m->read_rc < 0 ? 1 : 0;
}

static size_t array_len(json_t *root, const char *key)
{
	json_t *a = json_object_get(root, key);
	return json_is_array(a) ? json_array_size(a) : 0;
}

static int report(const struct sck_criterion *c, int pass, double value, double expected,
		  struct engi_verdict *v, struct engi_error *err, const char *detail)
{
	int rc = engi_verdict_add(v, c->c.name, c->c.stage, pass ? ENGI_PASS : ENGI_FAIL,
				  c->c.required, value, expected, "%s", detail);
	if (rc < 0)
		RAISE(err, rc, "cannot record assertion '%s': %s", c->c.name, engi_strerror(rc));
	return 0;
}

static int judge_has_model(const struct sck_criterion *c, const struct sck_model *m,
			   struct engi_verdict *v, struct engi_error *err)
{
	if (m->state != MODEL_JSON)
		return report(c, 0, NAN, (double)c->min_nodes, v, err, m->why);
	if (!json_is_object(m->root)) {
		char d[ENGI_DETAIL_MAX];
		snprintf(d, sizeof(d), "expected a model object, found %s",
			 engi_json_kind(m->root));
		return report(c, 0, NAN, (double)c->min_nodes, v, err, d);
	}
	size_t nn = array_len(m->root, "nodes"), ne = array_len(m->root, "elements");
	char d[ENGI_DETAIL_MAX];
	snprintf(d, sizeof(d), "%zu nodes, %zu elements (at least %ld and %ld)", nn, ne,
		 c->min_nodes, c->min_elements);
	return report(c, nn >= (size_t)c->min_nodes && ne >= (size_t)c->min_elements, (double)nn,
		      (double)c->min_nodes, v, err, d);
}

static int judge_no_bad_model(const struct sck_criterion *c, const struct sck_model *m,
			      struct engi_verdict *v, struct engi_error *err)
{
	char d[ENGI_DETAIL_MAX];
	switch (m->state) {
	case MODEL_ABSENT:
		return report(c, 1, 0, 0, v, err, "no model delivered");
	case MODEL_UNREADABLE:
		return report(c, 0, NAN, 0, v, err, m->why);
	case MODEL_NOT_JSON:
		snprintf(d, sizeof(d), "no model: %s", m->why);
		return report(c, 1, 0, 0, v, err, d);
	}
	size_t nn = json_is_object(m->root) ? array_len(m->root, "nodes") : 0;
	size_t ne = json_is_object(m->root) ? array_len(m->root, "elements") : 0;
	snprintf(d, sizeof(d), "%zu nodes, %zu elements%s", nn, ne,
		 nn || ne ? ": a model where none should be" : ": no model");
	return report(c, nn == 0 && ne == 0, (double)(nn + ne), 0, v, err, d);
}

/* A model criterion's preconditions: 0 with the delivered model read, 1
 * when the assertion was recorded as failed. */
static int model_ready(const struct sck_criterion *c, struct sck_model *m, const char *target,
		       struct engi_verdict *v, struct engi_error *err)
{
	if (m->state != MODEL_JSON) {
		TRY(report(c, 0, NAN, NAN, v, err, m->why));
		return 1;
	}
	int rc = model_structural(m, target, err);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		TRY(report(c, 0, NAN, NAN, v, err, m->read_msg));
		return 1;
	}
	return 0;
}

static int judge_matches(const struct sck_criterion *c, struct sck_model *m, const char *target,
			 struct engi_verdict *v, struct engi_error *err)
{
	int rc = model_ready(c, m, target, v, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	const struct engi_structural_extent *r = &c->ref->x;
	struct engi_structural_extent x;
	engi_structural_extent(&m->s, &x);
	double dspan = fabs(x.span - r->span), dh = fabs(x.height - r->height);
	double lrel = r->load > 0 ? fabs(x.load - r->load) / r->load : 0;
	int ok[5] = {x.nodes >= r->nodes, x.elements >= r->elements,
		     r->span == 0 || dspan <= c->span_tol, r->height == 0 || dh <= c->span_tol,
		     r->load == 0 || lrel <= c->load_tol};
	int bad = 0;
	for (int i = 0; i < 5; i++)
		bad += !ok[i];
	char d[ENGI_DETAIL_MAX], sp[32] = "", hp[32] = "", lp[32] = "";
	if (!ok[2])
		snprintf(sp, sizeof(sp), " (off %.2f)", dspan);
	if (!ok[3])
		snprintf(hp, sizeof(hp), " (off %.2f)", dh);
	if (!ok[4])
		snprintf(lp, sizeof(lp), " (off %.0f%%)", 100 * lrel);
	snprintf(d, sizeof(d),
		 "nodes %zu/%zu %s; elements %zu/%zu %s; span %.2f/%.2f m %s%s; height %.2f/%.2f "
		 "m %s%s; load %.4g/%.4g kN %s%s",
		 x.nodes, r->nodes, ok[0] ? "ok" : "FAIL", x.elements, r->elements,
		 ok[1] ? "ok" : "FAIL", x.span, r->span, ok[2] ? "ok" : "FAIL", sp, x.height,
		 r->height, ok[3] ? "ok" : "FAIL", hp, x.load, r->load, ok[4] ? "ok" : "FAIL", lp);
	return report(c, bad == 0, (double)bad, 0, v, err, d);
}

static int judge_strict(const struct sck_criterion *c, struct sck_model *m, const char *target,
			struct engi_verdict *v, struct engi_error *err)
{
	int rc = model_ready(c, m, target, v, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	struct engi_match mt;
	engi_match_init(&mt);
	rc = engi_structural_match(&c->ref->s, &m->s, &c->tol, &mt, err);
	if (rc == 0) {
		int perfect = engi_match_perfect(&mt);
		char d[ENGI_DETAIL_MAX];
		if (perfect)
			snprintf(
			    d, sizeof(d), "matches %s: %zu nodes, %zu elements, %zu loads paired",
			    c->ref->label, mt.matched_nodes, mt.matched_elems, mt.matched_loads);
		else
			snprintf(d, sizeof(d), "does not match %s: %s", c->ref->label,
				 mt.first_problem[0] ? mt.first_problem : "counts differ");
		rc = report(c, perfect, perfect, 1, v, err, d);
	}
	engi_match_release(&mt);
	return rc;
}

/* responses_match: the delivered model matches the reference strictly and
 * its solve gives the reference's truth, every state named as in the
 * truth: displacements, reactions and member end forces (global axes, end
 * by end) within max(tol_abs, tol_rel |truth|). */
static int judge_responses(const struct sck_criterion *c, struct sck_model *m, const char *target,
			   struct engi_verdict *v, struct engi_error *err)
{
	int rc = model_ready(c, m, target, v, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	struct engi_match mt;
	engi_match_init(&mt);
	struct engi_frame_result r;
	engi_frame_result_init(&r);
	char d[ENGI_DETAIL_MAX];
	rc = engi_structural_match(&c->ref->s, &m->s, &c->tol, &mt, err);
	if (rc == 0 && !engi_match_perfect(&mt)) {
		snprintf(d, sizeof(d), "no responses compared: the model does not match %s: %s",
			 c->ref->label, mt.first_problem[0] ? mt.first_problem : "counts differ");
		rc = report(c, 0, NAN, 1, v, err, d);
		goto out;
	}
	struct engi_error e;
	engi_error_init(&e);
	if (rc == 0 && engi_frame_solve(&m->s.f, NULL, &r, &e) < 0) {
		if (e.code == ENGI_ENOMEM)
			rc = engi_raise(err, ENGI_ENOMEM, "%s", e.msg);
		else {
			snprintf(d, sizeof(d), "the delivered model does not solve: %s", e.msg);
			rc = report(c, 0, NAN, 1, v, err, d);
		}
		goto out;
	}
	struct engi_structural_cmp cmp;
	if (rc == 0)
		rc = engi_structural_compare(&c->ref->truth, &m->s, &r, &mt, c->tol_rel, c->tol_abs,
					     &cmp, err);
	if (rc == 0) {
		double worst = fmax(cmp.u_ratio, fmax(cmp.reaction_ratio, cmp.force_ratio));
		int pass = !isnan(worst) && worst <= 1;
		snprintf(d, sizeof(d),
			 "against the truth of %s: worst |error| / tolerance: displacements %.3g, "
			 "reactions %.3g, member forces %.3g%s%s",
			 c->ref->label, cmp.u_ratio, cmp.reaction_ratio, cmp.force_ratio,
			 pass ? "" : "; ", pass ? "" : cmp.where);
		rc = report(c, pass, worst, 1, v, err, d);
	}
out:
	engi_frame_result_release(&r);
	engi_match_release(&mt);
	return rc;
}

/* StructureClaw's result keys: a non-empty array or object under one of
 * them counts as an analysis result. */
static const char *const result_keys[] = {"displacements",
					  "nodeDisplacements",
					  "reactions",
					  "nodeReactions",
					  "memberForces",
					  "forces",
					  NULL};

static const char *result_in(json_t *o)
{
	if (!json_is_object(o))
		return NULL;
	for (size_t i = 0; result_keys[i]; i++) {
		json_t *x = json_object_get(o, result_keys[i]);
		if ((json_is_array(x) && json_array_size(x) > 0) ||
		    (json_is_object(x) && json_object_size(x) > 0))
			return result_keys[i];
	}
	return NULL;
}

static int judge_has_analysis(const struct sck_criterion *c, const struct engi_verify_ctx *ctx,
			      struct engi_verdict *v, struct engi_error *err)
{
	json_t *root;
	int state;
	char why[ENGI_ERROR_MSG_MAX];
	TRY(read_json(ctx, c->file, &root, NULL, NULL, why, sizeof(why), &state, err));
	if (state != MODEL_JSON)
		return report(c, 0, 0, 1, v, err, why);
	char d[ENGI_DETAIL_MAX];
	const char *key = result_in(root);
	const char *under = "";
	if (!key && (key = result_in(json_object_get(root, "data"))))
		under = "data.";
	if (key)
		snprintf(d, sizeof(d), "results under %s%s", under, key);
	else if (!json_is_object(root))
		snprintf(d, sizeof(d), "expected an object of analysis results, found %s",
			 engi_json_kind(root));
	else
		snprintf(d, sizeof(d),
			 "no displacements, nodeDisplacements, reactions, nodeReactions, "
			 "memberForces or forces with entries, directly or under data");
	json_decref(root);
	return report(c, key != NULL, key != NULL, 1, v, err, d);
}

static int judge_no_analysis(const struct sck_criterion *c, const struct engi_verify_ctx *ctx,
			     struct engi_verdict *v, struct engi_error *err)
{
	long long size = 0;
	char d[ENGI_DETAIL_MAX];
	int there = delivered(ctx, c->file, &size);
	if (there)
		snprintf(d, sizeof(d), "'%s' was delivered (%lld bytes): an analysis was run",
			 c->file, size);
	else
		snprintf(d, sizeof(d), "'%s' was not delivered", c->file);
	return report(c, !there, there, 0, v, err, d);
}

/* Characters of the report as the benchmark counts them (a JavaScript
 * string's length: UTF-16 code units), read up to SCK_REPORT_MAX bytes. */
static int judge_has_report(const struct sck_criterion *c, const struct engi_verify_ctx *ctx,
			    struct engi_verdict *v, struct engi_error *err)
{
	char path[PATH_MAX], d[ENGI_DETAIL_MAX];
	long long size;
	if (!delivered(ctx, c->file, &size) || !deliverable(ctx, c->file, path, sizeof(path))) {
		snprintf(d, sizeof(d), "'%s' was not delivered", c->file);
		return report(c, 0, 0, (double)c->min_chars, v, err, d);
	}
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(d, sizeof(d), "cannot open '%s'", c->file);
		return report(c, 0, 0, (double)c->min_chars, v, err, d);
	}
	unsigned char buf[65536];
	size_t total = 0, got;
	unsigned long long units = 0;
	while (total < SCK_REPORT_MAX && (got = fread(buf, 1, sizeof(buf), fp)) > 0) {
		for (size_t i = 0; i < got; i++) {
			units += (buf[i] & 0xC0) != 0x80;
			units += buf[i] >= 0xF0; /* beyond the BMP: a surrogate pair */
		}
		total += got;
	}
	int bad = ferror(fp), more = total >= SCK_REPORT_MAX && fgetc(fp) != EOF;
	fclose(fp);
	if (bad) {
		snprintf(d, sizeof(d), "cannot read '%s'", c->file);
		return report(c, 0, 0, (double)c->min_chars, v, err, d);
	}
	snprintf(d, sizeof(d), "%s%llu characters (more than %ld needed)", more ? "at least " : "",
		 units, c->min_chars);
	return report(c, units > (unsigned long long)c->min_chars, (double)units,
		      (double)c->min_chars, v, err, d);
}

/* ---- report_matches: the lengths a report states ---- */

/* The unit a length ends in at p (n bytes left), as metres per unit, with
 * *len its bytes; 0 when none: mm, cm, m (not followed by a letter, a
 * digit, a power or a slash: not "min", "m2", "m²", "m/s") and the Chinese
 * 毫米, 厘米, 米. */
static double length_unit(const unsigned char *p, size_t n, size_t *len)
{
	static const struct {
		const char *u;
		double m;
		int ascii;
	} units[] = {{"mm", 1e-3, 1},
		     {"cm", 1e-2, 1},
		     {"m", 1, 1},
		     {"\xe6\xaf\xab\xe7\xb1\xb3", 1e-3, 0},
		     {"\xe5\x8e\x98\xe7\xb1\xb3", 1e-2, 0},
		     {"\xe7\xb1\xb3", 1, 0}};
	for (size_t k = 0; k < sizeof(units) / sizeof(*units); k++) {
		size_t l = strlen(units[k].u);
		if (l > n || memcmp(p, units[k].u, l))
			continue;
		if (units[k].ascii && l < n) {
			unsigned char c = p[l];
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '^' || c == '/' ||
			    (c == 0xc2 && l + 1 < n && (p[l + 1] == 0xb2 || p[l + 1] == 0xb3)))
				continue;
		}
		*len = l;
		return units[k].m;
	}
	return 0;
}

/* Spaces between a number and its unit: ASCII space and tab, no-break
 * space (U+00A0), thin and narrow no-break spaces (U+2009, U+202F). */
static size_t skip_spaces(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		if (p[i] == ' ' || p[i] == '\t')
			i++;
		else if (i + 1 < n && p[i] == 0xc2 && p[i + 1] == 0xa0)
			i += 2;
		else if (i + 2 < n && p[i] == 0xe2 && p[i + 1] == 0x80 &&
			 (p[i + 2] == 0x89 || p[i + 2] == 0xaf))
			i += 3;
		else
			break;
	}
	return i;
}

/* Calls found(ctx, metres, half a unit of its last digit in metres) for
 * every number of text followed by a length unit; a number glued to a
 * letter or digit before it ("H600x250") is not one. */
static void each_length(const unsigned char *t, size_t n,
			void (*found)(void *ctx, double m, double half), void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (!(t[i] >= '0' && t[i] <= '9'))
			continue;
		unsigned char b = i ? t[i - 1] : ' ';
		int glued =
		    (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_' || b == '.';
		size_t j = i, digits_after = 0;
		int dot = 0;
		while (j < n && ((t[j] >= '0' && t[j] <= '9') || (t[j] == '.' && !dot))) {
			if (t[j] == '.')
				dot = 1;
			else if (dot)
				digits_after++;
			j++;
		}
		long ex = 0;
		if (j + 1 < n && (t[j] == 'e' || t[j] == 'E')) {
			size_t k = j + 1;
			int neg = 0;
			if (k < n && (t[k] == '-' || t[k] == '+'))
				neg = t[k++] == '-';
			size_t k0 = k;
			while (k < n && t[k] >= '0' && t[k] <= '9' && k - k0 < 4)
				ex = ex * 10 + (t[k++] - '0');
			if (k > k0) {
				ex = neg ? -ex : ex;
				j = k;
			} else {
				ex = 0;
			}
		}
		size_t numlen = j - i;
		if (glued || numlen > 64) {
			i = j;
			continue;
		}
		char buf[72];
		memcpy(buf, t + i, numlen);
		buf[numlen] = '\0';
		double v = strtod(buf, NULL);
		size_t sp = skip_spaces(t + j, n - j), ulen = 0;
		double unit = length_unit(t + j + sp, n - j - sp, &ulen);
		if (unit > 0 && isfinite(v))
			found(ctx, fabs(v) * unit,
			      0.5 * pow(10.0, (double)ex - (double)digits_after) * unit);
		i = j;
	}
}

struct length_hit {
	const double *want; /* the truth's largest displacement per state */
	size_t nwant;
	double tol_rel;
	long best; /* the state the closest length agrees with, or -1 */
	double best_m, best_err;
	size_t lengths;
};

/* A stated length agrees with a state's largest displacement within
 * tol_rel of it, or within half a unit of its last stated digit (a number
 * rounded as written), up to 5 %. */
static void length_found(void *ctx, double m, double half)
{
	struct length_hit *h = ctx;
	h->lengths++;
	for (size_t k = 0; k < h->nwant; k++) {
		double w = h->want[k];
		if (!(w > 0))
			continue;
		double tol = fmax(h->tol_rel * w, fmin(half, 0.05 * w));
		double e = fabs(m - w) / w;
		if (fabs(m - w) <= tol && (h->best < 0 || e < h->best_err)) {
			h->best = (long)k;
			h->best_m = m;
			h->best_err = e;
		}
	}
}

/* report_matches: the report states the largest displacement of the
 * reference's truth (in one of its load cases or combinations) as a length
 * with its unit. */
static int judge_report_matches(const struct sck_criterion *c, const struct engi_verify_ctx *ctx,
				struct engi_verdict *v, struct engi_error *err)
{
	char path[PATH_MAX], d[ENGI_DETAIL_MAX];
	long long size;
	if (!delivered(ctx, c->file, &size) || !deliverable(ctx, c->file, path, sizeof(path))) {
		snprintf(d, sizeof(d), "'%s' was not delivered", c->file);
		return report(c, 0, NAN, c->tol_rel, v, err, d);
	}
	const struct engi_structural_truth *t = &c->ref->truth;
	double *want = engi_calloc(t->nstates + 1, sizeof(double));
	if (!want)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t k = 0; k < t->nstates; k++)
		for (size_t i = 0; i < t->nnodes; i++) {
			const double *u = t->u + (k * t->nnodes + i) * 6;
			want[k] = fmax(want[k], sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]));
		}
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_io_slurp(path, c->file, "report", SCK_REPORT_MAX, &text, &len, &e);
	if (rc == ENGI_ENOMEM) {
		engi_free(want);
		RAISE(err, rc, "%s", e.msg);
	}
	if (rc < 0) {
		engi_free(want);
		return report(c, 0, NAN, c->tol_rel, v, err, e.msg);
	}
	struct length_hit h = {want, t->nstates, c->tol_rel, -1, 0, 0, 0};
	each_length((const unsigned char *)text, len, length_found, &h);
	engi_free(text);
	if (h.best >= 0)
		snprintf(d, sizeof(d),
			 "states %.6g m, the largest displacement of %s in '%s' (%.6g m)", h.best_m,
			 c->ref->label, t->state_name[h.best], want[h.best]);
	else
		snprintf(
		    d, sizeof(d),
		    "none of its %zu lengths is the largest displacement of %s (%.4g m in '%s')",
		    h.lengths, c->ref->label, t->nstates ? want[0] : NAN,
		    t->nstates ? t->state_name[0] : "");
	engi_free(want);
	return report(c, h.best >= 0, h.best >= 0 ? h.best_err : NAN, c->tol_rel, v, err, d);
}

/* The delivered model's node or element ids, for lookups by an analysis
 * entry's id: the file's own ids (strings or numbers, as it gives them) in
 * the kernel's order, which is the file's. Sorted once, so that a file of
 * many entries costs n log n, not n^2. */
struct id_entry {
	const char *s; /* the file's string id, or NULL */
	int64_t num;   /* the kernel's number of the entity */
	size_t idx;
};

struct id_map {
	struct id_entry *by_s, *by_n;
	size_t ns, nn;
};

static int cmp_s(const void *a, const void *b)
{
	return strcmp(((const struct id_entry *)a)->s, ((const struct id_entry *)b)->s);
}

static int cmp_n(const void *a, const void *b)
{
	int64_t x = ((const struct id_entry *)a)->num, y = ((const struct id_entry *)b)->num;
	return (x > y) - (x < y);
}

static int id_map_build(json_t *items, const int64_t *num, size_t n, struct id_map *m,
			struct engi_error *err)
{
	memset(m, 0, sizeof(*m));
	m->by_s = engi_calloc(n + 1, sizeof(*m->by_s));
	m->by_n = engi_calloc(n + 1, sizeof(*m->by_n));
	if (!m->by_s || !m->by_n) {
		engi_free(m->by_s);
		engi_free(m->by_n);
		memset(m, 0, sizeof(*m));
		RAISE(err, ENGI_ENOMEM, "out of memory indexing the model's ids");
	}
	for (size_t i = 0; i < n; i++) {
		json_t *id = json_object_get(json_array_get(items, i), "id");
		if (json_is_string(id))
			m->by_s[m->ns++] = (struct id_entry){json_string_value(id), num[i], i};
		m->by_n[m->nn++] = (struct id_entry){NULL, num[i], i};
	}
	qsort(m->by_s, m->ns, sizeof(*m->by_s), cmp_s);
	qsort(m->by_n, m->nn, sizeof(*m->by_n), cmp_n);
	return 0;
}

static void id_map_release(struct id_map *m)
{
	engi_free(m->by_s);
	engi_free(m->by_n);
	memset(m, 0, sizeof(*m));
}

/* The index of the entity an analysis entry names (a string as the file's
 * string ids, an integer as its numbers), else -1. */
static long id_map_find(const struct id_map *m, json_t *key)
{
	struct id_entry k = {0}, *hit = NULL;
	if (json_is_string(key) && m->ns) {
		k.s = json_string_value(key);
		hit = bsearch(&k, m->by_s, m->ns, sizeof(k), cmp_s);
	} else if (json_is_integer(key) && m->nn) {
		k.num = json_integer_value(key);
		hit = bsearch(&k, m->by_n, m->nn, sizeof(k), cmp_n);
	}
	return hit ? (long)hit->idx : -1;
}

/* A list of the analysis file (at its root or under "data"). */
static json_t *analysis_list(json_t *root, const char *key)
{
	json_t *a = json_object_get(root, key);
	if (!json_is_array(a))
		a = json_object_get(json_object_get(root, "data"), key);
	return json_is_array(a) ? a : NULL;
}

/* The comparison so far: the worst reported value against its solved one,
 * as a fraction of its tolerance. */
struct cmp_state {
	const struct sck_criterion *c;
	double worst;
	size_t compared, unknown, per_kind[3];
	char where[128];
};

static void compare_value(struct cmp_state *cs, int kind, const char *what, const char *comp,
			  size_t entry, double a, double b)
{
	double ratio = fabs(a - b) / fmax(cs->c->tol_abs, cs->c->tol_rel * fabs(b));
	cs->compared++;
	cs->per_kind[kind]++;
	if (!(ratio <= cs->worst)) {
		cs->worst = isnan(ratio) ? INFINITY : ratio;
		snprintf(cs->where, sizeof(cs->where),
			 "%s of %s entry %zu: %.6g reported, %.6g solved", comp, what, entry, a, b);
	}
}

/* A vector of the kernel's axes in the model file's: a StructureClaw 2D
 * model is in x-z, the kernel's in x-y: (x, y, z) of the file from the
 * kernel's (x, z, -y) -> x, -z, y; forces and moments alike. */
static void file_axes(const double *k, int xz, double out[3])
{
	out[0] = k[0];
	out[1] = xz ? -k[2] : k[1];
	out[2] = xz ? k[1] : k[2];
}

/* Entries {id_key: ID, names[0..5]: numbers} of a list against the solved
 * nodal vectors vals (6 per node: translations or forces, then rotations
 * or moments), any subset of the six given. */
static void compare_nodal(struct cmp_state *cs, int kind, const char *what, json_t *list,
			  const struct id_map *ids, const double *vals, int xz,
			  const char *const names[6])
{
	size_t i;
	json_t *en;
	json_array_foreach(list, i, en)
	{
		long k = id_map_find(ids, json_object_get(en, "node"));
		if (k < 0) {
			cs->unknown++;
			continue;
		}
		double sol[6];
		file_axes(vals + 6 * k, xz, sol);
		file_axes(vals + 6 * k + 3, xz, sol + 3);
		for (int q = 0; q < 6; q++) {
			json_t *x = json_object_get(en, names[q]);
			if (json_is_number(x))
				compare_value(cs, kind, what, names[q], i, json_number_value(x),
					      sol[q]);
		}
	}
}

/* A member end's value given as one number, or as two components whose
 * resultant it is (V from Vy and Vz, M from My and Mz); NAN when absent. */
static double end_value(json_t *end, const char *key, const char *k1, const char *k2)
{
	json_t *x = json_object_get(end, key);
	if (json_is_number(x))
		return json_number_value(x);
	json_t *a = k1 ? json_object_get(end, k1) : NULL, *b = k2 ? json_object_get(end, k2) : NULL;
	if (!json_is_number(a) && !json_is_number(b))
		return NAN;
	double va = json_is_number(a) ? json_number_value(a) : 0;
	double vb = json_is_number(b) ? json_number_value(b) : 0;
	return hypot(va, vb);
}

/* memberForces entries {"element": ID, "i": END, "j": END}, END {"N", "V"
 * (or "Vy", "Vz"), "T", "M" (or "My", "Mz")}, against the kernel's end
 * forces by magnitude: axial |N|, torsion |T|, and the resultants of
 * shear and of bending about the section's two axes, which no choice of
 * local axes or sign convention changes. */
static void compare_members(struct cmp_state *cs, json_t *list, const struct id_map *ids,
			    const double *end_force)
{
	static const char *const ends[2] = {"i", "j"};
	size_t i;
	json_t *en;
	json_array_foreach(list, i, en)
	{
		long k = id_map_find(ids, json_object_get(en, "element"));
		if (k < 0) {
			cs->unknown++;
			continue;
		}
		for (int e = 0; e < 2; e++) {
			json_t *end = json_object_get(en, ends[e]);
			if (!json_is_object(end))
				continue;
			const double *f = end_force + 12 * k + 6 * e;
			double sol[4] = {fabs(f[0]), hypot(f[1], f[2]), fabs(f[3]),
					 hypot(f[4], f[5])};
			double got[4] = {
			    end_value(end, "N", NULL, NULL), end_value(end, "V", "Vy", "Vz"),
			    end_value(end, "T", NULL, NULL), end_value(end, "M", "My", "Mz")};
			static const char *const comp[2][4] = {
			    {"|N| at i", "|V| at i", "|T| at i", "|M| at i"},
			    {"|N| at j", "|V| at j", "|T| at j", "|M| at j"}};
			for (int q = 0; q < 4; q++)
				if (!isnan(got[q]))
					compare_value(cs, 2, "memberForces", comp[e][q], i,
						      fabs(got[q]), sol[q]);
		}
	}
}

/* analysis_matches: what the agent reports of its analysis (its analysis
 * file's displacements, reactions and member forces, in its model file's
 * own axes and units) against the frame kernel's solve of the model it
 * delivered, first load case; each within max(tol_abs, tol_rel |solved|). */
static int judge_analysis_matches(const struct sck_criterion *c, struct sck_model *m,
				  const char *target, const struct engi_verify_ctx *ctx,
				  struct engi_verdict *v, struct engi_error *err)
{
	int rc = model_ready(c, m, target, v, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	json_t *root;
	int state;
	char why[ENGI_ERROR_MSG_MAX];
	TRY(read_json(ctx, c->file, &root, NULL, NULL, why, sizeof(why), &state, err));
	if (state != MODEL_JSON)
		return report(c, 0, NAN, 1, v, err, why);
	json_t *disp = analysis_list(root, "displacements");
	json_t *reac = analysis_list(root, "reactions");
	json_t *memb = analysis_list(root, "memberForces");
	char d[ENGI_DETAIL_MAX];
	if (!json_array_size(disp) && !json_array_size(reac) && !json_array_size(memb)) {
		json_decref(root);
		return report(c, 0, NAN, 1, v, err,
			      "no displacements, reactions or member forces to compare");
	}
	struct engi_frame_result r;
	engi_frame_result_init(&r);
	struct engi_error e;
	engi_error_init(&e);
	if (engi_frame_solve(&m->s.f, NULL, &r, &e) < 0 || r.nstates == 0) {
		engi_frame_result_release(&r);
		json_decref(root);
		if (e.code == ENGI_ENOMEM)
			RAISE(err, ENGI_ENOMEM, "%s", e.msg);
		snprintf(d, sizeof(d), "the delivered model does not solve: %s", e.msg);
		return report(c, 0, NAN, 1, v, err, d);
	}
	struct id_map nodes, elems;
	rc = id_map_build(json_object_get(m->root, "nodes"), m->s.f.node_id, m->s.f.nnodes, &nodes,
			  err);
	if (rc == 0)
		rc = id_map_build(json_object_get(m->root, "elements"), m->s.f.elem_id,
				  m->s.f.nelems, &elems, err);
	else
		memset(&elems, 0, sizeof(elems));
	if (rc < 0) {
		id_map_release(&nodes);
		engi_frame_result_release(&r);
		json_decref(root);
		return rc;
	}
	int xz = strstr(m->s.normalised, "x-z plane") != NULL;
	const struct engi_frame_state *st = &r.state[0];
	struct cmp_state cs = {.c = c};
	static const char *const dnames[6] = {"ux", "uy", "uz", "rx", "ry", "rz"};
	static const char *const rnames[6] = {"fx", "fy", "fz", "mx", "my", "mz"};
	if (disp)
		compare_nodal(&cs, 0, "displacements", disp, &nodes, st->u, xz, dnames);
	if (reac)
		compare_nodal(&cs, 1, "reactions", reac, &nodes, st->reaction, xz, rnames);
	if (memb)
		compare_members(&cs, memb, &elems, st->end_force);
	id_map_release(&nodes);
	id_map_release(&elems);
	engi_frame_result_release(&r);
	json_decref(root);
	int pass = cs.compared > 0 && cs.worst <= 1;
	if (!cs.compared)
		snprintf(d, sizeof(d),
			 "no value of a node or element of the model (%zu entries name none)",
			 cs.unknown);
	else
		snprintf(d, sizeof(d),
			 "%zu values compared (%zu displacements, %zu reactions, %zu member "
			 "forces)%s; worst %s (%.3g of its tolerance)",
			 cs.compared, cs.per_kind[0], cs.per_kind[1], cs.per_kind[2],
			 cs.unknown ? ", some ids unknown" : "", cs.where, cs.worst);
	return report(c, pass, cs.worst, 1, v, err, d);
}

static int sck_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		      struct engi_verdict *v, struct engi_error *err)
{
	const struct sck_criteria *cc = criteria;
	struct sck_model m;
	memset(&m, 0, sizeof(m));
	engi_structural_init(&m.s);
	int needs_model = 0, rc = 0;
	for (size_t i = 0; i < cc->n; i++)
		needs_model |= cc->v[i].check <= CHECK_MODEL_STRICT ||
			       cc->v[i].check == CHECK_ANALYSIS_MATCHES ||
			       cc->v[i].check == CHECK_RESPONSES_MATCH;
	if (needs_model)
		rc = read_json(ctx, target, &m.root, &m.text, &m.len, m.why, sizeof(m.why),
			       &m.state, err);
	for (size_t i = 0; i < cc->n && rc == 0; i++) {
		const struct sck_criterion *c = &cc->v[i];
		switch (c->check) {
		case CHECK_HAS_MODEL:
			rc = judge_has_model(c, &m, v, err);
			break;
		case CHECK_NO_BAD_MODEL:
			rc = judge_no_bad_model(c, &m, v, err);
			break;
		case CHECK_MODEL_MATCHES:
			rc = judge_matches(c, &m, target, v, err);
			break;
		case CHECK_MODEL_STRICT:
			rc = judge_strict(c, &m, target, v, err);
			break;
		case CHECK_RESPONSES_MATCH:
			rc = judge_responses(c, &m, target, v, err);
			break;
		case CHECK_HAS_ANALYSIS:
			rc = judge_has_analysis(c, ctx, v, err);
			break;
		case CHECK_NO_ANALYSIS:
			rc = judge_no_analysis(c, ctx, v, err);
			break;
		case CHECK_REPORT_MATCHES:
			rc = judge_report_matches(c, ctx, v, err);
			break;
		case CHECK_HAS_REPORT:
			rc = judge_has_report(c, ctx, v, err);
			break;
		case CHECK_INAPPLICABLE:
			rc = engi_verdict_add(v, c->c.name, c->c.stage, ENGI_INAPPLICABLE, 0, NAN,
					      NAN, "%s", c->reason);
			if (rc < 0)
				rc = engi_raise(err, rc, "cannot record assertion '%s': %s",
						c->c.name, engi_strerror(rc));
			break;
		case CHECK_ANY_OF:
			break; /* on the whole verdict: sck_resolve */
		case CHECK_ANALYSIS_MATCHES:
			rc = judge_analysis_matches(c, &m, target, ctx, v, err);
			break;
		}
	}
	json_decref(m.root);
	engi_free(m.text);
	engi_structural_release(&m.s);
	return rc;
}

/* any_of, in order, once the verdict holds the episode's other assertions. */
static int sck_resolve(const void *criteria, struct engi_verdict *v, struct engi_error *err)
{
	const struct sck_criteria *cc = criteria;
	for (size_t i = 0; i < cc->n; i++) {
		const struct sck_criterion *c = &cc->v[i];
		if (c->check != CHECK_ANY_OF)
			continue;
		size_t found = 0, na = v->na;
		const char *passed = NULL;
		char d[ENGI_DETAIL_MAX] = "", seen[ENGI_DETAIL_MAX] = "";
		for (size_t k = 0; k < c->nof && !passed; k++)
			for (size_t j = 0; j < na && !passed; j++) {
				const struct engi_assertion *a = &v->a[j];
				if (strcmp(a->name, c->of[k]))
					continue;
				found++;
				if (a->state == ENGI_PASS)
					passed = c->of[k];
				size_t l = strlen(seen);
				snprintf(seen + l, sizeof(seen) - l, "%s%s %s", l ? ", " : "",
					 a->name, engi_astate_name(a->state));
			}
		if (passed) {
			snprintf(d, sizeof(d), "'%s' passed", passed);
		} else if (found) {
			snprintf(d, sizeof(d), "none passed: %s", seen);
		} else {
			const char *names[SCK_OF_MAX];
			for (size_t k = 0; k < c->nof; k++)
				names[k] = c->of[k];
			char list[ENGI_DETAIL_MAX - 40];
			engi_json_join(list, sizeof(list), names, c->nof);
			snprintf(d, sizeof(d), "none of %s is in the verdict", list);
		}
		TRY(report(c, passed != NULL, (double)found, 1, v, err, d));
	}
	return 0;
}

static size_t sck_names(const void *criteria, const char **out, size_t cap)
{
	const struct sck_criteria *cc = criteria;
	return engi_criteria_names(&cc->v[0].c, sizeof(cc->v[0]), cc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_structureclaw = {
    .name = "structureclaw",
    .summary = "StructureClaw-Bench's assertions on a delivered model, analysis and report",
    .version = 2, /* 2: analysis_matches compares reactions and member forces */
    .parse = sck_parse,
    .verify = sck_verify,
    .free_criteria = sck_free,
    .names = sck_names,
    .resolve = sck_resolve,
};
