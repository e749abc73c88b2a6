/*
 * textout.h - rendering into a capped engi_dynbuf, private to analysis/
 * (compare and evidence tables). A failed add sets the buffer's cap to 0,
 * remembered until engi_textout_check reports it, so renderers need not check
 * every line.
 */
#ifndef ENGI_ANALYSIS_TEXTOUT_H
#define ENGI_ANALYSIS_TEXTOUT_H

#include <stddef.h>

#include "engi/dynbuf.h"
#include "engi/error.h"

void engi_textout(struct engi_dynbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* n bytes of s, and a C string, added alike. */
void engi_textout_bytes(struct engi_dynbuf *b, const char *s, size_t n);
void engi_textout_str(struct engi_dynbuf *b, const char *s);
/* ENGI_ETOOBIG "the WHAT output is over its CAP-byte cap or out of memory"
 * after a failed add, else 0. */
int engi_textout_check(const struct engi_dynbuf *b, const char *what, size_t cap,
		       struct engi_error *err);
/* A CSV field, double-quoted when it holds a comma, a quote, a line break
 * or spaces at its edges (RFC 4180; readers may trim them). */
void engi_textout_csv_str(struct engi_dynbuf *b, const char *s);

#endif
