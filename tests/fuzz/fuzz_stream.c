/*
 * Fuzz target for the recorded reply events that the replay agent reads
 * (src/agent/model.c): the input is an episode's trace as a results file
 * holds it (JSON lines), from which replay:SOURCE takes the model_start
 * event of the last attempt (the provider whose parser reads the replies,
 * through the registry, and the tool mode) and its model_reply events (the
 * reply bodies, or the errors, of each turn). The agent then plays every
 * turn as an episode would, each action answered, until a done or fail,
 * an error, or the recording runs out. Any input must play or fail with an
 * error that says why; every action must be one the runner can run, every
 * trace event the agent writes a JSON object, nothing may crash or leak.
 */
#include "agent.h"
#include "engi/alloc.h"
#include "fuzz_file.h"
#include "task.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_TURNS_MAX 200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *in_data;
static size_t in_size;

static int load(const char *source, const char *task_id, int trial, char **jsonl, size_t *len,
		struct engi_error *err)
{
	char *s = engi_malloc(in_size + 1);
	if (!s)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	memcpy(s, in_data, in_size);
	s[in_size] = '\0';
	*jsonl = s;
	*len = in_size;
	return 0;
}

static void trace_cb(void *arg, const char *event_json)
{
	json_t *ev = json_loads(event_json, 0, NULL);
	if (!json_is_object(ev) || !json_is_string(json_object_get(ev, "ev")))
		__builtin_trap(); /* the trace holds JSON objects only */
	json_decref(ev);
}

static void check_turn(const struct agent_turn *t)
{
	if (t->n > AGENT_MAX_ACTIONS || t->tokens_in || t->tokens_out || t->cost_usd != 0)
		__builtin_trap(); /* a replay buys nothing */
	for (size_t i = 0; i < t->n; i++) {
		const struct agent_action *a = &t->actions[i];
		if (!a->text)
			__builtin_trap();
		switch (a->kind) {
		case ACT_RUN:
		case ACT_ASK:
		case ACT_PYTHON: /* the engiworld action space */
		case ACT_IMAGE:
			break;
		case ACT_WAIT:
			if (!(a->seconds >= 0 && a->seconds <= 1800) || t->n != 1)
				__builtin_trap(); /* a wait stands alone, 0 to 1800 s */
			break;
		case ACT_DONE:
		case ACT_FAIL:
			if (i + 1 != t->n)
				__builtin_trap(); /* nothing runs after the end */
			break;
		case ACT_INPUT: {
			json_t *o = json_loads(a->text, 0, NULL);
			if (!json_is_string(json_object_get(o, "action")))
				__builtin_trap(); /* the desktop reads an action */
			json_decref(o);
			break;
		}
		default:
			__builtin_trap(); /* no file writes in a replay */
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in_data = data;
	in_size = size;
	struct task_reply reply;
	memset(&reply, 0, sizeof(reply));
	struct task task;
	memset(&task, 0, sizeof(task));
	task.id = "fuzz";
	task.instruction = "the instruction";
	task.replies = &reply; /* a simulated user: ask_user is a tool */
	task.nreplies = 1;
	struct engi_error e;
	engi_error_init(&e);
	const struct agent_desc *ad = agent_lookup("replay:fuzz.h5", &e);
	if (!ad)
		__builtin_trap();
	struct agent_ctx ctx = {
	    .task = &task, .variant = "fuzz.h5", .trace = trace_cb, .replay_load = load};
	struct agent *ag = NULL;
	int rc = agent_start(ad, &ctx, &ag, &e);
	if (rc < 0 && !e.msg[0])
		__builtin_trap(); /* an error always says what failed */
	struct action_result res[AGENT_MAX_ACTIONS];
	struct observation obs = {.turn = 0, .output = ""};
	int ended = 0, played = 0;
	for (int turn = 0; rc == 0 && !ended && turn < FUZZ_TURNS_MAX; turn++) {
		struct agent_turn t;
		engi_error_init(&e);
		rc = agent_next(ag, &obs, &t, &e);
		if (rc < 0) {
			if (!e.msg[0])
				__builtin_trap();
			break;
		}
		check_turn(&t);
		played++;
		ended = t.n && (t.actions[t.n - 1].kind == ACT_DONE ||
				t.actions[t.n - 1].kind == ACT_FAIL);
		/* each action answered, the last one timed out now and then */
		for (size_t i = 0; i < t.n; i++) {
			const char *out = t.actions[i].kind == ACT_ASK ? "the answer" : "ok";
			res[i] = (struct action_result){.output = out,
							.output_len = strlen(out),
							.timed_out =
							    (int)(i + 1 == t.n && turn % 3 == 2)};
		}
		obs = (struct observation){.turn = turn + 1,
					   .output = t.n ? res[t.n - 1].output : "",
					   .output_len = t.n ? res[t.n - 1].output_len : 0,
					   .results = t.n ? res : NULL,
					   .nresults = t.n};
	}
	char what[64];
	snprintf(what, sizeof(what), "stream: %d turns%s", played, ended ? ", ended" : "");
	fuzz_note(what, rc, e.msg);
	agent_stop(&ag);
	return 0;
}
