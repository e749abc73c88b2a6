/*
 * A suite: the tasks its source loaded, kept in the suite's arena, looked
 * up by id; a repeated id is refused.
 */
#include "source.h"
#include "task_load.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "fsutil.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>

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

int suite_load_task_json(struct suite *s, const char *file, const char *dir, struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	arena_init(&s->arena);
	s->source = "native";
	char *text = NULL;
	size_t len = 0;
	json_t *root = NULL;
	char *abs = realpath(dir, NULL);
	int rc = abs ? fs_read_file(file, (size_t)16 << 20, &text, &len, err)
		     : engi_raise(err, ENGI_ENOTFOUND, "no task folder '%s'", dir);
	if (rc == 0)
		rc = engi_json_parse(file, text, len, &root, err);
	if (rc == 0)
		rc = suite_add_json(s, file, abs, root, err);
	json_decref(root);
	engi_free(text);
	free(abs);
	if (rc < 0)
		suite_release(s);
	return rc;
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
