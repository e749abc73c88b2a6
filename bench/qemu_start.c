/*
 * bench_qemu_start - episode start latency of the qemu backend: the time
 * from backend_start to a guest whose agent answers, for a cold boot, a
 * restore from the saved migration stream onto a fresh overlay (incoming,
 * the default) and a restore of an internal snapshot (loadvm), each RUNS
 * times, then 1, 2 and 4 restored guests starting at once.
 *
 *   bench_qemu_start [IMAGE [RUNS [WORKDIR]]]     (default: tiny 10 /tmp)
 *
 * Prints medians, min/max and the ratio of each method to the cold boot.
 */
#include "backend.h"
#include "fsutil.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct backend_desc *qemu;
static const char *image = "tiny";
static char work[PATH_MAX];

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Starts a guest, checks it runs a command, stops it; seconds to ready. */
static double one(const char *name)
{
	struct env_spec s = {.image = image, .cpus = 1, .work_root = work, .name = name};
	struct backend_env *env;
	struct engi_error e;
	engi_error_init(&e);
	double t0 = clk_now_mono();
	if (backend_start(qemu, &s, &env, &e) < 0) {
		fprintf(stderr, "start: %s\n", e.msg);
		exit(1);
	}
	double t = clk_now_mono() - t0;
	struct exec_opts o = {.timeout_s = 30, .out_cap = 64};
	struct exec_result r;
	if (backend_exec(env, "echo ok", &o, &r, &e) < 0 || strcmp(r.out, "ok\n")) {
		fprintf(stderr, "exec after start failed: %s\n", e.msg);
		exit(1);
	}
	backend_exec_result_release(&r);
	backend_stop(&env);
	return t;
}

static double method(const char *restore, int runs, double *lo, double *hi)
{
	setenv("ENGI_QEMU_RESTORE", restore, 1);
	one("warm"); /* the ready state exists before timing */
	double *v = calloc((size_t)runs, sizeof(*v));
	for (int i = 0; i < runs; i++) {
		char name[32];
		snprintf(name, sizeof(name), "%s-%d", restore, i);
		v[i] = one(name);
	}
	double m = median(v, runs);
	*lo = v[0];
	*hi = v[runs - 1];
	free(v);
	return m;
}

struct slot {
	char name[32];
	double t;
};

static void *thread_main(void *p)
{
	struct slot *s = p;
	s->t = one(s->name);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		image = argv[1];
	int runs = argc > 2 ? atoi(argv[2]) : 10;
	snprintf(work, sizeof(work), "%s/bench-qemu-%d", argc > 3 ? argv[3] : "/tmp",
		 (int)getpid());
	if (runs < 1)
		runs = 1;
	struct engi_error e;
	engi_error_init(&e);
	qemu = backend_lookup("qemu", &e);
	if (!qemu || fs_mkdir_p(work, 0700, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	printf("image %s, %d runs each, seconds from start to a guest agent that answers\n\n",
	       image, runs);
	printf("%-28s %8s %8s %8s %8s\n", "method", "median", "min", "max", "vs cold");
	static const char *const methods[] = {"cold", "incoming", "loadvm"};
	double cold = 0;
	for (int i = 0; i < 3; i++) {
		double lo, hi, m = method(methods[i], runs, &lo, &hi);
		if (i == 0)
			cold = m;
		printf("%-28s %8.3f %8.3f %8.3f %7.1fx\n", methods[i], m, lo, hi, cold / m);
	}
	setenv("ENGI_QEMU_RESTORE", "incoming", 1);
	printf("\nincoming restore, guests starting at once (median over guests and %d rounds):\n",
	       runs < 3 ? runs : 3);
	for (int n = 1; n <= 4; n *= 2) {
		int rounds = runs < 3 ? runs : 3;
		double *all = calloc((size_t)(n * rounds), sizeof(double));
		for (int r = 0; r < rounds; r++) {
			pthread_t th[4];
			struct slot sl[4];
			for (int k = 0; k < n; k++) {
				snprintf(sl[k].name, sizeof(sl[k].name), "par%d-%d-%d", n, r, k);
				pthread_create(&th[k], NULL, thread_main, &sl[k]);
			}
			for (int k = 0; k < n; k++) {
				pthread_join(th[k], NULL);
				all[r * n + k] = sl[k].t;
			}
		}
		printf("  %d guest%s %8.3f s\n", n, n > 1 ? "s" : " ", median(all, n * rounds));
		free(all);
	}
	rmdir(work);
	return 0;
}
