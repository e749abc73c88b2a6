#include "episode.h"

#include "agent.h"
#include "backend.h"
#include "base64.h"
#include "engi/alloc.h"
#include "engi/sha256.h"
#include "engi/threads.h"
#include "engi/verify.h"
#include "fsutil.h"
#include "judge.h"
#include "llm_judge.h"
#include "policy.h"
#include "secrets.h"
#include "text.h"
#include "trace.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT_FILE_CAP	((size_t)256 << 20)
#define NO_ANSWER	"(the user does not answer)"
#define CHECK_TIMEOUT_S 60.0

void episode_spec_defaults(struct episode_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->backend = "local";
	s->max_retries = 2;
	s->retry_wait_s = 5;
	s->cmd_timeout_s = 600;
	s->obs_cap = 64 << 10;
	s->trace_cap = TRACE_CAP_DEFAULT;
	s->host = "";
	s->run_id = "";
}

/* An agent's parse of a models.json entry into m->provider; its errors,
 * "/FIELD: what is wrong", placed at the entry's origin in its file. */
static int configure_model(const struct agent_desc *ad, struct model *m, struct engi_error *err)
{
	struct engi_error e;
	engi_error_init(&e);
	int rc = ad->configure(m->entry, &m->provider, &e);
	if (rc == 0) {
		m->provider_free = ad->unconfigure;
		return 0;
	}
	const char *origin = m->origin ? m->origin : m->name;
	const char *colon = e.msg[0] == '/' ? strstr(e.msg, ": ") : NULL;
	if (!colon)
		RAISE(err, rc, "%s: %s", origin, e.msg);
	char field[ENGI_ERROR_MSG_MAX];
	snprintf(field, sizeof(field), "%.*s", (int)(colon - e.msg - 1), e.msg + 1);
	json_t *entry = json_loads(m->entry, 0, NULL);
	rc = model_field_error(err, rc, origin, entry, field, colon + 2);
	json_decref(entry);
	return rc;
}

int episode_preflight(const char *backend, struct sweepdef *d, struct engi_error *err)
{
	if (backend && !backend_lookup(backend, err))
		return err && err->code ? err->code : ENGI_ENOTFOUND;
	for (size_t i = 0; i < d->nmodels; i++) {
		struct model *m = &d->models[i];
		const struct agent_desc *ad = agent_lookup(m->agent, err);
		if (!ad) {
			if (m->origin)
				engi_error_prefix(err, "%s/agent", m->origin);
			else
				engi_error_prefix(err, "model '%s'", m->name);
			return err && err->code ? err->code : ENGI_ENOTFOUND;
		}
		if (!strcmp(m->agent, "model") && !m->entry)
			RAISE(err, ENGI_EINVALID,
			      "model '%s': the agent 'model' needs a models.json entry with a "
			      "provider "
			      "(--models FILE)",
			      m->name);
		if (ad->configure && m->entry && !m->provider)
			TRY(configure_model(ad, m, err));
	}
	return 0;
}

/* The environment a task asks for, as a backend starts it. */
static struct env_spec task_env_spec(const struct task *t, const char *work_root, const char *name,
				     const char *key)
{
	return (struct env_spec){.image = t->env.image,
				 .workdir = t->env.workdir,
				 .folders = t->env.folders,
				 .nfolders = t->env.nfolders,
				 .cpus = t->env.cpus,
				 .memory_mb = t->env.memory_mb,
				 .network = t->env.network,
				 .detach = t->launches,
				 .work_root = work_root,
				 .name = name,
				 .key = key};
}

int episode_prepare(const char *backend, const struct suite *suite, struct engi_error *err)
{
	const struct backend_desc *bd = backend_lookup(backend, err);
	if (!bd)
		return err && err->code ? err->code : ENGI_ENOTFOUND;
	for (size_t i = 0; i < suite->ntasks; i++) {
		const struct task *t = &suite->tasks[i];
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct task *o = &suite->tasks[j];
			/* a task with folders is always checked on its own */
			seen = !strcmp(o->env.image, t->env.image) && o->env.cpus == t->env.cpus &&
			       o->env.memory_mb == t->env.memory_mb &&
			       o->env.network == t->env.network &&
			       !o->env.workdir == !t->env.workdir && o->launches == t->launches &&
			       !o->env.nfolders && !t->env.nfolders;
		}
		if (seen)
			continue;
		struct env_spec es = task_env_spec(t, NULL, NULL, NULL);
		int rc = backend_prepare(bd, &es, err);
		if (rc < 0) {
			engi_error_prefix(err, "task '%s'", suite->tasks[i].id);
			return rc;
		}
	}
	return 0;
}

int episode_refuse_unrunnable(const char *backend, struct suite *suite, struct engi_error *err)
{
	const struct backend_desc *bd = backend_lookup(backend, err);
	if (!bd)
		return err && err->code ? err->code : ENGI_ENOTFOUND;
	for (size_t i = 0; i < suite->ntasks;) {
		struct env_spec es = task_env_spec(&suite->tasks[i], NULL, NULL, NULL);
		struct engi_error e;
		engi_error_init(&e);
		if (backend_can_run(bd, &es, &e) == 0) {
			i++;
			continue;
		}
		char why[ENGI_ERROR_MSG_MAX + 8];
		snprintf(why, sizeof(why), "%s: %s", suite->tasks[i].file, e.msg);
		if (suite_refuse_task(suite, i, SUITE_REFUSED_BACKEND, why) < 0)
			RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	return 0;
}

/* Everything one attempt produces besides the trace. */
struct attempt {
	int outcome;
	int turns;
	int64_t tokens_in, tokens_out;
	double cost_usd, env_s, model_s;
	char message[256];
	char infra[INFRA_REASON_MAX]; /* why an infrastructure outcome, else "" */
	int interrupted;
	/* protected inputs: digest before */
	char (*protected_hash)[65];
	/* interaction: replies given, questions asked, and per assertion the
	 * turn of the first command matching its no_command pattern (0: none) */
	unsigned char reply_used[TASK_INTERACTION_MAX];
	int asked;
	int hit_turn[TASK_INTERACTION_MAX];
	size_t followups; /* follow-up messages delivered */
};

static void tr(struct trace *t, json_t *ev)
{
	if (!ev)
		return;
	/* past the cap the trace keeps its head; trace->truncated says so */
	if (trace_event(t, ev) < 0)
		t->truncated = 1;
	json_decref(ev);
}

/* The agent's own events (model requests and replies) join the trace. */
static void agent_trace_cb(void *arg, const char *event_json)
{
	tr(arg, json_loads(event_json, 0, NULL));
}

/* The agent's governor messages, tagged with the model's index. */
static double agent_govern_cb(void *arg, struct govern_msg *msg)
{
	const struct episode_spec *s = arg;
	msg->model = (uint32_t)s->cell->model;
	return s->govern(msg);
}

struct cancel_ctx {
	int (*should_abort)(void);
};

static int cancel_cb(void *p)
{
	struct cancel_ctx *c = p;
	return c->should_abort && c->should_abort();
}

/* The screen scale of GUI observations: condition setting screen_scale,
 * else 1.0 (0.2, 0.6 and 1.0 of 1920x1080 are usual). */
static double screen_scale(const struct episode_spec *s)
{
	const struct cond_settings *cs = &s->cond->set;
	return cs->set & COND_SET(COND_SCREEN_SCALE) ? cs->screen_scale : 1.0;
}

/* A screenshot for the agent, base64, into *b64 (freed first); the trace
 * keeps it too. NULL on failure (the message goes to the trace). */
static int take_screen(struct backend_env *env, double scale, int turn, struct trace *t, char **b64)
{
	engi_free(*b64);
	*b64 = NULL;
	unsigned char *png = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	int rc = backend_screenshot(env, scale, &png, &len, &e);
	if (rc == 0) {
		size_t n = base64_encoded_len(len);
		*b64 = n == SIZE_MAX ? NULL : engi_malloc(n + 1);
		if (*b64)
			base64_encode(png, len, *b64);
		engi_free(png);
	}
	tr(t, json_pack("{s:s,s:i,s:f,s:I,s:s?,s:s?}", "ev", "screen", "turn", turn, "scale", scale,
			"bytes", (json_int_t)len, "png_b64", *b64, "error", rc < 0 ? e.msg : NULL));
	return rc;
}

static void set_msg(struct attempt *a, const char *fmt, const char *s)
{
	snprintf(a->message, sizeof(a->message), fmt, s);
}

/* The environment was lost: retried, never scored. */
static void env_lost(struct attempt *a, const char *msg)
{
	a->outcome = OUTCOME_ENV_CRASH;
	snprintf(a->infra, sizeof(a->infra), "%s", INFRA_ENV_LOST);
	set_msg(a, "%s", msg);
}

/* The agent failed with code rc: its model's endpoint or credentials are
 * infrastructure (retried, never scored); anything else is the agent's. */
static void agent_failed(struct attempt *a, int rc, int starting, const char *msg)
{
	if (rc == ENGI_EUNAVAIL || rc == ENGI_EAUTH) {
		a->outcome = OUTCOME_INFRA_ERROR;
		snprintf(a->infra, sizeof(a->infra), "%s",
			 rc == ENGI_EUNAVAIL ? INFRA_ENDPOINT
			 : starting	     ? INFRA_KEY_UNSET
					     : INFRA_AUTH);
	} else if (rc == ENGI_EENV) {
		env_lost(a, msg);
		return;
	} else {
		a->outcome = OUTCOME_AGENT_ERROR;
	}
	set_msg(a, "%s", msg);
}

/* The simulated user's reply to a question: the first unused reply whose
 * `when` matches it, else the first unused one without `when`. */
static const char *user_reply(const struct task *task, struct attempt *a, const char *q)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < task->nreplies; i++) {
			const struct task_reply *r = &task->replies[i];
			if (a->reply_used[i] || (r->when == NULL) != pass)
				continue;
			if (r->when && regexec(&r->re, q, 0, NULL, 0) != 0)
				continue;
			a->reply_used[i] = 1;
			return r->reply;
		}
	return NO_ANSWER;
}

/* Notes the commands that the no_command assertions forbid. */
static void watch_command(const struct task *task, struct attempt *a, const char *cmd, int turn)
{
	for (size_t i = 0; i < task->niasserts; i++) {
		const struct task_iassert *ia = &task->iasserts[i];
		if (ia->check == ICHECK_NO_COMMAND && !a->hit_turn[i] &&
		    regexec(&ia->re, cmd, 0, NULL, 0) == 0)
			a->hit_turn[i] = turn;
	}
}

/* The results of one turn's actions, one each, in order: what the agent
 * reads as observation.results. */
struct turn_results {
	struct action_result v[AGENT_MAX_ACTIONS];
	char *out[AGENT_MAX_ACTIONS], *img[AGENT_MAX_ACTIONS];
	size_t n;
};

static void results_clear(struct turn_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		engi_free(r->out[i]);
		engi_free(r->img[i]);
	}
	r->n = 0;
}

/* Keeps a copy of the observation an action left, and its image (taken). */
static void results_keep(struct turn_results *r, const struct observation *o, char *img)
{
	if (r->n == AGENT_MAX_ACTIONS) {
		engi_free(img);
		return;
	}
	char *out = engi_malloc(o->output_len + 1);
	if (out) {
		memcpy(out, o->output, o->output_len);
		out[o->output_len] = '\0';
	}
	r->out[r->n] = out;
	r->img[r->n] = img;
	r->v[r->n] = (struct action_result){.output = out ? out : "(out of memory)",
					    .output_len = out ? o->output_len : 15,
					    .exit_code = o->exit_code,
					    .timed_out = o->timed_out,
					    .truncated = o->truncated,
					    .image_b64 = img,
					    .rejected = o->rejected,
					    .out_total = o->out_total};
	r->n++;
}

/* Whether some line of text is exactly line. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == n && !memcmp(p, line, n))
			return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* The shell command that runs code with python3 in the working folder:
 * the code goes in a quoted here-document whose delimiter no line of it
 * equals, so nothing in it reaches the shell. */
static char *python_command(const char *code)
{
	char delim[48];
	for (unsigned k = 0;; k++) {
		snprintf(delim, sizeof(delim), "ENGISWEEP_PYTHON_%u", k);
		if (!has_line(code, delim))
			break;
	}
	size_t n = strlen(code) + 2 * strlen(delim) + 32;
	char *cmd = engi_malloc(n);
	if (cmd)
		snprintf(cmd, n, "python3 - <<'%s'\n%s\n%s\n", delim, code, delim);
	return cmd;
}

/* An agent's wait: seconds pass, at most what is left of the wall time;
 * -1 when the sweep stopped meanwhile. */
static int wait_within(const struct episode_spec *s, double seconds, double left)
{
	double until = clk_now_mono() + fmin(seconds, fmax(left, 0));
	while (clk_now_mono() < until) {
		if (s->should_abort && s->should_abort())
			return -1;
		clk_sleep_seconds(fmin(0.1, until - clk_now_mono()));
	}
	return 0;
}

/* Runs the agent loop in a started environment. */
static int copy_out(const struct episode_spec *s, struct backend_env *env, const char *art_dir,
		    size_t turn, struct record *rec, struct trace *t, struct engi_error *err);

/* The agent ended conversation turn K (1-based) with done and the task has
 * a follow-up for it: the deliverables as they are now go to
 * <art_dir>/@turnK/ for that turn's verifier, and the follow-up is the next
 * observation. Returns 0, or ENGI_EENV when the environment is lost. */
static int close_turn(const struct episode_spec *s, struct backend_env *env, const char *art_dir,
		      struct attempt *a, struct trace *t, int turn, struct engi_error *err)
{
	size_t k = a->followups;
	double e0 = clk_now_mono();
	int rc = copy_out(s, env, art_dir, k + 1, NULL, t, err);
	a->env_s += clk_now_mono() - e0;
	if (rc < 0)
		return rc;
	a->followups++;
	tr(t, json_pack("{s:s,s:i,s:I,s:s,s:s}", "ev", "followup", "turn", turn, "closes",
			(json_int_t)(k + 1), "said", a->message, "message",
			s->task->followups[k].message));
	return 0;
}

static void agent_loop(const struct episode_spec *s, struct backend_env *env, struct trace *t,
		       struct attempt *a, double t0, const char *art_dir)
{
	const struct task *task = s->task;
	const struct agent_desc *ad;
	struct engi_error e;
	engi_error_init(&e);
	ad = agent_lookup(s->model->agent, &e);
	struct agent *ag = NULL;
	const char *colon = strchr(s->model->agent, ':');
	struct agent_ctx ctx = {.task = task,
				.variant = colon ? colon + 1 : NULL,
				.cond = &s->cond->set,
				.provider = s->model->provider,
				.trace = agent_trace_cb,
				.trace_arg = t,
				.trial = s->cell->trial,
				.replay_load = s->replay_load,
				.govern = s->govern ? agent_govern_cb : NULL,
				.govern_arg = (void *)s,
				.deadline = task->wall_s > 0 ? t0 + task->wall_s : 0};
	int src = ad ? agent_start(ad, &ctx, &ag, &e) : ENGI_ENOTFOUND;
	if (src < 0) {
		agent_failed(a, src, 1, e.msg);
		tr(t, json_pack("{s:s,s:s,s:s}", "ev", "agent_error", "message", e.msg, "outcome",
				outcome_name(a->outcome)));
		return;
	}
	struct observation obs = {.turn = 0, .output = "", .exit_code = 0};
	char *obs_buf = NULL, *screen = NULL;
	int gui = task->interface == IFACE_GUI && (env->desc->caps & BACKEND_CAP_SCREEN);
	double scale = screen_scale(s);
	if (gui && take_screen(env, scale, 0, t, &screen) == ENGI_EENV) {
		env_lost(a, "the environment failed taking the first screenshot");
		agent_stop(&ag);
		return;
	}
	obs.png_b64 = screen;
	struct cancel_ctx cc = {s->should_abort};
	struct turn_results res = {.n = 0};
	a->outcome = OUTCOME_TURN_LIMIT;
	for (int turn = 1; turn <= task->turn_limit; turn++) {
		if (s->should_abort && s->should_abort()) {
			a->interrupted = 1;
			break;
		}
		double remaining = task->wall_s - (clk_now_mono() - t0);
		if (remaining <= 0 || (task->env_s > 0 && a->env_s >= task->env_s)) {
			a->outcome = OUTCOME_TIME_LIMIT;
			break;
		}
		struct agent_turn at;
		if (s->pause_env && backend_pause(env, 1, &e) < 0) {
			env_lost(a, e.msg);
			break;
		}
		double m0 = clk_now_mono();
		engi_error_init(&e);
		int rc = agent_next(ag, &obs, &at, &e);
		obs.followup = NULL;
		a->model_s += clk_now_mono() - m0;
		struct engi_error pe;
		engi_error_init(&pe);
		if (s->pause_env && backend_pause(env, 0, &pe) < 0) {
			env_lost(a, pe.msg);
			break;
		}
		if (rc == ENGI_ETIMEOUT && task->wall_s - (clk_now_mono() - t0) < 0.1) {
			/* the model was still answering when the wall time ran out */
			a->outcome = OUTCOME_TIME_LIMIT;
			set_msg(a, "%s", e.msg);
			tr(t, json_pack("{s:s,s:i,s:s,s:s}", "ev", "agent_error", "turn", turn,
					"message", e.msg, "outcome", outcome_name(a->outcome)));
			break;
		} else if (rc < 0) {
			agent_failed(a, rc, 0, e.msg);
			tr(t, json_pack("{s:s,s:i,s:s,s:s}", "ev", "agent_error", "turn", turn,
					"message", e.msg, "outcome", outcome_name(a->outcome)));
			break;
		}
		a->turns = turn;
		a->tokens_in += at.tokens_in;
		a->tokens_out += at.tokens_out;
		a->cost_usd += at.cost_usd;
		tr(t, json_pack("{s:s,s:i,s:I,s:I,s:f}", "ev", "turn", "turn", turn, "tokens_in",
				(json_int_t)at.tokens_in, "tokens_out", (json_int_t)at.tokens_out,
				"cost_usd", at.cost_usd));
		int ended = 0;
		results_clear(&res);
		for (size_t i = 0; i < at.n && !ended; i++) {
			const struct agent_action *act = &at.actions[i];
			char *img = NULL; /* ACT_IMAGE: the image read */
			obs.rejected = NULL;
			obs.out_total = 0;
			switch (act->kind) {
			case ACT_DONE:
			case ACT_FAIL:
				a->outcome =
				    act->kind == ACT_DONE ? OUTCOME_DONE : OUTCOME_FAIL_DECLARED;
				set_msg(a, "%s", act->text ? act->text : "");
				tr(t, json_pack("{s:s,s:i,s:s,s:s?}", "ev", "action", "turn", turn,
						"kind", act->kind == ACT_DONE ? "done" : "fail",
						"text", act->text));
				ended = 1;
				if (act->kind == ACT_DONE && a->followups < task->nfollowups) {
					/* the user writes again: the episode goes on */
					engi_error_init(&e);
					if (close_turn(s, env, art_dir, a, t, turn, &e) < 0) {
						env_lost(a, e.msg);
						break;
					}
					obs.followup = task->followups[a->followups - 1].message;
					a->outcome = OUTCOME_TURN_LIMIT;
					ended = 0; /* done is the reply's last action */
				}
				break;
			case ACT_WRITE: {
				double e0 = clk_now_mono();
				engi_error_init(&e);
				rc = backend_put(env, act->data, act->len, act->path, &e);
				a->env_s += clk_now_mono() - e0;
				tr(t,
				   json_pack("{s:s,s:i,s:s,s:s,s:I,s:s?}", "ev", "action", "turn",
					     turn, "kind", "write", "path", act->path, "bytes",
					     (json_int_t)act->len, "error", rc < 0 ? e.msg : NULL));
				if (rc == ENGI_EENV) {
					env_lost(a, e.msg);
					ended = 1;
				}
				engi_free(obs_buf);
				obs_buf = engi_strdup(rc < 0 ? e.msg : "written");
				obs.output = obs_buf ? obs_buf : "";
				obs.output_len = strlen(obs.output);
				obs.exit_code = rc < 0 ? 1 : 0;
				obs.timed_out = obs.truncated = 0;
				break;
			}
			case ACT_ASK: {
				const char *q = act->text ? act->text : "";
				const char *reply = user_reply(task, a, q);
				a->asked++;
				tr(t, json_pack("{s:s,s:i,s:s,s:s}", "ev", "ask", "turn", turn,
						"question", q, "reply", reply));
				engi_free(obs_buf);
				obs_buf = engi_strdup(reply);
				obs.output = obs_buf ? obs_buf : "";
				obs.output_len = strlen(obs.output);
				obs.exit_code = 0;
				obs.timed_out = obs.truncated = 0;
				break;
			}
			case ACT_IMAGE: {
				char note[512] = "";
				double e0 = clk_now_mono();
				engi_error_init(&e);
				rc = backend_read_image(env, act->text ? act->text : "",
							s->work_root, &img, note, sizeof(note), &e);
				a->env_s += clk_now_mono() - e0;
				tr(t,
				   json_pack("{s:s,s:i,s:s,s:s?,s:s?,s:s?}", "ev", "action", "turn",
					     turn, "kind", "read_image", "path", act->text, "image",
					     rc < 0 ? NULL : note, "error", rc < 0 ? e.msg : NULL));
				if (rc == ENGI_EENV) {
					env_lost(a, e.msg);
					ended = 1;
				}
				engi_free(obs_buf);
				obs_buf = engi_strdup(rc < 0 ? e.msg : note);
				obs.output = obs_buf ? obs_buf : "";
				obs.output_len = strlen(obs.output);
				obs.exit_code = rc < 0 ? 1 : 0;
				obs.timed_out = obs.truncated = 0;
				break;
			}
			case ACT_INPUT: {
				double e0 = clk_now_mono();
				engi_error_init(&e);
				rc = backend_input(env, act->text, &e);
				a->env_s += clk_now_mono() - e0;
				tr(t, json_pack("{s:s,s:i,s:s,s:s,s:s?}", "ev", "action", "turn",
						turn, "kind", "input", "event", act->text, "error",
						rc < 0 ? e.msg : NULL));
				if (rc == ENGI_EENV) {
					env_lost(a, e.msg);
					ended = 1;
				}
				engi_free(obs_buf);
				obs_buf = engi_strdup(rc < 0 ? e.msg : "ok");
				obs.output = obs_buf ? obs_buf : "";
				obs.output_len = strlen(obs.output);
				obs.exit_code = rc < 0 ? 1 : 0;
				obs.timed_out = obs.truncated = 0;
				break;
			}
			case ACT_WAIT: {
				double secs = act->seconds > 0 ? act->seconds : 0;
				tr(t, json_pack("{s:s,s:i,s:s,s:f}", "ev", "action", "turn", turn,
						"kind", "wait", "seconds", secs));
				if (wait_within(s, secs, task->wall_s - (clk_now_mono() - t0)) <
				    0) {
					a->interrupted = 1;
					ended = 1;
				}
				engi_free(obs_buf);
				obs_buf = NULL;
				obs.output = "";
				obs.output_len = 0;
				obs.exit_code = 0;
				obs.timed_out = obs.truncated = 0;
				break;
			}
			case ACT_PYTHON:
			case ACT_RUN: {
				int py = act->kind == ACT_PYTHON;
				int rule = episode_policy_match(s->policy, act->text);
				if (rule >= 0) {
					/* refused: not run; the agent is told the rule's message */
					const char *why = episode_policy_message(s->policy, rule);
					tr(t,
					   json_pack("{s:s,s:i,s:s,s:s,s:i,s:s,s:s}", "ev",
						     "policy_reject", "turn", turn, "kind",
						     py ? "python" : "run", py ? "code" : "command",
						     act->text, "rule", rule, "pattern",
						     episode_policy_pattern(s->policy, rule),
						     "message", why));
					engi_free(obs_buf);
					obs_buf = NULL;
					obs.output = "";
					obs.output_len = 0;
					obs.exit_code = -2;
					obs.timed_out = obs.truncated = 0;
					obs.rejected = why;
					break;
				}
				char *pycmd = py ? python_command(act->text) : NULL;
				if (py && !pycmd) {
					agent_failed(a, ENGI_ENOMEM, 0, "out of memory");
					ended = 1;
					break;
				}
				const char *command = py ? pycmd : act->text;
				remaining = task->wall_s - (clk_now_mono() - t0);
				if (task->env_s > 0)
					remaining = fmin(remaining, task->env_s - a->env_s);
				struct exec_opts o = {
				    .timeout_s = fmin(s->cmd_timeout_s, fmax(remaining, 0.001)),
				    .out_cap = s->obs_cap,
				    .cancel = cancel_cb,
				    .cancel_ctx = &cc,
				};
				struct exec_result r;
				double e0 = clk_now_mono();
				engi_error_init(&e);
				tr(t, json_pack("{s:s,s:i,s:s,s:s}", "ev", "action", "turn", turn,
						"kind", py ? "python" : "run",
						py ? "code" : "command", act->text));
				watch_command(task, a, act->text, turn);
				rc = backend_exec(env, command, &o, &r, &e);
				engi_free(pycmd);
				a->env_s += clk_now_mono() - e0;
				if (rc < 0) {
					if (rc == ENGI_EENV)
						env_lost(a, e.msg);
					else
						agent_failed(a, rc, 0, e.msg);
					tr(t, json_pack("{s:s,s:i,s:s}", "ev", "exec_error", "turn",
							turn, "message", e.msg));
					ended = 1;
					break;
				}
				int truncated = r.out_total > r.out_len;
				size_t clean_len = 0;
				char *clean = text_utf8_clean(r.out, r.out_len, &clean_len);
				tr(t, json_pack("{s:s,s:i,s:i,s:b,s:I,s:f,s:s%}", "ev",
						"observation", "turn", turn, "exit", r.exit_code,
						"timed_out", r.timed_out, "bytes",
						(json_int_t)r.out_total, "wall_s", r.wall_s,
						"output", clean ? clean : "", clean_len));
				engi_free(obs_buf);
				obs_buf = NULL;
				if (truncated && clean) {
					size_t n = clean_len + 96;
					obs_buf = engi_malloc(n);
					if (obs_buf)
						snprintf(
						    obs_buf, n,
						    "%s\n[output truncated: %llu more bytes]",
						    clean,
						    (unsigned long long)(r.out_total - r.out_len));
					engi_free(clean);
				} else {
					obs_buf = clean;
				}
				obs.output = obs_buf ? obs_buf : "";
				obs.output_len = strlen(obs.output);
				obs.exit_code = r.exit_code;
				obs.timed_out = r.timed_out;
				obs.truncated = truncated;
				obs.out_total = r.out_total;
				int cancelled = r.cancelled;
				backend_exec_result_release(&r);
				if (cancelled) {
					a->interrupted = 1;
					ended = 1;
				} else if (o.timeout_s < s->cmd_timeout_s && obs.timed_out) {
					a->outcome = OUTCOME_TIME_LIMIT;
					ended = 1;
				}
				break;
			}
			}
			if (act->kind != ACT_DONE && act->kind != ACT_FAIL)
				results_keep(&res, &obs, img);
			/* GUI tasks: a turn is answered with the screen after its last action */
			if (gui && !ended && i + 1 == at.n &&
			    take_screen(env, scale, turn, t, &screen) == ENGI_EENV) {
				env_lost(a, "the environment failed taking a screenshot");
				ended = 1;
			}
			obs.png_b64 = gui ? screen : NULL;
		}
		obs.turn = turn;
		obs.results = res.v;
		obs.nresults = res.n;
		if (ended)
			break;
	}
	results_clear(&res);
	engi_free(obs_buf);
	engi_free(screen);
	agent_stop(&ag);
}

static int copy_inputs(const struct episode_spec *s, struct backend_env *env, char (*hashes)[65],
		       struct trace *t, struct engi_error *err)
{
	for (size_t i = 0; i < s->task->ninputs; i++) {
		const struct task_input *in = &s->task->inputs[i];
		char *data;
		size_t len;
		TRY(fs_read_file(in->host, INPUT_FILE_CAP, &data, &len, err));
		engi_sha256_str(data, len, hashes[i]);
		int rc = backend_put(env, data, len, in->env, err);
		engi_free(data);
		if (rc < 0)
			return rc;
		tr(t, json_pack("{s:s,s:s,s:I,s:b,s:s}", "ev", "input", "path", in->env, "bytes",
				(json_int_t)len, "protected", in->protected_, "sha256", hashes[i]));
	}
	return 0;
}

/* The task's setup steps, in order, after its inputs: a launch is left
 * running; a checked run that exits nonzero or times out is the task's
 * setup failing (infrastructure: *failed says so), never the agent's. */
#define SETUP_OUT_KEEP 2048
static int run_setup(const struct episode_spec *s, struct backend_env *env, struct trace *t,
		     char *failed, size_t fcap, struct engi_error *err)
{
	for (size_t i = 0; i < s->task->nsetup; i++) {
		const struct task_setup *st = &s->task->setup[i];
		struct exec_opts o = {.timeout_s = st->launch ? 30.0 : st->timeout_s,
				      .out_cap = SETUP_OUT_KEEP,
				      .detach = st->launch};
		struct exec_result r;
		int rc = backend_exec(env, st->cmd, &o, &r, err);
		if (rc < 0)
			return rc;
		size_t clean_len = 0;
		char *clean = text_utf8_clean(r.out, r.out_len, &clean_len);
		tr(t, json_pack("{s:s,s:I,s:s,s:i,s:b,s:f,s:s%}", "ev", "setup", "step",
				(json_int_t)i, "kind", st->launch ? "launch" : "run", "exit",
				r.exit_code, "timed_out", r.timed_out, "seconds", r.wall_s,
				"output", clean ? clean : "", clean ? clean_len : (size_t)0));
		int bad = (st->check || st->launch) && (r.timed_out || r.exit_code != 0);
		if (bad && r.timed_out)
			snprintf(failed, fcap, "setup step %zu (%s) timed out after %g s", i,
				 st->launch ? "launch" : "run", o.timeout_s);
		else if (bad) {
			/* the output's first line, for the message */
			size_t k = clean ? strcspn(clean, "\n") : 0;
			snprintf(failed, fcap, "setup step %zu (%s) exited %d: %.*s", i,
				 st->launch ? "launch" : "run", r.exit_code,
				 (int)(k < 160 ? k : 160), clean ? clean : "");
		}
		engi_free(clean);
		backend_exec_result_release(&r);
		if (bad)
			return 0;
	}
	return 0;
}

/* Condition setting drawings=files: every drawing of the task goes into
 * the environment at drawings/<file name> before the agent starts. */
static int drawings_as_files(const struct episode_spec *s)
{
	const struct cond_settings *cs = &s->cond->set;
	return (cs->set & COND_SET(COND_DRAWINGS)) && cs->drawings == DRAWINGS_FILES;
}

static int copy_drawings(const struct episode_spec *s, struct backend_env *env, struct trace *t,
			 struct engi_error *err)
{
	const struct task *task = s->task;
	for (size_t i = 0; drawings_as_files(s) && i < task->ndrawings; i++) {
		const char *base = strrchr(task->drawings[i], '/');
		base = base ? base + 1 : task->drawings[i];
		char dest[PATH_MAX];
		snprintf(dest, sizeof(dest), "drawings/%s", base);
		char *data;
		size_t len;
		TRY(fs_read_file(task->drawings[i], INPUT_FILE_CAP, &data, &len, err));
		int rc = backend_put(env, data, len, dest, err);
		engi_free(data);
		if (rc < 0)
			return rc;
		tr(t, json_pack("{s:s,s:s,s:I}", "ev", "drawing", "path", dest, "bytes",
				(json_int_t)len));
	}
	return 0;
}

/* no_file: asks the environment whether the path exists (a dangling link
 * counts as existing). */
static void check_no_file(struct backend_env *env, const struct task_iassert *ia,
			  struct engi_verdict *v)
{
	char *q = text_sh_quote(ia->path);
	size_t n = q ? 2 * strlen(q) + 32 : 0;
	char *cmd = q ? engi_malloc(n) : NULL;
	struct engi_error e;
	engi_error_init(&e);
	struct exec_result r;
	memset(&r, 0, sizeof(r));
	int rc = ENGI_ENOMEM;
	if (cmd) {
		snprintf(cmd, n, "test -e %s || test -h %s", q, q);
		struct exec_opts o = {.timeout_s = CHECK_TIMEOUT_S, .out_cap = 1024};
		rc = backend_exec(env, cmd, &o, &r, &e);
	}
	if (rc < 0)
		engi_verdict_add(v, ia->name, "interaction", ENGI_UNAVAILABLE, ia->required, NAN,
				 NAN, "cannot look for '%s': %s", ia->path,
				 e.msg[0] ? e.msg : "out of memory");
	else if (r.exit_code == 0)
		engi_verdict_add(v, ia->name, "interaction", ENGI_FAIL, ia->required, NAN, NAN,
				 "'%s' exists after the episode", ia->path);
	else if (r.exit_code == 1)
		engi_verdict_add(v, ia->name, "interaction", ENGI_PASS, ia->required, NAN, NAN,
				 "'%s' does not exist", ia->path);
	else
		engi_verdict_add(v, ia->name, "interaction", ENGI_UNAVAILABLE, ia->required, NAN,
				 NAN, "cannot look for '%s': the check exited %d%s", ia->path,
				 r.exit_code, r.timed_out ? " (timed out)" : "");
	if (rc == 0)
		backend_exec_result_release(&r);
	engi_free(cmd);
	engi_free(q);
}

/* The assertions of interaction.assert, stage "interaction". */
static void check_interaction(const struct episode_spec *s, struct backend_env *env,
			      const struct attempt *a, struct engi_verdict *v)
{
	const struct task *task = s->task;
	for (size_t i = 0; i < task->niasserts; i++) {
		const struct task_iassert *ia = &task->iasserts[i];
		switch (ia->check) {
		case ICHECK_ASKED_USER:
			if (a->asked)
				engi_verdict_add(v, ia->name, "interaction", ENGI_PASS,
						 ia->required, a->asked, NAN,
						 "the agent asked the user %d time%s", a->asked,
						 a->asked == 1 ? "" : "s");
			else
				engi_verdict_add(v, ia->name, "interaction", ENGI_FAIL,
						 ia->required, 0, NAN,
						 "the agent never asked the user");
			break;
		case ICHECK_NO_COMMAND:
			if (a->hit_turn[i])
				engi_verdict_add(v, ia->name, "interaction", ENGI_FAIL,
						 ia->required, NAN, NAN,
						 "the command of turn %d matches '%s'",
						 a->hit_turn[i], ia->pattern);
			else
				engi_verdict_add(v, ia->name, "interaction", ENGI_PASS,
						 ia->required, NAN, NAN, "no command matches '%s'",
						 ia->pattern);
			break;
		case ICHECK_NO_FILE:
			check_no_file(env, ia, v);
			break;
		}
	}
}

static void check_protected(const struct episode_spec *s, struct backend_env *env,
			    char (*hashes)[65], const char *scratch, struct engi_verdict *v)
{
	for (size_t i = 0; i < s->task->ninputs; i++) {
		const struct task_input *in = &s->task->inputs[i];
		if (!in->protected_)
			continue;
		char name[ENGI_NAME_MAX];
		task_integrity_name(name, sizeof(name), in->env);
		struct engi_error e;
		engi_error_init(&e);
		char hex[65] = "";
		uint64_t bytes;
		int rc = backend_get(env, in->env, scratch, INPUT_FILE_CAP, &bytes, &e);
		if (rc == 0)
			rc = engi_sha256_file(scratch, hex, &e);
		unlink(scratch);
		if (rc < 0)
			engi_verdict_add(v, name, "integrity", ENGI_FAIL, 1, NAN, NAN,
					 "protected input unreadable after the episode: %s", e.msg);
		else if (strcmp(hex, hashes[i]))
			engi_verdict_add(v, name, "integrity", ENGI_FAIL, 1, NAN, NAN,
					 "protected input was modified");
		else
			engi_verdict_add(v, name, "integrity", ENGI_PASS, 1, NAN, NAN, "unchanged");
	}
}

/*
 * A deliverable that holds a secret (an agent wrote the API key into it) is
 * scrubbed in place once copied out: the results folder never stores a
 * key. The copy is what is judged and kept; its size and sha256 are those
 * of the scrubbed bytes, and its note says so. *scrubbed: 1 when it was.
 */
static int scrub_artifact(const char *path, uint64_t *bytes, int *scrubbed, struct engi_error *err)
{
	*scrubbed = 0;
	if (!secrets_any())
		return 0;
	char *data = NULL;
	size_t len = 0;
	TRY(fs_read_file(path, (size_t)*bytes, &data, &len, err));
	int rc = 0;
	if (secrets_found(data, len)) {
		len = secrets_scrub(data, len);
		rc = fs_write_file_atomic(path, data, len, err);
		if (rc == 0) {
			*bytes = len;
			*scrubbed = 1;
		}
	}
	engi_free(data);
	return rc;
}

/* The deliverables into art_dir and rec's artifacts; turn K > 0: into
 * art_dir/@turnK/, a turn's state that a follow-up closed, traced only. */
static int copy_out(const struct episode_spec *s, struct backend_env *env, const char *art_dir,
		    size_t turn, struct record *rec, struct trace *t, struct engi_error *err)
{
	size_t n = s->task->ndeliverables;
	struct artifact one;
	if (rec) {
		rec->artifacts = engi_calloc(n ? n : 1, sizeof(*rec->artifacts));
		if (!rec->artifacts)
			RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	char base[PATH_MAX];
	if (turn)
		snprintf(base, sizeof(base), "%s/" TASK_TURN_DIR "%zu", art_dir, turn);
	else
		snprintf(base, sizeof(base), "%s", art_dir);
	/* the turn's folder marks it reached, whatever was delivered */
	if (turn)
		TRY(fs_mkdir_p(base, 0755, err));
	for (size_t i = 0; i < n; i++) {
		const struct task_deliverable *d = &s->task->deliverables[i];
		struct artifact *a = rec ? &rec->artifacts[rec->nartifacts++] : &one;
		memset(a, 0, sizeof(*a));
		snprintf(a->path, sizeof(a->path), "%s", d->path);
		char dest[PATH_MAX];
		snprintf(dest, sizeof(dest), "%s/%s", base, d->path);
		struct engi_error e;
		engi_error_init(&e);
		uint64_t bytes = 0;
		int rc = fs_mkdir_parents(dest, 0755, &e);
		if (rc == 0)
			rc = backend_get(env, d->path, dest, d->max_bytes, &bytes, &e);
		int scrubbed = 0;
		if (rc == 0)
			rc = scrub_artifact(dest, &bytes, &scrubbed, &e);
		if (rc == 0)
			rc = engi_sha256_file(dest, a->sha256, &e);
		if (rc < 0) {
			snprintf(a->note, sizeof(a->note), "%s", e.msg);
			unlink(dest);
		} else if (scrubbed) {
			snprintf(a->note, sizeof(a->note),
				 "secrets scrubbed: each replaced with %s", SECRET_MARK);
		}
		a->bytes = rc < 0 ? 0 : bytes;
		if (turn)
			tr(t, json_pack("{s:s,s:s,s:I,s:s,s:s,s:I}", "ev", "artifact", "path",
					a->path, "bytes", (json_int_t)a->bytes, "sha256", a->sha256,
					"note", a->note, "closes", (json_int_t)turn));
		else
			tr(t, json_pack("{s:s,s:s,s:I,s:s,s:s}", "ev", "artifact", "path", a->path,
					"bytes", (json_int_t)a->bytes, "sha256", a->sha256, "note",
					a->note));
		if (rc == ENGI_EENV)
			return rc;
	}
	return 0;
}

/* ---- verifier kinds that judge in an environment ---- */

struct venv {
	struct backend_env *env;
	const struct episode_spec *s;
};

#define VENV_PUT_MAX ((size_t)256 << 20)

static int venv_put(void *ctx, const char *host_path, const char *env_path, struct engi_error *err)
{
	struct venv *ve = ctx;
	char *data = NULL;
	size_t len = 0;
	TRY(fs_read_file(host_path, VENV_PUT_MAX, &data, &len, err));
	int rc = backend_put(ve->env, data, len, env_path, err);
	engi_free(data);
	return rc;
}

static int venv_exec(void *ctx, const char *command, double timeout_s, size_t out_cap, int *status,
		     char **out, size_t *out_len, struct engi_error *err)
{
	struct venv *ve = ctx;
	struct exec_opts o = {.timeout_s = timeout_s, .out_cap = out_cap};
	struct exec_result r;
	memset(&r, 0, sizeof(r));
	TRY(backend_exec(ve->env, command, &o, &r, err));
	*status = r.timed_out || r.cancelled || r.exit_code < 0 ? -1 : r.exit_code;
	*out = r.out;
	*out_len = r.out_len;
	r.out = NULL;
	backend_exec_result_release(&r);
	return 0;
}

int episode_verify_in_parse(const char *name)
{
	static const char *const names[] = {"same", "clean", "both"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, names[i]))
			return VERIFY_IN_SAME + i;
	return -1;
}

int episode_verify_env(const struct task *t, int verify_in)
{
	int venv = engi_verifier_env(t->verifier, t->criteria);
	if (venv == ENGI_VENV_NONE || verify_in == VERIFY_IN_TASK)
		return venv;
	return verify_in == VERIFY_IN_CLEAN ? ENGI_VENV_CLEAN : ENGI_VENV_EPISODE;
}

void episode_verifier_id(const struct task *t, int verify_in, char *buf, size_t n)
{
	engi_verifier_task_id(t->verifier, t->criteria, buf, n);
	int venv = engi_verifier_env(t->verifier, t->criteria);
	if (venv == ENGI_VENV_NONE || verify_in == VERIFY_IN_TASK)
		return;
	static const char *const suffix[] = {"", "+same", "+clean", "+both"};
	size_t l = strlen(buf);
	if (l < n)
		snprintf(buf + l, n - l, "%s", suffix[verify_in]);
}

/* The kind's judging in env: 0 with its assertions in v; 1 when the
 * evaluator failed (infra and why set: never a verdict); ENGI_EENV when the
 * environment did; other negative codes for our own failures. */
static int judge_in_env(const struct episode_spec *s, struct backend_env *env, const char *art_dir,
			struct engi_verdict *v, char *infra, size_t infra_n, char *why,
			size_t why_n, struct engi_error *err)
{
	const struct task *task = s->task;
	struct venv ve = {env, s};
	struct engi_verify_env_ops ops = {.ctx = &ve, .put = venv_put, .exec = venv_exec};
	struct engi_verify_ctx vc = {.artifact_dir = art_dir,
				     .task_dir = task->dir,
				     .file_optional = judge_file_optional(task)};
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_verify_in_env(task->verifier, task->criteria, task->verifier_file, &ops, &vc,
				    v, &e);
	if (rc == 0 || rc == ENGI_ENOMEM || rc == ENGI_EENV) {
		if (rc < 0)
			engi_raise(err, rc, "%s", e.msg);
		return rc;
	}
	snprintf(infra, infra_n, "%s",
		 rc == ENGI_ETIMEOUT ? INFRA_VERIFIER_TIMEOUT : INFRA_VERIFIER_CRASH);
	snprintf(why, why_n, "verifier '%s': %s", task->verifier->name, e.msg);
	return 1;
}

/* A kind that judges in a clean environment: one of the task's image,
 * the saved deliverables put back at their paths. */
static int judge_in_clean_env(const struct episode_spec *s, const struct record *rec,
			      const char *art_dir, struct engi_verdict *v, char *infra,
			      size_t infra_n, char *why, size_t why_n, struct engi_error *err)
{
	const struct task *task = s->task;
	const struct backend_desc *bd = backend_lookup(s->backend, err);
	if (!bd)
		return err ? err->code : ENGI_ENOTFOUND;
	char name[96];
	snprintf(name, sizeof(name), "%s-verify-r%d-p%d", rec->cell, s->rank, (int)getpid());
	struct env_spec es = task_env_spec(task, s->work_root, name, task->id);
	struct backend_env *env = NULL;
	struct engi_error e;
	engi_error_init(&e);
	int rc = backend_start(bd, &es, &env, &e);
	for (size_t i = 0; rc == 0 && i < rec->nartifacts; i++) {
		const struct artifact *a = &rec->artifacts[i];
		if (a->note[0] && strstr(a->note, "not copied"))
			continue;
		char host[PATH_MAX];
		snprintf(host, sizeof(host), "%s/%s", art_dir, a->path);
		struct stat st;
		if (lstat(host, &st) == 0 && S_ISREG(st.st_mode))
			rc = venv_put(&(struct venv){env, s}, host, a->path, &e);
	}
	if (rc == 0)
		rc = judge_in_env(s, env, art_dir, v, infra, infra_n, why, why_n, &e);
	backend_stop(&env);
	if (rc == ENGI_EENV || (rc < 0 && rc != ENGI_ENOMEM)) {
		/* no clean environment to judge in: the verifier failed, not the agent */
		snprintf(infra, infra_n, "%s", INFRA_VERIFIER_CRASH);
		snprintf(why, why_n, "verifier '%s': its clean environment failed: %s",
			 task->verifier->name, e.msg);
		return 1;
	}
	if (rc < 0)
		engi_raise(err, rc, "%s", e.msg);
	return rc;
}

static int declared_zero(const struct task *t, int outcome)
{
	return t->fail_zero && outcome == OUTCOME_FAIL_DECLARED;
}

/* --verify-in both: the clean environment's verdict beside the episode's
 * (v, from its own guest), recorded, never scored: each of its assertions
 * as "clean:NAME", its metrics as "clean:NAME", and "clean_agrees", pass
 * when every assertion the two share has the same state. */
static int second_opinion(const struct episode_spec *s, const struct record *rec,
			  const char *art_dir, struct engi_verdict *v, struct trace *t)
{
	struct engi_verdict c;
	engi_verdict_init(&c);
	char infra[INFRA_REASON_MAX] = "", why[256] = "";
	struct engi_error e;
	engi_error_init(&e);
	int rc =
	    judge_in_clean_env(s, rec, art_dir, &c, infra, sizeof(infra), why, sizeof(why), &e);
	if (rc == ENGI_ENOMEM) {
		engi_verdict_release(&c);
		return rc;
	}
	if (rc != 0) {
		engi_verdict_release(&c);
		tr(t, json_pack("{s:s,s:s,s:s}", "ev", "clean_verdict", "error",
				rc == 1 ? why : e.msg));
		return engi_verdict_add(v, "clean_agrees", "clean", ENGI_UNAVAILABLE, 0, NAN, NAN,
					"no verdict from a clean environment: %.200s",
					rc == 1 ? why : e.msg);
	}
	size_t shared = 0, differ = 0;
	char first[ENGI_NAME_MAX] = "";
	size_t na = v->na;
	for (size_t i = 0; i < c.na && rc == 0; i++) {
		const struct engi_assertion *ca = &c.a[i];
		for (size_t k = 0; k < na; k++)
			if (!strcmp(v->a[k].name, ca->name)) {
				shared++;
				if (v->a[k].state != ca->state && !differ++)
					snprintf(first, sizeof(first), "%s", ca->name);
			}
		char name[ENGI_NAME_MAX];
		snprintf(name, sizeof(name), "clean:%.56s", ca->name);
		rc = engi_verdict_add(v, name, "clean", ca->state, 0, ca->value, ca->expected, "%s",
				      ca->detail);
	}
	for (size_t i = 0; i < c.nm && rc == 0; i++) {
		char name[ENGI_NAME_MAX];
		snprintf(name, sizeof(name), "clean:%.56s", c.m[i].name);
		rc = engi_verdict_metric(v, name, c.m[i].value);
	}
	if (rc == 0 && differ)
		rc = engi_verdict_add(v, "clean_agrees", "clean", ENGI_FAIL, 0, (double)differ, 0,
				      "the clean environment's verdict differs on %zu of %zu "
				      "assertions (first: %s): the episode's environment may have "
				      "fooled the evaluator",
				      differ, shared, first);
	else if (rc == 0)
		rc = engi_verdict_add(v, "clean_agrees", "clean", ENGI_PASS, 0, 0, 0,
				      "the clean environment agrees on all %zu shared assertions",
				      shared);
	engi_verdict_release(&c);
	return rc;
}

/* The task's judges (llm_judge.h) after its verifier: 0 with their
 * assertions in v, 1 when the judging failed (infra and why set: the
 * verifier's assertions are taken out of v again, so that --resume, which
 * judges the record again from its kept assertions, adds them once). The
 * judge's tokens and cost go to the record's own fields, never the agent's. */
static int run_judges(const struct episode_spec *s, struct record *rec, const char *art_dir,
		      struct engi_verdict *v, struct trace *t, char *infra, size_t infra_n,
		      char *why, size_t why_n, struct engi_error *err)
{
	char *final = judge_llm_final_message(t->buf.buf, t->buf.len, rec->run_message);
	if (!final)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	struct llm_judge_usage u = {0};
	struct engi_error e;
	engi_error_init(&e);
	int rc = judge_llm_run(s->judge, s->task, art_dir, final, v, t, &u, infra, infra_n, why,
			       why_n, &e);
	engi_free(final);
	rec->judge_tokens_in += u.tokens_in;
	rec->judge_tokens_out += u.tokens_out;
	rec->judge_cost_usd += u.cost_usd;
	if (rc < 0)
		return engi_raise(err, rc, "judging '%s': %s", s->task->id, e.msg);
	if (rc == 1) {
		tr(t, json_pack("{s:s,s:s,s:s}", "ev", "judge_error", "reason", infra, "message",
				why));
	}
	return rc;
}

/* What the agent said when it ended conversation turn k (the trace's
 * followup event that closes it), a new string; "" when the trace has none.
 * NULL when out of memory. */
static char *turn_said(const struct trace *t, size_t k)
{
	const char *p = t->buf.buf, *end = p ? p + t->buf.len : NULL;
	char *said = NULL;
	while (p && p < end && !said) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
		if (n > 16 && memmem(p, n, "\"followup\"", 10)) {
			json_t *ev = json_loadb(p, n, 0, NULL);
			json_t *c = json_object_get(ev, "closes");
			const char *text = json_string_value(json_object_get(ev, "said"));
			if (json_is_integer(c) && (size_t)json_integer_value(c) == k)
				said = engi_strdup(text ? text : "");
			json_decref(ev);
		}
		p += n + 1;
	}
	return said ? said : engi_strdup("");
}

/* The judges of the turns that follow-ups closed (task.h, struct
 * task_followup): each turn reached, judged on <art_dir>/@turnK/ with what
 * the agent said when it ended that turn, as "turnK:judge:NAME". Returns as
 * judge_llm_run does. */
static int run_turn_judges(const struct episode_spec *s, struct record *rec, const char *art_dir,
			   struct engi_verdict *v, struct trace *t, char *infra, size_t infra_n,
			   char *why, size_t why_n, struct engi_error *err)
{
	const struct task *task = s->task;
	for (size_t k = 1; k <= task->nfollowups; k++) {
		const struct task_followup *f = &task->followups[k - 1];
		char dir[PATH_MAX];
		if (!f->njudges || !judge_turn_dir(art_dir, k, dir, sizeof(dir)))
			continue; /* not reached: turnK:reached says so */
		struct task view = *task;
		view.judges = f->judges;
		view.njudges = f->njudges;
		char *said = turn_said(t, k);
		if (!said)
			RAISE(err, ENGI_ENOMEM, "out of memory");
		struct engi_verdict tv;
		engi_verdict_init(&tv);
		struct llm_judge_usage u = {0};
		struct engi_error e;
		engi_error_init(&e);
		int rc = judge_llm_run(s->judge, &view, dir, said, &tv, t, &u, infra, infra_n, why,
				       why_n, &e);
		engi_free(said);
		rec->judge_tokens_in += u.tokens_in;
		rec->judge_tokens_out += u.tokens_out;
		rec->judge_cost_usd += u.cost_usd;
		if (rc == 0)
			rc = judge_add_turn(v, k, &tv);
		engi_verdict_release(&tv);
		if (rc < 0)
			return engi_raise(err, rc, "judging turn %zu of '%s': %s", k, task->id,
					  rc == ENGI_ENOMEM ? "out of memory" : e.msg);
		if (rc == 1) {
			tr(t, json_pack("{s:s,s:s,s:s,s:I}", "ev", "judge_error", "reason", infra,
					"message", why, "closes", (json_int_t)k));
			return 1;
		}
	}
	return 0;
}

/* The verdict of a run that is over (outcome its own) on the deliverables
 * saved in <out_dir>/artifacts/<cell>/: the task's verifier in its child
 * process (one more try when it fails), scored into v, the events in t and
 * the verdict taken into rec. Infrastructure outcomes are not judged. */
static int judge_run(const struct episode_spec *s, struct record *rec, int outcome,
		     struct engi_verdict *v, struct trace *t, int pre_rc, const char *pre_infra,
		     const char *pre_why, struct engi_error *err)
{
	const struct task *task = s->task;
	char art_dir[PATH_MAX];
	snprintf(art_dir, sizeof(art_dir), "%s/artifacts/%s", s->out_dir, rec->cell);
	int rc = 0;
	/* Infrastructure outcomes are not judged. Everything else is; an episode
	 * that ended in the agent's error keeps its assertions for diagnosis but
	 * is never a success. A declared failure of an on_fail "zero" task is
	 * 0 without its verifier, as its benchmark scores it. */
	if (declared_zero(task, outcome)) {
		episode_verifier_id(task, s->verify_in, rec->verifier, sizeof(rec->verifier));
		rc = engi_verdict_add(v, "declared_failure", "agent", ENGI_FAIL, 1, NAN, NAN,
				      "the agent declared failure: the task scores it 0 "
				      "without running its verifier");
		if (rc < 0)
			return engi_raise(err, rc, "out of memory");
		judge_score(task, outcome, v);
	} else if (!outcome_is_infra(outcome)) {
		double v0 = clk_now_mono();
		char scratch[PATH_MAX];
		snprintf(scratch, sizeof(scratch), "%s/judge-%s", s->work_root, rec->cell);
		struct judge_limits lim = {.wall_s = s->verify_timeout_s,
					   .mem_mb = s->verify_mem_mb,
					   .threads = s->kernel_threads,
					   .scratch = scratch,
					   .should_abort = s->should_abort};
		char infra[INFRA_REASON_MAX], why[256];
		episode_verifier_id(task, s->verify_in, rec->verifier, sizeof(rec->verifier));
		/* a verifier that failed gets one more try on the same deliverables */
		int venv = episode_verify_env(task, s->verify_in);
		size_t na_run = v->na, nm_run = v->nm; /* the run's own assertions */
		for (int vtry = 0; vtry < 2; vtry++) {
			struct engi_error e;
			engi_error_init(&e);
			if (venv == ENGI_VENV_EPISODE && pre_rc >= 0) {
				rc = pre_rc; /* judged in the episode's environment */
				snprintf(infra, sizeof(infra), "%s", pre_infra ? pre_infra : "");
				snprintf(why, sizeof(why), "%s", pre_why ? pre_why : "");
			} else if (venv == ENGI_VENV_EPISODE) {
				/* its environment is gone (a resume's re-judging) */
				rc = 1;
				snprintf(infra, sizeof(infra), "%s", INFRA_VERIFIER_CRASH);
				snprintf(why, sizeof(why),
					 "verifier '%s' judges in the episode's environment, which "
					 "is gone: the cell must run again",
					 task->verifier->name);
			} else if (venv == ENGI_VENV_CLEAN) {
				rc = judge_in_clean_env(s, rec, art_dir, v, infra, sizeof(infra),
							why, sizeof(why), &e);
			} else {
				rc = judge_deliverables(task, art_dir, &lim, v, infra,
							sizeof(infra), why, sizeof(why), &e);
			}
			if (rc < 0)
				engi_raise(err, rc, "verifying '%s': %s", task->id, e.msg);
			if (rc != 1)
				break;
			tr(t, json_pack("{s:s,s:s,s:s,s:i}", "ev", "verifier_error", "reason",
					infra, "message", why, "try", vtry + 1));
			if (venv == ENGI_VENV_EPISODE)
				break; /* no second go in an environment that is gone */
		}
		if (rc == 0 && task->nfollowups)
			rc = judge_turns(task, art_dir, &lim, v, infra, sizeof(infra), why,
					 sizeof(why), err);
		fs_rm_rf(scratch, NULL);
		if (rc == 0 && venv == ENGI_VENV_EPISODE && s->verify_in == VERIFY_IN_BOTH &&
		    pre_rc == 0)
			rc = second_opinion(s, rec, art_dir, v, t);
		size_t turn_judges = 0;
		for (size_t k = 0; k < task->nfollowups; k++)
			turn_judges += task->followups[k].njudges;
		if (rc == 0 && (task->njudges || turn_judges)) {
			if (task->njudges)
				rc = run_judges(s, rec, art_dir, v, t, infra, sizeof(infra), why,
						sizeof(why), err);
			if (rc == 0 && turn_judges)
				rc = run_turn_judges(s, rec, art_dir, v, t, infra, sizeof(infra),
						     why, sizeof(why), err);
			if (rc == 1) {
				v->na = na_run;
				v->nm = nm_run;
			}
		}
		if (rc < 0)
			return rc;
		if (rc == 1) {
			/* the verifier failed, not the agent: not scored. The run and
			 * its deliverables stand (the integrity and interaction
			 * assertions kept), and --resume judges them again. */
			rec->outcome = OUTCOME_INFRA_ERROR;
			snprintf(rec->infra, sizeof(rec->infra), "%s", infra);
			snprintf(rec->message, sizeof(rec->message), "%s", why);
			rc = 0;
		} else {
			/* the criteria on the whole verdict, the episode's own
			 * assertions in it */
			if ((rc = judge_resolve(task, v, err)) < 0)
				return rc;
			judge_score(task, outcome, v);
		}
		rec->verify_s = clk_now_mono() - v0;
	}
	json_t *asserts = json_array();
	for (size_t i = 0; i < v->na; i++)
		json_array_append_new(asserts, json_pack("{s:s,s:s,s:s,s:b}", "name", v->a[i].name,
							 "stage", v->a[i].stage, "state",
							 engi_astate_name(v->a[i].state),
							 "required", v->a[i].required));
	tr(t, json_pack("{s:s,s:b,s:b,s:f,s:f,s:o,s:i}", "ev", "verdict", "success", v->success,
			"feasible", v->feasible, "score", v->score, "quality", v->quality,
			"assertions", asserts, "rank", s->rank));
	return record_take_verdict(rec, v);
}

/* A verification item: the trace reopened, the run judged, the trace
 * closed again (one zstd frame, as a whole episode writes it). */
int episode_verify(const struct episode_spec *s, struct record *rec, struct engi_error *err)
{
	if (s->kernel_threads > 0)
		engi_threads_set(s->kernel_threads);
	size_t cap = s->trace_cap ? s->trace_cap : TRACE_CAP_DEFAULT;
	struct trace t;
	trace_init(&t, cap);
	char *text = NULL;
	size_t len = 0;
	int rc = 0;
	if (rec->trace && rec->trace_len)
		rc = trace_decompress(rec->trace, rec->trace_len, cap, &text, &len, err);
	if (rc == 0 && len && engi_dynbuf_add(&t.buf, text, len) < 0)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory reopening the trace of %s",
				rec->cell);
	engi_free(text);
	struct engi_verdict v;
	engi_verdict_init(&v);
	/* the run's integrity and interaction assertions stay */
	if (rc == 0)
		rc = judge_verdict_from_record(rec, &v, err);
	if (rc == 0)
		rc = judge_run(s, rec, rec->outcome, &v, &t, -1, NULL, NULL, err);
	engi_verdict_release(&v);
	if (rc == 0) {
		unsigned char *z = NULL;
		size_t zlen = 0, raw = 0;
		rc = trace_finish(&t, &z, &zlen, &raw, err);
		if (rc == 0) {
			engi_free(rec->trace);
			rec->trace = z;
			rec->trace_len = zlen;
			rec->trace_raw_len = raw;
		}
	}
	trace_release(&t);
	return rc;
}

int episode_run(const struct episode_spec *s, struct record *rec, struct engi_error *err)
{
	const struct task *task = s->task;
	record_init(rec);
	snprintf(rec->cell, sizeof(rec->cell), "%s", s->cell->id);
	snprintf(rec->task_id, sizeof(rec->task_id), "%s", task->id);
	snprintf(rec->model, sizeof(rec->model), "%s", s->model->name);
	snprintf(rec->condition, sizeof(rec->condition), "%s", s->cond->name);
	rec->trial = s->cell->trial;
	rec->rank = s->rank;
	snprintf(rec->host, sizeof(rec->host), "%s", s->host);
	snprintf(rec->run_id, sizeof(rec->run_id), "%s", s->run_id);
	snprintf(rec->version, sizeof(rec->version), "%s", ENGISWEEP_VERSION);
	rec->started_at = clk_now_wall();

	if (s->kernel_threads > 0)
		engi_threads_set(s->kernel_threads);
	const struct backend_desc *bd = backend_lookup(s->backend, err);
	if (!bd)
		return err ? err->code : ENGI_ENOTFOUND;

	char art_dir[PATH_MAX];
	snprintf(art_dir, sizeof(art_dir), "%s/artifacts/%s", s->out_dir, rec->cell);

	struct trace t;
	trace_init(&t, s->trace_cap);
	char(*hashes)[65] = engi_calloc(task->ninputs ? task->ninputs : 1, sizeof(*hashes));
	if (!hashes) {
		trace_release(&t);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	double t0 = clk_now_mono();
	struct attempt a;
	int rc = 0;
	struct engi_verdict v;
	engi_verdict_init(&v);
	/* a kind that judges in the episode's environment: its outcome */
	int pre_rc = -1;
	char pre_infra[INFRA_REASON_MAX] = "", pre_why[256] = "";
	double pre_verify_s = 0;
	int venv = episode_verify_env(task, s->verify_in);
	for (int attempt = 1; attempt <= 1 + s->max_retries; attempt++) {
		pre_rc = -1;
		if (attempt > 1 && s->should_abort && s->should_abort()) {
			rc = ENGI_EINTERRUPTED; /* the retry waits for the next run */
			break;
		}
		memset(&a, 0, sizeof(a));
		rec->attempts = attempt;
		double ta = clk_now_mono();
		tr(&t, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:s,s:f}", "ev", "episode", "cell",
				 rec->cell, "task", task->id, "model", s->model->name, "condition",
				 s->cond->name, "trial", rec->trial, "attempt", attempt, "backend",
				 bd->name, "started_at", clk_now_wall()));
		struct engi_error e;
		engi_error_init(&e);
		if ((rc = fs_rm_rf(art_dir, &e)) < 0 || (rc = fs_mkdir_p(art_dir, 0755, &e)) < 0) {
			engi_raise(err, rc, "%s", e.msg);
			break;
		}
		char name[96];
		snprintf(name, sizeof(name), "%s-a%d-r%d-p%d", rec->cell, attempt, s->rank,
			 (int)getpid());
		char key[2 * 160];
		snprintf(key, sizeof(key), "%s/%s", task->id, s->model->name);
		struct env_spec es = task_env_spec(task, s->work_root, name, key);
		struct backend_env *env = NULL;
		double e0 = clk_now_mono();
		int brc = backend_start(bd, &es, &env, &e);
		if (brc == 0)
			tr(&t, json_pack("{s:s,s:f}", "ev", "env_started", "seconds",
					 clk_now_mono() - e0));
		if (brc == 0)
			brc = copy_inputs(s, env, hashes, &t, &e);
		if (brc == 0)
			brc = copy_drawings(s, env, &t, &e);
		char setup_failed[256] = "";
		if (brc == 0)
			brc = run_setup(s, env, &t, setup_failed, sizeof(setup_failed), &e);
		a.env_s += clk_now_mono() - e0;
		if (brc < 0) {
			env_lost(&a, e.msg);
			tr(&t, json_pack("{s:s,s:s}", "ev", "env_error", "message", e.msg));
		} else if (setup_failed[0]) {
			a.outcome = OUTCOME_INFRA_ERROR;
			snprintf(a.infra, sizeof(a.infra), "%s", INFRA_SETUP_FAILED);
			set_msg(&a, "%s", setup_failed);
		} else {
			agent_loop(s, env, &t, &a, ta, art_dir);
		}
		char *evs = env ? backend_events(env) : NULL;
		if (evs) {
			tr(&t, json_pack("{s:s,s:o?}", "ev", "env_events", "events",
					 json_loads(evs, 0, NULL)));
			engi_free(evs);
		}
		if (a.interrupted) {
			backend_stop(&env);
			rc = ENGI_EINTERRUPTED;
			break;
		}
		engi_verdict_release(&v);
		engi_verdict_init(&v);
		if (env) {
			engi_error_init(&e);
			e0 = clk_now_mono();
			char scratch[PATH_MAX];
			snprintf(scratch, sizeof(scratch), "%s/%s.check", s->work_root, name);
			check_protected(s, env, hashes, scratch, &v);
			check_interaction(s, env, &a, &v);
			int crc = copy_out(s, env, art_dir, 0, rec, &t, &e);
			a.env_s += clk_now_mono() - e0;
			/* the benchmark's evaluator, after the deliverables are saved */
			if (crc == 0 && venv == ENGI_VENV_EPISODE && !outcome_is_infra(a.outcome) &&
			    !declared_zero(task, a.outcome)) {
				double j0 = clk_now_mono();
				int jrc =
				    judge_in_env(s, env, art_dir, &v, pre_infra, sizeof(pre_infra),
						 pre_why, sizeof(pre_why), &e);
				pre_verify_s = clk_now_mono() - j0;
				if (jrc == ENGI_EENV) {
					crc = ENGI_EENV;
				} else if (jrc < 0) {
					backend_stop(&env);
					rc = engi_raise(err, jrc, "%s", e.msg);
					break;
				} else {
					pre_rc = jrc;
				}
			}
			backend_stop(&env);
			if (crc == ENGI_EENV && a.outcome != OUTCOME_ENV_CRASH) {
				env_lost(&a, e.msg);
			} else if (crc < 0 && crc != ENGI_EENV) {
				rc = engi_raise(err, crc, "%s", e.msg);
				break;
			}
		}
		tr(&t, json_pack("{s:s,s:s,s:i,s:s}", "ev", "end", "outcome",
				 outcome_name(a.outcome), "turns", a.turns, "message", a.message));
		if (!outcome_is_infra(a.outcome) || attempt == 1 + s->max_retries)
			break;
		engi_free(rec->artifacts);
		rec->artifacts = NULL;
		rec->nartifacts = 0;
		double wait = fmin(s->retry_wait_s * pow(2.0, attempt - 1), 300.0);
		tr(&t, json_pack("{s:s,s:i,s:s,s:f}", "ev", "retry", "after_attempt", attempt,
				 "reason", a.infra, "wait_s", wait));
		/* backoff: an endpoint or host that just failed gets time to recover */
		for (double until = clk_now_mono() + wait; clk_now_mono() < until;) {
			if (s->should_abort && s->should_abort())
				break;
			clk_sleep_seconds(fmin(0.1, until - clk_now_mono()));
		}
	}
	engi_free(hashes);
	if (rc < 0) {
		engi_verdict_release(&v);
		trace_release(&t);
		fs_rm_rf(art_dir, NULL);
		record_release(rec);
		return rc;
	}

	rec->outcome = a.outcome;
	rec->turns = a.turns;
	rec->tokens_in = a.tokens_in;
	rec->tokens_out = a.tokens_out;
	rec->cost_usd = a.cost_usd;
	rec->env_s = a.env_s;
	rec->model_s = a.model_s;
	snprintf(rec->message, sizeof(rec->message), "%s", a.message);
	snprintf(rec->infra, sizeof(rec->infra), "%s", outcome_is_infra(a.outcome) ? a.infra : "");
	/* the run's own end, as its trace's last "end" says, kept whatever the
	 * verdict makes of outcome and message */
	rec->run_outcome = a.outcome;
	snprintf(rec->run_message, sizeof(rec->run_message), "%s", a.message);

	if (s->defer_verify && !outcome_is_infra(a.outcome) && venv != ENGI_VENV_EPISODE) {
		/* the verdict is its own work item: the run's assertions kept */
		rc = record_take_verdict(rec, &v);
		engi_verdict_release(&v);
		if (rc == 0) {
			rec->wall_s = clk_now_mono() - t0;
			struct engi_error e;
			engi_error_init(&e);
			rc =
			    trace_finish(&t, &rec->trace, &rec->trace_len, &rec->trace_raw_len, &e);
			if (rc < 0)
				engi_raise(err, rc, "%s", e.msg);
		}
		trace_release(&t);
		if (rc < 0)
			record_release(rec);
		return rc < 0 ? rc : 1;
	}
	rc = judge_run(s, rec, a.outcome, &v, &t, pre_rc, pre_infra, pre_why, err);
	if (pre_rc >= 0)
		rec->verify_s += pre_verify_s;
	engi_verdict_release(&v);
	if (rc < 0) {
		trace_release(&t);
		record_release(rec);
		return rc;
	}
	if (rc == 0) {
		rec->wall_s = clk_now_mono() - t0;
		struct engi_error e;
		engi_error_init(&e);
		rc = trace_finish(&t, &rec->trace, &rec->trace_len, &rec->trace_raw_len, &e);
		if (rc < 0)
			engi_raise(err, rc, "%s", e.msg);
	}
	trace_release(&t);
	if (rc < 0)
		record_release(rec);
	return rc;
}
