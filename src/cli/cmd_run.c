#include "cli.h"

#include "backend.h"
#include "engi/alloc.h"
#include "episode.h"
#include "fsutil.h"
#include "llm_judge.h"
#include "scheduler.h"
#include "sweep.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char run_help[] =
    "usage: engisweep run [options] SUITE\n"
    "\n"
    "Runs every cell of SUITE (a folder of task files, or one file) x models x\n"
    "trials x conditions; every setting is checked first (a bad one exits 2\n"
    "before anything is written). Under mpirun or srun, rank 0 dispatches\n"
    "cells to the other ranks, longest predicted first; alone, it runs them\n"
    "itself.\n"
    "SIGTERM, SIGINT or SIGUSR1 stop dispatching, let running episodes finish\n"
    "within the grace time, flush and exit 0; --resume then continues.\n"
    "\n"
    "options:\n"
    "  -o, --out DIR          results folder (default: results): journal.jsonl,\n"
    "                         results.h5, status.json, artifacts/<cell>/\n"
    "  -a, --agents LIST      built-in agents, comma-separated: reference, noop,\n"
    "                         flawed:NAME (default: reference)\n"
    "  -m, --models FILE      models.json: language models and their prices, caps\n"
    "  -t, --trials N         trials per task and model (default 1)\n"
    "  -c, --condition SPEC   NAME or NAME:key=value,... (repeat for an ablation);\n"
    "                         keys: history_turns, tools, image_tool,\n"
    "                         screen_scale, drawings (docs/running.md)\n"
    "      --grid AXIS=V1,V2  a condition axis (a key of -c); several --grid make\n"
    "                         the cartesian product of conditions\n"
    "                         AXIS-V1_AXIS2-W1, ...\n"
    "      --shard K/N        only the cells whose place in cell-id order is K\n"
    "                         modulo N (a job array's share; merge the N\n"
    "                         results afterwards)\n"
    "      --source NAME      the suite's task source (default: detected; see\n"
    "                         engisweep inspect)\n"
    "      --images FILE      a benchmark's snapshots -> engisweep images (JSON\n"
    "                         object; docs/engiworld.md)\n"
    "      --deliverables FILE  what a Harbor task's agent delivers: a JSON\n"
    "                         object of task name (or \"*\") -> paths\n"
    "                         (docs/parametric-cad-bench.md)\n"
    "      --subset SPEC      a stratified subset of the suite, e.g.\n"
    "                         'strata=software,type,interface per=4-5 seed=7\n"
    "                         all=type:open' (4 or 5 tasks per stratum), or\n"
    "                         file:PATH, the tasks whose ids PATH lists, one a\n"
    "                         line (a benchmark's split)\n"
    "  -b, --backend NAME     where episodes run, as `engisweep inspect` lists them\n"
    "                         (local, qemu; default: local)\n"
    "      --unsafe-local     where the local backend's sandbox (bubblewrap) is\n"
    "                         unavailable, run model and replay agents on the\n"
    "                         host anyway, with all your rights (default: refuse)\n"
    "  -r, --resume           continue the sweep in --out: skip finished cells,\n"
    "                         rerun missing and infrastructure-failed ones\n"
    "      --mix-verifiers    with --resume: keep finished episodes that other\n"
    "                         verifier versions judged (the report says so)\n"
    "  -j, --jobs N           episodes rank 0 runs at once itself (default: 1 alone,\n"
    "                         1 with fewer than 4 ranks, else 0)\n"
    "      --resource NAME=N  N (1 to 100000) licence tokens of NAME exist (repeat)\n"
    "      --retries N        retries of an infrastructure failure (default 2)\n"
    "      --retry-wait S     seconds before the first retry, doubling after each\n"
    "                         (default 5, at most 300 between attempts)\n"
    "      --verify-timeout S the verifier's limit per episode, wall clock and\n"
    "                         CPU time per kernel thread (default 1800); past it\n"
    "                         the episode is infra_error 'verifier timed out'\n"
    "      --verify-mem-mb M  the verifier's address-space limit (default 16384)\n"
    "      --verify-in WHERE  for a benchmark's own evaluator: same (in the\n"
    "                         episode's guest after the agent stops), clean (a\n"
    "                         fresh guest with only the deliverables), or both\n"
    "                         (same scored, clean recorded beside it); default: as\n"
    "                         the task says\n"
    "      --grace S          seconds running episodes get after a stop (default 60)\n"
    "      --cmd-timeout S    limit of one command in an episode (default 600)\n"
    "      --command-policy FILE  rules refusing the agents' commands before they\n"
    "                         run: {\"rules\": [{\"pattern\": ERE, \"message\":\n"
    "                         TEXT}, ...]} (docs/running.md)\n"
    "      --pause-env        freeze the environment while the agent waits for its\n"
    "                         model (qemu: QMP stop/cont), so environment time\n"
    "                         excludes model time\n"
    "      --deadline T       the allocation ends at T (unix seconds, or +S from\n"
    "                         now; default: $SLURM_JOB_END_TIME when set): a cell\n"
    "                         starts only if its predicted duration (measured\n"
    "                         ones once known) fits, --grace seconds to spare\n"
    "      --progress-every N without a terminal, a line every N episodes (10)\n"
    "      --budget-usd D     stop dispatching once the sweep's recorded cost\n"
    "                         reaches D dollars (per model: budget_usd)\n"
    "      --judge MODEL      the --models entry that judges the tasks' judges\n"
    "                         (rubrics, tasks/SCHEMA.md), at temperature 0; it is\n"
    "                         not run as an agent. A suite with judges needs it\n"
    "      --judge-attempts N requests per judge for a verdict that parses\n"
    "                         (1 to 10, default 3)\n"
    "  -q, --quiet            no progress output\n"
    "  -h, --help             this text\n";

static const char validate_help[] =
    "usage: engisweep validate [options] SUITE\n"
    "\n"
    "Validates every task file of SUITE, then runs on each task its reference\n"
    "solution, each flawed variant and agent noop, and checks the verdicts: the\n"
    "reference must succeed, every other run must fail (flawed variants on the\n"
    "assertions listed in their 'failing'). Exits 0 when all hold, 1 otherwise.\n"
    "\n"
    "options:\n"
    "  -o, --out DIR          results folder (default: a new folder under\n"
    "                         $TMPDIR, removed afterwards unless --keep)\n"
    "  -b, --backend NAME     where episodes run, as `engisweep inspect` lists them\n"
    "                         (local, qemu; default: local)\n"
    "      --subset SPEC      only these tasks (file:PATH of ids, or strata)\n"
    "      --images FILE      a benchmark's snapshots -> engisweep images\n"
    "      --deliverables FILE  what a Harbor task's agent delivers: a JSON\n"
    "                         object of task name (or \"*\") -> paths\n"
    "                         (docs/parametric-cad-bench.md)\n"
    "  -j, --jobs N           episodes at once (default 1)\n"
    "      --keep             keep the results folder\n"
    "  -q, --quiet            no progress output\n"
    "  -h, --help             this text\n";

enum {
	OPT_RESOURCE = 256,
	OPT_RETRIES,
	OPT_GRACE,
	OPT_CMD_TIMEOUT,
	OPT_PROGRESS,
	OPT_KEEP,
	OPT_DEADLINE,
	OPT_GRID,
	OPT_SUBSET,
	OPT_SOURCE,
	OPT_IMAGES,
	OPT_DELIVERABLES,
	OPT_SHARD,
	OPT_BUDGET,
	OPT_PAUSE_ENV,
	OPT_RETRY_WAIT,
	OPT_VERIFY_TIMEOUT,
	OPT_VERIFY_MEM,
	OPT_VERIFY_IN,
	OPT_MIX_VERIFIERS,
	OPT_UNSAFE_LOCAL,
	OPT_COMMAND_POLICY,
	OPT_JUDGE,
	OPT_JUDGE_ATTEMPTS
};

static const struct option run_options[] = {
    {"out", required_argument, NULL, 'o'},
    {"agents", required_argument, NULL, 'a'},
    {"models", required_argument, NULL, 'm'},
    {"trials", required_argument, NULL, 't'},
    {"condition", required_argument, NULL, 'c'},
    {"backend", required_argument, NULL, 'b'},
    {"resume", no_argument, NULL, 'r'},
    {"jobs", required_argument, NULL, 'j'},
    {"resource", required_argument, NULL, OPT_RESOURCE},
    {"retries", required_argument, NULL, OPT_RETRIES},
    {"retry-wait", required_argument, NULL, OPT_RETRY_WAIT},
    {"verify-timeout", required_argument, NULL, OPT_VERIFY_TIMEOUT},
    {"verify-in", required_argument, NULL, OPT_VERIFY_IN},
    {"mix-verifiers", no_argument, NULL, OPT_MIX_VERIFIERS},
    {"verify-mem-mb", required_argument, NULL, OPT_VERIFY_MEM},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"cmd-timeout", required_argument, NULL, OPT_CMD_TIMEOUT},
    {"command-policy", required_argument, NULL, OPT_COMMAND_POLICY},
    {"pause-env", no_argument, NULL, OPT_PAUSE_ENV},
    {"unsafe-local", no_argument, NULL, OPT_UNSAFE_LOCAL},
    {"progress-every", required_argument, NULL, OPT_PROGRESS},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"deadline", required_argument, NULL, OPT_DEADLINE},
    {"grid", required_argument, NULL, OPT_GRID},
    {"subset", required_argument, NULL, OPT_SUBSET},
    {"source", required_argument, NULL, OPT_SOURCE},
    {"images", required_argument, NULL, OPT_IMAGES},
    {"deliverables", required_argument, NULL, OPT_DELIVERABLES},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"budget-usd", required_argument, NULL, OPT_BUDGET},
    {"judge", required_argument, NULL, OPT_JUDGE},
    {"judge-attempts", required_argument, NULL, OPT_JUDGE_ATTEMPTS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* "1795999999" (unix seconds) or "+3600" (from now). */
static int parse_deadline(const char *what, const char *s, double *out)
{
	double v;
	if (s[0] == '+') {
		if (s[1] == '+' || s[1] == '-' || cli_num(what, s + 1, 0, 1e9, &v) < 0)
			return -1;
		*out = clk_now_wall() + v;
		return 0;
	}
	if (cli_num(what, s, 1, 1e11, &v) < 0)
		return -1;
	*out = v;
	return 0;
}

/* "K/N": decimal digits only, 0 <= K < N <= 1000000. */
static int parse_shard(const char *s, unsigned *k, unsigned *n)
{
	unsigned long v[2];
	const char *p = s;
	for (int i = 0; i < 2; i++) {
		char *end;
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno || v[i] > 1000000 || *end != (i ? '\0' : '/'))
			return -1;
		p = end + 1;
	}
	if (v[1] < 1 || v[0] >= v[1])
		return -1;
	*k = (unsigned)v[0];
	*n = (unsigned)v[1];
	return 0;
}

int sweep_parse_args(int argc, char **argv, int validation, struct sweep_opts *o,
		     struct strlist *conds, struct strlist *res, struct strlist *grid, int *keep)
{
	const char *help = validation ? validate_help : run_help;
	int c;
	long v;
	double d;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:a:m:t:c:b:rj:qh", run_options, NULL)) != -1) {
		int run_only = 0;
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'a':
			run_only = 1;
			o->agents = optarg;
			break;
		case 'm':
			run_only = 1;
			o->models_file = optarg;
			break;
		case 't':
			run_only = 1;
			if (cli_int("--trials", optarg, 1, 1000, &v) < 0)
				return -1;
			o->trials = (int)v;
			break;
		case 'c':
			run_only = 1;
			if (strlist_push(conds, optarg) < 0)
				return -1;
			break;
		case 'b':
			o->backend = optarg;
			break;
		case 'r':
			run_only = 1;
			o->resume = 1;
			break;
		case 'j':
			if (cli_int("--jobs", optarg, 0, 1024, &v) < 0)
				return -1;
			o->jobs = (int)v;
			break;
		case OPT_RESOURCE:
			run_only = 1;
			if (strlist_push(res, optarg) < 0)
				return -1;
			break;
		case OPT_RETRIES:
			run_only = 1;
			if (cli_int("--retries", optarg, 0, 100, &v) < 0)
				return -1;
			o->max_retries = (int)v;
			break;
		case OPT_RETRY_WAIT:
			run_only = 1;
			if (cli_num("--retry-wait", optarg, 0, 300, &d) < 0)
				return -1;
			o->retry_wait_s = d;
			break;
		case OPT_MIX_VERIFIERS:
			run_only = 1;
			o->mix_verifiers = 1;
			break;
		case OPT_VERIFY_TIMEOUT:
			if (cli_num("--verify-timeout", optarg, 1, 7 * 86400, &d) < 0)
				return -1;
			o->verify_timeout_s = d;
			break;
		case OPT_VERIFY_IN:
			run_only = 1;
			o->verify_in = episode_verify_in_parse(optarg);
			if (o->verify_in < 0) {
				fprintf(
				    stderr,
				    "engisweep: --verify-in '%s': expected same, clean or both\n",
				    optarg);
				return -1;
			}
			break;
		case OPT_VERIFY_MEM:
			if (cli_int("--verify-mem-mb", optarg, 64, 1L << 30, &v) < 0)
				return -1;
			o->verify_mem_mb = v;
			break;
		case OPT_BUDGET:
			run_only = 1;
			if (cli_num("--budget-usd", optarg, 0, 1e12, &d) < 0)
				return -1;
			o->budget_usd = d;
			break;
		case OPT_JUDGE:
			run_only = 1;
			o->judge = optarg;
			break;
		case OPT_JUDGE_ATTEMPTS:
			run_only = 1;
			if (cli_int("--judge-attempts", optarg, 1, LLM_JUDGE_ATTEMPTS_MAX, &v) < 0)
				return -1;
			o->judge_attempts = (int)v;
			break;
		case OPT_GRACE:
			run_only = 1;
			if (cli_num("--grace", optarg, 0, 1e7, &d) < 0)
				return -1;
			o->grace_s = d;
			break;
		case OPT_CMD_TIMEOUT:
			run_only = 1;
			if (cli_num("--cmd-timeout", optarg, 0.001, 1e7, &d) < 0)
				return -1;
			o->cmd_timeout_s = d;
			break;
		case OPT_COMMAND_POLICY:
			run_only = 1;
			o->command_policy = optarg;
			break;
		case OPT_PAUSE_ENV:
			run_only = 1;
			o->pause_env = 1;
			break;
		case OPT_UNSAFE_LOCAL:
			run_only = 1;
			o->unsafe_local = 1;
			break;
		case OPT_PROGRESS:
			run_only = 1;
			if (cli_int("--progress-every", optarg, 1, 1000000, &v) < 0)
				return -1;
			o->progress_every = (int)v;
			break;
		case OPT_GRID:
			run_only = 1;
			if (strlist_push(grid, optarg) < 0)
				return -1;
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case OPT_IMAGES:
			o->images = optarg;
			break;
		case OPT_DELIVERABLES:
			o->deliverables = optarg;
			break;
		case OPT_SUBSET:
			o->subset = optarg;
			break;
		case OPT_SHARD: {
			run_only = 1;
			unsigned k = 0, n = 0;
			if (parse_shard(optarg, &k, &n) < 0) {
				cli_errorf("--shard '%s': expected K/N with 0 <= K < N", optarg);
				return -1;
			}
			o->shard_k = k;
			o->shard_n = n;
			break;
		}
		case OPT_DEADLINE:
			run_only = 1;
			if (parse_deadline("--deadline", optarg, &o->deadline) < 0)
				return -1;
			if (o->deadline <= clk_now_wall()) {
				cli_errorf("--deadline '%s': that time has passed", optarg);
				return -1;
			}
			break;
		case OPT_KEEP:
			if (!validation) {
				cli_errorf("run: --keep belongs to validate");
				return -1;
			}
			*keep = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(help, stdout);
			return 1;
		default:
			fputs(help, stderr);
			return -1;
		}
		if (run_only && validation) {
			cli_errorf("validate: option '%s' belongs to run", argv[optind - 1]);
			return -1;
		}
	}
	/* a backend this binary was configured without stops here, before the
	 * suite is read (an unknown name is the sweep's preflight's to report) */
	struct engi_error e;
	engi_error_init(&e);
	if (o->backend && !backend_lookup(o->backend, &e) && e.code == ENGI_ENOTSUP) {
		cli_error(&e);
		return -1;
	}
	if (optind != argc - 1) {
		cli_errorf("%s: expected one SUITE (a folder of task files or one file)",
			   validation ? "validate" : "run");
		fputs(help, stderr);
		return -1;
	}
	o->suite = argv[optind];
	const char *end = getenv("SLURM_JOB_END_TIME");
	if (!validation && o->deadline == 0 && end && *end &&
	    parse_deadline("SLURM_JOB_END_TIME", end, &o->deadline) < 0)
		return -1;
	o->deadline_margin_s = o->grace_s;
	o->conditions = conds->v;
	o->nconditions = conds->n;
	o->resources = res->v;
	o->nresources = res->n;
	o->grid = grid->v;
	o->ngrid = grid->n;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct sweep_opts o;
	sweep_opts_defaults(&o);
	struct strlist conds = {0}, res = {0}, grid = {0};
	int keep = 0;
	int prc = sweep_parse_args(argc, argv, 0, &o, &conds, &res, &grid, &keep);
	if (prc != 0) {
		strlist_release(&conds);
		strlist_release(&res);
		strlist_release(&grid);
		return prc > 0 ? 0 : EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	if (sched_init(&argc, &argv, 0, &err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	char *cmdline = cli_command_line(argc, argv);
	o.command_line = cmdline;
	struct sweep sw;
	int rc = sweep_run(&sw, &o, &err);
	int code = 0;
	if (rc < 0) {
		if (sched_rank() == 0)
			cli_error(&err);
		code = rc == ENGI_EPARSE || rc == ENGI_EINVALID || rc == ENGI_ENOTFOUND ||
			       rc == ENGI_ENOTSUP
			   ? EXIT_USAGE
			   : EXIT_FAILED;
	}
	sweep_release(&sw);
	engi_free(cmdline);
	strlist_release(&conds);
	strlist_release(&res);
	strlist_release(&grid);
	sched_finalize();
	return code;
}
