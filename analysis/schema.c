#include "engi/schema.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int scored, infra;
	const char *why;
} outcomes[] = {
#define OUTCOME_ROW(id, name, scored, infra, why) {name, scored, infra, why},
    ENGI_OUTCOMES(OUTCOME_ROW)
#undef OUTCOME_ROW
};

_Static_assert(sizeof outcomes / sizeof *outcomes == ENGI_OUTCOME_COUNT, "one row per outcome");

static int known(int outcome)
{
	return outcome >= 0 && outcome < ENGI_OUTCOME_COUNT;
}

const char *engi_outcome_name(int outcome)
{
	return known(outcome) ? outcomes[outcome].name : "unknown";
}

int engi_outcome_find(const char *s, size_t width)
{
	size_t n = strnlen(s, width);
	for (int i = 0; i < ENGI_OUTCOME_COUNT; i++)
		if (strlen(outcomes[i].name) == n && !memcmp(outcomes[i].name, s, n))
			return i;
	return -1;
}

int engi_outcome_scored(int outcome)
{
	return known(outcome) && outcomes[outcome].scored;
}

int engi_outcome_infra(int outcome)
{
	return known(outcome) && outcomes[outcome].infra;
}

const char *engi_outcome_why(int outcome)
{
	return known(outcome) ? outcomes[outcome].why : "";
}

char *engi_outcome_list(char *buf, size_t size, int scored, const char *sep, const char *last)
{
	int pick[ENGI_OUTCOME_COUNT], n = 0;
	for (int i = 0; i < ENGI_OUTCOME_COUNT; i++)
		if (scored < 0 || outcomes[i].scored == scored)
			pick[n++] = i;
	size_t at = 0;
	buf[0] = '\0';
	for (int k = 0; k < n && at < size; k++) {
		const char *before = k == 0 ? "" : k == n - 1 ? last : sep;
		int w = snprintf(buf + at, size - at, "%s%s", before, outcomes[pick[k]].name);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}
