/*
 * matrix.h - the sweep matrix: tasks × models × trials × conditions.
 *
 * A model is anything that acts: a built-in agent (reference, noop,
 * flawed:NAME) or a language model described in models.json. A condition is
 * a named set of settings (an ablation arm). A cell is one episode; its id is
 * a hash of semantic fields only (task id and content hash, model name and
 * settings, trial, condition name and settings), never of host, port, job or
 * time, so the same sweep has the same cell ids everywhere.
 *
 * matrix_build expands the product (skipping flawed:NAME for tasks without
 * that variant) and predicts each cell's duration and API cost; cells are
 * ordered longest predicted first. Everything lives in the matrix's arena.
 */
#ifndef ENGI_MATRIX_H
#define ENGI_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "engi/error.h"
#include "engi/schema.h"
#include "task.h"

struct provider_config; /* src/provider/provider.h */

struct model {
	const char *name;
	/* where it was defined, for messages: "FILE: /models/I", or NULL for
	 * --agents */
	const char *origin;
	const char *agent;    /* agent spec: reference, noop, flawed:NAME, model */
	const char *settings; /* canonical JSON of the semantic settings */
	const char *entry;    /* the whole models.json entry as JSON, or NULL */
	/* the entry as its agent parsed it, once, at episode_preflight (the
	 * agent 'model': its provider settings), or NULL; sweepdef_release
	 * frees it with provider_free */
	struct provider_config *provider;
	void (*provider_free)(struct provider_config *c);
	double price_in_per_mtok, price_out_per_mtok;
	int max_concurrent; /* 0: unlimited */
	double budget_usd;  /* 0: none */
	double est_s_per_turn;
	double est_tokens_in_per_turn, est_tokens_out_per_turn;
};

/* The keys of a condition's settings (cond_settings[] below), and their
 * bits in struct cond_settings's `set`. */
enum cond_key {
	COND_HISTORY_TURNS,
	COND_TOOLS,
	COND_IMAGE_TOOL,
	COND_SCREEN_SCALE,
	COND_DRAWINGS,
	COND_NKEYS
};
#define COND_SET(key) (1u << (key))
/* tools: in the order of the model agent's tool modes (provider.h) */
enum cond_tools { COND_TOOLS_NATIVE, COND_TOOLS_TEXT, COND_TOOLS_ENGIWORLD };
/* drawings: how a task's drawings reach the agent */
enum cond_drawings { DRAWINGS_MESSAGE, DRAWINGS_NONE, DRAWINGS_FILES };

/* A condition's settings as read once, where the condition is defined
 * (sweepdef_add_condition, which checks each against cond_settings[]):
 * a field whose bit is not in `set` holds its default. */
struct cond_settings {
	unsigned set;	     /* COND_SET(key) of each key given */
	int history_turns;   /* 1 to 1000000; overrides the model entry's */
	int tools;	     /* enum cond_tools; overrides the model entry's */
	int image_tool;	     /* 0 or 1; overrides the model entry's */
	double screen_scale; /* the scale of GUI observations, (0, 1]; 1.0 */
	int drawings;	     /* enum cond_drawings; DRAWINGS_MESSAGE */
};
/* Nothing set: every field at its default. */
void cond_settings_init(struct cond_settings *s);

struct condition {
	const char *name;
	/* canonical JSON of the settings: what the cell id hashes and the
	 * results file and journal store */
	const char *settings;
	struct cond_settings set; /* the same, parsed: what episodes and agents read */
};

struct cell {
	char id[ENGI_CELL_STR];
	uint32_t task, model, cond;
	int32_t trial;
	double pred_s;
	double pred_cost_usd;
};

/* Measured (task, model) durations and costs from an earlier results file. */
struct history_row {
	const char *task_id;
	const char *model;
	double wall_s;
	double cost_usd;
};

struct sweepdef {
	struct arena arena;
	struct model *models;
	size_t nmodels;
	struct condition *conds;
	size_t nconds;
	int trials;
	/* with --grid: {"axes": [{"axis", "values"}], "family": [{"axis", "a",
	 * "b"}]}: each condition against the one that differs from it only in
	 * taking its axis's first value (what compare --axis grid tests) */
	const char *grid_json;
};

/*
 * The settings a condition can change (-c NAME:key=value, --grid AXIS=...):
 * one table, read by the check of every condition before anything runs,
 * which fills the condition's struct cond_settings, and by the check of
 * models.json entries (history_turns, tools and image_tool override the
 * entry's own, so the entry's are checked against it too). Consumers read
 * the struct: episode.c screen_scale and drawings, the model agent drawings
 * and the three overrides.
 */
typedef struct json_t json_t;
struct cond_setting {
	const char *key;
	enum cond_key id;
	const char *expect; /* the valid values, for messages */
	/* v into its field of s, its bit set: 0; -1 when v is not valid for it */
	int (*read)(const json_t *v, struct cond_settings *s);
	int overrides_model; /* replaces the models.json field of that name */
};
extern const struct cond_setting cond_settings[]; /* ends with key NULL */
const struct cond_setting *cond_setting_find(const char *key);
/* A models.json error at FIELD of the entry (origin "FILE: /models/I"):
 * "ORIGIN/FIELD: EXPECTED, found <kind> (<value>)" when the field is there. */
int model_field_error(struct engi_error *err, int code, const char *origin, const json_t *entry,
		      const char *field, const char *expected);

void sweepdef_init(struct sweepdef *d);
void sweepdef_release(struct sweepdef *d);
/* Adds built-in agents from "reference,noop,flawed:x". */
int sweepdef_add_agents(struct sweepdef *d, const char *list, struct engi_error *err);
/* Adds models from a models.json file ({"models": [...]}). */
int sweepdef_load_models(struct sweepdef *d, const char *path, struct engi_error *err);
/* Adds a condition from "NAME" or "NAME:key=value,key=value"; every key
 * must be one of cond_settings, with a value valid for it. */
int sweepdef_add_condition(struct sweepdef *d, const char *spec, struct engi_error *err);

/* Adds the cartesian product of condition axes, each "AXIS=V1,V2,...", as
 * conditions named "AXIS-V1_AXIS2-W1" with settings {"AXIS": V1, ...};
 * the axes are settings of cond_settings, each value valid for its axis. */
int sweepdef_add_grid(struct sweepdef *d, const char *const *axes, size_t naxes,
		      struct engi_error *err);

struct matrix {
	struct arena arena;
	struct cell *cells;
	size_t ncells;
	char sweep_id[65]; /* hash of all cell ids, in id order */
	size_t skipped;	   /* flawed:NAME pairs without that variant */
};

int matrix_build(struct matrix *m, const struct suite *s, const struct sweepdef *d,
		 const struct history_row *hist, size_t nhist, struct engi_error *err);
/* Validation runs: per task, reference + noop + every flawed variant, one
 * trial; models are added to d as needed. */
int matrix_build_validation(struct matrix *m, const struct suite *s, struct sweepdef *d,
			    struct engi_error *err);
/* Keeps the cells whose place in cell-id order is k modulo n (a static
 * share, as a job array would take it); the sweep id becomes the share's. */
int matrix_keep_shard(struct matrix *m, unsigned k, unsigned n, struct engi_error *err);
void matrix_release(struct matrix *m);
/* Index of a cell id, or -1. Linear in cells after the first call builds
 * nothing: callers that need many lookups sort their own index. */
long matrix_find(const struct matrix *m, const char *id);

void cell_compute_id(const struct task *t, const struct model *mo, const struct condition *c,
		     int trial, char id[ENGI_CELL_STR]);

#endif
