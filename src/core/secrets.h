/*
 * secrets.h - the process-wide registry of secrets: API keys (the values of
 * the variables named by models.json api_key_env) and models.json header
 * values. Whatever engisweep writes (traces, journal and HDF5 records, the
 * results file's attributes, messages on stderr, deliverables copied out of
 * an environment) passes through secrets_scrub, which replaces every
 * occurrence of a registered secret with SECRET_MARK.
 *
 * A secret is registered as given and also in its JSON-escaped forms (one
 * and two levels: a reply body quoted inside a trace event), so a key with a
 * quote or backslash is found in JSON text too. A header value is
 * registered whole and word by word ("Bearer sk-..." registers the key
 * alone as well). Secrets shorter than SECRET_MIN bytes are ignored: short
 * strings would match ordinary text everywhere (and "Bearer" is no key).
 * Because the mark is no longer than any secret, scrubbing never grows a
 * buffer and works in place. A key that an agent encodes (base64, hex,
 * \u escapes) is not recognised.
 *
 * The names of the api_key_env variables are registered too: children
 * started through child_spawn (verifier, tools, QEMU) get an environment
 * without them, nor any variable whose value holds a secret.
 *
 * All calls are thread-safe.
 */
#ifndef ENGI_SECRETS_H
#define ENGI_SECRETS_H

#include <stddef.h>

#define SECRET_MIN  8
#define SECRET_MARK "[secret]"

/* Registers a secret (NULL, empty or short: nothing). 0 or ENGI_ENOMEM. */
int secrets_add(const char *value);
/* Registers a header value: whole, and each space-separated word. */
int secrets_add_header(const char *value);
/* Registers the name of an environment variable that holds a key, and its
 * current value as a secret. 0 or ENGI_ENOMEM. */
int secrets_add_env(const char *name);
/* 1 when any secret is registered. */
int secrets_any(void);
/* 1 when s[0..n) holds a registered secret. */
int secrets_found(const char *s, size_t n);

/* Replaces every secret in buf[0..len) with SECRET_MARK, in place; returns
 * the new length (at most len). Writes no terminating NUL. */
size_t secrets_scrub(char *buf, size_t len);
/* The same for a NUL-terminated string, the bytes it no longer uses
 * zeroed; returns its new length. */
size_t secrets_scrub_str(char *s);

/* env (NULL-terminated "NAME=value") without the registered variables and
 * without any entry holding a secret: a new array of the same strings
 * (engi_free the array only); NULL when out of memory. */
char **secrets_filter_env(char *const *env);

#endif
