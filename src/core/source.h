/*
 * source.h - task sources: adapters that read a benchmark's tasks as it
 * distributes them into struct suite.
 *
 * A source is a descriptor and an ops table, like the backends: probe says
 * how sure it is that a path is its own (0: not mine), load reads every task
 * of the path into an initialised suite. A task either loads or is refused
 * with a reason (the file, and the JSON pointer where there is one): in
 * strict mode the first refusal is the error (run, plan and validate), else
 * refusals are kept in suite->refused for `engisweep inspect SUITE`. A new
 * source is one file defining its descriptor and one line in source.c's
 * registry.
 */
#ifndef ENGI_SOURCE_H
#define ENGI_SOURCE_H

#include "engi/error.h"
#include "task.h"

struct task_source_ops {
	/* 0: not this source's; otherwise how sure, up to 100 */
	int (*probe)(const char *path);
	int (*load)(struct suite *s, const char *path, int strict, struct engi_error *err);
};

struct task_source {
	const char *name;     /* --source NAME */
	const char *summary;  /* one line for inspect */
	const char *supports; /* what of the format it reads, for inspect */
	const struct task_source_ops *ops;
	/* a benchmark's own tree: its tasks that engisweep cannot run are
	 * refused with their reasons and the others run, even where a strict
	 * load is asked for (a typo in engisweep's own format stays an error) */
	int partial;
	/* its tasks do not list their deliverables: it reads a deliverables
	 * map (suite_load_opts.deliverables) */
	int takes_deliverables;
};

/* The registry, NULL-ended. */
const struct task_source *const *task_sources(void);
/* NULL with a message listing the names when unknown. */
const struct task_source *task_source_lookup(const char *name, struct engi_error *err);
/* The source whose probe is surest of path; NULL with a message if none. */
const struct task_source *task_source_detect(const char *path, struct engi_error *err);

/* Loads path with the named source (NULL: detected) into s. strict: the
 * first refused task is the error; else refusals are in s->refused. */
int suite_load_from(struct suite *s, const char *path, const char *source, int strict,
		    struct engi_error *err);

/* suite_load_from with an images map for benchmark sources (copied into
 * the suite). */
struct suite_load_opts {
	const char *source; /* NULL: detected */
	int strict;
	const struct suite_image *images;
	size_t nimages;
	/* a deliverables map (a JSON file: task name -> deliverables) for
	 * sources whose tasks do not list them; refused by the others */
	const char *deliverables;
};
int suite_load_with(struct suite *s, const char *path, const struct suite_load_opts *o,
		    struct engi_error *err);

/* An images map file: a JSON object of snapshot name -> engisweep image
 * name (refused: anything else, such as a path to a qcow2 file). The
 * strings live in arena. */
int suite_images_read(const char *path, struct arena *a, struct suite_image **out, size_t *n,
		      struct engi_error *err);
/* The image for a snapshot: the map's, else dflt (may be NULL). */
const char *suite_image_for(const struct suite *s, const char *snapshot, const char *dflt);

/* Refusals by reason: how many share refusal i's category when i is the
 * first of them, 0 for the others (so a loop over i lists each reason
 * once, in the order first met). */
size_t suite_refused_by(const struct suite *s, size_t i);

/* For sources translating one task: records the reason a task is refused
 * in r (any struct with char arrays category and msg: the kind of reason,
 * the message) and returns -1 from the calling function. */
#define SUITE_REFUSE(r, cat, ...)                                                                  \
	do {                                                                                       \
		snprintf((r)->category, sizeof((r)->category), "%s", cat);                         \
		snprintf((r)->msg, sizeof((r)->msg), __VA_ARGS__);                                 \
		return -1;                                                                         \
	} while (0)

/* For sources, what to do with one task file once it was tried: rc 0, it
 * loaded (0); rc < 0 and no category, engisweep's own task rules refused
 * it (e's message; ENGI_ENOMEM is the error); else it was refused for
 * msg (prefixed with file unless msg_has_file). A refusal is the error when
 * strict, else recorded (suite_refuse). */
int suite_settle_file(struct suite *s, const char *file, int rc, const char *category,
		      const char *msg, int msg_has_file, const struct engi_error *e, int strict,
		      struct engi_error *err);

/* For sources: records a refused task in s: its file, the kind of reason
 * (what inspect tabulates: "unknown field", "evaluator not supported", ...)
 * and the whole message. */
int suite_refuse(struct suite *s, const char *file, int code, const char *category,
		 const char *reason);

/* For sources that translate their format into engisweep's task JSON
 * (tasks/SCHEMA.md): parses root (borrowed) into a new task of s, file
 * naming it in messages, relative paths resolved against dir (absolute).
 * Errors name file and JSON pointer; a repeated id is one. */
typedef struct json_t json_t;
int suite_add_json(struct suite *s, const char *file, const char *dir, json_t *root,
		   struct engi_error *err);

extern const struct task_source task_source_native;
extern const struct task_source task_source_engiworld;
extern const struct task_source task_source_structureclaw;
extern const struct task_source task_source_harbor;

/* An EngiWorld task id, <category>--<cli|gui>--<folder>--<task>--<os>
 * (the folder may itself hold "--": several applications). */
struct engiworld_id {
	char category[40];   /* as the id writes it */
	const char *current; /* the category's name now (the id's may be an earlier one) */
	int legacy;	     /* the id writes an earlier name */
	const char *type;    /* engisweep's task type of the category */
	char interface[4];
	char folder[96];
	char task[32]; /* task-NN, or task-NN-suffix */
	char os[8];    /* ubuntu or windows */
};
/* 0 when id is one, -1 else. */
int source_engiworld_id(const char *id, struct engiworld_id *out);

#endif
