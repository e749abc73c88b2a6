/*
 * results.h - a sweep's results as plain tables, the way the analysis sees
 * them. The HDF5 store reads a results file into this struct (and writes its
 * datasets from the same row layouts, so the compound types of /tasks,
 * /models, /conditions, /episodes, /assertions, /metrics and /artifacts are
 * exactly these structs). Other harnesses' CSV files can fill it as well.
 *
 * Strings are fixed-size, NUL-terminated. engi_results_init /
 * engi_results_release; the struct owns every array.
 */
#ifndef ENGI_RESULTS_H
#define ENGI_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#define ENGI_CELL_STR 17

struct engi_res_task {
	char id[64];
	char title[128];
	char domain[8];
	char type[16];
	char interface[8];
	char software[128]; /* comma-separated */
	char hash[65];
	int32_t turns;
	double wall_s;
	char scoring[16]; /* binary, optimization, continuous */
};

struct engi_res_model {
	char name[64];
	char agent[64];
	char settings[512]; /* canonical JSON, no secrets */
	double price_in_per_mtok;
	double price_out_per_mtok;
};

struct engi_res_condition {
	char name[64];
	char settings[512]; /* canonical JSON */
};

struct engi_res_episode {
	char cell[ENGI_CELL_STR];
	char task_id[64];
	char model[64];
	char condition[64];
	int32_t trial;
	char outcome[16];
	int32_t attempts;
	int32_t success;
	int32_t feasible;
	double score;
	double quality;
	int32_t turns;
	int64_t tokens_in;
	int64_t tokens_out;
	double cost_usd;
	double wall_s;
	double env_s;
	double model_s;
	double verify_s;
	double started_at;
	int32_t rank;
	char host[64];
	char run_id[40];
	char message[256];
	char infra[32];	   /* why an infrastructure outcome was not run, else "" */
	char version[32];  /* engisweep version */
	char verifier[64]; /* "kind@version" that judged it */
};

struct engi_res_assertion {
	char cell[ENGI_CELL_STR];
	char name[64];
	char stage[32];
	char state[16];
	int32_t required;
	double value;
	double expected;
	char detail[256];
};

struct engi_res_metric {
	char cell[ENGI_CELL_STR];
	char name[64];
	double value;
};

struct engi_res_artifact {
	char cell[ENGI_CELL_STR];
	char path[256];
	uint64_t bytes;
	char sha256[65];
	char note[128];
};

/* Task metadata beyond the /tasks fields: the extra columns of an episodes
 * CSV, one row per task and column. A column whose value differs between
 * rows of a task is not task metadata for that task: value holds the first
 * row's, conflict says where they differ. Not an HDF5 dataset. */
struct engi_res_task_meta {
	char task_id[64];
	char key[64];
	char value[128];
	char conflict[256]; /* "" when the value is the task's */
};

struct engi_results {
	struct engi_res_task *tasks;
	size_t ntasks;
	struct engi_res_model *models;
	size_t nmodels;
	struct engi_res_condition *conditions;
	size_t nconditions;
	struct engi_res_episode *episodes;
	size_t nepisodes;
	struct engi_res_assertion *assertions;
	size_t nassertions;
	struct engi_res_metric *metrics;
	size_t nmetrics;
	struct engi_res_artifact *artifacts;
	size_t nartifacts;
	struct engi_res_task_meta *task_meta;
	size_t ntask_meta;
	/* number of cells the sweep planned (0 when unknown), so that missing
	 * episodes are reported instead of silently dropped */
	uint64_t planned_cells;
	char *config_json; /* frozen configuration, or NULL */
	char *sweep_id;    /* the sweep's id (hash of its cell ids), or NULL */
};

void engi_results_init(struct engi_results *r);
void engi_results_release(struct engi_results *r);

#endif
