/*
 * The provider-neutral half: configuration, conversations, the tools,
 * retries with backoff, the text fallback and the per-process throttle.
 * Nothing here knows one API from another: what differs is in each
 * provider's struct provider_ops (openai.c, anthropic.c), found through
 * the registry (registry.c); HTTP is in http.c.
 */
#include "provider.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "fsutil.h"
#include "http.h"
#include "secrets.h"
#include "text.h"
#include "wire.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- configuration ---- */

/* Where a setting's message says it is, in place of a file: "model 'NAME'"
 * (provider_config_load keeps the "/FIELD: ..." after it for the entry's
 * origin in its file). */
#define CFG_WHO_MAX 96
static const char *cfg_who(char who[CFG_WHO_MAX], const char *model)
{
	snprintf(who, CFG_WHO_MAX, "model '%s'", model);
	return who;
}

static int cfg_str(json_t *o, const char *key, char *dst, size_t n, int required, const char *model,
		   struct engi_error *err)
{
	char who[CFG_WHO_MAX];
	const char *s;
	TRY(engi_json_string(o, key, required, 0, cfg_who(who, model), "", &s, err));
	if (!s)
		return 0;
	size_t len = strlen(s);
	if (len >= n) {
		char p[ENGI_POINTER_MAX];
		engi_json_pointer(p, sizeof(p), "", key);
		return engi_parse_error(err, who, p, "expected a string of at most %zu bytes",
					n - 1);
	}
	memcpy(dst, s, len + 1);
	return 0;
}

static int cfg_num(json_t *o, const char *key, double dflt, double *out, const char *model,
		   struct engi_error *err)
{
	char who[CFG_WHO_MAX];
	return engi_json_number_min(o, key, 0, dflt, cfg_who(who, model), "", out, err);
}

/* The providers that have extended thinking, for messages. */
static void thinking_names(char *buf, size_t n, int thinking)
{
	const char *names[8];
	size_t k = 0;
	for (const struct provider_ops *const *p = provider_registry; *p && k < 8; p++)
		if (!(*p)->thinking == !thinking)
			names[k++] = (*p)->name;
	engi_json_join(buf, n, names, k);
}

/* Extended thinking: thinking_budget_tokens, else a budget from
 * reasoning_effort; max_tokens must leave room for the answer. */
static int cfg_thinking(struct provider_config *c, json_t *o, struct engi_error *err)
{
	double v;
	TRY(cfg_num(o, "thinking_budget_tokens", 0, &v, c->name, err));
	if (json_object_get(o, "thinking_budget_tokens") && !c->ops->thinking) {
		char yes[128], no[128];
		thinking_names(yes, sizeof(yes), 1);
		thinking_names(no, sizeof(no), 0);
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /thinking_budget_tokens: only the %s provider takes it "
		      "(%s: reasoning_effort)",
		      c->name, yes, no);
	}
	if (v > 0 && (v < PROVIDER_THINKING_MIN || v > 1e7))
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /thinking_budget_tokens: expected %d to 10000000 tokens",
		      c->name, PROVIDER_THINKING_MIN);
	c->thinking_budget = (long)v;
	if (!c->ops->thinking || c->thinking_budget || !c->reasoning_effort[0])
		goto budget;
	if (!strcmp(c->reasoning_effort, "low"))
		c->thinking_budget = PROVIDER_THINKING_LOW;
	else if (!strcmp(c->reasoning_effort, "medium"))
		c->thinking_budget = PROVIDER_THINKING_MEDIUM;
	else if (!strcmp(c->reasoning_effort, "high"))
		c->thinking_budget = PROVIDER_THINKING_HIGH;
	else
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /reasoning_effort: '%s' is not low, medium or high (%s)",
		      c->name, c->reasoning_effort, c->ops->name);
budget:
	if (!c->thinking_budget)
		return 0;
	if (c->max_tokens == 0)
		c->max_tokens = c->thinking_budget + PROVIDER_ANSWER_TOKENS;
	else if (c->max_tokens <= c->thinking_budget)
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /max_tokens: %ld must exceed the thinking budget of %ld tokens",
		      c->name, c->max_tokens, c->thinking_budget);
	return 0;
}

/* OpenAI reasoning models (o1, o3, o4-mini, gpt-5, ...) take
 * max_completion_tokens and refuse max_tokens; older and compatible
 * servers take max_tokens. */
static int reasoning_model(const char *model)
{
	const char *slash = strrchr(model, '/'); /* gateways: "openai/o3-mini" */
	const char *m = slash ? slash + 1 : model;
	return (m[0] == 'o' && m[1] >= '1' && m[1] <= '9') || !strncmp(m, "gpt-5", 5);
}

static int cfg_token_field(struct provider_config *c, json_t *o, struct engi_error *err)
{
	json_t *v = json_object_get(o, "token_field");
	const char *f = json_string_value(v);
	if (v && !(f && (!strcmp(f, "max_tokens") || !strcmp(f, "max_completion_tokens"))))
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /token_field: expected \"max_tokens\" or "
		      "\"max_completion_tokens\"",
		      c->name);
	if (f)
		c->token_field = !strcmp(f, "max_tokens") ? TOKEN_FIELD_MAX_TOKENS
							  : TOKEN_FIELD_MAX_COMPLETION_TOKENS;
	else
		c->token_field = c->reasoning_effort[0] || reasoning_model(c->model)
				     ? TOKEN_FIELD_MAX_COMPLETION_TOKENS
				     : TOKEN_FIELD_MAX_TOKENS;
	return 0;
}

/* The fields a condition may override (provider_config_set), each from
 * its value v (NULL: absent, the default). */
static int cfg_history_turns(struct provider_config *c, const json_t *v, struct engi_error *err)
{
	double d = PROVIDER_HISTORY_TURNS_DEFAULT;
	if (v &&
	    (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0))
		RAISE(err, ENGI_EINVALID, "model '%s': /history_turns: expected a number ≥ 0",
		      c->name);
	if (v)
		d = json_number_value(v);
	c->history_turns = d < 1 ? 1 : d > INT_MAX ? INT_MAX : (int)d;
	return 0;
}

static const char *const tool_mode_names[] = {"native", "text", "engiworld"};

const char *provider_tool_mode_name(int mode)
{
	return mode >= TOOLS_NATIVE && mode <= TOOLS_ENGIWORLD ? tool_mode_names[mode] : "native";
}

static int cfg_tools(struct provider_config *c, const json_t *v, struct engi_error *err)
{
	const char *s = json_string_value(v);
	c->tool_mode = TOOLS_NATIVE;
	for (int m = TOOLS_NATIVE; s && m <= TOOLS_ENGIWORLD; m++)
		if (!strcmp(s, tool_mode_names[m]))
			c->tool_mode = m;
	if (v && !(s && !strcmp(s, tool_mode_names[c->tool_mode])))
		RAISE(err, ENGI_EINVALID,
		      "model '%s': /tools: expected \"native\", \"text\" or \"engiworld\"",
		      c->name);
	return 0;
}

static int cfg_image_tool(struct provider_config *c, const json_t *v, struct engi_error *err)
{
	if (v && !json_is_boolean(v))
		RAISE(err, ENGI_EINVALID, "model '%s': /image_tool: expected true or false",
		      c->name);
	c->image_tool = json_is_true(v);
	return 0;
}

static const struct {
	const char *key;
	int (*set)(struct provider_config *c, const json_t *v, struct engi_error *err);
} cfg_overridable[] = {
    {"history_turns", cfg_history_turns},
    {"tools", cfg_tools},
    {"image_tool", cfg_image_tool},
};

int provider_config_set(struct provider_config *c, const char *key, const json_t *v,
			struct engi_error *err)
{
	for (size_t i = 0; i < sizeof(cfg_overridable) / sizeof(*cfg_overridable); i++)
		if (!strcmp(cfg_overridable[i].key, key))
			return cfg_overridable[i].set(c, v, err);
	RAISE(err, ENGI_EINVALID, "model '%s': /%s: not a setting a condition can change", c->name,
	      key);
}

void provider_config_init(struct provider_config *c, const struct provider_ops *ops,
			  const char *name, const char *model)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "?");
	snprintf(c->model, sizeof(c->model), "%s", model ? model : "");
	snprintf(c->base_url, sizeof(c->base_url), "%s", ops->base_url);
	c->temperature = NAN;
	c->token_field =
	    reasoning_model(c->model) ? TOKEN_FIELD_MAX_COMPLETION_TOKENS : TOKEN_FIELD_MAX_TOKENS;
	c->timeout_s = PROVIDER_TIMEOUT_S_DEFAULT;
	c->max_retries = PROVIDER_RETRIES_DEFAULT;
	c->retry_base_s = PROVIDER_RETRY_BASE_S_DEFAULT;
	c->history_turns = PROVIDER_HISTORY_TURNS_DEFAULT;
	c->reply_cap = PROVIDER_REPLY_CAP;
	c->tool_mode = TOOLS_NATIVE;
}

static int cfg_headers(struct provider_config *c, json_t *o, struct engi_error *err)
{
	char who[CFG_WHO_MAX];
	json_t *h;
	TRY(engi_json_field(o, "headers", JSON_OBJECT, 0, cfg_who(who, c->name), "", &h, err));
	const char *key;
	json_t *hv;
	json_object_foreach(h, key, hv)
	{
		char p[ENGI_POINTER_MAX];
		engi_json_pointer(p, sizeof(p), "/headers", key);
		if (!json_is_string(hv) || strpbrk(key, ":\r\n") ||
		    strpbrk(json_string_value(hv), "\r\n"))
			return engi_parse_error(err, who, p, "expected a one-line string");
		if (c->nheaders == PROVIDER_MAX_HEADERS)
			return engi_parse_error(err, who, "/headers", "more than %d",
						PROVIDER_MAX_HEADERS);
		size_t n = strlen(key) + json_string_length(hv) + 3;
		char *line = engi_malloc(n);
		if (!line)
			RAISE(err, ENGI_ENOMEM, "out of memory");
		snprintf(line, n, "%s: %s", key, json_string_value(hv));
		c->headers[c->nheaders++] = line;
		/* header values are credentials as often as not */
		if (secrets_add_header(json_string_value(hv)) < 0)
			RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	return 0;
}

static int cfg_parse(struct provider_config *c, json_t *o, struct engi_error *err)
{
	char prov[32] = "", name[64];
	double v;
	const char *nm = json_string_value(json_object_get(o, "name"));
	snprintf(name, sizeof(name), "%s", nm ? nm : "?");
	snprintf(c->name, sizeof(c->name), "%s", name);
	TRY(cfg_str(o, "provider", prov, sizeof(prov), 1, name, err));
	const struct provider_ops *ops = provider_lookup(prov, err);
	if (!ops) {
		engi_error_prefix(err, "model '%s': /provider", name);
		return err && err->code ? err->code : ENGI_EINVALID;
	}
	provider_config_init(c, ops, name, NULL);
	c->base_url[0] = '\0';
	TRY(cfg_str(o, "base_url", c->base_url, sizeof(c->base_url), 0, c->name, err));
	TRY(cfg_str(o, "model", c->model, sizeof(c->model), 1, c->name, err));
	TRY(cfg_str(o, "api_key_env", c->api_key_env, sizeof(c->api_key_env), 0, c->name, err));
	TRY(cfg_str(o, "reasoning_effort", c->reasoning_effort, sizeof(c->reasoning_effort), 0,
		    c->name, err));
	if (!c->base_url[0])
		snprintf(c->base_url, sizeof(c->base_url), "%s", ops->base_url);
	size_t bl = strlen(c->base_url);
	while (bl && c->base_url[bl - 1] == '/')
		c->base_url[--bl] = '\0';
	if (json_object_get(o, "temperature"))
		TRY(cfg_num(o, "temperature", 0, &c->temperature, c->name, err));
	TRY(cfg_num(o, "max_tokens", 0, &v, c->name, err));
	c->max_tokens = v >= (double)LONG_MAX ? LONG_MAX : (long)v;
	TRY(cfg_thinking(c, o, err));
	TRY(cfg_token_field(c, o, err));
	TRY(cfg_num(o, "price_in_per_mtok", 0, &c->price_in_per_mtok, c->name, err));
	TRY(cfg_num(o, "price_out_per_mtok", 0, &c->price_out_per_mtok, c->name, err));
	TRY(cfg_num(o, "timeout_s", PROVIDER_TIMEOUT_S_DEFAULT, &c->timeout_s, c->name, err));
	TRY(cfg_num(o, "retry_base_s", PROVIDER_RETRY_BASE_S_DEFAULT, &c->retry_base_s, c->name,
		    err));
	TRY(cfg_num(o, "rpm", 0, &c->rpm, c->name, err));
	TRY(cfg_num(o, "tpm", 0, &c->tpm, c->name, err));
	TRY(cfg_num(o, "max_retries", PROVIDER_RETRIES_DEFAULT, &v, c->name, err));
	c->max_retries = v > INT_MAX ? INT_MAX : (int)v;
	for (size_t i = 0; i < sizeof(cfg_overridable) / sizeof(*cfg_overridable); i++)
		TRY(cfg_overridable[i].set(c, json_object_get(o, cfg_overridable[i].key), err));
	return cfg_headers(c, o, err);
}

int provider_config_parse(struct provider_config *c, const char *entry_json, struct engi_error *err)
{
	memset(c, 0, sizeof(*c));
	json_error_t je;
	json_t *o = json_loads(entry_json ? entry_json : "", 0, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		RAISE(err, ENGI_EINVALID, "model settings: expected a JSON object");
	}
	int rc = cfg_parse(c, o, err);
	json_decref(o);
	if (rc < 0)
		provider_config_release(c);
	return rc;
}

int provider_config_load(const char *entry_json, struct provider_config **out,
			 struct engi_error *err)
{
	*out = NULL;
	struct provider_config *c = engi_malloc(sizeof(*c));
	if (!c)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = provider_config_parse(c, entry_json, err);
	if (rc < 0) {
		engi_free(c);
		/* provider_config_parse words its errors "model 'NAME': /FIELD: ..." */
		const char *at =
		    err && !strncmp(err->msg, "model '", 7) ? strstr(err->msg, "': /") : NULL;
		if (at)
			memmove(err->msg, at + 3, strlen(at + 3) + 1);
		return rc;
	}
	*out = c;
	return 0;
}

int provider_config_copy(struct provider_config *dst, const struct provider_config *src,
			 struct engi_error *err)
{
	*dst = *src;
	dst->nheaders = 0;
	for (size_t i = 0; i < src->nheaders; i++) {
		if (!(dst->headers[i] = engi_strdup(src->headers[i]))) {
			provider_config_release(dst);
			RAISE(err, ENGI_ENOMEM, "out of memory");
		}
		dst->nheaders = i + 1;
	}
	return 0;
}

void provider_config_release(struct provider_config *c)
{
	for (size_t i = 0; i < c->nheaders; i++)
		engi_free(c->headers[i]);
	c->nheaders = 0;
}

void provider_config_free(struct provider_config *c)
{
	if (!c)
		return;
	provider_config_release(c);
	engi_free(c);
}

/* ---- conversations ---- */

void pconv_init(struct pconv *c)
{
	memset(c, 0, sizeof(*c));
}

static void calls_free(struct ptool_call *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		engi_free(v[i].id);
		engi_free(v[i].name);
		engi_free(v[i].args_json);
	}
	engi_free(v);
}

void pconv_release(struct pconv *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct pmsg *m = &c->v[i];
		engi_free(m->text);
		calls_free(m->calls, m->ncalls);
		engi_free(m->tool_call_id);
		engi_free(m->tool_name);
		engi_free(m->png_b64);
		engi_free(m->thinking_json);
		for (size_t k = 0; k < m->nmore_png; k++)
			engi_free(m->more_png[k]);
		engi_free(m->more_png);
	}
	engi_free(c->v);
	engi_free(c->system);
	memset(c, 0, sizeof(*c));
}

int pconv_set_system(struct pconv *c, const char *text)
{
	char *s = engi_strdup(text);
	if (!s)
		return ENGI_ENOMEM;
	engi_free(c->system);
	c->system = s;
	return 0;
}

static struct pmsg *pconv_push(struct pconv *c)
{
	if (c->n == c->alloc) {
		size_t na = c->alloc ? c->alloc * 2 : 16;
		struct pmsg *nv = engi_reallocarray(c->v, na, sizeof(*nv));
		if (!nv)
			return NULL;
		c->v = nv;
		c->alloc = na;
	}
	struct pmsg *m = &c->v[c->n];
	memset(m, 0, sizeof(*m));
	return m;
}

static char *dup_or_empty(const char *s)
{
	return engi_strdup(s ? s : "");
}

int pconv_user(struct pconv *c, const char *text, const char *png_b64)
{
	struct pmsg *m = pconv_push(c);
	if (!m)
		return ENGI_ENOMEM;
	m->role = PM_USER;
	m->text = dup_or_empty(text);
	m->png_b64 = png_b64 ? engi_strdup(png_b64) : NULL;
	if (!m->text || (png_b64 && !m->png_b64)) {
		engi_free(m->text);
		engi_free(m->png_b64);
		return ENGI_ENOMEM;
	}
	c->n++;
	return 0;
}

int pconv_assistant(struct pconv *c, const char *text, const struct ptool_call *calls,
		    size_t ncalls)
{
	struct pmsg *m = pconv_push(c);
	if (!m)
		return ENGI_ENOMEM;
	m->role = PM_ASSISTANT;
	m->text = dup_or_empty(text);
	if (ncalls)
		m->calls = engi_calloc(ncalls, sizeof(*m->calls));
	int bad = !m->text || (ncalls && !m->calls);
	for (size_t i = 0; !bad && i < ncalls; i++) {
		m->calls[i].id = dup_or_empty(calls[i].id);
		m->calls[i].name = dup_or_empty(calls[i].name);
		m->calls[i].args_json = engi_strdup(calls[i].args_json ? calls[i].args_json : "{}");
		m->ncalls = i + 1;
		bad = !m->calls[i].id || !m->calls[i].name || !m->calls[i].args_json;
	}
	if (bad) {
		engi_free(m->text);
		calls_free(m->calls, m->ncalls);
		return ENGI_ENOMEM;
	}
	c->n++;
	return 0;
}

int pconv_tool(struct pconv *c, const char *call_id, const char *tool_name, const char *text,
	       const char *png_b64)
{
	struct pmsg *m = pconv_push(c);
	if (!m)
		return ENGI_ENOMEM;
	m->role = PM_TOOL;
	m->text = dup_or_empty(text);
	m->tool_call_id = dup_or_empty(call_id);
	m->tool_name = dup_or_empty(tool_name);
	m->png_b64 = png_b64 ? engi_strdup(png_b64) : NULL;
	if (!m->text || !m->tool_call_id || !m->tool_name || (png_b64 && !m->png_b64)) {
		engi_free(m->text);
		engi_free(m->tool_call_id);
		engi_free(m->tool_name);
		engi_free(m->png_b64);
		return ENGI_ENOMEM;
	}
	c->n++;
	return 0;
}

int pconv_set_thinking(struct pconv *c, const char *thinking_json)
{
	if (c->n == 0 || c->v[c->n - 1].role != PM_ASSISTANT)
		return ENGI_EINVALID;
	if (!thinking_json)
		return 0;
	char *s = engi_strdup(thinking_json);
	if (!s)
		return ENGI_ENOMEM;
	engi_free(c->v[c->n - 1].thinking_json);
	c->v[c->n - 1].thinking_json = s;
	return 0;
}

int pconv_add_image(struct pconv *c, const char *png_b64)
{
	if (c->n == 0 || c->v[c->n - 1].role != PM_USER)
		return ENGI_EINVALID;
	struct pmsg *m = &c->v[c->n - 1];
	char **nv = engi_reallocarray(m->more_png, m->nmore_png + 1, sizeof(*nv));
	if (!nv)
		return ENGI_ENOMEM;
	m->more_png = nv;
	if (!(nv[m->nmore_png] = engi_strdup(png_b64)))
		return ENGI_ENOMEM;
	m->nmore_png++;
	return 0;
}

size_t pconv_window_start(const struct pconv *c, int turns)
{
	size_t nasst = 0;
	for (size_t i = 1; i < c->n; i++)
		nasst += c->v[i].role == PM_ASSISTANT;
	if (turns < 1 || nasst <= (size_t)turns)
		return 1;
	size_t skip = nasst - (size_t)turns, seen = 0;
	for (size_t i = 1; i < c->n; i++)
		if (c->v[i].role == PM_ASSISTANT && seen++ == skip)
			return i;
	return 1;
}

/* ---- replies ---- */

void preply_release(struct preply *r)
{
	engi_free(r->text);
	calls_free(r->calls, r->ncalls);
	engi_free(r->stop_reason);
	engi_free(r->thinking_json);
	engi_free(r->request);
	engi_free(r->raw);
	memset(r, 0, sizeof(*r));
}

int wire_add_call(struct preply *r, const char *id, const char *name, const char *args_json,
		  struct engi_error *err)
{
	if (r->ncalls >= 64)
		RAISE(err, ENGI_ETOOBIG, "reply has more than 64 tool calls");
	struct ptool_call *nv = engi_reallocarray(r->calls, r->ncalls + 1, sizeof(*nv));
	if (!nv)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	r->calls = nv;
	struct ptool_call *tc = &r->calls[r->ncalls];
	char idbuf[32];
	if (!id || !id[0]) {
		snprintf(idbuf, sizeof(idbuf), "call_%zu", r->ncalls);
		id = idbuf;
	}
	tc->id = engi_strdup(id);
	tc->name = engi_strdup(name ? name : "");
	tc->args_json = engi_strdup(args_json && args_json[0] ? args_json : "{}");
	if (!tc->id || !tc->name || !tc->args_json) {
		engi_free(tc->id);
		engi_free(tc->name);
		engi_free(tc->args_json);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	r->ncalls++;
	return 0;
}

double provider_cost_usd(const struct provider_config *c, int64_t in, int64_t out)
{
	return ((double)in * c->price_in_per_mtok + (double)out * c->price_out_per_mtok) / 1e6;
}

const char *provider_image_type(const char *b64)
{
	return b64 && !strncmp(b64, "/9j/", 4) ? "image/jpeg" : "image/png";
}

/* ---- tools ---- */

static const struct wire_tool tool_table[] = {
    {"bash",
     "Run a shell command in the working folder of the environment; the reply is its output and "
     "exit code.",
     "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\",\"description\":\"the "
     "command, run with sh -c\"}},\"required\":[\"command\"]}"},
    {"computer",
     "Act on the graphical desktop: move, click, double_click, right_click, drag (x,y to x2,y2), "
     "type text, press keys, scroll (dx, dy), wait, or take a screenshot.",
     "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\",\"enum\":[\"move\","
     "\"click\",\"double_click\",\"right_click\",\"drag\",\"type\",\"key\",\"scroll\",\"wait\","
     "\"screenshot\"]},"
     "\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},\"x2\":{\"type\":\"integer\"},"
     "\"y2\":{\"type\":\"integer\"},"
     "\"text\":{\"type\":\"string\"},\"keys\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
     "\"dx\":{\"type\":\"integer\"},\"dy\":{\"type\":\"integer\"},\"seconds\":{\"type\":\"number\"}"
     "},\"required\":[\"action\"]}"},
    {"read_image",
     "Look at a PNG or JPEG image file in the environment (large images are scaled down).",
     "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]"
     "}"},
    {"ask_user",
     "Ask the person who gave you the task a question (a missing requirement, a choice to "
     "confirm); the reply is their answer.",
     "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\"}},"
     "\"required\":[\"question\"]}"},
    {"done", "Declare the task finished: the deliverables are in place.",
     "{\"type\":\"object\",\"properties\":{\"summary\":{\"type\":\"string\"}},\"required\":["
     "\"summary\"]}"},
    {"fail", "Declare that you cannot finish the task.",
     "{\"type\":\"object\",\"properties\":{\"reason\":{\"type\":\"string\"}},\"required\":["
     "\"reason\"]}"},
};

size_t wire_tools(const struct provider_config *c, const struct wire_tool **out)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(tool_table) / sizeof(tool_table[0]); i++) {
		const char *name = tool_table[i].name;
		if ((!strcmp(name, "read_image") && !c->image_tool) ||
		    (!strcmp(name, "ask_user") && !c->ask_tool))
			continue;
		out[n++] = &tool_table[i];
	}
	return n;
}

/* ---- the wire, dispatched ---- */

char *provider_build_request(const struct provider_config *c, const struct pconv *conv,
			     struct engi_error *err)
{
	json_t *req = c->ops->build(c, conv, err);
	if (!req)
		return NULL;
	char *s = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!s) {
		engi_raise(err, ENGI_ENOMEM, "out of memory building a request");
		return NULL;
	}
	char *out = engi_strdup(s);
	free(s);
	if (!out)
		engi_raise(err, ENGI_ENOMEM, "out of memory building a request");
	return out;
}

int provider_parse_reply(const struct provider_config *c, const char *body, size_t len,
			 struct preply *r, struct engi_error *err)
{
	json_error_t je;
	json_t *root = json_loadb(body, len, 0, &je);
	if (!root)
		RAISE(err, ENGI_EPARSE, "model '%s': reply is not JSON: line %d column %d: %s",
		      c->name, je.line, je.column, je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		RAISE(err, ENGI_EPARSE, "model '%s': reply is not a JSON object", c->name);
	}
	int rc = c->ops->parse(root, r, err);
	json_decref(root);
	if (rc < 0) {
		engi_error_prefix(err, "model '%s'", c->name);
		return rc;
	}
	if (c->tool_mode == TOOLS_TEXT && r->ncalls == 0 && r->text)
		rc = provider_parse_text_actions(r->text, r, err);
	return rc;
}

/* ---- text fallback ---- */

static int text_call(struct preply *r, const char *tool, const char *key, const char *body,
		     size_t n, struct engi_error *err)
{
	while (n && (body[n - 1] == '\n' || body[n - 1] == '\r'))
		n--;
	json_t *args;
	if (!strcmp(tool, "computer")) {
		json_error_t je;
		args = json_loadb(body, n, 0, &je);
		if (!json_is_object(args)) {
			json_decref(args);
			RAISE(err, ENGI_EPARSE, "a ```computer block must hold a JSON object");
		}
	} else {
		args = json_object();
		if (args)
			json_object_set_new(args, key, json_stringn(body, n));
	}
	char *s = args ? json_dumps(args, JSON_COMPACT) : NULL;
	json_decref(args);
	if (!s)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = wire_add_call(r, NULL, tool, s, err);
	free(s);
	return rc;
}

int provider_parse_text_actions(const char *text, struct preply *r, struct engi_error *err)
{
	static const struct {
		const char *fence, *tool, *key;
	} kinds[] = {{"bash", "bash", "command"},	  {"sh", "bash", "command"},
		     {"done", "done", "summary"},	  {"fail", "fail", "reason"},
		     {"computer", "computer", NULL},	  {"read_image", "read_image", "path"},
		     {"ask_user", "ask_user", "question"}};
	const char *p = text;
	while ((p = strstr(p, "```"))) {
		const char *tag = p + 3;
		const char *eol = strchr(tag, '\n');
		if (!eol)
			break;
		const char *close = strstr(eol + 1, "```");
		if (!close)
			break;
		size_t tl = (size_t)(eol - tag);
		while (tl && (tag[tl - 1] == ' ' || tag[tl - 1] == '\r'))
			tl--;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (strlen(kinds[k].fence) == tl && !strncmp(kinds[k].fence, tag, tl)) {
				TRY(text_call(r, kinds[k].tool, kinds[k].key, eol + 1,
					      (size_t)(close - (eol + 1)), err));
				break;
			}
		p = close + 3;
	}
	return 0;
}

/* ---- retries ---- */

static double jitter_unit(void)
{
	static _Thread_local unsigned long long s;
	if (!s)
		s = (unsigned long long)time(NULL) ^ ((unsigned long long)(size_t)&s << 1) ^
		    0x9e3779b97f4a7c15ULL;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / 9007199254740992.0;
}

/* Replaces every occurrence of key in s by "[redacted]" (in place: the
 * replacement is never longer than a key of 10 or more bytes; shorter keys
 * are blanked with '*'). */
static void scrub(char *s, const char *key)
{
	size_t kl = key ? strlen(key) : 0;
	if (!s || kl == 0)
		return;
	char *p;
	while ((p = strstr(s, key))) {
		if (kl >= 10) {
			memcpy(p, "[redacted]", 10);
			memmove(p + 10, p + kl, strlen(p + kl) + 1);
		} else {
			memset(p, '*', kl);
		}
	}
}

/* Sleeps wait seconds, but not past the deadline; 0, or ENGI_ETIMEOUT when
 * the deadline came first. */
static int sleep_until_deadline(double wait, double deadline)
{
	if (deadline > 0 && clk_now_mono() + wait >= deadline) {
		clk_sleep_seconds(fmax(deadline - clk_now_mono(), 0));
		return ENGI_ETIMEOUT;
	}
	clk_sleep_seconds(wait);
	return 0;
}

/* One reply that is not 200: infrastructure (unavailable, refused
 * credentials) or the request's fault. */
static int http_refusal(const struct provider_config *c, const char *api_key,
			const struct http_response *h, int *retry, double *wait,
			struct engi_error *e)
{
	size_t show = h->len < 200 ? h->len : 200;
	char *snip = text_utf8_clean(h->body, show, NULL);
	scrub(snip, api_key);
	int rc = ENGI_EIO;
	const char *why = "";
	if (h->status == 401 || h->status == 403) {
		rc = ENGI_EAUTH;
		why = " (the endpoint refused the credentials)";
	} else if (h->status == 429 || h->status >= 500) {
		rc = ENGI_EUNAVAIL;
		*retry = 1;
		*wait = h->retry_after_s;
	}
	engi_raise(e, rc, "model '%s': HTTP %ld%s: %s", c->name, h->status, why, snip ? snip : "");
	engi_free(snip);
	return rc;
}

int provider_complete(const struct provider_config *c, const char *api_key,
		      const struct pconv *conv, const struct provider_gate *gate, double deadline,
		      struct preply *r, struct engi_error *err)
{
	memset(r, 0, sizeof(*r));
	r->request = provider_build_request(c, conv, err);
	if (!r->request)
		return err && err->code ? err->code : ENGI_ENOMEM;
	char url[600];
	snprintf(url, sizeof(url), "%s%s", c->base_url, c->ops->path);
	const char *hdr[PROVIDER_MAX_HEADERS + 8];
	size_t nh = 0;
	char auth[1024] = "";
	hdr[nh++] = "Content-Type: application/json";
	if (api_key && api_key[0]) {
		snprintf(auth, sizeof(auth), "%s%s", c->ops->auth, api_key);
		hdr[nh++] = auth;
	}
	for (const char *const *h = c->ops->headers; h && *h && nh < 8; h++)
		hdr[nh++] = *h;
	for (size_t i = 0; i < c->nheaders; i++)
		hdr[nh++] = c->headers[i];
	double est_tokens = (double)strlen(r->request) / 4.0;
	int rc = 0;
	struct engi_error e;
	engi_error_init(&e);
	for (int attempt = 0;; attempt++) {
		r->attempts = attempt + 1;
		double pace = gate && gate->ask ? gate->ask(gate->arg, est_tokens)
						: provider_throttle_reserve(c, est_tokens);
		double timeout = c->timeout_s, left = deadline - clk_now_mono();
		int bounded = deadline > 0 && left - pace < timeout;
		if (sleep_until_deadline(pace, deadline) < 0 || (bounded && left - pace <= 0)) {
			if (gate && gate->tell) /* the slot asked for goes unused */
				gate->tell(gate->arg, 0, 0, est_tokens);
			rc = engi_raise(
			    err, ENGI_ETIMEOUT,
			    "model '%s': the episode's wall time ran out before a reply", c->name);
			break;
		}
		if (bounded)
			timeout = deadline - clk_now_mono();
		struct http_response h;
		engi_error_init(&e);
		rc = http_post(url, hdr, nh, r->request, strlen(r->request), timeout, c->reply_cap,
			       &h, &e);
		int retry = 0;
		double wait = -1;
		if (rc == 0 && h.status == 200) {
			r->raw = text_utf8_clean(h.body, h.len, NULL);
			scrub(r->raw, api_key);
			rc = provider_parse_reply(c, h.body, h.len, r, &e);
			if (rc == 0 && !(gate && gate->tell))
				provider_throttle_used(c, (double)(r->tokens_in + r->tokens_out),
						       est_tokens);
		} else if (rc == 0) {
			rc = http_refusal(c, api_key, &h, &retry, &wait, &e);
		} else if (rc == ENGI_ETIMEOUT && bounded) {
			engi_error_init(&e);
			engi_raise(
			    &e, rc,
			    "model '%s': the episode's wall time ran out waiting for a reply",
			    c->name);
		} else if (rc == ENGI_ETIMEOUT) {
			rc = ENGI_EUNAVAIL; /* the endpoint is too slow: not the model's answer */
			e.code = rc;
			retry = 1;
		} else {
			retry =
			    rc == ENGI_EUNAVAIL || rc == ENGI_EPARSE; /* no reply, or cut short */
		}
		if (gate && gate->tell)
			gate->tell(gate->arg, h.status, (double)(r->tokens_in + r->tokens_out),
				   est_tokens);
		http_response_release(&h);
		if (rc == 0)
			break;
		snprintf(r->last_error, sizeof(r->last_error), "%s", e.msg);
		if (!retry || attempt >= c->max_retries) {
			engi_raise(err, rc, "%s%s", e.msg, attempt ? " (after retries)" : "");
			break;
		}
		if (wait < 0)
			wait = c->retry_base_s * pow(2.0, attempt) * (0.5 + 0.5 * jitter_unit());
		if (wait > PROVIDER_RETRY_MAX_S)
			wait = PROVIDER_RETRY_MAX_S;
		double w0 = clk_now_mono();
		int src = sleep_until_deadline(wait, deadline);
		r->wait_s += clk_now_mono() - w0;
		if (src < 0) {
			/* the endpoint was failing when the time ran out: still its failure */
			engi_raise(err, rc,
				   "%s (the episode's wall time ran out before the next try)",
				   e.msg);
			break;
		}
	}
	return rc;
}

/* ---- per-process throttle ---- */

#define THROTTLE_SLOTS 64

struct bucket {
	char name[64];
	double next_req; /* monotonic time the next request may start */
	double tokens;	 /* tokens in the tpm bucket */
	double refilled; /* when tokens was last refilled */
};

static pthread_mutex_t throttle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bucket buckets[THROTTLE_SLOTS];
static size_t nbuckets;

static struct bucket *bucket_for(const struct provider_config *c, double now)
{
	for (size_t i = 0; i < nbuckets; i++)
		if (!strcmp(buckets[i].name, c->name))
			return &buckets[i];
	if (nbuckets == THROTTLE_SLOTS)
		return NULL;
	struct bucket *b = &buckets[nbuckets++];
	snprintf(b->name, sizeof(b->name), "%s", c->name);
	b->next_req = now;
	b->tokens = c->tpm;
	b->refilled = now;
	return b;
}

void provider_throttle(const struct provider_config *c, double est_tokens)
{
	clk_sleep_seconds(provider_throttle_reserve(c, est_tokens));
}

double provider_throttle_reserve(const struct provider_config *c, double est_tokens)
{
	if (c->rpm <= 0 && c->tpm <= 0)
		return 0;
	pthread_mutex_lock(&throttle_lock);
	double now = clk_now_mono();
	struct bucket *b = bucket_for(c, now);
	double start = now;
	if (b) {
		if (c->rpm > 0) {
			/* requests are spaced evenly: no burst at the start */
			if (b->next_req > start)
				start = b->next_req;
			b->next_req = start + 60.0 / c->rpm;
		}
		if (c->tpm > 0) {
			double need = est_tokens < c->tpm ? est_tokens : c->tpm;
			b->tokens += (now - b->refilled) * c->tpm / 60.0;
			if (b->tokens > c->tpm)
				b->tokens = c->tpm;
			b->refilled = now;
			double short_by = need - b->tokens;
			if (short_by > 0 && now + short_by * 60.0 / c->tpm > start)
				start = now + short_by * 60.0 / c->tpm;
			b->tokens -= need;
		}
	}
	pthread_mutex_unlock(&throttle_lock);
	return start - now;
}

void provider_throttle_used(const struct provider_config *c, double tokens, double est_tokens)
{
	if (c->tpm <= 0)
		return;
	pthread_mutex_lock(&throttle_lock);
	struct bucket *b = bucket_for(c, clk_now_mono());
	if (b)
		b->tokens -= tokens - (est_tokens < c->tpm ? est_tokens : c->tpm);
	pthread_mutex_unlock(&throttle_lock);
}
