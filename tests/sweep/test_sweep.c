/*
 * The sweep as a library, linked in and run in this process (the serial
 * twin, verifiers judged in-process): a suite of small mesh tasks with the
 * reference, noop and a flawed agent; every cell recorded once, in the
 * journal and in sw.results, with the verdict of the task's verifier
 * judged as its own work item (the trace's "verdict" event, after the
 * episode's "end"); a resume runs nothing again.
 */
#include "check.h"
#include "engi/alloc.h"
#include "fsutil.h"
#include "journal.h"
#include "record.h"
#include "scheduler.h"
#include "sweep.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FACE(a, b, c)                                                                              \
	" facet normal 0 0 0\\n  outer loop\\n   vertex " a "\\n   vertex " b "\\n   vertex " c    \
	"\\n  endloop\\n endfacet\\n"
#define OPEN_TETRA                                                                                 \
	"solid t\\n" FACE("0 0 0", "0 1 0", "1 0 0") FACE("0 0 0", "1 0 0", "0 0 1")               \
	    FACE("0 0 0", "0 0 1", "0 1 0")
#define CLOSED_TETRA OPEN_TETRA FACE("1 0 0", "0 1 0", "0 0 1") "endsolid t\\n"

static void write_task(const char *dir, int i)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/tetra-%d.json", dir, i);
	FILE *f = fopen(path, "w");
	fprintf(f,
		"{\"id\": \"tetra-%d\", \"domain\": \"CAD\", \"software\": [\"sh\"],"
		" \"type\": \"single\", \"interface\": \"cli\","
		" \"instruction\": \"Write a closed unit tetrahedron to tetra.stl.\","
		" \"deliverables\": [{\"path\": \"tetra.stl\"}],"
		" \"verifier\": {\"kind\": \"mesh\", \"file\": \"tetra.stl\", \"criteria\": ["
		"  {\"name\": \"closed\", \"check\": \"watertight\"},"
		"  {\"name\": \"volume\", \"check\": \"volume\", \"value\": 0.16666666666666666,"
		"   \"tol_rel\": 0.001}]},"
		" \"reference\": [{\"write\": \"tetra.stl\", \"text\": \"" CLOSED_TETRA "\"}],"
		" \"flawed\": [{\"name\": \"open\", \"steps\": [{\"write\": \"tetra.stl\","
		"  \"text\": \"" OPEN_TETRA "endsolid t\\n\"}], \"expect\": \"fail\","
		"  \"failing\": [\"closed\"]}]}\n",
		i);
	fclose(f);
}

struct seen {
	int n, verdict_after_end, success[64];
	char cells[64][CELL_ID_LEN + 1];
	char models[64][64];
};

static int on_record(void *p, struct record *r, struct engi_error *err)
{
	struct seen *s = p;
	if (s->n < 64) {
		snprintf(s->cells[s->n], sizeof(s->cells[0]), "%s", r->cell);
		snprintf(s->models[s->n], sizeof(s->models[0]), "%s", r->model);
		s->success[s->n] = r->success;
	}
	s->n++;
	char *text = NULL;
	size_t len = 0;
	if (r->trace &&
	    trace_decompress(r->trace, r->trace_len, (size_t)64 << 20, &text, &len, NULL) == 0) {
		const char *end = strstr(text, "\"ev\":\"end\"");
		const char *verdict = strstr(text, "\"ev\":\"verdict\"");
		if (end && verdict && verdict > end && strstr(verdict, "\"rank\":0"))
			s->verdict_after_end++;
	}
	engi_free(text);
	record_release(r); /* the callback owns the record */
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_sweep SCRATCH\n");
		return 2;
	}
	const char *scratch = argv[1];
	char suite[512], out[512], journal[600];
	snprintf(suite, sizeof(suite), "%s/suite", scratch);
	snprintf(out, sizeof(out), "%s/out", scratch);
	snprintf(journal, sizeof(journal), "%s/journal.jsonl", out);
	fs_rm_rf(scratch, NULL);
	CHECK(fs_mkdir_p(suite, 0755, NULL) == 0);
	for (int i = 1; i <= 3; i++)
		write_task(suite, i);

	struct engi_error err;
	engi_error_init(&err);
	CHECK(sched_init(&argc, &argv, 1, &err) == 0);
	struct sweep_opts o;
	sweep_opts_defaults(&o);
	o.suite = suite;
	o.out = out;
	o.agents = "reference,noop,flawed:open";
	o.jobs = 2;
	o.quiet = 1;
	struct sweep sw;
	int rc = sweep_run(&sw, &o, &err);
	if (rc < 0)
		fprintf(stderr, "sweep_run: %s\n", err.msg);
	CHECK(rc == 0);
	CHECK_INT(sw.matrix.ncells, 9);
	CHECK_INT(sw.unrun, 0);
	CHECK_INT(sw.infra_failed, 0);
	size_t ok = 0;
	for (size_t i = 0; i < sw.matrix.ncells; i++) {
		const char *model = sw.def.models[sw.matrix.cells[i].model].name;
		CHECK(sw.results[i].have);
		int want = !strcmp(model, "reference");
		CHECK_INT(sw.results[i].success, want);
		ok += sw.results[i].success;
		if (!strncmp(model, "flawed:", 7))
			CHECK(sw.results[i].failed && strstr(sw.results[i].failed, ",closed,"));
	}
	CHECK_INT(ok, 3);
	sweep_release(&sw);

	struct seen s = {0};
	CHECK(journal_read(journal, on_record, &s, NULL, &err) == 0);
	CHECK_INT(s.n, 9);
	CHECK_INT(s.verdict_after_end, 9); /* each judged after its run ended */
	for (int i = 0; i < s.n && i < 64; i++)
		for (int k = i + 1; k < s.n && k < 64; k++)
			CHECK(strcmp(s.cells[i], s.cells[k]) != 0); /* once each */

	/* a resume finds every cell done: nothing runs, nothing is appended */
	o.resume = 1;
	rc = sweep_run(&sw, &o, &err);
	if (rc < 0)
		fprintf(stderr, "resume: %s\n", err.msg);
	CHECK(rc == 0);
	CHECK_INT(sw.unrun, 0);
	sweep_release(&sw);
	struct seen again = {0};
	CHECK(journal_read(journal, on_record, &again, NULL, &err) == 0);
	CHECK_INT(again.n, 9);
	sched_finalize();
	return check_exit();
}
