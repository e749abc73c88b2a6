/*
 * A models.json entry is parsed once: episode_preflight turns each model
 * entry into its typed provider settings on the sweep definition (a second
 * preflight keeps them), a bad entry is refused at its place in the file,
 * and the model agent starts from the typed settings with the condition's
 * overrides applied to its own copy. The replay agent parses the recorded
 * replies with the parser of the provider its trace names, through the
 * registry, and refuses a name the registry does not know.
 */
#include "agent.h"
#include "check.h"
#include "engi/alloc.h"
#include "episode.h"
#include "matrix.h"
#include "provider.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void write_models(const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_parsed_once(void)
{
	write_models("{\"models\": [{\"name\": \"ref\", \"agent\": \"reference\"},"
		     " {\"name\": \"c\", \"provider\": \"anthropic\", \"model\": \"claude-x\","
		     " \"rpm\": 30, \"tpm\": 9000, \"reasoning_effort\": \"medium\","
		     " \"headers\": {\"X-Team\": \"t1\"}, \"history_turns\": 7},"
		     " {\"name\": \"o\", \"provider\": \"openai\", \"model\": \"o3\"}]}");
	struct sweepdef d;
	sweepdef_init(&d);
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(sweepdef_load_models(&d, path, &e), 0);
	CHECK_INT(d.nmodels, 3);
	CHECK(d.models[1].provider == NULL); /* not before the preflight */
	CHECK_INT(episode_preflight(NULL, &d, &e), 0);
	CHECK(d.models[0].provider == NULL); /* the reference agent takes no settings */
	const struct provider_config *c = d.models[1].provider;
	CHECK(c != NULL);
	if (c) {
		CHECK(c->ops == provider_lookup("anthropic", NULL));
		CHECK_STR(c->name, "c");
		CHECK_STR(c->model, "claude-x");
		CHECK_NEAR(c->rpm, 30, 0);
		CHECK_NEAR(c->tpm, 9000, 0);
		CHECK_INT(c->thinking_budget, PROVIDER_THINKING_MEDIUM);
		CHECK_INT(c->history_turns, 7);
		CHECK_INT(c->nheaders, 1);
		CHECK_STR(c->nheaders ? c->headers[0] : NULL, "X-Team: t1");
	}
	const struct provider_config *o = d.models[2].provider;
	CHECK(o && o->ops == provider_lookup("openai", NULL));
	CHECK(o && o->token_field == TOKEN_FIELD_MAX_COMPLETION_TOKENS);
	/* a second preflight keeps what the first parsed */
	CHECK_INT(episode_preflight(NULL, &d, &e), 0);
	CHECK(d.models[1].provider == c);
	sweepdef_release(&d);

	/* an entry the provider refuses: at its place in the file */
	write_models("{\"models\": [{\"name\": \"c\", \"provider\": \"anthropic\", \"model\": "
		     "\"x\", \"reasoning_effort\": \"extreme\"}]}");
	sweepdef_init(&d);
	engi_error_init(&e);
	CHECK_INT(sweepdef_load_models(&d, path, &e), 0);
	CHECK_INT(episode_preflight(NULL, &d, &e), ENGI_EINVALID);
	CHECK(strstr(e.msg, "/models/0/reasoning_effort: 'extreme' is not low, medium or high") !=
	      NULL);
	CHECK(d.models[0].provider == NULL);
	sweepdef_release(&d);
}

static json_t *events; /* the trace of the agent under test */

static void trace_cb(void *arg, const char *event_json)
{
	json_array_append_new(events, json_loads(event_json, 0, NULL));
}

static json_t *event(const char *kind)
{
	size_t i;
	json_t *ev;
	json_array_foreach(events, i, ev)
	{
		if (!strcmp(json_string_value(json_object_get(ev, "ev")), kind))
			return ev;
	}
	return NULL;
}

static const struct task the_task = {.id = "t1", .instruction = "do the task"};

static void test_model_start(void)
{
	write_models("{\"models\": [{\"name\": \"c\", \"provider\": \"anthropic\", \"model\": "
		     "\"claude-x\", \"history_turns\": 7, \"tools\": \"native\"}]}");
	struct sweepdef d;
	sweepdef_init(&d);
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(sweepdef_load_models(&d, path, &e), 0);
	CHECK_INT(episode_preflight(NULL, &d, &e), 0);
	/* the condition's settings, parsed where it is defined */
	CHECK_INT(sweepdef_add_condition(&d, "abl:history_turns=3,tools=text", &e), 0);
	const struct agent_desc *ad = agent_lookup("model", &e);
	CHECK(ad != NULL);
	events = json_array();
	struct agent_ctx ctx = {.task = &the_task,
				.cond = d.nconds ? &d.conds[0].set : NULL,
				.provider = d.models[0].provider,
				.trace = trace_cb};
	struct agent *ag = NULL;
	CHECK_INT(agent_start(ad, &ctx, &ag, &e), 0);
	json_t *st = event("model_start");
	CHECK_STR(json_string_value(json_object_get(st, "provider")), "anthropic");
	CHECK_STR(json_string_value(json_object_get(st, "endpoint_model")), "claude-x");
	CHECK_INT(json_integer_value(json_object_get(st, "history_turns")), 3);
	CHECK_STR(json_string_value(json_object_get(st, "tools")), "text");
	agent_stop(&ag);
	/* the condition changed the agent's copy, not the sweep's settings */
	CHECK_INT(d.models[0].provider->history_turns, 7);
	CHECK_INT(d.models[0].provider->tool_mode, TOOLS_NATIVE);
	json_decref(events);
	/* under a condition that sets none of them, the entry's own hold */
	CHECK_INT(sweepdef_add_condition(&d, "plain:screen_scale=0.5", &e), 0);
	events = json_array();
	ctx.cond = d.nconds == 2 ? &d.conds[1].set : NULL;
	CHECK_INT(agent_start(ad, &ctx, &ag, &e), 0);
	st = event("model_start");
	CHECK_INT(json_integer_value(json_object_get(st, "history_turns")), 7);
	CHECK_STR(json_string_value(json_object_get(st, "tools")), "native");
	agent_stop(&ag);
	json_decref(events);
	/* without settings the model agent cannot start */
	ctx.provider = NULL;
	engi_error_init(&e);
	CHECK_INT(agent_start(ad, &ctx, &ag, &e), ENGI_EINVALID);
	CHECK(strstr(e.msg, "needs a models.json entry") != NULL);
	sweepdef_release(&d);
}

static const char *recorded; /* the trace replay_load hands back */

static int replay_load(const char *source, const char *task_id, int trial, char **jsonl,
		       size_t *len, struct engi_error *err)
{
	*jsonl = engi_strdup(recorded);
	*len = strlen(recorded);
	return *jsonl ? 0 : ENGI_ENOMEM;
}

static const char *rec_tools = "native"; /* the tool mode trace_of records */

/* A recorded trace of one reply of provider prov with body raw. */
static char *trace_of(const char *prov, const char *raw)
{
	json_t *start = json_pack("{s:s,s:s,s:s,s:s}", "ev", "model_start", "model", "m",
				  "provider", prov, "tools", rec_tools);
	json_t *reply = json_pack("{s:s,s:i,s:s}", "ev", "model_reply", "turn", 1, "raw", raw);
	char *a = json_dumps(start, JSON_COMPACT), *b = json_dumps(reply, JSON_COMPACT);
	size_t n = strlen(a) + strlen(b) + 3;
	char *s = engi_malloc(n);
	snprintf(s, n, "%s\n%s\n", a, b);
	free(a);
	free(b);
	json_decref(start);
	json_decref(reply);
	return s;
}

static const char oa_reply[] =
    "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":"
    "\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls "
    "-l\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":5,"
    "\"completion_tokens\":2}}";
static const char an_reply[] =
    "{\"type\":\"message\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"bash\","
    "\"input\":{\"command\":\"ls -l\"}}],\"stop_reason\":\"tool_use\",\"usage\":{"
    "\"input_tokens\":5,\"output_tokens\":2}}";

/* Replays one reply: the return code of agent_start, and of its first turn
 * the number of actions (-1: an error turn, no actions). */
static int replay_one(const char *prov, const char *raw, int *nact, struct engi_error *e)
{
	char *tr = trace_of(prov, raw);
	recorded = tr;
	const struct agent_desc *ad = agent_lookup("replay:rec.h5", e);
	CHECK(ad != NULL);
	events = json_array();
	struct agent_ctx ctx = {
	    .task = &the_task, .variant = "rec.h5", .replay_load = replay_load, .trace = trace_cb};
	struct agent *ag = NULL;
	int rc = agent_start(ad, &ctx, &ag, e);
	*nact = -2;
	if (rc == 0) {
		struct observation obs = {.turn = 0, .output = ""};
		struct agent_turn turn;
		CHECK_INT(agent_next(ag, &obs, &turn, e), 0);
		json_t *rep = event("model_reply");
		*nact = json_is_string(json_object_get(rep, "error")) ? -1 : (int)turn.n;
		if (turn.n == 1) {
			CHECK_INT(turn.actions[0].kind, ACT_RUN);
			CHECK_STR(turn.actions[0].text, "ls -l");
		}
		json_t *st = event("model_start");
		CHECK_STR(json_string_value(json_object_get(st, "provider")), prov);
	}
	agent_stop(&ag);
	json_decref(events);
	engi_free(tr);
	return rc;
}

static void test_replay(void)
{
	struct engi_error e;
	int nact;
	engi_error_init(&e);
	CHECK_INT(replay_one("openai", oa_reply, &nact, &e), 0);
	CHECK_INT(nact, 1);
	engi_error_init(&e);
	CHECK_INT(replay_one("anthropic", an_reply, &nact, &e), 0);
	CHECK_INT(nact, 1);
	/* the parser is the recorded provider's: an OpenAI body in an
	 * Anthropic trace is an error turn */
	engi_error_init(&e);
	CHECK_INT(replay_one("anthropic", oa_reply, &nact, &e), 0);
	CHECK_INT(nact, -1);
	/* a provider the registry does not know: refused, naming those it does */
	engi_error_init(&e);
	CHECK_INT(replay_one("acme", an_reply, &nact, &e), ENGI_EINVALID);
	char names[256];
	provider_names(names, sizeof(names));
	char want[400];
	snprintf(want, sizeof(want),
		 "replay: the provider of the recorded trace: 'acme' is not one of %s", names);
	CHECK_STR(e.msg, want);
	/* a tool mode cut mid-character by its buffer is a bad tool mode, not
	 * a lack of memory */
	rec_tools = "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9";
	engi_error_init(&e);
	CHECK_INT(replay_one("openai", oa_reply, &nact, &e), ENGI_EINVALID);
	CHECK(strstr(e.msg, "/tools: expected") != NULL);
	rec_tools = "native";
}

int main(void)
{
	snprintf(path, sizeof(path), "model_config_%d.json", (int)getpid());
	test_parsed_once();
	test_model_start();
	test_replay();
	unlink(path);
	return check_exit();
}
