#include "strtab.h"

#include "engi/alloc.h"

#include <stdint.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

void engi_strtab_release(struct strtab *t)
{
	engi_free(t->key);
	engi_free(t->val);
	memset(t, 0, sizeof *t);
}

static int strtab_grow(struct strtab *t, struct engi_error *err)
{
	size_t ncap = t->cap ? 2 * t->cap : 64;
	const char **nk = engi_calloc(ncap, sizeof *nk);
	size_t *nv = engi_calloc(ncap, sizeof *nv);
	if (!nk || !nv) {
		engi_free(nk);
		engi_free(nv);
		RAISE(err, ENGI_ENOMEM, "out of memory indexing names");
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->key[i])
			continue;
		size_t j = hash_str(t->key[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = t->key[i];
		nv[j] = t->val[i];
	}
	engi_free(t->key);
	engi_free(t->val);
	t->key = nk;
	t->val = nv;
	t->cap = ncap;
	return 0;
}

/* SIZE_MAX when absent */
size_t engi_strtab_get(const struct strtab *t, const char *k)
{
	if (!t->cap)
		return SIZE_MAX;
	size_t j = hash_str(k) & (t->cap - 1);
	while (t->key[j]) {
		if (!strcmp(t->key[j], k))
			return t->val[j];
		j = (j + 1) & (t->cap - 1);
	}
	return SIZE_MAX;
}

/* k must outlive the table */
int engi_strtab_put(struct strtab *t, const char *k, size_t v, struct engi_error *err)
{
	if (2 * (t->n + 1) > t->cap)
		TRY(strtab_grow(t, err));
	size_t j = hash_str(k) & (t->cap - 1);
	while (t->key[j]) {
		if (!strcmp(t->key[j], k)) {
			t->val[j] = v;
			return 0;
		}
		j = (j + 1) & (t->cap - 1);
	}
	t->key[j] = k;
	t->val[j] = v;
	t->n++;
	return 0;
}

int engi_strpool_add(struct engi_strpool **pp, const char *s, const char **out, size_t *index,
		     struct engi_error *err)
{
	if (!*pp && !(*pp = engi_calloc(1, sizeof **pp)))
		RAISE(err, ENGI_ENOMEM, "out of memory keeping names");
	struct engi_strpool *p = *pp;
	size_t i = engi_strtab_get(&p->ix, s);
	if (i == SIZE_MAX) {
		if (p->n == p->alloc) {
			size_t na = p->alloc ? 2 * p->alloc : 64;
			char **ns = engi_reallocarray(p->s, na, sizeof *ns);
			if (!ns)
				RAISE(err, ENGI_ENOMEM, "out of memory keeping names");
			p->s = ns;
			p->alloc = na;
		}
		char *copy = engi_strdup(s);
		if (!copy)
			RAISE(err, ENGI_ENOMEM, "out of memory keeping names");
		int rc = engi_strtab_put(&p->ix, copy, p->n, err);
		if (rc) {
			engi_free(copy);
			return rc;
		}
		i = p->n;
		p->s[p->n++] = copy;
	}
	if (out)
		*out = p->s[i];
	if (index)
		*index = i;
	return 0;
}

const char *engi_strpool_get(const struct engi_strpool *p, size_t i)
{
	return p && i < p->n ? p->s[i] : NULL;
}

void engi_strpool_free(struct engi_strpool **pp)
{
	struct engi_strpool *p = *pp;
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		engi_free(p->s[i]);
	engi_free(p->s);
	engi_strtab_release(&p->ix);
	engi_free(p);
	*pp = NULL;
}
