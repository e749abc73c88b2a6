/*
 * bench_analysis: the cost of the analysis on a sweep of the size the issue
 * names: 7 models x 1,301 tasks x 3 trials = 27,321 episodes and 1,000,000
 * assertion rows, with task type, domain and interface metadata. Times, each
 * the best of --repeat runs:
 *   csv      reading the episodes and assertions CSV files (written first)
 *   report   engi_report (compute + Markdown, 10,000 draws) and the
 *            evidence ladder over the 1,000,000 assertions (+ Markdown)
 *   compare  engi_compare_compute over the 21 model pairs (Holm family of
 *            21) + the Markdown, 10,000 bootstrap and sign-flip draws
 * Prints one line per figure: "name seconds".
 */
#include "engi/alloc.h"
#include "engi/compare.h"
#include "engi/csvin.h"
#include "engi/evidence.h"
#include "engi/report.h"
#include "engi/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NMODELS	    7
#define NTASKS	    1301
#define NTRIALS	    3
#define NASSERTIONS 1000000

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void write_csvs(const char *ep_path, const char *as_path)
{
	static const char *const types[] = {"single", "optimization", "multi"};
	static const char *const domains[] = {"CAD", "CAE", "CFD"};
	static const char *const stages[] = {"delivered", "valid", "geometry", "physics"};
	static const char *const states[] = {"pass", "pass", "fail", "unavailable"};
	FILE *ep = fopen(ep_path, "w"), *as = fopen(as_path, "w");
	if (!ep || !as) {
		perror("bench_analysis: cannot write the CSV files");
		exit(1);
	}
	struct engi_rng rng;
	engi_rng_seed(&rng, 42);
	fprintf(ep, "task_id,model,trial,condition,success,score,feasible,turns,"
		    "tokens_in,tokens_out,cost_usd,wall_s,outcome,domain,type,"
		    "interface,software\n");
	fprintf(as, "task_id,model,trial,condition,assertion,stage,state\n");
	size_t nep = (size_t)NMODELS * NTASKS * NTRIALS, written = 0, k = 0;
	for (int t = 0; t < NTASKS; t++) {
		double easy = engi_rng_unit(&rng);
		for (int m = 0; m < NMODELS; m++) {
			for (int trial = 1; trial <= NTRIALS; trial++, k++) {
				int s = engi_rng_unit(&rng) < easy + 0.03 * m - 0.1;
				const char *oc =
				    engi_rng_below(&rng, 50) == 0 ? "env_crash" : "done";
				fprintf(ep,
					"task%04d,model%d,%d,base,%d,%d,%d,%d,"
					"%d,%d,%.4f,%.1f,%s,%s,%s,cli,"
					"openscad\n",
					t, m, trial, s, s, s, 5 + t % 40, 1000 * (1 + t % 9),
					100 * (1 + t % 5), 0.001 * (double)(t % 17), 30.0 + t % 60,
					oc, domains[t % 3], types[t % 3]);
				/* spread 1,000,000 rows evenly over the episodes */
				size_t upto = (k + 1) * NASSERTIONS / nep;
				for (int a = 0; written < upto; a++, written++)
					fprintf(as,
						"task%04d,model%d,%d,base,a%d,%s,"
						"%s\n",
						t, m, trial, a, stages[a % 4],
						states[engi_rng_below(&rng, 4)]);
			}
		}
	}
	if (fclose(ep) || fclose(as)) {
		perror("bench_analysis: cannot write the CSV files");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int repeat = 3;
	const char *dir = "/tmp";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--repeat"))
			repeat = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
	}
	if (repeat < 1)
		repeat = 1;
	char ep[4096], as[4096];
	snprintf(ep, sizeof ep, "%s/bench_analysis_episodes.csv", dir);
	snprintf(as, sizeof as, "%s/bench_analysis_assertions.csv", dir);
	write_csvs(ep, as);

	struct engi_error err;
	engi_error_init(&err);
	struct engi_results res;
	double best_csv = 1e9, best_report = 1e9, best_compare = 1e9;
	FILE *devnull = fopen("/dev/null", "w");
	int rc = 0;
	for (int r = 0; r < repeat && rc == 0; r++) {
		double t0 = now_s();
		rc = engi_results_read_csv(ep, as, &res, &err);
		double t1 = now_s();
		if (rc < 0)
			break;
		if (t1 - t0 < best_csv)
			best_csv = t1 - t0;
		if (r == 0)
			printf("episodes %zu assertions %zu tasks %zu models %zu\n", res.nepisodes,
			       res.nassertions, res.ntasks, res.nmodels);

		struct engi_report_opts ro;
		engi_report_opts_init(&ro);
		t0 = now_s();
		rc = engi_report(&res, &ro, devnull, &err);
		struct engi_evidence ev;
		engi_evidence_init(&ev);
		if (rc == 0)
			rc = engi_evidence_compute(&ev, &res, &err);
		if (rc == 0)
			rc = engi_evidence_write_markdown(&ev, devnull, &err);
		engi_evidence_release(&ev);
		t1 = now_s();
		if (t1 - t0 < best_report)
			best_report = t1 - t0;

		struct engi_compare_opts co;
		engi_compare_opts_init(&co);
		struct engi_compare_data cd;
		engi_compare_data_init(&cd);
		t0 = now_s();
		if (rc == 0)
			rc = engi_compare_compute(&cd, &res, &co, &err);
		if (rc == 0)
			rc = engi_compare_write_markdown(&cd, devnull, &err);
		t1 = now_s();
		if (t1 - t0 < best_compare)
			best_compare = t1 - t0;
		if (r == 0 && rc == 0)
			printf("compare family %zu pairs\n", cd.family);
		engi_compare_data_release(&cd);
		engi_results_release(&res);
	}
	fclose(devnull);
	unlink(ep);
	unlink(as);
	if (rc < 0) {
		fprintf(stderr, "bench_analysis: %s\n", err.msg);
		return 1;
	}
	printf("csv %.3f\nreport %.3f\ncompare %.3f\n", best_csv, best_report, best_compare);
	return 0;
}
