/*
 * stats.h - the statistics behind every number the reports print: a seeded
 * random number generator, task-clustered percentile bootstrap intervals
 * (one arm, or several arms resampled together), paired comparisons
 * (bootstrap of the mean difference, sign-flip permutation test) and the
 * Holm adjustment for a family of tests.
 *
 * The unit of resampling is the task, never the episode: callers average the
 * trials of a task first (engi_task_means) and hand over one value per task,
 * because trials of one task are not independent draws. Everything is
 * deterministic: the same input and seed give the same bits on every run and
 * every machine (no threads, fixed summation order). All calls are pure
 * computation; they allocate scratch through engi/alloc.h and free it before
 * returning. Inputs must be finite where they are used, else ENGI_EINVALID.
 */
#ifndef ENGI_STATS_H
#define ENGI_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"

#define ENGI_STATS_SEED_DEFAULT	 20261130u
#define ENGI_STATS_DRAWS_DEFAULT 10000u
#define ENGI_STATS_LEVEL_DEFAULT 0.95
/* fewer tasks than this and an interval says more than the data can */
#define ENGI_STATS_MIN_TASKS_DEFAULT 5u
/* bounds the scratch memory a bootstrap may ask for */
#define ENGI_STATS_DRAWS_MAX 10000000u

/*
 * xoshiro256** (Blackman and Vigna), its state filled by splitmix64 from a
 * 64-bit seed. Not for cryptography.
 */
struct engi_rng {
	uint64_t s[4];
};

/* One step of splitmix64: advances *state, returns the mixed output. */
uint64_t engi_splitmix64(uint64_t *state);
void engi_rng_seed(struct engi_rng *rng, uint64_t seed);
uint64_t engi_rng_next(struct engi_rng *rng);
/* Uniform in [0, bound) without modulo bias (rejection below 2^64 mod
 * bound); bound 0 returns 0. */
uint64_t engi_rng_below(struct engi_rng *rng, uint64_t bound);
/* Uniform in [0, 1) with 53 random bits. */
double engi_rng_unit(struct engi_rng *rng);

/*
 * Why an interval was not computed. The first that applies wins, in this
 * order: no tasks, fewer than min_tasks, all values 0, all values 1, all
 * values equal. A flagged interval has lo = hi = NaN; its mean is still the
 * mean of the data (NaN when there are no tasks).
 */
enum engi_ci_flag {
	ENGI_CI_OK = 0,
	ENGI_CI_NO_TASKS,
	ENGI_CI_FEW_TASKS,
	ENGI_CI_ALL_ZERO,
	ENGI_CI_ALL_ONE,
	ENGI_CI_CONSTANT,
};

/* "ok", "no_tasks", "few_tasks", "all_zero", "all_one", "constant" */
const char *engi_ci_flag_name(int flag);

/*
 * How the interval is read off the draws. Percentile: the (1-level)/2 and
 * (1+level)/2 quantiles. BCa (Efron 1987): the quantiles at
 * Phi(z0 + (z0 + z) / (1 - a (z0 + z))) for z the normal quantiles of those
 * levels, z0 = Phi^-1((#{draws < estimate} + #{draws = estimate} / 2) / B,
 * ties counting half as in SciPy; clamped to [1/(2B), 1 - 1/(2B)] over the
 * B usable draws) and a the jackknife
 * acceleration sum(d^3) / (6 sum(d^2)^1.5), d = mean of the leave-one-task-
 * out means minus each of them (a = 0 when every d is 0); as SciPy's
 * stats.bootstrap(method='BCa').
 */
enum engi_interval {
	ENGI_INTERVAL_PERCENTILE = 0,
	ENGI_INTERVAL_BCA,
};

/* "percentile", "bca" */
const char *engi_interval_name(int interval);

struct engi_boot_opts {
	uint64_t seed;
	size_t draws;	  /* resamples, >= 1 and <= ENGI_STATS_DRAWS_MAX */
	double level;	  /* central coverage, in (0, 1) */
	size_t min_tasks; /* fewer tasks give ENGI_CI_FEW_TASKS, >= 1 */
	int interval;	  /* enum engi_interval, percentile by default */
};

/* The standard normal distribution function and its inverse (p in (0, 1);
 * relative error below 1e-13). */
double engi_normal_cdf(double x);
double engi_normal_quantile(double p);

/* The defaults above. */
void engi_boot_opts_init(struct engi_boot_opts *o);
/* ENGI_EINVALID naming the first option out of range. */
int engi_boot_opts_check(const struct engi_boot_opts *o, struct engi_error *err);

struct engi_ci {
	double mean;   /* mean of the task values: the point estimate */
	double lo, hi; /* percentile interval, NaN when flag != ENGI_CI_OK */
	size_t ntasks; /* tasks the arm has */
	size_t draws;  /* resamples the percentiles came from, 0 if flagged */
	int flag;      /* enum engi_ci_flag */
};

/*
 * Averages the values of each task: value[i] belongs to task task[i] (<
 * ntasks). mean[t] gets the mean of task t's values (NaN when it has none)
 * and count[t] (may be NULL) their number. Summation follows input order.
 */
int engi_task_means(const size_t *task, const double *value, size_t n, size_t ntasks, double *mean,
		    size_t *count, struct engi_error *err);

/*
 * Percentile of sorted data, linear interpolation between order statistics
 * (position q * (n - 1), Hyndman and Fan type 7, numpy's default). n >= 1.
 */
double engi_quantile_sorted(const double *sorted, size_t n, double q);

/*
 * Task-clustered percentile bootstrap of the mean of x[0..n-1] (one value
 * per task). Each draw takes n tasks with replacement (n calls of
 * engi_rng_below(n) on an rng seeded with o->seed) and averages them; the
 * interval is read off the draws as o->interval says. The
 * same as engi_boot_shared with one arm and every task present.
 */
int engi_boot_mean(const double *x, size_t n, const struct engi_boot_opts *o, struct engi_ci *out,
		   struct engi_error *err);

/*
 * Several arms (models, conditions) over one task list, resampled together:
 * x is narms rows of ntasks values (x[a * ntasks + t]); every draw picks one
 * multiset of task indices and all arms are averaged over that same multiset,
 * so arm-to-arm differences inside a draw are paired and coherent.
 *
 * Missing tasks: present[a * ntasks + t] nonzero says arm a has task t
 * (present NULL: every arm has every task; the values of absent tasks are
 * never read). The rule: an arm's value in a draw is the mean over the drawn
 * indices it has, each counted as often as it was drawn; a draw that picks
 * none of the arm's tasks is left out of that arm's percentiles (out->draws
 * says how many remained). An arm's mean and degeneracy flags use its own
 * tasks only. One arm's result never depends on other arms' values, only on
 * ntasks.
 *
 * out has narms entries. draws_out, when not NULL, receives narms rows of
 * o->draws statistics in draw order (NaN for a left-out draw), the material
 * for paired comparisons between arms.
 */
int engi_boot_shared(const double *x, const unsigned char *present, size_t narms, size_t ntasks,
		     const struct engi_boot_opts *o, struct engi_ci *out, double *draws_out,
		     struct engi_error *err);

/*
 * An interval from bootstrap draws made elsewhere, such as the differences
 * of two arms' engi_boot_shared draws (the same task multisets in every
 * draw, hence a paired bootstrap): the mean and the flag come from x[0..n-1]
 * as in engi_boot_mean, the percentiles from the draws that are not NaN.
 */
int engi_ci_from_draws(const double *x, size_t n, const double *draws, size_t ndraws,
		       const struct engi_boot_opts *o, struct engi_ci *out, struct engi_error *err);

/*
 * Paired bootstrap of mean(a - b) over n tasks that both arms have (callers
 * drop the others): engi_boot_mean on the differences. A degeneracy flag then
 * describes the differences (ENGI_CI_ALL_ZERO: no task differs).
 */
int engi_paired_boot(const double *a, const double *b, size_t n, const struct engi_boot_opts *o,
		     struct engi_ci *out, struct engi_error *err);

struct engi_signflip {
	double mean_diff; /* observed T = mean(a - b) */
	double p;	  /* two-sided, in (0, 1] */
	size_t n;
	size_t draws;
	size_t extreme; /* draws with |T*| >= |T| */
};

/*
 * Two-sided sign-flip permutation test of mean(a - b) = 0 over n >= 1 paired
 * tasks (b NULL: a holds the differences). Each draw flips the sign of every
 * difference with probability 1/2 (one rng bit per task, rng seeded with
 * seed); p = (1 + #{|T*| >= |T|}) / (1 + draws). |T*| counts as reaching |T|
 * within 1e-12 relative to sum |d| so that rounding does not break ties.
 */
int engi_signflip_test(const double *a, const double *b, size_t n, uint64_t seed, size_t draws,
		       struct engi_signflip *out, struct engi_error *err);

/*
 * Holm's step-down adjustment of n p-values (family-wise error): with the
 * p-values sorted ascending (ties keep input order), the k-th (from 0) gets
 * min(1, max over j <= k of (n - j) * p_(j)). adjusted may alias p.
 */
int engi_holm(const double *p, size_t n, double *adjusted, struct engi_error *err);

#endif
