/*
 * The command policy (policy.h): loaded and compiled once, matched by
 * every episode before each command of its agent.
 */
#include "policy.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

struct policy_rule {
	regex_t re;
	char *pattern;
	char *message;
};

struct episode_policy {
	struct policy_rule *v;
	size_t n;
};

void episode_policy_free(struct episode_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		regfree(&p->v[i].re);
		engi_free(p->v[i].pattern);
		engi_free(p->v[i].message);
	}
	engi_free(p->v);
	engi_free(p);
}

/* A non-empty string of at most max bytes at /rules/i/key. */
static int rule_string(const char *path, json_t *rule, size_t i, const char *key, size_t max,
		       char **out, struct engi_error *err)
{
	json_t *v = json_object_get(rule, key);
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max)
		RAISE(err, ENGI_EINVALID,
		      "%s: /rules/%zu/%s: %s a non-empty string of at most %zu bytes", path, i, key,
		      v ? "expected" : "missing:", max);
	if (strlen(json_string_value(v)) != json_string_length(v))
		RAISE(err, ENGI_EINVALID, "%s: /rules/%zu/%s: holds a NUL character", path, i, key);
	if (!(*out = engi_strdup(json_string_value(v))))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	return 0;
}

static int load_rules(const char *path, json_t *root, struct episode_policy *p,
		      struct engi_error *err)
{
	if (!json_is_object(root))
		RAISE(err, ENGI_EINVALID, "%s: expected a JSON object {\"rules\": [...]}", path);
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		if (strcmp(key, "rules"))
			RAISE(err, ENGI_EINVALID,
			      "%s: /%s: unknown key (a policy has only \"rules\")", path, key);
	}
	json_t *rules = json_object_get(root, "rules");
	if (!json_is_array(rules))
		RAISE(err, ENGI_EINVALID, "%s: /rules: %s an array of rules", path,
		      rules ? "expected" : "missing:");
	if (json_array_size(rules) > EPISODE_POLICY_RULES_MAX)
		RAISE(err, ENGI_EINVALID, "%s: /rules: %zu rules, at most %d", path,
		      json_array_size(rules), EPISODE_POLICY_RULES_MAX);
	p->v = engi_calloc(json_array_size(rules) + 1, sizeof(*p->v));
	if (!p->v)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	size_t i;
	json_t *rule;
	json_array_foreach(rules, i, rule)
	{
		if (!json_is_object(rule))
			RAISE(err, ENGI_EINVALID,
			      "%s: /rules/%zu: expected an object {\"pattern\": ..., \"message\": "
			      "...}",
			      path, i);
		json_object_foreach(rule, key, v)
		{
			if (strcmp(key, "pattern") && strcmp(key, "message"))
				RAISE(err, ENGI_EINVALID,
				      "%s: /rules/%zu/%s: unknown key (pattern, message)", path, i,
				      key);
		}
		struct policy_rule *r = &p->v[i];
		TRY(rule_string(path, rule, i, "pattern", EPISODE_POLICY_PATTERN_MAX, &r->pattern,
				err));
		if (rule_string(path, rule, i, "message", EPISODE_POLICY_MESSAGE_MAX, &r->message,
				err) < 0) {
			engi_free(r->pattern);
			r->pattern = NULL;
			return err && err->code ? err->code : ENGI_EINVALID;
		}
		int rc = regcomp(&r->re, r->pattern, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[256];
			regerror(rc, &r->re, msg, sizeof(msg));
			engi_free(r->pattern);
			engi_free(r->message);
			r->pattern = r->message = NULL;
			RAISE(err, ENGI_EINVALID,
			      "%s: /rules/%zu/pattern: not a POSIX extended regular expression: %s",
			      path, i, msg);
		}
		p->n = i + 1;
	}
	return 0;
}

int episode_policy_load(const char *path, struct episode_policy **out, struct engi_error *err)
{
	*out = NULL;
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	int rrc = fs_read_file(path, EPISODE_POLICY_FILE_CAP, &text, &len, &e);
	if (rrc < 0) /* a setting that cannot be used: refused as a bad one */
		RAISE(err, rrc == ENGI_ENOMEM ? rrc : ENGI_EINVALID, "--command-policy: %s", e.msg);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	engi_free(text);
	if (!root)
		RAISE(err, ENGI_EINVALID, "%s: not JSON: line %d column %d: %s", path, je.line,
		      je.column, je.text);
	struct episode_policy *p = engi_calloc(1, sizeof(*p));
	int rc = p ? load_rules(path, root, p, err) : engi_raise(err, ENGI_ENOMEM, "out of memory");
	json_decref(root);
	if (rc < 0) {
		episode_policy_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int episode_policy_match(const struct episode_policy *p, const char *text)
{
	for (size_t i = 0; p && text && i < p->n; i++)
		if (regexec(&p->v[i].re, text, 0, NULL, 0) == 0)
			return (int)i;
	return -1;
}

const char *episode_policy_message(const struct episode_policy *p, int rule)
{
	return p && rule >= 0 && (size_t)rule < p->n ? p->v[rule].message : NULL;
}

const char *episode_policy_pattern(const struct episode_policy *p, int rule)
{
	return p && rule >= 0 && (size_t)rule < p->n ? p->v[rule].pattern : NULL;
}
