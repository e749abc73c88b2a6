/*
 * Anthropic Messages: the request body and the reply parser. The system
 * prompt is a top-level field; tool results are tool_result blocks in a user
 * message, and consecutive results (and any user text after them) share one
 * user message, as the API requires roles to alternate.
 *
 * Extended thinking (thinking_budget: from thinking_budget_tokens or
 * reasoning_effort) is sent as {"thinking": {"type": "enabled",
 * "budget_tokens": N}}, without temperature, which the API refuses with it.
 * The thinking and redacted_thinking blocks of a reply are kept, signatures
 * included, and sent back first in that assistant message: the API checks
 * them when tool use continues a thinking turn.
 */
#include "wire.h"

#include "engi/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ANTHROPIC_MAX_TOKENS_DEFAULT 4096

static json_t *image_block(const char *b64)
{
	return json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "image", "source", "type", "base64",
			 "media_type", provider_image_type(b64), "data", b64);
}

static json_t *text_block(const char *t)
{
	return json_pack("{s:s,s:s}", "type", "text", "text", t[0] ? t : "(empty)");
}

static json_t *anthropic_build(const struct provider_config *c, const struct pconv *conv,
			       struct engi_error *err)
{
	json_t *msgs = json_array();
	json_t *req = json_pack(
	    "{s:s,s:o,s:I}", "model", c->model, "messages", msgs, "max_tokens",
	    (json_int_t)(c->max_tokens > 0 ? c->max_tokens : ANTHROPIC_MAX_TOKENS_DEFAULT));
	if (!req) {
		engi_raise(err, ENGI_ENOMEM, "out of memory building a request");
		return NULL;
	}
	if (conv->system)
		json_object_set_new(req, "system", json_string(conv->system));
	size_t start = pconv_window_start(conv, c->history_turns);
	json_t *cur = NULL; /* content of the open message */
	int cur_role = -1;
	for (size_t i = 0; i < conv->n; i++) {
		if (i && i < start)
			continue;
		const struct pmsg *m = &conv->v[i];
		int role = m->role == PM_ASSISTANT ? PM_ASSISTANT : PM_USER;
		if (role != cur_role) {
			cur = json_array();
			json_array_append_new(msgs,
					      json_pack("{s:s,s:o}", "role",
							role == PM_ASSISTANT ? "assistant" : "user",
							"content", cur));
			cur_role = role;
		}
		switch (m->role) {
		case PM_USER:
			json_array_append_new(cur, text_block(m->text));
			if (m->png_b64)
				json_array_append_new(cur, image_block(m->png_b64));
			for (size_t k = 0; k < m->nmore_png; k++)
				json_array_append_new(cur, image_block(m->more_png[k]));
			break;
		case PM_ASSISTANT: {
			json_t *th =
			    m->thinking_json ? json_loads(m->thinking_json, 0, NULL) : NULL;
			size_t ti;
			json_t *tb;
			json_array_foreach(th, ti, tb) json_array_append(cur, tb);
			json_decref(th);
			if (m->text[0])
				json_array_append_new(cur, text_block(m->text));
			for (size_t k = 0; k < m->ncalls; k++) {
				json_t *in = json_loads(m->calls[k].args_json, 0, NULL);
				if (!json_is_object(in)) {
					json_decref(in);
					in = json_object();
				}
				json_array_append_new(
				    cur, json_pack("{s:s,s:s,s:s,s:o}", "type", "tool_use", "id",
						   m->calls[k].id, "name", m->calls[k].name,
						   "input", in));
			}
			if (!m->text[0] && !m->ncalls)
				json_array_append_new(cur, text_block(""));
			break;
		}
		case PM_TOOL: {
			json_t *content = json_array();
			json_array_append_new(content, text_block(m->text));
			if (m->png_b64)
				json_array_append_new(content, image_block(m->png_b64));
			json_array_append_new(cur, json_pack("{s:s,s:s,s:o}", "type", "tool_result",
							     "tool_use_id", m->tool_call_id,
							     "content", content));
			break;
		}
		}
	}
	if (c->thinking_budget > 0)
		json_object_set_new(req, "thinking",
				    json_pack("{s:s,s:I}", "type", "enabled", "budget_tokens",
					      (json_int_t)c->thinking_budget));
	else if (!isnan(c->temperature))
		json_object_set_new(req, "temperature", json_real(c->temperature));
	if (c->tool_mode == TOOLS_NATIVE) {
		const struct wire_tool *t[8];
		size_t n = wire_tools(c, t);
		json_t *tools = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(
			    tools, json_pack("{s:s,s:s,s:o}", "name", t[i]->name, "description",
					     t[i]->description, "input_schema",
					     json_loads(t[i]->schema_json, 0, NULL)));
		json_object_set_new(req, "tools", tools);
	}
	return req;
}

/* Appends a thinking or redacted_thinking block to r->thinking_json, with
 * only the fields the API defines. */
static int keep_thinking(struct preply *r, json_t *b, const char *bt, size_t i,
			 struct engi_error *err)
{
	int redacted = !strcmp(bt, "redacted_thinking");
	json_t *body = json_object_get(b, redacted ? "data" : "thinking");
	json_t *sig = json_object_get(b, "signature");
	if (!json_is_string(body) || (sig && !json_is_string(sig)))
		RAISE(err, ENGI_EPARSE, "reply has a malformed %s block at /content/%zu", bt, i);
	json_t *all = r->thinking_json ? json_loads(r->thinking_json, 0, NULL) : json_array();
	json_t *keep = json_pack("{s:s,s:O}", "type", bt, redacted ? "data" : "thinking", body);
	if (keep && sig)
		json_object_set(keep, "signature", sig);
	char *s = NULL;
	if (all && keep && json_array_append_new(all, keep) == 0) {
		keep = NULL;
		s = json_dumps(all, JSON_COMPACT);
	}
	json_decref(keep);
	json_decref(all);
	if (!s)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	engi_free(r->thinking_json);
	r->thinking_json = engi_strdup(s);
	free(s);
	if (!r->thinking_json)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	return 0;
}

static int anthropic_parse(json_t *root, struct preply *r, struct engi_error *err)
{
	json_t *type = json_object_get(root, "type");
	if (json_is_string(type) && !strcmp(json_string_value(type), "error"))
		RAISE(err, ENGI_EPARSE, "reply is an error object");
	json_t *content = json_object_get(root, "content");
	if (!json_is_array(content))
		RAISE(err, ENGI_EPARSE, "reply has no /content array");
	json_t *usage = json_object_get(root, "usage");
	json_t *it = json_object_get(usage, "input_tokens");
	json_t *ot = json_object_get(usage, "output_tokens");
	if ((it && !json_is_integer(it)) || (ot && !json_is_integer(ot)))
		RAISE(err, ENGI_EPARSE, "reply has a malformed /usage");
	r->tokens_in = it ? json_integer_value(it) : 0;
	r->tokens_out = ot ? json_integer_value(ot) : 0;
	if (r->tokens_in < 0 || r->tokens_out < 0)
		RAISE(err, ENGI_EPARSE, "reply has negative token counts");
	json_t *sr = json_object_get(root, "stop_reason");
	if (json_is_string(sr) && !(r->stop_reason = engi_strdup(json_string_value(sr))))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	size_t i;
	json_t *b;
	json_array_foreach(content, i, b)
	{
		const char *bt = json_string_value(json_object_get(b, "type"));
		if (!bt)
			RAISE(err, ENGI_EPARSE, "reply has a block without a type at /content/%zu",
			      i);
		if (!strcmp(bt, "text")) {
			const char *t = json_string_value(json_object_get(b, "text"));
			if (!t)
				RAISE(err, ENGI_EPARSE,
				      "reply has a text block without text at /content/%zu", i);
			size_t old = r->text ? strlen(r->text) : 0;
			char *nt = engi_realloc(r->text, old + strlen(t) + 1);
			if (!nt)
				RAISE(err, ENGI_ENOMEM, "out of memory");
			memcpy(nt + old, t, strlen(t) + 1);
			r->text = nt;
		} else if (!strcmp(bt, "thinking") || !strcmp(bt, "redacted_thinking")) {
			TRY(keep_thinking(r, b, bt, i, err));
		} else if (!strcmp(bt, "tool_use")) {
			json_t *name = json_object_get(b, "name");
			json_t *input = json_object_get(b, "input");
			if (!json_is_string(name) || !json_is_object(input))
				RAISE(err, ENGI_EPARSE,
				      "reply has a malformed tool_use at /content/%zu", i);
			char *args = json_dumps(input, JSON_COMPACT);
			if (!args)
				RAISE(err, ENGI_ENOMEM, "out of memory");
			int rc = wire_add_call(r, json_string_value(json_object_get(b, "id")),
					       json_string_value(name), args, err);
			free(args);
			TRY(rc);
		}
	}
	return 0;
}

static const char *const anthropic_headers[] = {"anthropic-version: 2023-06-01", NULL};

const struct provider_ops anthropic_ops = {
    .name = "anthropic",
    .summary = "Anthropic Messages",
    .base_url = "https://api.anthropic.com/v1",
    .path = "/messages",
    .auth = "x-api-key: ",
    .headers = anthropic_headers,
    .thinking = 1,
    .build = anthropic_build,
    .parse = anthropic_parse,
};
