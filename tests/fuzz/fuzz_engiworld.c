/*
 * Fuzz target: the engiworld task source (src/core/source_engiworld.c) on
 * arbitrary bytes, written as one task file of an EngiWorld tree,
 * task/single-software-execution/cli/calculix/task-01/task-01.json, in a
 * tree that also holds an init_file/, an eval.py and a ground_truth/ for
 * the paths a task names. The task either loads (an id, a content hash,
 * the Desktop as working folder) or is refused with a reason that names
 * its file; the tree itself never fails to load. Anything else aborts.
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

#define TASKDIR "task/single-software-execution/cli/calculix/task-01"

static void mkdirs(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", fuzz_dir(), rel);
	for (char *s = p + strlen(fuzz_dir()) + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0700);
			*s = '/';
		}
	if (mkdir(p, 0700) != 0)
		abort();
}

static void setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	char p[256];
	mkdirs(TASKDIR "/init_file");
	mkdirs(TASKDIR "/ground_truth");
	fuzz_write_file("task/taxonomy.json", (const uint8_t *)"{}\n", 3, p, sizeof(p));
	fuzz_write_file(TASKDIR "/eval.py", (const uint8_t *)"print('True')\n", 14, p, sizeof(p));
	fuzz_write_file(TASKDIR "/init_file/beam.inp", (const uint8_t *)"*NODE\n", 6, p, sizeof(p));
	fuzz_write_file(TASKDIR "/ground_truth/beam.inp", (const uint8_t *)"*NODE\n", 6, p,
			sizeof(p));
	fuzz_write_file(TASKDIR "/init_file/d.png", (const uint8_t *)"\x89PNG\r\n\x1a\n", 8, p,
			sizeof(p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	char path[256];
	fuzz_write_file(TASKDIR "/task-01.json", data, size, path, sizeof(path));
	struct suite s;
	struct engi_error e;
	engi_error_init(&e);
	int rc = suite_load_from(&s, fuzz_dir(), NULL, 1, &e);
	if (rc != 0 || strcmp(s.source, "engiworld"))
		abort(); /* one bad task file never fails the tree */
	fuzz_note("engiworld", (int)s.nrefused, s.nrefused ? s.refused[0].category : "loaded");
	if (s.ntasks + s.nrefused != 1)
		abort();
	if (s.nrefused) {
		const struct task_refusal *r = &s.refused[0];
		if (!r->category || !r->category[0] || !r->reason ||
		    !strstr(r->reason, "task-01.json"))
			abort();
	} else {
		const struct task *t = &s.tasks[0];
		if (!t->id || !t->id[0] || strlen(t->hash) != 64 || !t->env.workdir ||
		    strcmp(t->env.workdir, "/home/user/Desktop") || !t->ndeliverables)
			abort();
	}
	suite_release(&s);
	return 0;
}
