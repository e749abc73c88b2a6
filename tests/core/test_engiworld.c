/*
 * EngiWorld task ids: every id of the benchmark's inventory (all 1,301, in
 * ../shared/benchmarks/engiworld/inventory.tsv) parses into the category,
 * interface, folder, task and os its row gives, the totals are the
 * benchmark's (931/140/120/40/60/10 by category, 691 CLI and 610 GUI, 687
 * Ubuntu and 614 Windows), and malformed ids are refused. Then a tree of
 * our own tasks in the benchmark's format (tests/engiworld/make_tree.sh)
 * is loaded and each task's translation checked field by field.
 * Usage: test_engiworld INVENTORY.tsv MAKE_TREE.sh SCRATCH
 */
#include "source.h"
#include "task.h"

#include "engi/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			failures++;                                                                \
			printf("FAIL line %d: ", __LINE__);                                        \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static const struct task *find(const struct suite *s, const char *id)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (!strcmp(s->tasks[i].id, id))
			return &s->tasks[i];
	printf("FAIL: task '%s' did not load\n", id);
	failures++;
	return NULL;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && !strcmp(s + a - b, tail);
}

/* Our own tree, loaded by the source and checked field by field. */
static void check_tree(const char *make_tree, const char *scratch)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && bash '%s' '%s'", scratch, make_tree, scratch);
	CHECK(system(cmd) == 0, "%s failed", cmd);
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	CHECK(suite_load_from(&s, scratch, NULL, 1, &err) == 0, "load: %s", err.msg);
	CHECK(!strcmp(s.source, "engiworld"), "detected as %s", s.source);
	CHECK(s.ntasks == 9 && s.nrefused == 9, "%zu loaded, %zu refused", s.ntasks, s.nrefused);
	const struct task *t =
	    find(&s, "single-software-execution--cli--calculix--task-01--ubuntu");
	if (t) {
		CHECK(!strcmp(t->domain, "CAE") && t->nsoftware == 1 &&
			  !strcmp(t->software[0], "calculix"),
		      "domain %s, software %s", t->domain, t->software[0]);
		CHECK(t->type == TASK_SINGLE && t->interface == IFACE_CLI, "type %d interface %d",
		      t->type, t->interface);
		CHECK(t->turn_limit == 100 && t->wall_s == 18000, "limits %d %g", t->turn_limit,
		      t->wall_s);
		CHECK(!strcmp(t->env.image, "tools") && t->env.workdir &&
			  !strcmp(t->env.workdir, "/home/user/Desktop") && t->env.cpus == 4 &&
			  t->env.memory_mb == 16384,
		      "environment %s %s %d %d", t->env.image, t->env.workdir, t->env.cpus,
		      t->env.memory_mb);
		CHECK(t->ninputs == 1 && !strcmp(t->inputs[0].env, "question.txt") &&
			  ends_with(t->inputs[0].host, "/calculix/task-01/init_file/question.txt"),
		      "inputs %zu %s", t->ninputs, t->ninputs ? t->inputs[0].host : "");
		CHECK(t->ndeliverables == 1 && !strcmp(t->deliverables[0].path, "answer.txt"),
		      "deliverables");
		CHECK(!strcmp(t->verifier->name, "command") &&
			  engi_verifier_env(t->verifier, t->criteria) == ENGI_VENV_EPISODE,
		      "verifier %s", t->verifier->name);
		CHECK(t->reference.n == 1, "reference of %zu steps (the ground truth written)",
		      t->reference.n);
		CHECK(t->ndrawings == 0, "drawings");
		CHECK(t->fail_zero, "a declared failure must score 0");
		CHECK(t->nflawed == 1 && !strcmp(t->flawed[0].name, "empty-artifacts"),
		      "the cheat probe");
		/* what report --by groups on */
		const char *cat = task_meta_get(t, "category"), *os = task_meta_get(t, "os"),
			   *snap = task_meta_get(t, "snapshot");
		CHECK(t->nmeta == 3 && cat && !strcmp(cat, "single-software-execution") && os &&
			  !strcmp(os, "ubuntu") && snap && !strcmp(snap, "CalculiX-2.21"),
		      "meta: %zu keys, category %s, os %s, snapshot %s", t->nmeta, cat ? cat : "-",
		      os ? os : "-", snap ? snap : "-");
	}
	t = find(&s, "single-software-execution--cli--calculix--task-12--ubuntu");
	CHECK(t != NULL, "task-12 (setup steps) did not load");
	if (t) {
		/* launch: words quoted; execute: a shell string, placeholders
		 * replaced, status ignored, the runtime's timeout or its own */
		const char *launch =
		    "'sh' '-c' 'echo started > /home/user/Desktop/launched.txt; "
		    "sleep 2; echo still running >> /home/user/Desktop/launched.txt; "
		    "sleep 600'";
		CHECK(t->ninputs == 1 && t->nsetup == 3 && t->launches,
		      "%zu inputs, %zu setup steps", t->ninputs, t->nsetup);
		if (t->nsetup == 3) {
			CHECK(t->setup[0].launch && !t->setup[0].check &&
				  !strcmp(t->setup[0].cmd, launch),
			      "launch: %s", t->setup[0].cmd);
			CHECK(!t->setup[1].launch && !t->setup[1].check &&
				  t->setup[1].timeout_s == 120 &&
				  !strcmp(t->setup[1].cmd, "echo 1920x1080 > "
							   "/home/user/Desktop/screen.txt; exit 7"),
			      "execute: %s (%g s)", t->setup[1].cmd, t->setup[1].timeout_s);
			CHECK(t->setup[2].timeout_s == 30 &&
				  !strcmp(t->setup[2].cmd, "'python3' '-c' 'print('\\''960'\\'')'"),
			      "execute: %s (%g s)", t->setup[2].cmd, t->setup[2].timeout_s);
		}
	}
	t = find(&s, "design-optimization--cli--openscad--task-01--ubuntu");
	if (t) {
		CHECK(t->type == TASK_OPTIMIZATION && !strcmp(t->domain, "CAD"), "type %d %s",
		      t->type, t->domain);
		CHECK(t->ninputs == 0, "inputs");
	}
	t = find(&s, "vision-guided-modeling--cli--openscad--task-01--ubuntu");
	if (t)
		CHECK(t->type == TASK_VISION && t->ndrawings == 1 &&
			  ends_with(t->drawings[0], "/init_file/drawing.png"),
		      "vision: %zu drawings", t->ndrawings);
	/* the same tree twice: the same content hashes */
	struct suite s2;
	CHECK(suite_load_from(&s2, scratch, "engiworld", 0, &err) == 0, "load again: %s", err.msg);
	for (size_t i = 0; i < s.ntasks && i < s2.ntasks; i++)
		CHECK(!strcmp(s.tasks[i].hash, s2.tasks[i].hash), "%s: hash differs",
		      s.tasks[i].id);
	suite_release(&s2);
	suite_release(&s);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_engiworld INVENTORY.tsv MAKE_TREE.sh SCRATCH\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		printf("FAIL: cannot open the benchmark's inventory '%s'\n", argv[1]);
		return 1;
	}
	static const char *const cats[] = {
	    "single-software-execution",   "software-selection",
	    "vision-guided-modeling",	   "design-optimization",
	    "cross-software-coordination", "open-environment-engineering"};
	static const int want_cat[] = {931, 140, 120, 40, 60, 10};
	int by_cat[6] = {0}, cli = 0, gui = 0, ubuntu = 0, windows = 0, rows = 0;
	char line[1024];
	CHECK(fgets(line, sizeof(line), f) && !strncmp(line, "id\tpath\t", 8), "header");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *col[6] = {0};
		char *save = NULL, *p = line;
		for (int i = 0; i < 6; i++, p = NULL)
			col[i] = strtok_r(p, "\t", &save);
		if (!col[5]) {
			CHECK(0, "row %d has fewer than 6 columns", rows + 1);
			continue;
		}
		rows++;
		struct engiworld_id id;
		if (source_engiworld_id(col[0], &id) < 0) {
			CHECK(0, "'%s' does not parse", col[0]);
			continue;
		}
		char path[512];
		snprintf(path, sizeof(path), "task/%s/%s/%s/%s", id.category, id.interface,
			 id.folder, id.task);
		CHECK(!strcmp(path, col[1]), "%s: path %s, the inventory says %s", col[0], path,
		      col[1]);
		CHECK(!strcmp(id.category, col[2]) && !strcmp(id.interface, col[3]) &&
			  !strcmp(id.os, col[5]),
		      "%s: %s %s %s against %s %s %s", col[0], id.category, id.interface, id.os,
		      col[2], col[3], col[5]);
		for (int i = 0; i < 6; i++)
			by_cat[i] += !strcmp(id.category, cats[i]);
		cli += !strcmp(id.interface, "cli");
		gui += !strcmp(id.interface, "gui");
		ubuntu += !strcmp(id.os, "ubuntu");
		windows += !strcmp(id.os, "windows");
		CHECK(id.type && *id.type, "%s: no task type", col[0]);
	}
	fclose(f);
	CHECK(rows == 1301, "%d rows", rows);
	for (int i = 0; i < 6; i++)
		CHECK(by_cat[i] == want_cat[i], "%s: %d tasks, the benchmark has %d", cats[i],
		      by_cat[i], want_cat[i]);
	CHECK(cli == 691 && gui == 610, "%d CLI, %d GUI", cli, gui);
	CHECK(ubuntu == 687 && windows == 614, "%d Ubuntu, %d Windows", ubuntu, windows);

	static const char *const bad[] = {
	    "",
	    "single-software-execution",
	    "single-software-execution--cli--calculix--task-01",
	    "single-software-execution--tui--calculix--task-01--ubuntu",
	    "single-software-execution--cli--calculix--task-01--macos",
	    "single-software-execution--cli----task-01--ubuntu",
	    "single-software-execution--cli--calculix--step-01--ubuntu",
	    "single-software-execution--cli--Calc'ix--task-01--ubuntu",
	    "nine-to-five--cli--calculix--task-01--ubuntu",
	    "--cli--calculix--task-01--ubuntu",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct engiworld_id id;
		CHECK(source_engiworld_id(bad[i], &id) < 0, "'%s' parsed", bad[i]);
	}
	struct engiworld_id id;
	CHECK(source_engiworld_id("cross-software-coordination--gui--librecad--freecad--kicad--"
				  "blender--task-03-reverse--ubuntu",
				  &id) == 0 &&
		  !strcmp(id.folder, "librecad--freecad--kicad--blender") &&
		  !strcmp(id.task, "task-03-reverse") && !strcmp(id.type, "cross"),
	      "a several-application folder and a suffixed task");
	check_tree(argv[2], argv[3]);
	if (failures) {
		printf("FAILED (%d failures)\n", failures);
		return 1;
	}
	printf("ok: %d ids\n", rows);
	return 0;
}
