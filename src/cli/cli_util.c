#include "cli.h"

#include "engi/alloc.h"
#include "engi/stats.h"
#include "secrets.h"
#include "text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every message printed: no secret in it, and the control characters of
 * the file names and task text it quotes escaped (\x1b, \x0a), so that
 * one message is one line and cannot drive the terminal. */
static void print_message(const char *msg)
{
	char clean[4 * ENGI_ERROR_MSG_MAX], shown[4 * ENGI_ERROR_MSG_MAX];
	snprintf(clean, sizeof(clean), "%s", msg);
	secrets_scrub_str(clean);
	text_escape_controls(clean, shown, sizeof(shown));
	fprintf(stderr, "engisweep: %s\n", shown);
}

void cli_error(const struct engi_error *err)
{
	print_message(err->msg[0] ? err->msg : engi_strerror(err->code));
}

void cli_errorf(const char *fmt, ...)
{
	char msg[4 * ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	print_message(msg);
}

int cli_int(const char *opt, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		cli_errorf("%s: '%s' is not an integer from %ld to %ld", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < lo || v > hi) {
		cli_errorf("%s: '%s' is not a number from %g to %g", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

char *cli_command_line(int argc, char **argv)
{
	size_t n = 16;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	char *s = engi_malloc(n);
	if (!s)
		return NULL;
	strcpy(s, "engisweep");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int strlist_push(struct strlist *l, const char *s)
{
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 8;
		const char **nv = engi_reallocarray(l->v, na, sizeof(*nv));
		if (!nv)
			return ENGI_ENOMEM;
		l->v = nv;
		l->alloc = na;
	}
	l->v[l->n++] = s;
	return 0;
}

void strlist_release(struct strlist *l)
{
	engi_free(l->v);
	memset(l, 0, sizeof(*l));
}

int cli_boot_option(int opt, const char *arg, struct engi_boot_opts *b)
{
	long v;
	double d;
	switch (opt) {
	case CLI_OPT_SEED:
		if (cli_int("--seed", arg, 0, 0x7fffffffffffffffL, &v) < 0)
			return -1;
		b->seed = (uint64_t)v;
		return 1;
	case CLI_OPT_DRAWS:
		if (cli_int("--draws", arg, 100, ENGI_STATS_DRAWS_MAX, &v) < 0)
			return -1;
		b->draws = (size_t)v;
		return 1;
	case CLI_OPT_LEVEL:
		if (cli_num("--level", arg, 0.5, 0.999, &d) < 0)
			return -1;
		b->level = d;
		return 1;
	case CLI_OPT_MIN_TASKS:
		if (cli_int("--min-tasks", arg, 1, 1000000, &v) < 0)
			return -1;
		b->min_tasks = (size_t)v;
		return 1;
	case CLI_OPT_INTERVAL:
		if (!strcmp(arg, "percentile")) {
			b->interval = ENGI_INTERVAL_PERCENTILE;
		} else if (!strcmp(arg, "bca")) {
			b->interval = ENGI_INTERVAL_BCA;
		} else {
			cli_errorf("--interval: '%s' is not percentile or bca", arg);
			return -1;
		}
		return 1;
	}
	return 0;
}
