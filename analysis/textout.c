#include "textout.h"

#include <stdarg.h>
#include <string.h>

void engi_textout(struct engi_dynbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* a failed add leaves len short of the cap: caught by engi_textout_check */
	if (engi_dynbuf_vprintf(b, fmt, ap) < 0)
		b->cap = 0;
	va_end(ap);
}

void engi_textout_bytes(struct engi_dynbuf *b, const char *s, size_t n)
{
	if (engi_dynbuf_add(b, s, n) < 0)
		b->cap = 0;
}

void engi_textout_str(struct engi_dynbuf *b, const char *s)
{
	engi_textout_bytes(b, s, strlen(s));
}

int engi_textout_check(const struct engi_dynbuf *b, const char *what, size_t cap,
		       struct engi_error *err)
{
	if (b->cap == 0)
		RAISE(err, ENGI_ETOOBIG, "the %s output is over its %zu-byte cap or out of memory",
		      what, cap);
	return 0;
}

void engi_textout_csv_str(struct engi_dynbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
		engi_textout(b, "%s", s);
		return;
	}
	engi_textout(b, "\"");
	for (; *s; s++)
		engi_textout(b, *s == '"' ? "\"\"" : "%c", *s);
	engi_textout(b, "\"");
}
