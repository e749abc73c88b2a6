/*
 * engisweep - benchmark sweeps of agents on engineering software.
 * The subcommands live in cmd_*.c; only they and main print errors or exit.
 */
#include "cli.h"
#include "judge.h"
#include "step.h"

#include <stdio.h>
#include <string.h>

static const struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
    {"run", cmd_run, "run a sweep (tasks x models x trials x conditions), under mpirun or alone"},
    {"plan", cmd_plan, "print the cells, predicted episode-hours and API cost of a sweep"},
    {"validate", cmd_validate, "check a suite: references pass, flawed variants and noop fail"},
    {"audit", cmd_audit, "find broken tasks of a benchmark before they cost a sweep"},
    {"report", cmd_report, "leaderboard with task-clustered bootstrap intervals from results.h5"},
    {"compare", cmd_compare, "paired comparisons of models or conditions, Holm-adjusted"},
    {"reverify", cmd_reverify,
     "re-judge a results file's saved deliverables with this binary's verifiers"},
    {"judge", cmd_judge, "run a task's verifier on saved deliverables (run's child process)"},
    {"export", cmd_export, "write a results file in another tool's layout (Harbor jobs)"},
    {"merge", cmd_merge, "combine results files (array shards, continued runs), each cell once"},
    {"kernel", cmd_kernel,
     "run a verifier kernel by hand on files (fe, frame, mesh, icp, distance)"},
    {"truth", cmd_truth, "freeze the results of a reference structural model (two solves)"},
    {"image", cmd_image, "build, list and locate the guest images of the qemu backend"},
    {"inspect", cmd_inspect, "list backends, agents, providers and verifier kinds of this binary"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: engisweep <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(*subcommands); i++)
		fprintf(f, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f,
		"\n'engisweep <command> --help' describes a command's options.\n"
		"engisweep %s\n",
		ENGISWEEP_VERSION);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("engisweep %s\n", ENGISWEEP_VERSION);
		return 0;
	}
	/* verification runs in a child process of this very binary */
	judge_set_program("/proc/self/exe");
	/* the mesh readers take STEP files through gmsh, which kernels/ do
	 * not start themselves */
	step_install();
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(*subcommands); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	cli_errorf("'%s' is not a command", argv[1]);
	fputc('\n', stderr);
	usage(stderr);
	return 2;
}
