#include "textout.h"

#include <stdarg.h>
#include <string.h>

void textout(struct engi_dynbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	/* a failed add leaves len short of the cap: caught by textout_check */
	if (engi_dynbuf_vprintf(b, fmt, ap) < 0)
		b->cap = 0;
	va_end(ap);
}

int textout_check(const struct engi_dynbuf *b, const char *what, size_t cap, struct engi_error *err)
{
	if (b->cap == 0)
		RAISE(err, ENGI_ETOOBIG, "the %s output is over its %zu-byte cap or out of memory",
		      what, cap);
	return 0;
}

void textout_csv_str(struct engi_dynbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
		textout(b, "%s", s);
		return;
	}
	textout(b, "\"");
	for (; *s; s++)
		textout(b, *s == '"' ? "\"\"" : "%c", *s);
	textout(b, "\"");
}
