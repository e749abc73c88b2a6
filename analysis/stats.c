#include "engi/stats.h"

#include "engi/alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t engi_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void engi_rng_seed(struct engi_rng *rng, uint64_t seed)
{
	uint64_t sm = seed;
	for (int i = 0; i < 4; i++)
		rng->s[i] = engi_splitmix64(&sm);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t engi_rng_next(struct engi_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t engi_rng_below(struct engi_rng *rng, uint64_t bound)
{
	if (bound == 0)
		return 0;
	/* 2^64 mod bound: outputs below it make small residues likelier */
	uint64_t threshold = (0 - bound) % bound;
	for (;;) {
		uint64_t r = engi_rng_next(rng);
		if (r >= threshold)
			return r % bound;
	}
}

double engi_rng_unit(struct engi_rng *rng)
{
	return (double)(engi_rng_next(rng) >> 11) * 0x1.0p-53;
}

const char *engi_ci_flag_name(int flag)
{
	switch (flag) {
	case ENGI_CI_OK:
		return "ok";
	case ENGI_CI_NO_TASKS:
		return "no_tasks";
	case ENGI_CI_FEW_TASKS:
		return "few_tasks";
	case ENGI_CI_ALL_ZERO:
		return "all_zero";
	case ENGI_CI_ALL_ONE:
		return "all_one";
	case ENGI_CI_CONSTANT:
		return "constant";
	default:
		return "unknown";
	}
}

const char *engi_interval_name(int interval)
{
	switch (interval) {
	case ENGI_INTERVAL_PERCENTILE:
		return "percentile";
	case ENGI_INTERVAL_BCA:
		return "bca";
	default:
		return "unknown";
	}
}

void engi_boot_opts_init(struct engi_boot_opts *o)
{
	o->seed = ENGI_STATS_SEED_DEFAULT;
	o->draws = ENGI_STATS_DRAWS_DEFAULT;
	o->level = ENGI_STATS_LEVEL_DEFAULT;
	o->min_tasks = ENGI_STATS_MIN_TASKS_DEFAULT;
	o->interval = ENGI_INTERVAL_PERCENTILE;
}

double engi_normal_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Acklam's rational approximation, then one Halley step on erfc. */
double engi_normal_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00,  2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	if (!(p > 0.0 && p < 1.0))
		return p == 0.0 ? -INFINITY : p == 1.0 ? INFINITY : NAN;
	double x, q, r;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - 0.02425) {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	double e = engi_normal_cdf(x) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

static int check_draws(size_t draws, struct engi_error *err)
{
	if (draws < 1 || draws > ENGI_STATS_DRAWS_MAX)
		RAISE(err, ENGI_EINVALID, "number of draws %zu is outside 1..%u", draws,
		      ENGI_STATS_DRAWS_MAX);
	return 0;
}

int engi_boot_opts_check(const struct engi_boot_opts *o, struct engi_error *err)
{
	TRY(check_draws(o->draws, err));
	if (!(o->level > 0.0 && o->level < 1.0))
		RAISE(err, ENGI_EINVALID, "confidence level %g is outside (0, 1)", o->level);
	if (o->min_tasks < 1)
		RAISE(err, ENGI_EINVALID, "minimum number of tasks must be >= 1");
	if (o->interval != ENGI_INTERVAL_PERCENTILE && o->interval != ENGI_INTERVAL_BCA)
		RAISE(err, ENGI_EINVALID, "interval method %d is unknown", o->interval);
	return 0;
}

int engi_task_means(const size_t *task, const double *value, size_t n, size_t ntasks, double *mean,
		    size_t *count, struct engi_error *err)
{
	size_t *cnt = count;
	if (!cnt) {
		cnt = engi_reallocarray(NULL, ntasks ? ntasks : 1, sizeof *cnt);
		if (!cnt)
			RAISE(err, ENGI_ENOMEM, "out of memory averaging %zu tasks", ntasks);
	}
	for (size_t t = 0; t < ntasks; t++) {
		mean[t] = 0.0;
		cnt[t] = 0;
	}
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (task[i] >= ntasks) {
			rc = engi_raise(err, ENGI_EINVALID, "value %zu names task %zu of only %zu",
					i, task[i], ntasks);
			goto out;
		}
		if (!isfinite(value[i])) {
			rc = engi_raise(err, ENGI_EINVALID, "value %zu (task %zu) is not finite", i,
					task[i]);
			goto out;
		}
		mean[task[i]] += value[i];
		cnt[task[i]]++;
	}
	for (size_t t = 0; t < ntasks; t++)
		mean[t] = cnt[t] ? mean[t] / (double)cnt[t] : NAN;
out:
	if (cnt != count)
		engi_free(cnt);
	return rc;
}

double engi_quantile_sorted(const double *sorted, size_t n, double q)
{
	if (n == 0)
		return NAN;
	if (q <= 0.0)
		return sorted[0];
	if (q >= 1.0)
		return sorted[n - 1];
	double h = q * (double)(n - 1);
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	double frac = h - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Mean, count and flag of one arm's present values. */
static void classify(const double *x, const unsigned char *present, size_t ntasks, size_t min_tasks,
		     struct engi_ci *ci)
{
	size_t n = 0;
	double sum = 0.0, first = 0.0;
	int all_equal = 1;
	for (size_t t = 0; t < ntasks; t++) {
		if (present && !present[t])
			continue;
		if (n == 0)
			first = x[t];
		else if (x[t] != first)
			all_equal = 0;
		sum += x[t];
		n++;
	}
	ci->ntasks = n;
	ci->mean = n ? sum / (double)n : NAN;
	ci->lo = ci->hi = NAN;
	ci->draws = 0;
	if (n == 0)
		ci->flag = ENGI_CI_NO_TASKS;
	else if (n < min_tasks)
		ci->flag = ENGI_CI_FEW_TASKS;
	else if (all_equal && first == 0.0)
		ci->flag = ENGI_CI_ALL_ZERO;
	else if (all_equal && first == 1.0)
		ci->flag = ENGI_CI_ALL_ONE;
	else if (all_equal)
		ci->flag = ENGI_CI_CONSTANT;
	else
		ci->flag = ENGI_CI_OK;
}

/*
 * The interval from m sorted usable draws of the statistic whose estimate
 * is ci->mean over the values x[t] with present[t] (present NULL: all).
 */
static void read_interval(const double *sorted, size_t m, const double *x,
			  const unsigned char *present, size_t ntasks,
			  const struct engi_boot_opts *o, struct engi_ci *ci)
{
	double tail = (1.0 - o->level) / 2.0, qlo = tail, qhi = 1.0 - tail;
	if (o->interval == ENGI_INTERVAL_BCA) {
		/* ties count half (SciPy's percentile of score, kind mean) */
		size_t below = 0, equal = 0;
		while (below < m && sorted[below] < ci->mean)
			below++;
		while (below + equal < m && sorted[below + equal] == ci->mean)
			equal++;
		double share = ((double)below + 0.5 * (double)equal) / (double)m;
		double floor_share = 0.5 / (double)m;
		if (share < floor_share)
			share = floor_share;
		if (share > 1.0 - floor_share)
			share = 1.0 - floor_share;
		double z0 = engi_normal_quantile(share);
		/* jackknife: leave-one-task-out means */
		double sum = 0.0, n = (double)ci->ntasks;
		for (size_t t = 0; t < ntasks; t++)
			if (!present || present[t])
				sum += x[t];
		double accel = 0.0;
		if (ci->ntasks > 1) {
			double jbar = 0.0;
			for (size_t t = 0; t < ntasks; t++)
				if (!present || present[t])
					jbar += (sum - x[t]) / (n - 1.0);
			jbar /= n;
			double s2 = 0.0, s3 = 0.0;
			for (size_t t = 0; t < ntasks; t++) {
				if (present && !present[t])
					continue;
				double dd = jbar - (sum - x[t]) / (n - 1.0);
				s2 += dd * dd;
				s3 += dd * dd * dd;
			}
			if (s2 > 0.0)
				accel = s3 / (6.0 * pow(s2, 1.5));
		}
		double zl = z0 + engi_normal_quantile(tail);
		double zh = z0 + engi_normal_quantile(1.0 - tail);
		qlo = engi_normal_cdf(z0 + zl / (1.0 - accel * zl));
		qhi = engi_normal_cdf(z0 + zh / (1.0 - accel * zh));
	}
	ci->lo = engi_quantile_sorted(sorted, m, qlo);
	ci->hi = engi_quantile_sorted(sorted, m, qhi);
}

int engi_boot_shared(const double *x, const unsigned char *present, size_t narms, size_t ntasks,
		     const struct engi_boot_opts *o, struct engi_ci *out, double *draws_out,
		     struct engi_error *err)
{
	TRY(engi_boot_opts_check(o, err));
	if (narms && ntasks > SIZE_MAX / narms)
		RAISE(err, ENGI_EINVALID, "bootstrap of %zu arms x %zu tasks is too large", narms,
		      ntasks);
	if (narms && o->draws > SIZE_MAX / sizeof(double) / narms)
		RAISE(err, ENGI_EINVALID, "bootstrap of %zu arms x %zu draws is too large", narms,
		      o->draws);
	for (size_t a = 0; a < narms; a++) {
		for (size_t t = 0; t < ntasks; t++) {
			size_t i = a * ntasks + t;
			if ((!present || present[i]) && !isfinite(x[i]))
				RAISE(err, ENGI_EINVALID,
				      "bootstrap value of arm %zu, task %zu is "
				      "not finite",
				      a, t);
		}
	}

	int resample = draws_out != NULL;
	for (size_t a = 0; a < narms; a++) {
		classify(x + a * ntasks, present ? present + a * ntasks : NULL, ntasks,
			 o->min_tasks, &out[a]);
		if (out[a].flag == ENGI_CI_OK)
			resample = 1;
	}
	if (ntasks == 0 || narms == 0)
		resample = 0;
	if (!resample) {
		if (draws_out)
			for (size_t i = 0; i < narms * o->draws; i++)
				draws_out[i] = NAN;
		return 0;
	}

	size_t *idx = engi_reallocarray(NULL, ntasks, sizeof *idx);
	double *stat = engi_reallocarray(NULL, narms * o->draws, sizeof *stat);
	double *sorted = engi_reallocarray(NULL, o->draws, sizeof *sorted);
	if (!idx || !stat || !sorted) {
		engi_free(idx);
		engi_free(stat);
		engi_free(sorted);
		RAISE(err, ENGI_ENOMEM, "out of memory for a bootstrap of %zu arms x %zu draws",
		      narms, o->draws);
	}

	struct engi_rng rng;
	engi_rng_seed(&rng, o->seed);
	for (size_t k = 0; k < o->draws; k++) {
		for (size_t i = 0; i < ntasks; i++)
			idx[i] = (size_t)engi_rng_below(&rng, ntasks);
		for (size_t a = 0; a < narms; a++) {
			const double *row = x + a * ntasks;
			const unsigned char *has = present ? present + a * ntasks : NULL;
			double sum = 0.0;
			size_t cnt = 0;
			for (size_t i = 0; i < ntasks; i++) {
				if (has && !has[idx[i]])
					continue;
				sum += row[idx[i]];
				cnt++;
			}
			stat[a * o->draws + k] = cnt ? sum / (double)cnt : NAN;
		}
	}

	for (size_t a = 0; a < narms; a++) {
		const double *s = stat + a * o->draws;
		if (draws_out)
			memcpy(draws_out + a * o->draws, s, o->draws * sizeof *s);
		if (out[a].flag != ENGI_CI_OK)
			continue;
		size_t m = 0;
		for (size_t k = 0; k < o->draws; k++)
			if (!isnan(s[k]))
				sorted[m++] = s[k];
		out[a].draws = m;
		if (m == 0)
			continue;
		qsort(sorted, m, sizeof *sorted, cmp_double);
		read_interval(sorted, m, x + a * ntasks, present ? present + a * ntasks : NULL,
			      ntasks, o, &out[a]);
	}
	engi_free(idx);
	engi_free(stat);
	engi_free(sorted);
	return 0;
}

int engi_ci_from_draws(const double *x, size_t n, const double *draws, size_t ndraws,
		       const struct engi_boot_opts *o, struct engi_ci *out, struct engi_error *err)
{
	TRY(engi_boot_opts_check(o, err));
	for (size_t t = 0; t < n; t++)
		if (!isfinite(x[t]))
			RAISE(err, ENGI_EINVALID, "value of task %zu is not finite", t);
	classify(x, NULL, n, o->min_tasks, out);
	if (out->flag != ENGI_CI_OK)
		return 0;
	double *sorted = engi_reallocarray(NULL, ndraws ? ndraws : 1, sizeof *sorted);
	if (!sorted)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu draws", ndraws);
	size_t m = 0;
	for (size_t k = 0; k < ndraws; k++)
		if (!isnan(draws[k]))
			sorted[m++] = draws[k];
	out->draws = m;
	if (m) {
		qsort(sorted, m, sizeof *sorted, cmp_double);
		read_interval(sorted, m, x, NULL, n, o, out);
	}
	engi_free(sorted);
	return 0;
}

int engi_boot_mean(const double *x, size_t n, const struct engi_boot_opts *o, struct engi_ci *out,
		   struct engi_error *err)
{
	return engi_boot_shared(x, NULL, 1, n, o, out, NULL, err);
}

static int differences(const double *a, const double *b, size_t n, double **out,
		       struct engi_error *err)
{
	double *d = engi_reallocarray(NULL, n ? n : 1, sizeof *d);
	if (!d)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu paired values", n);
	for (size_t i = 0; i < n; i++) {
		d[i] = b ? a[i] - b[i] : a[i];
		if (!isfinite(d[i])) {
			engi_free(d);
			RAISE(err, ENGI_EINVALID, "paired difference of task %zu is not finite", i);
		}
	}
	*out = d;
	return 0;
}

int engi_paired_boot(const double *a, const double *b, size_t n, const struct engi_boot_opts *o,
		     struct engi_ci *out, struct engi_error *err)
{
	double *d;
	TRY(differences(a, b, n, &d, err));
	int rc = engi_boot_mean(d, n, o, out, err);
	engi_free(d);
	return rc;
}

int engi_signflip_test(const double *a, const double *b, size_t n, uint64_t seed, size_t draws,
		       struct engi_signflip *out, struct engi_error *err)
{
	TRY(check_draws(draws, err));
	if (n == 0)
		RAISE(err, ENGI_EINVALID, "sign-flip test needs at least one pair");
	double *d;
	TRY(differences(a, b, n, &d, err));

	double sum = 0.0, scale = 0.0;
	for (size_t i = 0; i < n; i++) {
		sum += d[i];
		scale += fabs(d[i]);
	}
	double reach = fabs(sum) - 1e-12 * scale;

	struct engi_rng rng;
	engi_rng_seed(&rng, seed);
	uint64_t bits = 0;
	int nbits = 0;
	size_t extreme = 0;
	/* d * -1 is exactly -d: the same sums as a branch, without the branch */
	static const double sign[2] = {1.0, -1.0};
	for (size_t k = 0; k < draws; k++) {
		double s = 0.0;
		for (size_t i = 0; i < n; i++) {
			if (nbits == 0) {
				bits = engi_rng_next(&rng);
				nbits = 64;
			}
			s += sign[bits & 1] * d[i];
			bits >>= 1;
			nbits--;
		}
		if (fabs(s) >= reach)
			extreme++;
	}
	engi_free(d);

	out->mean_diff = sum / (double)n;
	out->n = n;
	out->draws = draws;
	out->extreme = extreme;
	out->p = (1.0 + (double)extreme) / (1.0 + (double)draws);
	return 0;
}

struct p_rank {
	double p;
	size_t at;
};

static int cmp_p_rank(const void *a, const void *b)
{
	const struct p_rank *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int engi_holm(const double *p, size_t n, double *adjusted, struct engi_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (!(p[i] >= 0.0 && p[i] <= 1.0))
			RAISE(err, ENGI_EINVALID, "p-value %zu (%g) is outside [0, 1]", i, p[i]);
	if (n == 0)
		return 0;
	struct p_rank *r = engi_reallocarray(NULL, n, sizeof *r);
	if (!r)
		RAISE(err, ENGI_ENOMEM, "out of memory adjusting %zu p-values", n);
	for (size_t i = 0; i < n; i++) {
		r[i].p = p[i];
		r[i].at = i;
	}
	qsort(r, n, sizeof *r, cmp_p_rank);
	double running = 0.0;
	for (size_t k = 0; k < n; k++) {
		double v = (double)(n - k) * r[k].p;
		if (v > 1.0)
			v = 1.0;
		if (v > running)
			running = v;
		adjusted[r[k].at] = running;
	}
	engi_free(r);
	return 0;
}
