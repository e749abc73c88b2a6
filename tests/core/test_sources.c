/*
 * Task sources: the registry, detection, --source, strict and tolerant
 * loading, with a toy source plugged in by its one registry line (this
 * program compiles source.c with ENGI_EXTRA_TASK_SOURCE=task_source_toy).
 *   test_sources DEMO_SUITE BAD_TASKS SCRATCH
 */
#include "check.h"
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* CHECK with a message printed on failure */
#define CHECKM(cond, ...)                                                                          \
	do {                                                                                       \
		int ok_ = (cond);                                                                  \
		CHECK(ok_);                                                                        \
		if (!ok_) {                                                                        \
			fprintf(stderr, "  " __VA_ARGS__);                                         \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECKM(f != NULL, "cannot write %s", path);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_sources DEMO BAD_TASKS SCRATCH\n");
		return 2;
	}
	const char *demo = argv[1], *bad = argv[2], *scratch = argv[3];
	struct engi_error err;
	engi_error_init(&err);

	/* the registry: native first, the toy by its one line */
	const struct task_source *const *all = task_sources();
	CHECK_STR(all[0]->name, "native");
	const struct task_source *toy_src = NULL;
	char known[512] = "known: ";
	for (size_t i = 0; all[i]; i++) {
		if (!strcmp(all[i]->name, "toy"))
			toy_src = all[i];
		strncat(known, all[i]->name, sizeof(known) - strlen(known) - 1);
		if (all[i + 1])
			strncat(known, ", ", sizeof(known) - strlen(known) - 1);
	}
	CHECKM(toy_src != NULL, "toy source not registered");
	CHECKM(task_source_lookup("toy", &err) == toy_src, "lookup");
	CHECKM(task_source_lookup("nope", &err) == NULL, "unknown source found");
	CHECKM(strstr(err.msg, known) != NULL, "message: %s (expected %s)", err.msg, known);

	/* detection */
	char toy[4096], p[4200];
	snprintf(toy, sizeof(toy), "%s/toy-suite", scratch);
	mkdir(scratch, 0755);
	mkdir(toy, 0755);
	snprintf(p, sizeof(p), "%s/toy.tasks", toy);
	write_text(p, "cube|Model a unit cube.|1\nbroken line\nsphere|Model a sphere.|4.18879\n"
		      "cube|A second cube.|1\n");
	CHECKM(task_source_detect(toy, NULL) == toy_src, "toy folder not detected");
	CHECKM(task_source_detect(demo, NULL) == all[0], "demo not detected as native");

	/* tolerant: two tasks load, the broken line and the repeated id are refused */
	struct suite s;
	engi_error_init(&err);
	CHECK_INT(suite_load_from(&s, toy, NULL, 0, &err), 0);
	CHECK_STR(s.source, "toy");
	CHECK_INT(s.ntasks, 2);
	CHECK_INT(s.nrefused, 2);
	if (s.ntasks == 2) {
		CHECK_STR(s.tasks[0].id, "cube");
		CHECK_STR(s.tasks[1].id, "sphere");
		CHECK_STR(s.tasks[1].verifier->name, "mesh");
		CHECKM(strlen(s.tasks[1].hash) == 64, "no content hash");
	}
	if (s.nrefused == 2) {
		CHECK_STR(s.refused[0].category, "not three fields");
		CHECKM(strstr(s.refused[0].reason, "toy.tasks:2: expected ID|INSTRUCTION|VOLUME") !=
			   NULL,
		       "%s", s.refused[0].reason);
		CHECK_STR(s.refused[1].category, "not a valid task");
		CHECKM(strstr(s.refused[1].reason, "/id: 'cube' is already the id of") != NULL,
		       "%s", s.refused[1].reason);
	}
	suite_release(&s);

	/* strict: the first refusal is the error */
	engi_error_init(&err);
	CHECKM(suite_load_from(&s, toy, "toy", 1, &err) == ENGI_EPARSE, "strict load passed");
	CHECKM(strstr(err.msg, "toy.tasks:2:") != NULL, "%s", err.msg);

	/* the native source named, on its own suite, and tolerant on the bad corpus */
	engi_error_init(&err);
	CHECK_INT(suite_load_from(&s, demo, "native", 1, &err), 0);
	CHECK_INT(s.nrefused, 0);
	CHECKM(s.ntasks >= 12, "demo has %zu tasks", s.ntasks);
	suite_release(&s);
	engi_error_init(&err);
	CHECK_INT(suite_load_from(&s, bad, NULL, 0, &err), 0);
	CHECK_INT(s.ntasks, 0);
	CHECKM(s.nrefused > 100, "%zu refused", s.nrefused);
	size_t unknown = 0;
	for (size_t i = 0; i < s.nrefused; i++)
		unknown += strstr(s.refused[i].category, ": unknown field") != NULL;
	CHECKM(unknown >= 5, "unknown-field refusals: %zu", unknown);
	suite_release(&s);
	/* the wrong source named: its own refusal, not a crash */
	engi_error_init(&err);
	CHECKM(suite_load_from(&s, demo, "toy", 1, &err) < 0, "toy read the demo");
	return check_exit();
}
