/*
 * The journal's group commit (src/core/journal.c): lines written by
 * journal_write_json are in the file before any journal_sync, so that a
 * writer killed with SIGKILL between its writes and its sync loses none of
 * them; journal_sync syncs only when something was written; the one-line
 * append (write and sync) and the written-then-synced lines read back the
 * same, in order, and a line with a newline is refused.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "journal.h"
#include "record.h"

static int count_line(void *ctx, struct record *r, struct engi_error *err)
{
	(void)err;
	size_t *n = ctx;
	char want[32];
	snprintf(want, sizeof(want), "cell-%zu", *n);
	CHECK_STR(r->cell, want);
	record_release(r);
	(*n)++;
	return 0;
}

static void line_of(size_t i, char *buf, size_t n, size_t *len)
{
	struct record r;
	record_init(&r);
	snprintf(r.cell, sizeof(r.cell), "cell-%zu", i);
	snprintf(r.task_id, sizeof(r.task_id), "t");
	snprintf(r.model, sizeof(r.model), "m");
	char *line = NULL;
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(record_to_json(&r, &line, len, &e), 0);
	CHECK(*len < n);
	memcpy(buf, line, *len);
	buf[*len] = '\0';
	free(line);
	record_release(&r);
}

int main(void)
{
	char dir[] = "/tmp/engi-journal-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[256];
	snprintf(path, sizeof(path), "%s/journal.jsonl", dir);
	struct engi_error e;
	engi_error_init(&e);

	/* SIGKILL after writes that were never synced: every written line is
	 * there */
	for (int round = 0; round < 5; round++) {
		int fds[2];
		CHECK(pipe(fds) == 0);
		pid_t pid = fork();
		if (pid == 0) {
			close(fds[0]);
			struct journal j;
			if (journal_open(&j, path, 0, &e) < 0)
				_exit(3);
			for (size_t i = 0;; i++) {
				char buf[4096];
				size_t len;
				line_of(i, buf, sizeof(buf), &len);
				if (journal_write_json(&j, buf, len, &e) < 0)
					_exit(4);
				/* reported written, never synced */
				if (write(fds[1], &i, sizeof(i)) != (ssize_t)sizeof(i))
					_exit(5);
				if (i == 1000)
					pause();
			}
		}
		close(fds[1]);
		size_t last = 0, got = 0, k;
		size_t stop = 50 + 200 * (size_t)round;
		while (read(fds[0], &k, sizeof(k)) == (ssize_t)sizeof(k)) {
			last = k;
			got = 1;
			if (k >= stop)
				break;
		}
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		close(fds[0]);
		CHECK(got && WIFSIGNALED(st));
		size_t n = 0;
		CHECK_INT(journal_read(path, count_line, &n, NULL, &e), 0);
		CHECK(n >= last + 1); /* every reported line, maybe one more */
	}

	/* written then synced, and appended with a sync each: the same lines */
	struct journal j;
	CHECK_INT(journal_open(&j, path, 0, &e), 0);
	CHECK_INT(journal_sync(&j, &e), 0); /* nothing written: nothing to do */
	CHECK_INT(j.unsynced, 0);
	for (size_t i = 0; i < 10; i++) {
		char buf[4096];
		size_t len;
		line_of(i, buf, sizeof(buf), &len);
		if (i % 2)
			CHECK_INT(journal_append_json(&j, buf, len, &e), 0);
		else
			CHECK_INT(journal_write_json(&j, buf, len, &e), 0);
		CHECK_INT(j.unsynced, i % 2 ? 0 : 1);
	}
	CHECK_INT(journal_write_json(&j, "{\"a\":\n1}", 8, &e), ENGI_EINVALID);
	CHECK_INT(journal_sync(&j, &e), 0);
	CHECK_INT(j.unsynced, 0);
	journal_close(&j);
	size_t n = 0;
	CHECK_INT(journal_read(path, count_line, &n, NULL, &e), 0);
	CHECK(n == 10);
	unlink(path);
	rmdir(dir);
	return check_exit();
}
