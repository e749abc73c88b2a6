#include "arena.h"

#include "engi/alloc.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

#define ARENA_BLOCK_MIN ((size_t)64 << 10)

void arena_init(struct arena *a)
{
	a->head = NULL;
}

void arena_release(struct arena *a)
{
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *next = b->next;
		engi_free(b);
		b = next;
	}
	a->head = NULL;
}

void *arena_alloc(struct arena *a, size_t n)
{
	const size_t align = alignof(max_align_t);
	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + align - 1) & ~(align - 1);
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK_MIN ? n : ARENA_BLOCK_MIN;
		b = engi_malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

void *arena_array(struct arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / 2 / size)
		return NULL;
	return arena_alloc(a, count * size);
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s);
	char *d = arena_alloc(a, n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}
