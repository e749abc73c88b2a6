/*
 * engisweep judge: one task's verifier on saved deliverables. `run` starts
 * it as a child process for every episode (src/episode/judge.h), so that a
 * verifier kernel that crashes or runs away on a hostile deliverable takes
 * only this process down; by hand it judges an episode's artifacts folder.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/threads.h"
#include "fsutil.h"
#include "judge.h"
#include "record.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char judge_help[] =
    "usage: engisweep judge [options] TASK.json ARTIFACT_DIR\n"
    "\n"
    "Runs the task's verifier on the deliverables in ARTIFACT_DIR (a results\n"
    "folder's artifacts/<cell>/) and prints every assertion, or writes the\n"
    "verdict as a record's JSON with --out. run starts it for every episode as\n"
    "a child process under these limits; a crash or a limit reached is then an\n"
    "infrastructure failure of the verifier, not a verdict. Exit status: 0\n"
    "judged, 3 the verifier failed, 4 it ran out of memory, 2 bad usage.\n"
    "\n"
    "options:\n"
    "  -o, --out FILE     the verdict as JSON (default: a summary on stdout)\n"
    "      --task-dir DIR TASK.json is one task in engisweep's JSON (a task of\n"
    "                     any source, translated), its paths taken from DIR\n"
    "      --threads N    kernel threads (default: as the host allows)\n"
    "      --cpu-s S      CPU-time limit in seconds (SIGXCPU past it)\n"
    "      --mem-mb M     address-space limit in MiB (not applied under\n"
    "                     AddressSanitizer, which reserves terabytes)\n"
    "  -h, --help         this text\n";

enum { OPT_THREADS = 256, OPT_CPU, OPT_MEM, OPT_TASK_DIR };

static const struct option judge_options[] = {
    {"out", required_argument, NULL, 'o'},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"cpu-s", required_argument, NULL, OPT_CPU},
    {"mem-mb", required_argument, NULL, OPT_MEM},
    {"task-dir", required_argument, NULL, OPT_TASK_DIR},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

#if defined(__SANITIZE_ADDRESS__)
#define ENGI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENGI_ASAN 1
#endif
#endif

static void limit(int what, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
	setrlimit(what, &rl);
}

/* Test-only: ENGI_JUDGE_FAULT=segv|abort|spin|sleep|nomem makes the child
 * fail the way a verifier kernel can, so the parent's handling is tested
 * without a kernel bug to rely on. */
static void test_fault(void)
{
	const char *f = getenv("ENGI_JUDGE_FAULT");
	if (!f || !*f)
		return;
	if (!strcmp(f, "segv"))
		raise(SIGSEGV);
	else if (!strcmp(f, "abort"))
		abort();
	else if (!strcmp(f, "spin"))
		for (volatile unsigned long i = 0;; i++)
			;
	else if (!strcmp(f, "sleep"))
		for (;;)
			pause();
	else if (!strcmp(f, "nomem"))
		exit(judge_exit_code(ENGI_ENOMEM));
}

static void print_verdict(const struct record *r)
{
	printf("success %d  feasible %d  score %.6g  quality %.6g\n", r->success, r->feasible,
	       r->score, r->quality);
	for (size_t i = 0; i < r->nassertions; i++) {
		const struct engi_assertion *a = &r->assertions[i];
		printf("  %-12s %-28s %-12s %s%s\n", engi_astate_name(a->state), a->name, a->stage,
		       a->required ? "" : "(optional) ", a->detail);
	}
	for (size_t i = 0; i < r->nmetrics; i++)
		printf("  metric %-28s %.17g\n", r->metrics[i].name, r->metrics[i].value);
}

int cmd_judge(int argc, char **argv)
{
	const char *out = NULL, *task_dir = NULL;
	long threads = 0, mem = 0;
	double cpu = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", judge_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_THREADS:
			if (cli_int("--threads", optarg, 1, 4096, &threads) < 0)
				return EXIT_USAGE;
			break;
		case OPT_CPU:
			if (cli_num("--cpu-s", optarg, 1, 1e7, &cpu) < 0)
				return EXIT_USAGE;
			break;
		case OPT_MEM:
			if (cli_int("--mem-mb", optarg, 16, 1L << 30, &mem) < 0)
				return EXIT_USAGE;
			break;
		case OPT_TASK_DIR:
			task_dir = optarg;
			break;
		case 'h':
			fputs(judge_help, stdout);
			return 0;
		default:
			fputs(judge_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_errorf("judge: expected TASK.json and ARTIFACT_DIR");
		fputs(judge_help, stderr);
		return EXIT_USAGE;
	}
	if (cpu > 0)
		limit(RLIMIT_CPU, (rlim_t)cpu, (rlim_t)cpu + 5);
#ifndef ENGI_ASAN
	if (mem > 0)
		limit(RLIMIT_AS, (rlim_t)mem << 20, (rlim_t)mem << 20);
#endif
	if (threads > 0)
		engi_threads_set((int)threads);
	char tmp[4096] = "";
	if (!out) {
		const char *t = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/engijudge.XXXXXX", t && *t ? t : "/tmp");
		int fd = mkstemp(tmp);
		if (fd < 0) {
			cli_errorf("judge: cannot create a temporary file");
			return EXIT_FAILED;
		}
		close(fd);
	}
	test_fault();
	struct engi_error err;
	engi_error_init(&err);
	int rc = judge_child(argv[optind], task_dir, argv[optind + 1], out ? out : tmp, &err);
	if (rc < 0) {
		cli_error(&err);
		if (tmp[0])
			unlink(tmp);
		return judge_exit_code(rc);
	}
	if (tmp[0]) {
		char *json = NULL;
		size_t len = 0;
		struct record r;
		record_init(&r);
		rc = fs_read_file(tmp, (size_t)64 << 20, &json, &len, &err);
		if (rc == 0)
			rc = record_from_json(json, len, &r, &err);
		/* by hand: scored as a run that ended on its own would be (the
		 * parent of a sweep scores it with the run's outcome) */
		struct suite su;
		memset(&su, 0, sizeof(su));
		int loaded = 0;
		if (rc == 0 && (rc = judge_load_task(&su, argv[optind], task_dir, &err)) == 0)
			loaded = 1;
		if (rc == 0 && su.ntasks == 1) {
			struct engi_verdict v;
			engi_verdict_init(&v);
			rc = judge_verdict_from_record(&r, &v, &err);
			if (rc == 0)
				rc = judge_resolve(&su.tasks[0], &v, &err);
			if (rc == 0) {
				judge_score(&su.tasks[0], OUTCOME_DONE, &v);
				rc = record_take_verdict(&r, &v);
			}
			engi_verdict_release(&v);
		}
		if (loaded)
			suite_release(&su);
		if (rc == 0)
			print_verdict(&r);
		else
			cli_error(&err);
		engi_free(json);
		record_release(&r);
		unlink(tmp);
	}
	return rc < 0 ? judge_exit_code(rc) : 0;
}
