/*
 * A toy task source, the way a benchmark's adapter is written: a folder
 * holding toy.tasks, one task a line, "ID|INSTRUCTION|VOLUME", translated
 * into engisweep's task JSON and added with suite_add_json. A line that is
 * not three fields is refused with its line number. It is registered by the
 * one registry line a new source adds (source.c, ENGI_EXTRA_TASK_SOURCE).
 */
#include "source.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int toy_probe(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/toy.tasks", path);
	return fs_path_is_file(p) ? 50 : 0;
}

static json_t *toy_task(const char *id, const char *instruction, double volume)
{
	return json_pack(
	    "{s:s,s:s,s:[s],s:s,s:s,s:s,s:[{s:s}],s:{s:s,s:s,s:[{s:s,s:s},{s:s,s:s,s:f,s:f}]},"
	    "s:[{s:s}]}",
	    "id", id, "domain", "CAD", "software", "sh", "type", "single", "interface", "cli",
	    "instruction", instruction, "deliverables", "path", "part.stl", "verifier", "kind",
	    "mesh", "file", "part.stl", "criteria", "name", "closed", "check", "watertight", "name",
	    "volume", "check", "volume", "value", volume, "tol_rel", 0.001, "reference", "run",
	    "true");
}

static int toy_load(struct suite *s, const char *path, int strict, struct engi_error *err)
{
	char p[PATH_MAX], dir[PATH_MAX];
	snprintf(p, sizeof(p), "%s/toy.tasks", path);
	if (!realpath(path, dir))
		RAISE(err, ENGI_EIO, "cannot resolve '%s'", path);
	char *text = NULL;
	size_t len = 0;
	TRY(fs_read_file(p, 1 << 20, &text, &len, err));
	int rc = 0, line = 0;
	for (char *l = text, *next; rc == 0 && l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		line++;
		char where[PATH_MAX + 32];
		snprintf(where, sizeof(where), "%s:%d", p, line);
		char *f1 = strchr(l, '|'), *f2 = f1 ? strchr(f1 + 1, '|') : NULL;
		if (!f2) {
			char msg[PATH_MAX + 96];
			snprintf(msg, sizeof(msg), "%s: expected ID|INSTRUCTION|VOLUME", where);
			if (strict)
				rc = engi_raise(err, ENGI_EPARSE, "%s", msg);
			else
				rc = suite_refuse(s, where, ENGI_EPARSE, "not three fields", msg);
			continue;
		}
		*f1 = *f2 = '\0';
		json_t *j = toy_task(l, f1 + 1, atof(f2 + 1));
		struct engi_error e;
		engi_error_init(&e);
		rc = j ? suite_add_json(s, where, dir, j, &e) : ENGI_ENOMEM;
		json_decref(j);
		if (rc < 0 && (strict || rc == ENGI_ENOMEM))
			engi_raise(err, rc, "%s", e.msg);
		else if (rc < 0)
			rc = suite_refuse(s, where, rc, "not a valid task", e.msg);
	}
	engi_free(text);
	return rc;
}

static const struct task_source_ops toy_ops = {.probe = toy_probe, .load = toy_load};

const struct task_source task_source_toy = {
    .name = "toy",
    .summary = "a toy source for tests: toy.tasks, ID|INSTRUCTION|VOLUME per line",
    .supports = "mesh tasks with a volume",
    .ops = &toy_ops,
};
