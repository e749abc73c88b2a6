/*
 * utf8.h - the one UTF-8 validity rule of the program (RFC 3629, as
 * jansson accepts it): no overlong forms, no surrogates, nothing past
 * U+10FFFF. Readers of untrusted text (reports, records, command output)
 * step through it with this.
 */
#ifndef ENGI_UTF8_H
#define ENGI_UTF8_H

#include <stddef.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s[0..n), 0 when
 * there is none; an ASCII byte, NUL included, is a sequence of 1. */
size_t engi_utf8_seq(const unsigned char *s, size_t n);

#endif
