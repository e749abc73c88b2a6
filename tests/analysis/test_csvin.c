/*
 * Episodes and assertions CSV files read into struct engi_results: columns in
 * any order, quoting, CRLF, a byte-order mark, defaults, rows of planned but
 * unrun episodes; every input error names the file, the line and the column;
 * several results merged.
 */
#include "check.h"

#include "engi/csvin.h"
#include "engi/report.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/engi_csvin_XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[2][256];
	static int k;
	char *p = path[k++ & 1];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	fputs(text, f);
	fclose(f);
	return p;
}

static void test_good(void)
{
	const char *ep =
	    write_file("ep.csv", "\xef\xbb\xbfmodel,task_id,trial,success,score,extra,domain,"
				 "type,outcome,tokens_in,cost_usd\r\n"
				 "m1,t1,1,1,1,x,CAD,single,,100,0.5\r\n"
				 "m1,t1,2,true,1.0,\"a, \"\"quoted\"\"\nfield\",CAD,single,done,"
				 "100,0.5\r\n"
				 "\r\n"
				 "m1,t2,1,0,0.25,,CAE,optimization,turn_limit,,\r\n"
				 "m2,t1,1,0,0,,CAD,single,env_crash,7,\r\n"
				 "m2,t2,1,0,0,,CAE,optimization,unrun,,\r\n"
				 "m2,t2,2,0,0,,CAE,optimization,missing,,\n");
	const char *as = write_file("as.csv", "task_id,model,trial,assertion,stage,state\n"
					      "t1,m1,2,volume,geometry,pass\n"
					      "t2,m1,1,stress,physics,unavailable\n");
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csv(ep, as, &r, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(r.nepisodes, 4);
	/* 4 (task, model, condition) x trials 1..2: t2/m1 and t1/m2 lack
	 * trial 2, and t2/m2 ran neither */
	CHECK_INT(r.planned_cells, 8);
	CHECK_INT(r.ntasks, 2);
	CHECK_INT(r.nmodels, 2);
	CHECK_INT(r.nconditions, 1);
	CHECK_STR(r.conditions[0].name, "base");
	CHECK_STR(r.tasks[1].domain, "CAE");
	CHECK_STR(r.tasks[1].type, "optimization");
	/* episodes by task, model, condition, trial */
	CHECK_STR(r.episodes[0].outcome, "done");
	CHECK_INT(r.episodes[1].success, 1);
	CHECK_NEAR(r.episodes[3].score, 0.25, 0);
	CHECK_STR(r.episodes[3].outcome, "turn_limit");
	CHECK_INT(r.episodes[2].tokens_in, 7);
	CHECK_NEAR(r.episodes[0].cost_usd, 0.5, 0);
	CHECK_INT(r.nassertions, 2);
	CHECK_STR(r.assertions[0].cell, r.episodes[1].cell);
	CHECK_STR(r.assertions[1].state, "unavailable");
	/* the extra column is task metadata; on t1 its rows disagree */
	CHECK_INT(r.ntask_meta, 2);
	CHECK_STR(r.task_meta[0].task_id, "t1");
	CHECK_STR(r.task_meta[0].key, "extra");
	CHECK_STR(r.task_meta[0].value, "x");
	CHECK(strstr(r.task_meta[0].conflict, "ep.csv: line 3: task 't1' has "
					      "'a, \"quoted\"\nfield' here "
					      "and 'x' on line 2") != NULL);
	CHECK_STR(r.task_meta[1].task_id, "t2");
	CHECK_STR(r.task_meta[1].value, "");
	CHECK_STR(r.task_meta[1].conflict, "");

	/* the report counts the unrun rows as missing */
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.planned, 8);
	CHECK_INT(d.missing, 4);
	CHECK_INT(d.env_crash, 1);
	engi_report_data_release(&d);

	/* merged with itself: tasks, models, conditions once; the rest twice */
	struct engi_results m;
	CHECK_INT(engi_results_read_csv(ep, NULL, &m, &err), 0);
	CHECK_INT(engi_results_merge(&m, &r, &err), 0);
	CHECK_INT(m.ntasks, 2);
	CHECK_INT(m.nmodels, 2);
	CHECK_INT(m.nconditions, 1);
	CHECK_INT(m.nepisodes, 8);
	CHECK_INT(m.nassertions, 2);
	CHECK_INT(m.planned_cells, 16);
	engi_results_release(&m);
	engi_results_release(&r);
}

static void expect_error(const char *episodes, const char *assertions, const char *want)
{
	const char *ep = write_file("bad.csv", episodes);
	const char *as = assertions ? write_file("bad_as.csv", assertions) : NULL;
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	int rc = engi_results_read_csv(ep, as, &r, &err);
	CHECK_INT(rc, ENGI_EPARSE);
	CHECK(r.nepisodes == 0 && r.episodes == NULL);
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, want);
		CHECK(0);
	}
	engi_results_release(&r);
}

#define HEAD	     "task_id,model,trial,success,score\n"
#define HEAD_OUTCOME "task_id,model,trial,success,score,outcome\n"

static void test_errors(void)
{
	expect_error(HEAD "t1,m1,1,1,1\nt1,m1,2,1,abc\n", NULL,
		     "bad.csv: line 3, column 'score': expected a finite "
		     "number, found 'abc'");
	expect_error(HEAD "t1,m1,1,1,nan\n", NULL,
		     "line 2, column 'score': expected a finite number");
	expect_error(HEAD "t1,m1,x,1,1\n", NULL, "line 2, column 'trial': expected an integer");
	expect_error(HEAD "t1,m1,1,yes,1\n", NULL,
		     "line 2, column 'success': expected 0, 1, true or false, "
		     "found 'yes'");
	expect_error(HEAD "t1,,1,1,1\n", NULL,
		     "line 2, column 'model': empty, a value is required");
	expect_error("task_id,model,trial,score\nt1,m1,1,1\n", NULL,
		     "bad.csv: line 1: required column 'success' is missing");
	expect_error(HEAD "t1,m1,1,1\n", NULL, "line 2: 4 fields, the header has 5");
	expect_error(HEAD "t1,m1,1,1,1\n\"t2,m1,1,1,1\n", NULL, "line 3: quoted field not closed");
	expect_error(HEAD "t1,m1,1,1,1\nt\"2,m1,1,1,1\n", NULL,
		     "line 3, field 1: quote inside an unquoted field");
	expect_error("", NULL, "bad.csv: empty file, expected a header line");
	expect_error("task_id,model,trial,success,score,domain\n"
		     "t1,m1,1,1,1,CAD\nt1,m2,1,1,1,CAE\n",
		     NULL,
		     "line 3, column 'domain': task 't1' has 'CAE' here and "
		     "'CAD' on line 2");
	expect_error(HEAD_OUTCOME "t1,m1,1,1,1,done\nt1,m1,2,0,0,crashed\n", NULL,
		     "bad.csv: line 3, column 'outcome': expected done, "
		     "fail_declared, turn_limit, time_limit, agent_error, "
		     "env_crash, infra_error, missing or unrun, found 'crashed'");
	expect_error(HEAD_OUTCOME "t1,m1,1,1,1,Done\n", NULL,
		     "bad.csv: line 2, column 'outcome': expected done");
	expect_error(HEAD "t1,m1,1,1,1\n",
		     "task_id,model,trial,assertion,stage,state\n"
		     "t1,m1,2,volume,geometry,pass\n",
		     "bad_as.csv: line 2: no episode task 't1', model 'm1', "
		     "condition 'base', trial 2");
	expect_error(HEAD "t1,m1,1,1,1\n",
		     "task_id,model,trial,assertion,stage,state\n"
		     "t1,m1,1,volume,geometry,maybe\n",
		     "bad_as.csv: line 2, column 'state': expected pass, fail, "
		     "inapplicable or unavailable, found 'maybe'");

	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	char missing[300];
	snprintf(missing, sizeof missing, "%s/none.csv", dir);
	CHECK_INT(engi_results_read_csv(missing, NULL, &r, &err), ENGI_EIO);
	CHECK(strstr(err.msg, "cannot open") && strstr(err.msg, "none.csv"));
}

/* Several episodes files read as one set: distinct cell ids, assertions
 * of any of them, extra columns per file, and a cell on rows of two files
 * refused with both places named. */
static void test_set(void)
{
	char a[256], b[256], c[256], as[256];
	snprintf(a, sizeof a, "%s",
		 write_file("a.csv", "task_id,model,trial,success,score,lab\n"
				     "t1,m1,1,1,1,north\n"
				     "t1,m1,1,0,0,north\n" /* a repeat inside one file: kept */
				     "t2,m1,1,0,0.5,south\n"));
	snprintf(b, sizeof b, "%s",
		 write_file("b.csv", "task_id,model,trial,success,score,outcome,lab\n"
				     "t1,m1,2,1,1,done,north\n"
				     "t3,m1,1,0,0,unrun,\n"));
	snprintf(as, sizeof as, "%s",
		 write_file("as.csv", "task_id,model,trial,assertion,stage,state\n"
				      "t1,m1,2,file,delivery,pass\n"
				      "t1,m1,1,file,delivery,fail\n"));
	const char *set[] = {a, b};
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csvs(set, 2, as, &r, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(r.nepisodes, 4);
	/* the repeated row is one planned cell; t1, t2, t3 with m1 over the
	 * set's trials 1..2 */
	CHECK_INT(r.planned_cells, 6);
	for (size_t i = 0; i < r.nepisodes; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(r.episodes[i].cell, r.episodes[j].cell));
	CHECK_INT(r.nassertions, 2);
	CHECK_STR(r.assertions[0].cell, r.episodes[2].cell);
	CHECK_STR(r.assertions[1].cell, r.episodes[0].cell);
	CHECK_INT(r.ntask_meta, 2);
	CHECK_STR(r.task_meta[1].value, "south");
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	const char *by[] = {"lab"};
	o.by = by;
	o.nby = 1;
	o.draws = 200;
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.duplicates, 1);
	CHECK_INT(d.missing, 3);
	CHECK_STR(d.table_name[ENGI_REPORT_BUILTIN_TABLES], "lab");
	CHECK_INT(d.table_groups[ENGI_REPORT_BUILTIN_TABLES], 2);
	engi_report_data_release(&d);
	engi_results_release(&r);

	/* the same cell from another run, even an unrun row of it */
	snprintf(c, sizeof c, "%s",
		 write_file("c.csv", "task_id,model,trial,success,score,outcome\n"
				     "t9,m1,1,1,1,done\n"
				     "t2,m1,1,0,0,unrun\n"));
	const char *dup[] = {a, c};
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csvs(dup, 2, NULL, &r, &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "c.csv: line 3: task 't2', model 'm1', condition "
			      "'base', trial 1 is also on line 4 of ") != NULL);
	CHECK(strstr(err.msg, "a.csv: two runs of one cell would be counted "
			      "twice") != NULL);
	CHECK_INT(r.nepisodes, 0);

	/* metadata that disagrees across files names the other file */
	snprintf(c, sizeof c, "%s",
		 write_file("c.csv", "task_id,model,trial,success,score,domain\n"
				     "t1,m2,1,1,1,CAE\n"));
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csvs(dup, 2, NULL, &r, &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "c.csv: line 2, column 'domain': task 't1' has "
			      "'CAE' here and '' on line 2 of ") != NULL);
}

/* Names and texts of any length load whole: the fixed fields hold aliases
 * that engi_res_str resolves, the report prints the whole names, and a
 * merge keeps two files' long names apart. */
static void test_long_names(void)
{
	char model[301], cond[121], task[101], key[201], value[401];
	memset(model, 'm', 300);
	model[300] = '\0';
	memset(cond, 'c', 120);
	cond[120] = '\0';
	memset(task, 't', 100);
	task[100] = '\0';
	memset(key, 'k', 200);
	key[200] = '\0';
	memset(value, 'v', 400);
	value[400] = '\0';
	size_t n = 4096;
	char *text = malloc(n);
	snprintf(text, n,
		 "task_id,model,condition,trial,success,score,domain,type,"
		 "outcome,infra,%s\n"
		 "%s,%s,%s,1,1,1,structural mechanics,finite-element-analysis,"
		 "done,,%s\n"
		 "short,%s,%s,1,0,0,structural mechanics,finite-element-analysis,"
		 "infra_error,endpoint unavailable for a reason longer than "
		 "sixty-four bytes of text,%s\n"
		 "short,m2,base,1,1,1,structural mechanics,"
		 "finite-element-analysis,done,,%s\n",
		 key, task, model, cond, value, model, cond, value, value);
	const char *ep = write_file("long.csv", text);
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csv(ep, NULL, &r, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(r.nepisodes, 3);
	CHECK_INT(r.ntasks, 2);
	CHECK_INT(r.nmodels, 2);
	/* sorted: "m2" before the 300 'm's */
	CHECK_STR(engi_res_str(&r, r.models[0].name), "m2");
	CHECK_STR(engi_res_str(&r, r.models[1].name), model);
	CHECK_STR(engi_res_str(&r, r.tasks[1].id), task);
	CHECK_STR(engi_res_str(&r, r.tasks[1].domain), "structural mechanics");
	CHECK_STR(engi_res_str(&r, r.tasks[1].type), "finite-element-analysis");
	/* the same text, the same alias */
	CHECK_STR(r.episodes[1].model, r.models[1].name);
	CHECK_STR(r.episodes[2].model, r.models[1].name);
	CHECK_STR(engi_res_str(&r, r.episodes[1].infra),
		  "endpoint unavailable for a reason longer than sixty-four "
		  "bytes of text");
	CHECK_INT(r.ntask_meta, 2);
	CHECK_STR(engi_res_str(&r, r.task_meta[0].key), key);
	CHECK_STR(engi_res_str(&r, r.task_meta[0].value), value);

	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 100;
	const char *by[] = {key};
	o.by = by;
	o.nby = 1;
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);
	CHECK_STR(err.msg, "");
	int seen = 0;
	for (size_t i = 0; i < d.nrows; i++) {
		if (d.rows[i].table == ENGI_REPORT_BY_DOMAIN && !strcmp(d.rows[i].model, model) &&
		    !strcmp(d.rows[i].condition, cond) &&
		    !strcmp(d.rows[i].group, "structural mechanics"))
			seen++;
		if ((size_t)d.rows[i].table == ENGI_REPORT_BUILTIN_TABLES &&
		    !strcmp(d.rows[i].group, value))
			seen++;
	}
	CHECK(seen >= 2);
	CHECK_STR(d.table_name[ENGI_REPORT_BUILTIN_TABLES], key);
	engi_report_data_release(&d);

	/* another file's long names: aliases of another pool, rebased */
	char other[201];
	memset(other, 'o', 200);
	other[200] = '\0';
	snprintf(text, n,
		 "task_id,model,trial,success,score,domain\n"
		 "short,%s,1,1,1,CAD\n",
		 other);
	const char *ep2 = write_file("long2.csv", text);
	struct engi_results r2, all;
	CHECK_INT(engi_results_read_csv(ep2, NULL, &r2, &err), 0);
	engi_results_init(&all);
	CHECK_INT(engi_results_merge(&all, &r2, &err), 0);
	CHECK_INT(engi_results_merge(&all, &r, &err), 0);
	CHECK_INT(all.nmodels, 3);
	CHECK_STR(engi_res_str(&all, all.models[0].name), other);
	CHECK_STR(engi_res_str(&all, all.models[2].name), model);
	CHECK_STR(engi_res_str(&all, all.episodes[2].model), model);
	CHECK_STR(engi_res_str(&all, all.episodes[3].model), model);
	CHECK_STR(engi_res_str(&all, all.episodes[0].model), other);
	CHECK_STR(engi_res_str(&all, all.task_meta[0].value), value);
	engi_results_release(&all);
	engi_results_release(&r2);
	/* a fixed-width file (the HDF5 store) refuses, never truncates */
	char narrow[8];
	engi_error_init(&err);
	CHECK_INT(engi_res_copy(narrow, sizeof narrow, "structural", "domain", &err),
		  ENGI_EINVALID);
	CHECK(strstr(err.msg, "domain 'structural...' is longer than 7 bytes") != NULL);
	CHECK_INT(engi_res_copy(narrow, sizeof narrow, "CAD", "domain", &err), 0);
	CHECK_STR(narrow, "CAD");
	engi_results_release(&r);
	free(text);
}

/* A trial number that the other cells have and one (task, model) lacks is a
 * missing episode, not a silent gap. */
static void test_trial_gap(void)
{
	const char *ep = write_file("gap.csv", HEAD "t1,m1,0,1,1\nt1,m1,2,1,1\n"
						    "t2,m1,0,1,1\nt2,m1,1,1,1\nt2,m1,2,0,0\n");
	struct engi_results r;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csv(ep, NULL, &r, &err), 0);
	CHECK_INT(r.planned_cells, 6);
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_report_opts o;
	engi_report_opts_init(&o);
	o.draws = 100;
	CHECK_INT(engi_report_compute(&d, &r, &o, &err), 0);
	CHECK_INT(d.recorded, 5);
	CHECK_INT(d.missing, 1);
	engi_report_data_release(&d);
	engi_results_release(&r);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_good();
	test_errors();
	test_set();
	test_long_names();
	test_trial_gap();
	const char *names[] = {"ep.csv", "as.csv", "bad.csv",  "bad_as.csv", "a.csv",
			       "b.csv",	 "c.csv",  "long.csv", "long2.csv",  "gap.csv"};
	for (size_t i = 0; i < 10; i++) {
		char p[300];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
	return check_exit();
}
