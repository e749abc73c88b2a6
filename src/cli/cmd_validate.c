#include "cli.h"

#include "engi/alloc.h"
#include "fsutil.h"
#include "record.h"
#include "scheduler.h"
#include "sweep.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks one cell's verdict against what its agent must get; prints a row. */
static int check_cell(const struct sweep *sw, size_t ci, FILE *out)
{
	const struct cell *c = &sw->matrix.cells[ci];
	const struct task *t = &sw->suite.tasks[c->task];
	const struct model *m = &sw->def.models[c->model];
	const struct cell_result *r = &sw->results[ci];
	int is_ref = !strcmp(m->agent, "reference");
	const char *why = NULL;
	char buf[512];
	if (!r->have) {
		why = "no result (interrupted?)";
	} else if (outcome_is_infra(r->outcome)) {
		why = "the environment failed";
	} else if (is_ref && !r->success) {
		snprintf(buf, sizeof(buf), "reference failed (%s; failed:%s)",
			 outcome_name(r->outcome),
			 r->failed && strlen(r->failed) > 1 ? r->failed + 1 : " none");
		why = buf;
	} else if (!is_ref && r->success) {
		why = "succeeded but must fail";
	} else if (!strncmp(m->agent, "flawed:", 7)) {
		const struct task_flawed *f = task_find_flawed(t, m->agent + 7);
		for (size_t i = 0; f && i < f->nfailing && !why; i++) {
			char needle[ENGI_NAME_MAX + 3];
			snprintf(needle, sizeof(needle), ",%s,", f->failing[i]);
			if (!r->failed || !strstr(r->failed, needle)) {
				snprintf(buf, sizeof(buf), "failed, but not on '%s' (failed:%s)",
					 f->failing[i],
					 r->failed && strlen(r->failed) > 1 ? r->failed + 1
									    : " none");
				why = buf;
			}
		}
	}
	fprintf(out, "| %-22s | %-28s | %-8s | %-6s | %s |\n", t->id, m->name,
		is_ref ? "succeed" : "fail", r->have ? (r->success ? "passed" : "failed") : "-",
		why ? why : "ok");
	return why ? -1 : 0;
}

int cmd_validate(int argc, char **argv)
{
	struct sweep_opts o;
	sweep_opts_defaults(&o);
	o.out = NULL;
	o.jobs = 1;
	o.validation = 1;
	o.max_retries = 1;
	struct strlist conds = {0}, res = {0}, grid = {0};
	int keep = 0;
	int prc = sweep_parse_args(argc, argv, 1, &o, &conds, &res, &grid, &keep);
	if (prc != 0)
		return prc > 0 ? 0 : EXIT_USAGE;
	struct engi_error err;
	engi_error_init(&err);
	if (sched_init(&argc, &argv, 0, &err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	char tmpl[PATH_MAX];
	int made_tmp = 0;
	if (!o.out) {
		const char *tmp = getenv("TMPDIR");
		snprintf(tmpl, sizeof(tmpl), "%s/engisweep-validate-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (sched_rank() == 0 && !mkdtemp(tmpl)) {
			cli_errorf("validate: cannot create a folder under '%s'",
				   tmp && *tmp ? tmp : "/tmp");
			return EXIT_FAILED;
		}
		sched_bcast_str(tmpl, sizeof(tmpl));
		o.out = tmpl;
		made_tmp = 1;
	}
	char *cmdline = cli_command_line(argc, argv);
	o.command_line = cmdline;
	struct sweep sw;
	int rc = sweep_run(&sw, &o, &err);
	int code = 0;
	if (rc < 0) {
		if (sched_rank() == 0)
			cli_error(&err);
		code = rc == ENGI_EPARSE || rc == ENGI_EINVALID || rc == ENGI_ENOTFOUND
			   ? EXIT_USAGE
			   : EXIT_FAILED;
	} else if (sched_rank() == 0) {
		size_t bad = 0;
		printf("| %-22s | %-28s | %-8s | %-6s | %s |\n", "task", "run", "must", "got",
		       "check");
		printf("|------------------------|------------------------------|----------|-------"
		       "-|-------|\n");
		for (size_t t = 0; t < sw.suite.ntasks; t++)
			for (size_t i = 0; i < sw.matrix.ncells; i++)
				if (sw.matrix.cells[i].task == t)
					bad += check_cell(&sw, i, stdout) < 0;
		printf("\n%zu tasks, %zu runs: %s\n", sw.suite.ntasks, sw.matrix.ncells,
		       bad ? "FAILED" : "all verdicts as expected");
		if (bad) {
			printf("%zu run%s did not get the expected verdict; results kept in %s\n",
			       bad, bad == 1 ? "" : "s", o.out);
			keep = 1;
			code = EXIT_FAILED;
		}
	}
	if (sched_rank() == 0 && made_tmp && !keep)
		fs_rm_rf(tmpl, NULL);
	sweep_release(&sw);
	engi_free(cmdline);
	strlist_release(&conds);
	strlist_release(&res);
	strlist_release(&grid);
	sched_finalize();
	return code;
}
