/*
 * text.h - text from untrusted sources (command output, guest files) made
 * safe for JSON: invalid UTF-8 sequences and NUL bytes become U+FFFD; text
 * quoted for a POSIX shell; the nearest of a list of names, for messages
 * (engi_json_join, engi/json.h, joins such a list); and text with its
 * control characters escaped, for messages.
 */
#ifndef ENGI_TEXT_H
#define ENGI_TEXT_H

#include <stddef.h>

/* A valid UTF-8 copy of s[0..n); NULL when out of memory. */
char *text_utf8_clean(const char *s, size_t n, size_t *out_len);

/* text as one single-quoted sh word ('...', each ' as '\''); engi_free;
 * NULL when out of memory. */
char *text_sh_quote(const char *text);

/* The one of names[0..n) nearest to word in edit distance when it is near
 * enough to be a slip of the keyboard (at most a third of word's length,
 * at least 1), else NULL: the "did you mean" of a message. */
const char *text_closest(const char *word, const char *const *names, size_t n);

/* s into out[cap] with every C0 control character and DEL written as
 * \xNN ("\x1b", "\x0a"): a message that names a file or quotes a task
 * cannot move a terminal's cursor or forge a line. Stops before an escape
 * or UTF-8 character that would not fit; returns the length written. */
size_t text_escape_controls(const char *s, char *out, size_t cap);

#endif
