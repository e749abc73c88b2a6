/*
 * strtab.h - a hash table from NUL-terminated strings to indexes, private
 * to analysis/. It does not own its keys: they must outlive the table (or
 * the table is rebuilt when they move). Zeroed memory is an empty table;
 * strtab_release frees it and leaves it empty.
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

void strtab_release(struct strtab *t);
/* The index stored under k, SIZE_MAX when absent. */
size_t strtab_get(const struct strtab *t, const char *k);
/* Stores v under k (replacing an earlier value). */
int strtab_put(struct strtab *t, const char *k, size_t v,
	       struct engi_error *err);

#endif
