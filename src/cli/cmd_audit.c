/*
 * engisweep audit SUITE: finds broken tasks before they cost a sweep. The
 * probes of `validate` are run on every task (its reference: a benchmark's
 * ground truth put at the artifact paths; agent noop; the flawed variants,
 * among them a benchmark source's cheat probe "empty-artifacts"), and what
 * they say about the task, not the agent, is tabulated per task:
 *
 *   noop_passes             the evaluator passes when nothing was delivered
 *   empty_artifacts_pass    ... when every artifact is there but empty
 *   ground_truth_fails      the task's own ground truth fails its evaluator
 *   passes_without          the ground truth lacks artifacts (the program's
 *                           own output) and still passes: a summary written
 *                           by hand from the expected numbers passes
 *   agent_score_file        the score came from a file the evaluator did not
 *                           write (an artifact: an agent scores itself)
 *   evaluator_error         the evaluator failed (never a verdict)
 *   deck_mechanism          a CalculiX ground-truth deck, re-solved by the
 *                           FE kernel, has no unique solution
 *   summary_zero            summary.txt gives only zeros where the re-solved
 *                           deck moves
 *
 * and for StructureClaw-Bench's ground truths, re-solved by the frame kernel:
 *
 *   model_mechanism         the model has no unique solution
 *   model_does_not_move     it solves with zero displacement under its loads
 *   supports_restrain_rotation  a beam called simply supported or continuous
 *                           whose supports restrain its in-plane rotation
 *   inertia_ambiguous       a 2D result that changes by more than 3 % when
 *                           columns bend with Iz instead of Iy
 *   section_values          a section carrying the same values as one named
 *                           for other dimensions
 *
 * and, as notes, what could not be checked. Nothing of the benchmark is
 * changed; the table goes to stdout, the same as JSON to --json FILE.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/fe.h"
#include "engi/structural.h"
#include "engi/slurp.h"
#include "fsutil.h"
#include "record.h"
#include "scheduler.h"
#include "store.h"
#include "sweep.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char audit_help[] =
    "usage: engisweep audit [options] SUITE\n"
    "\n"
    "Finds broken tasks before they cost a sweep: runs on every task its\n"
    "reference (a benchmark's ground truth put at its artifact paths), agent\n"
    "noop and its flawed variants (a benchmark's cheat probes: every artifact\n"
    "there but empty), re-solves CalculiX ground-truth decks with the FE\n"
    "kernel, and lists per task what is wrong with the task, not the agent:\n"
    "noop_passes, empty_artifacts_pass, ground_truth_fails, passes_without\n"
    "(artifacts the ground truth lacks and the evaluator does not need),\n"
    "evaluator_error, deck_mechanism, summary_zero; StructureClaw-Bench's\n"
    "ground truths re-solved by the frame kernel: model_mechanism,\n"
    "model_does_not_move, supports_restrain_rotation, inertia_ambiguous,\n"
    "section_values. A task's judges (a language model's rubric) are not\n"
    "checked: audit calls no model, and its notes say so. The benchmark is\n"
    "never changed. Exits 0 when no task has a finding, 1 when some have, 2 on\n"
    "a bad setting.\n"
    "\n"
    "options:\n"
    "      --json FILE        the findings as JSON too\n"
    "      --clean FILE       the ids of the tasks without a finding, one a line:\n"
    "                         a sweep of them alone is run --subset file:FILE\n"
    "  -o, --out DIR          results folder of the probe runs (default: a new\n"
    "                         folder under $TMPDIR, removed afterwards unless --keep)\n"
    "  -b, --backend NAME     where episodes run (local, qemu; default: local)\n"
    "      --source NAME      the suite's task source (default: detected)\n"
    "      --subset SPEC      only these tasks (file:PATH of ids, or strata)\n"
    "      --images FILE      a benchmark's snapshots -> engisweep images\n"
    "      --deliverables FILE  what a Harbor task's agent delivers: a JSON\n"
    "                         object of task name (or \"*\") -> paths\n"
    "                         (docs/parametric-cad-bench.md)\n"
    "  -j, --jobs N           episodes at once (default 1)\n"
    "      --keep             keep the results folder\n"
    "  -q, --quiet            no progress output\n"
    "  -h, --help             this text\n";

struct finding {
	const char *kind;
	char detail[512];
};

struct task_audit {
	struct finding f[8];
	size_t nf;
	char notes[512];
};

static void add_finding(struct task_audit *a, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_finding(struct task_audit *a, const char *kind, const char *fmt, ...)
{
	if (a->nf >= sizeof(a->f) / sizeof(*a->f))
		return;
	struct finding *f = &a->f[a->nf++];
	f->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
}

static void add_note(struct task_audit *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_note(struct task_audit *a, const char *fmt, ...)
{
	size_t l = strlen(a->notes);
	if (l + 4 >= sizeof(a->notes))
		return;
	if (l)
		l += (size_t)snprintf(a->notes + l, sizeof(a->notes) - l, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->notes + l, sizeof(a->notes) - l, fmt, ap);
	va_end(ap);
}

/* The folder of the task file, where EngiWorld keeps a task's
 * ground_truth/ (a task's own dir may be its whole tree, whose files the
 * tasks share). */
static void task_folder(const struct task *t, char *out, size_t n)
{
	const char *slash = strrchr(t->file, '/');
	if (slash)
		snprintf(out, n, "%.*s", (int)(slash - t->file), t->file);
	else
		snprintf(out, n, ".");
}

/* The ground truth's files (the task's folder/ground_truth/NAME) for
 * deliverable base names: which deliverables it lacks, into out. */
static size_t lacking(const struct task *t, char *out, size_t n)
{
	char dir[PATH_MAX], gdir[PATH_MAX + 16];
	task_folder(t, dir, sizeof(dir));
	size_t k = 0, w = 0;
	out[0] = '\0';
	/* only a task whose ground truth is a folder of files (EngiWorld's) */
	snprintf(gdir, sizeof(gdir), "%s/ground_truth", dir);
	if (!fs_path_is_dir(gdir))
		return 0;
	for (size_t i = 0; i < t->ndeliverables; i++) {
		const char *p = t->deliverables[i].path;
		const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		char gt[PATH_MAX];
		snprintf(gt, sizeof(gt), "%s/ground_truth/%s", dir, base);
		if (fs_path_is_file(gt))
			continue;
		k++;
		if (w + strlen(p) + 3 < n)
			w += (size_t)snprintf(out + w, n - w, "%s%s", w ? ", " : "", p);
	}
	return k;
}

/* Every number of a text file; -1 when it cannot be read. */
/* The largest translation of a StructureClaw-format model's first state;
 * -1 when it does not solve (msg says why). */
static double sc_max_u(json_t *model, char *msg, size_t n)
{
	char *text = json_dumps(model, JSON_COMPACT);
	struct engi_structural s;
	struct engi_frame_result r;
	engi_structural_init(&s);
	engi_frame_result_init(&r);
	struct engi_error e;
	engi_error_init(&e);
	double u = -1;
	if (text && engi_structural_parse("model", text, strlen(text), &s, &e) == 0 &&
	    engi_frame_solve(&s.f, NULL, &r, &e) == 0 && r.nstates > 0)
		u = r.state[0].max_u;
	else if (msg)
		snprintf(msg, n, "%s", text ? e.msg : "out of memory");
	engi_frame_result_release(&r);
	engi_structural_release(&s);
	free(text);
	return u;
}

static json_t *sc_node(json_t *model, const char *id)
{
	size_t i;
	json_t *nd;
	json_array_foreach(json_object_get(model, "nodes"), i, nd)
	{
		const char *nid = json_string_value(json_object_get(nd, "id"));
		if (nid && !strcmp(nid, id))
			return nd;
	}
	return NULL;
}

/* The model with every vertical member's section a copy bending about the
 * other axis (Iy := Iz): what a 2D solver that gives columns Iz computes. */
static json_t *sc_other_inertia(json_t *model, size_t *changed)
{
	json_t *m = json_deep_copy(model);
	json_t *secs = json_object_get(m, "sections");
	size_t i;
	json_t *el;
	*changed = 0;
	json_array_foreach(json_object_get(m, "elements"), i, el)
	{
		json_t *ns = json_object_get(el, "nodes");
		json_t *a = sc_node(m, json_string_value(json_array_get(ns, 0)));
		json_t *b = sc_node(m, json_string_value(json_array_get(ns, 1)));
		if (!a || !b)
			continue;
		double dx = json_number_value(json_object_get(b, "x")) -
			    json_number_value(json_object_get(a, "x"));
		double dz = json_number_value(json_object_get(b, "z")) -
			    json_number_value(json_object_get(a, "z"));
		if (fabs(dz) <= fabs(dx))
			continue;
		const char *sid = json_string_value(json_object_get(el, "section"));
		size_t k;
		json_t *sec, *found = NULL;
		json_array_foreach(secs, k, sec)
		{
			const char *id = json_string_value(json_object_get(sec, "id"));
			if (id && sid && !strcmp(id, sid))
				found = sec;
		}
		json_t *pr = json_object_get(found, "properties");
		json_t *iy = json_object_get(pr, "Iy"), *iz = json_object_get(pr, "Iz");
		if (!iy || !iz || json_number_value(iy) == json_number_value(iz))
			continue;
		json_t *copy = json_deep_copy(found);
		char nid[96];
		snprintf(nid, sizeof(nid), "%s~column%zu", sid, i);
		json_object_set_new(copy, "id", json_string(nid));
		json_object_set(json_object_get(copy, "properties"), "Iy", iz);
		json_array_append_new(secs, copy);
		json_object_set_new(el, "section", json_string(nid));
		(*changed)++;
	}
	return m;
}

/* The dimensions in a section name, its first "NxM" ("H600x250" ->
 * "600x250", "C30 500x500" -> "500x500"); empty when it has none. */
static void sc_dims(const char *name, char *out, size_t n)
{
	out[0] = '\0';
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9' || (c > name && c[-1] >= '0' && c[-1] <= '9'))
			continue;
		size_t k = strspn(c, "0123456789.");
		if (c[k] != 'x' || c[k + 1] < '0' || c[k + 1] > '9')
			continue;
		k += 1 + strspn(c + k + 1, "0123456789.");
		snprintf(out, n, "%.*s", (int)k, c);
		return;
	}
}

/* A StructureClaw task's ground truths, checked as models: mechanisms,
 * models that do not move, supports of a beam called simply supported or
 * continuous that restrain its in-plane rotation, 2D models whose result
 * depends on which inertia columns get, sections named for other
 * dimensions than the values they carry. */
static void check_sc_truths(const struct task *t, struct task_audit *a)
{
	json_t *task = t->json ? json_loads(t->json, 0, NULL) : NULL;
	json_t *ver = json_object_get(task, "verifier");
	const char *kind = json_string_value(json_object_get(ver, "kind"));
	if (!kind || strcmp(kind, "structureclaw")) {
		json_decref(task);
		return;
	}
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(ver, "criteria"), i, c)
	{
		const char *check = json_string_value(json_object_get(c, "check"));
		const char *ref = json_string_value(json_object_get(c, "reference"));
		const char *id = json_string_value(json_object_get(c, "id"));
		if (!check || strcmp(check, "model_matches") || !ref || !id)
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", t->dir, ref);
		json_t *all = json_load_file(path, 0, NULL), *entry = NULL, *e;
		size_t k;
		json_array_foreach(all, k, e)
		{
			const char *eid = json_string_value(json_object_get(e, "id"));
			if (eid && !strcmp(eid, id))
				entry = e;
		}
		json_t *model = json_object_get(entry, "model");
		if (!model) {
			json_decref(all);
			continue;
		}
		char why[ENGI_ERROR_MSG_MAX] = "";
		double u = sc_max_u(model, why, sizeof(why));
		if (u < 0)
			add_finding(a, "model_mechanism", "ground truth '%s' does not solve: %s",
				    id, why);
		else if (u == 0)
			add_finding(
			    a, "model_does_not_move",
			    "ground truth '%s' solves with zero displacement everywhere under "
			    "its loads",
			    id);
		const char *desc = json_string_value(json_object_get(entry, "description"));
		const char *dim = json_string_value(
		    json_object_get(json_object_get(model, "metadata"), "frameDimension"));
		int two_d = dim && !strcmp(dim, "2d");
		if (two_d && desc &&
		    (strstr(desc, "\xe7\xae\x80\xe6\x94\xaf") /* 简支 */ ||
		     strstr(desc, "\xe8\xbf\x9e\xe7\xbb\xad") /* 连续 */ ||
		     strstr(desc, "simply supported") || strstr(desc, "continuous"))) {
			size_t fixed = 0;
			json_t *nd;
			json_array_foreach(json_object_get(model, "nodes"), k, nd)
			{
				fixed += json_is_true(
				    json_array_get(json_object_get(nd, "restraints"), 4));
			}
			if (fixed >= 2)
				add_finding(
				    a, "supports_restrain_rotation",
				    "ground truth '%s' (%s): %zu supports restrain the in-plane "
				    "rotation ry, so it is solved as fixed-ended",
				    id, desc, fixed);
		}
		size_t changed = 0;
		json_t *other = two_d && u > 0 ? sc_other_inertia(model, &changed) : NULL;
		double u2 = changed ? sc_max_u(other, NULL, 0) : -1;
		if (changed && u2 > 0 && fabs(u2 - u) > 0.03 * u)
			add_finding(
			    a, "inertia_ambiguous",
			    "ground truth '%s': its largest displacement is %.4g m with Iy for "
			    "its %zu vertical members, %.4g m (%+.0f %%) with Iz",
			    id, u, changed, u2, 100 * (u2 - u) / u);
		json_decref(other);
		/* sections named for other dimensions carrying the same values */
		json_t *sec;
		json_array_foreach(json_object_get(model, "sections"), k, sec)
		{
			const char *nm = json_string_value(json_object_get(sec, "name"));
			json_t *pr = json_object_get(sec, "properties");
			char d1[64], d2[64];
			if (!nm || !pr)
				continue;
			sc_dims(nm, d1, sizeof(d1));
			size_t q;
			json_t *oe;
			json_array_foreach(all, q, oe)
			{
				size_t r;
				json_t *os;
				json_array_foreach(
				    json_object_get(json_object_get(oe, "model"), "sections"), r,
				    os)
				{
					const char *on =
					    json_string_value(json_object_get(os, "name"));
					if (!on || !strcmp(on, nm) ||
					    !json_equal(pr, json_object_get(os, "properties")))
						continue;
					sc_dims(on, d2, sizeof(d2));
					if (!d1[0] || !d2[0] || !strcmp(d1, d2))
						continue;
					add_finding(
					    a, "section_values",
					    "ground truth '%s': section %s carries the same values "
					    "as %s of '%s'",
					    id, nm, on,
					    json_string_value(json_object_get(oe, "id")));
					goto next_section;
				}
			}
		next_section:;
		}
		json_decref(all);
		break;
	}
	json_decref(task);
}

static int numbers_of(const char *path, double *v, size_t cap, size_t *n)
{
	char *text = NULL;
	size_t len = 0;
	*n = 0;
	if (engi_io_slurp(path, "summary", "text", (size_t)1 << 20, &text, &len, NULL) < 0)
		return -1;
	for (char *p = text; *p && *n < cap;) {
		char *end = NULL;
		double x = strtod(p, &end);
		if (end && end != p && isfinite(x)) {
			v[(*n)++] = x;
			p = end;
		} else {
			p++;
		}
	}
	engi_free(text);
	return 0;
}

/* The CalculiX ground-truth decks of a task, re-solved. */
static void check_decks(const struct task *t, struct task_audit *a)
{
	int calculix = 0;
	for (size_t i = 0; i < t->nsoftware; i++)
		calculix |= !strcmp(t->software[i], "calculix");
	if (!calculix)
		return;
	char dir[PATH_MAX], gdir[PATH_MAX + 16];
	task_folder(t, dir, sizeof(dir));
	snprintf(gdir, sizeof(gdir), "%s/ground_truth", dir);
	DIR *d = opendir(gdir);
	if (!d) {
		add_note(a, "no ground_truth/ deck to re-solve");
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".inp"))
			continue;
		char deck[PATH_MAX];
		snprintf(deck, sizeof(deck), "%s/%s", gdir, de->d_name);
		struct engi_fe_solid m;
		struct engi_fe_solid_result r;
		engi_fe_solid_init(&m);
		engi_fe_solid_result_init(&r);
		struct engi_fe_solve_opts so;
		memset(&so, 0, sizeof(so));
		struct engi_error e;
		engi_error_init(&e);
		int rc = engi_inp_read(deck, &m, &e);
		if (rc < 0) {
			add_note(a, "%s not re-solved: %s", de->d_name,
				 strstr(e.msg, ": ") ? strstr(e.msg, ": ") + 2 : e.msg);
		} else if ((rc = engi_fe_solid_solve(&m, &so, &r, &e)) < 0) {
			if (strstr(e.msg, "mechanism"))
				add_finding(a, "deck_mechanism", "%s: %s", de->d_name, e.msg);
			else
				add_note(a, "%s not re-solved: %s", de->d_name, e.msg);
		} else {
			add_note(a, "%s re-solved: max |u| %.4g at node %lld", de->d_name, r.max_u,
				 (long long)r.max_u_node);
			char sum[PATH_MAX];
			snprintf(sum, sizeof(sum), "%s/summary.txt", gdir);
			double v[64];
			size_t nv = 0;
			int zero = numbers_of(sum, v, 64, &nv) == 0 && nv > 0;
			for (size_t i = 0; zero && i < nv; i++)
				zero = v[i] == 0;
			if (zero && r.max_u > 0)
				add_finding(a, "summary_zero",
					    "summary.txt gives only zeros; %s re-solved moves (max "
					    "|u| %.4g at node %lld)",
					    de->d_name, r.max_u, (long long)r.max_u_node);
		}
		engi_fe_solid_result_release(&r);
		engi_fe_solid_release(&m);
	}
	closedir(d);
}

/* A probe's episode in the results file, and its assertions. */
struct probe {
	const struct engi_res_episode *ep;
	const struct engi_res_assertion *a;
	size_t na;
};

static struct probe probe_of(const struct sweep *sw, const struct engi_results *res, size_t task,
			     const char *agent)
{
	struct probe p = {0};
	const char *cell = NULL;
	for (size_t i = 0; i < sw->matrix.ncells && !cell; i++) {
		const struct cell *c = &sw->matrix.cells[i];
		if (c->task == task && !strcmp(sw->def.models[c->model].agent, agent))
			cell = c->id;
	}
	for (size_t i = 0; cell && i < res->nepisodes && !p.ep; i++)
		if (!strcmp(res->episodes[i].cell, cell))
			p.ep = &res->episodes[i];
	for (size_t i = 0; cell && i < res->nassertions; i++)
		if (!strcmp(res->assertions[i].cell, cell)) {
			if (!p.a)
				p.a = &res->assertions[i];
			p.na++;
		}
	return p;
}

static int infra(const struct probe *p)
{
	if (!p->ep)
		return 0;
	int o = engi_outcome_find(p->ep->outcome, sizeof(p->ep->outcome));
	return o < 0 || engi_outcome_infra(o);
}

/* The evaluator's own verdict: every required assertion but engisweep's
 * delivery checks passed (those are engisweep's, not the benchmark's). */
static int evaluator_passes(const struct probe *p)
{
	if (!p->ep || infra(p))
		return 0;
	size_t judged = 0;
	for (size_t i = 0; i < p->na; i++) {
		const struct engi_res_assertion *a = &p->a[i];
		/* a judge's verdict is a model's: audit calls none (its assertions
		 * are unavailable and not required; the task's notes say so) */
		if (!a->required || !strcmp(a->stage, "delivery") || !strcmp(a->stage, "judge"))
			continue;
		judged++;
		if (strcmp(a->state, "pass"))
			return 0;
	}
	return judged > 0;
}

static const char *state_of(const struct probe *p, const char *name)
{
	for (size_t i = 0; i < p->na; i++)
		if (!strcmp(p->a[i].name, name))
			return p->a[i].state;
	return NULL;
}

static void audit_task(const struct sweep *sw, const struct engi_results *res, size_t ti,
		       struct task_audit *a)
{
	const struct task *t = &sw->suite.tasks[ti];
	memset(a, 0, sizeof(*a));
	struct probe noop = probe_of(sw, res, ti, "noop");
	struct probe ref = probe_of(sw, res, ti, "reference");
	struct probe empty = probe_of(sw, res, ti, "flawed:empty-artifacts");
	const struct probe *all[] = {&noop, &ref, &empty};
	static const char *const names[] = {"noop", "the ground truth", "empty artifacts"};
	/* the cheat probe only where the source made one */
	int nprobes = task_find_flawed(t, "empty-artifacts") ? 3 : 2;
	for (int i = 0; i < nprobes; i++) {
		if (!all[i]->ep)
			add_note(a, "%s: no result", names[i]);
		else if (infra(all[i]))
			add_finding(a, "evaluator_error", "%s: %s", names[i], all[i]->ep->message);
	}
	if (evaluator_passes(&noop))
		add_finding(a, "noop_passes", "nothing delivered, and the evaluator passes%s",
			    noop.ep->success ? ""
					     : " (engisweep's delivery check fails it; by the "
					       "evaluator alone it scores)");
	if (evaluator_passes(&empty))
		add_finding(a, "empty_artifacts_pass",
			    "every artifact there but empty, and the evaluator passes");
	int no_truth = t->reference.n == 1 && t->reference.v[0].kind == STEP_FAIL;
	if (no_truth) {
		add_note(a, "no ground truth to check");
	} else if (ref.ep && !infra(&ref) && !ref.ep->success) {
		char failed[300] = "";
		for (size_t i = 0; i < ref.na; i++)
			if (ref.a[i].required && strcmp(ref.a[i].state, "pass") &&
			    strlen(failed) + strlen(ref.a[i].name) + 3 < sizeof(failed))
				snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed),
					 "%s%s", failed[0] ? ", " : "", ref.a[i].name);
		add_finding(a, "ground_truth_fails",
			    "the ground truth at the artifact paths fails (failed: %s)",
			    failed[0] ? failed : "none");
	} else if (ref.ep && !infra(&ref)) {
		char miss[400];
		if (lacking(t, miss, sizeof(miss)))
			add_finding(a, "passes_without",
				    "the ground truth lacks %s and passes: a summary written by "
				    "hand from the expected numbers, without running the program, "
				    "passes",
				    miss);
	}
	const char *forged = state_of(&ref, "score_written_by_evaluator");
	if (forged && !strcmp(forged, "fail"))
		add_finding(a, "agent_score_file",
			    "the ground truth's score came from a score file the evaluator did not "
			    "write (one of the artifacts): an agent can write its own score");
	size_t nj = t->njudges;
	for (size_t k = 0; k < t->nfollowups; k++)
		nj += t->followups[k].njudges;
	if (nj)
		add_note(a,
			 "%zu judge%s (judge:NAME) not checked: a language model judges them, and "
			 "audit calls none",
			 nj, nj == 1 ? "" : "s");
	check_decks(t, a);
	check_sc_truths(t, a);
}

static int read_results(const char *out, struct engi_results *res, struct engi_error *err)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/results.h5", out);
	return store_read(path, res, err);
}

static void json_task(json_t *arr, const struct task *t, const struct task_audit *a)
{
	json_t *f = json_array();
	for (size_t i = 0; i < a->nf; i++)
		json_array_append_new(
		    f, json_pack("{s:s, s:s}", "kind", a->f[i].kind, "detail", a->f[i].detail));
	json_array_append_new(
	    arr, json_pack("{s:s, s:o, s:s}", "task", t->id, "findings", f, "notes", a->notes));
}

int cmd_audit(int argc, char **argv)
{
	const char *json_path = NULL, *clean_path = NULL;
	/* --json, --clean and --help are audit's; the rest are validate's */
	char **args = engi_calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		cli_errorf("out of memory");
		return EXIT_FAILED;
	}
	int nargs = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(audit_help, stdout);
			engi_free(args);
			return 0;
		}
		if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json_path = argv[++i];
			continue;
		}
		if (!strncmp(argv[i], "--json=", 7)) {
			json_path = argv[i] + 7;
			continue;
		}
		if (!strcmp(argv[i], "--clean") && i + 1 < argc) {
			clean_path = argv[++i];
			continue;
		}
		args[nargs++] = argv[i];
	}
	struct cli_probe p;
	struct engi_results results;
	engi_results_init(&results);
	int code = cli_probe_run(&p, "audit", nargs, args, argc, argv);
	int rc = 0;
	if (code != 0) {
		/* said */
	} else if (sched_rank() == 0 && (rc = read_results(p.o.out, &results, &p.err)) < 0) {
		cli_error(&p.err);
		code = EXIT_FAILED;
	} else if (sched_rank() == 0) {
		json_t *tasks = json_array();
		size_t with = 0, total = 0;
		FILE *clean = clean_path ? fopen(clean_path, "w") : NULL;
		if (clean_path && !clean) {
			cli_errorf("audit: cannot write '%s'", clean_path);
			code = EXIT_FAILED;
		}
		printf("| %-60s | %-22s | %s |\n", "task", "finding", "detail");
		printf("|%s|%s|%s|\n",
		       "--------------------------------------------------------------",
		       "------------------------", "--------");
		for (size_t t = 0; t < p.sw.suite.ntasks; t++) {
			struct task_audit a;
			audit_task(&p.sw, &results, t, &a);
			const struct task *tk = &p.sw.suite.tasks[t];
			for (size_t i = 0; i < a.nf; i++)
				printf("| %-60s | %-22s | %s |\n", tk->id, a.f[i].kind,
				       a.f[i].detail);
			if (!a.nf)
				printf("| %-60s | %-22s | %s |\n", tk->id, "-",
				       a.notes[0] ? a.notes : "no finding");
			else if (a.notes[0])
				printf("| %-60s | %-22s | %s |\n", tk->id, "(note)", a.notes);
			with += a.nf > 0;
			total += a.nf;
			if (clean && !a.nf)
				fprintf(clean, "%s\n", tk->id);
			json_task(tasks, tk, &a);
		}
		if (clean && fclose(clean) != 0) {
			cli_errorf("audit: cannot write '%s'", clean_path);
			code = EXIT_FAILED;
		}
		printf("\n%zu tasks audited: %zu with findings (%zu findings)%s\n",
		       p.sw.suite.ntasks, with, total,
		       p.sw.suite.nrefused ? "; refused tasks: engisweep inspect" : "");
		if (json_path) {
			json_t *doc =
			    json_pack("{s:s, s:I, s:I, s:o}", "suite", p.o.suite, "tasks_audited",
				      (json_int_t)p.sw.suite.ntasks, "tasks_with_findings",
				      (json_int_t)with, "tasks", tasks);
			if (json_dump_file(doc, json_path, JSON_INDENT(1)) < 0) {
				cli_errorf("audit: cannot write '%s'", json_path);
				code = EXIT_FAILED;
			}
			json_decref(doc);
		} else {
			json_decref(tasks);
		}
		if (!code && with)
			code = EXIT_FAILED;
	}
	engi_results_release(&results);
	cli_probe_finish(&p);
	engi_free(args);
	return code < 0 ? 0 : code;
}
