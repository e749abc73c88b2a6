/*
 * check.h - the assertions every C test program uses. A failed CHECK prints
 * file, line and the expression and the program goes on; check_exit() prints
 * a summary and returns the exit status ctest reads.
 */
#ifndef ENGI_CHECK_H
#define ENGI_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_count_, check_failed_;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		check_count_++;                                                                    \
		if (!(cond)) {                                                                     \
			check_failed_++;                                                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		check_count_++;                                                                    \
		if (a_ != b_) {                                                                    \
			check_failed_++;                                                           \
			fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__,  \
				#a, a_, b_);                                                       \
		}                                                                                  \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		check_count_++;                                                                    \
		if (!(fabs(a_ - b_) <= (tol))) {                                                   \
			check_failed_++;                                                           \
			fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g ± %g\n", __FILE__,     \
				__LINE__, #a, a_, b_, (double)(tol));                              \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		check_count_++;                                                                    \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                           \
			check_failed_++;                                                           \
			fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__,        \
				__LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");             \
		}                                                                                  \
	} while (0)

static inline int check_exit(void)
{
	printf("%d checks, %d failed\n", check_count_, check_failed_);
	return check_failed_ ? 1 : 0;
}

#endif
