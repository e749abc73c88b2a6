/*
 * Fuzz target: the harbor task source (src/core/source_harbor.c) on
 * arbitrary bytes, cut at lines "----" into a task folder's task.toml, its
 * environment/Dockerfile and the deliverables map, beside an instruction,
 * a test script, a solution and a build-context folder of our own, with
 * every environment mapped to the host image. The task either loads (id
 * "task", a command verifier with the harbor_reward check, a reference) or
 * is refused with a reason that names task.toml; a deliverables map that
 * is not an object of entries fails the load with a message naming it.
 * Anything else aborts.
 */
#include "fuzz_file.h"

#include "source.h"
#include "task.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[256];

static void setup(void)
{
	if (root[0])
		return;
	char p[256];
	const char *dirs[] = {"task", "task/environment", "task/environment/ctx", "task/tests",
			      "task/solution"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", fuzz_dir(), dirs[i]);
		if (mkdir(p, 0700) != 0)
			abort();
	}
	static const struct {
		const char *name, *text;
	} files[] = {
	    {"task/instruction.md", "Write the answer to answer.txt.\n"},
	    {"task/tests/test.sh", "#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n"},
	    {"task/solution/solve.sh", "#!/bin/sh\necho 42 > answer.txt\n"},
	    {"task/environment/ctx/a.txt", "a\n"},
	    {"task/environment/b.txt", "b\n"},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		fuzz_write_file(files[i].name, (const uint8_t *)files[i].text,
				strlen(files[i].text), p, sizeof(p));
	snprintf(root, sizeof(root), "%s/task", fuzz_dir());
}

/* The next part of [*at, end): up to a line "----". */
static size_t part(const uint8_t *data, size_t size, size_t *at)
{
	static const char sep[] = "\n----\n";
	size_t start = *at, i = start;
	while (i + sizeof(sep) - 1 <= size && memcmp(data + i, sep, sizeof(sep) - 1))
		i++;
	if (i + sizeof(sep) - 1 > size)
		i = size;
	*at = i < size ? i + sizeof(sep) - 1 : size;
	return i - start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	static const char *const names[] = {"task/task.toml", "task/environment/Dockerfile",
					    "deliverables.json"};
	size_t at = 0;
	char paths[3][256];
	for (int i = 0; i < 3; i++) {
		size_t start = at, n = part(data, size, &at);
		fuzz_write_file(names[i], data + start, n, paths[i], sizeof(paths[i]));
	}
	struct suite_image img = {"*", "host"};
	struct suite_load_opts o = {.source = "harbor",
				    .strict = 1,
				    .images = &img,
				    .nimages = 1,
				    .deliverables = paths[2]};
	struct suite s;
	struct engi_error e;
	engi_error_init(&e);
	int rc = suite_load_with(&s, root, &o, &e);
	fuzz_note("harbor", rc, e.msg);
	if (rc != 0) {
		/* only the map can fail the load, and its message names it */
		if (rc == ENGI_ENOMEM || !strstr(e.msg, "deliverables.json"))
			abort();
		return 0;
	}
	if (s.ntasks + s.nrefused != 1)
		abort();
	if (s.nrefused) {
		const struct task_refusal *r = &s.refused[0];
		if (!r->category || !r->category[0] || !r->reason ||
		    !strstr(r->reason, "task.toml"))
			abort();
	} else {
		const struct task *t = &s.tasks[0];
		if (!t->id || strcmp(t->id, "task") || strlen(t->hash) != 64 || !t->verifier ||
		    strcmp(t->verifier->name, "command") || !t->reference.n || !t->json ||
		    !t->env.workdir)
			abort();
	}
	suite_release(&s);
	return 0;
}
