#include "secrets.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SECRETS_MAX 256
#define NAMES_MAX   64

/* Patterns longest first, so a secret that holds another is replaced
 * whole. Registered for the life of the process. */
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static char *pats[SECRETS_MAX];
static size_t plen[SECRETS_MAX];
static size_t npats;
static char *names[NAMES_MAX];
static size_t nnames;

/* Under the write lock. */
static int add_pattern(const char *s, size_t n)
{
	if (n < SECRET_MIN)
		return 0;
	for (size_t i = 0; i < npats; i++)
		if (plen[i] == n && !memcmp(pats[i], s, n))
			return 0;
	if (npats == SECRETS_MAX)
		return ENGI_ENOMEM;
	char *copy = engi_malloc(n + 1);
	if (!copy)
		return ENGI_ENOMEM;
	memcpy(copy, s, n);
	copy[n] = '\0';
	size_t at = 0;
	while (at < npats && plen[at] >= n)
		at++;
	memmove(pats + at + 1, pats + at, (npats - at) * sizeof(*pats));
	memmove(plen + at + 1, plen + at, (npats - at) * sizeof(*plen));
	pats[at] = copy;
	plen[at] = n;
	npats++;
	return 0;
}

/* s as the inside of a JSON string, as jansson writes it; NULL when it
 * needs no escaping, is not UTF-8 or memory ran out. */
static char *json_escaped(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	if (!d)
		return NULL;
	size_t dl = strlen(d);
	if (dl < 2 || (dl - 2 == n && !memcmp(d + 1, s, n))) {
		free(d);
		return NULL;
	}
	memmove(d, d + 1, dl - 2);
	d[dl - 2] = '\0';
	return d;
}

/* Under the write lock: the secret and its JSON forms, one and two levels
 * deep. */
static int add_secret(const char *s, size_t n)
{
	if (n < SECRET_MIN)
		return 0;
	int rc = add_pattern(s, n);
	char *e1 = rc == 0 ? json_escaped(s, n) : NULL;
	if (e1) {
		rc = add_pattern(e1, strlen(e1));
		char *e2 = rc == 0 ? json_escaped(e1, strlen(e1)) : NULL;
		if (e2)
			rc = add_pattern(e2, strlen(e2));
		free(e2);
		free(e1);
	}
	return rc;
}

int secrets_add(const char *value)
{
	if (!value || strlen(value) < SECRET_MIN)
		return 0;
	pthread_rwlock_wrlock(&lock);
	int rc = add_secret(value, strlen(value));
	pthread_rwlock_unlock(&lock);
	return rc;
}

int secrets_add_header(const char *value)
{
	if (!value)
		return 0;
	pthread_rwlock_wrlock(&lock);
	int rc = add_secret(value, strlen(value));
	for (const char *p = value; rc == 0 && *p;) {
		size_t w = strcspn(p, " \t");
		rc = add_secret(p, w);
		p += w;
		p += strspn(p, " \t");
	}
	pthread_rwlock_unlock(&lock);
	return rc;
}

int secrets_add_env(const char *name)
{
	if (!name || !name[0])
		return 0;
	pthread_rwlock_wrlock(&lock);
	int rc = 0, seen = 0;
	for (size_t i = 0; i < nnames && !seen; i++)
		seen = !strcmp(names[i], name);
	if (!seen && nnames < NAMES_MAX) {
		if ((names[nnames] = engi_strdup(name)))
			nnames++;
		else
			rc = ENGI_ENOMEM;
	}
	pthread_rwlock_unlock(&lock);
	if (rc == 0)
		rc = secrets_add(getenv(name));
	return rc;
}

int secrets_any(void)
{
	pthread_rwlock_rdlock(&lock);
	int any = npats > 0;
	pthread_rwlock_unlock(&lock);
	return any;
}

/* Under the read lock. */
static int found_locked(const char *s, size_t n)
{
	for (size_t i = 0; i < npats; i++)
		if (memmem(s, n, pats[i], plen[i]))
			return 1;
	return 0;
}

int secrets_found(const char *s, size_t n)
{
	pthread_rwlock_rdlock(&lock);
	int hit = found_locked(s, n);
	pthread_rwlock_unlock(&lock);
	return hit;
}

size_t secrets_scrub(char *buf, size_t len)
{
	static const char mark[] = SECRET_MARK;
	const size_t ml = sizeof(mark) - 1;
	pthread_rwlock_rdlock(&lock);
	for (size_t i = 0; i < npats; i++) {
		const char *pat = pats[i];
		size_t pl = plen[i];
		char *hit = memmem(buf, len, pat, pl);
		if (!hit)
			continue;
		/* compact in one pass: w writes, r reads */
		char *w = buf, *r = buf, *end = buf + len;
		while (hit) {
			size_t keep = (size_t)(hit - r);
			memmove(w, r, keep);
			w += keep;
			memcpy(w, mark, ml);
			w += ml;
			r = hit + pl;
			hit = memmem(r, (size_t)(end - r), pat, pl);
		}
		memmove(w, r, (size_t)(end - r));
		w += end - r;
		len = (size_t)(w - buf);
	}
	pthread_rwlock_unlock(&lock);
	return len;
}

size_t secrets_scrub_str(char *s)
{
	size_t len = strlen(s);
	size_t n = secrets_scrub(s, len);
	/* no remnant of a secret past the new end (fixed-size fields are
	 * written whole) */
	memset(s + n, 0, len - n);
	return n;
}

char **secrets_filter_env(char *const *env)
{
	size_t n = 0;
	while (env[n])
		n++;
	char **out = engi_calloc(n + 1, sizeof(*out));
	if (!out)
		return NULL;
	size_t k = 0;
	pthread_rwlock_rdlock(&lock);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '=');
		size_t nl = eq ? (size_t)(eq - env[i]) : strlen(env[i]);
		int drop = eq && found_locked(eq + 1, strlen(eq + 1));
		for (size_t j = 0; j < nnames && !drop; j++)
			drop = strlen(names[j]) == nl && !memcmp(names[j], env[i], nl);
		if (!drop)
			out[k++] = env[i];
	}
	pthread_rwlock_unlock(&lock);
	return out;
}
