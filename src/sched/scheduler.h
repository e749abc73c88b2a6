/*
 * scheduler.h - hands cells to ranks. The only module that includes <mpi.h>.
 *
 * Rank 0 holds the queue (given longest-predicted first, re-sorted as
 * measured durations improve the predictions) and dispatches dynamically: a
 * worker rank asks for work, runs one cell, sends the result back and gets
 * the next. Where the prefetch hook allows, a busy worker also holds its next
 * cell, so the round trip through rank 0 is not between two episodes; a
 * drain sends such cells back unrun. Rank 0 also runs cells itself in `local_slots`
 * threads (when ranks are few, and always in the serial twin). A cell is
 * handed out only when the admit hook says its caps and tokens allow it.
 * Results are handed to the finished hook on rank 0, in the main thread.
 *
 * A cell is one or two work items: its episode and, when the run hook
 * says so, its verification, queued on rank 0 and handed to the next free
 * slot on any rank before any new episode. So a slot that ran an episode
 * (its VM, its model's caps) is free the moment the agent stops, and the
 * verifier's kernels run wherever a slot is free. A drain still hands out
 * queued verifications until the grace time is over; those left then come
 * back interrupted (the cell runs again on resume).
 *
 * The serial twin: a process not started by an MPI launcher never calls
 * MPI_Init and runs the same loop with local slots only, so a sweep runs the
 * same with or without mpirun.
 *
 * SIGTERM, SIGINT and SIGUSR1 start a drain: no new dispatch; running cells
 * finish, or are interrupted once grace_s has passed (should_abort turns
 * true), and interrupted cells come back as finished with payload NULL.
 *
 * Collective calls (every rank must make them, in the same order):
 * sched_init, sched_agree, sched_same_digest, sched_bcast_str, sched_sum,
 * sched_run, sched_finalize.
 */
#ifndef ENGI_SCHED_H
#define ENGI_SCHED_H

#include <stddef.h>

#include "engi/error.h"

struct sched_status {
	size_t total, queued, running, done, interrupted;
	size_t verifying; /* cells between their episode and its verdict */
	int draining;
	int ranks;
};

struct sched_hooks {
	void *ctx;
	/* Any rank, possibly in a thread of rank 0: run a work item of the
	 * cell, its episode (input NULL) or its verification (input: the
	 * payload its episode returned), and return 0 with the cell's final
	 * payload (engi_malloc), 1 (episodes only) with a payload still to be
	 * verified, which becomes the cell's verification item, or
	 * ENGI_EINTERRUPTED. Must be thread-safe. */
	int (*run)(void *ctx, size_t cell, int rank, const char *input, size_t input_len,
		   char **payload, size_t *len);
	/* Rank 0: 1 when the cell may start now. NULL: always. */
	int (*admit)(void *ctx, size_t cell);
	/* Rank 0: the cell went to rank. NULL: nothing to do. */
	void (*started)(void *ctx, size_t cell, int rank);
	/* Rank 0: the cell's run is over; its caps and tokens may go to the
	 * next cell. Called before the worker is fed again and before
	 * finished. Returns non-zero when finished must see the result before
	 * anything else is dispatched (a budget that the result may spend).
	 * NULL: nothing to do. */
	int (*released)(void *ctx, size_t cell);
	/* Rank 0: the cell's episode is over and its verification queued;
	 * payload is what run returned with 1 (what it spent may count
	 * before the verdict). NULL: nothing to do. */
	void (*pending)(void *ctx, size_t cell, const char *payload, size_t len);
	/* Rank 0: the cell came back (payload NULL: interrupted). Negative
	 * return: a failure of rank 0 (disk full): drain and fail the run. */
	int (*finished)(void *ctx, size_t cell, int rank, const char *payload, size_t len,
			struct engi_error *err);
	/* Rank 0: the results finished has had since the last call are to be
	 * made durable now (one journal fsync for all that arrived together:
	 * group commit). Called once per pass of the scheduler that delivered
	 * any, and before sched_run returns. Negative: as finished. NULL:
	 * finished made each durable itself. */
	int (*settle)(void *ctx, struct engi_error *err);
	/* Rank 0: the cell's priority (its predicted seconds, say), as results
	 * improve the predictions: the queue is sorted highest first before
	 * the first dispatch and again every few dozen results (ties keep
	 * their order). NULL: the order given stays. */
	double (*priority)(void *ctx, size_t cell);
	/* Rank 0: 1 when the cell may be sent to a busy worker ahead of time,
	 * to start the moment its current cell ends (no caps, tokens, budgets
	 * or deadline that a later start would change). NULL: never. */
	int (*prefetch)(void *ctx, size_t cell);
	/* Rank 0: about every 0.5 s and after each result. NULL: none. */
	void (*tick)(void *ctx, const struct sched_status *st);
	/* Rank 0: answers a governor message (sched_govern: len bytes of a
	 * fixed-layout struct the caller and the hook agree on) from any rank with
	 * a number (seconds to wait). Called under one lock, from the main
	 * thread or a slot thread. NULL: every answer is 0. */
	double (*govern)(void *ctx, const void *msg, size_t len);
};

#define SCHED_GOVERN_MSG_MAX 256

/*
 * Asks rank 0's govern hook, from the thread running a cell, and returns its
 * answer: on worker ranks (where cells run in the main thread) through a
 * message round trip, on rank 0 and in the serial twin by a direct call.
 * Outside sched_run, or when len is over SCHED_GOVERN_MSG_MAX, 0.
 * Not collective; blocks for the round trip only.
 */
double sched_govern(const void *msg, size_t len);

struct sched_opts {
	int local_slots; /* episodes rank 0 runs itself; -1: automatic */
	double grace_s;	 /* after a stop signal, before interrupting */
};

/* Starts MPI when launched by mpirun/srun (unless force_serial). */
int sched_init(int *argc, char ***argv, int force_serial, struct engi_error *err);
void sched_finalize(void);
int sched_rank(void);
int sched_size(void);
int sched_is_mpi(void);
/* Ranks on this node (1 alone). */
int sched_local_size(void);
/* 1 when every rank passes ok != 0. */
int sched_agree(int ok);
/* 1 when every rank holds the same digest string as rank 0. */
int sched_same_digest(const char *digest);
/* Copies rank 0's NUL-terminated string (at most n bytes) to every rank. */
void sched_bcast_str(char *buf, size_t n);
/* Sums a value over ranks onto every rank. */
double sched_sum(double v);

/* The MPI library's own version line (callable before sched_init). */
void sched_library_version(char *buf, size_t n);

void sched_install_signals(void);
int sched_stop_requested(void);
/* A stop was requested and its grace time is over. */
int sched_should_abort(void);
/* For tests: request a stop as a signal would. */
void sched_request_stop(void);

/* Dispatches order[0..n) (cell indices). Collective. */
int sched_run(const size_t *order, size_t n, const struct sched_hooks *h,
	      const struct sched_opts *o, struct sched_status *final, struct engi_error *err);

#endif
