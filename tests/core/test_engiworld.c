/*
 * EngiWorld task ids: every id of the benchmark's inventory (all 1,301, in
 * ../shared/benchmarks/engiworld/inventory.tsv) parses into the category,
 * interface, folder, task and os its row gives, the totals are the
 * benchmark's (931/140/120/40/60/10 by category, 691 CLI and 610 GUI, 687
 * Ubuntu and 614 Windows), and malformed ids are refused.
 * Usage: test_engiworld INVENTORY.tsv
 */
#include "source.h"

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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_engiworld INVENTORY.tsv\n");
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
	if (failures) {
		printf("FAILED (%d failures)\n", failures);
		return 1;
	}
	printf("ok: %d ids\n", rows);
	return 0;
}
