#include "sweep.h"

#include "backend.h"
#include "engi/alloc.h"
#include "engi/threads.h"
#include "engi/verify.h"
#include "episode.h"
#include "fsutil.h"
#include "govern.h"
#include "journal.h"
#include "judge.h"
#include "llm_judge.h"
#include "policy.h"
#include "payload.h"
#include "progress.h"
#include "provider.h"
#include "record.h"
#include "replay_source.h"
#include "scheduler.h"
#include "source.h"
#include "store.h"
#include "trace.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLUSH_EVERY_RECORDS 16
#define FLUSH_EVERY_S	    2.0
/* the governor: a 429 scales a model's concurrency limit by GOV_BACKOFF;
 * after GOV_QUIET_S without one it grows by one episode */
#define GOV_BACKOFF 0.8
#define GOV_QUIET_S 60.0

void sweep_opts_defaults(struct sweep_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->out = "results";
	o->backend = "local";
	o->trials = 1;
	o->jobs = -1;
	o->grace_s = 60;
	o->max_retries = 2;
	o->retry_wait_s = 5;
	o->cmd_timeout_s = 600;
	o->progress_every = 10;
	o->judge_attempts = LLM_JUDGE_ATTEMPTS_DEFAULT;
}

struct pool_entry {
	const char *name;
	int cap, used;
};

struct idx_entry {
	const char *id;
	size_t cell;
};

struct runctx {
	struct sweep *sw;
	const struct sweep_opts *o;
	char out[PATH_MAX];
	char work_root[PATH_MAX];
	char h5[PATH_MAX];
	char host[64];
	char run_id[40];
	int kernel_threads;
	/* rank 0 */
	struct journal journal;
	/* episodes over whose verification has not come back (verifying.jsonl):
	 * after a kill, --resume judges them from their saved deliverables
	 * instead of running them again */
	struct journal vjournal;
	int vjournal_warned;
	struct store *store;
	int *model_running;
	double *model_spent; /* dollars of each model's recorded episodes */
	/* cells whose cost was booked when their episode ended (budgets) */
	unsigned char *booked;
	/* the request governor: per model, the adaptive concurrency limit (its
	 * provider settings are the model's, sweepdef's) */
	pthread_mutex_t gov_lock;
	double *gov_limit, *gov_changed;
	struct pool_entry *pool;
	size_t npool;
	struct idx_entry *index; /* sorted by id */
	/* measured durations per (task, model), improving the predictions */
	double *measured_sum;
	int *measured_n;
	/* per model: measured and predicted seconds of its finished cells, to
	 * scale the predictions of tasks it has not finished yet */
	double *model_measured_s, *model_predicted_s;
	long *last_line;	/* resume: journal line of each cell's last record */
	size_t mixed;		/* resume: kept records judged by another verifier */
	struct record *rejudge; /* resume: verifier failures to judge again */
	size_t nrejudge;
	char mixed_example[256];
	size_t line;
	size_t since_flush;
	double last_flush;
	struct progress progress;
};

static int cmp_idx(const void *a, const void *b)
{
	return strcmp(((const struct idx_entry *)a)->id, ((const struct idx_entry *)b)->id);
}

static long find_cell(const struct runctx *c, const char *id)
{
	struct idx_entry key = {.id = id};
	const struct idx_entry *e =
	    bsearch(&key, c->index, c->sw->matrix.ncells, sizeof(*c->index), cmp_idx);
	return e ? (long)e->cell : -1;
}

/* ---- hooks (run on every rank; the rest on rank 0) ---- */

static double govern_via_sched(const struct govern_msg *msg)
{
	return sched_govern(msg, sizeof(*msg));
}

static void fill_spec(struct runctx *c, size_t ci, int rank, struct episode_spec *sp)
{
	const struct sweep *sw = c->sw;
	const struct cell *cell = &sw->matrix.cells[ci];
	struct episode_spec s;
	episode_spec_defaults(&s);
	s.task = &sw->suite.tasks[cell->task];
	s.model = &sw->def.models[cell->model];
	s.cond = &sw->def.conds[cell->cond];
	s.cell = cell;
	s.backend = c->o->backend;
	s.out_dir = c->out;
	s.work_root = c->work_root;
	s.max_retries = c->o->max_retries;
	s.retry_wait_s = c->o->retry_wait_s;
	s.verify_timeout_s = c->o->verify_timeout_s;
	s.verify_mem_mb = c->o->verify_mem_mb;
	s.verify_in = c->o->verify_in;
	s.cmd_timeout_s = c->o->cmd_timeout_s;
	s.pause_env = c->o->pause_env;
	s.should_abort = sched_should_abort;
	s.rank = rank;
	s.host = c->host;
	s.run_id = c->run_id;
	s.kernel_threads = c->kernel_threads;
	s.replay_load = replay_source_load;
	s.govern = govern_via_sched;
	s.defer_verify = 1;
	s.policy = sw->policy;
	s.judge = sw->judge;
	*sp = s;
}

/* A cell's verification item: the record its episode left, judged. */
static int verify_item(struct runctx *c, size_t ci, int rank, const char *input, size_t input_len,
		       char **payload, size_t *len)
{
	struct episode_spec s;
	fill_spec(c, ci, rank, &s);
	struct record rec;
	struct engi_error e;
	engi_error_init(&e);
	struct payload_head head;
	int rc = payload_read(input, input_len, ci, c->sw->matrix.cells[ci].id, &head, &rec, NULL,
			      NULL, &e);
	if (rc == 0)
		rc = episode_verify(&s, &rec, &e);
	if (rc == ENGI_EINTERRUPTED) {
		record_release(&rec);
		return rc;
	}
	if (rc < 0) {
		/* our own failure, not the agent's: not scored, judged again
		 * by --resume from the saved deliverables */
		rec.outcome = OUTCOME_INFRA_ERROR;
		snprintf(rec.infra, sizeof(rec.infra), "%s", INFRA_VERIFIER_CRASH);
		snprintf(rec.message, sizeof(rec.message), "verifying: %s", e.msg);
	}
	engi_error_init(&e);
	rc = payload_pack(&rec, ci, payload, len, &e);
	record_release(&rec);
	return rc < 0 ? ENGI_EINTERRUPTED : 0;
}

static int hook_run(void *p, size_t ci, int rank, const char *input, size_t input_len,
		    char **payload, size_t *len)
{
	struct runctx *c = p;
	if (input)
		return verify_item(c, ci, rank, input, input_len, payload, len);
	const struct sweep *sw = c->sw;
	const struct cell *cell = &sw->matrix.cells[ci];
	struct episode_spec s;
	fill_spec(c, ci, rank, &s);
	struct record rec;
	struct engi_error e;
	engi_error_init(&e);
	int rc = episode_run(&s, &rec, &e);
	int pending = rc == 1;
	if (rc == ENGI_EINTERRUPTED)
		return rc;
	if (rc < 0) {
		/* our own failure: still a record, never a lost cell */
		record_init(&rec);
		snprintf(rec.cell, sizeof(rec.cell), "%s", cell->id);
		snprintf(rec.task_id, sizeof(rec.task_id), "%s", s.task->id);
		snprintf(rec.model, sizeof(rec.model), "%s", s.model->name);
		snprintf(rec.condition, sizeof(rec.condition), "%s", s.cond->name);
		rec.trial = cell->trial;
		rec.outcome = OUTCOME_AGENT_ERROR;
		rec.attempts = 1;
		rec.rank = rank;
		rec.started_at = clk_now_wall();
		snprintf(rec.host, sizeof(rec.host), "%s", c->host);
		snprintf(rec.run_id, sizeof(rec.run_id), "%s", c->run_id);
		snprintf(rec.message, sizeof(rec.message), "%s", e.msg);
	}
	engi_error_init(&e);
	rc = payload_pack(&rec, ci, payload, len, &e);
	record_release(&rec);
	return rc < 0 ? ENGI_EINTERRUPTED : pending;
}

/* Predicted seconds of a cell: the mean measured duration of its task and
 * model once there is one; else the matrix's prediction scaled by how the
 * model's finished cells compared with theirs; else the prediction. */
static double predicted_s(const struct runctx *c, const struct cell *cell)
{
	size_t k = (size_t)cell->task * c->sw->def.nmodels + cell->model;
	if (c->measured_n[k])
		return c->measured_sum[k] / c->measured_n[k];
	if (c->model_predicted_s[cell->model] > 0)
		return cell->pred_s * c->model_measured_s[cell->model] /
		       c->model_predicted_s[cell->model];
	return cell->pred_s;
}

static void note_duration(struct runctx *c, size_t ci, const struct record *r)
{
	if (outcome_is_infra(r->outcome))
		return;
	const struct cell *cell = &c->sw->matrix.cells[ci];
	size_t k = (size_t)cell->task * c->sw->def.nmodels + cell->model;
	c->measured_sum[k] += r->wall_s;
	c->measured_n[k]++;
	c->model_measured_s[cell->model] += r->wall_s;
	c->model_predicted_s[cell->model] += cell->pred_s;
}

/* Longest predicted first, except that the repeats of a task and model
 * wait until one of its episodes has been measured: first trials go first,
 * and the queue's tail holds measured, short cells rather than three
 * unknown trials of one pair. */
#define PRIORITY_FIRST 1e9
static double hook_priority(void *p, size_t ci)
{
	struct runctx *c = p;
	const struct cell *cell = &c->sw->matrix.cells[ci];
	size_t k = (size_t)cell->task * c->sw->def.nmodels + cell->model;
	double pred = predicted_s(c, cell);
	return cell->trial > 0 && !c->measured_n[k] ? pred : PRIORITY_FIRST + pred;
}

/* Sent ahead only when starting later changes nothing: no deadline, no
 * concurrency cap, budget or licence token. */
static int hook_prefetch(void *p, size_t ci)
{
	struct runctx *c = p;
	const struct cell *cell = &c->sw->matrix.cells[ci];
	const struct model *m = &c->sw->def.models[cell->model];
	return c->o->deadline <= 0 && c->o->budget_usd <= 0 && m->max_concurrent <= 0 &&
	       m->budget_usd <= 0 && c->sw->suite.tasks[cell->task].nresources == 0;
}

static int hook_admit(void *p, size_t ci)
{
	struct runctx *c = p;
	const struct cell *cell = &c->sw->matrix.cells[ci];
	if (c->o->deadline > 0 &&
	    clk_now_wall() + predicted_s(c, cell) + c->o->deadline_margin_s > c->o->deadline)
		return 0; /* would not fit in the allocation: leave it for the next */
	const struct model *m = &c->sw->def.models[cell->model];
	if (m->max_concurrent > 0 && c->model_running[cell->model] >= m->max_concurrent)
		return 0;
	if (m->max_concurrent > 0 && c->gov_limit) {
		pthread_mutex_lock(&c->gov_lock);
		double *lim = &c->gov_limit[cell->model];
		if (*lim < m->max_concurrent &&
		    clk_now_mono() - c->gov_changed[cell->model] > GOV_QUIET_S) {
			*lim = fmin(*lim + 1, m->max_concurrent);
			c->gov_changed[cell->model] = clk_now_mono();
		}
		int cap = (int)*lim;
		pthread_mutex_unlock(&c->gov_lock);
		if (c->model_running[cell->model] >= (cap < 1 ? 1 : cap))
			return 0;
	}
	/* a spent budget: the model's remaining cells stay unrun (resumable) */
	if (m->budget_usd > 0 && c->model_spent[cell->model] >= m->budget_usd)
		return 0;
	if (c->o->budget_usd > 0) {
		double spent = 0;
		for (size_t i = 0; i < c->sw->def.nmodels; i++)
			spent += c->model_spent[i];
		if (spent >= c->o->budget_usd)
			return 0;
	}
	const struct task *t = &c->sw->suite.tasks[cell->task];
	for (size_t i = 0; i < t->nresources; i++)
		for (size_t k = 0; k < c->npool; k++)
			if (!strcmp(c->pool[k].name, t->resources[i].name) &&
			    c->pool[k].used + t->resources[i].count > c->pool[k].cap)
				return 0;
	return 1;
}

/* The governor on rank 0 (govern.h): GOVERN_ASK answers the seconds a
 * request must wait (token buckets shared by all ranks); GOVERN_TELL books
 * the tokens and, on a 429, lowers the model's concurrency limit to 0.8 of
 * itself (hook_admit raises it by one after a quiet period). Called under
 * the scheduler's governor lock. */
static double hook_govern(void *p, const void *raw, size_t len)
{
	struct runctx *c = p;
	struct govern_msg msg;
	if (!c->gov_limit || len != sizeof(msg))
		return 0;
	memcpy(&msg, raw, sizeof(msg));
	size_t mi = msg.model;
	if (mi >= c->sw->def.nmodels)
		return 0;
	const struct provider_config *pc = c->sw->def.models[mi].provider;
	if (!pc)
		return 0;
	if (msg.verb == GOVERN_ASK)
		return provider_throttle_reserve(pc, msg.est_tokens);
	if (msg.verb == GOVERN_TELL) {
		provider_throttle_used(pc, msg.tokens, msg.est_tokens);
		if (msg.status == 429) {
			pthread_mutex_lock(&c->gov_lock);
			double lim = c->gov_limit[mi] * GOV_BACKOFF;
			c->gov_limit[mi] = lim < 1 ? 1 : lim;
			c->gov_changed[mi] = clk_now_mono();
			pthread_mutex_unlock(&c->gov_lock);
		}
	}
	return 0;
}

static void account(struct runctx *c, size_t ci, int sign)
{
	const struct cell *cell = &c->sw->matrix.cells[ci];
	c->model_running[cell->model] += sign;
	const struct task *t = &c->sw->suite.tasks[cell->task];
	for (size_t i = 0; i < t->nresources; i++)
		for (size_t k = 0; k < c->npool; k++)
			if (!strcmp(c->pool[k].name, t->resources[i].name))
				c->pool[k].used += sign * t->resources[i].count;
}

static void hook_started(void *p, size_t ci, int rank)
{
	account(p, ci, +1);
}

static int hook_released(void *p, size_t ci)
{
	struct runctx *c = p;
	account(c, ci, -1);
	/* with a budget, what this result spent decides the next dispatch */
	const struct cell *cell = &c->sw->matrix.cells[ci];
	return c->sw->def.models[cell->model].budget_usd > 0 || c->o->budget_usd > 0;
}

static int budgeted(const struct runctx *c)
{
	if (c->o->budget_usd > 0)
		return 1;
	for (size_t i = 0; i < c->sw->def.nmodels; i++)
		if (c->sw->def.models[i].budget_usd > 0)
			return 1;
	return 0;
}

/* An episode is over and its verification queued: under a budget, what it
 * spent counts now, before the next dispatch, not when its verdict comes. */
static void hook_pending(void *p, size_t ci, const char *payload, size_t len)
{
	struct runctx *c = p;
	struct engi_error e;
	engi_error_init(&e);
	struct payload_head head;
	const char *json;
	const unsigned char *trace;
	if (payload_open(payload, len, ci, &head, &json, &trace, &e) < 0)
		return; /* its verification reports the same fault */
	char *line = NULL;
	size_t n = 0;
	int rc = 0;
	if (c->vjournal.fd >= 0) {
		rc = payload_read(payload, len, ci, c->sw->matrix.cells[ci].id, &head, NULL, &line,
				  &n, &e);
		if (rc == 0)
			rc = journal_append_json(&c->vjournal, line, n, &e);
		engi_free(line);
	}
	if (rc < 0 && !c->vjournal_warned++)
		fprintf(stderr,
			"engisweep: warning: %s; an episode whose verification a kill "
			"interrupts will run again\n",
			e.msg);
	if (!budgeted(c))
		return;
	c->model_spent[c->sw->matrix.cells[ci].model] += head.cost_usd;
	c->booked[ci] = 1;
}

static void note_result(struct sweep *sw, size_t ci, const struct record *r)
{
	struct cell_result *cr = &sw->results[ci];
	engi_free(cr->failed);
	cr->failed = NULL;
	cr->have = 1;
	cr->success = r->success;
	cr->outcome = r->outcome;
	cr->score = r->score;
	size_t n = 2;
	for (size_t i = 0; i < r->nassertions; i++)
		n += strlen(r->assertions[i].name) + 1;
	cr->failed = engi_malloc(n);
	if (!cr->failed)
		return;
	strcpy(cr->failed, ",");
	for (size_t i = 0; i < r->nassertions; i++) {
		const struct engi_assertion *a = &r->assertions[i];
		if (a->state == ENGI_FAIL || (a->required && a->state == ENGI_UNAVAILABLE)) {
			strcat(cr->failed, a->name);
			strcat(cr->failed, ",");
		}
	}
}

static int maybe_flush(struct runctx *c, int force, struct engi_error *err)
{
	double now = clk_now_mono();
	if (!force && c->since_flush < FLUSH_EVERY_RECORDS && now - c->last_flush < FLUSH_EVERY_S)
		return 0;
	/* with nothing new, the store may still owe the readers a copy
	 * (store_publish): it does nothing when it does not */
	TRY(store_flush(c->store, err));
	c->since_flush = 0;
	c->last_flush = now;
	return 0;
}

/* The journal's lines of the results that arrived together, fsynced once. */
static int hook_settle(void *p, struct engi_error *err)
{
	struct runctx *c = p;
	return journal_sync(&c->journal, err);
}

static int hook_finished(void *p, size_t ci, int rank, const char *payload, size_t len,
			 struct engi_error *err)
{
	struct runctx *c = p;
	if (!payload) {
		progress_interrupted(&c->progress);
		return 0;
	}
	struct record r;
	struct payload_head head;
	char *line = NULL;
	size_t n = 0;
	/* the small record parsed, the trace taken as it came and put into
	 * the journal's line without a parse */
	int rc =
	    payload_read(payload, len, ci, c->sw->matrix.cells[ci].id, &head, &r, &line, &n, err);
	if (rc < 0) {
		record_release(&r);
		engi_free(line);
		engi_error_prefix(err, "result of cell %s from rank %d", c->sw->matrix.cells[ci].id,
				  rank);
		return rc;
	}
	/* written now, made durable with the others of this pass (hook_settle) */
	rc = journal_write_json(&c->journal, line, n, err);
	engi_free(line);
	if (rc == 0)
		rc = store_append(c->store, &r, err);
	if (rc == 0) {
		c->since_flush++;
		rc = maybe_flush(c, 0, err);
	}
	if (rc == 0)
		note_duration(c, ci, &r);
	if (rc == 0) {
		note_result(c->sw, ci, &r);
		if (!c->booked[ci])
			c->model_spent[c->sw->matrix.cells[ci].model] += r.cost_usd;
		c->booked[ci] = 0;
		if (outcome_is_infra(r.outcome))
			c->sw->infra_failed++;
		progress_result(&c->progress, &r, &c->sw->matrix.cells[ci]);
	}
	record_release(&r);
	return rc;
}

static void hook_tick(void *p, const struct sched_status *st)
{
	struct runctx *c = p;
	struct engi_error e;
	engi_error_init(&e);
	maybe_flush(c, 0, &e);
	progress_tick(&c->progress, st);
}

/* ---- setup ---- */

/* Agents that only play the task's own steps (its author's reference and
 * flawed variants, or nothing): trusted to run on the host where the local
 * backend has no sandbox. Model and replay agents, and any other, are not. */
static int agent_trusted(const char *agent)
{
	return !strcmp(agent, "reference") || !strcmp(agent, "noop") ||
	       !strncmp(agent, "flawed:", 7);
}

/* The local backend without its sandbox (bubblewrap missing or failing on
 * this node) runs trusted agents only, unless --unsafe-local: refused here,
 * before anything runs. */
static int local_sandbox_policy(const struct sweep *sw, const struct sweep_opts *o,
				struct engi_error *err)
{
	if (strcmp(o->backend, "local"))
		return 0;
	char why[512];
	if (backend_local_sandbox(why, sizeof(why)))
		return 0;
	for (size_t i = 0; i < sw->def.nmodels && !o->unsafe_local; i++) {
		const struct model *m = &sw->def.models[i];
		if (!agent_trusted(m->agent))
			RAISE(
			    err, ENGI_ENOTSUP,
			    "the local backend's sandbox is unavailable on %s: %s; model '%s' "
			    "(agent "
			    "'%.40s') is not trusted to run unsandboxed, where it could read and "
			    "write "
			    "all this user can (the results, the tasks' references, the API keys): "
			    "install bubblewrap, use --backend qemu, or accept the risk with "
			    "--unsafe-local",
			    sched_rank() ? "a node" : "this host", why, m->name, m->agent);
	}
	backend_local_allow_unsandboxed(1);
	if (!o->quiet && sched_rank() == 0)
		fprintf(stderr,
			"engisweep: warning: the local backend's sandbox is unavailable "
			"(%s): episodes run unsandboxed on the host\n",
			why);
	return 0;
}

/* What no local sandbox may show, wherever it lies: the results folder,
 * the suite, each task's folder, the models file, replayed results. */
static int local_sandbox_hide(const struct sweep *sw, const struct sweep_opts *o, const char *out,
			      struct engi_error *err)
{
	if (strcmp(o->backend, "local"))
		return 0;
	TRY(backend_local_hide(out, err));
	TRY(backend_local_hide(o->suite, err));
	if (o->models_file)
		TRY(backend_local_hide(o->models_file, err));
	if (o->command_policy)
		TRY(backend_local_hide(o->command_policy, err));
	for (size_t i = 0; i < sw->suite.ntasks; i++)
		TRY(backend_local_hide(sw->suite.tasks[i].dir, err));
	for (size_t i = 0; i < sw->def.nmodels; i++)
		if (!strncmp(sw->def.models[i].agent, "replay:", 7))
			TRY(backend_local_hide(sw->def.models[i].agent + 7, err));
	return 0;
}

/* A benchmark's tasks that engisweep cannot run: said, by reason, and an
 * error when none is left. */
static int say_refused(const struct suite *s, const struct sweep_opts *o, struct engi_error *err)
{
	if (!s->nrefused)
		return 0;
	if (!s->ntasks)
		RAISE(err, ENGI_EINVALID,
		      "'%s': none of its %zu tasks can run here (engisweep inspect '%s' says why)",
		      o->suite, s->nrefused, o->suite);
	if (o->quiet || sched_rank() != 0)
		return 0;
	fprintf(stderr, "engisweep: '%s' (%s): %zu tasks run, %zu refused:", o->suite, s->source,
		s->ntasks, s->nrefused);
	for (size_t i = 0; i < s->nrefused; i++) {
		size_t n = suite_refused_by(s, i);
		if (n)
			fprintf(stderr, "%s %zu %s", i ? "," : "", n, s->refused[i].category);
	}
	fprintf(stderr, " (engisweep inspect '%s' lists them)\n", o->suite);
	/* inspect knows no backend: those refused for this one are listed here */
	size_t shown = 0, nb = 0;
	for (size_t i = 0; i < s->nrefused; i++) {
		if (strcmp(s->refused[i].category, SUITE_REFUSED_BACKEND))
			continue;
		if (nb++ < 5) {
			fprintf(stderr, "engisweep:   %s\n", s->refused[i].reason);
			shown++;
		}
	}
	if (nb > shown)
		fprintf(stderr, "engisweep:   ... and %zu more the backend cannot run\n",
			nb - shown);
	return 0;
}

int sweep_define(struct suite *s, struct sweepdef *d, const struct sweep_opts *o, size_t *nstrata,
		 struct engi_error *err)
{
	struct suite_load_opts lo = {
	    .source = o->source, .strict = 1, .deliverables = o->deliverables};
	struct arena ia;
	arena_init(&ia);
	struct suite_image *images = NULL;
	if (o->images) {
		int irc = suite_images_read(o->images, &ia, &images, &lo.nimages, err);
		if (irc < 0) {
			arena_release(&ia);
			engi_error_prefix(err, "--images");
			return irc;
		}
		lo.images = images;
	}
	int lrc = suite_load_with(s, o->suite, &lo, err);
	arena_release(&ia);
	TRY(lrc);
	const struct task_source *src = task_source_lookup(s->source, NULL);
	if (src && src->partial && s->ntasks && o->backend)
		TRY(episode_refuse_unrunnable(o->backend, s, err));
	TRY(say_refused(s, o, err));
	if (o->subset && !strncmp(o->subset, "file:", 5)) {
		size_t unmatched = 0;
		TRY(suite_select_file(s, o->subset + 5, &unmatched, err));
		if (!s->ntasks)
			RAISE(err, ENGI_EINVALID, "--subset %s: none of its tasks loaded",
			      o->subset);
		if (unmatched && !o->quiet && sched_rank() == 0)
			fprintf(stderr,
				"engisweep: --subset %s: %zu of its ids are no task that loaded "
				"(refused, or not in the suite); %zu tasks selected\n",
				o->subset, unmatched, s->ntasks);
		if (nstrata)
			*nstrata = 0;
	} else if (o->subset) {
		TRY(suite_subset(s, o->subset, nstrata, err));
	}
	d->trials = o->trials;
	if (o->validation)
		return 0;
	if (o->agents)
		TRY(sweepdef_add_agents(d, o->agents, err));
	if (o->models_file)
		TRY(sweepdef_load_models(d, o->models_file, err));
	if (!o->agents && !o->models_file)
		TRY(sweepdef_add_agents(d, "reference", err));
	for (size_t i = 0; i < o->nconditions; i++)
		TRY(sweepdef_add_condition(d, o->conditions[i], err));
	TRY(sweepdef_add_grid(d, o->grid, o->ngrid, err));
	/* every agent named must exist and be built, before anything runs */
	for (size_t i = 0; i < d->nmodels; i++) {
		const char *agent = d->models[i].agent;
		if (!strncmp(agent, "flawed:", 7)) {
			int any = 0;
			for (size_t t = 0; t < s->ntasks; t++)
				any |= task_find_flawed(&s->tasks[t], agent + 7) != NULL;
			if (!any)
				RAISE(err, ENGI_EINVALID,
				      "no task in '%s' has a flawed variant '%s'", o->suite,
				      agent + 7);
		}
	}
	for (size_t i = 0; i < o->nresources; i++) {
		char name[64], other[64];
		TRY(sweep_parse_resource(o->resources[i], name, sizeof(name), NULL, err));
		for (size_t k = 0; k < i; k++)
			if (sweep_parse_resource(o->resources[k], other, sizeof(other), NULL,
						 err) == 0 &&
			    !strcmp(name, other))
				RAISE(err, ENGI_EINVALID, "--resource '%s': '%s' is given twice",
				      o->resources[i], name);
	}
	return episode_preflight(o->backend, d, err);
}

/* --judge NAME: its --models entry taken out of the models swept and
 * parsed as the judge; a suite with judges and no --judge is refused. */
static int take_judge(struct sweep *sw, const struct sweep_opts *o, struct engi_error *err)
{
	size_t judged = suite_judged_tasks(&sw->suite);
	if (!o->judge) {
		if (judged)
			RAISE(err, ENGI_EINVALID,
			      "'%s': %zu of its %zu tasks have judges (a rubric a language model "
			      "applies): name the judge model with --judge MODEL, an entry of "
			      "--models",
			      o->suite, judged, sw->suite.ntasks);
		return 0;
	}
	if (!o->models_file)
		RAISE(err, ENGI_EINVALID,
		      "--judge '%s': names an entry of --models FILE; none given", o->judge);
	struct sweepdef *d = &sw->def;
	size_t i = 0;
	while (i < d->nmodels && strcmp(d->models[i].name, o->judge))
		i++;
	if (i == d->nmodels)
		RAISE(err, ENGI_EINVALID, "--judge '%s': no model of that name in '%s'", o->judge,
		      o->models_file);
	struct model *m = &d->models[i];
	if (!m->entry || strcmp(m->agent, "model"))
		RAISE(err, ENGI_EINVALID,
		      "--judge '%s': %s: the judge is a language model (an entry with a "
		      "provider), not the agent '%s'",
		      o->judge, m->origin ? m->origin : m->name, m->agent);
	struct engi_error e;
	engi_error_init(&e);
	if (judge_llm_config(m->entry, &sw->judge_cfg, &e) < 0)
		RAISE(err, e.code, "--judge '%s': %s%s", o->judge, m->origin ? m->origin : "",
		      e.msg);
	sw->judge = engi_calloc(1, sizeof(*sw->judge));
	if (!sw->judge)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	sw->judge->cfg = sw->judge_cfg;
	sw->judge->attempts = o->judge_attempts;
	/* it judges; it is not judged */
	if (m->provider && m->provider_free)
		m->provider_free(m->provider);
	memmove(m, m + 1, (d->nmodels - i - 1) * sizeof(*m));
	d->nmodels--;
	if (!d->nmodels && !o->agents)
		RAISE(err, ENGI_EINVALID,
		      "--judge '%s': the only model of '%s'; name the agents to judge with "
		      "--agents or more models",
		      o->judge, o->models_file);
	if (!judged && !o->quiet && sched_rank() == 0)
		fprintf(stderr, "engisweep: --judge '%s': no task of '%s' has judges\n", o->judge,
			o->suite);
	return 0;
}

static int load_everything(struct sweep *sw, const struct sweep_opts *o, struct engi_error *err)
{
	TRY(sweep_define(&sw->suite, &sw->def, o, NULL, err));
	if (!o->validation)
		TRY(take_judge(sw, o, err));
	if (o->validation) {
		TRY(matrix_build_validation(&sw->matrix, &sw->suite, &sw->def, err));
		TRY(episode_preflight(o->backend, &sw->def, err));
		TRY(local_sandbox_policy(sw, o, err));
		return episode_prepare(o->backend, &sw->suite, err);
	}
	if (o->command_policy)
		TRY(episode_policy_load(o->command_policy, &sw->policy, err));
	TRY(local_sandbox_policy(sw, o, err));
	TRY(episode_prepare(o->backend, &sw->suite, err));
	TRY(matrix_build(&sw->matrix, &sw->suite, &sw->def, NULL, 0, err));
	if (o->shard_n > 0)
		TRY(matrix_keep_shard(&sw->matrix, o->shard_k, o->shard_n, err));
	return 0;
}

int sweep_parse_resource(const char *spec, char *name, size_t cap, int *count,
			 struct engi_error *err)
{
	const char *eq = strchr(spec, '=');
	size_t n = eq ? (size_t)(eq - spec) : 0;
	int ok = n > 0 && n <= 63 &&
		 ((spec[0] >= 'a' && spec[0] <= 'z') || (spec[0] >= 'A' && spec[0] <= 'Z') ||
		  (spec[0] >= '0' && spec[0] <= '9'));
	for (size_t i = 1; ok && i < n; i++) {
		char ch = spec[i];
		ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		     (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
	}
	if (!ok)
		RAISE(err, ENGI_EINVALID,
		      "--resource '%s': expected NAME=N, NAME of 1 to 63 of [A-Za-z0-9._-] "
		      "(first a letter or digit)",
		      spec);
	char *end = NULL;
	errno = 0;
	long v = strtol(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end || eq[1] == '-' || eq[1] == '+' || eq[1] == ' ' ||
	    v < 1 || v > 100000)
		RAISE(err, ENGI_EINVALID,
		      "--resource '%s': the count '%s' is not an integer from 1 to 100000", spec,
		      eq + 1);
	if (name) {
		if (n >= cap)
			RAISE(err, ENGI_EINVALID, "--resource '%s': name too long", spec);
		memcpy(name, spec, n);
		name[n] = '\0';
	}
	if (count)
		*count = (int)v;
	return 0;
}

static int parse_pool(struct runctx *c, struct engi_error *err)
{
	const struct sweep_opts *o = c->o;
	c->pool = engi_calloc(o->nresources ? o->nresources : 1, sizeof(*c->pool));
	if (!c->pool)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < o->nresources; i++) {
		char name[64];
		int n;
		TRY(sweep_parse_resource(o->resources[i], name, sizeof(name), &n, err));
		if (!(c->pool[c->npool].name = engi_strdup(name)))
			RAISE(err, ENGI_ENOMEM, "out of memory");
		c->pool[c->npool].cap = n;
		c->npool++;
	}
	return 0;
}

/* The /tasks row of t; a text wider than the results file keeps is an
 * error naming the task, never a truncation. */
static int fill_task_row(struct engi_res_task *row, const struct task *t, struct engi_error *err)
{
	memset(row, 0, sizeof(*row));
	size_t off = 0;
	int rc = 0;
	for (size_t i = 0; i < t->nsoftware && rc == 0; i++) {
		size_t n = strlen(t->software[i]) + (i ? 1 : 0);
		if (n >= sizeof(row->software) - off)
			rc = engi_raise(err, ENGI_EINVALID,
					"software list is longer than %zu bytes, the width the "
					"results file keeps",
					sizeof(row->software) - 1);
		else
			off += (size_t)snprintf(row->software + off, sizeof(row->software) - off,
						"%s%s", i ? "," : "", t->software[i]);
	}
	if (rc == 0)
		rc = engi_res_copy(row->id, sizeof(row->id), t->id, "task id", err);
	if (rc == 0)
		rc = engi_res_copy(row->title, sizeof(row->title), t->title, "title", err);
	if (rc == 0)
		rc = engi_res_copy(row->domain, sizeof(row->domain), t->domain, "domain", err);
	if (rc == 0)
		rc = engi_res_copy(row->type, sizeof(row->type), task_type_name(t->type), "type",
				   err);
	if (rc == 0)
		rc = engi_res_copy(row->interface, sizeof(row->interface),
				   task_interface_name(t->interface), "interface", err);
	if (rc < 0) {
		engi_error_prefix(err, "task '%s'", t->id);
		return rc;
	}
	memcpy(row->hash, t->hash, sizeof(row->hash));
	row->turns = t->turn_limit;
	row->wall_s = t->wall_s;
	snprintf(row->scoring, sizeof(row->scoring), "%s",
		 t->scoring.mode == ENGI_SCORING_OPTIMIZATION ? "optimization"
		 : t->scoring.mode == ENGI_SCORING_CONTINUOUS ? "continuous"
							      : "binary");
	return 0;
}

/* The /task_meta rows of the suite (engi/results.h), task by task in the
 * order of its `meta`; *out NULL when no task has any. What a task file
 * may hold always fits. */
_Static_assert(TASK_META_KEY_MAX < sizeof(((struct engi_res_task_meta *)0)->key), "meta key");
_Static_assert(TASK_META_VALUE_MAX < sizeof(((struct engi_res_task_meta *)0)->value), "meta value");
static int fill_task_meta(const struct suite *su, struct engi_res_task_meta **out, size_t *n,
			  struct engi_error *err)
{
	size_t total = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < su->ntasks; i++)
		total += su->tasks[i].nmeta;
	if (!total)
		return 0;
	struct engi_res_task_meta *rows = engi_calloc(total, sizeof(*rows));
	if (!rows)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < su->ntasks && rc == 0; i++) {
		const struct task *t = &su->tasks[i];
		for (size_t k = 0; k < t->nmeta && rc == 0; k++) {
			struct engi_res_task_meta *m = &rows[(*n)++];
			rc = engi_res_copy(m->task_id, sizeof(m->task_id), t->id, "task id", err);
			if (rc == 0)
				rc = engi_res_copy(m->key, sizeof(m->key), t->meta[k].key,
						   "metadata key", err);
			if (rc == 0)
				rc = engi_res_copy(m->value, sizeof(m->value), t->meta[k].value,
						   "metadata value", err);
			if (rc < 0)
				engi_error_prefix(err, "task '%s'", t->id);
		}
	}
	if (rc < 0) {
		engi_free(rows);
		*n = 0;
		return rc;
	}
	*out = rows;
	return 0;
}

static char *config_json(const struct runctx *c)
{
	const struct sweep_opts *o = c->o;
	json_t *conds = json_array(), *res = json_array();
	for (size_t i = 0; i < c->sw->def.nconds; i++)
		json_array_append_new(conds,
				      json_pack("{s:s,s:s}", "name", c->sw->def.conds[i].name,
						"settings", c->sw->def.conds[i].settings));
	for (size_t i = 0; i < o->nresources; i++)
		json_array_append_new(res, json_string(o->resources[i]));
	json_t *cfg = json_pack(
	    "{s:s,s:s,s:s,s:s?,s:s?,s:i,s:o,s:o,s:i,s:f,s:f,s:b,s:I}", "suite", o->suite, "out",
	    c->out, "backend", o->backend, "agents", o->agents, "models_file", o->models_file,
	    "trials", c->sw->def.trials, "conditions", conds, "resources", res, "max_retries",
	    o->max_retries, "cmd_timeout_s", o->cmd_timeout_s, "grace_s", o->grace_s, "validation",
	    o->validation, "cells", (json_int_t)c->sw->matrix.ncells);
	if (cfg && c->sw->def.grid_json)
		json_object_set_new(cfg, "grid", json_loads(c->sw->def.grid_json, 0, NULL));
	if (cfg && o->command_policy)
		json_object_set_new(cfg, "command_policy", json_string(o->command_policy));
	if (cfg && o->judge)
		json_object_set_new(
		    cfg, "judge",
		    json_pack("{s:s,s:i}", "model", o->judge, "attempts", o->judge_attempts));
	if (cfg && o->shard_n > 0)
		json_object_set_new(cfg, "shard", json_sprintf("%u/%u", o->shard_k, o->shard_n));
	/* a benchmark's tasks that its source refused: in no denominator, said */
	const struct suite *su = &c->sw->suite;
	if (cfg && su->nrefused) {
		json_t *why = json_object();
		for (size_t i = 0; why && i < su->nrefused; i++) {
			size_t n = suite_refused_by(su, i);
			if (n)
				json_object_set_new(why, su->refused[i].category,
						    json_integer((json_int_t)n));
		}
		json_object_set_new(cfg, "suite_source", json_string(su->source));
		json_object_set_new(cfg, "suite_refused", json_integer((json_int_t)su->nrefused));
		json_object_set_new(cfg, "suite_refused_reasons", why);
	}
	char *s = cfg ? json_dumps(cfg, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(cfg);
	return s;
}

static int open_store(struct runctx *c, const char *path, struct engi_error *err)
{
	struct sweep *sw = c->sw;
	struct engi_res_task *tasks = engi_calloc(sw->suite.ntasks, sizeof(*tasks));
	struct engi_res_model *models = engi_calloc(sw->def.nmodels, sizeof(*models));
	struct engi_res_condition *conds = engi_calloc(sw->def.nconds, sizeof(*conds));
	char *cfg = config_json(c);
	struct engi_res_task_meta *task_meta = NULL;
	size_t ntask_meta = 0;
	int rc = 0;
	if (!tasks || !models || !conds || !cfg) {
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < sw->suite.ntasks && rc == 0; i++)
		rc = fill_task_row(&tasks[i], &sw->suite.tasks[i], err);
	if (rc == 0)
		rc = fill_task_meta(&sw->suite, &task_meta, &ntask_meta, err);
	for (size_t i = 0; i < sw->def.nmodels && rc == 0; i++) {
		const struct model *m = &sw->def.models[i];
		rc = engi_res_copy(models[i].name, sizeof(models[i].name), m->name, "model name",
				   err);
		if (rc == 0)
			rc = engi_res_copy(models[i].agent, sizeof(models[i].agent), m->agent,
					   "agent", err);
		if (rc == 0)
			rc = engi_res_copy(models[i].settings, sizeof(models[i].settings),
					   m->settings, "model settings", err);
		models[i].price_in_per_mtok = m->price_in_per_mtok;
		models[i].price_out_per_mtok = m->price_out_per_mtok;
	}
	for (size_t i = 0; i < sw->def.nconds && rc == 0; i++) {
		rc = engi_res_copy(conds[i].name, sizeof(conds[i].name), sw->def.conds[i].name,
				   "condition name", err);
		if (rc == 0)
			rc = engi_res_copy(conds[i].settings, sizeof(conds[i].settings),
					   sw->def.conds[i].settings, "condition settings", err);
	}
	if (rc < 0)
		goto out;
	char mpi[256];
	sched_library_version(mpi, sizeof(mpi));
	json_t *vj = json_pack("{s:s,s:s,s:s,s:s,s:s}", "engisweep", ENGISWEEP_VERSION, "jansson",
			       JANSSON_VERSION, "zstd", trace_codec_version(), "hdf5",
			       store_library_version(), "mpi", mpi);
	char *versions = vj ? json_dumps(vj, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(vj);
	if (!versions) {
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	struct store_meta meta = {.tasks = tasks,
				  .ntasks = sw->suite.ntasks,
				  .models = models,
				  .nmodels = sw->def.nmodels,
				  .conditions = conds,
				  .nconditions = sw->def.nconds,
				  .task_meta = task_meta,
				  .ntask_meta = ntask_meta,
				  .sweep_id = sw->matrix.sweep_id,
				  .planned_cells = sw->matrix.ncells,
				  .config_json = cfg,
				  .versions_json = versions,
				  .command_line = c->o->command_line ? c->o->command_line : ""};
	rc = store_create(&c->store, path, &meta, err);
	free(versions);
out:
	engi_free(task_meta);
	engi_free(tasks);
	engi_free(models);
	engi_free(conds);
	free(cfg);
	return rc;
}

/* Resume, pass 1: which journal line holds each cell's last record. */
static int resume_scan(void *p, struct record *r, struct engi_error *err)
{
	struct runctx *c = p;
	c->line++;
	long ci = find_cell(c, r->cell);
	if (ci >= 0)
		c->last_line[ci] = (long)c->line;
	record_release(r);
	return 0;
}

static int verifier_failed(const struct record *r)
{
	return r->outcome == OUTCOME_INFRA_ERROR && (!strcmp(r->infra, INFRA_VERIFIER_CRASH) ||
						     !strcmp(r->infra, INFRA_VERIFIER_TIMEOUT) ||
						     !strcmp(r->infra, INFRA_VERIFY_STOPPED) ||
						     !strcmp(r->infra, INFRA_JUDGE_UNAVAILABLE) ||
						     !strcmp(r->infra, INFRA_JUDGE_NO_VERDICT));
}

/* The run's own end (outcome and message): the record's run_outcome and
 * run_message; in a record written before it had them, its trace's last
 * "end". 0 when the run ended with an outcome of the agent's. */
static int run_end(const struct record *r, int *outcome, char *msg, size_t n)
{
	if (r->run_outcome >= 0) {
		*outcome = r->run_outcome;
		snprintf(msg, n, "%s", r->run_message);
		return !outcome_is_infra(*outcome) ? 0 : -1;
	}
	char *text = NULL;
	size_t len = 0;
	*outcome = -1;
	if (!r->trace ||
	    trace_decompress(r->trace, r->trace_len, (size_t)256 << 20, &text, &len, NULL) < 0)
		return -1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		json_t *ev = strstr(line, "\"end\"") ? json_loads(line, 0, NULL) : NULL;
		const char *name = json_string_value(json_object_get(ev, "ev"));
		if (name && !strcmp(name, "end")) {
			const char *o = json_string_value(json_object_get(ev, "outcome"));
			const char *m = json_string_value(json_object_get(ev, "message"));
			*outcome = o ? outcome_from_name(o) : -1;
			snprintf(msg, n, "%s", m ? m : "");
		}
		json_decref(ev);
		line = nl ? nl + 1 : NULL;
	}
	engi_free(text);
	return *outcome >= 0 && !outcome_is_infra(*outcome) ? 0 : -1;
}

/* A cell whose verifier failed: its saved deliverables judged again, as a
 * verification item judges them (episode_verify: its events appended to the
 * trace). On success the record becomes the run's own outcome with the new
 * verdict; otherwise it stays a verifier failure with the latest message
 * (reported as needing attention, and not tried again until the next
 * --resume). */
static int rejudge(struct runctx *c, size_t ci, struct record *r, struct engi_error *err)
{
	int outcome;
	char msg[sizeof(r->message)];
	if (run_end(r, &outcome, msg, sizeof(msg)) < 0)
		return 0; /* no run to judge: it stays as it is */
	struct record_backup {
		int outcome;
		char infra[sizeof(r->infra)], message[sizeof(r->message)];
	} was;
	was.outcome = r->outcome;
	snprintf(was.infra, sizeof(was.infra), "%s", r->infra);
	snprintf(was.message, sizeof(was.message), "%s", r->message);
	r->outcome = outcome;
	r->infra[0] = '\0';
	snprintf(r->message, sizeof(r->message), "%s", msg);
	/* found in the trace of an older record: kept in its fields from now on */
	r->run_outcome = outcome;
	snprintf(r->run_message, sizeof(r->run_message), "%s", msg);
	struct episode_spec s;
	fill_spec(c, ci, 0, &s);
	s.should_abort = NULL;
	int rc = episode_verify(&s, r, err);
	if (rc < 0) {
		r->outcome = was.outcome;
		snprintf(r->infra, sizeof(r->infra), "%s", was.infra);
		snprintf(r->message, sizeof(r->message), "%s", was.message);
		return rc;
	}
	if (r->outcome == OUTCOME_INFRA_ERROR)
		fprintf(
		    stderr, "engisweep: cell %s (task '%s'): %s again: %s\n", r->cell, r->task_id,
		    strncmp(r->infra, "judge", 5) ? "the verifier failed" : r->infra, r->message);
	else
		snprintf(r->version, sizeof(r->version), "%s", ENGISWEEP_VERSION);
	return 0;
}

/* Resume, pass 3 (the journal open): the verifier failures judged again,
 * journalled and stored. */
static int rejudge_all(struct runctx *c, struct engi_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < c->nrejudge; i++) {
		struct record *r = &c->rejudge[i];
		long ci = find_cell(c, r->cell);
		char *json = NULL;
		size_t len = 0;
		if (rc == 0 && ci >= 0)
			rc = rejudge(c, (size_t)ci, r, err);
		if (rc == 0 && ci >= 0)
			rc = record_to_json(r, &json, &len, err);
		if (rc == 0 && ci >= 0)
			rc = journal_append_json(&c->journal, json, len, err);
		engi_free(json);
		if (rc == 0 && ci >= 0)
			rc = store_append(c->store, r, err);
		if (rc == 0 && ci >= 0) {
			note_result(c->sw, (size_t)ci, r);
			c->model_spent[c->sw->matrix.cells[ci].model] += r->cost_usd;
			note_duration(c, (size_t)ci, r);
			c->since_flush++;
		}
		record_release(r);
	}
	engi_free(c->rejudge);
	c->rejudge = NULL;
	c->nrejudge = 0;
	return rc < 0 ? rc : maybe_flush(c, 1, err);
}

/* A record to judge again from its saved deliverables, taken (r emptied). */
static int rejudge_push(struct runctx *c, struct record *r, struct engi_error *err)
{
	struct record *v = engi_realloc(c->rejudge, (c->nrejudge + 1) * sizeof(*v));
	if (!v) {
		record_release(r);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	c->rejudge = v;
	c->rejudge[c->nrejudge++] = *r;
	record_init(r);
	return 0;
}

/* Resume, pass 2: each cell's last record into the store, unless it failed
 * for infrastructure reasons (then the cell runs again). */
static int resume_load(void *p, struct record *r, struct engi_error *err)
{
	struct runctx *c = p;
	c->line++;
	long ci = find_cell(c, r->cell);
	int rc = 0;
	/* a kind that judges in the episode's environment cannot judge the
	 * saved deliverables again: its cell runs again, as any infra failure */
	const struct task *vt = ci >= 0 ? &c->sw->suite.tasks[c->sw->matrix.cells[ci].task] : NULL;
	int rejudgeable = vt && episode_verify_env(vt, c->o->verify_in) != ENGI_VENV_EPISODE;
	if (ci >= 0 && c->last_line[ci] == (long)c->line && verifier_failed(r) && rejudgeable) {
		/* the run stands: its deliverables are judged again, not rerun */
		return rejudge_push(c, r, err);
	}
	if (ci >= 0 && c->last_line[ci] == (long)c->line && !outcome_is_infra(r->outcome)) {
		const struct task *t = &c->sw->suite.tasks[c->sw->matrix.cells[ci].task];
		char id[64];
		episode_verifier_id(t, c->o->verify_in, id, sizeof(id));
		if (strcmp(id, r->verifier) && !c->o->mix_verifiers) {
			if (!c->mixed++)
				snprintf(
				    c->mixed_example, sizeof(c->mixed_example),
				    "cell %s (task '%s') was judged by %s%s, this binary has %s",
				    r->cell, r->task_id,
				    r->verifier[0] ? r->verifier : "a verifier",
				    r->verifier[0] ? "" : " of unknown version", id);
			record_release(r);
			return 0;
		}
		rc = store_append(c->store, r, err);
		if (rc == 0 && ++c->since_flush >= 256)
			rc = maybe_flush(c, 1, err);
		if (rc == 0) {
			note_result(c->sw, (size_t)ci, r);
			c->model_spent[c->sw->matrix.cells[ci].model] += r->cost_usd;
			note_duration(c, (size_t)ci, r);
		}
	}
	record_release(r);
	return rc;
}

/* Resume, pass 2b: the episodes that were over, their verification not yet
 * back when the sweep stopped (verifying.jsonl), and that the journal does
 * not finish: judged again from their saved deliverables, as a verifier
 * failure is, not run again. The last line of a cell counts. */
static int resume_verifying(void *p, struct record *r, struct engi_error *err)
{
	struct runctx *c = p;
	long ci = find_cell(c, r->cell);
	const struct task *vt = ci >= 0 ? &c->sw->suite.tasks[c->sw->matrix.cells[ci].task] : NULL;
	if (!vt || c->sw->results[ci].have ||
	    episode_verify_env(vt, c->o->verify_in) == ENGI_VENV_EPISODE) {
		record_release(r);
		return 0;
	}
	/* what it stays if it cannot be judged now: not a verdict, never the
	 * unjudged run's record */
	r->outcome = OUTCOME_INFRA_ERROR;
	snprintf(r->infra, sizeof(r->infra), "%s", INFRA_VERIFY_STOPPED);
	snprintf(r->message, sizeof(r->message),
		 "the sweep stopped before this episode's verification came back");
	for (size_t i = 0; i < c->nrejudge; i++)
		if (!strcmp(c->rejudge[i].cell, r->cell)) {
			record_release(&c->rejudge[i]);
			c->rejudge[i] = *r;
			record_init(r);
			return 0;
		}
	return rejudge_push(c, r, err);
}

static int setup_rank0(struct runctx *c, size_t **order, size_t *norder, struct engi_error *err)
{
	struct sweep *sw = c->sw;
	const struct sweep_opts *o = c->o;
	size_t n = sw->matrix.ncells;
	TRY(fs_mkdir_p(c->out, 0755, err));
	char jpath[PATH_MAX];
	snprintf(jpath, sizeof(jpath), "%s/journal.jsonl", c->out);
	if (!o->resume && fs_path_is_file(jpath))
		RAISE(err, ENGI_EINVALID,
		      "'%s' holds the journal of an earlier sweep: use --resume to continue it, "
		      "or choose another --out",
		      jpath);
	sw->results = engi_calloc(n ? n : 1, sizeof(*sw->results));
	c->model_running = engi_calloc(sw->def.nmodels, sizeof(int));
	c->model_spent = engi_calloc(sw->def.nmodels ? sw->def.nmodels : 1, sizeof(double));
	c->booked = engi_calloc(sw->matrix.ncells ? sw->matrix.ncells : 1, 1);
	c->gov_limit = engi_calloc(sw->def.nmodels ? sw->def.nmodels : 1, sizeof(double));
	c->gov_changed = engi_calloc(sw->def.nmodels ? sw->def.nmodels : 1, sizeof(double));
	for (size_t i = 0; c->gov_limit && c->gov_changed && i < sw->def.nmodels; i++) {
		c->gov_limit[i] = sw->def.models[i].max_concurrent;
		c->gov_changed[i] = clk_now_mono();
	}
	c->index = engi_calloc(n ? n : 1, sizeof(*c->index));
	c->last_line = engi_calloc(n ? n : 1, sizeof(long));
	size_t npairs = sw->suite.ntasks * sw->def.nmodels;
	c->measured_sum = engi_calloc(npairs ? npairs : 1, sizeof(double));
	c->measured_n = engi_calloc(npairs ? npairs : 1, sizeof(int));
	c->model_measured_s = engi_calloc(sw->def.nmodels, sizeof(double));
	c->model_predicted_s = engi_calloc(sw->def.nmodels, sizeof(double));
	if (!sw->results || !c->model_running || !c->model_spent || !c->booked || !c->gov_limit ||
	    !c->gov_changed || !c->index || !c->last_line || !c->measured_sum || !c->measured_n ||
	    !c->model_measured_s || !c->model_predicted_s)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		c->index[i].id = sw->matrix.cells[i].id;
		c->index[i].cell = i;
	}
	qsort(c->index, n, sizeof(*c->index), cmp_idx);
	TRY(parse_pool(c, err));

	/* the results file is rebuilt from the journal, under a temporary
	 * name, and takes its place only when complete; the sweep goes on
	 * writing that file, and readers see copies of it (store_publish) */
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.part", c->h5);
	TRY(open_store(c, tmp, err));
	size_t before = 0;
	if (o->resume && fs_path_is_file(jpath)) {
		c->line = 0;
		TRY(journal_read(jpath, resume_scan, c, NULL, err));
		c->line = 0;
		TRY(journal_read(jpath, resume_load, c, NULL, err));
		if (c->mixed)
			RAISE(err, ENGI_EINVALID,
			      "'%s': %zu finished episode%s judged by other verifiers than this "
			      "binary's (%s): resuming would mix verdicts; rerun with "
			      "--mix-verifiers "
			      "to keep them as they are, or re-judge them first with "
			      "`engisweep reverify`",
			      jpath, c->mixed, c->mixed == 1 ? " was" : "s were", c->mixed_example);
		for (size_t i = 0; i < n; i++)
			before += sw->results[i].have;
	}
	char vpath[PATH_MAX];
	snprintf(vpath, sizeof(vpath), "%s/verifying.jsonl", c->out);
	if (o->resume && fs_path_is_file(vpath))
		TRY(journal_read(vpath, resume_verifying, c, NULL, err));
	TRY(maybe_flush(c, 1, err));
	TRY(store_publish(c->store, c->h5, err));
	TRY(journal_open(&c->journal, jpath, o->resume, err));
	TRY(rejudge_all(c, err));
	/* every episode it held is judged now: it starts again empty */
	TRY(journal_open(&c->vjournal, vpath, 0, err));

	*order = engi_calloc(n ? n : 1, sizeof(**order));
	if (!*order)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	*norder = 0;
	for (size_t i = 0; i < n; i++)
		if (!sw->results[i].have)
			(*order)[(*norder)++] = i;
	char status[PATH_MAX];
	snprintf(status, sizeof(status), "%s/status.json", c->out);
	progress_init(&c->progress, status, n, before, sw->matrix.cells, o->quiet,
		      o->progress_every, sw->def.models);
	if (!o->quiet)
		fprintf(stderr,
			"engisweep: %zu cells (%zu done before, %zu to run) on %d rank%s, results "
			"in %s\n",
			n, before, *norder, sched_size(), sched_size() == 1 ? "" : "s", c->h5);
	return 0;
}

int sweep_run(struct sweep *sw, const struct sweep_opts *o, struct engi_error *err)
{
	memset(sw, 0, sizeof(*sw));
	sweepdef_init(&sw->def);
	arena_init(&sw->suite.arena);
	arena_init(&sw->matrix.arena);
	struct engi_error local;
	engi_error_init(&local);
	int rc = load_everything(sw, o, &local);
	/* every rank loads and checks; any failure stops all of them */
	if (!sched_agree(rc == 0)) {
		if (rc < 0)
			return engi_raise(err, rc, "%s", local.msg);
		return engi_raise(err, ENGI_EENV, "another rank failed to load the sweep");
	}
	if (!sched_same_digest(sw->matrix.sweep_id))
		RAISE(err, ENGI_EENV,
		      "ranks disagree on the sweep (different task files on different nodes?)");

	struct runctx c;
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.gov_lock, NULL);
	c.journal.fd = -1;
	c.vjournal.fd = -1;
	c.sw = sw;
	c.o = o;
	char *abs = realpath(o->out, NULL);
	if (!abs && sched_rank() == 0 && fs_mkdir_p(o->out, 0755, &local) == 0)
		abs = realpath(o->out, NULL);
	snprintf(c.out, sizeof(c.out), "%s", abs ? abs : o->out);
	free(abs);
	sched_bcast_str(c.out, sizeof(c.out));
	snprintf(c.work_root, sizeof(c.work_root), "%s/work", c.out);
	rc = local_sandbox_hide(sw, o, c.out, &local);
	if (!sched_agree(rc == 0)) {
		pthread_mutex_destroy(&c.gov_lock);
		if (rc < 0)
			return engi_raise(err, rc, "%s", local.msg);
		return engi_raise(err, ENGI_EENV,
				  "another rank failed to set up the local sandbox");
	}
	/* the node's cores shared by its ranks and rank 0's episode threads,
	 * unless the user chose with OMP_NUM_THREADS */
	if (!getenv("OMP_NUM_THREADS")) {
		int slots = o->jobs > 0 ? o->jobs : 1;
		int share = sched_local_size() * (sched_size() == 1 ? slots : 1);
		c.kernel_threads = engi_threads_available() / (share > 0 ? share : 1);
		if (c.kernel_threads < 1)
			c.kernel_threads = 1;
	}
	/* OpenBLAS's pool: the kernels' share of the node, and 1 whenever this
	 * process runs episodes in several threads (a fork in one thread while
	 * another is in a threaded BLAS call breaks that call; threads.h) */
	if (o->jobs > 1)
		engi_blas_threads_set(1);
	else if (c.kernel_threads > 0)
		engi_blas_threads_set(c.kernel_threads);
	snprintf(c.h5, sizeof(c.h5), "%s/results.h5", c.out);
	gethostname(c.host, sizeof(c.host) - 1);
	snprintf(c.run_id, sizeof(c.run_id), "%lx-%x", (unsigned long)clk_now_wall(),
		 (unsigned)getpid());
	sched_bcast_str(c.run_id, sizeof(c.run_id));

	size_t *order = NULL, norder = 0;
	rc = 0;
	engi_error_init(&local);
	if (sched_rank() == 0)
		rc = setup_rank0(&c, &order, &norder, &local);
	if (!sched_agree(rc == 0)) {
		if (rc < 0)
			engi_raise(err, rc, "%s", local.msg);
		else
			engi_raise(err, ENGI_EENV, "rank 0 failed to set up the results folder");
		rc = err && err->code ? err->code : ENGI_EENV;
		goto out;
	}
	sched_install_signals();
	struct sched_hooks h = {.ctx = &c,
				.run = hook_run,
				.pending = hook_pending,
				.admit = hook_admit,
				.priority = hook_priority,
				.prefetch = hook_prefetch,
				.started = hook_started,
				.released = hook_released,
				.finished = hook_finished,
				.settle = hook_settle,
				.tick = hook_tick,
				.govern = hook_govern};
	struct sched_opts so = {.local_slots = o->jobs, .grace_s = o->grace_s};
	struct sched_status st;
	memset(&st, 0, sizeof(st));
	rc = sched_run(order, norder, &h, &so, &st, err);
	if (sched_rank() == 0) {
		struct engi_error e2;
		engi_error_init(&e2);
		int frc = store_close(&c.store, &e2);
		if (frc < 0 && rc == 0)
			rc = engi_raise(err, frc, "%s", e2.msg);
		sw->unrun = 0;
		for (size_t i = 0; i < sw->matrix.ncells; i++)
			sw->unrun += !sw->results[i].have;
		progress_finish(&c.progress, &st, sw->unrun);
		fs_rm_rf(c.work_root, NULL);
		if (sw->unrun == 0 && c.vjournal.path) {
			/* every verification came back: nothing for a resume */
			unlink(c.vjournal.path);
		}
	}
out:
	if (sched_rank() == 0) {
		if (c.store) {
			struct engi_error e3;
			engi_error_init(&e3);
			store_close(&c.store, &e3);
		}
		journal_close(&c.journal);
		journal_close(&c.vjournal);
		progress_release(&c.progress);
	}
	for (size_t i = 0; i < c.npool; i++)
		engi_free((void *)c.pool[i].name);
	engi_free(c.pool);
	engi_free(c.model_running);
	engi_free(c.model_spent);
	engi_free(c.booked);
	engi_free(c.gov_limit);
	engi_free(c.gov_changed);
	pthread_mutex_destroy(&c.gov_lock);
	engi_free(c.index);
	engi_free(c.last_line);
	engi_free(c.measured_sum);
	engi_free(c.measured_n);
	engi_free(c.model_measured_s);
	engi_free(c.model_predicted_s);
	engi_free(order);
	return rc;
}

void sweep_release(struct sweep *sw)
{
	if (sw->results)
		for (size_t i = 0; i < sw->matrix.ncells; i++)
			engi_free(sw->results[i].failed);
	engi_free(sw->results);
	sw->results = NULL;
	matrix_release(&sw->matrix);
	suite_release(&sw->suite);
	sweepdef_release(&sw->def);
	episode_policy_free(sw->policy);
	sw->policy = NULL;
	engi_free(sw->judge);
	sw->judge = NULL;
	if (sw->judge_cfg)
		provider_config_free(sw->judge_cfg);
	sw->judge_cfg = NULL;
}
