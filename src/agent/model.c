/*
 * The `model` agent: a language model behind an OpenAI-compatible or
 * Anthropic API, acting through native tool calls (or the fenced-block text
 * fallback). One agent_next is one request: the observation of the last turn
 * goes back as the results of its tool calls, each call with its own output
 * and exit code (native: one tool result per call; text: one user message
 * listing each block's result), and the reply's tool calls become the
 * actions of this turn (in order, one turn). A reply that cannot be used
 * (malformed, truncated, over the cap, refused as a bad request) is an error
 * turn with no actions, recorded in the trace; three in a row end the
 * episode as agent_error. The endpoint failing past its retries
 * (ENGI_EUNAVAIL), refusing the key (ENGI_EAUTH) or the episode's wall time
 * running out during a request (ENGI_ETIMEOUT) ends the turn with that
 * code at once: the runner records infrastructure or time_limit, not the
 * model's failure. An unset or empty api_key_env variable is ENGI_EAUTH at
 * the start.
 *
 * With image_tool, `read_image {path}` is the action ACT_IMAGE: the runner
 * reads the PNG or JPEG from the environment and its result carries the
 * image (native: in the tool result, as each API allows; text: with the
 * next user message).
 *
 * Tasks with a simulated user (interaction.user) get the tool `ask_user`
 * (```ask_user in the text fallback); a question ends the turn: calls after
 * it in the same reply are not run, and the user's reply answers it. The
 * condition setting `drawings` says how the task's drawings reach the model:
 * `message` (PNGs as images of the instruction), `files` (the runner copied
 * them to drawings/ in the environment; the instruction lists them) or `none`;
 * the settings `history_turns`, `tools` and `image_tool` of the condition
 * override the model entry's (an ablation of one model over conditions).
 *
 * The API key is read from the variable named by api_key_env when the agent
 * starts and handed to the provider for its HTTP header only; it joins the
 * registry of secrets (secrets.h), so a key the endpoint quotes back or an
 * agent writes is scrubbed from the trace, the record and the deliverables.
 *
 * The `replay:RESULTS.h5` agent shares this loop but takes its replies from
 * the trace of an earlier episode of the same task (the last attempt in that
 * trace): the recorded reply bodies are parsed again in order by the
 * parser of the provider that the trace's model_start names (a name not in
 * the registry is refused), recorded errors are error turns again, and no
 * request is sent. Tokens and cost are zero: nothing is bought.
 */
#include "agent.h"

#include "engi/alloc.h"
#include "base64.h"
#include "engi/dynbuf.h"
#include "ew_xml.h"
#include "fsutil.h"
#include "matrix.h"
#include "provider.h"
#include "secrets.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_MAX_ERROR_TURNS 3
#define MODEL_PROMPT_CAP      ((size_t)1 << 20)
#define MODEL_DRAWING_CAP     ((size_t)8 << 20)
/* engiworld observations: each stream of a command shown up to this many
 * characters */
#define EW_STREAM_CHARS 8192

struct pending {
	char *id;
	char *name;
	char *answer; /* answered by the agent itself; NULL: the observation */
};

struct model_agent {
	struct provider_config cfg;
	int have_cfg;
	char *api_key;
	struct pconv conv;
	struct preply reply;
	struct pending pend[AGENT_MAX_ACTIONS];
	size_t npend;
	char *nudge;		       /* user text to send before the next request */
	char *args[AGENT_MAX_ACTIONS]; /* strings the actions point into */
	int error_turns;
	int turn;
	const struct agent_ctx *ctx;
	void (*trace)(void *, const char *);
	void *trace_arg;
	/* engiworld: the actions of the last reply (the turn's actions point
	 * into it) and what the next observation must say */
	struct ewxml_reply ew;
	char *parse_error; /* why the last reply was discarded, or NULL */
	/* replay */
	int replay;
	json_t *replies; /* array of recorded model_reply events */
	size_t next_reply;
};

static const char ask_native[] =
    " `ask_user` puts a question to the person who gave you the task and returns their "
    "answer; ask when a requirement is missing or ambiguous.";

static const char ask_text[] =
    "```ask_user\n<a question for the person who gave you the task>\n```\n";

static const char system_native[] =
    "You are an engineer working in a computer environment to complete a task. "
    "Act only through the tools: `bash` runs a shell command in your working folder "
    "and returns its output and exit code; `computer` acts on a graphical desktop when "
    "there is one. Files you are asked to deliver must be in the working folder. "
    "When the task is complete, call `done` with a short summary; if you cannot complete "
    "it, call `fail` with the reason. Several tool calls in one reply run in order.";

static const char system_text[] =
    "You are an engineer working in a computer environment to complete a task. "
    "Act by writing fenced blocks, one per action, run in order:\n"
    "```bash\n<a shell command, run in your working folder>\n```\n"
    "```done\n<a short summary, when the task is complete>\n```\n"
    "```fail\n<the reason, when you cannot complete it>\n```\n"
    "After your reply you receive the output and exit code of the commands. Files you are "
    "asked to deliver must be in the working folder.";

static const char system_engiworld[] =
    "You are an engineer completing a task in a computer environment through its terminal. "
    "Every reply of yours is one XML document and nothing else (no Markdown, no text before "
    "or after it, no tool calls), shaped like this:\n"
    "<response>\n"
    "  <reflection><![CDATA[what you have seen so far and why you take the next "
    "actions]]></reflection>\n"
    "  <action type=\"bash\"><![CDATA[ls -l]]></action>\n"
    "</response>\n"
    "A <response> holds exactly one non-empty <reflection> and one or more <action> elements. "
    "The action types:\n"
    "- <action type=\"bash\"><![CDATA[script]]></action> runs a shell script in your working "
    "folder; you get its output (stderr merged into it) and its return code. Each runs in a "
    "fresh shell: the current folder and variables do not carry over, files do.\n"
    "- <action type=\"python\"><![CDATA[code]]></action> runs Python 3 code in your working "
    "folder, in a fresh interpreter each time.\n"
    "- <action type=\"readimg\" path=\"PATH\"/> shows you a PNG or JPEG image file of the "
    "environment with the next observation.\n"
    "- <action type=\"wait\" seconds=\"N\"/> lets N seconds pass (0 to 1800, default 120), "
    "for work running in the background.\n"
    "- <action type=\"done\"/> declares the task complete; <action type=\"fail\"/> declares "
    "that you cannot complete it.\n"
    "The bash and python actions of a reply run in their order, then its readimg actions. A "
    "wait, done or fail action must be the only action of its reply. Put scripts and code "
    "in CDATA sections. A command that runs past its time limit is killed. Files you are "
    "asked to deliver must be in the working folder. A reply that is not such a document runs "
    "nothing and still "
    "counts as a turn; the next message says what was wrong with it.\n"
    "\n# Task\n";

static void emit(struct model_agent *m, json_t *ev)
{
	if (!ev)
		return;
	if (m->trace) {
		char *s = json_dumps(ev, JSON_COMPACT);
		if (s)
			m->trace(m->trace_arg, s);
		free(s);
	}
	json_decref(ev);
}

static void pending_clear(struct model_agent *m)
{
	for (size_t i = 0; i < m->npend; i++) {
		engi_free(m->pend[i].id);
		engi_free(m->pend[i].name);
		engi_free(m->pend[i].answer);
	}
	m->npend = 0;
}

static void args_clear(struct model_agent *m)
{
	for (size_t i = 0; i < AGENT_MAX_ACTIONS; i++) {
		engi_free(m->args[i]);
		m->args[i] = NULL;
	}
}

static int attach_drawings(struct model_agent *m, const struct agent_ctx *ctx,
			   struct engi_error *err);

/* Condition setting drawings: message (the default), files or none. */
static int drawings_mode(const struct agent_ctx *ctx)
{
	const struct cond_settings *cs = ctx->cond;
	return cs && (cs->set & COND_SET(COND_DRAWINGS)) ? cs->drawings : DRAWINGS_MESSAGE;
}

/* The system prompt for the tool mode, with ask_user where the task has a
 * simulated user. */
static int set_system(struct model_agent *m, const char *instruction)
{
	int text = m->cfg.tool_mode == TOOLS_TEXT;
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, MODEL_PROMPT_CAP);
	if (m->cfg.tool_mode == TOOLS_ENGIWORLD) {
		/* the format, then the instruction: no tools, no fences */
		int rc = engi_dynbuf_printf(&b, "%s<task_instruction>\n%s</task_instruction>\n",
					    system_engiworld, instruction);
		if (rc == 0)
			rc = pconv_set_system(&m->conv, b.buf);
		engi_dynbuf_release(&b);
		return rc;
	}
	int rc = engi_dynbuf_addstr(&b, text ? system_text : system_native);
	if (rc == 0 && m->cfg.ask_tool)
		rc = engi_dynbuf_addstr(&b, text ? "\nTo ask the person who gave you the task a "
						   "question, and get their answer:\n"
						 : ask_native);
	if (rc == 0 && m->cfg.ask_tool && text)
		rc = engi_dynbuf_addstr(&b, ask_text);
	if (rc == 0 && m->cfg.image_tool)
		rc = engi_dynbuf_addstr(&b,
					text ? "\nTo look at a PNG or JPEG image file:\n"
					       "```read_image\n<its path>\n```\n"
					     : " `read_image` shows you a PNG or JPEG image file "
					       "of the environment.");
	if (rc == 0)
		rc = pconv_set_system(&m->conv, b.buf);
	engi_dynbuf_release(&b);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

/* The cell's condition overrides these settings of the model's entry: an
 * ablation of history length, tool mode or the image tool runs one model
 * under several conditions. */
static void apply_condition(struct model_agent *m, const struct cond_settings *cs)
{
	static const int tool_modes[] = {
	    [COND_TOOLS_NATIVE] = TOOLS_NATIVE,
	    [COND_TOOLS_TEXT] = TOOLS_TEXT,
	    [COND_TOOLS_ENGIWORLD] = TOOLS_ENGIWORLD,
	};
	if (!cs)
		return;
	if (cs->set & COND_SET(COND_HISTORY_TURNS))
		m->cfg.history_turns = cs->history_turns;
	if ((cs->set & COND_SET(COND_TOOLS)) && cs->tools >= 0 &&
	    (size_t)cs->tools < sizeof(tool_modes) / sizeof(*tool_modes))
		m->cfg.tool_mode = tool_modes[cs->tools];
	if (cs->set & COND_SET(COND_IMAGE_TOOL))
		m->cfg.image_tool = cs->image_tool;
}

static const char ew_first[] =
    "This is turn 1 of the task. There is currently no new terminal output.";

static int model_start(struct agent *a, const struct agent_ctx *ctx, struct engi_error *err)
{
	struct model_agent *m = a->priv;
	m->ctx = ctx;
	m->trace = ctx->trace;
	m->trace_arg = ctx->trace_arg;
	pconv_init(&m->conv);
	if (!ctx->provider)
		RAISE(err, ENGI_EINVALID,
		      "agent 'model' needs a models.json entry with a provider");
	TRY(provider_config_copy(&m->cfg, ctx->provider, err));
	m->have_cfg = 1;
	apply_condition(m, ctx->cond);
	if (m->cfg.api_key_env[0]) {
		const char *k = getenv(m->cfg.api_key_env);
		if (!k || !k[0])
			RAISE(err, ENGI_EAUTH,
			      "model '%s': environment variable '%s' (api_key_env) is not set",
			      m->cfg.name, m->cfg.api_key_env);
		if (!(m->api_key = engi_strdup(k)) || secrets_add_env(m->cfg.api_key_env) < 0)
			RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	const struct task *t = ctx->task;
	m->cfg.ask_tool = t->nreplies > 0;
	int dmode = drawings_mode(ctx);
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, MODEL_PROMPT_CAP);
	int rc = engi_dynbuf_printf(&b, "Task (%s, interface %s):\n%s\n", t->id,
				    task_interface_name(t->interface), t->instruction);
	if (rc == 0 && t->ninputs) {
		rc = engi_dynbuf_addstr(&b, "\nFiles given to you in the working folder:\n");
		for (size_t i = 0; rc == 0 && i < t->ninputs; i++)
			rc = engi_dynbuf_printf(&b, "- %s%s\n", t->inputs[i].env,
						t->inputs[i].protected_ ? " (do not modify)" : "");
	}
	if (rc == 0 && dmode == DRAWINGS_FILES && t->ndrawings) {
		rc = engi_dynbuf_addstr(&b, "\nDrawings given to you in the working folder:\n");
		for (size_t i = 0; rc == 0 && i < t->ndrawings; i++)
			rc = engi_dynbuf_printf(&b, "- drawings/%s\n", base_name(t->drawings[i]));
	}
	if (rc == 0 && t->ndeliverables) {
		rc = engi_dynbuf_addstr(&b, "\nDeliver:\n");
		for (size_t i = 0; rc == 0 && i < t->ndeliverables; i++)
			rc = engi_dynbuf_printf(&b, "- %s\n", t->deliverables[i].path);
	}
	if (rc == 0)
		rc = set_system(m, b.buf);
	/* engiworld: the instruction is in the system prompt; the first user
	 * message is the first turn's observation */
	if (rc == 0)
		rc = pconv_user(&m->conv, m->cfg.tool_mode == TOOLS_ENGIWORLD ? ew_first : b.buf,
				NULL);
	engi_dynbuf_release(&b);
	if (rc < 0)
		RAISE(err, rc, "model '%s': cannot build the instruction", m->cfg.name);
	TRY(attach_drawings(m, ctx, err));
	emit(m, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "ev", "model_start", "model", m->cfg.name,
			  "provider", m->cfg.ops->name, "endpoint_model", m->cfg.model, "tools",
			  provider_tool_mode_name(m->cfg.tool_mode), "history_turns",
			  m->cfg.history_turns));
	return 0;
}

/* The task's PNG drawings as images of the instruction message (condition
 * setting drawings=message, the default); files and none attach nothing. */
static int attach_drawings(struct model_agent *m, const struct agent_ctx *ctx,
			   struct engi_error *err)
{
	const struct task *t = ctx->task;
	int mode = drawings_mode(ctx);
	int rc = 0;
	for (size_t i = 0; rc == 0 && mode == DRAWINGS_MESSAGE && i < t->ndrawings; i++) {
		char *data = NULL;
		size_t len = 0;
		if ((rc = fs_read_file(t->drawings[i], MODEL_DRAWING_CAP, &data, &len, err)) < 0)
			break;
		if (len < 8 || memcmp(data, "\x89PNG\r\n\x1a\n", 8)) {
			engi_free(data);
			continue; /* only PNG drawings can be shown */
		}
		size_t n = base64_encoded_len(len);
		char *b64 = n == SIZE_MAX ? NULL : engi_malloc(n + 1);
		if (b64) {
			base64_encode(data, len, b64);
			rc = pconv_add_image(&m->conv, b64);
		} else {
			rc = ENGI_ENOMEM;
		}
		engi_free(b64);
		engi_free(data);
		if (rc < 0)
			engi_raise(err, rc, "cannot attach drawing '%s'", t->drawings[i]);
	}
	return rc;
}

static char *result_text(const struct action_result *r)
{
	if (r->rejected) {
		size_t n = strlen(r->rejected) + 96;
		char *s = engi_malloc(n);
		if (s)
			snprintf(s, n, "exit code: %d (not run: the command policy rejects it: %s)",
				 r->exit_code, r->rejected);
		return s;
	}
	size_t n = r->output_len + 128;
	char *s = engi_malloc(n);
	if (s)
		snprintf(s, n, "exit code: %d%s\n%.*s", r->exit_code,
			 r->timed_out ? " (the command timed out and was killed)" : "",
			 (int)r->output_len, r->output);
	return s;
}

/* The result of the k-th call that became an action; a runner that reports
 * no results array answers the last action with the observation itself. */
static const struct action_result *result_of(const struct observation *obs, size_t k,
					     size_t nactions, struct action_result *tmp)
{
	if (obs->results)
		return k < obs->nresults ? &obs->results[k] : NULL;
	if (k + 1 != nactions)
		return NULL;
	*tmp = (struct action_result){.output = obs->output,
				      .output_len = obs->output_len,
				      .exit_code = obs->exit_code,
				      .timed_out = obs->timed_out,
				      .truncated = obs->truncated,
				      .rejected = obs->rejected,
				      .out_total = obs->out_total};
	return tmp;
}

static int ew_observation(struct model_agent *m, const struct observation *obs);

/* Answers the tool calls of the previous turn, each with its own result. */
static int answer_previous(struct model_agent *m, const struct observation *obs)
{
	if (m->cfg.tool_mode == TOOLS_ENGIWORLD) {
		int erc = ew_observation(m, obs);
		if (erc == 0 && obs->followup)
			erc = pconv_user(&m->conv, obs->followup, NULL);
		return erc;
	}
	int rc = 0;
	const char *png = obs->png_b64;
	if (!m->npend && png && obs->turn == 0)
		return pconv_add_image(&m->conv, png); /* the first screen joins the instruction */
	int text = m->cfg.tool_mode == TOOLS_TEXT;
	size_t nact = 0, k = 0, last = 0, nimg = 0;
	for (size_t i = 0; i < m->npend; i++)
		if (!m->pend[i].answer)
			nact++, last = i;
	struct engi_dynbuf all; /* text mode: every result in one message */
	engi_dynbuf_init(&all, MODEL_PROMPT_CAP);
	const char *imgs[AGENT_MAX_ACTIONS + 1];
	if (text && m->npend)
		rc = engi_dynbuf_addstr(&all, "Results of your blocks, in order:\n");
	for (size_t i = 0; rc == 0 && i < m->npend; i++) {
		const char *ans = m->pend[i].answer;
		char *own = NULL;
		const char *img = NULL;
		if (!ans) {
			struct action_result tmp;
			const struct action_result *r = result_of(obs, k++, nact, &tmp);
			if (obs->followup && !strcmp(m->pend[i].name, "done"))
				r = NULL, ans = "(noted: the user has written again)";
			else if (!r)
				ans = "(not run: the episode ended before this call)";
			else if (!strcmp(m->pend[i].name, "ask_user"))
				ans = r->output; /* the user's reply */
			else if (!(ans = own = result_text(r)))
				rc = ENGI_ENOMEM;
			img = r ? r->image_b64 : NULL;
			if (!img && i == last)
				img = png; /* GUI: the screen after the turn */
		}
		if (rc < 0)
			break;
		if (img)
			imgs[nimg++] = img;
		if (!text)
			rc = pconv_tool(&m->conv, m->pend[i].id, m->pend[i].name, ans, img);
		else
			rc = engi_dynbuf_printf(&all, "\n[%zu] %s%s:\n%s\n", i + 1, m->pend[i].name,
						img ? " (image attached)" : "", ans);
		engi_free(own);
	}
	if (rc == 0 && text && obs->followup)
		rc = engi_dynbuf_printf(&all, "%s%s", m->npend ? "\n" : "", obs->followup);
	if (rc == 0 && text && (m->npend || obs->followup)) {
		rc = pconv_user(&m->conv, all.buf, nimg ? imgs[0] : NULL);
		for (size_t i = 1; rc == 0 && i < nimg; i++)
			rc = pconv_add_image(&m->conv, imgs[i]);
	}
	engi_dynbuf_release(&all);
	if (rc == 0 && !text && obs->followup)
		rc = pconv_user(&m->conv, obs->followup, NULL);
	if (rc == 0 && m->nudge) {
		rc = pconv_user(&m->conv, m->nudge, NULL);
		engi_free(m->nudge);
		m->nudge = NULL;
	}
	pending_clear(m);
	return rc;
}

static int add_pending(struct model_agent *m, const struct ptool_call *c, const char *answer)
{
	struct pending *p = &m->pend[m->npend];
	p->id = engi_strdup(c->id);
	p->name = engi_strdup(c->name);
	p->answer = answer ? engi_strdup(answer) : NULL;
	m->npend++;
	return !p->id || !p->name || (answer && !p->answer) ? ENGI_ENOMEM : 0;
}

/* One tool call into an action, or an answer the agent gives itself. */
static int map_call(struct model_agent *m, const struct ptool_call *c, struct agent_turn *turn)
{
	json_t *args = json_loads(c->args_json, 0, NULL);
	const char *answer = NULL;
	char msg[256];
	struct agent_action *act = &turn->actions[turn->n];
	const char *key = NULL;
	int kind = -1;
	int asked = 0; /* a question earlier in this reply ends the turn */
	for (size_t i = 0; i < turn->n; i++)
		asked |= turn->actions[i].kind == ACT_ASK;
	if (asked) {
		answer = "(not run: the turn ended at ask_user; call it again after reading the "
			 "reply)";
	} else if (!json_is_object(args)) {
		snprintf(msg, sizeof(msg), "error: the arguments of '%s' are not a JSON object",
			 c->name);
		answer = msg;
	} else if (!strcmp(c->name, "bash")) {
		kind = ACT_RUN, key = "command";
	} else if (!strcmp(c->name, "done")) {
		kind = ACT_DONE, key = "summary";
	} else if (!strcmp(c->name, "fail")) {
		kind = ACT_FAIL, key = "reason";
	} else if (!strcmp(c->name, "computer")) {
		const char *action = json_string_value(json_object_get(args, "action"));
		static const char *const ok[] = {
		    "move", "click",  "double_click", "right_click", "drag", "type",
		    "key",  "scroll", "wait",	      "screenshot",  NULL};
		int valid = 0;
		for (const char *const *o = ok; action && *o; o++)
			valid |= !strcmp(*o, action);
		if (!valid) {
			snprintf(msg, sizeof(msg), "error: computer: unknown action '%.40s'",
				 action ? action : "");
			answer = msg;
		} else {
			kind = ACT_INPUT;
		}
	} else if (!strcmp(c->name, "ask_user") && m->cfg.ask_tool) {
		kind = ACT_ASK, key = "question";
	} else if (!strcmp(c->name, "read_image") && m->cfg.image_tool) {
		kind = ACT_IMAGE, key = "path";
	} else {
		snprintf(msg, sizeof(msg),
			 "error: there is no tool '%.60s' (tools: bash, computer, %s%sdone, fail)",
			 c->name, m->cfg.image_tool ? "read_image, " : "",
			 m->cfg.ask_tool ? "ask_user, " : "");
		answer = msg;
	}
	int rc = 0;
	if (kind >= 0) {
		char *text = NULL;
		if (kind == ACT_INPUT) {
			text = engi_strdup(c->args_json);
		} else {
			json_t *v = json_object_get(args, key);
			if (json_is_string(v))
				text = engi_strdup(json_string_value(v));
			else if (kind != ACT_RUN && kind != ACT_ASK && kind != ACT_IMAGE)
				text = engi_strdup("");
			else {
				snprintf(msg, sizeof(msg), "error: %s needs a string '%s'", c->name,
					 key);
				answer = msg;
				kind = -1;
			}
		}
		if (kind >= 0) {
			if (!text)
				rc = ENGI_ENOMEM;
			else {
				m->args[turn->n] = text;
				act->kind = kind;
				act->text = text;
				turn->n++;
			}
		}
	}
	json_decref(args);
	if (rc == 0)
		rc = add_pending(m, c, answer);
	return rc;
}

/* ---- the engiworld action space ---- */

/* The order a reply's actions run in: bash and python as written, then
 * readimg, then the one wait, done or fail. */
static size_t ew_order(const struct ewxml_reply *r, size_t *idx)
{
	size_t n = 0;
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < r->n; i++) {
			int k = r->v[i].kind;
			int p = k == EWXML_BASH || k == EWXML_PYTHON ? 0
				: k == EWXML_READIMG		     ? 1
								     : 2;
			if (p == pass)
				idx[n++] = i;
		}
	return n;
}

/* One stream of a run, at most EW_STREAM_CHARS characters of it, and the
 * benchmark's marker when more was written (total bytes in all). */
static int ew_stream(struct engi_dynbuf *b, const char *s, size_t n, uint64_t total, int cut)
{
	size_t i = 0, chars = 0;
	while (i < n && chars < EW_STREAM_CHARS) {
		unsigned char ch = (unsigned char)s[i];
		size_t w = ch < 0x80		 ? 1
			   : (ch & 0xE0) == 0xC0 ? 2
			   : (ch & 0xF0) == 0xE0 ? 3
			   : (ch & 0xF8) == 0xF0 ? 4
						 : 1;
		i += w < n - i ? w : n - i;
		chars++;
	}
	int rc = engi_dynbuf_add(b, s, i);
	if (rc == 0 && i && s[i - 1] != '\n')
		rc = engi_dynbuf_addstr(b, "\n");
	if (rc == 0 && (i < n || cut))
		rc = engi_dynbuf_printf(b, "[...truncated, total %llu bytes]\n",
					(unsigned long long)(total > n ? total : n));
	return rc;
}

/* The output of a run as the runner kept it, less the runner's own marker
 * of what it dropped. */
static size_t ew_output_len(const struct action_result *r)
{
	if (!r->truncated)
		return r->output_len;
	static const char mark[] = "\n[output truncated: ";
	size_t n = r->output_len, at = n;
	for (const char *p = r->output; (p = strstr(p, mark)) && (size_t)(p - r->output) < n; p++)
		at = (size_t)(p - r->output);
	return at;
}

static int ew_run(struct engi_dynbuf *b, const struct ewxml_action *a,
		  const struct action_result *r)
{
	const char *kn = ewxml_kind_name(a->kind);
	int rc = a->kind == EWXML_PYTHON ? engi_dynbuf_printf(b, "\n$ [python]\n%s\n", a->body)
					 : engi_dynbuf_printf(b, "\n$ %s\n", a->body);
	int code = r->exit_code;
	if (rc == 0 && r->rejected) {
		code = -2;
		rc = engi_dynbuf_printf(b,
					"[runtime error]\n[%s action rejected by command policy: "
					"%s]\n",
					kn, r->rejected);
	} else if (rc == 0) {
		rc = ew_stream(b, r->output, ew_output_len(r), r->out_total, r->truncated);
		if (rc == 0 && r->timed_out) {
			code = -1;
			rc = engi_dynbuf_printf(
			    b,
			    "[runtime error]\n[the %s action ran past its time limit and was "
			    "killed]\n",
			    kn);
		}
	}
	return rc == 0 ? engi_dynbuf_printf(b, "[returncode=%d]\n", code) : rc;
}

/* The observation of the last turn as the benchmark words it: one user
 * message, the images of readimg (and a GUI's screen) with it. */
static int ew_observation(struct model_agent *m, const struct observation *obs)
{
	if (m->turn == 1 && !m->parse_error) /* the first observation opened the conversation */
		return obs->png_b64 ? pconv_add_image(&m->conv, obs->png_b64) : 0;
	struct engi_dynbuf b, fails;
	engi_dynbuf_init(&b, MODEL_PROMPT_CAP);
	engi_dynbuf_init(&fails, MODEL_PROMPT_CAP);
	int rc = 0;
	if (m->parse_error)
		rc = engi_dynbuf_printf(&b,
					"[parse_error] Your previous response could not be parsed "
					"and was discarded. Reason: %s\nReply with exactly one "
					"<response> XML document in the format the system prompt "
					"gives, and nothing else.\n\n",
					m->parse_error);
	if (rc == 0)
		rc = engi_dynbuf_printf(&b, "This is turn %d of the task.", m->turn);
	size_t idx[EWXML_ACTIONS_MAX], n = ew_order(&m->ew, idx), nruns = 0, nimg = 0;
	const char *imgs[EWXML_ACTIONS_MAX + 1];
	for (size_t k = 0; rc == 0 && k < n; k++) {
		const struct ewxml_action *a = &m->ew.v[idx[k]];
		struct action_result tmp;
		const struct action_result *r = result_of(obs, k, n, &tmp);
		if (!r)
			break;
		if (a->kind == EWXML_BASH || a->kind == EWXML_PYTHON) {
			if (!nruns++)
				rc = engi_dynbuf_addstr(&b, " Your commands ran; their results "
							    "follow.\n");
			if (rc == 0)
				rc = ew_run(&b, a, r);
		} else if (a->kind == EWXML_READIMG && r->image_b64) {
			rc = engi_dynbuf_printf(
			    &b, "%s%s",
			    nimg ? ", " : "\n[readimg] images attached, in order: ", a->path);
			imgs[nimg++] = r->image_b64;
		} else if (a->kind == EWXML_READIMG) {
			rc = engi_dynbuf_printf(&fails, "[readimg] %s [error: %.*s]\n", a->path,
						(int)r->output_len, r->output);
		}
	}
	if (rc == 0 && nimg)
		rc = engi_dynbuf_addstr(&b, "\n");
	if (rc == 0 && fails.len)
		rc = engi_dynbuf_printf(&b, "%s%s", nimg ? "" : "\n", fails.buf);
	if (rc == 0 && !nruns && !nimg && !fails.len)
		rc = engi_dynbuf_addstr(&b, " There is currently no new terminal output.");
	if (rc == 0 && obs->png_b64)
		imgs[nimg++] = obs->png_b64;
	if (rc == 0)
		rc = pconv_user(&m->conv, b.buf, nimg ? imgs[0] : NULL);
	for (size_t i = 1; rc == 0 && i < nimg; i++)
		rc = pconv_add_image(&m->conv, imgs[i]);
	engi_dynbuf_release(&b);
	engi_dynbuf_release(&fails);
	ewxml_release(&m->ew);
	engi_free(m->parse_error);
	m->parse_error = NULL;
	return rc;
}

/* A reply of the engiworld action space into this turn's actions; one
 * that does not parse runs nothing, and the next observation says why. */
static int ew_turn(struct model_agent *m, struct agent_turn *turn, struct engi_error *err)
{
	const char *text = m->reply.text ? m->reply.text : "";
	int rc = pconv_assistant(&m->conv, text, NULL, 0);
	if (rc == 0)
		rc = pconv_set_thinking(&m->conv, m->reply.thinking_json);
	if (rc < 0)
		RAISE(err, rc, "out of memory");
	ewxml_release(&m->ew);
	char why[256];
	rc = ewxml_parse(text, strlen(text), &m->ew, why, sizeof(why));
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "out of memory");
	if (rc < 0) {
		if (!(m->parse_error = engi_strdup(why)))
			RAISE(err, ENGI_ENOMEM, "out of memory");
		emit(m, json_pack("{s:s,s:i,s:s}", "ev", "parse_error", "turn", m->turn, "reason",
				  why));
		return 0;
	}
	size_t idx[EWXML_ACTIONS_MAX], n = ew_order(&m->ew, idx);
	for (size_t k = 0; k < n; k++) {
		const struct ewxml_action *a = &m->ew.v[idx[k]];
		struct agent_action *act = &turn->actions[k];
		static const int kinds[] = {
		    [EWXML_BASH] = ACT_RUN,	 [EWXML_PYTHON] = ACT_PYTHON,
		    [EWXML_READIMG] = ACT_IMAGE, [EWXML_WAIT] = ACT_WAIT,
		    [EWXML_DONE] = ACT_DONE,	 [EWXML_FAIL] = ACT_FAIL};
		act->kind = kinds[a->kind];
		act->text = a->kind == EWXML_READIMG			     ? a->path
			    : a->kind == EWXML_DONE || a->kind == EWXML_FAIL ? m->ew.reflection
									     : a->body;
		act->seconds = a->seconds;
	}
	turn->n = n;
	return 0;
}

/* The next recorded reply into m->reply: 0, its recorded error again, or
 * ENGI_ENOTFOUND when the recording has no more replies. */
static int replay_reply(struct model_agent *m, struct engi_error *err)
{
	json_t *ev = json_array_get(m->replies, m->next_reply);
	if (!ev)
		RAISE(err, ENGI_ENOTFOUND, "replay: the recorded episode has no reply for turn %d",
		      m->turn);
	m->next_reply++;
	m->reply.attempts = 1;
	const char *rec_err = json_string_value(json_object_get(ev, "error"));
	if (rec_err)
		RAISE(err, ENGI_EPARSE, "%s", rec_err);
	const char *raw = json_string_value(json_object_get(ev, "raw"));
	if (!raw)
		RAISE(err, ENGI_EPARSE, "replay: recorded reply %zu has no body", m->next_reply);
	if (!(m->reply.raw = engi_strdup(raw)))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = provider_parse_reply(&m->cfg, raw, strlen(raw), &m->reply, err);
	m->reply.tokens_in = m->reply.tokens_out = 0;
	return rc;
}

static double gate_ask(void *arg, double est_tokens)
{
	const struct agent_ctx *ctx = arg;
	struct govern_msg msg = {.verb = GOVERN_ASK, .est_tokens = est_tokens};
	return ctx->govern(ctx->govern_arg, &msg);
}

static void gate_tell(void *arg, long status, double tokens, double est_tokens)
{
	const struct agent_ctx *ctx = arg;
	struct govern_msg msg = {
	    .verb = GOVERN_TELL, .status = status, .tokens = tokens, .est_tokens = est_tokens};
	ctx->govern(ctx->govern_arg, &msg);
}

static int model_next(struct agent *a, const struct observation *obs, struct agent_turn *turn,
		      struct engi_error *err)
{
	struct model_agent *m = a->priv;
	args_clear(m);
	preply_release(&m->reply);
	m->turn++;
	if (answer_previous(m, obs) < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	struct engi_error e;
	engi_error_init(&e);
	int rc;
	if (m->replay) {
		rc = replay_reply(m, &e);
		if (rc == ENGI_ENOTFOUND)
			RAISE(err, rc, "%s", e.msg);
	} else {
		struct provider_gate gate = {gate_ask, gate_tell, (void *)m->ctx};
		rc = provider_complete(&m->cfg, m->api_key, &m->conv, m->ctx->govern ? &gate : NULL,
				       m->ctx->deadline, &m->reply, &e);
		json_t *req = m->reply.request ? json_loads(m->reply.request, 0, NULL) : NULL;
		emit(m, json_pack("{s:s,s:i,s:o*}", "ev", "model_request", "turn", m->turn, "body",
				  req));
		turn->tokens_in = m->reply.tokens_in;
		turn->tokens_out = m->reply.tokens_out;
		turn->cost_usd = provider_cost_usd(&m->cfg, turn->tokens_in, turn->tokens_out);
	}
	emit(m, json_pack("{s:s,s:i,s:i,s:f,s:s?,s:s?,s:I,s:I,s:f,s:b}", "ev", "model_reply",
			  "turn", m->turn, "attempts", m->reply.attempts, "wait_s", m->reply.wait_s,
			  "raw", m->reply.raw, "error", rc < 0 ? e.msg : NULL, "tokens_in",
			  (json_int_t)turn->tokens_in, "tokens_out", (json_int_t)turn->tokens_out,
			  "cost_usd", turn->cost_usd, "replayed", m->replay));
	/* out of memory, the endpoint or its credentials failing, the wall time
	 * spent: not a reply of the model's, and nothing to gain from asking again */
	if (rc == ENGI_ENOMEM || rc == ENGI_EUNAVAIL || rc == ENGI_EAUTH || rc == ENGI_ETIMEOUT)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		if (++m->error_turns >= MODEL_MAX_ERROR_TURNS)
			RAISE(err, rc, "%d unusable replies in a row; last: %s", m->error_turns,
			      e.msg);
		return 0; /* an error turn: no actions, the same request next turn */
	}
	m->error_turns = 0;
	if (m->cfg.tool_mode == TOOLS_ENGIWORLD)
		return ew_turn(m, turn, err);
	const struct preply *r = &m->reply;
	size_t ncalls = r->ncalls < AGENT_MAX_ACTIONS ? r->ncalls : AGENT_MAX_ACTIONS;
	if (m->cfg.tool_mode == TOOLS_NATIVE)
		rc = pconv_assistant(&m->conv, r->text, r->calls, ncalls);
	else
		rc = pconv_assistant(&m->conv, r->text, NULL, 0);
	if (rc == 0)
		rc = pconv_set_thinking(&m->conv, r->thinking_json);
	for (size_t i = 0; rc == 0 && i < ncalls; i++)
		rc = map_call(m, &r->calls[i], turn);
	if (rc == 0 && ncalls == 0)
		rc = (m->nudge = engi_strdup(
			  m->cfg.tool_mode == TOOLS_NATIVE
			      ? "Please act through the tools: bash, then done or fail."
			      : "Please act with fenced ```bash, ```done or ```fail blocks."))
			 ? 0
			 : ENGI_ENOMEM;
	if (rc < 0)
		RAISE(err, rc, "out of memory");
	/* a reply that ends the episode: drop the actions after done or fail */
	for (size_t i = 0; i < turn->n; i++)
		if (turn->actions[i].kind == ACT_DONE || turn->actions[i].kind == ACT_FAIL) {
			turn->n = i + 1;
			break;
		}
	return 0;
}

static void model_stop(struct agent *a)
{
	struct model_agent *m = a->priv;
	if (!m)
		return;
	args_clear(m);
	pending_clear(m);
	preply_release(&m->reply);
	pconv_release(&m->conv);
	ewxml_release(&m->ew);
	engi_free(m->parse_error);
	m->parse_error = NULL;
	if (m->have_cfg)
		provider_config_release(&m->cfg);
	if (m->api_key) {
		memset(m->api_key, 0, strlen(m->api_key));
		engi_free(m->api_key);
	}
	engi_free(m->nudge);
}

static const struct agent_ops model_ops = {
    .start = model_start, .next = model_next, .stop = model_stop};

/* The replies of the last attempt in a trace, and the provider and tool
 * mode they were written for. */
static int replay_parse(struct model_agent *m, const char *jsonl, struct engi_error *err)
{
	char provider[32] = "", tools[16] = "native";
	const char *p = jsonl;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		json_t *ev = json_loadb(p, n, 0, NULL);
		const char *kind = json_string_value(json_object_get(ev, "ev"));
		if (kind && !strcmp(kind, "model_start")) {
			const char *pv = json_string_value(json_object_get(ev, "provider"));
			const char *tv = json_string_value(json_object_get(ev, "tools"));
			snprintf(provider, sizeof(provider), "%s", pv ? pv : "");
			snprintf(tools, sizeof(tools), "%s", tv ? tv : "native");
			json_array_clear(m->replies);
		} else if (kind && !strcmp(kind, "model_reply")) {
			json_array_append(m->replies, ev);
		}
		json_decref(ev);
		p += n + (eol ? 1 : 0);
	}
	if (!provider[0] || json_array_size(m->replies) == 0)
		RAISE(err, ENGI_EPARSE, "replay: the recorded trace has no model replies");
	/* the recorded provider's parser reads the recorded replies */
	const struct provider_ops *ops = provider_lookup(provider, err);
	if (!ops) {
		engi_error_prefix(err, "replay: the provider of the recorded trace");
		return err && err->code ? err->code : ENGI_EPARSE;
	}
	provider_config_init(&m->cfg, ops, "replay", "replay");
	m->have_cfg = 1;
	json_t *tv = json_string_nocheck(tools); /* cut to its buffer, maybe mid-character */
	int rc = tv ? provider_config_set(&m->cfg, "tools", tv, err)
		    : engi_raise(err, ENGI_ENOMEM, "out of memory");
	json_decref(tv);
	TRY(rc);
	emit(m, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "ev", "model_start", "model", "replay",
			  "provider", ops->name, "endpoint_model", "replay", "tools", tools,
			  "replies", (json_int_t)json_array_size(m->replies)));
	return 0;
}

static int replay_start(struct agent *a, const struct agent_ctx *ctx, struct engi_error *err)
{
	struct model_agent *m = a->priv;
	m->ctx = ctx;
	m->trace = ctx->trace;
	m->trace_arg = ctx->trace_arg;
	m->replay = 1;
	pconv_init(&m->conv);
	if (!(m->replies = json_array()))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	if (!ctx->replay_load)
		RAISE(err, ENGI_ENOTSUP, "replay: this runner reads no results files");
	char *jsonl = NULL;
	size_t len = 0;
	TRY(ctx->replay_load(ctx->variant, ctx->task->id, ctx->trial, &jsonl, &len, err));
	int rc = replay_parse(m, jsonl, err);
	engi_free(jsonl);
	TRY(rc);
	m->cfg.ask_tool = ctx->task->nreplies > 0;
	if (pconv_user(&m->conv, ctx->task->instruction, NULL) < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	return 0;
}

static void replay_stop(struct agent *a)
{
	struct model_agent *m = a->priv;
	if (!m)
		return;
	json_decref(m->replies);
	m->replies = NULL;
	model_stop(a);
}

static const struct agent_ops replay_ops = {
    .start = replay_start, .next = model_next, .stop = replay_stop};

const struct agent_desc agent_replay = {
    .name = "replay",
    .summary = "replay:RESULTS.h5 replays the recorded model replies of the same task",
    .priv_size = sizeof(struct model_agent),
    .ops = &replay_ops,
    .takes_variant = 1,
};

const struct agent_desc agent_model = {
    .name = "model",
    .summary = "a language model behind an OpenAI-compatible or Anthropic API",
    .priv_size = sizeof(struct model_agent),
    .ops = &model_ops,
    .configure = provider_config_load,
    .unconfigure = provider_config_free,
};
