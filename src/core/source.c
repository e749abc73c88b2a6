/*
 * The registry of task sources and the loading that detects them.
 */
#include "source.h"

#include "engi/alloc.h"

#include <stdio.h>
#include <string.h>

#ifdef ENGI_EXTRA_TASK_SOURCE
/* a test adds its toy source with this one line, as a new source would */
extern const struct task_source ENGI_EXTRA_TASK_SOURCE;
#endif

static const struct task_source *const sources[] = {
    &task_source_native,
    &task_source_engiworld,
#ifdef ENGI_EXTRA_TASK_SOURCE
    &ENGI_EXTRA_TASK_SOURCE,
#endif
    NULL,
};

const struct task_source *const *task_sources(void)
{
	return sources;
}

const struct task_source *task_source_lookup(const char *name, struct engi_error *err)
{
	char names[256] = "";
	size_t len = 0;
	for (size_t i = 0; sources[i]; i++) {
		if (!strcmp(sources[i]->name, name))
			return sources[i];
		int w = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				 sources[i]->name);
		if (w > 0 && (size_t)w < sizeof(names) - len)
			len += (size_t)w;
	}
	engi_raise(err, ENGI_ENOTFOUND, "no task source '%s' (known: %s)", name, names);
	return NULL;
}

const struct task_source *task_source_detect(const char *path, struct engi_error *err)
{
	const struct task_source *best = NULL;
	int best_score = 0;
	for (size_t i = 0; sources[i]; i++) {
		int sc = sources[i]->ops->probe(path);
		if (sc > best_score) {
			best = sources[i];
			best_score = sc;
		}
	}
	if (!best)
		engi_raise(err, ENGI_ENOTFOUND,
			   "'%s' is not a suite any task source reads (see engisweep inspect; "
			   "name one with --source)",
			   path);
	return best;
}

size_t suite_refused_by(const struct suite *s, size_t i)
{
	const char *cat = s->refused[i].category;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->refused[j].category, cat))
			return 0;
	size_t n = 0;
	for (size_t j = i; j < s->nrefused; j++)
		n += !strcmp(s->refused[j].category, cat);
	return n;
}

int suite_refuse(struct suite *s, const char *file, int code, const char *category,
		 const char *reason)
{
	struct task_refusal *v = engi_reallocarray(s->refused, s->nrefused + 1, sizeof(*v));
	if (!v)
		return ENGI_ENOMEM;
	s->refused = v;
	struct task_refusal *r = &s->refused[s->nrefused];
	r->file = arena_strdup(&s->arena, file);
	r->reason = arena_strdup(&s->arena, reason);
	r->category = arena_strdup(&s->arena, category);
	r->code = code;
	if (!r->file || !r->reason || !r->category)
		return ENGI_ENOMEM;
	s->nrefused++;
	return 0;
}

int suite_load_from(struct suite *s, const char *path, const char *source, int strict,
		    struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	arena_init(&s->arena);
	const struct task_source *src;
	if (source) {
		src = task_source_lookup(source, err);
		if (!src) {
			suite_release(s);
			return ENGI_ENOTFOUND;
		}
	} else {
		/* nothing claims it: the native source says what is wrong */
		src = task_source_detect(path, NULL);
		if (!src)
			src = &task_source_native;
	}
	s->source = src->name;
	s->path = arena_strdup(&s->arena, path);
	if (!s->path) {
		suite_release(s);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = src->ops->load(s, path, strict && !src->partial, err);
	if (rc < 0)
		suite_release(s);
	return rc;
}
