/*
 * brep_helper.c - engisweep-brep, the process OpenCASCADE runs in. The
 * engisweep binary does not link OCCT (its libraries and static
 * initialisers cost each process start about 40 ms of CPU, and every
 * episode's verifier is a process of its own); engi_brep_analyze
 * (brep_run.c) starts this program instead, only for the files that need
 * it, and reads its report from a pipe. Not meant to be run by hand.
 *
 * usage: engisweep-brep --report FD FLAGS PATH
 * writes the report of engi_brep_measure_file(PATH, FLAGS) on FD: the
 * header of brep_run.c's struct, then the face, body and feature arrays.
 */
#include "brep_reply.h"
#include "engi/error.h"
#include "engi/fdio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "--report") != 0) {
		fprintf(stderr, "usage: engisweep-brep --report FD FLAGS PATH\n"
				"(the B-rep kernel's process, started by engisweep; see "
				"`engisweep kernel brep --help`)\n");
		return 2;
	}
	char *end;
	long fd = strtol(argv[2], &end, 10);
	if (*end || fd < 3 || fd > 1023)
		return 2;
	unsigned long flags = strtoul(argv[3], &end, 10);
	if (*end)
		return 2;
	/* whatever OCCT prints goes with the diagnostics, never the report */
	dup2(2, 1);
	struct engi_brep_reply r;
	memset(&r, 0, sizeof(r));
	engi_error_init(&r.err);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r.rc = engi_brep_measure_file(argv[4], (unsigned)flags, &r.rep, &r.err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r.rep.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	int bad = engi_write_all((int)fd, &r, sizeof(r));
	if (!bad && r.rc == 0) {
		bad |= engi_write_all((int)fd, r.rep.props.face,
				      r.rep.props.faces * sizeof(*r.rep.props.face));
		bad |= engi_write_all((int)fd, r.rep.body, r.rep.nbodies * sizeof(*r.rep.body));
		bad |= engi_write_all((int)fd, r.rep.feature,
				      r.rep.nfeatures * sizeof(*r.rep.feature));
	}
	engi_brep_report_release(&r.rep);
	/* a normal exit: LeakSanitizer checks this process too */
	return bad ? 3 : 0;
}
