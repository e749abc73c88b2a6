/*
 * The providers' wire formats: requests declare the tools and carry no key,
 * the history window keeps the instruction and the last N turns, Anthropic
 * roles alternate with tool results merged, replies of both APIs parse into
 * tool calls and usage, malformed replies fail with ENGI_EPARSE (also under
 * every failing allocation), and the text fallback finds fenced actions.
 */
#include "check.h"
#include "engi/alloc.h"
#include "provider.h"

#include <jansson.h>
#include <stdlib.h>

static void cfg(struct provider_config *c, const char *extra)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"name\":\"m\",\"provider\":\"%s\",\"model\":\"x\",\"api_key_env\":\"K\","
		 "\"price_in_per_mtok\":3,\"price_out_per_mtok\":15%s}",
		 extra && strstr(extra, "anthropic") ? "anthropic" : "openai", extra ? extra : "");
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(provider_config_parse(c, buf, &e), 0);
}

static json_t *build(const struct provider_config *c, const struct pconv *conv)
{
	struct engi_error e;
	engi_error_init(&e);
	char *s = provider_build_request(c, conv, &e);
	CHECK(s != NULL);
	json_t *j = s ? json_loads(s, 0, NULL) : NULL;
	CHECK(j != NULL);
	engi_free(s);
	return j;
}

static void conversation(struct pconv *conv, int turns)
{
	pconv_init(conv);
	pconv_set_system(conv, "sys");
	pconv_user(conv, "the instruction", NULL);
	for (int i = 0; i < turns; i++) {
		char id[16], cmd[64];
		snprintf(id, sizeof(id), "c%d", i);
		snprintf(cmd, sizeof(cmd), "{\"command\":\"echo %d\"}", i);
		struct ptool_call tc[2] = {{id, "bash", cmd},
					   {"z", "bash", "{\"command\":\"true\"}"}};
		tc[1].id = i % 2 ? "odd" : "even";
		pconv_assistant(conv, i % 3 ? "" : "thinking", tc, 2);
		pconv_tool(conv, id, "bash", "out", NULL);
		pconv_tool(conv, tc[1].id, "bash", "exit code: 0", i == 3 ? "iVBORw0KGgo=" : NULL);
	}
}

static void test_config_errors(void)
{
	struct provider_config c;
	struct engi_error e;
	engi_error_init(&e);
	CHECK(provider_config_parse(&c, "{\"name\":\"a\",\"provider\":\"nope\",\"model\":\"x\"}",
				    &e) == ENGI_EINVALID);
	CHECK(strstr(e.msg, "model 'a': /provider: 'nope'") != NULL);
	engi_error_init(&e);
	CHECK(provider_config_parse(&c, "{\"name\":\"a\",\"provider\":\"openai\"}", &e) ==
	      ENGI_EPARSE);
	CHECK_STR(e.msg, "model 'a': /model: missing required field");
	engi_error_init(&e);
	CHECK(provider_config_parse(&c,
				    "{\"name\":\"a\",\"provider\":\"openai\",\"model\":\"x\","
				    "\"headers\":{\"A\":\"b\\r\\nc\"}}",
				    &e) == ENGI_EPARSE);
	CHECK_STR(e.msg, "model 'a': /headers/A: expected a one-line string");
	engi_error_init(&e);
	CHECK(provider_config_parse(
		  &c,
		  "{\"name\":\"a\",\"provider\":\"openai\",\"model\":\"x\",\"tools\":\"maybe\"}",
		  &e) == ENGI_EINVALID);
	engi_error_init(&e);
	CHECK_INT(
	    provider_config_parse(&c,
				  "{\"name\":\"a\",\"provider\":\"anthropic\",\"model\":\"x\","
				  "\"base_url\":\"http://h/v1/\",\"headers\":{\"X-A\":\"1\"}}",
				  &e),
	    0);
	CHECK_STR(c.base_url, "http://h/v1");
	CHECK_INT(c.history_turns, 15);
	CHECK_NEAR(c.timeout_s, 300, 0);
	CHECK_INT(c.nheaders, 1);
	CHECK_STR(c.headers[0], "X-A: 1");
	provider_config_release(&c);
}

static void test_openai_request(void)
{
	struct provider_config c;
	cfg(&c, ",\"history_turns\":3,\"temperature\":0.5,\"reasoning_effort\":\"low\"");
	struct pconv conv;
	conversation(&conv, 6);
	CHECK_INT(pconv_window_start(&conv, 3), 1 + 3 * 3);
	json_t *r = build(&c, &conv);
	json_t *msgs = json_object_get(r, "messages");
	/* system, instruction, 3 turns x (assistant + 2 tool), and the image of
	 * turn 3 as a user message after its tool message */
	CHECK_INT(json_array_size(msgs), 2 + 3 * 3 + 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
	CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
		  "the instruction");
	json_t *a = json_array_get(msgs, 2);
	CHECK_STR(json_string_value(json_object_get(a, "role")), "assistant");
	CHECK_STR(
	    json_string_value(json_object_get(
		json_object_get(json_array_get(json_object_get(a, "tool_calls"), 0), "function"),
		"arguments")),
	    "{\"command\":\"echo 3\"}");
	json_t *tools = json_object_get(r, "tools");
	CHECK_INT(json_array_size(tools), 4);
	CHECK_STR(json_string_value(json_object_get(
		      json_object_get(json_array_get(tools, 1), "function"), "name")),
		  "computer");
	CHECK(json_real_value(json_object_get(r, "temperature")) == 0.5);
	CHECK_STR(json_string_value(json_object_get(r, "reasoning_effort")), "low");
	char *s = json_dumps(r, 0);
	CHECK(strstr(s, "data:image/png;base64,iVBORw0KGgo=") != NULL);
	free(s);
	json_decref(r);
	pconv_release(&conv);
	provider_config_release(&c);

	cfg(&c, ",\"image_tool\":true");
	conversation(&conv, 20);
	r = build(&c, &conv);
	CHECK_INT(json_array_size(json_object_get(r, "tools")), 5);
	/* the default window: 15 turns; turn 3 and its image fell out */
	CHECK_INT(json_array_size(json_object_get(r, "messages")), 2 + 15 * 3);
	s = json_dumps(r, 0);
	CHECK(strstr(s, "data:image/png;base64,iVBORw0KGgo=") == NULL);
	CHECK(strstr(s, "the instruction") != NULL);
	CHECK(strstr(s, "read_image") != NULL);
	free(s);
	json_decref(r);
	pconv_release(&conv);
	provider_config_release(&c);
}

static void test_anthropic_request(void)
{
	struct provider_config c;
	cfg(&c, ",\"provider\":\"anthropic\",\"max_tokens\":77");
	struct pconv conv;
	conversation(&conv, 4);
	pconv_user(&conv, "a nudge", NULL);
	json_t *r = build(&c, &conv);
	CHECK_STR(json_string_value(json_object_get(r, "system")), "sys");
	CHECK_INT(json_integer_value(json_object_get(r, "max_tokens")), 77);
	json_t *msgs = json_object_get(r, "messages");
	/* user, then (assistant, user with both results) x 4; the nudge joins the last */
	CHECK_INT(json_array_size(msgs), 1 + 2 * 4);
	const char *prev = "";
	for (size_t i = 0; i < json_array_size(msgs); i++) {
		const char *role =
		    json_string_value(json_object_get(json_array_get(msgs, i), "role"));
		CHECK(strcmp(role, prev) != 0);
		prev = role;
	}
	json_t *last = json_object_get(json_array_get(msgs, 8), "content");
	CHECK_INT(json_array_size(last), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(last, 0), "type")),
		  "tool_result");
	CHECK_STR(json_string_value(json_object_get(json_array_get(last, 0), "tool_use_id")), "c3");
	json_t *img = json_array_get(json_object_get(json_array_get(last, 1), "content"), 1);
	CHECK_STR(json_string_value(json_object_get(img, "type")), "image");
	json_t *use = json_array_get(json_object_get(json_array_get(msgs, 1), "content"), 1);
	CHECK_STR(json_string_value(json_object_get(use, "type")), "tool_use");
	CHECK_STR(json_string_value(json_object_get(json_object_get(use, "input"), "command")),
		  "echo 0");
	CHECK_STR(json_string_value(
		      json_object_get(json_array_get(json_object_get(r, "tools"), 0), "name")),
		  "bash");
	json_decref(r);
	pconv_release(&conv);
	provider_config_release(&c);
}

static const char oa_reply[] =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"hi\",\"tool_calls\":["
    "{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{"
    "\\\"command\\\":\\\"ls\\\"}\"}},"
    "{\"id\":\"b\",\"type\":\"function\",\"function\":{\"name\":\"done\",\"arguments\":\"{"
    "\\\"summary\\\":\\\"s\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":"
    "200}}";
static const char an_reply[] =
    "{\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\","
    "\"text\":\"b\"},"
    "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"computer\",\"input\":{\"action\":\"click\","
    "\"x\":3,\"y\":4}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":7,\"output_tokens\":9}}";

static void test_replies(void)
{
	struct provider_config c, ca;
	cfg(&c, NULL);
	cfg(&ca, ",\"provider\":\"anthropic\"");
	struct preply r = {0};
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(provider_parse_reply(&c, oa_reply, strlen(oa_reply), &r, &e), 0);
	CHECK_INT(r.ncalls, 2);
	CHECK_STR(r.calls[0].name, "bash");
	CHECK_STR(r.calls[0].args_json, "{\"command\":\"ls\"}");
	CHECK_STR(r.calls[1].id, "b");
	CHECK_STR(r.text, "hi");
	CHECK_INT(r.tokens_in, 1000);
	CHECK_INT(r.tokens_out, 200);
	CHECK_NEAR(provider_cost_usd(&c, r.tokens_in, r.tokens_out), 0.006, 1e-15);
	preply_release(&r);
	CHECK_INT(provider_parse_reply(&ca, an_reply, strlen(an_reply), &r, &e), 0);
	CHECK_STR(r.text, "ab");
	CHECK_INT(r.ncalls, 1);
	CHECK_STR(r.calls[0].args_json, "{\"action\":\"click\",\"x\":3,\"y\":4}");
	CHECK_STR(r.stop_reason, "tool_use");
	CHECK_INT(r.tokens_out, 9);
	preply_release(&r);

	static const char *const bad_oa[] = {
	    "",
	    "{",
	    "[]",
	    "{\"choices\":[]}",
	    "{\"choices\":[{\"message\":{\"content\":3}}]}",
	    "{\"choices\":[{\"message\":{\"tool_calls\":{}}}]}",
	    "{\"choices\":[{\"message\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{}\"}}]}}]"
	    "}",
	    "{\"choices\":[{\"message\":{}}],\"usage\":{\"prompt_tokens\":\"many\"}}",
	    "{\"choices\":[{\"message\":{}}],\"usage\":{\"prompt_tokens\":-5}}",
	    NULL};
	for (const char *const *b = bad_oa; *b; b++) {
		engi_error_init(&e);
		CHECK_INT(provider_parse_reply(&c, *b, strlen(*b), &r, &e), ENGI_EPARSE);
		CHECK(strstr(e.msg, "model 'm'") != NULL);
		preply_release(&r);
	}
	static const char *const bad_an[] = {
	    "{\"type\":\"error\",\"error\":{}}",
	    "{\"content\":{}}",
	    "{\"content\":[{}]}",
	    "{\"content\":[{\"type\":\"text\"}]}",
	    "{\"content\":[{\"type\":\"tool_use\",\"name\":\"bash\",\"input\":[]}]}",
	    NULL};
	for (const char *const *b = bad_an; *b; b++) {
		engi_error_init(&e);
		CHECK_INT(provider_parse_reply(&ca, *b, strlen(*b), &r, &e), ENGI_EPARSE);
		preply_release(&r);
	}
	/* every truncation of a good reply fails cleanly */
	for (size_t n = 0; n + 1 < sizeof(oa_reply) - 1; n++) {
		engi_error_init(&e);
		int rc = provider_parse_reply(&c, oa_reply, n, &r, &e);
		CHECK(rc == ENGI_EPARSE);
		preply_release(&r);
	}
	/* failing allocations: an error, never a crash or a leak */
	for (long k = 1; k < 40; k++) {
		engi_error_init(&e);
		engi_alloc_fail_after(k);
		int rc = provider_parse_reply(&ca, an_reply, strlen(an_reply), &r, &e);
		engi_alloc_fail_after(0);
		CHECK(rc == 0 || rc == ENGI_ENOMEM);
		preply_release(&r);
	}
	provider_config_release(&c);
	provider_config_release(&ca);
}

static void test_text_fallback(void)
{
	struct provider_config c;
	cfg(&c, ",\"tools\":\"text\"");
	struct pconv conv;
	conversation(&conv, 1);
	json_t *req = build(&c, &conv);
	CHECK(json_object_get(req, "tools") == NULL);
	json_decref(req);
	pconv_release(&conv);
	static const char reply[] = "{\"choices\":[{\"message\":{\"content\":\"ok\\n```bash\\nls "
				    "-l\\necho 'a'\\n```\\nthen\\n"
				    "```python\\nignored\\n```\\n```computer\\n{\\\"action\\\":"
				    "\\\"wait\\\"}\\n```\\n```done\\nall good\\n```\"}}]}";
	struct preply r = {0};
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(provider_parse_reply(&c, reply, strlen(reply), &r, &e), 0);
	CHECK_INT(r.ncalls, 3);
	if (r.ncalls == 3) {
		CHECK_STR(r.calls[0].name, "bash");
		CHECK_STR(r.calls[0].args_json, "{\"command\":\"ls -l\\necho 'a'\"}");
		CHECK_STR(r.calls[1].name, "computer");
		CHECK_STR(r.calls[2].name, "done");
		CHECK_STR(r.calls[2].args_json, "{\"summary\":\"all good\"}");
	}
	preply_release(&r);
	/* an unclosed fence and a bad computer block */
	CHECK_INT(provider_parse_text_actions("```bash\nls", &r, &e), 0);
	CHECK_INT(r.ncalls, 0);
	engi_error_init(&e);
	CHECK_INT(provider_parse_text_actions("```computer\nnot json\n```", &r, &e), ENGI_EPARSE);
	preply_release(&r);
	provider_config_release(&c);
}

static void test_thinking_and_tokens(void)
{
	struct provider_config c;
	struct engi_error e;
	/* Anthropic: a budget from reasoning_effort, max_tokens above it, no temperature */
	cfg(&c, ",\"provider\":\"anthropic\",\"reasoning_effort\":\"high\",\"temperature\":0.3");
	struct pconv conv;
	conversation(&conv, 1);
	static const char th[] =
	    "[{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"s1\"}]";
	pconv_assistant(&conv, "", (struct ptool_call[]){{"t9", "bash", "{}"}}, 1);
	CHECK_INT(pconv_set_thinking(&conv, th), 0);
	pconv_tool(&conv, "t9", "bash", "exit code: 0", "/9j/4AAQ");
	json_t *r = build(&c, &conv);
	CHECK_INT(
	    json_integer_value(json_object_get(json_object_get(r, "thinking"), "budget_tokens")),
	    PROVIDER_THINKING_HIGH);
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "thinking"), "type")),
		  "enabled");
	CHECK_INT(json_integer_value(json_object_get(r, "max_tokens")),
		  PROVIDER_THINKING_HIGH + PROVIDER_ANSWER_TOKENS);
	CHECK(json_object_get(r, "temperature") == NULL);
	json_t *msgs = json_object_get(r, "messages");
	json_t *a = json_object_get(json_array_get(msgs, json_array_size(msgs) - 2), "content");
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 0), "signature")), "s1");
	CHECK_STR(json_string_value(json_object_get(json_array_get(a, 1), "type")), "tool_use");
	json_t *u = json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "content");
	json_t *img = json_array_get(json_object_get(json_array_get(u, 0), "content"), 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(img, "source"), "media_type")),
		  "image/jpeg");
	json_decref(r);
	pconv_release(&conv);
	provider_config_release(&c);
	/* a reply's thinking blocks are kept, signatures included */
	static const char reply[] =
	    "{\"content\":[{\"type\":\"thinking\",\"thinking\":\"a\",\"signature\":\"S\",\"x\":1},"
	    "{\"type\":\"redacted_thinking\",\"data\":\"D\"},{\"type\":\"text\",\"text\":\"t\"}]}";
	cfg(&c, ",\"provider\":\"anthropic\",\"thinking_budget_tokens\":2000,\"max_tokens\":3000");
	CHECK_INT(c.thinking_budget, 2000);
	struct preply rp = {0};
	engi_error_init(&e);
	CHECK_INT(provider_parse_reply(&c, reply, strlen(reply), &rp, &e), 0);
	CHECK_STR(rp.thinking_json,
		  "[{\"type\":\"thinking\",\"thinking\":\"a\",\"signature\":\"S\"},"
		  "{\"type\":\"redacted_thinking\",\"data\":\"D\"}]");
	CHECK_STR(rp.text, "t");
	preply_release(&rp);
	static const char bad[] = "{\"content\":[{\"type\":\"thinking\"}]}";
	engi_error_init(&e);
	CHECK_INT(provider_parse_reply(&c, bad, strlen(bad), &rp, &e), ENGI_EPARSE);
	preply_release(&rp);
	provider_config_release(&c);
	/* thinking settings that the API would refuse are refused here */
	static const char *const refused[] = {
	    "{\"name\":\"a\",\"provider\":\"anthropic\",\"model\":\"x\",\"thinking_budget_tokens\":"
	    "500}",
	    "{\"name\":\"a\",\"provider\":\"anthropic\",\"model\":\"x\",\"thinking_budget_tokens\":"
	    "2000,\"max_tokens\":2000}",
	    "{\"name\":\"a\",\"provider\":\"anthropic\",\"model\":\"x\",\"reasoning_effort\":"
	    "\"max\"}",
	    "{\"name\":\"a\",\"provider\":\"openai\",\"model\":\"x\",\"thinking_budget_tokens\":"
	    "2000}",
	    "{\"name\":\"a\",\"provider\":\"openai\",\"model\":\"x\",\"token_field\":\"tokens\"}",
	    NULL};
	for (const char *const *b = refused; *b; b++) {
		engi_error_init(&e);
		CHECK_INT(provider_config_parse(&c, *b, &e), ENGI_EINVALID);
		CHECK(strstr(e.msg, "model 'a': /") != NULL);
	}
	/* OpenAI: the token field per model name, reasoning_effort and token_field */
	static const struct {
		const char *extra, *field;
	} fields[] = {{",\"model\":\"gpt-4o\"", "max_tokens"},
		      {",\"model\":\"o3-mini\"", "max_completion_tokens"},
		      {",\"model\":\"openai/o1\"", "max_completion_tokens"},
		      {",\"model\":\"gpt-5.1\"", "max_completion_tokens"},
		      {",\"model\":\"omni\"", "max_tokens"},
		      {",\"model\":\"m\",\"reasoning_effort\":\"low\"", "max_completion_tokens"},
		      {",\"model\":\"o3\",\"token_field\":\"max_tokens\"", "max_tokens"}};
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		char extra[160];
		snprintf(extra, sizeof(extra), "%s,\"max_tokens\":99", fields[k].extra);
		cfg(&c, extra);
		conversation(&conv, 1);
		r = build(&c, &conv);
		CHECK_INT(json_integer_value(json_object_get(r, fields[k].field)), 99);
		CHECK_INT(json_object_size(r), 3 + (size_t)(c.reasoning_effort[0] != 0) + 1);
		json_decref(r);
		pconv_release(&conv);
		provider_config_release(&c);
	}
}

/* OpenAI: the images of a turn's results come after all its tool messages. */
static void test_openai_tool_images(void)
{
	struct provider_config c;
	cfg(&c, NULL);
	struct pconv conv;
	pconv_init(&conv);
	pconv_user(&conv, "the instruction", NULL);
	struct ptool_call tc[3] = {
	    {"a", "read_image", "{}"}, {"b", "bash", "{}"}, {"c", "read_image", "{}"}};
	pconv_assistant(&conv, "", tc, 3);
	pconv_tool(&conv, "a", "read_image", "one", "iVBORw0KGgoA");
	pconv_tool(&conv, "b", "bash", "exit code: 3\n", NULL);
	pconv_tool(&conv, "c", "read_image", "two", "/9j/AAAA");
	json_t *r = build(&c, &conv);
	json_t *msgs = json_object_get(r, "messages");
	CHECK_INT(json_array_size(msgs), 1 + 1 + 3 + 1);
	for (size_t i = 2; i < 5; i++)
		CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, i), "role")),
			  "tool");
	json_t *u = json_array_get(msgs, 5);
	CHECK_STR(json_string_value(json_object_get(u, "role")), "user");
	json_t *parts = json_object_get(u, "content");
	CHECK_INT(json_array_size(parts), 4);
	CHECK_STR(json_string_value(json_object_get(
		      json_object_get(json_array_get(parts, 1), "image_url"), "url")),
		  "data:image/png;base64,iVBORw0KGgoA");
	CHECK_STR(json_string_value(json_object_get(
		      json_object_get(json_array_get(parts, 3), "image_url"), "url")),
		  "data:image/jpeg;base64,/9j/AAAA");
	json_decref(r);
	pconv_release(&conv);
	provider_config_release(&c);
}

int main(void)
{
	test_config_errors();
	test_openai_request();
	test_anthropic_request();
	test_replies();
	test_text_fallback();
	test_thinking_and_tokens();
	test_openai_tool_images();
	return check_exit();
}
