/*
 * strtab.h - a hash table from NUL-terminated strings to indexes, private
 * to analysis/. It does not own its keys: they must outlive the table (or
 * the table is rebuilt when they move). Zeroed memory is an empty table;
 * engi_strtab_release frees it and leaves it empty.
 */
#ifndef ENGI_ANALYSIS_STRTAB_H
#define ENGI_ANALYSIS_STRTAB_H

#include <stddef.h>

#include "engi/error.h"

struct strtab {
	const char **key; /* not owned */
	size_t *val;
	size_t cap, n;
};

void engi_strtab_release(struct strtab *t);
/* The index stored under k, SIZE_MAX when absent. */
size_t engi_strtab_get(const struct strtab *t, const char *k);
/* Stores v under k (replacing an earlier value). */
int engi_strtab_put(struct strtab *t, const char *k, size_t v, struct engi_error *err);

/*
 * Interned strings of any length: one owned copy of each distinct text, its
 * index the order it was first added. The texts never move (each is its own
 * allocation), so pointers to them stay valid until engi_strpool_free.
 * A NULL pool is empty; engi_strpool_add makes it on first use.
 */
struct engi_strpool {
	struct strtab ix; /* text to index; keys are the owned texts */
	char **s;
	size_t n, alloc;
};

/* The interned copy of s (*out) and its index (index may be NULL). */
int engi_strpool_add(struct engi_strpool **p, const char *s, const char **out, size_t *index,
		     struct engi_error *err);
/* Text i, NULL when there is none. */
const char *engi_strpool_get(const struct engi_strpool *p, size_t i);
void engi_strpool_free(struct engi_strpool **p);

#endif
