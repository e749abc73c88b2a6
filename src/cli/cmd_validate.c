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

int cli_probe_run(struct cli_probe *p, const char *what, int argc, char **argv, int cmd_argc,
		  char **cmd_argv)
{
	memset(p, 0, sizeof(*p));
	sweep_opts_defaults(&p->o);
	p->o.out = NULL;
	p->o.jobs = 1;
	p->o.validation = 1;
	p->o.max_retries = 1;
	engi_error_init(&p->err);
	int prc = sweep_parse_args(argc, argv, 1, &p->o, &p->conds, &p->res, &p->grid, &p->keep);
	if (prc != 0)
		return prc > 0 ? -1 : EXIT_USAGE;
	p->inited = 1;
	if (sched_init(&argc, &argv, 0, &p->err) < 0) {
		cli_error(&p->err);
		return EXIT_USAGE;
	}
	if (!p->o.out) {
		const char *tmp = getenv("TMPDIR");
		snprintf(p->tmpl, sizeof(p->tmpl), "%s/engisweep-%s-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp", what);
		if (sched_rank() == 0 && !mkdtemp(p->tmpl)) {
			cli_errorf("%s: cannot create a folder under '%s'", what,
				   tmp && *tmp ? tmp : "/tmp");
			return EXIT_FAILED;
		}
		sched_bcast_str(p->tmpl, sizeof(p->tmpl));
		p->o.out = p->tmpl;
		p->made_tmp = 1;
	}
	p->cmdline = cli_command_line(cmd_argc, cmd_argv);
	p->o.command_line = p->cmdline;
	p->ran = 1;
	int rc = sweep_run(&p->sw, &p->o, &p->err);
	if (rc < 0) {
		if (sched_rank() == 0)
			cli_error(&p->err);
		return rc == ENGI_EPARSE || rc == ENGI_EINVALID || rc == ENGI_ENOTFOUND
			   ? EXIT_USAGE
			   : EXIT_FAILED;
	}
	return 0;
}

void cli_probe_finish(struct cli_probe *p)
{
	if (p->ran && sched_rank() == 0 && p->made_tmp && !p->keep)
		fs_rm_rf(p->tmpl, NULL);
	if (p->ran)
		sweep_release(&p->sw);
	engi_free(p->cmdline);
	strlist_release(&p->conds);
	strlist_release(&p->res);
	strlist_release(&p->grid);
	if (p->inited)
		sched_finalize();
}

int cmd_validate(int argc, char **argv)
{
	struct cli_probe p;
	int code = cli_probe_run(&p, "validate", argc, argv, argc, argv);
	if (code == 0 && sched_rank() == 0) {
		const struct sweep *sw = &p.sw;
		size_t bad = 0;
		printf("| %-22s | %-28s | %-8s | %-6s | %s |\n", "task", "run", "must", "got",
		       "check");
		printf("|------------------------|------------------------------|----------|-------"
		       "-|-------|\n");
		for (size_t t = 0; t < sw->suite.ntasks; t++)
			for (size_t i = 0; i < sw->matrix.ncells; i++)
				if (sw->matrix.cells[i].task == t)
					bad += check_cell(sw, i, stdout) < 0;
		printf("\n%zu tasks, %zu runs: %s\n", sw->suite.ntasks, sw->matrix.ncells,
		       bad ? "FAILED" : "all verdicts as expected");
		if (bad) {
			printf("%zu run%s did not get the expected verdict; results kept in %s\n",
			       bad, bad == 1 ? "" : "s", p.o.out);
			p.keep = 1;
			code = EXIT_FAILED;
		}
	}
	cli_probe_finish(&p);
	return code < 0 ? 0 : code;
}
