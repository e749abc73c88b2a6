/*
 * Fuzz target: the structureclaw task source (src/core/source_structureclaw.c)
 * on arbitrary bytes, written as one scenario file,
 * scenarios/standard_workflow/sc-1.json, of a benchmark folder whose
 * fixtures hold one ground-truth model of our own (a two-node cantilever,
 * id "gt-1") and a drawing. The scenario either loads (an id, a content
 * hash, the structureclaw verifier, a reference) or is refused with a
 * reason that names its file; the folder itself never fails to load.
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

static const char gt[] =
    "[{\"id\": \"gt-1\", \"description\": \"cantilever\", \"model\": {\"schema_version\": "
    "\"2.0.0\", \"unit_system\": \"SI\", \"nodes\": [{\"id\": \"1\", \"x\": 0, \"y\": 0, \"z\": "
    "0, \"restraints\": [true, true, true, true, true, true]}, {\"id\": \"2\", \"x\": 3, \"y\": "
    "0, \"z\": 0}], \"elements\": [{\"id\": \"1\", \"type\": \"beam\", \"nodes\": [\"1\", "
    "\"2\"], \"material\": \"1\", \"section\": \"1\"}], \"materials\": [{\"id\": \"1\", \"E\": "
    "205000, \"nu\": 0.3}], \"sections\": [{\"id\": \"1\", \"name\": \"B1\", \"type\": \"beam\", "
    "\"properties\": {\"A\": 0.01, \"Iy\": 0.0001, \"Iz\": 0.0001, \"J\": 0.0001, \"G\": "
    "79000}}], \"load_cases\": [{\"id\": \"LC1\", \"loads\": [{\"node\": \"2\", \"fz\": "
    "-10}]}], \"metadata\": {\"frameDimension\": \"2d\"}}}]\n";

static void setup(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	char p[256];
	const char *dirs[] = {"scenarios", "scenarios/standard_workflow", "fixtures"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", fuzz_dir(), dirs[i]);
		if (mkdir(p, 0700) != 0)
			abort();
	}
	fuzz_write_file("fixtures/ground-truth-models.json", (const uint8_t *)gt, strlen(gt), p,
			sizeof(p));
	fuzz_write_file("fixtures/d.png", (const uint8_t *)"\x89PNG\r\n\x1a\n", 8, p, sizeof(p));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	char path[256];
	fuzz_write_file("scenarios/standard_workflow/sc-1.json", data, size, path, sizeof(path));
	struct suite s;
	struct engi_error e;
	engi_error_init(&e);
	int rc = suite_load_from(&s, fuzz_dir(), NULL, 1, &e);
	if (rc != 0 || strcmp(s.source, "structureclaw"))
		abort(); /* one bad scenario never fails the folder */
	fuzz_note("structureclaw", (int)s.nrefused, s.nrefused ? s.refused[0].category : "loaded");
	if (s.ntasks + s.nrefused != 1)
		abort();
	if (s.nrefused) {
		const struct task_refusal *r = &s.refused[0];
		if (!r->category || !r->category[0] || !r->reason ||
		    !strstr(r->reason, "sc-1.json"))
			abort();
	} else {
		const struct task *t = &s.tasks[0];
		if (!t->id || strcmp(t->id, "sc-1") || strlen(t->hash) != 64 || !t->verifier ||
		    strcmp(t->verifier->name, "structureclaw") || !t->reference.n || !t->json)
			abort();
	}
	suite_release(&s);
	return 0;
}
