/*
 * The statistics of analysis/: the generator against its published vectors,
 * the bootstrap against a brute-force reference built here from the same
 * generator, shared resampling, the sign-flip test and Holm's adjustment.
 */
#include "check.h"

#include "engi/alloc.h"
#include "engi/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Field by field (padding is not compared), NaN equal to NaN. */
static int same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static int same_ci(const struct engi_ci *a, const struct engi_ci *b)
{
	return same_double(a->mean, b->mean) && same_double(a->lo, b->lo) &&
	       same_double(a->hi, b->hi) && a->ntasks == b->ntasks && a->draws == b->draws &&
	       a->flag == b->flag;
}

static void test_rng_vectors(void)
{
	/* splitmix64 from state 0 (Vigna's reference code) */
	uint64_t sm = 0;
	CHECK(engi_splitmix64(&sm) == 0xe220a8397b1dcdafu);
	CHECK(engi_splitmix64(&sm) == 0x6e789e6aa1b965f4u);

	/* xoshiro256** from state {1, 2, 3, 4} */
	struct engi_rng r = {{1, 2, 3, 4}};
	CHECK(engi_rng_next(&r) == 11520u);
	CHECK(engi_rng_next(&r) == 0u);
	CHECK(engi_rng_next(&r) == 1509978240u);
	CHECK(engi_rng_next(&r) == 1215971899390074240u);

	struct engi_rng a, b;
	engi_rng_seed(&a, 42);
	engi_rng_seed(&b, 42);
	int same = 1;
	for (int i = 0; i < 100; i++)
		same &= engi_rng_next(&a) == engi_rng_next(&b);
	CHECK(same);
}

static void test_rng_bounded(void)
{
	struct engi_rng r;
	engi_rng_seed(&r, 7);
	size_t hist[7] = {0};
	int in_range = 1;
	for (int i = 0; i < 70000; i++) {
		uint64_t v = engi_rng_below(&r, 7);
		in_range &= v < 7;
		if (v < 7)
			hist[v]++;
	}
	CHECK(in_range);
	for (int i = 0; i < 7; i++)
		CHECK(hist[i] > 9500 && hist[i] < 10500);
	CHECK(engi_rng_below(&r, 1) == 0);
	CHECK(engi_rng_below(&r, 0) == 0);
	/* near 2^64 most outputs are rejected; it must still terminate */
	uint64_t big = UINT64_MAX / 2 + 2;
	CHECK(engi_rng_below(&r, big) < big);
	double u = engi_rng_unit(&r);
	CHECK(u >= 0.0 && u < 1.0);
}

static void test_task_means(void)
{
	size_t task[] = {0, 1, 0, 2, 1};
	double v[] = {1.0, 0.25, 0.0, 0.5, 0.75};
	double mean[4];
	size_t count[4];
	CHECK_INT(engi_task_means(task, v, 5, 4, mean, count, NULL), 0);
	CHECK_NEAR(mean[0], 0.5, 0);
	CHECK_NEAR(mean[1], 0.5, 0);
	CHECK_NEAR(mean[2], 0.5, 0);
	CHECK(isnan(mean[3]));
	CHECK_INT(count[0], 2);
	CHECK_INT(count[3], 0);
	CHECK_INT(engi_task_means(task, v, 5, 4, mean, NULL, NULL), 0);

	struct engi_error err;
	engi_error_init(&err);
	size_t bad[] = {5};
	CHECK_INT(engi_task_means(bad, v, 1, 4, mean, count, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "value 0 names task 5 of only 4");
}

static void test_degenerate(void)
{
	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	CHECK_INT(o.draws, 10000);
	CHECK_NEAR(o.level, 0.95, 0);
	struct engi_ci ci;

	double c[10];
	for (int i = 0; i < 10; i++)
		c[i] = 0.7;
	CHECK_INT(engi_boot_mean(c, 10, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_CONSTANT);
	CHECK_NEAR(ci.mean, 0.7, 1e-15);
	CHECK(isnan(ci.lo) && isnan(ci.hi));
	CHECK_INT(ci.draws, 0);
	CHECK_STR(engi_ci_flag_name(ci.flag), "constant");

	for (int i = 0; i < 10; i++)
		c[i] = 0.0;
	CHECK_INT(engi_boot_mean(c, 10, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_ALL_ZERO);
	for (int i = 0; i < 10; i++)
		c[i] = 1.0;
	CHECK_INT(engi_boot_mean(c, 10, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_ALL_ONE);
	CHECK_NEAR(ci.mean, 1.0, 0);

	double few[] = {0.1, 0.9, 0.5, 0.2};
	CHECK_INT(engi_boot_mean(few, 4, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_FEW_TASKS);
	CHECK_INT(ci.ntasks, 4);
	CHECK_NEAR(ci.mean, 0.425, 1e-15);
	CHECK(isnan(ci.lo));

	CHECK_INT(engi_boot_mean(NULL, 0, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_NO_TASKS);
	CHECK(isnan(ci.mean));
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Type-7 quantile written out independently of the library. */
static double ref_quantile(const double *s, size_t n, double q)
{
	double h = (n - 1) * q;
	size_t i = (size_t)h;
	if (i + 1 >= n)
		return s[n - 1];
	return s[i] + (h - (double)i) * (s[i + 1] - s[i]);
}

/* The bootstrap as the header describes it, one loop, no sharing. */
static void ref_boot(const double *x, const unsigned char *has, size_t n, uint64_t seed,
		     size_t draws, double level, double *lo, double *hi, size_t *used)
{
	double *st = malloc(draws * sizeof(*st));
	struct engi_rng r;
	engi_rng_seed(&r, seed);
	size_t m = 0;
	for (size_t k = 0; k < draws; k++) {
		double sum = 0;
		size_t cnt = 0;
		for (size_t i = 0; i < n; i++) {
			size_t t = (size_t)engi_rng_below(&r, n);
			if (has && !has[t])
				continue;
			sum += x[t];
			cnt++;
		}
		if (cnt)
			st[m++] = sum / (double)cnt;
	}
	qsort(st, m, sizeof(*st), cmp_d);
	*lo = ref_quantile(st, m, (1 - level) / 2);
	*hi = ref_quantile(st, m, 1 - (1 - level) / 2);
	*used = m;
	free(st);
}

static void test_two_valued(void)
{
	double x[20];
	for (int i = 0; i < 20; i++)
		x[i] = i % 3 == 0 ? 1.0 : 0.0; /* 7 ones, 13 zeros */
	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	struct engi_ci ci;
	CHECK_INT(engi_boot_mean(x, 20, &o, &ci, NULL), 0);
	CHECK_INT(ci.flag, ENGI_CI_OK);
	CHECK_NEAR(ci.mean, 0.35, 1e-15);
	CHECK_INT(ci.ntasks, 20);
	CHECK_INT(ci.draws, 10000);
	CHECK(ci.lo < 0.35 && 0.35 < ci.hi);
	CHECK(ci.lo > 0.05 && ci.hi < 0.7);

	double lo, hi;
	size_t used;
	ref_boot(x, NULL, 20, o.seed, o.draws, o.level, &lo, &hi, &used);
	CHECK_NEAR(ci.lo, lo, 0);
	CHECK_NEAR(ci.hi, hi, 0);
	CHECK_INT(used, 10000);

	/* same seed: same bits; another seed: another interval */
	struct engi_ci again, other;
	CHECK_INT(engi_boot_mean(x, 20, &o, &again, NULL), 0);
	CHECK(same_ci(&again, &ci));
	/* the draws of another seed differ; with values on a 0.05 grid the
	 * percentiles themselves may well coincide */
	double *d1 = malloc(o.draws * sizeof(*d1));
	double *d2 = malloc(o.draws * sizeof(*d2));
	CHECK_INT(engi_boot_shared(x, NULL, 1, 20, &o, &again, d1, NULL), 0);
	o.seed = 1;
	CHECK_INT(engi_boot_shared(x, NULL, 1, 20, &o, &other, d2, NULL), 0);
	size_t differ = 0;
	for (size_t k = 0; k < o.draws; k++)
		differ += d1[k] != d2[k];
	CHECK(differ > o.draws / 2);
	free(d1);
	free(d2);
	ref_boot(x, NULL, 20, 1, o.draws, o.level, &lo, &hi, &used);
	CHECK_NEAR(other.lo, lo, 0);
	CHECK_NEAR(other.hi, hi, 0);

	/* a 90 % interval sits inside the 95 % one */
	o.seed = ENGI_STATS_SEED_DEFAULT;
	o.level = 0.90;
	struct engi_ci narrow;
	CHECK_INT(engi_boot_mean(x, 20, &o, &narrow, NULL), 0);
	CHECK(narrow.lo >= ci.lo && narrow.hi <= ci.hi);
}

static void test_shared(void)
{
	enum { N = 12, D = 2000 };
	double x[4 * N];
	unsigned char has[4 * N];
	struct engi_rng r;
	engi_rng_seed(&r, 99);
	for (int t = 0; t < N; t++) {
		double a = engi_rng_unit(&r);
		x[0 * N + t] = a;
		x[1 * N + t] = 1.0 - a; /* mirror of arm 0 */
		x[2 * N + t] = a;	/* copy of arm 0 */
		x[3 * N + t] = a;	/* arm 0 with two tasks missing */
	}
	for (int i = 0; i < 4 * N; i++)
		has[i] = 1;
	has[3 * N + 2] = has[3 * N + 7] = 0;
	x[3 * N + 2] = NAN; /* absent values are never read */

	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	o.draws = D;
	struct engi_ci ci[4];
	double *draws = malloc(4 * D * sizeof(*draws));
	CHECK_INT(engi_boot_shared(x, has, 4, N, &o, ci, draws, NULL), 0);

	/* every draw used one task multiset for all arms */
	int mirrored = 1, copied = 1;
	for (int k = 0; k < D; k++) {
		mirrored &= fabs(draws[D + k] - (1.0 - draws[k])) < 1e-12;
		copied &= draws[2 * D + k] == draws[k];
	}
	CHECK(mirrored);
	CHECK(copied);
	CHECK_NEAR(ci[1].lo, 1.0 - ci[0].hi, 1e-12);
	CHECK_NEAR(ci[1].hi, 1.0 - ci[0].lo, 1e-12);
	CHECK(same_ci(&ci[2], &ci[0]));

	/* arm 0 alone gives the same numbers as inside the group */
	struct engi_ci alone;
	CHECK_INT(engi_boot_mean(x, N, &o, &alone, NULL), 0);
	CHECK(same_ci(&alone, &ci[0]));

	/* the masked arm follows the documented rule */
	CHECK_INT(ci[3].ntasks, N - 2);
	double lo, hi;
	size_t used;
	ref_boot(x + 3 * N, has + 3 * N, N, o.seed, D, o.level, &lo, &hi, &used);
	CHECK_NEAR(ci[3].lo, lo, 0);
	CHECK_NEAR(ci[3].hi, hi, 0);
	CHECK_INT(ci[3].draws, used);
	double mean = 0;
	for (int t = 0; t < N; t++)
		if (has[3 * N + t])
			mean += x[3 * N + t];
	CHECK_NEAR(ci[3].mean, mean / (N - 2), 1e-15);

	/* an arm with two of twelve tasks: draws missing both are left out */
	unsigned char two[N] = {0};
	two[5] = two[6] = 1;
	struct engi_boot_opts o2 = o;
	o2.min_tasks = 2;
	struct engi_ci c2;
	CHECK_INT(engi_boot_shared(x, two, 1, N, &o2, &c2, draws, NULL), 0);
	CHECK_INT(c2.flag, ENGI_CI_OK);
	CHECK(c2.draws < D && c2.draws > D / 2);
	size_t nan_draws = 0;
	for (int k = 0; k < D; k++)
		nan_draws += isnan(draws[k]);
	CHECK_INT(nan_draws, D - c2.draws);
	CHECK(c2.lo >= fmin(x[5], x[6]) && c2.hi <= fmax(x[5], x[6]));
	ref_boot(x, two, N, o.seed, D, o.level, &lo, &hi, &used);
	CHECK_NEAR(c2.lo, lo, 0);
	CHECK_NEAR(c2.hi, hi, 0);
	free(draws);
}

static void test_paired(void)
{
	enum { N = 20 };
	double a[N], b[N], d[N];
	struct engi_rng r;
	engi_rng_seed(&r, 5);
	for (int i = 0; i < N; i++) {
		b[i] = engi_rng_unit(&r);
		a[i] = b[i] + 0.3 + 0.1 * (engi_rng_unit(&r) - 0.5);
		d[i] = a[i] - b[i];
	}
	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	struct engi_ci pc, dc;
	CHECK_INT(engi_paired_boot(a, b, N, &o, &pc, NULL), 0);
	CHECK_INT(engi_boot_mean(d, N, &o, &dc, NULL), 0);
	CHECK(same_ci(&pc, &dc));
	CHECK(pc.lo > 0.25 && pc.hi < 0.35);

	struct engi_signflip s, s2;
	CHECK_INT(engi_signflip_test(a, b, N, 11, 10000, &s, NULL), 0);
	CHECK(s.p < 0.001);
	CHECK_NEAR(s.p, (1.0 + (double)s.extreme) / 10001.0, 0);
	CHECK_NEAR(s.mean_diff, pc.mean, 1e-12);
	CHECK_INT(s.n, N);
	CHECK_INT(engi_signflip_test(d, NULL, N, 11, 10000, &s2, NULL), 0);
	CHECK(same_double(s.p, s2.p) && same_double(s.mean_diff, s2.mean_diff) &&
	      s.extreme == s2.extreme);

	/* a null: differences symmetric around zero */
	double z[N];
	for (int i = 0; i < N; i++)
		z[i] = engi_rng_unit(&r) - 0.5;
	double zm = 0;
	for (int i = 0; i < N; i++)
		zm += z[i];
	z[0] -= zm; /* exact mean 0 up to rounding */
	CHECK_INT(engi_signflip_test(z, NULL, N, 11, 10000, &s, NULL), 0);
	CHECK(s.p > 0.5);
	CHECK_INT(engi_signflip_test(z, NULL, N, 11, 10000, &s2, NULL), 0);
	CHECK(s.p == s2.p);
	CHECK_INT(engi_signflip_test(z, NULL, N, 12, 10000, &s2, NULL), 0);
	CHECK(s2.p > 0.5);

	/* a modest effect: significant, but not at the floor */
	double m[N];
	for (int i = 0; i < N; i++)
		m[i] = z[i] + 0.12;
	CHECK_INT(engi_signflip_test(m, NULL, N, 11, 10000, &s, NULL), 0);
	CHECK(s.p > 1.0 / 10001.0 && s.p < 0.2);

	/* no difference at all: every flip ties, p = 1 */
	double zero[5] = {0};
	CHECK_INT(engi_signflip_test(zero, NULL, 5, 1, 1000, &s, NULL), 0);
	CHECK_NEAR(s.p, 1.0, 0);

	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_signflip_test(a, b, 0, 1, 100, &s, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "sign-flip test needs at least one pair");
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* BCa's bias correction with draws equal to the estimate: SciPy counts
 * them half (percentile of score, kind 'mean'). Six tasks 0,0,0,1,1,1: a
 * third of the draws land on the mean 0.5 exactly, so counting only the
 * draws below would pull z0 to about -0.4 and both ends down; with ties
 * half z0 is about 0 (symmetric data: the acceleration is 0). The
 * reference is built here from the same generator. */
static void test_bca_ties(void)
{
	const double x[6] = {0, 0, 0, 1, 1, 1};
	const size_t n = 6, draws = 4000;
	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	o.draws = draws;
	o.min_tasks = 2;
	o.interval = ENGI_INTERVAL_BCA;
	struct engi_rng rng;
	engi_rng_seed(&rng, o.seed);
	double *d = engi_reallocarray(NULL, draws, sizeof(*d));
	for (size_t k = 0; k < draws; k++) {
		double sum = 0;
		for (size_t i = 0; i < n; i++)
			sum += x[engi_rng_below(&rng, n)];
		d[k] = sum / (double)n;
	}
	qsort(d, draws, sizeof(*d), cmp_dbl);
	size_t below = 0, equal = 0;
	for (size_t k = 0; k < draws; k++) {
		below += d[k] < 0.5;
		equal += d[k] == 0.5;
	}
	CHECK(equal > draws / 4);
	double z0 = engi_normal_quantile(((double)below + 0.5 * (double)equal) / (double)draws);
	double z0_strict = engi_normal_quantile((double)below / (double)draws);
	double ends[2], strict[2];
	for (int e = 0; e < 2; e++) {
		double z = engi_normal_quantile(e ? 0.975 : 0.025);
		ends[e] = engi_quantile_sorted(d, draws, engi_normal_cdf(2 * z0 + z));
		strict[e] = engi_quantile_sorted(d, draws, engi_normal_cdf(2 * z0_strict + z));
	}
	struct engi_ci ci;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_boot_mean(x, n, &o, &ci, &err), 0);
	CHECK_INT(ci.flag, ENGI_CI_OK);
	CHECK_NEAR(ci.lo, ends[0], 1e-12);
	CHECK_NEAR(ci.hi, ends[1], 1e-12);
	/* the rule matters here: the strict count gives other ends */
	CHECK(fabs(strict[0] - ends[0]) > 0.05 || fabs(strict[1] - ends[1]) > 0.05);
	engi_free(d);
}

static void test_holm(void)
{
	double p[] = {0.01, 0.04, 0.03, 0.005};
	double adj[4];
	CHECK_INT(engi_holm(p, 4, adj, NULL), 0);
	CHECK_NEAR(adj[0], 0.03, 1e-15);
	CHECK_NEAR(adj[1], 0.06, 1e-15);
	CHECK_NEAR(adj[2], 0.06, 1e-15);
	CHECK_NEAR(adj[3], 0.02, 1e-15);

	/* in place, capped at 1, ties in input order */
	double q[] = {0.5, 0.2, 0.2, 0.01};
	CHECK_INT(engi_holm(q, 4, q, NULL), 0);
	CHECK_NEAR(q[0], 0.6, 1e-15); /* 1 x 0.5, raised to the running max */
	CHECK_NEAR(q[1], 0.6, 1e-15); /* 3 x 0.2 */
	CHECK_NEAR(q[2], 0.6, 1e-15); /* 2 x 0.2, raised */
	CHECK_NEAR(q[3], 0.04, 1e-15);
	double big[] = {0.6, 0.9};
	CHECK_INT(engi_holm(big, 2, big, NULL), 0);
	CHECK_NEAR(big[0], 1.0, 0);
	CHECK_NEAR(big[1], 1.0, 0);
	CHECK_INT(engi_holm(NULL, 0, NULL, NULL), 0);

	struct engi_error err;
	engi_error_init(&err);
	double bad[] = {0.1, 1.5};
	CHECK_INT(engi_holm(bad, 2, adj, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "p-value 1 (1.5) is outside [0, 1]");
}

static void test_errors(void)
{
	struct engi_boot_opts o;
	engi_boot_opts_init(&o);
	struct engi_ci ci;
	struct engi_error err;
	double x[6] = {0, 1, 0, 1, 1, 0};

	engi_error_init(&err);
	o.draws = 0;
	CHECK_INT(engi_boot_mean(x, 6, &o, &ci, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "number of draws 0 is outside 1..10000000");

	engi_error_init(&err);
	o.draws = 100;
	o.level = 1.0;
	CHECK_INT(engi_boot_mean(x, 6, &o, &ci, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "confidence level 1 is outside (0, 1)");

	engi_error_init(&err);
	o.level = 0.95;
	x[3] = INFINITY;
	CHECK_INT(engi_boot_mean(x, 6, &o, &ci, &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "bootstrap value of arm 0, task 3 is not finite");
	x[3] = 1;

	/* every allocation failure is reported, none crashes or leaks */
	for (long n = 1; n <= 4; n++) {
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = engi_boot_mean(x, 6, &o, &ci, &err);
		engi_alloc_fail_after(0);
		CHECK(rc == 0 || rc == ENGI_ENOMEM);
	}
	engi_alloc_fail_after(1);
	int rc = engi_boot_mean(x, 6, &o, &ci, NULL);
	engi_alloc_fail_after(0);
	CHECK_INT(rc, ENGI_ENOMEM);
}

int main(void)
{
	test_rng_vectors();
	test_rng_bounded();
	test_task_means();
	test_degenerate();
	test_two_valued();
	test_shared();
	test_paired();
	test_holm();
	test_errors();
	test_bca_ties();
	return check_exit();
}
