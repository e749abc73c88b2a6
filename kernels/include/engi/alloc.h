/*
 * alloc.h - the one allocation seam.
 *
 * All heap allocation in engisweep goes through these calls so that tests can
 * make the Nth allocation fail (engi_alloc_fail_after) and check that every
 * path reports ENGI_ENOMEM instead of crashing. They behave like their libc
 * namesakes; engi_free accepts NULL. The counter is process-wide and atomic.
 */
#ifndef ENGI_ALLOC_H
#define ENGI_ALLOC_H

#include <stddef.h>

void *engi_malloc(size_t n);
void *engi_calloc(size_t count, size_t size);
void *engi_realloc(void *p, size_t n);
/* Overflow-checked realloc of count*size bytes. */
void *engi_reallocarray(void *p, size_t count, size_t size);
/* Room for need items of size bytes in the array *items of capacity *cap:
 * when *cap is short the capacity doubles (from ENGI_GROW_FIRST) until it
 * holds need, the bytes checked for overflow (a doubling that would
 * overflow falls back to need itself). The items are kept; on failure
 * *items and *cap are left as they were and ENGI_ENOMEM is returned. */
#define ENGI_GROW_FIRST 16
int engi_grow(void **items, size_t *cap, size_t need, size_t size);
char *engi_strdup(const char *s);
char *engi_strndup(const char *s, size_t n);
void engi_free(void *p);

/* Test hook: allocation number n (1-based, counted from now) and every later
 * one fail; n = 0 turns failure injection off. */
void engi_alloc_fail_after(long n);

#endif
