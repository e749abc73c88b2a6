#include "cli.h"

#include "agent.h"
#include "backend.h"
#include "engi/verify.h"
#include "provider.h"
#include "qemu.h"

#include <stdio.h>
#include <string.h>

static const char inspect_help[] =
	"usage: engisweep inspect\n"
	"\n"
	"Lists what this binary can run: backends, agents, model providers and\n"
	"verifier kinds, each marked built or not built, and the accelerator the\n"
	"qemu backend's guests get on this host (KVM only when a probe guest ran\n"
	"under it in time) with the reason, and whether the local backend's sandbox\n"
	"(bubblewrap; ENGI_BWRAP names the program) works here, or why not.\n";

int cmd_inspect(int argc, char **argv)
{
	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			fputs(inspect_help, stdout);
			return 0;
		}
		cli_errorf("inspect: takes no arguments");
		fputs(inspect_help, stderr);
		return EXIT_USAGE;
	}
	printf("engisweep %s\n\nbackends:\n", ENGISWEEP_VERSION);
	for (const struct backend_desc *const *b = backend_all(); *b; b++)
		printf("  %-10s %-10s %s\n", (*b)->name, (*b)->ops ? "built" : "not built",
		       (*b)->summary);
	char why[256];
	const char *accel = qemu_accel(why, sizeof(why));
	printf("  qemu accelerator: %s (%s)\n", accel, why);
	char sbwhy[512];
	if (backend_local_sandbox(sbwhy, sizeof(sbwhy)))
		printf("  local sandbox: available (%s)\n", sbwhy);
	else
		printf("  local sandbox: unavailable (%s): model and replay agents are refused on "
		       "the local backend unless --unsafe-local\n", sbwhy);
	printf("\nagents:\n");
	for (const struct agent_desc *const *a = agent_all(); *a; a++)
		printf("  %-10s %-10s %s\n", (*a)->name, (*a)->ops ? "built" : "not built",
		       (*a)->summary);
	printf("\nmodel providers:\n");
	for (const struct provider_desc *const *p = provider_all(); *p; p++)
		printf("  %-10s %-10s %s\n", (*p)->name, "built", (*p)->summary);
	printf("\nverifier kinds:\n");
	for (const struct engi_verifier_kind *const *k = engi_verifier_kinds(); *k; k++) {
		char id[64];
		engi_verifier_id(*k, id, sizeof(id));
		printf("  %-18s %s\n", id, (*k)->summary);
	}
	return 0;
}
