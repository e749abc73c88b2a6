/*
 * Validating JSON (engi/json.h): pointers, kinds and the typed getters
 * whose messages every hostile-file reader shares.
 */
#include "engi/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int engi_parse_error(struct engi_error *err, const char *file, const char *pointer, const char *fmt,
		     ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return engi_raise(err, ENGI_EPARSE, "%s: %s: %s", file, pointer[0] ? pointer : "/", msg);
}

void engi_json_pointer(char *out, size_t cap, const char *base, const char *key)
{
	if (cap == 0)
		return;
	size_t n = 0;
	for (const char *b = base; *b && n + 1 < cap; b++)
		out[n++] = *b;
	if (n + 1 < cap)
		out[n++] = '/';
	for (const char *k = key; *k && n + 1 < cap; k++) {
		if (*k == '~' || *k == '/') {
			if (n + 2 >= cap)
				break;
			out[n++] = '~';
			out[n++] = *k == '~' ? '0' : '1';
		} else {
			out[n++] = *k;
		}
	}
	out[n] = '\0';
}

void engi_json_pointer_index(char *out, size_t cap, const char *base, size_t index)
{
	char num[24];
	snprintf(num, sizeof(num), "%zu", index);
	engi_json_pointer(out, cap, base, num);
}

static void pointer_key(char out[ENGI_POINTER_MAX], const char *base, const char *key)
{
	engi_json_pointer(out, ENGI_POINTER_MAX, base, key);
}

static const char *type_name(json_type t)
{
	switch (t) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "?";
}

const char *engi_json_kind(const json_t *j)
{
	return type_name(json_typeof(j));
}

void engi_json_found(char *out, size_t cap, const json_t *v)
{
	if (json_is_string(v))
		snprintf(out, cap, "a string ('%.60s')", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(out, cap, "an integer (%lld)", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(out, cap, "a number (%g)", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(out, cap, "a boolean (%s)", json_is_true(v) ? "true" : "false");
	else
		snprintf(out, cap, "%s", engi_json_kind(v));
}

void engi_json_join(char *out, size_t cap, const char *const *names, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len + 1 < cap; i++) {
		int w = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", names[i]);
		if (w < 0)
			break;
		len += (size_t)w < cap - len ? (size_t)w : cap - len - 1;
	}
}

/* How many names come before the NULL. */
static size_t count_names(const char *const *names)
{
	size_t n = 0;
	while (names[n])
		n++;
	return n;
}

int engi_json_parse(const char *name, const char *text, size_t len, json_t **root,
		    struct engi_error *err)
{
	json_error_t je;
	*root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!*root)
		RAISE(err, ENGI_EPARSE, "%s: line %d column %d: %s", name, je.line, je.column,
		      je.text);
	return 0;
}

int engi_json_expect(const json_t *v, json_type want, const char *file, const char *pointer,
		     struct engi_error *err)
{
	int ok = json_typeof(v) == want || (want == JSON_REAL && json_is_integer(v)) ||
		 ((want == JSON_TRUE || want == JSON_FALSE) && json_is_boolean(v));
	if (!ok)
		return engi_parse_error(err, file, pointer, "expected %s, found %s",
					type_name(want), engi_json_kind(v));
	return 0;
}

int engi_json_field(json_t *obj, const char *key, json_type want, int required, const char *file,
		    const char *pointer, json_t **out, struct engi_error *err)
{
	char p[ENGI_POINTER_MAX];
	pointer_key(p, pointer, key);
	json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (!v)
		return required ? engi_parse_error(err, file, p, "missing required field") : 0;
	TRY(engi_json_expect(v, want, file, p, err));
	*out = v;
	return 0;
}

int engi_json_string(json_t *obj, const char *key, int required, int nonempty, const char *file,
		     const char *pointer, const char **out, struct engi_error *err)
{
	json_t *v;
	TRY(engi_json_field(obj, key, JSON_STRING, required, file, pointer, &v, err));
	*out = NULL;
	if (!v)
		return 0;
	char p[ENGI_POINTER_MAX];
	pointer_key(p, pointer, key);
	if (nonempty && json_string_length(v) == 0)
		return engi_parse_error(err, file, p, "must not be empty");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return engi_parse_error(err, file, p, "string contains a NUL character");
	*out = json_string_value(v);
	return 0;
}

int engi_json_int(json_t *obj, const char *key, long lo, long hi, long dflt, const char *file,
		  const char *pointer, long *out, struct engi_error *err)
{
	json_t *v;
	TRY(engi_json_field(obj, key, JSON_INTEGER, 0, file, pointer, &v, err));
	*out = dflt;
	if (!v)
		return 0;
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi) {
		char p[ENGI_POINTER_MAX];
		pointer_key(p, pointer, key);
		return engi_parse_error(err, file, p, "%lld is out of range [%ld, %ld]",
					(long long)x, lo, hi);
	}
	*out = (long)x;
	return 0;
}

int engi_json_bool(json_t *obj, const char *key, int dflt, const char *file, const char *pointer,
		   int *out, struct engi_error *err)
{
	json_t *v;
	TRY(engi_json_field(obj, key, JSON_TRUE, 0, file, pointer, &v, err));
	*out = v ? json_is_true(v) : dflt;
	return 0;
}

int engi_json_number(json_t *obj, const char *key, const char *file, const char *pointer,
		     int *present, double *out, struct engi_error *err)
{
	json_t *v;
	*present = 0;
	TRY(engi_json_field(obj, key, JSON_REAL, 0, file, pointer, &v, err));
	if (!v)
		return 0;
	*out = json_number_value(v);
	if (!isfinite(*out)) {
		char p[ENGI_POINTER_MAX];
		pointer_key(p, pointer, key);
		return engi_parse_error(err, file, p, "must be finite");
	}
	*present = 1;
	return 0;
}

int engi_json_number_min(json_t *obj, const char *key, double min, double dflt, const char *file,
			 const char *pointer, double *out, struct engi_error *err)
{
	json_t *v = json_object_get(obj, key);
	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < min) {
		char p[ENGI_POINTER_MAX], found[96];
		pointer_key(p, pointer, key);
		engi_json_found(found, sizeof(found), v);
		return engi_parse_error(err, file, p, "expected a number ≥ %g, found %s", min,
					found);
	}
	*out = json_number_value(v);
	return 0;
}

int engi_json_only_keys(json_t *obj, const char *const *allowed, const char *file,
			const char *pointer, struct engi_error *err)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val)
	{
		int ok = 0;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(*a, key);
		if (!ok) {
			char p[ENGI_POINTER_MAX], list[256];
			pointer_key(p, pointer, key);
			engi_json_join(list, sizeof(list), allowed, count_names(allowed));
			return engi_parse_error(err, file, p, "unknown field (valid: %s)", list);
		}
	}
	return 0;
}

int engi_json_choice(json_t *obj, const char *key, const char *const *choices, const char *what,
		     int required, const char *file, const char *pointer, int *index,
		     struct engi_error *err)
{
	json_t *j;
	TRY(engi_json_field(obj, key, JSON_STRING, required, file, pointer, &j, err));
	if (!j)
		return 0;
	const char *s = json_string_value(j);
	for (int i = 0; choices[i]; i++)
		if (!strcmp(choices[i], s) && strlen(s) == json_string_length(j)) {
			*index = i;
			return 0;
		}
	char p[ENGI_POINTER_MAX], list[256];
	pointer_key(p, pointer, key);
	engi_json_join(list, sizeof(list), choices, count_names(choices));
	return engi_parse_error(err, file, p, "unknown %s '%s' (valid: %s)", what, s, list);
}

int engi_json_name_valid(const char *s, size_t n)
{
	return engi_json_name_valid_max(s, n, ENGI_JSON_NAME_MAX);
}

int engi_json_name_valid_max(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max || strlen(s) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= '0' && ch <= '9');
		if (!alnum && (i == 0 || (ch != '.' && ch != '_' && ch != '-')))
			return 0;
	}
	return 1;
}
