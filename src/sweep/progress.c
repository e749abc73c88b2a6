#include "progress.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

void progress_init(struct progress *p, const char *status_path, size_t total, size_t before,
		   const struct cell *cells, int quiet, int every, const struct model *models)
{
	memset(p, 0, sizeof(*p));
	p->status_path = engi_strdup(status_path);
	p->total = total;
	p->before = before;
	p->t0 = clk_now_mono();
	p->tty = isatty(STDERR_FILENO);
	p->quiet = quiet;
	p->every = every > 0 ? every : 10;
	(void)cells;
	(void)models;
}

static double eta_s(const struct progress *p)
{
	double el = clk_now_mono() - p->t0;
	size_t left = p->total - p->before - p->done;
	if (p->done == 0 || left == 0)
		return left ? -1 : 0;
	return el / (double)p->done * (double)left;
}

static void fmt_hms(char *buf, size_t n, double s)
{
	if (s < 0) {
		snprintf(buf, n, "--:--:--");
		return;
	}
	long t = (long)(s + 0.5);
	snprintf(buf, n, "%02ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
}

static void write_status(struct progress *p, int final)
{
	if (!p->status_path)
		return;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	char buf[1024];
	int n = snprintf(buf, sizeof(buf),
			 "{\"total\":%zu,\"done_before\":%zu,\"done\":%zu,\"passed\":%zu,"
			 "\"running\":%zu,\"verifying\":%zu,\"queued\":%zu,\"interrupted\":%zu,"
			 "\"infra_failed\":%zu,"
			 "\"cost_usd\":%.6f,\"elapsed_s\":%.3f,\"eta_s\":%.1f,\"draining\":%s,"
			 "\"finished\":%s,\"rank0_peak_rss_mb\":%.1f,\"updated_at\":%.3f}\n",
			 p->total, p->before, p->done, p->passed, p->running, p->verifying,
			 p->queued, p->interrupted, p->infra, p->cost_usd, clk_now_mono() - p->t0,
			 eta_s(p), p->draining ? "true" : "false", final ? "true" : "false",
			 ru.ru_maxrss / 1024.0, clk_now_wall());
	fs_write_file_atomic(p->status_path, buf, (size_t)n, NULL);
	p->last_status = clk_now_mono();
}

static void print_line(struct progress *p, int newline)
{
	if (p->quiet)
		return;
	char eta[16];
	fmt_hms(eta, sizeof(eta), eta_s(p));
	char verifying[40] = "";
	if (p->verifying && p->tty) /* the live line; logs stay one shape */
		snprintf(verifying, sizeof(verifying), "  verifying %zu", p->verifying);
	fprintf(stderr, "%s[%zu/%zu] passed %zu  running %zu%s  ETA %s  cost $%.2f%s%s",
		p->tty && !newline ? "\r" : "", p->before + p->done, p->total, p->passed,
		p->running, verifying, eta, p->cost_usd, p->draining ? "  (draining)" : "",
		p->tty && !newline ? "\033[K" : "\n");
	fflush(stderr);
	p->last_line = clk_now_mono();
}

void progress_result(struct progress *p, const struct record *r, const struct cell *cell)
{
	(void)cell;
	p->done++;
	p->passed += r->success != 0;
	p->infra += outcome_is_infra(r->outcome);
	p->cost_usd += r->cost_usd;
	if (!p->tty && !p->quiet && (p->done % (size_t)p->every == 0))
		print_line(p, 1);
}

void progress_interrupted(struct progress *p)
{
	p->interrupted++;
}

void progress_tick(struct progress *p, const struct sched_status *st)
{
	p->running = st->running;
	p->verifying = st->verifying;
	p->queued = st->queued;
	p->draining = st->draining;
	double now = clk_now_mono();
	if (now - p->last_status >= 1.0)
		write_status(p, 0);
	if (p->tty && now - p->last_line >= 0.25)
		print_line(p, 0);
}

void progress_finish(struct progress *p, const struct sched_status *st, size_t unrun)
{
	p->running = 0;
	p->verifying = 0;
	p->queued = st->queued;
	p->draining = st->draining;
	write_status(p, 1);
	if (p->quiet)
		return;
	if (p->tty)
		print_line(p, 0);
	fprintf(stderr,
		"%sengisweep: %zu episodes this run (%zu passed, %zu infrastructure failures), "
		"%zu cells unrun%s, %.1f s\n",
		p->tty ? "\n" : "", p->done, p->passed, p->infra, unrun,
		unrun ? " (continue with --resume)" : "", clk_now_mono() - p->t0);
}

void progress_release(struct progress *p)
{
	engi_free(p->status_path);
	p->status_path = NULL;
}
