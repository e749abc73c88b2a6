/*
 * fixture.h - deterministic records and sweep metadata for the store tests.
 * check_h5py.py computes the same values from the same formulas; change
 * both together.
 */
#ifndef ENGI_STORE_FIXTURE_H
#define ENGI_STORE_FIXTURE_H

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engi/alloc.h"
#include "record.h"
#include "store.h"
#include "trace.h"

#define FIXTURE_TASKS	   2
#define FIXTURE_MODELS	   2
#define FIXTURE_CONDITIONS 1
#define FIXTURE_TASK_META  3

static inline void fixture_cell(char *cell, int i)
{
	snprintf(cell, CELL_ID_LEN + 1, "%016x", 0xc0ffee00u + (unsigned)i);
}

static inline int fixture_has_trace(int i)
{
	return i % 3 != 1;
}

/* The JSON lines of record i's trace ("" when it has none). */
static inline char *fixture_trace_text(int i, size_t pad)
{
	struct trace t;
	trace_init(&t, (size_t)1 << 26);
	char cell[CELL_ID_LEN + 1];
	fixture_cell(cell, i);
	for (int k = 0; fixture_has_trace(i) && k < i % 5 + 2; k++) {
		json_t *ev =
		    json_pack("{s:i, s:s, s:s}", "turn", k, "cell", cell, "text", "ls -l /work");
		if (pad) {
			/* varied text, so that it does not compress to
			 * nothing */
			char *filler = engi_malloc(pad + 1);
			unsigned x = 2463534242u + (unsigned)(i * 31 + k);
			for (size_t j = 0; j < pad; j++) {
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				filler[j] = (char)('a' + x % 26);
			}
			filler[pad] = '\0';
			json_object_set_new(ev, "filler", json_string(filler));
			engi_free(filler);
		}
		trace_event(&t, ev);
		json_decref(ev);
	}
	size_t len;
	char *text = engi_dynbuf_take(&t.buf, &len);
	trace_release(&t);
	return text;
}

/* Fills record i; r must be initialised. */
static inline void fixture_record(struct record *r, int i, size_t trace_pad)
{
	fixture_cell(r->cell, i);
	snprintf(r->task_id, sizeof(r->task_id), "task-%d", i % 2);
	snprintf(r->model, sizeof(r->model), "model-%c", 'a' + i % 2);
	snprintf(r->condition, sizeof(r->condition), "baseline");
	r->trial = i;
	r->outcome = i % 3 == 1 ? OUTCOME_TURN_LIMIT : OUTCOME_DONE;
	r->attempts = 1 + i % 3;
	r->success = i % 3 != 1;
	r->feasible = i % 3 != 1;
	r->score = 0.25 * (i % 4 + 1);
	r->quality = i / 3.0;
	r->turns = 10 + i;
	r->tokens_in = 1000000000000LL + i;
	r->tokens_out = 7LL * i;
	r->cost_usd = 0.01 * (i + 1);
	r->wall_s = 100.5 + i;
	r->env_s = 1.25;
	r->model_s = 2.5;
	r->verify_s = 0.125;
	r->started_at = 1.7e9 + i;
	r->rank = i % 4;
	snprintf(r->host, sizeof(r->host), "node%02d", i % 4);
	snprintf(r->run_id, sizeof(r->run_id), "run-20250101");
	snprintf(r->message, sizeof(r->message),
		 "message %d: \xc3\xbcnic\xc3\xb8"
		 "de",
		 i);
	/* the run's own end: the outcome it had, none for every third */
	if (i % 3 != 2) {
		r->run_outcome = r->outcome;
		snprintf(r->run_message, sizeof(r->run_message), "run %d ended", i);
	}
	/* what the task's judges cost, apart from the agent's */
	r->judge_tokens_in = 500 + i;
	r->judge_tokens_out = 50LL * i;
	r->judge_cost_usd = 0.001 * (i + 1);

	r->nassertions = (size_t)(i % 3 + 1);
	r->assertions = engi_calloc(r->nassertions, sizeof(*r->assertions));
	for (size_t j = 0; j < r->nassertions; j++) {
		struct engi_assertion *a = &r->assertions[j];
		snprintf(a->name, sizeof(a->name), "a%d.%zu", i, j);
		snprintf(a->stage, sizeof(a->stage), "stage%zu", j);
		a->state = (int)(j % 4);
		a->required = j % 2 == 0;
		a->value = j == 0 ? NAN : 1.5 * (double)j;
		a->expected = 2.0 * (double)j;
		snprintf(a->detail, sizeof(a->detail), "detail %d/%zu", i, j);
	}
	r->nmetrics = 2;
	r->metrics = engi_calloc(2, sizeof(*r->metrics));
	snprintf(r->metrics[0].name, sizeof(r->metrics[0].name), "geometry");
	r->metrics[0].value = 0.5 + i / 10.0;
	snprintf(r->metrics[1].name, sizeof(r->metrics[1].name), "spec");
	r->metrics[1].value = i % 3 == 2 ? NAN : 0.9;
	r->nartifacts = (size_t)(i % 3);
	r->artifacts = r->nartifacts ? engi_calloc(r->nartifacts, sizeof(*r->artifacts)) : NULL;
	for (size_t j = 0; j < r->nartifacts; j++) {
		struct artifact *a = &r->artifacts[j];
		snprintf(a->path, sizeof(a->path), "out/part%zu.stl", j);
		a->bytes = 1000 * (j + 1) + (uint64_t)i;
		for (int k = 0; k < 64; k++)
			a->sha256[k] = "0123456789abcdef"[(k + (int)j + i) % 16];
		a->sha256[64] = '\0';
		snprintf(a->note, sizeof(a->note), "%s", j == 1 ? "not copied: too large" : "");
	}
	if (fixture_has_trace(i)) {
		char *text = fixture_trace_text(i, trace_pad);
		struct trace t;
		trace_init(&t, (size_t)1 << 26);
		engi_dynbuf_addstr(&t.buf, text);
		trace_finish(&t, &r->trace, &r->trace_len, &r->trace_raw_len, NULL);
		trace_release(&t);
		engi_free(text);
	}
}

struct fixture_meta {
	struct engi_res_task tasks[FIXTURE_TASKS];
	struct engi_res_model models[FIXTURE_MODELS];
	struct engi_res_condition conditions[FIXTURE_CONDITIONS];
	struct engi_res_task_meta task_meta[FIXTURE_TASK_META];
	char *config;
	struct store_meta meta;
};

/* config_bytes: size of the frozen configuration attribute */
static inline void fixture_meta_init(struct fixture_meta *f, size_t config_bytes)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < FIXTURE_TASKS; i++) {
		struct engi_res_task *t = &f->tasks[i];
		snprintf(t->id, sizeof(t->id), "task-%d", i);
		snprintf(t->title, sizeof(t->title), "Mesh a bracket %d", i);
		/* wider than the 7 and 15 bytes the layout once kept */
		snprintf(t->domain, sizeof(t->domain), "%s", i ? "structural mechanics" : "CAD");
		snprintf(t->type, sizeof(t->type), "%s", i ? "finite-element-analysis" : "single");
		snprintf(t->interface, sizeof(t->interface), i ? "gui" : "cli");
		snprintf(t->software, sizeof(t->software), "FreeCAD,OpenSCAD");
		for (int k = 0; k < 64; k++)
			t->hash[k] = "fedcba9876543210"[(k + i) % 16];
		t->turns = i ? 200 : 100;
		t->wall_s = 18000;
		snprintf(t->scoring, sizeof(t->scoring), "binary");
	}
	for (int i = 0; i < FIXTURE_MODELS; i++) {
		struct engi_res_model *m = &f->models[i];
		snprintf(m->name, sizeof(m->name), "model-%c", 'a' + i);
		snprintf(m->agent, sizeof(m->agent), "model");
		snprintf(m->settings, sizeof(m->settings), "{\"temperature\":0.%d}", i);
		m->price_in_per_mtok = 3.0 + i;
		m->price_out_per_mtok = 15.0 + i;
	}
	snprintf(f->conditions[0].name, sizeof(f->conditions[0].name), "baseline");
	snprintf(f->conditions[0].settings, sizeof(f->conditions[0].settings), "{}");
	/* task-0: family, locale (UTF-8); task-1: family */
	static const char *const meta[FIXTURE_TASK_META][3] = {
	    {"task-0", "family", "standard_workflow"},
	    {"task-0", "locale", "zh-\xe4\xb8\xad\xe6\x96\x87"},
	    {"task-1", "family", "interactive_robustness"},
	};
	for (int i = 0; i < FIXTURE_TASK_META; i++) {
		struct engi_res_task_meta *m = &f->task_meta[i];
		snprintf(m->task_id, sizeof(m->task_id), "%s", meta[i][0]);
		snprintf(m->key, sizeof(m->key), "%s", meta[i][1]);
		snprintf(m->value, sizeof(m->value), "%s", meta[i][2]);
	}
	/* {"pad":"xxxx..."} of config_bytes bytes */
	size_t n = config_bytes < 12 ? 12 : config_bytes;
	f->config = engi_malloc(n + 1);
	memcpy(f->config, "{\"pad\":\"", 8);
	memset(f->config + 8, 'x', n - 10);
	memcpy(f->config + n - 2, "\"}", 3);

	f->meta.tasks = f->tasks;
	f->meta.ntasks = FIXTURE_TASKS;
	f->meta.models = f->models;
	f->meta.nmodels = FIXTURE_MODELS;
	f->meta.conditions = f->conditions;
	f->meta.nconditions = FIXTURE_CONDITIONS;
	f->meta.task_meta = f->task_meta;
	f->meta.ntask_meta = FIXTURE_TASK_META;
	f->meta.sweep_id = "sweep-0001";
	f->meta.planned_cells = 12;
	f->meta.config_json = f->config;
	f->meta.versions_json = "{\"engisweep\":\"0.1.0\",\"hdf5\":\"1.10\"}";
	f->meta.command_line = "engisweep run --suite demo --out results";
}

static inline void fixture_meta_release(struct fixture_meta *f)
{
	engi_free(f->config);
	f->config = NULL;
}

#endif
