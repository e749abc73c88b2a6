#include "cli.h"

#include "agent.h"
#include "backend.h"
#include "engi/verify.h"
#include "provider.h"
#if ENGI_WITH_QEMU
#include "qemu.h"
#endif
#include "source.h"

#include <stdio.h>
#include <string.h>

static const char inspect_help[] =
    "usage: engisweep inspect [--source NAME] [--images FILE] [--deliverables FILE]\n"
    "                         [SUITE]\n"
    "\n"
    "Lists what this binary can run: backends, agents, model providers and\n"
    "verifier kinds, each marked built or not built, and the accelerator the\n"
    "qemu backend's guests get on this host (KVM only when a probe guest ran\n"
    "under it in time) with the reason, whether the local backend's sandbox\n"
    "(bubblewrap; ENGI_BWRAP names the program) works here, or why not, and\n"
    "the task sources.\n"
    "\n"
    "With SUITE: which task source reads it (detected, or --source NAME), how\n"
    "many tasks load and how many are refused, by reason, each refused file\n"
    "named; --images FILE maps a benchmark's snapshots to engisweep images as\n"
    "for run, and --deliverables FILE a Harbor suite's deliverables map. Exit\n"
    "status 0 when every task loads, 1 when some are refused, 2\n"
    "when the suite cannot be read at all.\n";

/* Tasks loaded and refused, refusals grouped by the kind of failure. */
static int inspect_suite(const char *path, const char *source, const char *images,
			 const char *deliverables)
{
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	struct suite_load_opts lo = {.source = source, .deliverables = deliverables};
	struct arena ia;
	arena_init(&ia);
	struct suite_image *map = NULL;
	if (images && suite_images_read(images, &ia, &map, &lo.nimages, &err) < 0) {
		arena_release(&ia);
		engi_error_prefix(&err, "--images");
		cli_error(&err);
		return EXIT_USAGE;
	}
	lo.images = map;
	int lrc = suite_load_with(&s, path, &lo, &err);
	arena_release(&ia);
	if (lrc < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	printf("suite %s\n  source: %s (%s)\n  tasks: %zu loaded, %zu refused\n", path, s.source,
	       source ? "named" : "detected", s.ntasks, s.nrefused);
	if (s.nrefused) {
		printf("\nrefused, by reason:\n");
		for (size_t i = 0; i < s.nrefused; i++) {
			size_t n = suite_refused_by(&s, i);
			if (n)
				printf("  %-6zu %s\n", n, s.refused[i].category);
		}
		printf("\nrefused tasks:\n");
		for (size_t i = 0; i < s.nrefused; i++)
			printf("  %s\n", s.refused[i].reason);
	}
	int rc = s.nrefused ? EXIT_FAILED : 0;
	suite_release(&s);
	return rc;
}

int cmd_inspect(int argc, char **argv)
{
	const char *source = NULL, *suite = NULL, *images = NULL, *deliverables = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(inspect_help, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--source") && i + 1 < argc) {
			source = argv[++i];
		} else if (!strcmp(argv[i], "--images") && i + 1 < argc) {
			images = argv[++i];
		} else if (!strcmp(argv[i], "--deliverables") && i + 1 < argc) {
			deliverables = argv[++i];
		} else if (argv[i][0] != '-' && !suite) {
			suite = argv[i];
		} else {
			cli_errorf("inspect: unexpected argument '%s'", argv[i]);
			fputs(inspect_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (suite)
		return inspect_suite(suite, source, images, deliverables);
	if (source || images || deliverables) {
		cli_errorf("inspect: --%s needs a SUITE", source   ? "source"
							  : images ? "images"
								   : "deliverables");
		return EXIT_USAGE;
	}
	printf("engisweep %s\n\nbackends:\n", ENGISWEEP_VERSION);
	for (const struct backend_desc *const *b = backend_all(); *b; b++)
		printf("  %-10s %-10s %s\n", (*b)->name, (*b)->ops ? "built" : "not built",
		       (*b)->summary);
	for (const struct backend_desc *const *b = backend_not_built(); *b; b++)
		printf("  %s: not built into this binary (%s)\n", (*b)->name, (*b)->not_built_hint);
#if ENGI_WITH_QEMU
	char why[256];
	const char *accel = qemu_accel(why, sizeof(why));
	printf("  qemu accelerator: %s (%s)\n", accel, why);
#endif
	char sbwhy[512];
	if (backend_local_sandbox(sbwhy, sizeof(sbwhy)))
		printf("  local sandbox: available (%s)\n", sbwhy);
	else
		printf("  local sandbox: unavailable (%s): model and replay agents are refused on "
		       "the local backend unless --unsafe-local\n",
		       sbwhy);
	printf("\nagents:\n");
	for (const struct agent_desc *const *a = agent_all(); *a; a++)
		printf("  %-10s %-10s %s\n", (*a)->name, (*a)->ops ? "built" : "not built",
		       (*a)->summary);
	printf("\nmodel providers:\n");
	for (const struct provider_ops *const *p = provider_registry; *p; p++)
		printf("  %-10s %-10s %s\n", (*p)->name, "built", (*p)->summary);
	printf("\ntask sources:\n");
	for (const struct task_source *const *t = task_sources(); *t; t++)
		printf("  %-14s %s\n  %-14s reads: %s\n", (*t)->name, (*t)->summary, "",
		       (*t)->supports);
	printf("\nverifier kinds:\n");
	for (const struct engi_verifier_kind *const *k = engi_verifier_kinds(); *k; k++) {
		char id[64];
		engi_verifier_id(*k, id, sizeof(id));
		printf("  %-18s %s\n", id, (*k)->summary);
	}
	return 0;
}
