/*
 * json.h - validating JSON read with jansson, the way every reader of a
 * hostile file words its errors: "<file>: <pointer>: <what is wrong>", the
 * pointer a JSON pointer ("/" for the root). The task loader, the verifier
 * kinds' criteria and the sweep's files use these.
 *
 * Getters take the object, the member's key and the object's pointer; a
 * member that is absent and not required leaves the default. Strings
 * returned point into the JSON value (copy them before it is freed).
 */
#ifndef ENGI_JSON_H
#define ENGI_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "engi/error.h"

#define ENGI_POINTER_MAX 512

/* out = base + "/" + key, with '~' and '/' escaped as JSON pointers do;
 * truncated to cap bytes. */
void engi_json_pointer(char *out, size_t cap, const char *base, const char *key);
/* out = base + "/" + index. */
void engi_json_pointer_index(char *out, size_t cap, const char *base, size_t index);
/* "a string", "an integer", ...: what a JSON value is, for messages. */
const char *engi_json_kind(const json_t *j);
/* What v is with its value where it is short, for "found ..." in messages:
 * "a string ('hot')" (cut to 60 bytes), "an integer (0)", "a number (1.5)",
 * "a boolean (true)", else its kind ("an object", "null"). */
void engi_json_found(char *out, size_t cap, const json_t *v);
/* names[0..n) joined by ", " into out, cut to cap: the list of a message. */
void engi_json_join(char *out, size_t cap, const char *const *names, size_t n);
/* Raises ENGI_EPARSE with "<file>: <pointer>: <message>"; returns the code. */
int engi_parse_error(struct engi_error *err, const char *file, const char *pointer, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

/* text[0..len) as one JSON value, duplicate keys refused; ENGI_EPARSE
 * "<name>: line L column C: <jansson's message>" when it is not JSON. */
int engi_json_parse(const char *name, const char *text, size_t len, json_t **root,
		    struct engi_error *err);

/* Whether v is of type want ("expected <want>, found <kind>" if not):
 * JSON_REAL takes any number, JSON_TRUE any boolean. */
int engi_json_expect(const json_t *v, json_type want, const char *file, const char *pointer,
		     struct engi_error *err);
/* Member key of obj of type want (as engi_json_expect); *out NULL when it
 * is absent and not required ("missing required field" when required). */
int engi_json_field(json_t *obj, const char *key, json_type want, int required, const char *file,
		    const char *pointer, json_t **out, struct engi_error *err);
/* A string member without NUL characters, not empty when nonempty. */
int engi_json_string(json_t *obj, const char *key, int required, int nonempty, const char *file,
		     const char *pointer, const char **out, struct engi_error *err);
/* An optional integer member in [lo, hi]; dflt when absent. */
int engi_json_int(json_t *obj, const char *key, long lo, long hi, long dflt, const char *file,
		  const char *pointer, long *out, struct engi_error *err);
/* An optional boolean member; dflt when absent. */
int engi_json_bool(json_t *obj, const char *key, int dflt, const char *file, const char *pointer,
		   int *out, struct engi_error *err);
/* Optional finite number member; *present tells whether it was there. */
int engi_json_number(json_t *obj, const char *key, const char *file, const char *pointer,
		     int *present, double *out, struct engi_error *err);
/* An optional finite number member of at least min; dflt when absent.
 * "expected a number ≥ MIN, found <engi_json_found>" when it is not. */
int engi_json_number_min(json_t *obj, const char *key, double min, double dflt, const char *file,
			 const char *pointer, double *out, struct engi_error *err);
/* Fails on the first member of obj not in allowed (NULL-terminated), listing
 * the valid ones. */
int engi_json_only_keys(json_t *obj, const char *const *allowed, const char *file,
			const char *pointer, struct engi_error *err);
/* Member key of obj, a string among choices (NULL-terminated): *index is its
 * position. When absent: an error if required, else *index is left alone.
 * what names the field in "unknown <what> 'x' (valid: ...)". */
int engi_json_choice(json_t *obj, const char *key, const char *const *choices, const char *what,
		     int required, const char *file, const char *pointer, int *index,
		     struct engi_error *err);

/* Names of criteria and variants (task ids: engi_json_name_valid_max): 1 to 63 characters of n
 * bytes (no NUL), [A-Za-z0-9][A-Za-z0-9._-]*. */
#define ENGI_JSON_NAME_MAX 63
int engi_json_name_valid(const char *s, size_t n);
/* The same rule with another length limit (task ids: 127). */
int engi_json_name_valid_max(const char *s, size_t n, size_t max);

#endif
