/*
 * Fuzz target: the task file loader (src/core/source_native.c, task.c) on arbitrary bytes,
 * written as task.json into a folder that also holds f.txt and sub/g.txt
 * for the host paths a task names (inputs, drawings, steps' "from", the
 * verifier's files). A task that loads has an id and a content hash; a
 * failure has a message that names the file. Anything else aborts.
 */
#include "fuzz_file.h"

#include "task.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	char p[128];
	fuzz_write_file("f.txt", (const uint8_t *)"f\n", 2, p, sizeof(p));
	snprintf(p, sizeof(p), "%s/sub", fuzz_dir());
	if (mkdir(p, 0700) != 0)
		abort();
	fuzz_write_file("sub/g.txt", (const uint8_t *)"g\n", 2, p, sizeof(p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	char path[128];
	fuzz_write_file("task.json", data, size, path, sizeof(path));
	struct suite s;
	struct engi_error e;
	engi_error_init(&e);
	int rc = suite_load(&s, path, &e);
	fuzz_note("task", rc, e.msg);
	if (rc > 0)
		abort();
	if (rc < 0) {
		if (e.code != rc || !strstr(e.msg, "task.json"))
			abort();
		return 0;
	}
	if (s.ntasks != 1 || !s.tasks[0].id || !s.tasks[0].id[0] || strlen(s.tasks[0].hash) != 64 ||
	    !suite_find(&s, s.tasks[0].id))
		abort();
	suite_release(&s);
	return 0;
}
