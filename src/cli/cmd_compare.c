#include "cli.h"

#include "engi/alloc.h"
#include "engi/compare.h"
#include "engi/csvin.h"
#include "engi/results.h"
#include "store.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* Reads one input: every CSV file of paths at the first of them (one set, so
 * that a cell run in two files is caught), a results store otherwise. */
static int load_one(char **paths, size_t npaths, size_t i, const char *assertions_csv,
		    struct engi_results *one, struct engi_error *err)
{
	if (!ends_with(paths[i], ".csv"))
		return store_read(paths[i], one, err);
	const char **csv = engi_reallocarray(NULL, npaths, sizeof *csv);
	if (!csv)
		RAISE(err, ENGI_ENOMEM, "out of memory listing inputs");
	size_t n = 0;
	for (size_t j = i; j < npaths; j++)
		if (ends_with(paths[j], ".csv"))
			csv[n++] = paths[j];
	int rc = engi_results_read_csvs(csv, n, assertions_csv, one, err);
	engi_free(csv);
	return rc;
}

/* The "grid" a results file's configuration declares (a new reference), or
 * NULL. */
static json_t *declared_grid(const struct engi_results *r)
{
	json_t *cfg = r->config_json ? json_loads(r->config_json, 0, NULL) : NULL;
	json_t *g = json_incref(json_object_get(cfg, "grid"));
	json_decref(cfg);
	return g;
}

/* Every input must declare the same grid. */
static int same_grid(json_t **grid, const char **from, const struct engi_results *one,
		     const char *path, struct engi_error *err)
{
	json_t *g = declared_grid(one);
	if (!g)
		RAISE(err, ENGI_EINVALID,
		      "'%s' declares no condition grid (--axis grid needs results of a sweep run "
		      "with "
		      "--grid)",
		      path);
	if (*grid && !json_equal(*grid, g)) {
		json_decref(g);
		RAISE(err, ENGI_EINVALID, "'%s' and '%s' declare different condition grids", *from,
		      path);
	}
	if (!*grid) {
		*grid = g;
		*from = path;
	} else {
		json_decref(g);
	}
	return 0;
}

int cli_load_results(char **paths, size_t npaths, const char *assertions_csv,
		     struct engi_results *res, struct engi_error *err)
{
	return cli_load_results_grid(paths, npaths, assertions_csv, res, NULL, err);
}

int cli_load_results_grid(char **paths, size_t npaths, const char *assertions_csv,
			  struct engi_results *res, json_t **grid, struct engi_error *err)
{
	engi_results_init(res);
	const char *grid_from = NULL;
	int csv_done = 0, have = 0;
	for (size_t i = 0; i < npaths; i++) {
		int csv = ends_with(paths[i], ".csv");
		if (csv && csv_done)
			continue;
		csv_done |= csv;
		struct engi_results one;
		int rc = load_one(paths, npaths, i, assertions_csv, &one, err);
		if (rc == 0 && grid)
			rc = csv ? engi_raise(err, ENGI_EINVALID,
					      "'%s': an episodes CSV declares no condition grid; "
					      "--axis grid reads it from results files",
					      paths[i])
				 : same_grid(grid, &grid_from, &one, paths[i], err);
		if (rc == 0 && !have) {
			*res = one;
			have = 1;
			continue;
		}
		if (rc == 0)
			rc = engi_results_merge(res, &one, err);
		engi_results_release(&one);
		if (rc < 0) {
			engi_results_release(res);
			if (grid) {
				json_decref(*grid);
				*grid = NULL;
			}
			return rc;
		}
	}
	if (assertions_csv && !csv_done) {
		engi_results_release(res);
		RAISE(err, ENGI_EINVALID, "--assertions '%s' needs an episodes CSV input",
		      assertions_csv);
	}
	return 0;
}

static int same_file(const char *out, const struct stat *o, const char *in, struct engi_error *err)
{
	struct stat st;
	if (stat(in, &st) == 0 && st.st_dev == o->st_dev && st.st_ino == o->st_ino)
		RAISE(err, ENGI_EINVALID,
		      "output '%s' is the input '%s': refusing to write over an input", out, in);
	return 0;
}

int cli_check_outputs(const char *const *out, size_t nout, char **paths, size_t npaths,
		      const char *assertions_csv, struct engi_error *err)
{
	for (size_t i = 0; i < nout; i++) {
		struct stat o;
		if (stat(out[i], &o) < 0)
			continue;
		for (size_t j = 0; j < npaths; j++)
			TRY(same_file(out[i], &o, paths[j], err));
		if (assertions_csv)
			TRY(same_file(out[i], &o, assertions_csv, err));
	}
	return 0;
}

/* prefix + suffix into buf; 0, or -1 (printed) when it does not fit. */
static int output_name(char *buf, size_t size, const char *prefix, const char *suffix)
{
	if ((size_t)snprintf(buf, size, "%s%s", prefix, suffix) >= size) {
		cli_errorf("--out-prefix: '%s' is too long", prefix);
		return -1;
	}
	return 0;
}

static const char compare_help[] =
    "usage: engisweep compare [options] RESULTS...\n"
    "\n"
    "Paired comparisons on the same tasks: two models under each condition\n"
    "(--axis models) or two conditions for each model (--axis conditions, an\n"
    "ablation grid). Each row: the mean paired difference of the EngiScore x100\n"
    "(trials averaged within a task, over the tasks both arms have), a paired\n"
    "task bootstrap interval and a two-sided sign-flip test; p-values are\n"
    "Holm-adjusted over the family (every arm against --baseline, or every\n"
    "pair without one) within each condition (axis models) or each model\n"
    "(axes conditions, grid). RESULTS are results.h5 files or episodes CSV\n"
    "files (columns in docs/analysis.md), merged in memory. Same input and\n"
    "seed, same bytes, whatever the order of the rows. An output file that is\n"
    "an input is refused.\n"
    "\n"
    "options:\n"
    "      --axis A         models (default), conditions, or grid: the family a\n"
    "                       sweep's --grid declared (each condition against the\n"
    "                       one with that axis at its first value, the other\n"
    "                       axes the same), read from its results files\n"
    "      --baseline NAME  compare every other arm with NAME\n"
    "      --assertions F   assertions CSV of the episodes CSV inputs\n"
    "      --out-prefix P   also write P.csv and P.json\n"
    "      --seed N         bootstrap and sign-flip seed (default 20261130)\n"
    "      --draws N        bootstrap and sign-flip draws (default 10000)\n"
    "      --level L        interval level (default 0.95)\n"
    "      --interval M     percentile (default) or bca\n"
    "      --min-tasks N    fewer paired tasks: no interval, flagged (default 5)\n"
    "  -h, --help           this text\n";

/* The declared family of a grid: {"family": [{"axis", "a", "b"}, ...]};
 * the strings stay in grid. */
static int grid_pairs(json_t *grid, struct engi_compare_pair **out, size_t *n,
		      struct engi_error *err)
{
	json_t *fam = json_object_get(grid, "family");
	size_t k = json_array_size(fam);
	*out = NULL;
	*n = 0;
	if (!json_is_array(fam) || k == 0)
		RAISE(err, ENGI_EINVALID,
		      "the declared grid has no comparisons (one value per axis?)");
	struct engi_compare_pair *p = engi_calloc(k, sizeof(*p));
	if (!p)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < k; i++) {
		json_t *e = json_array_get(fam, i);
		p[i].axis = json_string_value(json_object_get(e, "axis"));
		p[i].a = json_string_value(json_object_get(e, "a"));
		p[i].b = json_string_value(json_object_get(e, "b"));
		if (!p[i].axis || !p[i].a || !p[i].b) {
			engi_free(p);
			RAISE(err, ENGI_EINVALID,
			      "the declared grid's comparison %zu lacks axis, a or b", i);
		}
	}
	*out = p;
	*n = k;
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	enum { O_PREFIX = 256, O_AXIS, O_BASE, O_ASSERT };
	static const struct option opts[] = {
	    {"out-prefix", required_argument, NULL, O_PREFIX},
	    CLI_BOOT_LONG_OPTIONS,
	    {"axis", required_argument, NULL, O_AXIS},
	    {"baseline", required_argument, NULL, O_BASE},
	    {"assertions", required_argument, NULL, O_ASSERT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct engi_compare_opts co;
	engi_compare_opts_init(&co);
	const char *prefix = NULL, *assertions = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int boot = cli_boot_option(c, optarg, &co.boot);
		if (boot < 0)
			return EXIT_USAGE;
		if (boot > 0)
			continue;
		switch (c) {
		case O_PREFIX:
			prefix = optarg;
			break;
		case O_AXIS:
			if (!strcmp(optarg, "models")) {
				co.axis = ENGI_COMPARE_MODELS;
			} else if (!strcmp(optarg, "conditions")) {
				co.axis = ENGI_COMPARE_CONDITIONS;
			} else if (!strcmp(optarg, "grid")) {
				co.axis = ENGI_COMPARE_GRID;
			} else {
				cli_errorf("--axis: '%s' is not models, conditions or grid",
					   optarg);
				return EXIT_USAGE;
			}
			break;
		case O_BASE:
			co.baseline = optarg;
			break;
		case O_ASSERT:
			assertions = optarg;
			break;
		case 'h':
			fputs(compare_help, stdout);
			return 0;
		default:
			fputs(compare_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cli_errorf("compare: expected at least one results file");
		fputs(compare_help, stderr);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	if (co.axis == ENGI_COMPARE_GRID && co.baseline) {
		cli_errorf("--axis grid: the grid's first values are the baselines; no --baseline");
		return EXIT_USAGE;
	}
	char csv_out[4096], json_out[4096];
	if (prefix && (output_name(csv_out, sizeof csv_out, prefix, ".csv") < 0 ||
		       output_name(json_out, sizeof json_out, prefix, ".json") < 0))
		return EXIT_USAGE;
	const char *outs[] = {csv_out, json_out};
	if (prefix && cli_check_outputs(outs, 2, argv + optind, (size_t)(argc - optind), assertions,
					&err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	struct engi_results res;
	json_t *grid = NULL;
	if (cli_load_results_grid(argv + optind, (size_t)(argc - optind), assertions, &res,
				  co.axis == ENGI_COMPARE_GRID ? &grid : NULL, &err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	struct engi_compare_pair *pairs = NULL;
	if (grid && grid_pairs(grid, &pairs, &co.npairs, &err) < 0) {
		cli_error(&err);
		json_decref(grid);
		engi_results_release(&res);
		return EXIT_USAGE;
	}
	co.pairs = pairs;
	struct engi_compare_data cd;
	engi_compare_data_init(&cd);
	int rc = engi_compare_compute(&cd, &res, &co, &err);
	engi_free(pairs);
	json_decref(grid);
	engi_results_release(&res);
	if (rc == ENGI_ENOTFOUND || rc == ENGI_EINVALID) {
		cli_error(&err);
		engi_compare_data_release(&cd);
		return EXIT_USAGE;
	}
	if (rc == 0)
		rc = engi_compare_write_markdown(&cd, stdout, &err);
	if (rc == 0 && prefix)
		rc = engi_compare_write_csv(&cd, csv_out, &err);
	if (rc == 0 && prefix)
		rc = engi_compare_write_json(&cd, json_out, &err);
	engi_compare_data_release(&cd);
	if (rc < 0) {
		cli_error(&err);
		return EXIT_FAILED;
	}
	return 0;
}
