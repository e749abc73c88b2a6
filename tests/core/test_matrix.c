/*
 * The sweep matrix (src/core/matrix.h): cell ids, queue order, flawed:NAME
 * skipping, condition specs and models.json.
 *
 * usage: test_matrix DEMO_SUITE_FOLDER
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "fsutil.h"
#include "matrix.h"
#include "task.h"

static struct suite suite;

static int is_hex16(const char *id)
{
	if (strlen(id) != 16)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

/* A sweep definition from an agent list, condition specs and trials. */
static void define(struct sweepdef *d, const char *agents, const char *const *conds, size_t nconds,
		   int trials)
{
	struct engi_error err;
	engi_error_init(&err);
	sweepdef_init(d);
	CHECK_INT(sweepdef_add_agents(d, agents, &err), 0);
	for (size_t i = 0; i < nconds; i++)
		CHECK_INT(sweepdef_add_condition(d, conds[i], &err), 0);
	d->trials = trials;
	if (err.code)
		fprintf(stderr, "define: %s\n", err.msg);
}

static int build(struct matrix *m, struct sweepdef *d)
{
	struct engi_error err;
	engi_error_init(&err);
	int rc = matrix_build(m, &suite, d, NULL, 0, &err);
	CHECK_INT(rc, 0);
	if (rc < 0)
		fprintf(stderr, "matrix_build: %s\n", err.msg);
	return rc;
}

static size_t tasks_with_flawed(const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < suite.ntasks; i++)
		n += task_find_flawed(&suite.tasks[i], name) != NULL;
	return n;
}

/* Longest predicted first, ties by id. */
static void check_queue_order(const struct matrix *m)
{
	int ok = 1;
	for (size_t i = 1; i < m->ncells; i++) {
		const struct cell *a = &m->cells[i - 1], *b = &m->cells[i];
		if (!(a->pred_s > b->pred_s ||
		      (a->pred_s == b->pred_s && strcmp(a->id, b->id) < 0))) {
			fprintf(stderr, "queue order: cell %zu (%s, %.1f s) before %s (%.1f s)\n",
				i - 1, a->id, a->pred_s, b->id, b->pred_s);
			ok = 0;
		}
	}
	CHECK(ok);
}

static void test_ids_and_order(void)
{
	const char *conds[] = {"base", "abl:history_turns=5,image_tool=true"};
	const char *conds_rev[] = {"abl:image_tool=true,history_turns=5", "base"};
	struct sweepdef d1, d2;
	define(&d1, "reference,noop,flawed:no-bolt-holes", conds, 2, 2);
	define(&d2, "flawed:no-bolt-holes,noop,reference", conds_rev, 2, 2);
	struct matrix m1, m1b, m2;
	if (build(&m1, &d1) < 0 || build(&m1b, &d1) < 0 || build(&m2, &d2) < 0)
		return;

	size_t with = tasks_with_flawed("no-bolt-holes");
	CHECK_INT(with, 1);
	size_t per_model = 2 /* conditions */ * 2 /* trials */;
	CHECK_INT(m1.ncells, suite.ntasks * 2 * per_model + with * per_model);
	CHECK_INT(m1.skipped, (suite.ntasks - with) * per_model);
	CHECK_INT(m2.skipped, m1.skipped);

	/* 16 hex characters, unique, and what cell_compute_id says */
	int ok = 1;
	for (size_t i = 0; i < m1.ncells; i++) {
		const struct cell *c = &m1.cells[i];
		char id[17];
		if (!is_hex16(c->id))
			ok = 0;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->id, m1.cells[j].id))
				ok = 0;
		cell_compute_id(&suite.tasks[c->task], &d1.models[c->model], &d1.conds[c->cond],
				c->trial, id);
		if (strcmp(id, c->id))
			ok = 0;
		/* flawed:no-bolt-holes only where the task has that variant */
		if (!strcmp(d1.models[c->model].agent, "flawed:no-bolt-holes") &&
		    !task_find_flawed(&suite.tasks[c->task], "no-bolt-holes"))
			ok = 0;
		CHECK(c->pred_s > 0);
	}
	CHECK(ok);
	CHECK(matrix_find(&m1, m1.cells[3].id) == 3);
	CHECK(matrix_find(&m1, "0000000000000000") == -1);

	/* stable across builds and independent of the order given */
	CHECK_INT(m1b.ncells, m1.ncells);
	CHECK_INT(m2.ncells, m1.ncells);
	for (size_t i = 0; i < m1.ncells && i < m1b.ncells && i < m2.ncells; i++) {
		CHECK_STR(m1b.cells[i].id, m1.cells[i].id);
		CHECK_STR(m2.cells[i].id, m1.cells[i].id);
		CHECK_NEAR(m2.cells[i].pred_s, m1.cells[i].pred_s, 0);
	}
	CHECK_STR(m1b.sweep_id, m1.sweep_id);
	CHECK_STR(m2.sweep_id, m1.sweep_id);
	CHECK_INT(strlen(m1.sweep_id), 64);

	check_queue_order(&m1);
	check_queue_order(&m2);
	/* scripted agents: a reference cell of a task predicts more than its noop */
	CHECK(m1.cells[0].pred_s >= m1.cells[m1.ncells - 1].pred_s);

	/* measured history overrides the prediction and moves the cell first */
	struct history_row hist[] = {
	    {"hex-nut", "noop", 1e6, 0.5},
	    {"hex-nut", "noop", 3e6, 1.5},
	};
	struct matrix mh;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(matrix_build(&mh, &suite, &d1, hist, 2, &err), 0);
	if (mh.ncells) {
		const struct cell *c = &mh.cells[0];
		CHECK_STR(suite.tasks[c->task].id, "hex-nut");
		CHECK_STR(d1.models[c->model].name, "noop");
		CHECK_NEAR(c->pred_s, 2e6, 1e-6);
		CHECK_NEAR(c->pred_cost_usd, 1.0, 1e-12);
		check_queue_order(&mh);
		CHECK_STR(mh.sweep_id, m1.sweep_id); /* predictions are not identity */
	}
	matrix_release(&mh);

	/* a different trial count adds cells but keeps the ids of the others */
	d1.trials = 3;
	struct matrix m3;
	if (build(&m3, &d1) == 0) {
		CHECK_INT(m3.ncells, m1.ncells / 2 * 3);
		int all = 1;
		for (size_t i = 0; i < m1.ncells; i++)
			all &= matrix_find(&m3, m1.cells[i].id) >= 0;
		CHECK(all);
		CHECK(strcmp(m3.sweep_id, m1.sweep_id) != 0);
	}
	matrix_release(&m3);

	matrix_release(&m1);
	matrix_release(&m1b);
	matrix_release(&m2);
	sweepdef_release(&d1);
	sweepdef_release(&d2);
}

static void test_id_inputs(void)
{
	const struct task *t = suite_find(&suite, "flange");
	CHECK(t != NULL);
	if (!t)
		return;
	struct model mo = {
	    .name = "m", .agent = "model", .settings = "{\"agent\":\"model\",\"temperature\":0}"};
	struct condition c = {.name = "abl", .settings = "{\"history\":5}"};
	char base[17], id[17];
	cell_compute_id(t, &mo, &c, 0, base);
	CHECK(is_hex16(base));
	cell_compute_id(t, &mo, &c, 0, id);
	CHECK_STR(id, base);

	cell_compute_id(t, &mo, &c, 1, id); /* trial */
	CHECK(strcmp(id, base) != 0);

	struct model mo2 = mo; /* model settings, same name */
	mo2.settings = "{\"agent\":\"model\",\"temperature\":0.5}";
	cell_compute_id(t, &mo2, &c, 0, id);
	CHECK(strcmp(id, base) != 0);
	mo2 = mo; /* model name, same settings */
	mo2.name = "m2";
	cell_compute_id(t, &mo2, &c, 0, id);
	CHECK(strcmp(id, base) != 0);
	mo2 = mo; /* prices and estimates are not part of the identity */
	mo2.price_in_per_mtok = 3;
	mo2.est_s_per_turn = 99;
	mo2.max_concurrent = 2;
	cell_compute_id(t, &mo2, &c, 0, id);
	CHECK_STR(id, base);

	struct condition c2 = c; /* condition settings, same name */
	c2.settings = "{\"history\":6}";
	cell_compute_id(t, &mo, &c2, 0, id);
	CHECK(strcmp(id, base) != 0);
	c2 = c;
	c2.name = "abl2";
	cell_compute_id(t, &mo, &c2, 0, id);
	CHECK(strcmp(id, base) != 0);

	struct task t2 = *t; /* task content */
	t2.hash[0] = t2.hash[0] == '0' ? '1' : '0';
	cell_compute_id(&t2, &mo, &c, 0, id);
	CHECK(strcmp(id, base) != 0);
	t2 = *t; /* task id */
	t2.id = "flange2";
	cell_compute_id(&t2, &mo, &c, 0, id);
	CHECK(strcmp(id, base) != 0);
	t2 = *t; /* where the task lies is not part of the identity */
	t2.file = "/elsewhere/flange.json";
	t2.dir = "/elsewhere";
	cell_compute_id(&t2, &mo, &c, 0, id);
	CHECK_STR(id, base);

	/* fields are separated: moving characters between them changes the id */
	struct condition ca = {.name = "ab", .settings = "c"}, cb = {.name = "a", .settings = "bc"};
	char ia[17], ib[17];
	cell_compute_id(t, &mo, &ca, 0, ia);
	cell_compute_id(t, &mo, &cb, 0, ib);
	CHECK(strcmp(ia, ib) != 0);
}

static void expect_condition(const char *spec, const char *name, const char *settings)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	int rc = sweepdef_add_condition(&d, spec, &err);
	CHECK_INT(rc, 0);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", spec, err.msg);
	CHECK_INT(d.nconds, rc == 0);
	if (d.nconds == 1) {
		CHECK_STR(d.conds[0].name, name);
		CHECK_STR(d.conds[0].settings, settings);
	}
	sweepdef_release(&d);
}

static void expect_condition_error(const char *spec, const char *msg)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_add_condition(&d, spec, &err), ENGI_EINVALID);
	CHECK_INT(d.nconds, 0);
	CHECK_STR(err.msg, msg);
	sweepdef_release(&d);
}

static void test_conditions(void)
{
	expect_condition("abl:history_turns=5,image_tool=true", "abl",
			 "{\"history_turns\":5,\"image_tool\":true}");
	expect_condition("abl:image_tool=true,history_turns=5", "abl",
			 "{\"history_turns\":5,\"image_tool\":true}");
	expect_condition("base", "base", "{}");
	expect_condition("mix:tools=text,screen_scale=0.25,image_tool=false,history_turns=1e3",
			 "mix",
			 "{\"history_turns\":1000,\"image_tool\":false,\"screen_scale\":0.25,"
			 "\"tools\":\"text\"}");
	expect_condition("s:drawings=none,screen_scale=1", "s",
			 "{\"drawings\":\"none\",\"screen_scale\":1}");

	/* every key a setting of the table, every value valid for it */
	expect_condition_error("x:histroy_turns=3",
			       "--condition 'x:histroy_turns=3': unknown "
			       "setting 'histroy_turns' (did you mean history_turns?)");
	expect_condition_error("x:colour=red",
			       "--condition 'x:colour=red': unknown setting "
			       "'colour' (known: history_turns, tools, image_tool, screen_scale, "
			       "drawings)");
	expect_condition_error("x:screen_scale=3", "--condition 'x:screen_scale=3': "
						   "screen_scale=3: expected a number in (0, 1]");
	expect_condition_error("x:screen_scale=0", "--condition 'x:screen_scale=0': "
						   "screen_scale=0: expected a number in (0, 1]");
	expect_condition_error("x:history_turns=0",
			       "--condition 'x:history_turns=0': "
			       "history_turns=0: expected an integer from 1 to 1000000");
	expect_condition_error("x:history_turns=2.5",
			       "--condition 'x:history_turns=2.5': "
			       "history_turns=2.5: expected an integer from 1 to 1000000");
	expect_condition_error("x:image_tool=yes", "--condition 'x:image_tool=yes': "
						   "image_tool=yes: expected true or false");
	expect_condition_error("x:tools=true", "--condition 'x:tools=true': tools=true: "
					       "expected native, text or engiworld");
	expect_condition_error("x:drawings=sideways",
			       "--condition 'x:drawings=sideways': "
			       "drawings=sideways: expected message, files or none");
	expect_condition_error("x:drawings=", "--condition 'x:drawings=': drawings=: expected "
					      "message, files or none");
	expect_condition_error("x:tools=text,tools=native",
			       "--condition "
			       "'x:tools=text,tools=native': 'tools' is set twice");

	expect_condition_error("abl:history",
			       "--condition 'abl:history': 'history' is not key=value");
	expect_condition_error("abl:=5", "--condition 'abl:=5': '=5' is not key=value");
	expect_condition_error(":x=1", "--condition ':x=1': needs a name of 1 to 63 characters");
	expect_condition_error("a b:x=1", "--condition 'a b:x=1': 'a b' is not a valid name");

	/* the same name twice */
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_add_condition(&d, "abl:history_turns=5", &err), 0);
	CHECK_INT(sweepdef_add_condition(&d, "abl:history_turns=6", &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "--condition 'abl' is named twice");
	CHECK_INT(d.nconds, 1);
	sweepdef_release(&d);

	/* no condition given: one called base, with no settings */
	struct matrix m;
	sweepdef_init(&d);
	CHECK_INT(sweepdef_add_agents(&d, "noop", &err), 0);
	if (build(&m, &d) == 0) {
		CHECK_INT(d.nconds, 1);
		CHECK_STR(d.conds[0].name, "base");
		CHECK_STR(d.conds[0].settings, "{}");
		CHECK_INT(m.ncells, suite.ntasks);
		CHECK_INT(m.skipped, 0);
	}
	matrix_release(&m);
	sweepdef_release(&d);
}

/* A condition's settings are read once, where it is defined, into its
 * struct: each key given has its bit and value, the others their defaults;
 * a refused condition adds nothing. */
static void test_condition_settings(void)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_add_condition(&d, "base", &err), 0);
	CHECK_INT(sweepdef_add_condition(&d,
					 "all:tools=engiworld,screen_scale=0.25,image_tool=true,"
					 "history_turns=40,drawings=files",
					 &err),
		  0);
	CHECK_INT(sweepdef_add_condition(&d, "few:image_tool=false,drawings=none", &err), 0);
	CHECK_INT(sweepdef_add_condition(&d, "bad:image_tool=true,drawings=paper", &err),
		  ENGI_EINVALID);
	CHECK_INT(d.nconds, 3);
	if (d.nconds != 3) {
		sweepdef_release(&d);
		return;
	}
	const struct cond_settings *b = &d.conds[0].set, *a = &d.conds[1].set, *f = &d.conds[2].set;
	CHECK_INT(b->set, 0);
	CHECK_INT(b->tools, COND_TOOLS_NATIVE);
	CHECK(b->screen_scale == 1.0);
	CHECK_INT(b->drawings, DRAWINGS_MESSAGE);
	unsigned every = 0;
	for (const struct cond_setting *k = cond_settings; k->key; k++)
		every |= COND_SET(k->id);
	CHECK_INT(a->set, every);
	CHECK_INT(every, COND_SET(COND_NKEYS) - 1);
	CHECK_INT(a->tools, COND_TOOLS_ENGIWORLD);
	CHECK(a->screen_scale == 0.25);
	CHECK_INT(a->image_tool, 1);
	CHECK_INT(a->history_turns, 40);
	CHECK_INT(a->drawings, DRAWINGS_FILES);
	CHECK_INT(f->set, COND_SET(COND_IMAGE_TOOL) | COND_SET(COND_DRAWINGS));
	CHECK_INT(f->image_tool, 0);
	CHECK_INT(f->drawings, DRAWINGS_NONE);
	CHECK(f->screen_scale == 1.0);
	/* the table's ids name its own keys */
	CHECK_STR(cond_setting_find("screen_scale")->key, "screen_scale");
	CHECK_INT(cond_setting_find("screen_scale")->id, COND_SCREEN_SCALE);
	CHECK_INT(cond_setting_find("tools")->id, COND_TOOLS);
	sweepdef_release(&d);
}

static char *tmpdir;

/* Writes tmpdir/name; the path stays valid until the next call with the
 * same slot. */
static const char *write_models_at(int slot, const char *name, const char *text)
{
	static char paths[3][PATH_MAX];
	char *path = paths[slot];
	struct engi_error err;
	engi_error_init(&err);
	snprintf(path, PATH_MAX, "%s/%s", tmpdir, name);
	if (fs_write_file_atomic(path, text, strlen(text), &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	return path;
}

static const char *write_models(const char *name, const char *text)
{
	return write_models_at(0, name, text);
}

static void test_models(void)
{
	char tmpl[PATH_MAX];
	const char *t = getenv("TMPDIR");
	snprintf(tmpl, sizeof(tmpl), "%s/engi-test-matrix-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(2);
	}
	tmpdir = tmpl;
	struct sweepdef d;
	struct engi_error err;
	char expected[2 * PATH_MAX];

	/* a good file: semantic settings canonical and sorted, the rest aside */
	const char *path = write_models(
	    "models.json",
	    "{\"models\": [\n"
	    " {\"name\": \"gpt-x\", \"provider\": \"openai\", \"model\": \"gpt-x-2025\",\n"
	    "  \"temperature\": 0, \"api_key_env\": \"KEY\", \"price_in_per_mtok\": 2.5,\n"
	    "  \"price_out_per_mtok\": 10, \"max_concurrent\": 4, \"budget_usd\": 20},\n"
	    " {\"name\": \"script\", \"agent\": \"noop\", \"est_s_per_turn\": 7}\n"
	    "]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), 0);
	CHECK_INT(d.nmodels, 2);
	if (d.nmodels == 2) {
		CHECK_STR(d.models[0].name, "gpt-x");
		CHECK_STR(d.models[0].agent, "model");
		CHECK_STR(d.models[0].settings,
			  "{\"agent\":\"model\",\"model\":\"gpt-x-2025\",\"provider\":\"openai\","
			  "\"temperature\":0}");
		CHECK_NEAR(d.models[0].price_in_per_mtok, 2.5, 0);
		CHECK_NEAR(d.models[0].price_out_per_mtok, 10, 0);
		CHECK_INT(d.models[0].max_concurrent, 4);
		CHECK_NEAR(d.models[0].budget_usd, 20, 0);
		CHECK_STR(d.models[1].agent, "noop");
		CHECK_STR(d.models[1].settings, "{\"agent\":\"noop\"}");
		CHECK_NEAR(d.models[1].est_s_per_turn, 7, 0);
	}
	/* a built-in agent of the same name as a model */
	CHECK_INT(sweepdef_add_agents(&d, "reference,script", &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "model 'script' is named twice");

	/* the same models with other prices: same cell ids; other temperature: not */
	const char *path2 = write_models_at(1, "models2.json",
					    "{\"models\": [{\"name\": \"gpt-x\", \"provider\": "
					    "\"openai\", \"model\": \"gpt-x-2025\","
					    " \"temperature\": 0, \"price_in_per_mtok\": 1}]}\n");
	const char *path3 = write_models_at(2, "models3.json",
					    "{\"models\": [{\"name\": \"gpt-x\", \"provider\": "
					    "\"openai\", \"model\": \"gpt-x-2025\","
					    " \"temperature\": 0.7}]}\n");
	struct sweepdef d2, d3;
	sweepdef_init(&d2);
	sweepdef_init(&d3);
	CHECK_INT(sweepdef_load_models(&d2, path2, &err), 0);
	CHECK_INT(sweepdef_load_models(&d3, path3, &err), 0);
	const struct task *task = suite_find(&suite, "flange");
	struct condition c = {.name = "base", .settings = "{}"};
	if (task && d.nmodels && d2.nmodels && d3.nmodels) {
		char a[17], b[17], e[17];
		cell_compute_id(task, &d.models[0], &c, 0, a);
		cell_compute_id(task, &d2.models[0], &c, 0, b);
		cell_compute_id(task, &d3.models[0], &c, 0, e);
		CHECK_STR(a, b);
		CHECK(strcmp(a, e) != 0);
	}
	sweepdef_release(&d);
	sweepdef_release(&d2);
	sweepdef_release(&d3);

	/* an unknown field names its pointer */
	path = write_models(
	    "unknown.json",
	    "{\"models\": [{\"name\": \"m\", \"provider\": \"openai\", \"temprature\": 0}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected),
		 "%s: /models/0/temprature: unknown field 'temprature' (did you mean temperature?)",
		 path);
	CHECK_STR(err.msg, expected);
	sweepdef_release(&d);

	path = write_models("unknown2.json",
			    "{\"models\": [{\"name\": \"a\", \"agent\": \"noop\"},\n"
			    " {\"name\": \"b\", \"agent\": \"noop\", \"colour\": \"red\"}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected),
		 "%s: /models/1/colour: unknown field 'colour' (known: ", path);
	CHECK(strncmp(err.msg, expected, strlen(expected)) == 0);
	sweepdef_release(&d);

	/* max_concurrent is a count that fits an int: 1e300 (undefined as an
	 * int) and 0.5 (0, unlimited) are refused */
	path = write_models(
	    "huge_cap.json",
	    "{\"models\": [{\"name\": \"m\", \"agent\": \"noop\", \"max_concurrent\": 1e300}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected),
		 "%s: /models/0/max_concurrent: expected an integer from 0 to 1000000, found a "
		 "number (1e+300)",
		 path);
	CHECK_STR(err.msg, expected);
	sweepdef_release(&d);
	path = write_models(
	    "half_cap.json",
	    "{\"models\": [{\"name\": \"m\", \"agent\": \"noop\", \"max_concurrent\": 0.5}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	sweepdef_release(&d);

	/* a model named twice */
	path = write_models("twice.json",
			    "{\"models\": [{\"name\": \"m\", \"provider\": \"openai\"},\n"
			    " {\"name\": \"m\", \"provider\": \"other\"}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK(sweepdef_load_models(&d, path, &err) < 0);
	CHECK(strstr(err.msg, "'m'") != NULL);
	CHECK(strstr(err.msg, "named twice") != NULL);
	sweepdef_release(&d);

	/* other shapes */
	path = write_models("noname.json", "{\"models\": [{\"provider\": \"openai\"}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected), "%s: /models/0/name: ", path);
	CHECK(strncmp(err.msg, expected, strlen(expected)) == 0);
	sweepdef_release(&d);

	path = write_models("noagent.json", "{\"models\": [{\"name\": \"m\"}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected), "%s: /models/0: needs 'agent' or 'provider'", path);
	CHECK_STR(err.msg, expected);
	sweepdef_release(&d);

	path = write_models(
	    "price.json",
	    "{\"models\": [{\"name\": \"m\", \"provider\": \"p\", \"price_in_per_mtok\": -1}]}\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected), "%s: /models/0/price_in_per_mtok: ", path);
	CHECK(strncmp(err.msg, expected, strlen(expected)) == 0);
	sweepdef_release(&d);

	/* types and ranges, named with the pointer and what was found */
	static const struct {
		const char *json, *msg;
	} bad[] = {
	    {"{\"models\": [], \"defaults\": {}}", "/defaults: unknown field (valid: models)"},
	    {"{\"models\": [7]}", "/models/0: expected an object, found an integer"},
	    {"{\"models\": [{\"name\": \"m\", \"agent\": 3}]}",
	     "/models/0/agent: expected an agent name, found an integer (3)"},
	    {"{\"models\": [{\"name\": \"m\", \"provider\": \"openai\", \"history_turns\": 0}]}",
	     "/models/0/history_turns: expected an integer from 1 to 1000000, found an integer "
	     "(0)"},
	    {"{\"models\": [{\"name\": \"m\", \"provider\": \"openai\", \"tools\": true}]}",
	     "/models/0/tools: expected native, text or engiworld, found a boolean (true)"},
	    {"{\"models\": [{\"name\": \"m\", \"provider\": \"openai\", \"image_tool\": \"no\"}]}",
	     "/models/0/image_tool: expected true or false, found a string ('no')"},
	    {"{\"models\": [{\"name\": \"m\", \"agent\": \"noop\", \"max_concurrent\": 1.5}]}",
	     "/models/0/max_concurrent: expected an integer from 0 to 1000000, found a number "
	     "(1.5)"},
	    {"{\"models\": [{\"name\": \"m\", \"agent\": \"noop\", \"budget_usd\": \"lots\"}]}",
	     "/models/0/budget_usd: expected a number ≥ 0, found a string ('lots')"},
	    {"{\"models\": [{\"name\": \"m\", \"agent\": \"reference\", \"temperature\": "
	     "\"hot\"}]}",
	     "/models/0/temperature: a setting of the agent 'model'; the agent 'reference' takes "
	     "none"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char fname[32];
		snprintf(fname, sizeof(fname), "bad%zu.json", i);
		path = write_models(fname, bad[i].json);
		sweepdef_init(&d);
		engi_error_init(&err);
		CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
		snprintf(expected, sizeof(expected), "%s: %s", path, bad[i].msg);
		CHECK_STR(err.msg, expected);
		sweepdef_release(&d);
	}

	path = write_models("notjson.json", "{\"models\": [\n");
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_load_models(&d, path, &err), ENGI_EPARSE);
	snprintf(expected, sizeof(expected), "%s: line ", path);
	CHECK(strncmp(err.msg, expected, strlen(expected)) == 0);
	sweepdef_release(&d);

	struct engi_error e2;
	engi_error_init(&e2);
	char *dir = engi_strdup(tmpdir);
	CHECK(fs_rm_rf(dir, &e2) == 0);
	engi_free(dir);
}

static void expect_grid_error(const char *axis, const char *msg)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	const char *axes[] = {"history_turns=5,15", axis};
	CHECK_INT(sweepdef_add_grid(&d, axes, 2, &err), ENGI_EINVALID);
	CHECK_INT(d.nconds, 0);
	CHECK_STR(err.msg, msg);
	sweepdef_release(&d);
}

/* Grid axes are condition settings, every value valid for its axis; the
 * consumers read the same table. */
static void test_grid(void)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	const char *axes[] = {"history_turns=5,15", "screen_scale=0.6,1.0"};
	CHECK_INT(sweepdef_add_grid(&d, axes, 2, &err), 0);
	CHECK_INT(d.nconds, 4);
	if (d.nconds == 4) {
		CHECK_STR(d.conds[1].name, "history_turns-15_screen_scale-0.6");
		CHECK(strstr(d.conds[1].settings, "{\"history_turns\":15,\"screen_scale\":0.") ==
		      d.conds[1].settings);
		/* parsed with the condition: what the consumers read */
		CHECK_INT(d.conds[1].set.set,
			  COND_SET(COND_HISTORY_TURNS) | COND_SET(COND_SCREEN_SCALE));
		CHECK_INT(d.conds[1].set.history_turns, 15);
		CHECK(d.conds[1].set.screen_scale == 0.6);
		CHECK_INT(d.conds[2].set.history_turns, 5);
		CHECK(d.conds[2].set.screen_scale == 1.0);
	}
	sweepdef_release(&d);
	sweepdef_init(&d);
	const char *draw[] = {"drawings=files,none"};
	CHECK_INT(sweepdef_add_grid(&d, draw, 1, &err), 0);
	CHECK_INT(d.nconds, 2);
	if (d.nconds == 2) {
		CHECK_INT(d.conds[0].set.drawings, DRAWINGS_FILES);
		CHECK_INT(d.conds[1].set.drawings, DRAWINGS_NONE);
		CHECK_INT(d.conds[1].set.set, COND_SET(COND_DRAWINGS));
	}
	sweepdef_release(&d);

	expect_grid_error("bogus_axis=1,2",
			  "--grid 'bogus_axis=1,2': unknown axis 'bogus_axis' "
			  "(known: history_turns, tools, image_tool, screen_scale, drawings)");
	expect_grid_error("screen_scal=0.5", "--grid 'screen_scal=0.5': unknown axis "
					     "'screen_scal' (did you mean screen_scale?)");
	expect_grid_error("screen_scale=0.5,3,7", "--grid 'screen_scale=0.5,3,7': screen_scale=3: "
						  "expected a number in (0, 1]");
	expect_grid_error("drawings=files,paper",
			  "--grid 'drawings=files,paper': "
			  "drawings=paper: expected message, files or none");
}

static void test_agents(void)
{
	struct sweepdef d;
	struct engi_error err;
	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_add_agents(&d, "reference,noop,reference", &err), ENGI_EINVALID);
	CHECK_STR(err.msg, "model 'reference' is named twice");
	sweepdef_release(&d);

	sweepdef_init(&d);
	engi_error_init(&err);
	CHECK_INT(sweepdef_add_agents(&d, "reference,flawed:wrong-pcd", &err), 0);
	CHECK_INT(d.nmodels, 2);
	if (d.nmodels == 2) {
		CHECK_STR(d.models[1].agent, "flawed:wrong-pcd");
		CHECK_STR(d.models[1].settings, "{\"agent\":\"flawed:wrong-pcd\"}");
	}
	/* a flawed variant that no task has: every pair skipped, no cell */
	CHECK_INT(sweepdef_add_agents(&d, "flawed:nowhere", &err), 0);
	struct matrix m;
	if (build(&m, &d) == 0) {
		size_t with = tasks_with_flawed("wrong-pcd");
		CHECK_INT(m.ncells, suite.ntasks + with);
		CHECK_INT(m.skipped, suite.ntasks - with + suite.ntasks);
	}
	matrix_release(&m);
	sweepdef_release(&d);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEMO_SUITE_FOLDER\n", argv[0]);
		return 2;
	}
	struct engi_error err;
	engi_error_init(&err);
	if (suite_load(&suite, argv[1], &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	test_ids_and_order();
	test_id_inputs();
	test_conditions();
	test_condition_settings();
	test_grid();
	test_models();
	test_agents();
	suite_release(&suite);
	return check_exit();
}
