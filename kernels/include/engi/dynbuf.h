/*
 * dynbuf.h - a growable byte buffer with a named cap.
 *
 * Every buffer that grows from untrusted input (model replies, command
 * output, traces, files read from an environment) is a dynbuf with a cap:
 * adding past the cap fails with ENGI_ETOOBIG instead of growing until memory
 * runs out. The contents stay NUL-terminated for convenience; binary data is
 * fine. engi_dynbuf_take hands the memory to the caller and resets the buffer.
 */
#ifndef ENGI_DYNBUF_H
#define ENGI_DYNBUF_H

#include <stdarg.h>
#include <stddef.h>

struct engi_dynbuf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t cap; /* most bytes it may ever hold */
};

void engi_dynbuf_init(struct engi_dynbuf *b, size_t cap);
void engi_dynbuf_release(struct engi_dynbuf *b);
void engi_dynbuf_reset(struct engi_dynbuf *b);
int engi_dynbuf_add(struct engi_dynbuf *b, const void *data, size_t n);
int engi_dynbuf_addstr(struct engi_dynbuf *b, const char *s);
int engi_dynbuf_printf(struct engi_dynbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int engi_dynbuf_vprintf(struct engi_dynbuf *b, const char *fmt, va_list ap);
/* Returns the buffer (never NULL on success) and its length; b is reset. */
char *engi_dynbuf_take(struct engi_dynbuf *b, size_t *len);

#endif
