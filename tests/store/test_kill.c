/*
 * A writer killed with SIGKILL at any moment leaves a results file that
 * opens and holds a whole number of flushed batches. The child appends and
 * flushes batches in a loop and reports each flush through a pipe; the
 * parent kills it at varied moments after a few flushes, then reads the
 * file with store_read and with h5dump (argv[1] or $ENGI_H5DUMP, when
 * given).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "fixture.h"
#include "store.h"

#define BATCH 4
#define MAX_BATCHES 100000
#define TRACE_PAD 8000 /* bytes of filler per trace event: slower flushes */
#define ROUNDS 8

static _Noreturn void child_writes(const char *path, int out)
{
	struct fixture_meta f;
	fixture_meta_init(&f, 1000);
	struct store *s;
	struct engi_error err;
	engi_error_init(&err);
	if (store_create(&s, path, &f.meta, &err) < 0) {
		fprintf(stderr, "child: %s\n", err.msg);
		_exit(3);
	}
	for (int b = 0; b < MAX_BATCHES; b++) {
		for (int k = 0; k < BATCH; k++) {
			struct record r;
			record_init(&r);
			fixture_record(&r, b * BATCH + k, TRACE_PAD);
			int rc = store_append(s, &r, &err);
			record_release(&r);
			if (rc < 0) {
				fprintf(stderr, "child: %s\n", err.msg);
				_exit(4);
			}
		}
		if (store_flush(s, &err) < 0) {
			fprintf(stderr, "child: %s\n", err.msg);
			_exit(5);
		}
		int32_t done = b + 1;
		if (write(out, &done, sizeof(done)) != sizeof(done))
			_exit(6);
	}
	_exit(7);
}

static void check_file(const char *path, int flushed, const char *h5dump)
{
	struct engi_results res;
	struct engi_error err;
	engi_error_init(&err);
	int rc = store_read(path, &res, &err);
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "store_read: %s\n", err.msg);
		return;
	}
	/* whole batches, at least those reported, at most one more (flushed
	 * but killed before it could say so) */
	CHECK_INT(res.nepisodes % BATCH, 0);
	int batches = (int)(res.nepisodes / BATCH);
	CHECK(batches >= flushed && batches <= flushed + 1);
	size_t na = 0, nf = 0;
	int cells_ok = 1;
	for (size_t i = 0; i < res.nepisodes; i++) {
		char cell[CELL_ID_LEN + 1];
		fixture_cell(cell, (int)i);
		cells_ok &= strcmp(res.episodes[i].cell, cell) == 0;
		na += i % 3 + 1;
		nf += i % 3;
	}
	CHECK(cells_ok);
	CHECK_INT(res.nassertions, na);
	CHECK_INT(res.nmetrics, 2 * res.nepisodes);
	CHECK_INT(res.nartifacts, nf);
	CHECK_INT(res.ntasks, FIXTURE_TASKS);
	/* the traces of the last batch are whole */
	for (size_t i = res.nepisodes > BATCH ? res.nepisodes - BATCH : 0;
	     i < res.nepisodes; i++) {
		if (!fixture_has_trace((int)i))
			continue;
		char *want = fixture_trace_text((int)i, TRACE_PAD);
		char *got = NULL;
		size_t len;
		rc = store_read_trace(path, res.episodes[i].cell, &got, &len,
				      &err);
		CHECK_INT(rc, 0);
		CHECK(got && strcmp(got, want) == 0);
		if (rc < 0)
			fprintf(stderr, "store_read_trace: %s\n", err.msg);
		engi_free(got);
		engi_free(want);
	}
	engi_results_release(&res);

	if (h5dump) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "'%s' -H '%s' > /dev/null", h5dump,
			 path);
		CHECK_INT(system(cmd), 0);
	}
}

int main(int argc, char **argv)
{
	const char *h5dump = argc > 1 ? argv[1] : getenv("ENGI_H5DUMP");
	char dir[] = "/tmp/engi-kill-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char path[128];
	snprintf(path, sizeof(path), "%s/killed.h5", dir);
	/* microseconds after the round's last awaited flush */
	static const long delay_us[ROUNDS] = { 0,    200,  700,  1500,
					       3000, 6000, 11000, 23000 };
	for (int round = 0; round < ROUNDS; round++) {
		int fds[2];
		if (pipe(fds) != 0) {
			perror("pipe");
			return 1;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(fds[0]);
			child_writes(path, fds[1]);
		}
		close(fds[1]);
		int target = 2 + round % 3, flushed = 0;
		int32_t v;
		while (flushed < target &&
		       read(fds[0], &v, sizeof(v)) == sizeof(v))
			flushed = v;
		CHECK_INT(flushed, target);
		struct timespec ts = { 0, delay_us[round] * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		while (read(fds[0], &v, sizeof(v)) == sizeof(v))
			flushed = v;
		close(fds[0]);
		printf("round %d: killed after %d flushed batches\n", round,
		       flushed);
		check_file(path, flushed, h5dump);
	}
	if (check_failed_ == 0) {
		remove(path);
		rmdir(dir);
	} else {
		fprintf(stderr, "last file kept: %s\n", path);
	}
	return check_exit();
}
