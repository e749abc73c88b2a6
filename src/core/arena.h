/*
 * arena.h - a bump allocator for data that lives as long as a sweep (task
 * suites, matrices). Everything allocated from an arena is freed at once by
 * arena_release; nothing is freed singly. Not thread-safe.
 */
#ifndef ENGI_ARENA_H
#define ENGI_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head;
};

void arena_init(struct arena *a);
void arena_release(struct arena *a);
/* Zeroed, aligned for any type; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t n);
void *arena_array(struct arena *a, size_t count, size_t size);
char *arena_strdup(struct arena *a, const char *s);

#endif
