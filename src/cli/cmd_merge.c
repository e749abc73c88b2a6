/*
 * engisweep merge: several results files (job-array shards, sweeps run in
 * pieces) into one, each cell exactly once. Files whose tasks or models
 * disagree (same task id, other content hash; same model name, other
 * settings) are refused: their cells would not mean the same thing.
 */
#include "cli.h"

#include "engi/alloc.h"
#include "engi/results.h"
#include "engi/verify.h"
#include "fsutil.h"
#include "record.h"
#include "store.h"
#include "stored.h"

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char merge_help[] =
    "usage: engisweep merge -o OUT.h5 RESULTS.h5...\n"
    "\n"
    "Combines results files (job-array shards, continued runs) into one, each\n"
    "cell exactly once. When a cell appears in several files, a scored episode\n"
    "wins over an infrastructure failure, then the one that started last.\n"
    "Refuses files whose tasks (same id, other content) or models (same name,\n"
    "other settings) differ. Task metadata (/task_meta) is carried over; a\n"
    "value two files give differently is kept with the conflict named, and\n"
    "report --by that key refuses it. Traces and artifact digests are carried\n"
    "over; artifact files stay in the folders of the inputs.\n"
    "\n"
    "options:\n"
    "  -o, --out FILE   the merged results file (must not exist)\n"
    "  -h, --help       this text\n";

struct pick {
	const char *cell;
	size_t input, episode;
};

static int cmp_pick(const void *a, const void *b)
{
	return strcmp(((const struct pick *)a)->cell, ((const struct pick *)b)->cell);
}

static int better(const struct engi_res_episode *a, const struct engi_res_episode *b)
{
	int ia = outcome_is_infra(outcome_from_name(a->outcome));
	int ib = outcome_is_infra(outcome_from_name(b->outcome));
	if (ia != ib)
		return ib;
	return a->started_at > b->started_at;
}

/* A row of some input's /task_meta, and where it came from; as merged,
 * the row itself. */
struct meta_ref {
	const struct engi_res_task_meta *m;
	size_t input, seq;
	struct engi_res_task_meta row;
};

static int cmp_meta_key(const void *a, const void *b)
{
	const struct meta_ref *x = a, *y = b;
	int k = strcmp(x->m->task_id, y->m->task_id);
	if (!k)
		k = strcmp(x->m->key, y->m->key);
	return k ? k : (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_meta_seq(const void *a, const void *b)
{
	const struct meta_ref *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The union of the tasks' metadata: one row per task and key, in the order
 * the inputs first give them; a value that differs between inputs is kept
 * as the first input's, with the conflict named (report --by then refuses
 * the key, as for a CSV). */
static int union_task_meta(struct stored *in, size_t nin, struct engi_results *u,
			   struct engi_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < nin; i++)
		n += in[i].res.ntask_meta;
	struct meta_ref *refs = engi_calloc(n ? n : 1, sizeof(*refs));
	u->task_meta = engi_calloc(n ? n : 1, sizeof(*u->task_meta));
	if (!refs || !u->task_meta) {
		engi_free(refs);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < nin; i++)
		for (size_t j = 0; j < in[i].res.ntask_meta; j++, k++)
			refs[k] =
			    (struct meta_ref){.m = &in[i].res.task_meta[j], .input = i, .seq = k};
	qsort(refs, n, sizeof(*refs), cmp_meta_key);
	/* each (task, key) once: its first row, told of the later values */
	size_t kept = 0;
	for (size_t r = 0; r < n; r++) {
		const struct engi_res_task_meta *m = refs[r].m;
		struct meta_ref *have = kept ? &refs[kept - 1] : NULL;
		if (!have || strcmp(have->row.task_id, m->task_id) ||
		    strcmp(have->row.key, m->key)) {
			refs[kept] = refs[r];
			refs[kept].row = *m;
			kept++;
			continue;
		}
		if (have->row.conflict[0])
			continue;
		if (m->conflict[0])
			memcpy(have->row.conflict, m->conflict, sizeof(have->row.conflict));
		else if (strcmp(have->row.value, m->value))
			snprintf(have->row.conflict, sizeof(have->row.conflict),
				 "task '%.60s' has %.30s '%.30s' in '%.50s' and '%.30s' in '%.50s'",
				 m->task_id, m->key, m->value, in[refs[r].input].path,
				 have->row.value, in[have->input].path);
	}
	qsort(refs, kept, sizeof(*refs), cmp_meta_seq);
	for (size_t r = 0; r < kept; r++)
		u->task_meta[r] = refs[r].row;
	u->ntask_meta = kept;
	engi_free(refs);
	return 0;
}

/* Union of the metadata tables; disagreement is an error. */
static int union_meta(struct stored *in, size_t nin, struct engi_results *u, struct engi_error *err)
{
	size_t nt = 0, nm = 0, nc = 0;
	for (size_t i = 0; i < nin; i++) {
		nt += in[i].res.ntasks;
		nm += in[i].res.nmodels;
		nc += in[i].res.nconditions;
	}
	u->tasks = engi_calloc(nt ? nt : 1, sizeof(*u->tasks));
	u->models = engi_calloc(nm ? nm : 1, sizeof(*u->models));
	u->conditions = engi_calloc(nc ? nc : 1, sizeof(*u->conditions));
	if (!u->tasks || !u->models || !u->conditions)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < nin; i++) {
		const struct engi_results *r = &in[i].res;
		for (size_t t = 0; t < r->ntasks; t++) {
			size_t k = 0;
			while (k < u->ntasks && strcmp(u->tasks[k].id, r->tasks[t].id))
				k++;
			if (k == u->ntasks)
				u->tasks[u->ntasks++] = r->tasks[t];
			else if (strcmp(u->tasks[k].hash, r->tasks[t].hash))
				RAISE(err, ENGI_EMISMATCH,
				      "'%s' and an earlier input define task '%s' differently "
				      "(content hash %.12s vs %.12s): their cells are not the same",
				      in[i].path, r->tasks[t].id, r->tasks[t].hash,
				      u->tasks[k].hash);
		}
		for (size_t m = 0; m < r->nmodels; m++) {
			size_t k = 0;
			while (k < u->nmodels && strcmp(u->models[k].name, r->models[m].name))
				k++;
			if (k == u->nmodels)
				u->models[u->nmodels++] = r->models[m];
			else if (strcmp(u->models[k].settings, r->models[m].settings))
				RAISE(err, ENGI_EMISMATCH,
				      "'%s' and an earlier input define model '%s' differently (%s "
				      "vs %s)",
				      in[i].path, r->models[m].name, r->models[m].settings,
				      u->models[k].settings);
		}
		for (size_t c = 0; c < r->nconditions; c++) {
			size_t k = 0;
			while (k < u->nconditions &&
			       strcmp(u->conditions[k].name, r->conditions[c].name))
				k++;
			if (k == u->nconditions)
				u->conditions[u->nconditions++] = r->conditions[c];
			else if (strcmp(u->conditions[k].settings, r->conditions[c].settings))
				RAISE(err, ENGI_EMISMATCH,
				      "'%s' and an earlier input define condition '%s' differently",
				      in[i].path, r->conditions[c].name);
		}
	}
	return 0;
}

static int do_merge(const char *out, char **paths, size_t nin, struct engi_error *err)
{
	struct stored *in = engi_calloc(nin, sizeof(*in));
	struct engi_results u;
	engi_results_init(&u);
	struct pick *picks = NULL;
	struct store *st = NULL;
	char *cfg = NULL;
	int rc = 0;
	if (!in)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	size_t total = 0;
	for (size_t i = 0; i < nin && rc == 0; i++) {
		rc = stored_open(&in[i], paths[i], err);
		total += in[i].res.nepisodes;
	}
	if (rc == 0)
		rc = union_meta(in, nin, &u, err);
	if (rc == 0)
		rc = union_task_meta(in, nin, &u, err);
	/* each cell once: sort every episode by cell, keep the best of each run */
	size_t npicks = 0, dropped = 0;
	if (rc == 0 && !(picks = engi_calloc(total ? total : 1, sizeof(*picks))))
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < nin; i++)
		for (size_t e = 0; e < in[i].res.nepisodes; e++)
			picks[npicks++] = (struct pick){in[i].res.episodes[e].cell, i, e};
	if (rc == 0)
		qsort(picks, npicks, sizeof(*picks), cmp_pick);
	size_t kept = 0;
	for (size_t k = 0; rc == 0 && k < npicks; k++) {
		if (kept && !strcmp(picks[kept - 1].cell, picks[k].cell)) {
			const struct engi_res_episode *a =
			    &in[picks[k].input].res.episodes[picks[k].episode];
			const struct engi_res_episode *b =
			    &in[picks[kept - 1].input].res.episodes[picks[kept - 1].episode];
			if (better(a, b))
				picks[kept - 1] = picks[k];
			dropped++;
			continue;
		}
		picks[kept++] = picks[k];
	}
	/* planned cells: one sweep id counted once (continued runs), others added */
	uint64_t planned = 0;
	json_t *from = json_array();
	for (size_t i = 0; rc == 0 && i < nin; i++) {
		int seen = 0;
		for (size_t j = 0; j < i; j++)
			seen |= in[j].res.sweep_id && in[i].res.sweep_id &&
				!strcmp(in[j].res.sweep_id, in[i].res.sweep_id);
		if (!seen)
			planned += in[i].res.planned_cells;
		json_array_append_new(from, json_pack("{s:s,s:s?,s:I}", "path", paths[i],
						      "sweep_id", in[i].res.sweep_id, "episodes",
						      (json_int_t)in[i].res.nepisodes));
	}
	if (planned < kept)
		planned = kept;
	json_t *cj = json_pack("{s:o}", "merged_from", from);
	/* a condition grid every input declares alike stays declared */
	json_t *grid = NULL;
	for (size_t i = 0; i < nin; i++) {
		json_t *c1 =
		    in[i].res.config_json ? json_loads(in[i].res.config_json, 0, NULL) : NULL;
		json_t *g = json_object_get(c1, "grid");
		if (i == 0 && g)
			grid = json_incref(g);
		else if (grid && (!g || !json_equal(grid, g))) {
			json_decref(grid);
			grid = NULL;
		}
		json_decref(c1);
		if (!grid)
			break;
	}
	if (cj && grid)
		json_object_set_new(cj, "grid", grid);
	else
		json_decref(grid);
	cfg = cj ? json_dumps(cj, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(cj);
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s.part", out);
	if (rc == 0) {
		char sid[80];
		snprintf(sid, sizeof(sid), "merged-%zu-inputs", nin);
		struct store_meta meta = {.tasks = u.tasks,
					  .ntasks = u.ntasks,
					  .models = u.models,
					  .nmodels = u.nmodels,
					  .conditions = u.conditions,
					  .nconditions = u.nconditions,
					  .task_meta = u.task_meta,
					  .ntask_meta = u.ntask_meta,
					  .sweep_id = sid,
					  .planned_cells = planned,
					  .config_json = cfg ? cfg : "{}",
					  .versions_json = "{}",
					  .command_line = "engisweep merge"};
		rc = store_create(&st, tmp, &meta, err);
	}
	for (size_t k = 0; rc == 0 && k < kept; k++) {
		struct record r;
		rc = stored_record(&in[picks[k].input], picks[k].episode, &r, err);
		if (rc == 0)
			rc = store_append(st, &r, err);
		if (rc == 0 && k % 256 == 255)
			rc = store_flush(st, err);
		record_release(&r);
	}
	rc = stored_finish(&st, tmp, out, rc, err);
	if (rc == 0)
		fprintf(stderr,
			"engisweep: merged %zu files: %zu cells (%zu duplicate records dropped) "
			"into %s\n",
			nin, kept, dropped, out);
	free(cfg);
	engi_free(picks);
	for (size_t i = 0; i < nin; i++)
		stored_close(&in[i]);
	/* the union holds copies of rows, not pointers into the inputs */
	engi_results_release(&u);
	engi_free(in);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'h':
			fputs(merge_help, stdout);
			return 0;
		default:
			fputs(merge_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (!out || optind >= argc) {
		cli_errorf("merge: needs -o OUT.h5 and at least one results file");
		fputs(merge_help, stderr);
		return EXIT_USAGE;
	}
	if (fs_path_is_file(out)) {
		cli_errorf("merge: '%s' exists; choose a new output file", out);
		return EXIT_USAGE;
	}
	struct engi_error err;
	engi_error_init(&err);
	int rc = do_merge(out, argv + optind, (size_t)(argc - optind), &err);
	if (rc < 0) {
		cli_error(&err);
		return rc == ENGI_EMISMATCH || rc == ENGI_EPARSE || rc == ENGI_EIO ? EXIT_USAGE
										   : EXIT_FAILED;
	}
	return 0;
}
