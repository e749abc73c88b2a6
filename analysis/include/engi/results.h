/*
 * results.h - a sweep's results as plain tables, the way the analysis sees
 * them. The HDF5 store reads a results file into this struct (and writes its
 * datasets from the same row layouts, so the compound types of /tasks,
 * /models, /conditions, /episodes, /assertions, /metrics and /artifacts are
 * exactly these structs). Other harnesses' CSV files can fill it as well.
 *
 * Strings are fixed-size, NUL-terminated; the sizes are the HDF5 widths,
 * and writing a longer text there is an error (engi_res_copy), never a
 * truncation. Text from CSV input has no length limit: a value that does not
 * fit its field is kept whole in the results' text pool and the field holds
 * a short alias of it (ENGI_RES_LONG, then the decimal index in the pool),
 * the same alias for the same text, so fields still compare equal exactly
 * when their texts do. Readers of a text field call engi_res_str for the
 * whole text. engi_results_init / engi_results_release; the struct owns
 * every array and the pool.
 */
#ifndef ENGI_RESULTS_H
#define ENGI_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "engi/schema.h"

/* first byte of a field that holds the alias of a longer text */
#define ENGI_RES_LONG '\x01'

struct engi_strpool;

struct engi_res_task {
	char id[ENGI_TASK_ID_STR];
	char title[256];
	char domain[64];
	char type[64];
	char interface[32];
	char software[512]; /* comma-separated */
	char hash[65];
	int32_t turns;
	double wall_s;
	char scoring[32]; /* binary, optimization, continuous */
};

struct engi_res_model {
	char name[64];
	char agent[512];    /* replay:PATH names a results file */
	char settings[512]; /* canonical JSON, no secrets */
	double price_in_per_mtok;
	double price_out_per_mtok;
};

struct engi_res_condition {
	char name[64];
	char settings[512]; /* canonical JSON */
};

/* An episode: the fields of engi/schema.h's list, in its order. */
struct engi_res_episode {
	ENGI_EPISODE_FIELDS(ENGI_ROW_MEMBER_)
};

struct engi_res_assertion {
	char cell[ENGI_CELL_STR];
	char name[64];
	char stage[64];
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

/* The keys `report --by` reads from /tasks (and "overall", the one group
 * of all tasks): a task file's metadata may not use them. */
#define ENGI_RES_BUILTIN_KEYS                                                                      \
	"overall", "type", "domain", "interface", "software", "title", "scoring", "turns"

/* Task metadata beyond the /tasks fields, one row per task and key: a task
 * file's `meta` (the results file's /task_meta) or the extra columns of an
 * episodes CSV. A key whose value differs between rows of a task (two rows
 * of a CSV, two results files merged) is not task metadata for that task:
 * value holds the first value, conflict says where they differ. */
struct engi_res_task_meta {
	char task_id[ENGI_TASK_ID_STR];
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
	/* a benchmark's tasks that engisweep refused to run (never planned,
	 * in no denominator), from the frozen configuration: how many (0 when
	 * none or not known), the task source, and "N reason, ..." */
	uint64_t suite_refused;
	char suite_source[32];
	char suite_refused_reasons[512];
	char *sweep_id;		    /* the sweep's id (hash of its cell ids), or NULL */
	struct engi_strpool *texts; /* texts longer than their field */
};

void engi_results_init(struct engi_results *r);
void engi_results_release(struct engi_results *r);

/* The whole text of a field of r's rows: the field itself, or the text its
 * alias names. */
const char *engi_res_str(const struct engi_results *r, const char *field);

/*
 * Sets a field of r's rows (size bytes) to text: copied when it fits (and
 * does not begin with ENGI_RES_LONG), else kept in r's pool and aliased.
 */
int engi_res_set(struct engi_results *r, char *field, size_t size, const char *text,
		 struct engi_error *err);

/*
 * Copies src into a fixed field of size bytes for a file that keeps only
 * the field (the HDF5 store): ENGI_EINVALID "WHAT 'src...' is longer than
 * N bytes" when it does not fit, never a truncation.
 */
int engi_res_copy(char *dst, size_t size, const char *src, const char *what,
		  struct engi_error *err);

#endif
