/*
 * A suite: the tasks its source loaded, kept in the suite's arena, looked
 * up by id; a repeated id is refused.
 */
#include "source.h"
#include "task_load.h"

#include "engi/alloc.h"

#include <string.h>

/* A free slot at the end of s->tasks. */
static struct task *suite_slot(struct suite *s)
{
	if (engi_grow((void **)&s->tasks, &s->tasks_alloc, s->ntasks + 1, sizeof(*s->tasks)) < 0)
		return NULL;
	return &s->tasks[s->ntasks];
}

int suite_add_json(struct suite *s, const char *file, const char *dir, json_t *root,
		   struct engi_error *err)
{
	struct task *t = suite_slot(s);
	if (!t)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	TRY(task_from_json(&s->arena, file, dir, root, t, err));
	for (size_t j = 0; j < s->ntasks; j++)
		if (!strcmp(s->tasks[j].id, t->id)) {
			/* the copy is not the suite's */
			task_release(t);
			RAISE(err, ENGI_EPARSE, "%s: /id: '%s' is already the id of %s", file,
			      t->id, s->tasks[j].file);
		}
	s->ntasks++;
	return 0;
}

int suite_load(struct suite *s, const char *path, struct engi_error *err)
{
	return suite_load_from(s, path, NULL, 1, err);
}

void suite_release(struct suite *s)
{
	for (size_t i = 0; i < s->ntasks; i++)
		task_release(&s->tasks[i]);
	engi_free(s->refused);
	engi_free(s->tasks);
	arena_release(&s->arena);
	s->tasks = NULL;
	s->ntasks = 0;
	s->refused = NULL;
	s->nrefused = 0;
	s->tasks_alloc = 0;
}

const struct task *suite_find(const struct suite *s, const char *id)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (!strcmp(s->tasks[i].id, id))
			return &s->tasks[i];
	return NULL;
}
