/*
 * kindtest.h - what the tests of one verifier kind share: the kind under
 * test, a scratch folder, parsing a verifier object given as text, and
 * looking up an assertion by name. Included by one test file each.
 */
#ifndef ENGI_TEST_KINDTEST_H
#define ENGI_TEST_KINDTEST_H

#include "check.h"
#include "engi/verify.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const struct engi_verifier_kind *kind;
static char dir[64];

/* kind->parse on the verifier object in text (file "t.json", pointer
 * "/verifier"); a text that is not JSON fails the test. */
static int parse(const char *text, void **crit, struct engi_error *e)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (!j) {
		fprintf(stderr, "bad test JSON: %s: %s\n", je.text, text);
		CHECK(0);
		return -1;
	}
	engi_error_init(e);
	*crit = NULL;
	int rc = kind->parse(j, "t.json", NULL, "/verifier", crit, e);
	json_decref(j);
	return rc;
}

/* The assertion named name, or one whose state is -1. */
__attribute__((unused)) static const struct engi_assertion *
find_or_none(const struct engi_verdict *v, const char *name)
{
	static const struct engi_assertion none = {.state = -1};
	for (size_t i = 0; i < v->na; i++)
		if (!strcmp(v->a[i].name, name))
			return &v->a[i];
	return &none;
}

#endif
