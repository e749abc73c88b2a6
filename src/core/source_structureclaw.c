/*
 * The structureclaw task source: StructureClaw-Bench as published, a folder
 * holding scenarios/<family>/<id>.json and fixtures/ground-truth-models.json
 * (the benchmark's checkout, or its data alone), each scenario translated
 * into engisweep's own task JSON (tasks/SCHEMA.md):
 *
 *   message          -> the instruction, followed by the delivery contract
 *                       (the agent delivers files where StructureClaw's own
 *                       runtime keeps state: model.json, analysis.json,
 *                       report.md; it asks with ask_user)
 *   attachments      -> drawings (PNG) or inputs (other files)
 *   expect           -> a verifier of kind structureclaw, one criterion per
 *                       assertion; has_interaction_questions -> the
 *                       interaction assertion asked_user; assertions that
 *                       mean something only inside StructureClaw's runtime
 *                       (skill_match, structural_type, engine_match) ->
 *                       inapplicable, recorded with that reason
 *   model_matches    -> the benchmark's own rule, and the paper's strict
 *                       matching beside it (not required)
 *   ground truth     -> the reference solution: the model written, and its
 *                       analysis from engisweep's frame kernel
 *   taskFamily, locale, structureType, difficulty, category,
 *   inputModality, split
 *                    -> meta family, locale, structure_type, difficulty,
 *                       category, modality, split (for report --by)
 *
 *   natural_language -> a judge (tasks/SCHEMA.md `judges`): the description its
 *                       rubric, report.md, analysis.json and model.json its
 *                       inputs (run --judge MODEL judges it)
 *   turns            -> the first message the instruction, each next one a
 *                       follow-up (tasks/SCHEMA.md `followups`) whose
 *                       verifier holds the assertions of the turn it closes;
 *                       the last turn's assertions are the task's verifier
 *                       and judges
 *
 *                       (those of a turn before the last: the judges of the
 *                       follow-up that closes it)
 *
 * Refused, with the reason, never half run: unknown assertion types, a
 * ground truth that is not in the fixtures.
 */
#include "source.h"

#include "engi/alloc.h"
#include "engi/fe.h"
#include "engi/json.h"
#include "engi/schema.h"
#include "engi/structural.h"
#include "engi/truth.h"
#include "fsutil.h"

#include <jansson.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define SC_FILE_CAP  ((size_t)4 << 20)
#define SC_GT	     "fixtures/ground-truth-models.json"
#define SC_GT_CAP    ((size_t)64 << 20)
#define SC_NAME_MAX  128
#define SC_MAX_FILES 4096

static const char *const sc_families[] = {"standard_workflow", "interactive_robustness",
					  "multimodal_reverse_engineering"};

/* What the agent is told beyond the scenario's message: where StructureClaw's
 * runtime keeps the agent's model, analysis and report, engisweep's agent
 * delivers files (docs/structureclaw.md). */
static const char sc_contract[] =
    "\n\nDeliverables (in the working folder): write the structural model you build as "
    "model.json (StructureClaw's model schema 2.0, or engisweep's structural/1 format), the "
    "results of any analysis you run as analysis.json (a JSON object with displacements, "
    "reactions or memberForces, in the model's axes and units: displacements as a list of "
    "{\"node\": the model's node id, \"ux\", \"uy\", \"uz\"} in metres, with \"rx\", "
    "\"ry\", \"rz\" in radians if you have them; reactions as a list of {\"node\", "
    "\"fx\", \"fy\", \"fz\", \"mx\", \"my\", \"mz\"}; memberForces as a list of "
    "{\"element\": the model's element id, \"i\": {\"N\", \"V\", \"T\", \"M\"}, "
    "\"j\": {...}}, the axial force, shear, torsion and bending moment at the element's "
    "first and second node), and a report as report.md when one is asked for. When the "
    "request is incomplete, contradictory or unsafe, ask the user with ask_user instead of "
    "guessing, and do not deliver a model or an analysis you could not justify.";

static const char sc_user_reply[] = "I have no further information to give you right now.";

struct sc_refusal {
	char category[96];
	char msg[1024];
};

/* The benchmark's folder: path itself, or path/structureclaw-bench. */
static int sc_root(const char *path, char *root, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/" SC_GT, path);
	if (!fs_path_is_file(p))
		return 0;
	snprintf(p, sizeof(p), "%s/scenarios/%s", path, sc_families[0]);
	if (!fs_path_is_dir(p))
		return 0;
	snprintf(root, n, "%s", path);
	return 1;
}

static int sc_probe(const char *path)
{
	char root[PATH_MAX];
	return fs_path_is_dir(path) && sc_root(path, root, sizeof(root)) ? 90 : 0;
}

/* A scenario file's name: *.json, not hidden. */
static int sc_keep_json(const char *dir, const char *name, void *ctx)
{
	(void)dir, (void)ctx;
	size_t k = strlen(name);
	return name[0] != '.' && k >= 6 && !strcmp(name + k - 5, ".json");
}

/* The ground truths: the fixtures' list, {id, model} entries. */
/* The ground truths, and what each gives the scenarios that name it,
 * worked out once per load: the reference's analysis (NULL: it does not
 * solve) and whether it has a truth (two solves that agree). */
struct sc_gt_info {
	int done, has_truth;
	char *analysis;
	double max_u; /* the truth's largest displacement in its first state, m */
	char state[ENGI_STRUCT_NAME_MAX];
};

struct sc_truths {
	json_t *list;
	struct sc_gt_info *info; /* one per entry of list */
};

static char *sc_reference_analysis(const char *gt_text);

/* The model of ground truth id and its info, else NULL. */
static json_t *sc_truth(const struct sc_truths *g, const char *id, struct sc_gt_info **info)
{
	size_t i;
	json_t *e;
	json_array_foreach(g->list, i, e)
	{
		const char *eid = json_string_value(json_object_get(e, "id"));
		json_t *model = json_object_get(e, "model");
		if (!eid || strcmp(eid, id) || !json_is_object(model))
			continue;
		struct sc_gt_info *in = &g->info[i];
		if (!in->done) {
			in->done = 1;
			char *text = json_dumps(model, JSON_INDENT(1));
			struct engi_structural st;
			struct engi_structural_truth t;
			struct engi_truth_check chk;
			engi_structural_init(&st);
			engi_structural_truth_init(&t);
			if (text &&
			    engi_structural_parse(SC_GT, text, strlen(text), &st, NULL) == 0 &&
			    engi_structural_truth_build(&st, &t, &chk, NULL) == 0) {
				in->has_truth = engi_truth_accepted(&chk);
				for (size_t k = 0; t.nstates && k < t.nnodes; k++) {
					const double *u = t.u + 6 * k;
					in->max_u = fmax(in->max_u, sqrt(u[0] * u[0] + u[1] * u[1] +
									 u[2] * u[2]));
				}
				if (t.nstates)
					snprintf(in->state, sizeof(in->state), "%s",
						 t.state_name[0]);
			}
			in->analysis = text ? sc_reference_analysis(text) : NULL;
			free(text);
			engi_structural_truth_release(&t);
			engi_structural_release(&st);
		}
		*info = in;
		return model;
	}
	return NULL;
}

/* A vector of the kernel's axes in a StructureClaw file's (2D: x-z). */
static json_t *sc_vec(const char *const k[3], const double *v, int xz)
{
	return json_pack("{s:f, s:f, s:f}", k[0], v[0], k[1], xz ? -v[2] : v[1], k[2],
			 xz ? v[1] : v[2]);
}

/* The reference's member end forces: axial force N (the kernel's sign:
 * what the node exerts on the end, along the member), and the resultants
 * of shear V, torsion T and bending M, as analysis_matches compares them. */
static json_t *sc_end(const double *f)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "N", f[0], "V", hypot(f[1], f[2]), "T", fabs(f[3]),
			 "M", hypot(f[4], f[5]));
}

/* The reference's analysis of a ground-truth model from engisweep's frame
 * kernel, first load case, by the file's node and element ids and in the
 * file's own axes: nodal displacements, the reactions of restrained nodes,
 * member end forces (NULL when it does not solve: a mechanism, which the
 * audit reports). */
static char *sc_reference_analysis(const char *gt_text)
{
	struct engi_structural s;
	struct engi_frame_result r;
	engi_structural_init(&s);
	engi_frame_result_init(&r);
	char *out = NULL;
	json_t *model = json_loads(gt_text, 0, NULL);
	json_t *nodes = json_object_get(model, "nodes");
	json_t *elems = json_object_get(model, "elements");
	if (engi_structural_parse(SC_GT, gt_text, strlen(gt_text), &s, NULL) == 0 &&
	    engi_frame_solve(&s.f, NULL, &r, NULL) == 0 && r.nstates > 0 &&
	    json_array_size(nodes) == s.f.nnodes && json_array_size(elems) == s.f.nelems) {
		static const char *const uk[3] = {"ux", "uy", "uz"},
					 *const fk[3] = {"fx", "fy", "fz"},
					 *const mk[3] = {"mx", "my", "mz"};
		int xz = strstr(s.normalised, "x-z plane") != NULL;
		json_t *d = json_array(), *re = json_array(), *mf = json_array();
		const struct engi_frame_state *st = &r.state[0];
		for (size_t i = 0; i < s.f.nnodes && d && re; i++) {
			json_t *id = json_object_get(json_array_get(nodes, i), "id");
			json_t *e = sc_vec(uk, st->u + 6 * i, xz);
			json_object_set(e, "node", id);
			json_array_append_new(d, e);
			if (!s.f.restraint[i])
				continue;
			e = sc_vec(fk, st->reaction + 6 * i, xz);
			json_t *mom = sc_vec(mk, st->reaction + 6 * i + 3, xz);
			json_object_update(e, mom);
			json_decref(mom);
			json_object_set(e, "node", id);
			json_array_append_new(re, e);
		}
		for (size_t i = 0; i < s.f.nelems && mf; i++)
			json_array_append_new(
			    mf, json_pack("{s:O, s:o, s:o}", "element",
					  json_object_get(json_array_get(elems, i), "id"), "i",
					  sc_end(st->end_force + 12 * i), "j",
					  sc_end(st->end_force + 12 * i + 6)));
		json_t *a =
		    json_pack("{s:s, s:s, s:o, s:o, s:o}", "solver", "engisweep frame kernel",
			      "load_case", s.f.ncases ? s.case_name[0] : "", "displacements", d,
			      "reactions", re, "memberForces", mf);
		out = a ? json_dumps(a, JSON_INDENT(1)) : NULL;
		json_decref(a);
	}
	json_decref(model);
	engi_frame_result_release(&r);
	engi_structural_release(&s);
	return out;
}

/* A criterion named after its assertion type, numbered when it repeats. */
static void sc_name(json_t *criteria, const char *type, char *out, size_t n)
{
	snprintf(out, n, "%s", type);
	for (int k = 2;; k++) {
		int seen = 0;
		size_t i;
		json_t *c;
		json_array_foreach(criteria, i, c)
		{
			seen |= !strcmp(json_string_value(json_object_get(c, "name")), out);
		}
		if (!seen)
			return;
		snprintf(out, n, "%s-%d", type, k);
	}
}

/* The scenario's fields kept as task metadata (SCHEMA.md, `meta`), by
 * the key report --by groups on; one the file lacks is absent. */
static const struct {
	const char *field, *key;
} sc_meta_fields[] = {
    {"taskFamily", "family"},	  {"locale", "locale"},	    {"structureType", "structure_type"},
    {"difficulty", "difficulty"}, {"category", "category"}, {"inputModality", "modality"},
    {"split", "split"},
};

/* The metadata of scenario sc, or NULL with r filled (a field that is not
 * a string, or too long to keep). */
static json_t *sc_meta(json_t *sc, struct sc_refusal *r)
{
	json_t *meta = json_object();
	if (!meta) {
		snprintf(r->category, sizeof(r->category), "out of memory");
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < sizeof(sc_meta_fields) / sizeof(*sc_meta_fields); i++) {
		json_t *v = json_object_get(sc, sc_meta_fields[i].field);
		if (!v)
			continue;
		size_t n = json_string_length(v);
		char why[64] = "";
		if (!json_is_string(v))
			snprintf(why, sizeof(why), "found %s", engi_json_kind(v));
		else if (n == 0 || n > TASK_META_VALUE_MAX)
			snprintf(why, sizeof(why), "found %zu bytes", n);
		if (why[0]) {
			snprintf(r->category, sizeof(r->category), "malformed scenario");
			snprintf(r->msg, sizeof(r->msg),
				 "/%s: expected a string of 1 to %d bytes, %s",
				 sc_meta_fields[i].field, TASK_META_VALUE_MAX, why);
			json_decref(meta);
			return NULL;
		}
		json_object_set(meta, sc_meta_fields[i].key, v);
	}
	return meta;
}

/* What a scenario's assertions make, turn by turn: the criteria of one
 * turn, and for the whole scenario the interaction assertions, the
 * reference's steps and what the assertions ask for. */
struct sc_acc {
	json_t *criteria; /* this turn's */
	json_t *iassert;
	json_t *ref;
	json_t *judges; /* the last turn's */
	int last;	/* these assertions are the last turn's */
	int wants_analysis, wants_report, asks, gt_written;
	const char *truth_id; /* model_matches's ground truth */
	struct sc_gt_info *truth_info;
};

/* An interaction assertion asked_user, once whatever turns ask for it. */
static void sc_iassert(json_t *iassert, const char *name, int required)
{
	size_t i;
	json_t *c;
	json_array_foreach(iassert, i, c)
	{
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return;
	}
	json_array_append_new(iassert, json_pack("{s:s, s:s, s:b}", "name", name, "check",
						 "asked_user", "required", required));
}

/* The assertions as (at JSON pointer ptr) into acc: 0, or -1 with r filled. */
static int sc_assertions(json_t *as, const char *ptr, const struct sc_truths *g, struct sc_acc *acc,
			 struct sc_refusal *r)
{
	size_t i;
	json_t *a;
	int rc = 0;
	json_array_foreach(as, i, a)
	{
		const char *type = json_string_value(json_object_get(a, "type"));
		char name[64];
		if (!type) {
			snprintf(r->category, sizeof(r->category), "malformed scenario");
			snprintf(r->msg, sizeof(r->msg), "%s/%zu/type: expected a string", ptr, i);
			rc = -1;
			break;
		}
		sc_name(acc->criteria, type, name, sizeof(name));
		if (!strcmp(type, "skill_match") || !strcmp(type, "structural_type") ||
		    !strcmp(type, "engine_match")) {
			json_array_append_new(
			    acc->criteria,
			    json_pack(
				"{s:s, s:s, s:s}", "name", name, "check", "inapplicable", "reason",
				!strcmp(type, "skill_match")
				    ? "the skill StructureClaw's own runtime routes the request to"
				: !strcmp(type, "engine_match")
				    ? "the analysis engine StructureClaw's own runtime picks"
				    : "the structure type StructureClaw's own runtime infers"));
		} else if (!strcmp(type, "has_model")) {
			json_t *mn = json_object_get(a, "minNodes"),
			       *me = json_object_get(a, "minElements");
			json_array_append_new(
			    acc->criteria,
			    json_pack("{s:s, s:s, s:I, s:I}", "name", name, "check", "has_model",
				      "min_nodes", json_is_integer(mn) ? json_integer_value(mn) : 2,
				      "min_elements",
				      json_is_integer(me) ? json_integer_value(me) : 1));
		} else if (!strcmp(type, "model_matches")) {
			const char *gid = json_string_value(json_object_get(a, "groundTruthId"));
			struct sc_gt_info *gi = NULL;
			json_t *model = gid ? sc_truth(g, gid, &gi) : NULL;
			if (!model) {
				snprintf(r->category, sizeof(r->category), "ground truth missing");
				snprintf(r->msg, sizeof(r->msg),
					 "%s/%zu/groundTruthId: '%s' is not in " SC_GT, ptr, i,
					 gid ? gid : "(none)");
				rc = -1;
				break;
			}
			json_t *tol = json_object_get(a, "tolerances");
			json_t *st = json_object_get(tol, "span"),
			       *lt = json_object_get(tol, "load");
			json_array_append_new(
			    acc->criteria,
			    json_pack("{s:s, s:s, s:s, s:s, s:f, s:f}", "name", name, "check",
				      "model_matches", "reference", SC_GT, "id", gid, "span_tol",
				      json_is_number(st) ? json_number_value(st) : 0.5, "load_tol",
				      json_is_number(lt) ? json_number_value(lt) : 0.2));
			char strict[80];
			snprintf(strict, sizeof(strict), "%s_strict", name);
			json_array_append_new(
			    acc->criteria, json_pack("{s:s, s:s, s:s, s:s, s:b}", "name", strict,
						     "check", "model_matches_strict", "reference",
						     SC_GT, "id", gid, "required", 0));
			acc->truth_id = gid;
			acc->truth_info = gi;
			/* the responses of the model against the truth's, where
			 * the truth has one (not a mechanism: the audit says) */
			if (gi->has_truth) {
				snprintf(strict, sizeof(strict), "%s_responses", name);
				json_array_append_new(acc->criteria,
						      json_pack("{s:s, s:s, s:s, s:s, s:b}", "name",
								strict, "check", "responses_match",
								"reference", SC_GT, "id", gid,
								"required", 0));
			}
			if (!acc->gt_written) {
				char *text = json_dumps(model, JSON_INDENT(1));
				if (text) {
					json_array_append_new(
					    acc->ref, json_pack("{s:s, s:s}", "write", "model.json",
								"text", text));
					const char *an = gi->analysis;
					if (an)
						json_array_append_new(
						    acc->ref,
						    json_pack("{s:s, s:s}", "write",
							      "analysis.json", "text", an));
					free(text);
				}
				acc->gt_written = 1;
			}
		} else if (!strcmp(type, "has_analysis")) {
			acc->wants_analysis = 1;
			json_array_append_new(acc->criteria,
					      json_pack("{s:s, s:s, s:s}", "name", name, "check",
							"has_analysis", "file", "analysis.json"));
			/* beside the benchmark's check, not required: are the
			 * numbers the re-solve of the delivered model's? */
			char right[80];
			snprintf(right, sizeof(right), "%s_right", name);
			json_array_append_new(acc->criteria,
					      json_pack("{s:s, s:s, s:s, s:b}", "name", right,
							"check", "analysis_matches", "file",
							"analysis.json", "required", 0));
		} else if (!strcmp(type, "has_report")) {
			acc->wants_report = 1;
			json_array_append_new(acc->criteria,
					      json_pack("{s:s, s:s, s:s, s:i}", "name", name,
							"check", "has_report", "file", "report.md",
							"min_chars", 100));
		} else if (!strcmp(type, "no_bad_model")) {
			json_array_append_new(acc->criteria, json_pack("{s:s, s:s}", "name", name,
								       "check", "no_bad_model"));
		} else if (!strcmp(type, "should_not_analyze")) {
			json_array_append_new(acc->criteria,
					      json_pack("{s:s, s:s, s:s}", "name", name, "check",
							"no_analysis", "file", "analysis.json"));
		} else if (!strcmp(type, "has_interaction_questions")) {
			acc->asks = 1;
			sc_iassert(acc->iassert, name, 1);
		} else if (!strcmp(type, "analysis_or_interaction")) {
			/* not in the published evaluator (an unknown type fails
			 * there): engisweep reads it by its name */
			acc->asks = 1;
			sc_iassert(acc->iassert, "asked_user", 0);
			json_array_append_new(
			    acc->criteria, json_pack("{s:s, s:s, s:s, s:s, s:b}", "name",
						     "analysis_delivered", "check", "has_analysis",
						     "file", "analysis.json", "required", 0));
			json_array_append_new(acc->criteria,
					      json_pack("{s:s, s:s, s:[s, s]}", "name", name,
							"check", "any_of", "of",
							"analysis_delivered", "asked_user"));
		} else if (!strcmp(type, "natural_language")) {
			/* a rubric for a language model: a judge of the task,
			 * reading what the agent said and delivered */
			json_t *d = json_object_get(a, "description");
			if (!json_is_string(d) || !json_string_length(d)) {
				snprintf(r->category, sizeof(r->category), "malformed scenario");
				snprintf(r->msg, sizeof(r->msg),
					 "%s/%zu/description: expected the rubric "
					 "(a string)",
					 ptr, i);
				rc = -1;
				break;
			}
			if (json_string_length(d) > TASK_JUDGE_RUBRIC_MAX) {
				snprintf(r->category, sizeof(r->category), "malformed scenario");
				snprintf(r->msg, sizeof(r->msg),
					 "%s/%zu/description: a rubric of %zu "
					 "bytes, at most %d",
					 ptr, i, json_string_length(d), TASK_JUDGE_RUBRIC_MAX);
				rc = -1;
				break;
			}
			size_t nj = json_array_size(acc->judges);
			if (nj)
				snprintf(name, sizeof(name), "natural_language-%zu", nj + 1);
			else
				snprintf(name, sizeof(name), "natural_language");
			json_array_append_new(acc->judges,
					      json_pack("{s:s, s:O, s:[s, s, s]}", "name", name,
							"rubric", d, "inputs", "report.md",
							"analysis.json", "model.json"));
		} else {
			snprintf(r->category, sizeof(r->category), "assertion not supported");
			snprintf(r->msg, sizeof(r->msg),
				 "%s/%zu/type: '%s' is not an assertion engisweep knows", ptr, i,
				 type);
			rc = -1;
			break;
		}
	}
	return rc;
}

/* One scenario file into s (0), or refused (r filled, -1). */
static int sc_translate(struct suite *s, const char *root, const char *family, const char *file,
			json_t *sc, const struct sc_truths *g, struct sc_refusal *r,
			struct engi_error *err)
{
	const char *id = json_string_value(json_object_get(sc, "id"));
	if (!id || !engi_json_name_valid_max(id, strlen(id), ENGI_TASK_ID_STR - 1))
		SUITE_REFUSE(r, "malformed scenario", "/id: expected a name");
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	if (strncmp(base, id, strlen(id)) || strcmp(base + strlen(id), ".json"))
		SUITE_REFUSE(r, "malformed scenario", "/id: '%s' is not the file's name", id);
	size_t i0;
	const char *fam = json_string_value(json_object_get(sc, "taskFamily"));
	if (!fam || strcmp(fam, family))
		SUITE_REFUSE(r, "malformed scenario", "/taskFamily: '%s' is not its folder '%s'",
			     fam ? fam : "(none)", family);
	json_t *turns = json_object_get(sc, "turns");
	const char *msg = json_string_value(json_object_get(sc, "message"));
	json_t *as = json_object_get(json_object_get(sc, "expect"), "assertions");
	if (turns) {
		/* a conversation: the first message, then each next one as a
		 * follow-up when the agent ends its turn */
		if (!json_is_array(turns) || json_array_size(turns) < 2 ||
		    json_array_size(turns) > TASK_FOLLOWUPS_MAX + 1)
			SUITE_REFUSE(r, "malformed scenario",
				     "/turns: expected a list of 2 to %d turns",
				     TASK_FOLLOWUPS_MAX + 1);
		json_t *tk;
		json_array_foreach(turns, i0, tk)
		{
			const char *m = json_string_value(json_object_get(tk, "message"));
			json_t *ta = json_object_get(tk, "assertions");
			if (!m || !*m || strlen(m) > TASK_FOLLOWUP_MSG_MAX)
				SUITE_REFUSE(r, "malformed scenario",
					     "/turns/%zu/message: expected the request (at most %d "
					     "bytes)",
					     i0, TASK_FOLLOWUP_MSG_MAX);
			if (!json_is_array(ta) || !json_array_size(ta))
				SUITE_REFUSE(r, "malformed scenario",
					     "/turns/%zu/assertions: expected a list", i0);
		}
		msg = json_string_value(json_object_get(json_array_get(turns, 0), "message"));
	} else {
		if (!msg || !*msg)
			SUITE_REFUSE(r, "malformed scenario", "/message: expected the request");
		if (!json_is_array(as) || !json_array_size(as))
			SUITE_REFUSE(r, "malformed scenario",
				     "/expect/assertions: expected a list");
	}
	json_t *meta = sc_meta(sc, r);
	if (!meta)
		return -1;

	struct sc_acc acc = {.iassert = json_array(), .ref = json_array(), .judges = json_array()};
	json_t *followups = NULL;
	size_t i;
	json_t *a;
	int rc = 0;
	if (turns) {
		/* each turn's assertions judge the deliverables as that turn
		 * leaves them: the last turn's are the task's verifier, every
		 * other's the verifier of the follow-up that closes it */
		followups = json_array();
		size_t nt = json_array_size(turns);
		for (size_t k = 0; rc == 0 && k < nt; k++) {
			json_t *tk = json_array_get(turns, k);
			char ptr[64];
			snprintf(ptr, sizeof(ptr), "/turns/%zu/assertions", k);
			json_decref(acc.criteria);
			acc.criteria = json_array();
			size_t before = json_array_size(acc.ref);
			int asked = acc.asks;
			acc.asks = 0;
			acc.last = k + 1 == nt;
			/* a turn before the last judges its own state: its judges
			 * go with the follow-up that closes it */
			json_t *all_judges = acc.judges;
			if (!acc.last)
				acc.judges = json_array();
			rc = sc_assertions(json_object_get(tk, "assertions"), ptr, g, &acc, r);
			json_t *turn_judges = acc.last ? NULL : acc.judges;
			acc.judges = all_judges;
			if (acc.asks && json_array_size(acc.ref) == before)
				json_array_append_new(
				    acc.ref,
				    json_pack("{s:s}", "ask", "Which values are missing?"));
			acc.asks |= asked;
			if (rc == 0 && k + 1 < nt) {
				json_array_append_new(acc.ref,
						      json_pack("{s:s}", "done", "turn answered"));
				json_t *fu = json_pack(
				    "{s:O, s:{s:s, s:s, s:O}}", "message",
				    json_object_get(json_array_get(turns, k + 1), "message"),
				    "verifier", "kind", "structureclaw", "file", "model.json",
				    "criteria", acc.criteria);
				if (fu && json_array_size(turn_judges))
					json_object_set(fu, "judges", turn_judges);
				json_array_append_new(followups, fu);
			}
			json_decref(turn_judges);
		}
	} else {
		acc.criteria = json_array();
		acc.last = 1;
		rc = sc_assertions(as, "/expect/assertions", g, &acc, r);
	}
	json_t *criteria = acc.criteria, *iassert = acc.iassert, *ref = acc.ref,
	       *judges = acc.judges;
	int wants_analysis = acc.wants_analysis, wants_report = acc.wants_report, asks = acc.asks,
	    gt_written = acc.gt_written;
	const char *truth_id = acc.truth_id;
	struct sc_gt_info *truth_info = acc.truth_info;
	if (rc < 0) {
		json_decref(criteria);
		json_decref(iassert);
		json_decref(ref);
		json_decref(followups);
		json_decref(meta);
		json_decref(judges);
		return -1;
	}
	/* does the report state the truth's largest displacement? where it has
	 * one that is not zero (the audit names the models that do not move) */
	int report_numbers =
	    wants_report && truth_info && truth_info->has_truth && truth_info->max_u > 1e-12;
	if (report_numbers)
		json_array_append_new(criteria,
				      json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name",
						"has_report_numbers", "check", "report_matches",
						"file", "report.md", "reference", SC_GT, "id",
						truth_id, "required", 0));
	if (wants_report && gt_written) {
		/* the reference's report: what it delivered, and its numbers */
		json_t *an = json_object_get(json_array_get(ref, 1), "text");
		size_t n = (an ? json_string_length(an) : 0) + 512;
		char *rep = engi_malloc(n);
		char largest[ENGI_STRUCT_NAME_MAX + 160] = "";
		if (report_numbers)
			snprintf(largest, sizeof(largest),
				 "The largest displacement is %.6g mm, in load case '%s'.\n\n",
				 1e3 * truth_info->max_u, truth_info->state);
		if (rep) {
			snprintf(
			    rep, n,
			    "# Structural analysis report\n\nThe model is in model.json. %sThe "
			    "analysis results (nodal displacements, reactions and member end "
			    "forces "
			    "of the first load case) are in analysis.json:\n\n```json\n%s\n```\n",
			    largest, an ? json_string_value(an) : "(the model does not solve)");
			json_array_append_new(
			    ref, json_pack("{s:s, s:s}", "write", "report.md", "text", rep));
			engi_free(rep);
		}
	}
	/* flawed variants, each failing the check it targets (validate, audit) */
	json_t *flawed = json_array();
	json_t *w0 = json_array_get(ref, 0);
	const char *gt_model = gt_written ? json_string_value(json_object_get(w0, "text")) : NULL;
	if (gt_model) {
		/* the truth stretched half as long again: the span is wrong */
		json_t *m = json_loads(gt_model, 0, NULL);
		json_t *nodes = json_object_get(m, "nodes"), *nd;
		size_t k;
		json_array_foreach(nodes, k, nd)
		{
			json_t *x = json_object_get(nd, "x");
			if (json_is_number(x))
				json_object_set_new(nd, "x", json_real(1.5 * json_number_value(x)));
		}
		char *txt = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
		json_decref(m);
		if (txt) {
			json_t *steps = json_deep_copy(ref);
			json_array_set_new(
			    steps, 0, json_pack("{s:s, s:s}", "write", "model.json", "text", txt));
			json_array_append_new(flawed,
					      json_pack("{s:s, s:o, s:s, s:[s]}", "name",
							"wrong-span", "steps", steps, "expect",
							"fail", "failing", "model_matches"));
			free(txt);
		}
		if (wants_analysis)
			json_array_append_new(flawed, json_pack("{s:s, s:[O], s:s, s:[s]}", "name",
								"model-only", "steps", w0, "expect",
								"fail", "failing", "has_analysis"));
	}
	if (asks && !gt_written) {
		/* models at once instead of asking */
		json_array_append_new(
		    flawed,
		    json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:s}", "name", "models-at-once",
			      "steps", "write", "model.json", "text",
			      "{\"schema_version\": \"2.0.0\", \"nodes\": [{\"id\": \"1\"}, "
			      "{\"id\": \"2\"}], \"elements\": [{\"id\": \"1\"}]}",
			      "write", "analysis.json", "text",
			      "{\"displacements\": [{\"node\": 2, \"uz\": -0.01}]}", "expect",
			      "fail"));
	}
	if (!json_array_size(ref)) /* the right answer: ask, deliver nothing */
		json_array_append_new(
		    ref, asks ? json_pack("{s:s}", "ask", "Which values are missing or wrong?")
			      : json_pack("{s:s}", "done", "nothing to deliver"));
	size_t len = strlen(msg) + sizeof(sc_contract);
	char *instruction = engi_malloc(len);
	if (!instruction) {
		json_decref(criteria);
		json_decref(iassert);
		json_decref(ref);
		json_decref(flawed);
		json_decref(followups);
		json_decref(meta);
		json_decref(judges);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	snprintf(instruction, len, "%s%s", msg, sc_contract);
	json_t *task =
	    json_pack("{s:s, s:s, s:[s], s:s, s:s, s:s, s:[{s:s, s:b}, {s:s, s:b}, {s:s, s:b}], "
		      "s:{s:s, s:s, s:o}, s:o}",
		      "id", id, "domain", "CAE", "software", "structural-analysis", "type",
		      "single", "interface", "cli", "instruction", instruction, "deliverables",
		      "path", "model.json", "required", 0, "path", "analysis.json", "required", 0,
		      "path", "report.md", "required", 0, "verifier", "kind", "structureclaw",
		      "file", "model.json", "criteria", criteria, "reference", ref);
	engi_free(instruction);
	if (!task) {
		json_decref(iassert);
		json_decref(flawed);
		json_decref(followups);
		json_decref(meta);
		json_decref(judges);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	if (followups)
		json_object_set_new(task, "followups", followups);
	if (json_object_size(meta))
		json_object_set(task, "meta", meta);
	json_decref(meta);
	if (json_array_size(judges))
		json_object_set(task, "judges", judges);
	json_decref(judges);
	const char *title = json_string_value(json_object_get(sc, "description"));
	if (title)
		json_object_set_new(task, "title", json_string(title));
	if (turns) {
		/* a check a variant targets sits in one of the turns: each
		 * variant must fail, wherever */
		json_t *fv;
		json_array_foreach(flawed, i, fv)
		{
			json_object_del(fv, "failing");
		}
	}
	if (json_array_size(flawed))
		json_object_set(task, "flawed", flawed);
	json_decref(flawed);
	if (asks)
		json_object_set_new(task, "interaction",
				    json_pack("{s:[{s:s}], s:o}", "user", "reply", sc_user_reply,
					      "assert", iassert));
	else
		json_decref(iassert);
	/* drawings: the attachments, PNG shown with the message, others as files */
	json_t *att = json_object_get(sc, "attachments"), *drawings = json_array(),
	       *inputs = json_array();
	json_array_foreach(att, i, a)
	{
		const char *rel = json_string_value(json_object_get(a, "relPath"));
		const char *orig = json_string_value(json_object_get(a, "originalName"));
		char p[PATH_MAX], use[PATH_MAX];
		use[0] = '\0';
		if (rel && !strstr(rel, "..") && rel[0] != '/') {
			snprintf(p, sizeof(p), "%s/%s", root, rel);
			if (fs_path_is_file(p))
				snprintf(use, sizeof(use), "%s", rel);
		}
		if (!use[0] && orig && !strchr(orig, '/') && strcmp(orig, "..")) {
			/* paths into the benchmark's own runtime tree: the
			 * fixture of that name */
			snprintf(p, sizeof(p), "%s/fixtures/%s", root, orig);
			if (fs_path_is_file(p))
				snprintf(use, sizeof(use), "fixtures/%s", orig);
		}
		if (!use[0]) {
			json_decref(task);
			json_decref(drawings);
			json_decref(inputs);
			SUITE_REFUSE(r, "attachment missing",
				     "/attachments/%zu: '%s' is not in the benchmark's folder", i,
				     rel ? rel : "(none)");
		}
		size_t k = strlen(use);
		if (k > 4 && !strcasecmp(use + k - 4, ".png"))
			json_array_append_new(drawings, json_string(use));
		else
			json_array_append_new(
			    inputs, json_pack("{s:s, s:s}", "host", use, "env",
					      strrchr(use, '/') ? strrchr(use, '/') + 1 : use));
	}
	if (json_array_size(drawings))
		json_object_set(task, "drawings", drawings);
	if (json_array_size(inputs))
		json_object_set(task, "inputs", inputs);
	json_decref(drawings);
	json_decref(inputs);
	rc = suite_add_json(s, file, root, task, err);
	json_decref(task);
	return rc;
}

static int sc_load_file(struct suite *s, const char *root, const char *family, const char *file,
			const struct sc_truths *g, int strict, struct engi_error *err)
{
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	json_t *sc = NULL;
	struct sc_refusal r = {"", ""};
	int rc = fs_read_file(file, SC_FILE_CAP, &text, &len, &e);
	if (rc == 0)
		rc = engi_json_parse(file, text, len, &sc, &e);
	engi_free(text);
	if (rc < 0) {
		json_decref(sc);
		return suite_settle_file(s, file, rc, "not valid JSON", e.msg, 1, &e, strict, err);
	}
	if (!json_is_object(sc)) {
		rc = -1;
		snprintf(r.category, sizeof(r.category), "malformed scenario");
		snprintf(r.msg, sizeof(r.msg), "/: expected an object");
	} else {
		rc = sc_translate(s, root, family, file, sc, g, &r, &e);
	}
	json_decref(sc);
	return suite_settle_file(s, file, rc, r.category, r.msg, 0, &e, strict, err);
}

static int sc_load(struct suite *s, const char *path, int strict, struct engi_error *err)
{
	char root[PATH_MAX];
	char *abs = realpath(path, NULL);
	if (!abs || !sc_root(abs, root, sizeof(root))) {
		free(abs);
		RAISE(err, ENGI_ENOTFOUND,
		      "'%s' is not a StructureClaw-Bench folder (no scenarios/ and " SC_GT ")",
		      path);
	}
	free(abs);
	char gtp[PATH_MAX + 64];
	snprintf(gtp, sizeof(gtp), "%s/" SC_GT, root);
	char *text = NULL;
	size_t len = 0;
	struct sc_truths g = {NULL, NULL};
	TRY(fs_read_file(gtp, SC_GT_CAP, &text, &len, err));
	int rc = engi_json_parse(gtp, text, len, &g.list, err);
	engi_free(text);
	if (rc < 0)
		return rc;
	if (!json_is_array(g.list)) {
		json_decref(g.list);
		RAISE(err, ENGI_EPARSE, "%s: /: expected a list of ground-truth models", gtp);
	}
	g.info = engi_calloc(json_array_size(g.list) + 1, sizeof(*g.info));
	if (!g.info) {
		json_decref(g.list);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	size_t found = 0;
	for (size_t f = 0; rc == 0 && f < sizeof(sc_families) / sizeof(*sc_families); f++) {
		char dir[PATH_MAX + 64];
		snprintf(dir, sizeof(dir), "%s/scenarios/%s", root, sc_families[f]);
		char **names;
		size_t n;
		if (fs_dir_names(dir, sc_keep_json, NULL, SC_MAX_FILES, &names, &n) < 0)
			continue;
		for (size_t i = 0; rc == 0 && i < n; i++) {
			char file[2 * PATH_MAX];
			snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
			found++;
			rc = sc_load_file(s, root, sc_families[f], file, &g, strict, err);
		}
		fs_names_free(names, n);
	}
	for (size_t i = 0; i < json_array_size(g.list); i++)
		free(g.info[i].analysis);
	engi_free(g.info);
	json_decref(g.list);
	if (rc == 0 && !found)
		rc = engi_raise(err, ENGI_ENOTFOUND, "'%s' holds no scenario", root);
	return rc;
}

static const struct task_source_ops sc_ops = {
    .probe = sc_probe,
    .load = sc_load,
};

const struct task_source task_source_structureclaw = {
    .name = "structureclaw",
    .summary = "StructureClaw-Bench (scenarios/<family>/<id>.json, fixtures/"
	       "ground-truth-models.json)",
    .supports = "scenarios of one turn or several (each next message a follow-up); "
		"assertions has_model, model_matches (the benchmark's "
		"rule, and strict matching beside it), has_analysis, has_report, no_bad_model, "
		"should_not_analyze, has_interaction_questions, analysis_or_interaction, "
		"natural_language (a judge); "
		"skill_match, structural_type, engine_match recorded as inapplicable",
    .ops = &sc_ops,
    .partial = 1,
};
