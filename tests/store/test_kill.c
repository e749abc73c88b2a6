/*
 * A killed writer leaves a results file that opens and holds a whole number
 * of flushed batches. The child appends and flushes batches in a loop and
 * reports each flush through a pipe; the parent kills it after a few
 * flushes, then reads the file with store_read and with h5dump ($ENGI_H5DUMP
 * or argv[1], when given).
 *
 * SIGKILL rounds kill at varied moments while the child appends; a shared
 * semaphore keeps the kill out of store_flush, because H5Fflush itself is
 * not atomic (a kill inside it can damage the newest objects; the journal
 * covers that case). SIGTERM rounds kill at any moment, flushes included:
 * the store holds SIGTERM back until its flush is done. Publishing rounds
 * (the sweep's way) SIGKILL the child at any moment, inside flushes and
 * copies included, and read the published copy, which the child refreshes
 * after every flush and reports.
 */
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "fixture.h"
#include "store.h"

#define BATCH	    4
#define MAX_BATCHES 100000
#define ROUNDS	    8

struct plan {
	int sig;
	size_t trace_pad;    /* filler bytes per trace event */
	sem_t *flush_lock;   /* held by the child while it flushes, or NULL */
	const char *publish; /* the child publishes there after every flush */
};

static _Noreturn void child_writes(const char *path, int out, const struct plan *p)
{
	struct fixture_meta f;
	fixture_meta_init(&f, 1000);
	struct store *s;
	struct engi_error err;
	engi_error_init(&err);
	if (store_create(&s, path, &f.meta, &err) < 0 ||
	    (p->publish && store_publish(s, p->publish, &err) < 0)) {
		fprintf(stderr, "child: %s\n", err.msg);
		_exit(3);
	}
	for (int b = 0; b < MAX_BATCHES; b++) {
		for (int k = 0; k < BATCH; k++) {
			struct record r;
			record_init(&r);
			fixture_record(&r, b * BATCH + k, p->trace_pad);
			int rc = store_append(s, &r, &err);
			record_release(&r);
			if (rc < 0) {
				fprintf(stderr, "child: %s\n", err.msg);
				_exit(4);
			}
		}
		if (p->flush_lock)
			sem_wait(p->flush_lock);
		int rc = store_flush(s, &err);
		if (p->flush_lock)
			sem_post(p->flush_lock);
		if (rc == 0 && p->publish)
			rc = store_publish(s, p->publish, &err);
		if (rc < 0) {
			fprintf(stderr, "child: %s\n", err.msg);
			_exit(5);
		}
		int32_t done = b + 1;
		if (write(out, &done, sizeof(done)) != sizeof(done))
			_exit(6);
	}
	_exit(7);
}

static void check_file(const char *path, int flushed, size_t trace_pad, const char *h5dump)
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
	/* the traces of the last two batches are whole */
	for (size_t i = res.nepisodes > 2 * BATCH ? res.nepisodes - 2 * BATCH : 0;
	     i < res.nepisodes; i++) {
		if (!fixture_has_trace((int)i))
			continue;
		char *want = fixture_trace_text((int)i, trace_pad);
		char *got = NULL;
		size_t len;
		engi_error_init(&err);
		rc = store_read_trace(path, res.episodes[i].cell, &got, &len, &err);
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
		snprintf(cmd, sizeof(cmd), "'%s' -H '%s' > /dev/null", h5dump, path);
		CHECK_INT(system(cmd), 0);
	}
}

static void run_round(const char *path, int round, const struct plan *p, long delay_us,
		      const char *h5dump)
{
	int fds[2];
	if (pipe(fds) != 0) {
		perror("pipe");
		exit(1);
	}
	if (p->flush_lock)
		sem_init(p->flush_lock, 1, 1);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		close(fds[0]);
		child_writes(path, fds[1], p);
	}
	close(fds[1]);
	int target = 2 + round % 3, flushed = 0;
	int32_t v;
	while (flushed < target && read(fds[0], &v, sizeof(v)) == sizeof(v))
		flushed = v;
	CHECK_INT(flushed, target);
	struct timespec ts = {delay_us / 1000000, delay_us % 1000000 * 1000};
	nanosleep(&ts, NULL);
	if (p->flush_lock)
		sem_wait(p->flush_lock); /* the child is not flushing */
	kill(pid, p->sig);
	int status;
	waitpid(pid, &status, 0);
	if (p->flush_lock)
		sem_destroy(p->flush_lock);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == p->sig);
	while (read(fds[0], &v, sizeof(v)) == sizeof(v))
		flushed = v;
	close(fds[0]);
	printf("%s round %d: killed %ld us on, after %d %s batches\n",
	       p->sig == SIGKILL ? "SIGKILL" : "SIGTERM", round, delay_us, flushed,
	       p->publish ? "published" : "flushed");
	check_file(p->publish ? p->publish : path, flushed, p->trace_pad, h5dump);
}

int main(int argc, char **argv)
{
	const char *h5dump = argc > 1 ? argv[1] : getenv("ENGI_H5DUMP");
	char dir[] = "/tmp/engi-kill-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char path[128], pub[128];
	snprintf(path, sizeof(path), "%s/killed.h5", dir);
	snprintf(pub, sizeof(pub), "%s/published.h5", dir);
	sem_t *lock =
	    mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lock == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	static const long delay_us[ROUNDS] = {0, 200, 700, 1500, 3000, 6000, 11000, 23000};
	/* big traces: most time goes to building and appending records */
	struct plan kill9 = {SIGKILL, 8000, lock, NULL};
	for (int round = 0; round < ROUNDS; round++)
		run_round(path, round, &kill9, delay_us[round], h5dump);
	/* small traces: much of the time goes to flushing */
	struct plan term = {SIGTERM, 200, NULL, NULL};
	for (int round = 0; round < 2 * ROUNDS; round++)
		run_round(path, round, &term, delay_us[round % ROUNDS] / 4, h5dump);
	/* no semaphore: the published copy is whole at every moment */
	struct plan pub9 = {SIGKILL, 8000, NULL, pub};
	for (int round = 0; round < 2 * ROUNDS; round++)
		run_round(path, round, &pub9, delay_us[round % ROUNDS] / (1 + round / ROUNDS),
			  h5dump);
	munmap(lock, sizeof(sem_t));
	if (check_failed_ == 0) {
		remove(path);
		remove(pub);
		snprintf(path, sizeof(path), "%s/published.h5.copy", dir);
		remove(path);
		rmdir(dir);
	} else {
		fprintf(stderr, "last files kept: %s, %s\n", path, pub);
	}
	return check_exit();
}
