/*
 * Rank-0 cost per dispatched cell: N zero-work cells through the real
 * scheduler under mpirun. Two modes:
 *   sched   - dispatch only: workers return a small payload at once, rank 0
 *             hands it to a finished hook that does nothing;
 *   record  - rank 0 does what a sweep does per result (hook_finished):
 *             read the payload (payload_read: the head checked, the
 *             record's JSON parsed, its trace copied and put into the
 *             journal's line as base64), append the line to the journal
 *             and the record to the HDF5 store, flushing every 16
 *             records; the journal's lines of the results that arrived
 *             together fsynced once (the sweep's group commit), or with
 *             --commit each one fsync per line (write + fdatasync). The records carry --trace-bytes
 *             bytes of trace (incompressible, as zstd output is) and
 *             --assertions assertions (default 0 and 0: the bare record).
 * Prints wall and rank-0 CPU milliseconds per cell; in record mode also
 * the main thread's CPU per cell in the payload's read (payload_read), the
 * journal append and the store append and flushes.
 *   mpirun -np 4 bench_dispatch [--cells N] [--mode sched|record] [--dir D]
 *                               [--trace-bytes B] [--assertions A]
 *                               [--commit group|each]
 */
#include "engi/alloc.h"
#include "engi/error.h"
#include "journal.h"
#include "payload.h"
#include "record.h"
#include "scheduler.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct ctx {
	int record_mode;
	int commit_each; /* an fsync per line, not per pass */
	size_t syncs;	 /* group commits */
	size_t trace_bytes, nassertions;
	size_t finished;
	struct journal j;
	struct store *store;
	size_t since_flush;
	double parse_s, journal_s, store_s; /* main thread CPU in each */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int run(void *p, size_t cell, int rank, const char *input, size_t input_len, char **payload,
	       size_t *len)
{
	struct ctx *c = p;
	if (!c->record_mode) {
		*payload = engi_strdup("{}");
		*len = 2;
		return 0;
	}
	struct record r;
	record_init(&r);
	snprintf(r.cell, sizeof(r.cell), "%016zx", cell);
	snprintf(r.task_id, sizeof(r.task_id), "task-%zu", cell % 1301);
	snprintf(r.model, sizeof(r.model), "model-%zu", cell % 7);
	snprintf(r.condition, sizeof(r.condition), "base");
	r.outcome = OUTCOME_DONE;
	r.attempts = 1;
	r.success = (int)(cell % 2);
	r.score = r.success;
	r.rank = rank;
	snprintf(r.message, sizeof(r.message), "the deliverable is written");
	r.run_outcome = OUTCOME_DONE;
	snprintf(r.run_message, sizeof(r.run_message), "%s", r.message);
	int rc = 0;
	if (c->nassertions && !(r.assertions = engi_calloc(c->nassertions, sizeof(*r.assertions))))
		rc = ENGI_ENOMEM;
	for (size_t i = 0; rc == 0 && i < c->nassertions; i++) {
		struct engi_assertion *a = &r.assertions[r.nassertions++];
		snprintf(a->name, sizeof(a->name), "assertion_%zu", i);
		snprintf(a->stage, sizeof(a->stage), "geometry");
		a->state = i % 3 ? ENGI_PASS : ENGI_FAIL;
		a->required = 1;
		a->value = 1.0 + (double)i / 7.0;
		a->expected = 1.0;
		snprintf(a->detail, sizeof(a->detail), "measured against the reference");
	}
	if (rc == 0 && c->trace_bytes) {
		if (!(r.trace = engi_malloc(c->trace_bytes)))
			rc = ENGI_ENOMEM;
		/* bytes as incompressible as zstd's output */
		uint64_t x = 0x9e3779b97f4a7c15ULL ^ cell;
		for (size_t i = 0; rc == 0 && i < c->trace_bytes; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			r.trace[i] = (unsigned char)x;
		}
		r.trace_len = c->trace_bytes;
		r.trace_raw_len = 4 * c->trace_bytes;
	}
	if (rc == 0)
		rc = payload_pack(&r, cell, payload, len, NULL);
	record_release(&r);
	return rc;
}

static int finished(void *p, size_t cell, int rank, const char *payload, size_t len,
		    struct engi_error *err)
{
	struct ctx *c = p;
	c->finished++;
	if (!c->record_mode)
		return 0;
	struct record r;
	struct payload_head head;
	char cell_id[32];
	snprintf(cell_id, sizeof(cell_id), "%016zx", cell);
	char *line = NULL;
	size_t n = 0;
	double t0 = thread_cpu_s();
	int rc = payload_read(payload, len, cell, cell_id, &head, &r, &line, &n, err);
	double t1 = thread_cpu_s();
	if (rc == 0)
		rc = c->commit_each ? journal_append_json(&c->j, line, n, err)
				    : journal_write_json(&c->j, line, n, err);
	engi_free(line);
	double t2 = thread_cpu_s();
	if (rc == 0)
		rc = store_append(c->store, &r, err);
	if (rc == 0 && ++c->since_flush >= 16) {
		rc = store_flush(c->store, err);
		c->since_flush = 0;
	}
	double t3 = thread_cpu_s();
	c->parse_s += t1 - t0;
	c->journal_s += t2 - t1;
	c->store_s += t3 - t2;
	record_release(&r);
	return rc;
}

/* The group commit: one fdatasync for the results of a pass. */
static int settle(void *p, struct engi_error *err)
{
	struct ctx *c = p;
	if (!c->record_mode)
		return 0;
	double t0 = thread_cpu_s();
	int rc = journal_sync(&c->j, err);
	c->journal_s += thread_cpu_s() - t0;
	c->syncs++;
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = 100000, trace_bytes = 0, nassertions = 0;
	const char *mode = "sched", *dir = "/tmp", *commit = "group";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cells"))
			n = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--mode"))
			mode = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--trace-bytes"))
			trace_bytes = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--assertions"))
			nassertions = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--commit"))
			commit = argv[i + 1];
	}
	if (strcmp(commit, "group") && strcmp(commit, "each")) {
		fprintf(stderr, "--commit is 'group' or 'each', not '%s'\n", commit);
		return 2;
	}
	struct engi_error err;
	engi_error_init(&err);
	if (sched_init(&argc, &argv, 0, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct ctx c = {.record_mode = !strcmp(mode, "record"),
			.trace_bytes = trace_bytes,
			.nassertions = nassertions,
			.commit_each = !strcmp(commit, "each")};
	c.j.fd = -1;
	char path[512];
	if (sched_rank() == 0 && c.record_mode) {
		snprintf(path, sizeof(path), "%s/bench-journal.jsonl", dir);
		if (journal_open(&c.j, path, 0, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/bench-results.h5", dir);
		struct store_meta meta = {.sweep_id = "bench",
					  .config_json = "{}",
					  .versions_json = "{}",
					  .command_line = "bench"};
		if (store_create(&c.store, path, &meta, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
	}
	size_t *order = malloc(n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	struct sched_hooks h = {
	    .ctx = &c, .run = run, .finished = finished, .settle = c.commit_each ? NULL : settle};
	struct sched_opts o = {.local_slots = 0, .grace_s = 60};
	double t0 = now(), c0 = cpu_s();
	int rc = sched_run(order, n, &h, &o, NULL, &err);
	double wall = now() - t0, cpu = cpu_s() - c0;
	if (sched_rank() == 0) {
		if (c.record_mode) {
			store_close(&c.store, &err);
			journal_close(&c.j);
		}
		printf("dispatch bench: mode %s, %zu cells, %d ranks (%d workers): "
		       "%.4f ms/cell wall, %.4f ms/cell rank-0 CPU, %zu results\n",
		       mode, n, sched_size(), sched_size() - 1, wall * 1e3 / (double)n,
		       cpu * 1e3 / (double)n, c.finished);
		if (c.record_mode)
			printf("rank-0 main thread CPU per cell, records of %zu trace bytes and "
			       "%zu assertions: parse %.4f ms, journal %.4f ms, store %.4f ms; "
			       "commit %s: %zu fsyncs\n",
			       trace_bytes, nassertions, c.parse_s * 1e3 / (double)n,
			       c.journal_s * 1e3 / (double)n, c.store_s * 1e3 / (double)n, commit,
			       c.commit_each ? n : c.syncs);
		if (rc < 0 || c.finished != n) {
			fprintf(stderr, "bench failed: %s\n", err.msg);
			rc = -1;
		}
	}
	free(order);
	sched_finalize();
	return rc < 0 ? 1 : 0;
}
