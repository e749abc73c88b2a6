/*
 * store_tool - the fixture results file and the store's reader as a
 * command, for check_h5py.py:
 *   store_tool write PATH          the fixture's metadata and records
 *   store_tool read PATH           store_read: row counts, or the error
 *   store_tool trace PATH CELL     store_read_trace to stdout
 *   store_tool runs PATH           each episode back into a record: its
 *                                  cell, run_outcome (a number, -1 for
 *                                  unknown) and run_message
 *   store_tool judges PATH         each episode's cell and judge_tokens_in,
 *                                  judge_tokens_out, judge_cost_usd
 */
#include <stdio.h>
#include <string.h>

#include "engi/alloc.h"
#include "fixture.h"
#include "store.h"

#define TOOL_RECORDS 3

static int write_fixture(const char *path, struct engi_error *err)
{
	struct fixture_meta f;
	fixture_meta_init(&f, 1000);
	struct store *s;
	int rc = store_create(&s, path, &f.meta, err);
	for (int i = 0; rc == 0 && i < TOOL_RECORDS; i++) {
		struct record r;
		record_init(&r);
		fixture_record(&r, i, 0);
		rc = store_append(s, &r, err);
		record_release(&r);
	}
	if (s) {
		int crc = store_close(&s, err);
		if (rc == 0)
			rc = crc;
	}
	fixture_meta_release(&f);
	return rc;
}

int main(int argc, char **argv)
{
	struct engi_error err;
	engi_error_init(&err);
	int rc;
	if (argc == 3 && strcmp(argv[1], "write") == 0) {
		rc = write_fixture(argv[2], &err);
	} else if (argc == 3 && strcmp(argv[1], "read") == 0) {
		struct engi_results res;
		rc = store_read(argv[2], &res, &err);
		if (rc == 0)
			printf("tasks=%zu models=%zu conditions=%zu "
			       "episodes=%zu assertions=%zu metrics=%zu "
			       "artifacts=%zu planned=%llu task_meta=%zu\n",
			       res.ntasks, res.nmodels, res.nconditions, res.nepisodes,
			       res.nassertions, res.nmetrics, res.nartifacts,
			       (unsigned long long)res.planned_cells, res.ntask_meta);
		engi_results_release(&res);
	} else if (argc == 3 && strcmp(argv[1], "runs") == 0) {
		struct engi_results res;
		rc = store_read(argv[2], &res, &err);
		for (size_t i = 0; rc == 0 && i < res.nepisodes; i++) {
			struct record r;
			record_init(&r);
			rc = record_from_row(&r, &res.episodes[i], &err);
			if (rc == 0)
				printf("%s %d %s\n", r.cell, r.run_outcome, r.run_message);
			record_release(&r);
		}
		engi_results_release(&res);
	} else if (argc == 3 && strcmp(argv[1], "judges") == 0) {
		struct engi_results res;
		rc = store_read(argv[2], &res, &err);
		for (size_t i = 0; rc == 0 && i < res.nepisodes; i++) {
			struct record r;
			record_init(&r);
			rc = record_from_row(&r, &res.episodes[i], &err);
			if (rc == 0)
				printf("%s %lld %lld %.6f\n", r.cell, (long long)r.judge_tokens_in,
				       (long long)r.judge_tokens_out, r.judge_cost_usd);
			record_release(&r);
		}
		engi_results_release(&res);
	} else if (argc == 4 && strcmp(argv[1], "trace") == 0) {
		char *text;
		size_t len;
		rc = store_read_trace(argv[2], argv[3], &text, &len, &err);
		if (rc == 0) {
			fwrite(text, 1, len, stdout);
			engi_free(text);
		}
	} else {
		fprintf(stderr, "usage: store_tool write|read|runs PATH | trace PATH CELL\n");
		return 2;
	}
	if (rc < 0) {
		printf("error: %s\n", err.msg);
		return 1;
	}
	return 0;
}
