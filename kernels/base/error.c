#include "engi/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void engi_error_init(struct engi_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

const char *engi_strerror(int code)
{
	switch (code) {
	case ENGI_OK:
		return "success";
#define ENGI_X_MSG(name, msg)                                                                      \
	case ENGI_E##name:                                                                         \
		return msg;
		ENGI_ERRNO_MAP(ENGI_X_MSG)
#undef ENGI_X_MSG
	default:
		return "unknown error";
	}
}

const char *engi_errname(int code)
{
	switch (code) {
	case ENGI_OK:
		return "ENGI_OK";
#define ENGI_X_NAME(name, msg)                                                                     \
	case ENGI_E##name:                                                                         \
		return "ENGI_E" #name;
		ENGI_ERRNO_MAP(ENGI_X_NAME)
#undef ENGI_X_NAME
	default:
		return "ENGI_E?";
	}
}

int engi_raise(struct engi_error *err, int code, const char *fmt, ...)
{
	if (!err || err->code != 0)
		return code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void engi_error_prefix(struct engi_error *err, const char *fmt, ...)
{
	if (!err || err->code == 0)
		return;
	char head[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	char old[ENGI_ERROR_MSG_MAX];
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
}

void engi_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "engisweep: BUG at %s:%d: %s\n", file, line, cond);
	abort();
}
