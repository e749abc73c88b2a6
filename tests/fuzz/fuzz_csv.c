/*
 * Fuzz target: the episodes and assertions CSV readers (analysis/csvin.c).
 * The input up to its first NUL byte is episodes.csv; what follows it, if
 * there is a NUL, is assertions.csv. Results that read go through the whole
 * report (Markdown, CSV and JSON, the evidence ladder, a short bootstrap),
 * as `engisweep report --csv` would. Errors must name a file; anything else
 * aborts.
 */
#include "fuzz_file.h"

#include "engi/csvin.h"
#include "engi/report.h"
#include "engi/results.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t elen = nul ? (size_t)(nul - data) : size;
	char ep[128], as[128], prefix[128];
	fuzz_write_file("episodes.csv", data, elen, ep, sizeof(ep));
	if (nul)
		fuzz_write_file("assertions.csv", nul + 1, size - elen - 1, as, sizeof(as));
	struct engi_results res;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_results_read_csv(ep, nul ? as : NULL, &res, &e);
	fuzz_note("csv", rc, e.msg);
	if (rc > 0 || (rc < 0 && (e.code != rc || !strstr(e.msg, ".csv"))))
		abort();
	if (rc < 0) {
		if (res.nepisodes || res.ntasks || res.nassertions)
			abort();
		return 0;
	}
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 64;
	o.evidence = 1;
	snprintf(prefix, sizeof(prefix), "%s/report", fuzz_dir());
	o.prefix = prefix;
	FILE *md = fopen("/dev/null", "w");
	if (!md)
		abort();
	engi_error_init(&e);
	rc = engi_report(&res, &o, md, &e);
	fuzz_note("report", rc, e.msg);
	fclose(md);
	if (rc > 0 || (rc < 0 && (e.code != rc || !e.msg[0])))
		abort();
	engi_results_release(&res);
	return 0;
}
