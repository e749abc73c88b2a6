/*
 * OpenAI-compatible Chat Completions: the request body and the reply parser.
 * Tool results are "tool" messages, one per call with its tool_call_id; the
 * images that come with the results of one turn follow them in one user
 * message (tool messages carry text only, and nothing may come between an
 * assistant's tool calls and their results).
 */
#include "wire.h"

#include "engi/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *image_part(const char *b64)
{
	size_t n = strlen(b64) + 32;
	char *url = engi_malloc(n);
	if (!url)
		return NULL;
	snprintf(url, n, "data:%s;base64,%s", provider_image_type(b64), b64);
	json_t *p = json_pack("{s:s,s:{s:s}}", "type", "image_url", "image_url", "url", url);
	engi_free(url);
	return p;
}

static json_t *user_content(const char *text, const char *png, char *const *more, size_t nmore)
{
	if (!png && !nmore)
		return json_string(text);
	json_t *a = json_pack("[{s:s,s:s}]", "type", "text", "text", text);
	if (a && png)
		json_array_append_new(a, image_part(png));
	for (size_t i = 0; a && i < nmore; i++)
		json_array_append_new(a, image_part(more[i]));
	return a;
}

/* The user message that shows the images of a run of tool results; NULL
 * when none of them has one. */
static json_t *tool_images(const struct pmsg *v, size_t n)
{
	json_t *a = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].png_b64)
			continue;
		char label[160];
		snprintf(label, sizeof(label),
			 "the image of the result of call %.100s (%.40s):", v[i].tool_call_id,
			 v[i].tool_name);
		if (!a && !(a = json_array()))
			return NULL;
		json_array_append_new(a, json_pack("{s:s,s:s}", "type", "text", "text", label));
		json_array_append_new(a, image_part(v[i].png_b64));
	}
	return a ? json_pack("{s:s,s:o}", "role", "user", "content", a) : NULL;
}

static int add_msg(json_t *msgs, const struct pmsg *m)
{
	json_t *o = NULL;
	switch (m->role) {
	case PM_USER:
		o = json_pack("{s:s,s:o}", "role", "user", "content",
			      user_content(m->text, m->png_b64, m->more_png, m->nmore_png));
		break;
	case PM_ASSISTANT: {
		o = json_pack("{s:s,s:s}", "role", "assistant", "content", m->text);
		if (o && m->ncalls) {
			json_t *tc = json_array();
			for (size_t i = 0; i < m->ncalls; i++)
				json_array_append_new(tc, json_pack("{s:s,s:s,s:{s:s,s:s}}", "id",
								    m->calls[i].id, "type",
								    "function", "function", "name",
								    m->calls[i].name, "arguments",
								    m->calls[i].args_json));
			json_object_set_new(o, "tool_calls", tc);
		}
		break;
	}
	case PM_TOOL:
		o = json_pack("{s:s,s:s,s:s}", "role", "tool", "tool_call_id", m->tool_call_id,
			      "content", m->text);
		break;
	}
	if (!o)
		return ENGI_ENOMEM;
	return json_array_append_new(msgs, o) < 0 ? ENGI_ENOMEM : 0;
}

static json_t *openai_build(const struct provider_config *c, const struct pconv *conv,
			    struct engi_error *err)
{
	json_t *msgs = json_array();
	json_t *req = json_pack("{s:s,s:o}", "model", c->model, "messages", msgs);
	if (!req) {
		engi_raise(err, ENGI_ENOMEM, "out of memory building a request");
		return NULL;
	}
	int rc = 0;
	if (conv->system)
		rc = json_array_append_new(msgs, json_pack("{s:s,s:s}", "role", "system", "content",
							   conv->system)) < 0
			 ? ENGI_ENOMEM
			 : 0;
	size_t start = pconv_window_start(conv, c->history_turns);
	for (size_t i = 0; rc == 0 && i < conv->n; i++) {
		if (i && i < start)
			continue;
		rc = add_msg(msgs, &conv->v[i]);
		/* after the last result of a turn: its images */
		size_t first = i;
		while (first > start && conv->v[first - 1].role == PM_TOOL)
			first--;
		if (rc == 0 && conv->v[i].role == PM_TOOL &&
		    (i + 1 == conv->n || conv->v[i + 1].role != PM_TOOL)) {
			json_t *img = tool_images(conv->v + first, i + 1 - first);
			if (img && json_array_append_new(msgs, img) < 0)
				rc = ENGI_ENOMEM;
		}
	}
	if (!isnan(c->temperature))
		json_object_set_new(req, "temperature", json_real(c->temperature));
	if (c->max_tokens > 0)
		json_object_set_new(req,
				    c->token_field == TOKEN_FIELD_MAX_COMPLETION_TOKENS
					? "max_completion_tokens"
					: "max_tokens",
				    json_integer(c->max_tokens));
	if (c->reasoning_effort[0])
		json_object_set_new(req, "reasoning_effort", json_string(c->reasoning_effort));
	if (c->tool_mode == TOOLS_NATIVE) {
		const struct wire_tool *t[8];
		size_t n = wire_tools(c, t);
		json_t *tools = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *params = json_loads(t[i]->schema_json, 0, NULL);
			json_array_append_new(
			    tools, json_pack("{s:s,s:{s:s,s:s,s:o}}", "type", "function",
					     "function", "name", t[i]->name, "description",
					     t[i]->description, "parameters", params));
		}
		json_object_set_new(req, "tools", tools);
	}
	if (rc < 0) {
		json_decref(req);
		engi_raise(err, ENGI_ENOMEM, "out of memory building a request");
		return NULL;
	}
	return req;
}

static int openai_parse(json_t *root, struct preply *r, struct engi_error *err)
{
	json_t *choices = json_object_get(root, "choices");
	json_t *msg = json_object_get(json_array_get(choices, 0), "message");
	if (!json_is_object(msg))
		RAISE(err, ENGI_EPARSE, "reply has no /choices/0/message");
	json_t *usage = json_object_get(root, "usage");
	json_t *pt = json_object_get(usage, "prompt_tokens");
	json_t *ct = json_object_get(usage, "completion_tokens");
	if ((pt && !json_is_integer(pt)) || (ct && !json_is_integer(ct)))
		RAISE(err, ENGI_EPARSE, "reply has a malformed /usage");
	r->tokens_in = pt ? json_integer_value(pt) : 0;
	r->tokens_out = ct ? json_integer_value(ct) : 0;
	if (r->tokens_in < 0 || r->tokens_out < 0)
		RAISE(err, ENGI_EPARSE, "reply has negative token counts");
	json_t *fr = json_object_get(json_array_get(choices, 0), "finish_reason");
	if (json_is_string(fr) && !(r->stop_reason = engi_strdup(json_string_value(fr))))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	json_t *content = json_object_get(msg, "content");
	if (content && !json_is_null(content) && !json_is_string(content))
		RAISE(err, ENGI_EPARSE, "reply has a non-string /choices/0/message/content");
	if (json_is_string(content) && !(r->text = engi_strdup(json_string_value(content))))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	json_t *calls = json_object_get(msg, "tool_calls");
	if (calls && !json_is_null(calls) && !json_is_array(calls))
		RAISE(err, ENGI_EPARSE, "reply has a non-array /choices/0/message/tool_calls");
	size_t i;
	json_t *tc;
	json_array_foreach(calls, i, tc)
	{
		json_t *fn = json_object_get(tc, "function");
		json_t *name = json_object_get(fn, "name");
		json_t *args = json_object_get(fn, "arguments");
		if (!json_is_string(name) || (args && !json_is_string(args)))
			RAISE(err, ENGI_EPARSE,
			      "reply has a malformed /choices/0/message/tool_calls/%zu", i);
		TRY(wire_add_call(r, json_string_value(json_object_get(tc, "id")),
				  json_string_value(name), args ? json_string_value(args) : "{}",
				  err));
	}
	return 0;
}

const struct provider_ops openai_ops = {
    .name = "openai",
    .summary = "OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp server, gateways)",
    .base_url = "https://api.openai.com/v1",
    .path = "/chat/completions",
    .auth = "Authorization: Bearer ",
    .build = openai_build,
    .parse = openai_parse,
};
