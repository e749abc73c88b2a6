/*
 * error.h - the one error vocabulary of engisweep.
 *
 * Every fallible function returns 0 on success or a negative ENGI_E* code, and
 * fills an optional caller-owned struct engi_error with a message. The first
 * error wins: once a message is set, later raises keep it, so the message the
 * user reads names what failed first. The code, its name and its default
 * message all come from ENGI_ERRNO_MAP.
 *
 * Three macros and no more: TRY propagates, RAISE reports bad input or a
 * failing environment, BUG_ON stops on a broken invariant of our own. Nothing a
 * task file, a model or a guest can cause may reach BUG_ON.
 */
#ifndef ENGI_ERROR_H
#define ENGI_ERROR_H

#include <stddef.h>

#define ENGI_ERRNO_MAP(X)                                                                          \
	X(NOMEM, "out of memory")                                                                  \
	X(IO, "input/output error")                                                                \
	X(PARSE, "malformed input")                                                                \
	X(INVALID, "invalid value")                                                                \
	X(TOOBIG, "over its size cap")                                                             \
	X(TIMEOUT, "timed out")                                                                    \
	X(NOTSUP, "not supported")                                                                 \
	X(NOTFOUND, "not found")                                                                   \
	X(INTERRUPTED, "interrupted")                                                              \
	X(ENV, "environment failure")                                                              \
	X(UNAVAIL, "service unavailable")                                                          \
	X(AUTH, "authentication refused")                                                          \
	X(MISMATCH, "does not match")                                                              \
	X(BUG, "internal error")

enum engi_errno {
	ENGI_OK = 0,
#define ENGI_X_ENUM(name, msg) ENGI_E##name,
	ENGI_ERRNO_FIRST_ = -100,
	ENGI_ERRNO_MAP(ENGI_X_ENUM)
#undef ENGI_X_ENUM
	    ENGI_ERRNO_LAST_
};

#define ENGI_ERROR_MSG_MAX 512

struct engi_error {
	int code;
	char msg[ENGI_ERROR_MSG_MAX];
};

/* Clears an error struct (code 0, empty message). */
void engi_error_init(struct engi_error *err);

/* Name ("ENGI_EPARSE") and default message of a code. */
const char *engi_strerror(int code);
const char *engi_errname(int code);

/*
 * Records code and a printf-style message in err (NULL is allowed) unless an
 * error is already recorded there. Returns code, so callers can write
 * `return engi_raise(err, ENGI_EIO, "cannot open '%s'", p);`.
 */
int engi_raise(struct engi_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes an existing message with context ("loading suite: ..."). */
void engi_error_prefix(struct engi_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Aborts with file and line: only for our own broken invariants. */
_Noreturn void engi_bug(const char *file, int line, const char *cond);

#define TRY(expr)                                                                                  \
	do {                                                                                       \
		int try_rc_ = (expr);                                                              \
		if (try_rc_ < 0)                                                                   \
			return try_rc_;                                                            \
	} while (0)

#define RAISE(err, code, ...) return engi_raise((err), (code), __VA_ARGS__)

#define BUG_ON(cond)                                                                               \
	do {                                                                                       \
		if (cond)                                                                          \
			engi_bug(__FILE__, __LINE__, #cond);                                       \
	} while (0)

#endif
