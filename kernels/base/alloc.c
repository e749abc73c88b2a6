#include "engi/alloc.h"

#include "engi/error.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_countdown; /* 0: off; k: the k-th call from now fails */

static int injected_failure(void)
{
	long c = atomic_load(&fail_countdown);
	if (c == 0)
		return 0;
	if (c == 1)
		return 1; /* stays at 1: every later call fails too */
	atomic_fetch_sub(&fail_countdown, 1);
	return 0;
}

void engi_alloc_fail_after(long n)
{
	atomic_store(&fail_countdown, n < 0 ? 0 : n);
}

void *engi_malloc(size_t n)
{
	if (injected_failure())
		return NULL;
	return malloc(n ? n : 1);
}

void *engi_calloc(size_t count, size_t size)
{
	if (injected_failure())
		return NULL;
	return calloc(count ? count : 1, size ? size : 1);
}

void *engi_realloc(void *p, size_t n)
{
	if (injected_failure())
		return NULL;
	return realloc(p, n ? n : 1);
}

void *engi_reallocarray(void *p, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	return engi_realloc(p, count * size);
}

int engi_grow(void **items, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t max = size ? SIZE_MAX / size : SIZE_MAX;
	if (need > max)
		return ENGI_ENOMEM;
	size_t n = *cap ? *cap : ENGI_GROW_FIRST;
	while (n < need)
		n = n > max / 2 ? need : 2 * n;
	if (n > max)
		n = need;
	void *p = engi_realloc(*items, n * size);
	if (!p)
		return ENGI_ENOMEM;
	*items = p;
	*cap = n;
	return 0;
}

char *engi_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = engi_malloc(len + 1);
	if (!d)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *engi_strdup(const char *s)
{
	return engi_strndup(s, SIZE_MAX);
}

void engi_free(void *p)
{
	free(p);
}
