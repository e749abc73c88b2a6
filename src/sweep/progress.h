/*
 * progress.h - what a researcher watching a sweep sees, on rank 0: on a
 * terminal one live line (done/total, passed, running, ETA, cost so far),
 * otherwise a line every N episodes; and status.json beside the results,
 * rewritten atomically about once a second, for scripts and dashboards.
 */
#ifndef ENGI_PROGRESS_H
#define ENGI_PROGRESS_H

#include <stddef.h>

#include "matrix.h"
#include "record.h"
#include "scheduler.h"

struct progress {
	char *status_path;
	size_t total, before, done, passed, infra, interrupted;
	double cost_usd;
	double t0, last_status, last_line;
	int tty, quiet, every;
	size_t last_printed;
	size_t running, queued;
	size_t verifying; /* episodes over, verdicts pending */
	int draining;
};

void progress_init(struct progress *p, const char *status_path, size_t total, size_t before,
		   const struct cell *cells, int quiet, int every, const struct model *models);
void progress_result(struct progress *p, const struct record *r, const struct cell *cell);
void progress_interrupted(struct progress *p);
void progress_tick(struct progress *p, const struct sched_status *st);
void progress_finish(struct progress *p, const struct sched_status *st, size_t unrun);
void progress_release(struct progress *p);

#endif
