/*
 * The provider registry: every descriptor is complete (name, summary,
 * default base URL, endpoint path, key header, fixed headers, builder and
 * parser), the names are unique, each name looks up its own descriptor and
 * is what a models.json entry naming it parses to, and an unknown name is
 * refused with a message that lists every known one.
 */
#include "check.h"
#include "engi/alloc.h"
#include "provider.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static size_t count(void)
{
	size_t n = 0;
	while (provider_registry[n])
		n++;
	return n;
}

/* "Name: value" on one line, the name without spaces */
static int header_line(const char *h)
{
	const char *colon = strchr(h, ':');
	return colon && colon > h && colon[1] == ' ' && colon[2] && !strpbrk(h, "\r\n") &&
	       strcspn(h, " ") > (size_t)(colon - h);
}

static void test_complete(void)
{
	size_t n = count();
	CHECK(n >= 2);
	for (size_t i = 0; i < n; i++) {
		const struct provider_ops *p = provider_registry[i];
		CHECK(p->name && p->name[0] && strlen(p->name) < 32);
		CHECK(p->name &&
		      strspn(p->name, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(p->name));
		CHECK(p->summary && p->summary[0]);
		CHECK(p->base_url && !strncmp(p->base_url, "https://", 8) &&
		      p->base_url[strlen(p->base_url) - 1] != '/');
		CHECK(p->path && p->path[0] == '/' && p->path[1]);
		/* the key follows the header's name and ": " and whatever the scheme is */
		CHECK(p->auth && strchr(p->auth, ':') && p->auth[strlen(p->auth) - 1] == ' ');
		size_t nh = 0;
		for (const char *const *h = p->headers; h && *h; h++, nh++)
			CHECK(header_line(*h));
		CHECK(nh <= 6); /* room in provider_complete's header list */
		CHECK(p->build != NULL);
		CHECK(p->parse != NULL);
		CHECK(p->thinking == 0 || p->thinking == 1);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(provider_registry[k]->name, p->name) != 0);
	}
	CHECK(provider_registry[n] == NULL);
}

/* Each name finds its descriptor, and an entry naming it parses to it with
 * its default base URL; the descriptor builds a request for the model. */
static void test_lookup(void)
{
	for (const struct provider_ops *const *p = provider_registry; *p; p++) {
		struct engi_error e;
		engi_error_init(&e);
		CHECK(provider_lookup((*p)->name, &e) == *p);
		CHECK_INT(e.code, 0);
		char entry[256];
		snprintf(entry, sizeof(entry),
			 "{\"name\":\"m\",\"provider\":\"%s\",\"model\":\"x1\"}", (*p)->name);
		struct provider_config c;
		CHECK_INT(provider_config_parse(&c, entry, &e), 0);
		CHECK(c.ops == *p);
		CHECK_STR(c.base_url, (*p)->base_url);
		struct pconv conv;
		pconv_init(&conv);
		pconv_user(&conv, "the instruction", NULL);
		char *req = provider_build_request(&c, &conv, &e);
		json_t *j = req ? json_loads(req, 0, NULL) : NULL;
		CHECK(json_is_object(j));
		CHECK_STR(json_string_value(json_object_get(j, "model")), "x1");
		json_decref(j);
		engi_free(req);
		pconv_release(&conv);
		provider_config_release(&c);
		/* a replay's settings: the defaults, the same descriptor */
		provider_config_init(&c, *p, "replay", "replay");
		CHECK(c.ops == *p);
		CHECK_STR(c.base_url, (*p)->base_url);
		CHECK_INT(c.history_turns, PROVIDER_HISTORY_TURNS_DEFAULT);
		CHECK(isnan(c.temperature));
	}
}

static void test_unknown(void)
{
	struct engi_error e;
	engi_error_init(&e);
	CHECK(provider_lookup("nope", &e) == NULL);
	CHECK_INT(e.code, ENGI_EINVALID);
	CHECK(strstr(e.msg, "'nope'") != NULL);
	CHECK(provider_lookup(NULL, NULL) == NULL);
	char names[256];
	provider_names(names, sizeof(names));
	/* models.json's message lists the same names */
	struct provider_config c;
	struct engi_error e2;
	engi_error_init(&e2);
	CHECK_INT(provider_config_parse(
		      &c, "{\"name\":\"a\",\"provider\":\"nope\",\"model\":\"x\"}", &e2),
		  ENGI_EINVALID);
	CHECK(strstr(e2.msg, "model 'a': /provider: 'nope' is not one of ") == e2.msg);
	for (const struct provider_ops *const *p = provider_registry; *p; p++) {
		CHECK(strstr(e.msg, (*p)->name) != NULL);
		CHECK(strstr(e2.msg, (*p)->name) != NULL);
		CHECK(strstr(names, (*p)->name) != NULL);
	}
	CHECK(strstr(e.msg, names) != NULL);
	/* a name that only begins like a known one is not it */
	char longer[64];
	snprintf(longer, sizeof(longer), "%sx", provider_registry[0]->name);
	CHECK(provider_lookup(longer, NULL) == NULL);
	/* a small buffer still ends in a NUL */
	char tiny[4];
	provider_names(tiny, sizeof(tiny));
	CHECK(strlen(tiny) < sizeof(tiny));
}

/* Thinking is what the descriptors say: thinking_budget_tokens goes only
 * to a provider that has it, and its message names those that do. */
static void test_thinking(void)
{
	for (const struct provider_ops *const *p = provider_registry; *p; p++) {
		char entry[256];
		snprintf(entry, sizeof(entry),
			 "{\"name\":\"m\",\"provider\":\"%s\",\"model\":\"x\","
			 "\"thinking_budget_tokens\":2048}",
			 (*p)->name);
		struct provider_config c;
		struct engi_error e;
		engi_error_init(&e);
		int rc = provider_config_parse(&c, entry, &e);
		CHECK_INT(rc, (*p)->thinking ? 0 : ENGI_EINVALID);
		if (rc == 0) {
			CHECK_INT(c.thinking_budget, 2048);
			provider_config_release(&c);
			continue;
		}
		for (const struct provider_ops *const *q = provider_registry; *q; q++)
			if ((*q)->thinking)
				CHECK(strstr(e.msg, (*q)->name) != NULL);
	}
}

int main(void)
{
	test_complete();
	test_lookup();
	test_unknown();
	test_thinking();
	return check_exit();
}
