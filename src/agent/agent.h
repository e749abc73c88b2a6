/*
 * agent.h - who acts in an episode: a model behind an API, or a built-in
 * agent that plays a task's reference or flawed solution, or does nothing.
 *
 * An agent is a descriptor with an ops table in a static registry. The
 * episode runner calls agent_start once, then agent_next once per turn with
 * the observation of the previous turn; the agent fills a struct agent_turn
 * with one or more actions (they run in order and count as one turn) and its
 * usage. Actions and their strings belong to the agent until the next call.
 * agent_stop frees everything. Agents never see the backend: they speak in
 * actions and observations only.
 */
#ifndef ENGI_AGENT_H
#define ENGI_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "govern.h"
#include "task.h"

/* ACT_ASK puts a question to the task's simulated user (interaction.user);
 * the observation that answers it holds the user's reply as its output.
 * ACT_IMAGE reads the PNG or JPEG image at the environment path text (see
 * backend_read_image): its result carries the image, or says why not.
 * ACT_PYTHON runs text as Python 3 code in the working folder, as ACT_RUN
 * runs a command; ACT_WAIT lets seconds pass (within the wall time). */
enum action_kind {
	ACT_RUN,
	ACT_WRITE,
	ACT_DONE,
	ACT_FAIL,
	ACT_INPUT,
	ACT_ASK,
	ACT_IMAGE,
	ACT_PYTHON,
	ACT_WAIT
};

struct agent_action {
	int kind;
	const char *text; /* command, summary, reason, question or ACT_INPUT's event JSON */
	const char *path; /* ACT_WRITE: environment path */
	const void *data; /* ACT_WRITE: content */
	size_t len;
	double seconds; /* ACT_WAIT */
};

#define AGENT_MAX_ACTIONS 16

struct agent_turn {
	struct agent_action actions[AGENT_MAX_ACTIONS];
	size_t n;
	int64_t tokens_in, tokens_out;
	double cost_usd;
};

/* What one action of the previous turn gave: its own output and exit code. */
struct action_result {
	const char *output;
	size_t output_len;
	int exit_code;
	int timed_out;
	int truncated;
	const char *image_b64; /* ACT_IMAGE: the image, base64 PNG or JPEG; else NULL */
	/* ACT_RUN, ACT_PYTHON: the message of the command policy's rule that
	 * refused it (it did not run; exit_code -2), else NULL */
	const char *rejected;
	uint64_t out_total; /* bytes the command wrote, shown or not (0: output_len) */
};

struct observation {
	int turn; /* 0 before the first action */
	/* the last action's result (output .. truncated), as agents that run
	 * one action a turn read it */
	const char *output;
	size_t output_len;
	int exit_code;
	int timed_out;
	int truncated;
	const char *rejected;
	uint64_t out_total;
	/* GUI tasks: the screen after the action (before the first turn: the
	 * screen at the start), base64 PNG; NULL otherwise */
	const char *png_b64;
	/* one result per action of the previous turn that ran, in order (the
	 * ones after an action that ended the episode have none) */
	const struct action_result *results;
	size_t nresults;
	/* the task's next follow-up message (task.h): the previous turn ended
	 * with done and the user writes again; the conversation goes on. NULL
	 * otherwise */
	const char *followup;
};

struct provider_config; /* src/provider/provider.h */
struct cond_settings;	/* src/core/matrix.h */

struct agent_ctx {
	const struct task *task;
	const char *variant; /* flawed variant name, or NULL */
	/* the cell's condition settings, parsed where the condition was
	 * defined; NULL: none set */
	const struct cond_settings *cond;
	/* the model's models.json entry as the agent's configure parsed it
	 * (names the key variable, never holds a key), or NULL for agents that
	 * take no settings */
	const struct provider_config *provider;
	/* appends one JSON object (as text) to the episode's trace; may be NULL */
	void (*trace)(void *trace_arg, const char *event_json);
	void *trace_arg;
	int trial;
	/* replay:SOURCE: the decompressed trace to play back for this task and
	 * trial (the caller's, engi_free); NULL where no results file is read */
	int (*replay_load)(const char *source, const char *task_id, int trial, char **jsonl,
			   size_t *len, struct engi_error *err);
	/* the sweep's request governor (govern.h): GOVERN_ASK answers the
	 * seconds to wait before a request, GOVERN_TELL reports one; NULL: the
	 * agent paces itself within this process */
	double (*govern)(void *govern_arg, struct govern_msg *msg);
	void *govern_arg;
	/* clk_now_mono() when the episode's wall time runs out (0: no limit): an
	 * agent waiting for a model past it returns ENGI_ETIMEOUT, which the
	 * runner records as time_limit */
	double deadline;
};

struct agent;

struct agent_ops {
	int (*start)(struct agent *a, const struct agent_ctx *ctx, struct engi_error *err);
	int (*next)(struct agent *a, const struct observation *obs, struct agent_turn *turn,
		    struct engi_error *err);
	void (*stop)(struct agent *a);
};

struct agent_desc {
	const char *name;
	const char *summary;
	size_t priv_size;
	const struct agent_ops *ops; /* NULL: not built */
	const char *not_built_hint;
	int takes_variant; /* name:VARIANT */
	/* Parses a models.json entry (JSON text) for this agent, once, before
	 * anything runs (episode_preflight): what start finds in ctx->provider,
	 * freed by unconfigure. Errors read "/FIELD: what is wrong". NULL: the
	 * agent takes no settings. */
	int (*configure)(const char *entry_json, struct provider_config **out,
			 struct engi_error *err);
	void (*unconfigure)(struct provider_config *c);
};

struct agent {
	const struct agent_desc *desc;
	void *priv;
};

/* spec is "name" or "name:variant". */
const struct agent_desc *agent_lookup(const char *spec, struct engi_error *err);
const struct agent_desc *const *agent_all(void);

int agent_start(const struct agent_desc *d, const struct agent_ctx *ctx, struct agent **out,
		struct engi_error *err);
int agent_next(struct agent *a, const struct observation *obs, struct agent_turn *turn,
	       struct engi_error *err);
void agent_stop(struct agent **a);

#endif
