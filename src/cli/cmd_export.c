/*
 * engisweep export RESULTS --format csv|jsonl --out DIR: the tables of a
 * results file (episodes, assertions, metrics, artifacts) as CSV or JSON
 * lines, each row naming its cell; the episodes CSV is the format `report`
 * reads, so a report of the export is the report of the results.
 *
 * engisweep export RESULTS --format harbor --out DIR: a results file in
 * Harbor's job layout, which leaderboards that take Harbor jobs read
 * (docs/parametric-cad-bench.md#export-for-submission):
 *
 *   DIR/<job>/config.json, result.json     the job: its trials' counts,
 *                                          tokens, cost, and per agent and
 *                                          model the mean reward
 *   DIR/<job>/<trial>/config.json          the trial's task, agent, model
 *   DIR/<job>/<trial>/result.json          TrialResult: task, agent, usage,
 *                                          rewards, times, an exception for
 *                                          an infrastructure failure
 *   DIR/<job>/<trial>/verifier/reward.json the reward (and the evaluator's
 *                                          other numbers), reward_details.json
 *                                          where the verdict has geometry and
 *                                          spec scores
 *   DIR/<job>/<trial>/agent/trajectory.json the episode as an ATIF trajectory
 *   DIR/<job>/<trial>/agent/engisweep.txt  the agent log: the episode's trace
 *   DIR/<job>/<trial>/artifacts/...        the deliverables, with
 *                                          manifest.json
 *
 * A trial is one cell; its name is the task's (at most 32 characters)
 * and the cell id's first 7 characters; ids are UUIDs made from the
 * sweep's id and the cell's, so that exporting again writes the same
 * files. Infrastructure failures are never a reward: a results file that
 * holds some is refused unless --allow-errors, which exports them as
 * errored trials without one.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/results.h"
#include "engi/sha256.h"
#include "fsutil.h"
#include "store.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT_ARTIFACT_CAP ((uint64_t)1 << 34)
#define ATIF_VERSION	    "ATIF-v1.4"

static const char export_help[] =
    "usage: engisweep export RESULTS --format csv|jsonl|harbor --out DIR [options]\n"
    "\n"
    "--format csv or jsonl: the results file's tables as files other tools\n"
    "load in one line (pandas.read_csv, read_json(lines=True)): episodes,\n"
    "assertions, metrics and artifacts, each row naming its cell, task,\n"
    "model, condition and trial (docs/outputs.md#exported-tables). The\n"
    "episodes CSV is one `engisweep report` reads back.\n"
    "\n"
    "--format harbor: the episodes of a results file (results.h5 of a finished\n"
    "sweep, its artifacts/ folder beside it) in Harbor's job layout: DIR/JOB/ with\n"
    "the job's config.json and result.json, and per episode a trial folder\n"
    "with result.json, verifier/reward.json, agent/trajectory.json (ATIF),\n"
    "agent/engisweep.txt (the trace) and artifacts/ (the deliverables, with\n"
    "manifest.json). Exporting again writes the same files. Infrastructure\n"
    "failures are not rewards: a results file holding some is refused unless\n"
    "--allow-errors (then they are errored trials, without a reward); resume\n"
    "the sweep first.\n"
    "\n"
    "options:\n"
    "      --format F         csv, jsonl (the tables) or harbor (a Harbor job)\n"
    "  -o, --out DIR          where the job folder goes (made if missing)\n"
    "      --job-name NAME    harbor: the job folder's name (default: engisweep-<sweep\n"
    "                         id's first 12 characters>)\n"
    "      --dataset NAME     harbor: the dataset the trials name as their source\n"
    "                         (default: the suite's folder name)\n"
    "      --allow-errors     harbor: export infrastructure failures as errored\n"
    "                         trials (the tables always hold every episode)\n"
    "  -h, --help             this text\n";

struct exp {
	const struct engi_results *r;
	const char *results_path;
	char art_root[PATH_MAX]; /* the results folder's artifacts/ */
	char job_dir[PATH_MAX];
	const char *job_name;
	const char *dataset;
	const char *sweep_id;
	json_t *trials; /* per trial, for the job's stats */
};

static void iso_time(double t, char *buf, size_t n)
{
	if (!(t > 0)) {
		snprintf(buf, n, "1970-01-01T00:00:00Z");
		return;
	}
	time_t s = (time_t)floor(t);
	struct tm tm;
	gmtime_r(&s, &tm);
	char d[32];
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%06dZ", d, (int)((t - floor(t)) * 1e6));
}

/* A UUID made from the sweep's id and name: the same every export. */
static void make_uuid(const char *sweep, const char *name, char out[37])
{
	struct engi_sha256 h;
	unsigned char d[32];
	engi_sha256_init(&h);
	engi_sha256_update(&h, sweep, strlen(sweep));
	engi_sha256_update(&h, "\n", 1);
	engi_sha256_update(&h, name, strlen(name));
	engi_sha256_final(&h, d);
	d[6] = (unsigned char)((d[6] & 0x0f) | 0x80); /* version 8: name-derived */
	d[8] = (unsigned char)((d[8] & 0x3f) | 0x80);
	static const char hx[] = "0123456789abcdef";
	size_t k = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[k++] = '-';
		out[k++] = hx[d[i] >> 4];
		out[k++] = hx[d[i] & 15];
	}
	out[k] = '\0';
}

static int write_json(const char *path, json_t *j, struct engi_error *err)
{
	char *text = json_dumps(j, JSON_INDENT(4) | JSON_ENSURE_ASCII);
	if (!text)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	size_t n = strlen(text);
	char *buf = engi_malloc(n + 2);
	if (!buf) {
		free(text);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	memcpy(buf, text, n);
	buf[n] = '\n';
	free(text);
	TRY(fs_mkdir_parents(path, 0755, err));
	int rc = fs_write_file_atomic(path, buf, n + 1, err);
	engi_free(buf);
	return rc;
}

static const struct engi_res_model *find_model(const struct engi_results *r, const char *name)
{
	for (size_t i = 0; i < r->nmodels; i++)
		if (!strcmp(r->models[i].name, name))
			return &r->models[i];
	return NULL;
}

static const char *task_meta(const struct engi_results *r, const char *task, const char *key)
{
	for (size_t i = 0; i < r->ntask_meta; i++)
		if (!strcmp(r->task_meta[i].task_id, task) && !strcmp(r->task_meta[i].key, key))
			return r->task_meta[i].value;
	return NULL;
}

/* The model a row's agent calls, and its provider, from its settings. */
static void model_info(const struct engi_res_model *m, char *name, size_t nn, char *prov, size_t pn)
{
	snprintf(name, nn, "%s", m ? m->name : "");
	prov[0] = '\0';
	json_t *s = m ? json_loads(m->settings, 0, NULL) : NULL;
	const char *mm = json_string_value(json_object_get(s, "model"));
	const char *pp = json_string_value(json_object_get(s, "provider"));
	if (mm)
		snprintf(name, nn, "%s", mm);
	if (pp)
		snprintf(prov, pn, "%s", pp);
	json_decref(s);
}

/* The trial's name: the task's (at most 32 characters, no trailing '_'
 * or '-') and the cell's first 7 characters. */
static void trial_name(const struct engi_res_episode *e, char *buf, size_t n)
{
	char t[33];
	snprintf(t, sizeof(t), "%s", e->task_id);
	size_t k = strlen(t);
	while (k > 0 && (t[k - 1] == '_' || t[k - 1] == '-'))
		t[--k] = '\0';
	snprintf(buf, n, "%s__%.7s", t, e->cell);
}

/* ---- the trajectory ---- */

/* The text and tool calls of a model's raw reply (OpenAI or Anthropic). */
static void reply_parts(const char *raw, json_t **text, json_t **calls)
{
	*text = NULL;
	*calls = json_array();
	json_t *j = raw ? json_loads(raw, 0, NULL) : NULL;
	json_t *msg = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "message");
	if (msg) {
		json_t *c = json_object_get(msg, "content");
		if (json_is_string(c))
			*text = json_incref(c);
		size_t i;
		json_t *tc;
		json_array_foreach(json_object_get(msg, "tool_calls"), i, tc)
		{
			json_t *fn = json_object_get(tc, "function");
			const char *args = json_string_value(json_object_get(fn, "arguments"));
			json_t *a = args ? json_loads(args, 0, NULL) : NULL;
			json_array_append_new(
			    *calls, json_pack("{s:O?, s:O?, s:o}", "id", json_object_get(tc, "id"),
					      "name", json_object_get(fn, "name"), "arguments",
					      json_is_object(a) ? a : json_object()));
			if (!json_is_object(a))
				json_decref(a);
		}
	} else if (json_is_array(json_object_get(j, "content"))) {
		size_t i;
		json_t *b;
		char *acc = NULL;
		json_array_foreach(json_object_get(j, "content"), i, b)
		{
			const char *type = json_string_value(json_object_get(b, "type"));
			if (type && !strcmp(type, "text")) {
				const char *t = json_string_value(json_object_get(b, "text"));
				if (!t)
					continue;
				size_t old = acc ? strlen(acc) : 0;
				char *n = engi_realloc(acc, old + strlen(t) + 2);
				if (!n)
					continue;
				acc = n;
				snprintf(acc + old, strlen(t) + 2, "%s%s", old ? "\n" : "", t);
			} else if (type && !strcmp(type, "tool_use")) {
				json_t *in = json_object_get(b, "input");
				json_array_append_new(
				    *calls,
				    json_pack("{s:O?, s:O?, s:O}", "id", json_object_get(b, "id"),
					      "name", json_object_get(b, "name"), "arguments",
					      json_is_object(in) ? in : json_object()));
			}
		}
		if (acc)
			*text = json_string(acc);
		engi_free(acc);
	}
	json_decref(j);
}

/* The user's first message of the first model request: the instruction. */
static json_t *first_user_text(json_t *body)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(body, "messages"), i, m)
	{
		const char *role = json_string_value(json_object_get(m, "role"));
		if (!role || strcmp(role, "user"))
			continue;
		json_t *c = json_object_get(m, "content");
		if (json_is_string(c))
			return json_incref(c);
		size_t k;
		json_t *b;
		json_array_foreach(c, k, b)
		{
			json_t *t = json_object_get(b, "text");
			if (json_is_string(t))
				return json_incref(t);
		}
		return NULL;
	}
	return NULL;
}

struct traj {
	json_t *steps;
	json_t *cur; /* the agent step of the turn being read, or NULL */
	json_t *calls;
	size_t nobs;
	int turn;
	json_t *instruction;
};

static void close_step(struct traj *t)
{
	if (!t->cur)
		return;
	if (!json_object_get(t->cur, "message"))
		json_object_set_new(t->cur, "message", json_string(""));
	if (json_array_size(json_object_get(t->cur, "tool_calls")) == 0)
		json_object_del(t->cur, "tool_calls");
	json_t *obs = json_object_get(t->cur, "observation");
	if (obs && json_array_size(json_object_get(obs, "results")) == 0)
		json_object_del(t->cur, "observation");
	json_array_append_new(t->steps, t->cur);
	t->cur = NULL;
	json_decref(t->calls);
	t->calls = NULL;
	t->nobs = 0;
}

static void open_step(struct traj *t, int turn)
{
	if (t->cur && t->turn == turn)
		return;
	close_step(t);
	t->turn = turn;
	/* the trace keeps no time per turn: no timestamp rather than a made-up one */
	t->cur = json_pack("{s:s, s:[], s:{s:[]}}", "source", "agent", "tool_calls", "observation",
			   "results");
	t->calls = json_array();
}

/* An action's tool call: the reply's k-th call where there is one (its id,
 * name and arguments), else one made of the action's own fields. */
static void add_call(struct traj *t, json_t *ev)
{
	json_t *tc = json_object_get(t->cur, "tool_calls");
	size_t k = json_array_size(tc);
	json_t *from = json_array_get(t->calls, k);
	char id[48];
	const char *rid = json_string_value(json_object_get(from, "id"));
	snprintf(id, sizeof(id), "%s", rid ? rid : "");
	if (!id[0])
		snprintf(id, sizeof(id), "t%d-%zu", t->turn, k + 1);
	const char *name = json_string_value(json_object_get(from, "name"));
	const char *kind = json_string_value(json_object_get(ev, "kind"));
	json_t *args = json_object_get(from, "arguments");
	json_t *own = NULL;
	if (!args) {
		own = json_deep_copy(ev);
		json_object_del(own, "ev");
		json_object_del(own, "turn");
		json_object_del(own, "kind");
		args = own;
	}
	json_array_append_new(tc, json_pack("{s:s, s:s, s:O}", "tool_call_id", id, "function_name",
					    name			   ? name
					    : kind && !strcmp(kind, "run") ? "bash"
					    : kind			   ? kind
									   : "action",
					    "arguments", args));
	json_decref(own);
}

static void add_observation(struct traj *t, json_t *ev)
{
	json_t *tc = json_object_get(t->cur, "tool_calls");
	json_t *call = json_array_get(tc, t->nobs);
	const char *out = json_string_value(json_object_get(ev, "output"));
	json_t *code = json_object_get(ev, "exit");
	char head[64] = "";
	if (json_is_integer(code))
		snprintf(head, sizeof(head), "[exit %lld]\n", (long long)json_integer_value(code));
	size_t n = strlen(head) + (out ? strlen(out) : 0) + 1;
	char *text = engi_malloc(n);
	if (!text)
		return;
	snprintf(text, n, "%s%s", head, out ? out : "");
	json_t *res = json_pack("{s:s}", "content", text);
	engi_free(text);
	if (call)
		json_object_set(res, "source_call_id", json_object_get(call, "tool_call_id"));
	json_array_append_new(json_object_get(json_object_get(t->cur, "observation"), "results"),
			      res);
	t->nobs++;
}

/* The ATIF trajectory of a trace (JSON lines). */
static json_t *trajectory(const char *trace, const struct engi_res_episode *e, const char *agent,
			  const char *model_name)
{
	struct traj t = {.steps = json_array()};
	char at[40];
	iso_time(e->started_at, at, sizeof(at));
	const char *p = trace;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		json_t *ev = json_loadb(p, len, 0, NULL);
		p = nl ? nl + 1 : NULL;
		const char *kind = json_string_value(json_object_get(ev, "ev"));
		int turn = (int)json_integer_value(json_object_get(ev, "turn"));
		if (!kind) {
			json_decref(ev);
			continue;
		}
		if (!strcmp(kind, "model_request") && !t.instruction)
			t.instruction = first_user_text(json_object_get(ev, "body"));
		else if (!strcmp(kind, "model_reply")) {
			open_step(&t, turn);
			json_t *text, *calls;
			reply_parts(json_string_value(json_object_get(ev, "raw")), &text, &calls);
			if (text)
				json_object_set_new(t.cur, "message", text);
			json_decref(t.calls);
			t.calls = calls;
			if (model_name[0])
				json_object_set_new(t.cur, "model_name", json_string(model_name));
		} else if (!strcmp(kind, "action") && turn > 0) {
			open_step(&t, turn);
			add_call(&t, ev);
		} else if (!strcmp(kind, "observation") && turn > 0) {
			open_step(&t, turn);
			add_observation(&t, ev);
		} else if (!strcmp(kind, "turn") && turn > 0) {
			open_step(&t, turn);
			json_t *ti = json_object_get(ev, "tokens_in"),
			       *to = json_object_get(ev, "tokens_out"),
			       *c = json_object_get(ev, "cost_usd");
			json_object_set_new(t.cur, "metrics",
					    json_pack("{s:I, s:I, s:f}", "prompt_tokens",
						      (json_int_t)json_integer_value(ti),
						      "completion_tokens",
						      (json_int_t)json_integer_value(to),
						      "cost_usd", json_number_value(c)));
		}
		json_decref(ev);
	}
	close_step(&t);
	json_decref(t.calls);
	json_t *steps = json_array();
	json_array_append_new(steps, json_pack("{s:i, s:s, s:s, s:o}", "step_id", 1, "timestamp",
					       at, "source", "user", "message",
					       t.instruction ? t.instruction : json_string("")));
	size_t i;
	json_t *s;
	json_array_foreach(t.steps, i, s)
	{
		json_object_set_new(s, "step_id", json_integer((json_int_t)i + 2));
		json_array_append(steps, s);
	}
	json_decref(t.steps);
	json_t *ag = json_pack("{s:s, s:s}", "name", agent, "version", ENGISWEEP_VERSION);
	if (model_name[0])
		json_object_set_new(ag, "model_name", json_string(model_name));
	return json_pack("{s:s, s:s, s:o, s:o, s:{s:I, s:I, s:f, s:I}}", "schema_version",
			 ATIF_VERSION, "session_id", e->cell, "agent", ag, "steps", steps,
			 "final_metrics", "total_prompt_tokens", (json_int_t)e->tokens_in,
			 "total_completion_tokens", (json_int_t)e->tokens_out, "total_cost_usd",
			 e->cost_usd, "total_steps", (json_int_t)json_array_size(steps));
}

/* ---- one trial ---- */

static int is_infra(const struct engi_res_episode *e)
{
	return !strcmp(e->outcome, "infra_error") || !strcmp(e->outcome, "env_crash");
}

static int copy_artifacts(const struct exp *x, const struct engi_res_episode *e, const char *dir,
			  json_t **manifest, struct engi_error *err)
{
	*manifest = json_array();
	const char *wd = task_meta(x->r, e->task_id, "harbor_workdir");
	for (size_t i = 0; i < x->r->nartifacts; i++) {
		const struct engi_res_artifact *a = &x->r->artifacts[i];
		if (strcmp(a->cell, e->cell))
			continue;
		char src[PATH_MAX], dst[2 * PATH_MAX], guest[PATH_MAX], rel[PATH_MAX + 16];
		snprintf(src, sizeof(src), "%s/%s/%s", x->art_root, e->cell, a->path);
		if (a->path[0] == '/')
			snprintf(guest, sizeof(guest), "%s", a->path);
		else
			snprintf(guest, sizeof(guest), "%s/%s", wd ? wd : "", a->path);
		snprintf(rel, sizeof(rel), "artifacts/%s", guest[0] == '/' ? guest + 1 : guest);
		snprintf(dst, sizeof(dst), "%s/%s", dir, rel);
		struct stat st;
		const char *status = "ok";
		if (lstat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
			status = "missing";
		} else {
			uint64_t got = 0;
			TRY(fs_mkdir_parents(dst, 0755, err));
			if (fs_copy_file_capped(src, dst, EXPORT_ARTIFACT_CAP, &got, err) < 0)
				return err ? err->code : ENGI_EIO;
		}
		json_array_append_new(*manifest,
				      json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "source",
						guest[0] == '/' ? guest : a->path, "destination",
						rel, "type", "file", "status", status, "sha256",
						a->sha256, "bytes", (json_int_t)a->bytes));
	}
	return 0;
}

static int export_trial(struct exp *x, const struct engi_res_episode *e, struct engi_error *err)
{
	const struct engi_results *r = x->r;
	char name[128], dir[2 * PATH_MAX], path[3 * PATH_MAX], id[37], cellkey[96];
	trial_name(e, name, sizeof(name));
	snprintf(dir, sizeof(dir), "%s/%s", x->job_dir, name);
	TRY(fs_mkdir_p(dir, 0755, err));
	snprintf(cellkey, sizeof(cellkey), "trial:%s", e->cell);
	make_uuid(x->sweep_id, cellkey, id);
	const struct engi_res_model *m = find_model(r, e->model);
	char mname[256], prov[64];
	model_info(m, mname, sizeof(mname), prov, sizeof(prov));
	char start[40], end[40];
	iso_time(e->started_at, start, sizeof(start));
	iso_time(e->started_at + e->wall_s, end, sizeof(end));
	int infra = is_infra(e);
	/* rewards: the score, and the evaluator's own numbers */
	json_t *rewards = NULL, *details = NULL;
	if (!infra) {
		rewards = json_pack("{s:f}", "reward", e->score);
		double g = NAN, s = NAN;
		for (size_t i = 0; i < r->nmetrics; i++) {
			const struct engi_res_metric *mt = &r->metrics[i];
			if (strcmp(mt->cell, e->cell))
				continue;
			if (!strncmp(mt->name, "reward:", 7) && strcmp(mt->name + 7, "reward"))
				json_object_set_new(rewards, mt->name + 7, json_real(mt->value));
			if (!strcmp(mt->name, "geometry_similarity"))
				g = mt->value;
			if (!strcmp(mt->name, "spec_consistency"))
				s = mt->value;
		}
		if (isfinite(g) && isfinite(s))
			details = json_pack("{s:f, s:f, s:f}", "geometry_similarity", g,
					    "cad_spec_consistency", s, "combined", e->score);
	}
	const char *hname = task_meta(r, e->task_id, "harbor_name");
	json_t *config = json_pack("{s:{s:s, s:s?}, s:s, s:s, s:s, s:{s:s, s:s}}", "task", "name",
				   hname ? hname : e->task_id, "source", x->dataset, "trial_name",
				   name, "trials_dir", x->job_dir, "job_id", "", "agent", "name",
				   e->model, "model_name", mname);
	char job_id[37];
	make_uuid(x->sweep_id, "job", job_id);
	json_object_set_new(config, "job_id", json_string(job_id));
	char uri[3 * PATH_MAX];
	snprintf(uri, sizeof(uri), "file://%s", dir);
	json_t *exc = json_null();
	if (infra) {
		char msg[600];
		snprintf(msg, sizeof(msg), "%s: %s", e->infra[0] ? e->infra : e->outcome,
			 e->message);
		exc = json_pack("{s:s, s:s, s:s, s:s}", "exception_type",
				"EngisweepInfrastructureError", "exception_message", msg,
				"exception_traceback", "", "occurred_at", end);
	}
	json_t *res = json_pack(
	    "{s:s, s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:O, s:{s:s, s:s, s:{s:s, s:s?}}, "
	    "s:{s:I, s:n, s:I, s:f}, s:o, s:o, s:s, s:s}",
	    "id", id, "task_name", hname ? hname : e->task_id, "trial_name", name, "trial_uri", uri,
	    "task_id", "path", e->task_id, "source", x->dataset, "task_checksum", "", "config",
	    config, "agent_info", "name", e->model, "version", ENGISWEEP_VERSION, "model_info",
	    "name", mname, "provider", prov[0] ? prov : NULL, "agent_result", "n_input_tokens",
	    (json_int_t)e->tokens_in, "n_cache_tokens", "n_output_tokens",
	    (json_int_t)e->tokens_out, "cost_usd", e->cost_usd, "verifier_result",
	    rewards ? json_pack("{s:O}", "rewards", rewards) : json_null(), "exception_info", exc,
	    "started_at", start, "finished_at", end);
	for (size_t i = 0; i < r->ntasks; i++)
		if (!strcmp(r->tasks[i].id, e->task_id))
			json_object_set_new(res, "task_checksum", json_string(r->tasks[i].hash));
	json_object_set_new(res, "engisweep",
			    json_pack("{s:s, s:s, s:s, s:i, s:s, s:b, s:f}", "cell", e->cell,
				      "outcome", e->outcome, "condition", e->condition, "trial",
				      (int)e->trial, "verifier", e->verifier, "success",
				      (int)e->success, "quality", e->quality));
	int rc = 0;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	rc = write_json(path, config, err);
	snprintf(path, sizeof(path), "%s/result.json", dir);
	if (rc == 0)
		rc = write_json(path, res, err);
	if (rc == 0 && rewards) {
		snprintf(path, sizeof(path), "%s/verifier/reward.json", dir);
		rc = write_json(path, rewards, err);
	}
	if (rc == 0 && details) {
		snprintf(path, sizeof(path), "%s/verifier/reward_details.json", dir);
		rc = write_json(path, details, err);
	}
	/* the trace: the agent's log, and its trajectory */
	char *trace = NULL;
	size_t tlen = 0;
	struct engi_error te;
	engi_error_init(&te);
	if (rc == 0 && store_read_trace(x->results_path, e->cell, &trace, &tlen, &te) == 0) {
		snprintf(path, sizeof(path), "%s/agent/engisweep.txt", dir);
		rc = fs_mkdir_parents(path, 0755, err);
		if (rc == 0)
			rc = fs_write_file_atomic(path, trace, tlen, err);
	}
	json_t *traj = trajectory(trace, e, e->model,
				  m && m->agent[0] && strcmp(mname, e->model) ? mname : "");
	engi_free(trace);
	snprintf(path, sizeof(path), "%s/agent/trajectory.json", dir);
	if (rc == 0)
		rc = traj ? write_json(path, traj, err)
			  : engi_raise(err, ENGI_ENOMEM, "out of memory");
	json_decref(traj);
	json_t *manifest = NULL;
	if (rc == 0)
		rc = copy_artifacts(x, e, dir, &manifest, err);
	snprintf(path, sizeof(path), "%s/artifacts/manifest.json", dir);
	if (rc == 0)
		rc = write_json(path, manifest, err);
	json_decref(manifest);
	json_array_append_new(x->trials,
			      json_pack("{s:s, s:s, s:s, s:O?, s:b, s:I, s:I, s:f, s:s}", "name",
					name, "model", e->model, "model_name", mname, "reward",
					rewards ? json_object_get(rewards, "reward") : NULL,
					"error", infra, "in", (json_int_t)e->tokens_in, "out",
					(json_int_t)e->tokens_out, "cost", e->cost_usd, "condition",
					e->condition));
	json_decref(rewards);
	json_decref(details);
	json_decref(config);
	json_decref(res);
	return rc;
}

/* The job's result.json: counts, usage and per agent and model the mean
 * reward (an errored trial counting 0, as Harbor's mean does), the
 * trials by reward and the errors. */
static int export_job(struct exp *x, double first, double last, struct engi_error *err)
{
	json_t *evals = json_object();
	size_t i;
	json_t *t;
	json_int_t tin = 0, tout = 0, nerr = 0;
	double cost = 0;
	json_array_foreach(x->trials, i, t)
	{
		const char *model = json_string_value(json_object_get(t, "model"));
		const char *mname = json_string_value(json_object_get(t, "model_name"));
		const char *cond = json_string_value(json_object_get(t, "condition"));
		char key[512];
		snprintf(key, sizeof(key), "%s__%s__%s%s%s", model, mname, x->dataset,
			 strcmp(cond, "base") ? "__" : "", strcmp(cond, "base") ? cond : "");
		json_t *ev = json_object_get(evals, key);
		if (!ev) {
			ev = json_pack("{s:i, s:i, s:f, s:{s:{}}, s:{}}", "n_trials", 0, "n_errors",
				       0, "sum", 0.0, "reward_stats", "reward", "exception_stats");
			json_object_set_new(evals, key, ev);
		}
		json_object_set_new(
		    ev, "n_trials",
		    json_integer(json_integer_value(json_object_get(ev, "n_trials")) + 1));
		tin += json_integer_value(json_object_get(t, "in"));
		tout += json_integer_value(json_object_get(t, "out"));
		cost += json_number_value(json_object_get(t, "cost"));
		const char *name = json_string_value(json_object_get(t, "name"));
		if (json_is_true(json_object_get(t, "error"))) {
			nerr++;
			json_object_set_new(
			    ev, "n_errors",
			    json_integer(json_integer_value(json_object_get(ev, "n_errors")) + 1));
			json_t *es = json_object_get(ev, "exception_stats");
			json_t *l = json_object_get(es, "EngisweepInfrastructureError");
			if (!l)
				json_object_set_new(es, "EngisweepInfrastructureError",
						    l = json_array());
			json_array_append_new(l, json_string(name));
			continue;
		}
		double rw = json_number_value(json_object_get(t, "reward"));
		json_object_set_new(ev, "sum",
				    json_real(json_number_value(json_object_get(ev, "sum")) + rw));
		char v[64];
		snprintf(v, sizeof(v), "%.15g", rw);
		if (!strchr(v, '.') && !strchr(v, 'e'))
			strcat(v, ".0");
		json_t *rs = json_object_get(json_object_get(ev, "reward_stats"), "reward");
		json_t *l = json_object_get(rs, v);
		if (!l)
			json_object_set_new(rs, v, l = json_array());
		json_array_append_new(l, json_string(name));
	}
	const char *k;
	json_t *ev;
	json_object_foreach(evals, k, ev)
	{
		double n = (double)json_integer_value(json_object_get(ev, "n_trials"));
		json_object_set_new(
		    ev, "metrics",
		    json_pack("[{s:f}]", "mean",
			      n > 0 ? json_number_value(json_object_get(ev, "sum")) / n : 0));
		json_object_del(ev, "sum");
	}
	char id[37], s0[40], s1[40];
	make_uuid(x->sweep_id, "job", id);
	iso_time(first, s0, sizeof(s0));
	iso_time(last, s1, sizeof(s1));
	size_t n = json_array_size(x->trials);
	json_t *job = json_pack(
	    "{s:s, s:s, s:s, s:s, s:I, s:{s:I, s:I, s:i, s:i, s:i, s:i, s:I, s:n, s:I, s:f, s:o}}",
	    "id", id, "started_at", s0, "updated_at", s1, "finished_at", s1, "n_total_trials",
	    (json_int_t)n, "stats", "n_completed_trials", (json_int_t)n, "n_errored_trials", nerr,
	    "n_running_trials", 0, "n_pending_trials", 0, "n_cancelled_trials", 0, "n_retries", 0,
	    "n_input_tokens", tin, "n_cache_tokens", "n_output_tokens", tout, "cost_usd", cost,
	    "evals", evals);
	char path[2 * PATH_MAX];
	snprintf(path, sizeof(path), "%s/result.json", x->job_dir);
	int rc = write_json(path, job, err);
	json_decref(job);
	if (rc < 0)
		return rc;
	json_t *cfg =
	    json_pack("{s:s, s:s, s:i, s:[{s:s}], s:{s:s, s:s?}}", "job_name", x->job_name,
		      "jobs_dir", x->job_dir, "n_attempts", 1, "datasets", "path", x->dataset,
		      "engisweep", "version", ENGISWEEP_VERSION, "sweep_id", x->r->sweep_id);
	snprintf(path, sizeof(path), "%s/config.json", x->job_dir);
	rc = write_json(path, cfg, err);
	json_decref(cfg);
	return rc;
}

/* ---- the tables: csv and jsonl ---- */

/* One table being written: CSV (RFC 4180) or JSON lines. */
struct table {
	FILE *f;
	int jsonl;
	json_t *row; /* jsonl: the row being made */
	int col;     /* csv: columns written on this row */
};

static void csv_text(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!s[0] || s[strlen(s) - 1] != ' ')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_text(struct table *t, const char *name, const char *v)
{
	if (t->jsonl) {
		json_object_set_new(t->row, name, json_string(v));
		return;
	}
	if (t->col++)
		fputc(',', t->f);
	csv_text(t->f, v);
}

static void put_num(struct table *t, const char *name, double v)
{
	if (t->jsonl) {
		/* JSON has no NaN or infinity: null */
		json_object_set_new(t->row, name, isfinite(v) ? json_real(v) : json_null());
		return;
	}
	if (t->col++)
		fputc(',', t->f);
	if (isfinite(v))
		fprintf(t->f, "%.17g", v);
}

static void put_int(struct table *t, const char *name, long long v)
{
	if (t->jsonl) {
		json_object_set_new(t->row, name, json_integer((json_int_t)v));
		return;
	}
	if (t->col++)
		fputc(',', t->f);
	fprintf(t->f, "%lld", v);
}

static void put_bool(struct table *t, const char *name, int v)
{
	if (t->jsonl) {
		json_object_set_new(t->row, name, json_boolean(v));
		return;
	}
	put_int(t, name, v ? 1 : 0);
}

static void row_begin(struct table *t)
{
	t->col = 0;
	if (t->jsonl)
		t->row = json_object();
}

static int row_end(struct table *t)
{
	if (!t->jsonl) {
		fputc('\n', t->f);
		return 0;
	}
	char *line = json_dumps(t->row, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	json_decref(t->row);
	t->row = NULL;
	if (!line)
		return ENGI_ENOMEM;
	fputs(line, t->f);
	fputc('\n', t->f);
	free(line);
	return 0;
}

/* The CSV header: the names, in the order rows put them. */
static void header(struct table *t, const char *const *names)
{
	if (t->jsonl)
		return;
	for (size_t i = 0; names[i]; i++) {
		if (i)
			fputc(',', t->f);
		fputs(names[i], t->f);
	}
	fputc('\n', t->f);
}

static const struct engi_res_episode *episode_of(const struct engi_results *r, const char *cell)
{
	for (size_t i = 0; i < r->nepisodes; i++)
		if (!strcmp(r->episodes[i].cell, cell))
			return &r->episodes[i];
	return NULL;
}

static const struct engi_res_task *task_of(const struct engi_results *r, const char *id)
{
	for (size_t i = 0; i < r->ntasks; i++)
		if (!strcmp(r->tasks[i].id, id))
			return &r->tasks[i];
	return NULL;
}

/* The cell's identity columns of the assertion, metric and artifact rows. */
static void put_cell(struct table *t, const struct engi_results *r, const char *cell)
{
	const struct engi_res_episode *e = episode_of(r, cell);
	put_text(t, "cell", cell);
	put_text(t, "task_id", e ? e->task_id : "");
	put_text(t, "model", e ? e->model : "");
	put_text(t, "condition", e ? e->condition : "");
	put_int(t, "trial", e ? e->trial : -1);
}

#define CELL_COLS "cell", "task_id", "model", "condition", "trial"

static FILE *open_table(const char *dir, const char *name, const char *ext, char *path, size_t n,
			struct engi_error *err)
{
	snprintf(path, n, "%s/%s.%s", dir, name, ext);
	FILE *f = fopen(path, "w");
	if (!f)
		engi_raise(err, ENGI_EIO, "cannot write '%s': %s", path, strerror(errno));
	return f;
}

static int close_table(FILE *f, const char *path, struct engi_error *err)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad)
		RAISE(err, ENGI_EIO, "cannot write '%s'", path);
	return 0;
}

/* Every episode field, then the task's own columns the report reads. */
#define EP_NAME_(name, kind, rec, row, since, csv, dflt) #name,
static const char *const episode_cols[] = {ENGI_EPISODE_FIELDS(EP_NAME_) "domain",
					   "type",
					   "interface",
					   "software",
					   "title",
					   "scoring",
					   NULL};
#undef EP_NAME_

static void put_episode(struct table *t, const struct engi_results *r,
			const struct engi_res_episode *e)
{
#define EP_PUT_S(name)					put_text(t, #name, engi_res_str(r, e->name))
#define EP_PUT_M(name)					put_text(t, #name, engi_res_str(r, e->name))
#define EP_PUT_O(name)					put_text(t, #name, e->name)
#define EP_PUT_o(name)					put_text(t, #name, e->name)
#define EP_PUT_I(name)					put_int(t, #name, e->name)
#define EP_PUT_L(name)					put_int(t, #name, (long long)e->name)
#define EP_PUT_B(name)					put_bool(t, #name, e->name)
#define EP_PUT_D(name)					put_num(t, #name, e->name)
#define EP_PUT_(name, kind, rec, row, since, csv, dflt) EP_PUT_##kind(name);
	ENGI_EPISODE_FIELDS(EP_PUT_)
#undef EP_PUT_
	const struct engi_res_task *k = task_of(r, e->task_id);
	put_text(t, "domain", k ? k->domain : "");
	put_text(t, "type", k ? k->type : "");
	put_text(t, "interface", k ? k->interface : "");
	put_text(t, "software", k ? k->software : "");
	put_text(t, "title", k ? engi_res_str(r, k->title) : "");
	put_text(t, "scoring", k ? k->scoring : "");
}

static int export_tables(const struct engi_results *r, const char *dir, int jsonl,
			 struct engi_error *err)
{
	const char *ext = jsonl ? "jsonl" : "csv";
	char path[PATH_MAX + 64];
	struct table t = {.jsonl = jsonl};
	int rc = 0;
	/* episodes */
	if (!(t.f = open_table(dir, "episodes", ext, path, sizeof(path), err)))
		return err ? err->code : ENGI_EIO;
	header(&t, episode_cols);
	for (size_t i = 0; rc == 0 && i < r->nepisodes; i++) {
		row_begin(&t);
		put_episode(&t, r, &r->episodes[i]);
		rc = row_end(&t);
	}
	TRY(close_table(t.f, path, err));
	/* assertions: the report's assertion column is "assertion" */
	static const char *const acols[] = {CELL_COLS, "assertion", "stage",  "state", "required",
					    "value",   "expected",  "detail", NULL};
	if (rc == 0 && !(t.f = open_table(dir, "assertions", ext, path, sizeof(path), err)))
		return err ? err->code : ENGI_EIO;
	header(&t, acols);
	for (size_t i = 0; rc == 0 && i < r->nassertions; i++) {
		const struct engi_res_assertion *a = &r->assertions[i];
		row_begin(&t);
		put_cell(&t, r, a->cell);
		put_text(&t, "assertion", a->name);
		put_text(&t, "stage", a->stage);
		put_text(&t, "state", a->state);
		put_bool(&t, "required", a->required);
		put_num(&t, "value", a->value);
		put_num(&t, "expected", a->expected);
		put_text(&t, "detail", engi_res_str(r, a->detail));
		rc = row_end(&t);
	}
	TRY(close_table(t.f, path, err));
	static const char *const mcols[] = {CELL_COLS, "name", "value", NULL};
	if (rc == 0 && !(t.f = open_table(dir, "metrics", ext, path, sizeof(path), err)))
		return err ? err->code : ENGI_EIO;
	header(&t, mcols);
	for (size_t i = 0; rc == 0 && i < r->nmetrics; i++) {
		row_begin(&t);
		put_cell(&t, r, r->metrics[i].cell);
		put_text(&t, "name", r->metrics[i].name);
		put_num(&t, "value", r->metrics[i].value);
		rc = row_end(&t);
	}
	TRY(close_table(t.f, path, err));
	static const char *const fcols[] = {CELL_COLS, "path", "bytes", "sha256", "note", NULL};
	if (rc == 0 && !(t.f = open_table(dir, "artifacts", ext, path, sizeof(path), err)))
		return err ? err->code : ENGI_EIO;
	header(&t, fcols);
	for (size_t i = 0; rc == 0 && i < r->nartifacts; i++) {
		const struct engi_res_artifact *a = &r->artifacts[i];
		row_begin(&t);
		put_cell(&t, r, a->cell);
		put_text(&t, "path", a->path);
		put_int(&t, "bytes", (long long)a->bytes);
		put_text(&t, "sha256", a->sha256);
		put_text(&t, "note", a->note);
		rc = row_end(&t);
	}
	TRY(close_table(t.f, path, err));
	if (rc < 0)
		RAISE(err, rc, "out of memory");
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"out", required_argument, NULL, 'o'},
	    {"job-name", required_argument, NULL, 'J'},
	    {"dataset", required_argument, NULL, 'D'},
	    {"allow-errors", no_argument, NULL, 'E'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *format = NULL, *out = NULL, *job = NULL, *dataset = NULL;
	int allow_errors = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'J':
			job = optarg;
			break;
		case 'D':
			dataset = optarg;
			break;
		case 'E':
			allow_errors = 1;
			break;
		case 'h':
			fputs(export_help, stdout);
			return 0;
		default:
			fputs(export_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !format || !out) {
		cli_errorf("export: expected RESULTS, --format and --out");
		fputs(export_help, stderr);
		return EXIT_USAGE;
	}
	int tables = !strcmp(format, "csv") || !strcmp(format, "jsonl");
	if (!tables && strcmp(format, "harbor")) {
		cli_errorf("export: --format '%s' is not one (known: csv, jsonl, harbor)", format);
		return EXIT_USAGE;
	}
	if (job && (!job[0] || strchr(job, '/') || !strcmp(job, ".") || !strcmp(job, ".."))) {
		cli_errorf("export: --job-name '%s' is not a folder name", job);
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	struct engi_error err;
	engi_error_init(&err);
	struct engi_results r;
	engi_results_init(&r);
	if (store_read(path, &r, &err) < 0) {
		cli_error(&err);
		engi_results_release(&r);
		return EXIT_FAILED;
	}
	if (tables) {
		int trc = fs_mkdir_p(out, 0755, &err);
		if (trc == 0)
			trc = export_tables(&r, out, !strcmp(format, "jsonl"), &err);
		if (trc < 0)
			cli_error(&err);
		else
			printf(
			    "exported %zu episodes, %zu assertions, %zu metrics and %zu artifacts "
			    "to %s/*.%s\n",
			    r.nepisodes, r.nassertions, r.nmetrics, r.nartifacts, out, format);
		engi_results_release(&r);
		return trc < 0 ? EXIT_FAILED : 0;
	}
	size_t ninfra = 0;
	for (size_t i = 0; i < r.nepisodes; i++)
		ninfra += (size_t)is_infra(&r.episodes[i]);
	if (ninfra && !allow_errors) {
		cli_errorf("export: %zu of the %zu episodes are infrastructure failures, which are "
			   "no reward: resume the sweep (run --resume) first, or export them as "
			   "errored trials with --allow-errors",
			   ninfra, r.nepisodes);
		engi_results_release(&r);
		return EXIT_FAILED;
	}
	struct exp x = {.r = &r, .results_path = path, .trials = json_array()};
	char *abs = realpath(path, NULL);
	const char *slash = abs ? strrchr(abs, '/') : NULL;
	snprintf(x.art_root, sizeof(x.art_root), "%.*s/artifacts", slash ? (int)(slash - abs) : 1,
		 slash ? abs : ".");
	free(abs);
	x.sweep_id = r.sweep_id ? r.sweep_id : "";
	char jn[64];
	snprintf(jn, sizeof(jn), "engisweep-%.12s", x.sweep_id[0] ? x.sweep_id : "results");
	x.job_name = job ? job : jn;
	/* the dataset: named, else the suite's folder name from the frozen
	 * configuration */
	char ds[256] = "engisweep";
	json_t *cfg = r.config_json ? json_loads(r.config_json, 0, NULL) : NULL;
	const char *suite = json_string_value(json_object_get(cfg, "suite"));
	if (suite) {
		const char *b = strrchr(suite, '/');
		snprintf(ds, sizeof(ds), "%s", b && b[1] ? b + 1 : suite);
	}
	json_decref(cfg);
	x.dataset = dataset ? dataset : ds;
	int rc = fs_mkdir_p(out, 0755, &err);
	char *oabs = rc == 0 ? realpath(out, NULL) : NULL;
	if (rc == 0 && !oabs)
		rc = engi_raise(&err, ENGI_EIO, "cannot resolve '%s': %s", out, strerror(errno));
	if (rc == 0)
		snprintf(x.job_dir, sizeof(x.job_dir), "%s/%s", oabs, x.job_name);
	free(oabs);
	double first = INFINITY, last = 0;
	for (size_t i = 0; rc == 0 && i < r.nepisodes; i++) {
		const struct engi_res_episode *e = &r.episodes[i];
		first = fmin(first, e->started_at);
		last = fmax(last, e->started_at + e->wall_s);
		rc = export_trial(&x, e, &err);
	}
	if (rc == 0)
		rc = export_job(&x, isfinite(first) ? first : 0, last, &err);
	json_decref(x.trials);
	if (rc < 0) {
		cli_error(&err);
		engi_results_release(&r);
		return EXIT_FAILED;
	}
	printf("exported %zu trials to %s%s\n", r.nepisodes, x.job_dir,
	       ninfra ? " (infrastructure failures as errored trials)" : "");
	engi_results_release(&r);
	return 0;
}
