/*
 * engi_grow, the one growth of an array by doubling: room made from empty,
 * the items kept across a move, no allocation when there is room, a need
 * past a doubling met at once, a size whose bytes overflow refused, and an
 * allocation that fails leaving the array as it was.
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <stdint.h>

static void test_from_empty(void)
{
	int *v = NULL;
	size_t cap = 0;
	CHECK_INT(engi_grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	CHECK(v != NULL);
	CHECK_INT(cap, ENGI_GROW_FIRST);
	engi_free(v);
}

static void test_kept_and_doubled(void)
{
	int *v = NULL;
	size_t cap = 0, n = 0;
	for (int i = 0; i < 1000; i++) {
		size_t before = cap;
		CHECK_INT(engi_grow((void **)&v, &cap, n + 1, sizeof(*v)), 0);
		CHECK(cap >= n + 1);
		CHECK(cap == before || cap == (before ? 2 * before : ENGI_GROW_FIRST));
		v[n++] = i * 7;
	}
	CHECK_INT(cap, 1024);
	int same = 1;
	for (size_t i = 0; i < n; i++)
		same &= v[i] == (int)i * 7;
	CHECK(same);

	/* room enough: nothing moves */
	int *at = v;
	CHECK_INT(engi_grow((void **)&v, &cap, 1000, sizeof(*v)), 0);
	CHECK(v == at);
	CHECK_INT(cap, 1024);
	/* a need past one doubling is met in one call */
	CHECK_INT(engi_grow((void **)&v, &cap, 5000, sizeof(*v)), 0);
	CHECK_INT(cap, 8192);
	CHECK(v[999] == 999 * 7);
	engi_free(v);
}

static void test_overflow(void)
{
	char *v = NULL;
	size_t cap = 0;
	/* need * size past SIZE_MAX */
	CHECK_INT(engi_grow((void **)&v, &cap, 5, SIZE_MAX / 4), ENGI_ENOMEM);
	CHECK(v == NULL);
	CHECK_INT(cap, 0);
	CHECK_INT(engi_grow((void **)&v, &cap, SIZE_MAX, 2), ENGI_ENOMEM);
	CHECK(v == NULL && cap == 0);
}

static void test_failed_allocation(void)
{
	double *v = NULL;
	size_t cap = 0;
	CHECK_INT(engi_grow((void **)&v, &cap, 3, sizeof(*v)), 0);
	for (size_t i = 0; i < cap; i++)
		v[i] = (double)i / 4;
	double *at = v;
	size_t had = cap;
	engi_alloc_fail_after(1);
	int rc = engi_grow((void **)&v, &cap, had + 1, sizeof(*v));
	engi_alloc_fail_after(0);
	CHECK_INT(rc, ENGI_ENOMEM);
	CHECK(v == at);
	CHECK_INT(cap, had);
	int same = 1;
	for (size_t i = 0; i < cap; i++)
		same &= v[i] == (double)i / 4;
	CHECK(same);
	engi_free(v);
}

int main(void)
{
	test_from_empty();
	test_kept_and_doubled();
	test_overflow();
	test_failed_allocation();
	return check_exit();
}
