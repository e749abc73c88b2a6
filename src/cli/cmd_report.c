#include "cli.h"

#include <stdio.h>

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_errorf("report: not wired yet");
	return EXIT_FAILED;
}
