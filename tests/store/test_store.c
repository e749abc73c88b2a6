/* The HDF5 results file: create, append, flush, close, read back. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "fixture.h"
#include "store.h"

#define NREC 3

static char dir[] = "/tmp/engi-store-XXXXXX";

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

#define CHECK_MSG(err, needle)                                                                     \
	do {                                                                                       \
		check_count_++;                                                                    \
		if (!strstr((err).msg, (needle))) {                                                \
			check_failed_++;                                                           \
			fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__,    \
				(err).msg, (needle));                                              \
		}                                                                                  \
	} while (0)

/* Every row of res is the one the fixture's records give. */
static void check_results(const struct engi_results *res, const struct fixture_meta *f, int nrec)
{
	CHECK_INT(res->ntasks, FIXTURE_TASKS);
	CHECK_INT(res->nmodels, FIXTURE_MODELS);
	CHECK_INT(res->nconditions, FIXTURE_CONDITIONS);
	for (size_t i = 0; i < res->ntasks && i < FIXTURE_TASKS; i++)
		CHECK(memcmp(&res->tasks[i], &f->tasks[i], sizeof(f->tasks[i])) == 0);
	for (size_t i = 0; i < res->nmodels && i < FIXTURE_MODELS; i++)
		CHECK(memcmp(&res->models[i], &f->models[i], sizeof(f->models[i])) == 0);
	CHECK(res->nconditions == 1 &&
	      memcmp(&res->conditions[0], &f->conditions[0], sizeof(f->conditions[0])) == 0);
	CHECK_INT(res->ntask_meta, FIXTURE_TASK_META);
	for (size_t i = 0; i < res->ntask_meta && i < FIXTURE_TASK_META; i++)
		CHECK(memcmp(&res->task_meta[i], &f->task_meta[i], sizeof(f->task_meta[i])) == 0);
	CHECK_INT(res->planned_cells, 12);
	CHECK(res->config_json && strcmp(res->config_json, f->config) == 0);

	size_t na = 0, nm = 0, nf = 0;
	CHECK_INT(res->nepisodes, nrec);
	for (int i = 0; i < nrec && (size_t)i < res->nepisodes; i++) {
		struct record r;
		record_init(&r);
		fixture_record(&r, i, 0);
		const struct engi_res_episode *e = &res->episodes[i];
		CHECK_STR(e->cell, r.cell);
		CHECK_STR(e->task_id, r.task_id);
		CHECK_STR(e->model, r.model);
		CHECK_STR(e->condition, r.condition);
		CHECK_INT(e->trial, r.trial);
		CHECK_STR(e->outcome, outcome_name(r.outcome));
		CHECK_INT(e->attempts, r.attempts);
		CHECK_INT(e->success, r.success);
		CHECK_INT(e->feasible, r.feasible);
		CHECK(same_double(e->score, r.score));
		CHECK(same_double(e->quality, r.quality));
		CHECK_INT(e->turns, r.turns);
		CHECK_INT(e->tokens_in, r.tokens_in);
		CHECK_INT(e->tokens_out, r.tokens_out);
		CHECK(same_double(e->cost_usd, r.cost_usd));
		CHECK(same_double(e->wall_s, r.wall_s));
		CHECK(same_double(e->env_s, r.env_s));
		CHECK(same_double(e->model_s, r.model_s));
		CHECK(same_double(e->verify_s, r.verify_s));
		CHECK(same_double(e->started_at, r.started_at));
		CHECK_INT(e->rank, r.rank);
		CHECK_STR(e->host, r.host);
		CHECK_STR(e->run_id, r.run_id);
		CHECK_STR(e->message, r.message);
		CHECK_STR(e->run_outcome, r.run_outcome >= 0 ? outcome_name(r.run_outcome) : "");
		CHECK_STR(e->run_message, r.run_message);
		for (size_t j = 0; j < r.nassertions; j++, na++) {
			if (na >= res->nassertions)
				break;
			const struct engi_res_assertion *a = &res->assertions[na];
			CHECK_STR(a->cell, r.cell);
			CHECK_STR(a->name, r.assertions[j].name);
			CHECK_STR(a->stage, r.assertions[j].stage);
			CHECK_STR(a->state, engi_astate_name(r.assertions[j].state));
			CHECK_INT(a->required, r.assertions[j].required);
			CHECK(same_double(a->value, r.assertions[j].value));
			CHECK(same_double(a->expected, r.assertions[j].expected));
			CHECK_STR(a->detail, r.assertions[j].detail);
		}
		for (size_t j = 0; j < r.nmetrics; j++, nm++) {
			if (nm >= res->nmetrics)
				break;
			CHECK_STR(res->metrics[nm].cell, r.cell);
			CHECK_STR(res->metrics[nm].name, r.metrics[j].name);
			CHECK(same_double(res->metrics[nm].value, r.metrics[j].value));
		}
		for (size_t j = 0; j < r.nartifacts; j++, nf++) {
			if (nf >= res->nartifacts)
				break;
			const struct engi_res_artifact *a = &res->artifacts[nf];
			CHECK_STR(a->cell, r.cell);
			CHECK_STR(a->path, r.artifacts[j].path);
			CHECK_INT(a->bytes, r.artifacts[j].bytes);
			CHECK_STR(a->sha256, r.artifacts[j].sha256);
			CHECK_STR(a->note, r.artifacts[j].note);
		}
		record_release(&r);
	}
	CHECK_INT(res->nassertions, na);
	CHECK_INT(res->nmetrics, nm);
	CHECK_INT(res->nartifacts, nf);
}

static void check_traces(const char *path, int nrec)
{
	struct engi_error err;
	for (int i = 0; i < nrec; i++) {
		char cell[CELL_ID_LEN + 1];
		fixture_cell(cell, i);
		char *want = fixture_trace_text(i, 0);
		char *got = NULL;
		size_t len = 0;
		engi_error_init(&err);
		int rc = store_read_trace(path, cell, &got, &len, &err);
		if (fixture_has_trace(i)) {
			CHECK_INT(rc, 0);
			CHECK_INT(len, strlen(want));
			CHECK(got && strcmp(got, want) == 0);
		} else {
			CHECK_INT(rc, ENGI_ENOTFOUND);
			CHECK_MSG(err, "no trace for cell");
		}
		engi_free(got);
		engi_free(want);
	}
}

static int append_fixture(struct store *s, int from, int to, struct engi_error *err)
{
	for (int i = from; i < to; i++) {
		struct record r;
		record_init(&r);
		fixture_record(&r, i, 0);
		int rc = store_append(s, &r, err);
		record_release(&r);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void test_write_read(void)
{
	char path[256];
	path_in(path, sizeof(path), "one.h5");
	struct fixture_meta f;
	fixture_meta_init(&f, 200000); /* over HDF5's 64 KiB compact limit */
	struct engi_error err;
	engi_error_init(&err);
	struct store *s = NULL;
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(append_fixture(s, 0, NREC, &err), 0);
	CHECK_INT(store_flush(s, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK(s == NULL);
	CHECK_STR(err.msg, "");

	struct engi_results res;
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK_STR(err.msg, "");
	check_results(&res, &f, NREC);
	engi_results_release(&res);
	check_traces(path, NREC);

	/* the same rows through several flushes, one of them empty */
	path_in(path, sizeof(path), "batches.h5");
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(store_flush(s, &err), 0);
	CHECK_INT(append_fixture(s, 0, 1, &err), 0);
	CHECK_INT(store_flush(s, &err), 0);
	CHECK_INT(append_fixture(s, 1, NREC, &err), 0);
	CHECK_INT(store_close(&s, &err), 0); /* close flushes */
	CHECK_INT(store_read(path, &res, &err), 0);
	check_results(&res, &f, NREC);
	engi_results_release(&res);
	check_traces(path, NREC);

	/* more rows than one chunk */
	path_in(path, sizeof(path), "many.h5");
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	for (int b = 0; b < 5; b++) {
		CHECK_INT(append_fixture(s, b * 300, (b + 1) * 300, &err), 0);
		CHECK_INT(store_flush(s, &err), 0);
	}
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), 0);
	check_results(&res, &f, 1500);
	engi_results_release(&res);

	/* an empty sweep: no metadata rows, no episodes, NULL strings */
	path_in(path, sizeof(path), "empty.h5");
	struct store_meta empty = {0};
	CHECK_INT(store_create(&s, path, &empty, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK(res.ntasks == 0 && res.nepisodes == 0 && res.nassertions == 0);
	CHECK(res.config_json && res.config_json[0] == '\0');
	engi_results_release(&res);
	CHECK_STR(err.msg, "");
	fixture_meta_release(&f);
}

/* A file read while its writer has it open (a store that is not published). */
static void test_read_while_writing(void)
{
	char path[256];
	path_in(path, sizeof(path), "open.h5");
	struct fixture_meta f;
	fixture_meta_init(&f, 100);
	struct engi_error err;
	engi_error_init(&err);
	struct store *s;
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(append_fixture(s, 0, 2, &err), 0);
	CHECK_INT(store_flush(s, &err), 0);
	struct engi_results res;
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.nepisodes, 2);
	engi_results_release(&res);
	char cell[CELL_ID_LEN + 1];
	fixture_cell(cell, 0);
	char *text = NULL;
	size_t len;
	CHECK_INT(store_read_trace(path, cell, &text, &len, &err), 0);
	engi_free(text);
	/* and the writer goes on */
	CHECK_INT(append_fixture(s, 2, NREC, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), 0);
	check_results(&res, &f, NREC);
	engi_results_release(&res);
	fixture_meta_release(&f);
}

/* The same with the writer in another process, which holds HDF5's lock. */
static void test_read_while_other_writes(void)
{
	char path[256];
	path_in(path, sizeof(path), "other.h5");
	int ready[2], done[2];
	if (pipe(ready) != 0 || pipe(done) != 0) {
		perror("pipe");
		check_failed_++;
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct fixture_meta f;
		fixture_meta_init(&f, 100);
		struct store *s;
		struct engi_error err;
		engi_error_init(&err);
		char c = 'x';
		if (store_create(&s, path, &f.meta, &err) == 0 &&
		    append_fixture(s, 0, 2, &err) == 0 && store_flush(s, &err) == 0)
			c = 'k';
		if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(2);
		_exit(store_close(&s, &err) == 0 ? 0 : 3);
	}
	char c = 0;
	CHECK(read(ready[0], &c, 1) == 1 && c == 'k');
	struct engi_results res;
	struct engi_error err;
	engi_error_init(&err);
	const char *locking = getenv("HDF5_USE_FILE_LOCKING");
	if (locking && (locking[0] == 'T' || locking[0] == '1')) {
		/* the environment overrides the reader's choice: explain */
		CHECK_INT(store_read(path, &res, &err), ENGI_EIO);
		CHECK_MSG(err, "set it to FALSE to read it");
		engi_error_init(&err);
	} else {
		CHECK_INT(store_read(path, &res, &err), 0);
		CHECK_STR(err.msg, "");
		CHECK_INT(res.nepisodes, 2);
		engi_results_release(&res);
	}
	/* a second writer is refused while the first has the file (unless
	 * the environment turns HDF5's locks off) */
	if (!locking || (locking[0] != 'F' && locking[0] != '0')) {
		struct fixture_meta f;
		fixture_meta_init(&f, 100);
		struct store *s = NULL;
		CHECK(store_create(&s, path, &f.meta, &err) < 0);
		CHECK_MSG(err, "cannot create results file");
		CHECK_MSG(err, "lock");
		CHECK(s == NULL);
		fixture_meta_release(&f);
	}
	CHECK(write(done[1], "x", 1) == 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

static int episodes_in(const char *path)
{
	struct engi_results res;
	struct engi_error err;
	engi_error_init(&err);
	if (store_read(path, &res, &err) < 0) {
		fprintf(stderr, "store_read: %s\n", err.msg);
		return -1;
	}
	int n = (int)res.nepisodes;
	engi_results_release(&res);
	return n;
}

/* Readers of a running sweep read the published copy: whole at every
 * moment, replaced in one step, kept by whoever holds it open. */
static void test_publish(void)
{
	char work[256], pub[256], copy[300];
	path_in(work, sizeof(work), "work.h5");
	path_in(pub, sizeof(pub), "pub.h5");
	snprintf(copy, sizeof(copy), "%s.copy", pub);
	struct fixture_meta f;
	fixture_meta_init(&f, 100);
	struct engi_error err;
	engi_error_init(&err);
	struct store *s;
	CHECK_INT(store_create(&s, work, &f.meta, &err), 0);
	CHECK_INT(store_publish(s, work, &err), ENGI_EINVALID);
	CHECK_MSG(err, "onto itself");
	engi_error_init(&err);
	CHECK_INT(store_publish(s, pub, &err), 0);
	CHECK_INT(episodes_in(pub), 0);
	CHECK_INT(append_fixture(s, 0, 2, &err), 0);
	CHECK_INT(store_publish(s, pub, &err), 0);
	CHECK_INT(episodes_in(pub), 2);
	CHECK(access(copy, F_OK) != 0);

	/* a reader holding that copy keeps it while newer ones replace it */
	struct store_reader *r = NULL;
	CHECK_INT(store_reader_open(&r, pub, &err), 0);
	CHECK_INT(append_fixture(s, 2, 4, &err), 0);
	CHECK_INT(store_publish(s, pub, &err), 0);
	CHECK_INT(episodes_in(pub), 4);
	char cell[CELL_ID_LEN + 1];
	unsigned char *z = NULL;
	size_t zlen;
	uint64_t raw;
	fixture_cell(cell, 0);
	CHECK_INT(store_reader_trace(r, cell, &z, &zlen, &raw, &err), 0);
	engi_free(z);
	z = NULL;
	fixture_cell(cell, 3); /* not in the held copy */
	CHECK_INT(store_reader_trace(r, cell, &z, &zlen, &raw, &err), ENGI_ENOTFOUND);
	store_reader_close(&r);
	engi_error_init(&err);

	/* flushes publish by themselves, in the background, every 2 s at most;
	 * what is appended meanwhile is kept */
	CHECK_INT(append_fixture(s, 4, 6, &err), 0);
	sleep(2);
	int n = 0, flushed = 6;
	for (int i = 0; i < 400 && n < 10; i++) {
		CHECK_INT(store_flush(s, &err), 0);
		n = episodes_in(pub);
		if (flushed < 10)
			CHECK_INT(append_fixture(s, flushed, flushed + 1, &err), 0);
		flushed += flushed < 10;
		usleep(20000);
	}
	CHECK_INT(n, 10);
	CHECK_INT(store_publish(s, "elsewhere.h5", &err), ENGI_EINVALID);
	CHECK_MSG(err, "already published as");
	engi_error_init(&err);
	CHECK_INT(append_fixture(s, 10, 12, &err), 0);
	/* the closed file itself takes the copy's place */
	CHECK_INT(store_close(&s, &err), 0);
	CHECK(access(work, F_OK) != 0 && access(copy, F_OK) != 0);
	struct engi_results res;
	CHECK_INT(store_read(pub, &res, &err), 0);
	CHECK_INT(res.nepisodes, 12);
	for (size_t i = 0; i < res.nepisodes; i++) {
		fixture_cell(cell, (int)i);
		CHECK_STR(res.episodes[i].cell, cell);
	}
	engi_results_release(&res);

	/* a copy that cannot be made is an error of the flush that makes it */
	char nodir[300];
	snprintf(nodir, sizeof(nodir), "%s/no/such/dir/pub.h5", dir);
	CHECK_INT(store_create(&s, work, &f.meta, &err), 0);
	CHECK_INT(store_publish(s, nodir, &err), ENGI_EIO);
	CHECK_MSG(err, "cannot publish");
	CHECK_MSG(err, "no/such/dir/pub.h5.copy");
	engi_error_init(&err);
	CHECK_INT(store_close(&s, &err), ENGI_EIO);
	CHECK_MSG(err, "cannot rename");
	fixture_meta_release(&f);
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	if (fp) {
		fwrite(data, 1, n, fp);
		fclose(fp);
	}
}

/* A string that begins with the alias byte of engi/results.h would read as
 * another text: refused, naming the dataset, row and field. */
static void test_alias_byte(void)
{
	char path[256];
	struct engi_error err;
	struct engi_results res;
	struct fixture_meta f;
	fixture_meta_init(&f, 100);
	f.tasks[1].title[0] = ENGI_RES_LONG;
	path_in(path, sizeof(path), "alias.h5");
	struct store *s = NULL;
	engi_error_init(&err);
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), ENGI_EINVALID);
	CHECK_MSG(err, "dataset '/tasks' in '");
	CHECK_MSG(err, "row 1: field 'title' begins with byte 0x01");
	CHECK(res.tasks == NULL && res.ntasks == 0);
	fixture_meta_release(&f);
	unlink(path);
}

static void test_errors(void)
{
	char path[256], other[300];
	struct engi_error err;
	struct engi_results res;
	struct fixture_meta f;
	fixture_meta_init(&f, 100);

	/* errors only through struct engi_error: nothing on stderr */
	fflush(stderr);
	int saved = dup(2);
	path_in(path, sizeof(path), "stderr.txt");
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	dup2(fd, 2);
	close(fd);

	engi_error_init(&err);
	path_in(path, sizeof(path), "missing.h5");
	CHECK_INT(store_read(path, &res, &err), ENGI_ENOTFOUND);
	CHECK_MSG(err, "cannot open results file '");
	CHECK_MSG(err, "missing.h5': No such file or directory");
	CHECK(res.episodes == NULL && res.nepisodes == 0);

	engi_error_init(&err);
	path_in(path, sizeof(path), "text.h5");
	write_file(path, "hello, not hdf5\n", 16);
	CHECK_INT(store_read(path, &res, &err), ENGI_EINVALID);
	CHECK_MSG(err, "text.h5' is not an engisweep results file");

	engi_error_init(&err);
	path_in(path, sizeof(path), "no-such-dir/x.h5");
	struct store *s = NULL;
	CHECK(store_create(&s, path, &f.meta, &err) < 0);
	CHECK(s == NULL);
	CHECK_MSG(err, "cannot create results file '");
	CHECK_MSG(err, "no-such-dir/x.h5'");

	/* a file cut short reads as an error, not a crash */
	path_in(path, sizeof(path), "one.h5");
	FILE *fp = fopen(path, "rb");
	static unsigned char head[4096];
	size_t n = fp ? fread(head, 1, sizeof(head), fp) : 0;
	if (fp)
		fclose(fp);
	CHECK(n == sizeof(head));
	path_in(other, sizeof(other), "cut.h5");
	write_file(other, head, n);
	engi_error_init(&err);
	CHECK(store_read(other, &res, &err) < 0);
	CHECK_MSG(err, "cut.h5");
	CHECK(res.episodes == NULL && res.tasks == NULL);

	/* bad records and cells */
	path_in(path, sizeof(path), "bad.h5");
	engi_error_init(&err);
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	struct record r;
	record_init(&r);
	CHECK_INT(store_append(s, &r, &err), ENGI_EINVALID);
	CHECK_MSG(err, "empty cell id");
	engi_error_init(&err);
	snprintf(r.cell, sizeof(r.cell), "a/b");
	CHECK_INT(store_append(s, &r, &err), ENGI_EINVALID);
	CHECK_MSG(err, "cell id 'a/b'");
	engi_error_init(&err);
	snprintf(r.cell, sizeof(r.cell), "ok");
	r.outcome = OUTCOME_COUNT;
	CHECK_INT(store_append(s, &r, &err), ENGI_EINVALID);
	CHECK_MSG(err, "outcome");
	r.outcome = OUTCOME_DONE;
	/* an assertion state outside the list: refused by the store and by the
	 * journal line alike (one check, record_check_values), nothing buffered */
	struct record bad;
	record_init(&bad);
	fixture_record(&bad, 5, 0);
	bad.assertions[bad.nassertions - 1].state = ENGI_UNAVAILABLE + 1;
	engi_error_init(&err);
	CHECK_INT(store_append(s, &bad, &err), ENGI_EINVALID);
	CHECK_MSG(err, "assertion 'a5.2' has state");
	engi_error_init(&err);
	char *line = NULL;
	CHECK_INT(record_to_json(&bad, &line, NULL, &err), ENGI_EINVALID);
	CHECK_MSG(err, "assertion 'a5.2' has state");
	CHECK(line == NULL);
	record_release(&bad);
	engi_error_init(&err);
	CHECK_INT(store_read_trace(path, "a/b", &(char *){NULL}, NULL, &err), ENGI_EINVALID);
	engi_error_init(&err);
	CHECK_INT(store_append(s, &r, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK(res.nepisodes == 1 && res.nassertions == 0 && res.nmetrics == 0);
	engi_results_release(&res);
	CHECK_INT(store_read_trace(path, "ok", &(char *){NULL}, NULL, &err), ENGI_ENOTFOUND);
	record_release(&r);

	/* the same cell twice keeps both rows and the latest trace */
	path_in(path, sizeof(path), "twice.h5");
	engi_error_init(&err);
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(append_fixture(s, 0, 1, &err), 0);
	CHECK_INT(store_flush(s, &err), 0);
	CHECK_INT(append_fixture(s, 0, 1, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK_INT(res.nepisodes, 2);
	engi_results_release(&res);
	check_traces(path, 1);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	path_in(path, sizeof(path), "stderr.txt");
	struct stat st = {0};
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	if (st.st_size) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "cat %s >&2", path);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot show %s\n", path);
	}
	fixture_meta_release(&f);
}

/* A failed allocation in store_append leaves the store as it was. */
static void test_out_of_memory(void)
{
	char path[256];
	path_in(path, sizeof(path), "nomem.h5");
	struct fixture_meta f;
	fixture_meta_init(&f, 100);
	struct engi_error err;
	engi_error_init(&err);
	struct store *s;
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	int appended = 0, all_ok = 1;
	for (long n = 1; n <= 8; n++) {
		struct record r;
		record_init(&r);
		fixture_record(&r, appended, 0);
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = store_append(s, &r, &err);
		engi_alloc_fail_after(0);
		record_release(&r);
		if (rc == 0)
			appended++;
		else if (rc != ENGI_ENOMEM)
			all_ok = 0;
	}
	CHECK(all_ok && appended > 0);
	engi_error_init(&err);
	CHECK_INT(store_close(&s, &err), 0);
	struct engi_results res;
	CHECK_INT(store_read(path, &res, &err), 0);
	check_results(&res, &f, appended);
	engi_results_release(&res);
	fixture_meta_release(&f);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_write_read();
	test_read_while_writing();
	test_read_while_other_writes();
	test_publish();
	test_errors();
	test_alias_byte();
	test_out_of_memory();
	if (check_failed_ == 0) {
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	} else {
		fprintf(stderr, "files kept in %s\n", dir);
	}
	return check_exit();
}
