/*
 * text.h - text from untrusted sources (command output, guest files) made
 * safe for JSON: invalid UTF-8 sequences and NUL bytes become U+FFFD; and
 * text quoted for a POSIX shell.
 */
#ifndef ENGI_TEXT_H
#define ENGI_TEXT_H

#include <stddef.h>

/* A valid UTF-8 copy of s[0..n); NULL when out of memory. */
char *utf8_clean(const char *s, size_t n, size_t *out_len);

/* text as one single-quoted sh word ('...', each ' as '\''); engi_free;
 * NULL when out of memory. */
char *sh_quote(const char *text);

#endif
