#include "engi/dynbuf.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <stdio.h>
#include <string.h>

void engi_dynbuf_init(struct engi_dynbuf *b, size_t cap)
{
	b->buf = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

void engi_dynbuf_release(struct engi_dynbuf *b)
{
	engi_free(b->buf);
	b->buf = NULL;
	b->len = b->alloc = 0;
}

void engi_dynbuf_reset(struct engi_dynbuf *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

static int ensure(struct engi_dynbuf *b, size_t need)
{
	if (need > b->cap)
		return ENGI_ETOOBIG;
	if (need + 1 <= b->alloc)
		return 0;
	size_t n = b->alloc ? b->alloc : 256;
	while (n < need + 1)
		n *= 2;
	if (n > b->cap + 1)
		n = b->cap + 1;
	char *p = engi_realloc(b->buf, n);
	if (!p)
		return ENGI_ENOMEM;
	b->buf = p;
	b->alloc = n;
	return 0;
}

int engi_dynbuf_add(struct engi_dynbuf *b, const void *data, size_t n)
{
	if (n > b->cap - b->len)
		return ENGI_ETOOBIG;
	TRY(ensure(b, b->len + n));
	if (n)
		memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

int engi_dynbuf_addstr(struct engi_dynbuf *b, const char *s)
{
	return engi_dynbuf_add(b, s, strlen(s));
}

int engi_dynbuf_vprintf(struct engi_dynbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return ENGI_EINVALID;
	if ((size_t)n > b->cap - b->len)
		return ENGI_ETOOBIG;
	TRY(ensure(b, b->len + (size_t)n));
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int engi_dynbuf_printf(struct engi_dynbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = engi_dynbuf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *engi_dynbuf_take(struct engi_dynbuf *b, size_t *len)
{
	if (!b->buf) {
		if (ensure(b, 0) < 0)
			return NULL;
		b->buf[0] = '\0';
	}
	char *p = b->buf;
	if (len)
		*len = b->len;
	b->buf = NULL;
	b->len = b->alloc = 0;
	return p;
}
