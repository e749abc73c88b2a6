/*
 * cli.h - the subcommands and the few helpers they share. Exit codes: 0
 * success, 1 the work ran and found failures, 2 bad usage or bad input.
 */
#ifndef ENGI_CLI_H
#define ENGI_CLI_H

#include <stddef.h>

#include "engi/error.h"
#include "sweep.h"

#define EXIT_FAILED 1
#define EXIT_USAGE  2

int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_audit(int argc, char **argv);

int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
/* engisweep kernel mesh | icp | distance (cmd_kernel_geom.c) */
int kernel_geom_mesh(int argc, char **argv);
int kernel_geom_icp(int argc, char **argv);
int kernel_geom_distance(int argc, char **argv);
/* engisweep kernel brep (cmd_kernel_brep.c) */
int kernel_brep(int argc, char **argv);
int cmd_truth(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_judge(int argc, char **argv);
int cmd_reverify(int argc, char **argv);
int cmd_image(int argc, char **argv);

struct engi_results;
/* Reads and merges results files: .csv files with the episodes CSV format,
 * read together as one set where the first of them stands (a cell in two of
 * them is an error; the assertions CSV, when not NULL, names episodes of
 * any of them), any other with store_read. res is initialised here; empty
 * on failure. */
int cli_load_results(char **paths, size_t npaths, const char *assertions_csv,
		     struct engi_results *res, struct engi_error *err);
/* The same, and with grid non-NULL the condition grid every input declares
 * (the same one, else an error; CSV inputs declare none). */
typedef struct json_t json_t;
int cli_load_results_grid(char **paths, size_t npaths, const char *assertions_csv,
			  struct engi_results *res, json_t **grid, struct engi_error *err);

/*
 * ENGI_EINVALID when writing any of the nout output paths would write over
 * an input: one of the npaths results files or the assertions CSV (NULL:
 * none), compared by device and inode, so another name, a link or a
 * relative path of the same file counts. Outputs that do not exist yet are
 * new files.
 */
int cli_check_outputs(const char *const *out, size_t nout, char **paths, size_t npaths,
		      const char *assertions_csv, struct engi_error *err);

/* "engisweep: <message>" on stderr, one line: secrets scrubbed, control
 * characters escaped (\x1b). */
void cli_error(const struct engi_error *err);
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses an integer or number option; prints the error itself. */
int cli_int(const char *opt, const char *s, long lo, long hi, long *out);
int cli_num(const char *opt, const char *s, double lo, double hi, double *out);
/* argv joined with spaces (engi_free), for the results file. */
char *cli_command_line(int argc, char **argv);

/* A growable list of strings from repeated options. */
struct strlist {
	const char **v;
	size_t n, alloc;
};
int strlist_push(struct strlist *l, const char *s);
void strlist_release(struct strlist *l);

/* The bootstrap options report and compare share (--seed, --draws,
 * --level, --min-tasks, --interval): their getopt codes, their long-option
 * entries, and one parser. cli_boot_option returns 1 when opt was one of
 * them (stored in b), 0 when not, -1 on a bad value (printed). */
enum { CLI_OPT_SEED = 400, CLI_OPT_DRAWS, CLI_OPT_LEVEL, CLI_OPT_MIN_TASKS, CLI_OPT_INTERVAL };
#define CLI_BOOT_LONG_OPTIONS                                                                      \
	{"seed", required_argument, NULL, CLI_OPT_SEED},                                           \
	    {"draws", required_argument, NULL, CLI_OPT_DRAWS},                                     \
	    {"level", required_argument, NULL, CLI_OPT_LEVEL},                                     \
	    {"interval", required_argument, NULL, CLI_OPT_INTERVAL},                               \
	{                                                                                          \
		"min-tasks", required_argument, NULL, CLI_OPT_MIN_TASKS                            \
	}
struct engi_boot_opts;
int cli_boot_option(int opt, const char *arg, struct engi_boot_opts *b);

struct sweep_opts;
/* Parses the options run and validate share: 0 parsed, 1 help printed,
 * -1 usage error (printed). */
int sweep_parse_args(int argc, char **argv, int validation, struct sweep_opts *o,
		     struct strlist *conds, struct strlist *res, struct strlist *grid, int *keep);

/* validate and audit: validate's options parsed from argc/argv, and the
 * suite's probes (reference, flawed variants, noop) run into --out or a
 * new folder under $TMPDIR (what names it); the command line recorded is
 * cmd_argc/cmd_argv. 0 with p->sw done (rank 0 reports); -1 when --help
 * was printed; else the exit code. cli_probe_finish cleans up, always. */
struct cli_probe {
	struct sweep_opts o;
	struct strlist conds, res, grid;
	int keep, made_tmp, inited, ran;
	char tmpl[4096];
	char *cmdline;
	struct sweep sw;
	struct engi_error err;
};
int cli_probe_run(struct cli_probe *p, const char *what, int argc, char **argv, int cmd_argc,
		  char **cmd_argv);
void cli_probe_finish(struct cli_probe *p);

#endif
