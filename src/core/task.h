/*
 * task.h - task files (format v1, tasks/SCHEMA.md) and suites.
 *
 * suite_load validates every *.json file of a folder (or one file) into plain
 * structs allocated from the suite's arena, and drops the JSON. It checks the
 * whole suite before returning: the first error names the file and the JSON
 * pointer. A loaded suite is read-only and may be shared by threads.
 * suite_release frees everything, including each verifier's criteria.
 */
#ifndef ENGI_TASK_H
#define ENGI_TASK_H

#include <stddef.h>

#include <regex.h>

#include "arena.h"
#include "engi/error.h"
#include "engi/verify.h"

#define TASK_DOMAIN_MAP(X) X(CAD) X(CAE) X(CAM) X(BIM) X(EDA) X(DCC)
#define TASK_TYPE_MAP(X)                                                                           \
	X(SINGLE, "single")                                                                        \
	X(SELECTION, "selection")                                                                  \
	X(VISION, "vision")                                                                        \
	X(OPTIMIZATION, "optimization")                                                            \
	X(CROSS, "cross")                                                                          \
	X(OPEN, "open")

enum task_type {
#define TASK_TYPE_ENUM(n, s) TASK_##n,
	TASK_TYPE_MAP(TASK_TYPE_ENUM)
#undef TASK_TYPE_ENUM
};

enum task_interface { IFACE_CLI, IFACE_GUI };

const char *task_type_name(int type);
const char *task_interface_name(int iface);

enum step_kind { STEP_RUN, STEP_WRITE_FILE, STEP_WRITE_TEXT, STEP_DONE, STEP_FAIL, STEP_ASK };

struct task_step {
	int kind;
	const char *text; /* command, literal text, summary, reason or question */
	const char *path; /* environment path for writes */
	const char *host; /* absolute host path for STEP_WRITE_FILE */
};

struct task_steps {
	struct task_step *v;
	size_t n;
};

struct task_flawed {
	const char *name;
	struct task_steps steps;
	const char **failing; /* assertion names that must fail */
	size_t nfailing;
};

/* environment.folders (SCHEMA.md): at most this many, each at most
 * TASK_FOLDER_MAX characters. */
#define TASK_FOLDERS_MAX 8
#define TASK_FOLDER_MAX	 200

struct task_input {
	const char *host; /* absolute */
	const char *env;
	int protected_;
};

/* A setup step (SCHEMA.md, `setup`): a command run in the environment
 * after the inputs are in place and before the agent starts. */
#define TASK_SETUP_MAX	     64
#define TASK_SETUP_CMD_MAX   8192
#define TASK_SETUP_TIMEOUT_S 120.0

struct task_setup {
	const char *cmd; /* shell command, run in the working folder */
	int launch;	 /* started in the background and left running */
	double timeout_s;
	int check; /* a nonzero exit or a timeout is a setup failure */
};

struct task_deliverable {
	const char *path;
	unsigned long long max_bytes;
	int required;
};

struct task_resource {
	const char *name;
	int count;
};

/* Interactive scenarios (SCHEMA.md, `interaction`): the simulated user's
 * replies and the assertions checked over the whole episode. Patterns are
 * compiled when the task loads (REG_EXTENDED | REG_ICASE | REG_NOSUB) and
 * freed by suite_release; regexec on them is safe from several threads. */
#define TASK_INTERACTION_MAX 64

struct task_reply {
	const char *reply;
	const char *when; /* pattern as written, NULL: any question */
	regex_t re;
	int compiled;
};

enum interaction_check { ICHECK_ASKED_USER, ICHECK_NO_COMMAND, ICHECK_NO_FILE };

struct task_iassert {
	const char *name;
	int check;
	const char *pattern; /* ICHECK_NO_COMMAND */
	regex_t re;
	int compiled;
	const char *path; /* ICHECK_NO_FILE: environment path */
	int required;
};

/* A scripted follow-up (SCHEMA.md, `followups`): a user message that arrives
 * when the agent ends a turn of the conversation with done, and the
 * verifier that judges the deliverables as they were at that moment (the
 * turn it closes), its assertions named "turnK:NAME". json: the task's JSON
 * with this verifier in place of the task's, for the verifier's child. */
#define TASK_FOLLOWUPS_MAX    8
#define TASK_FOLLOWUP_MSG_MAX 8192

struct task_judge;

struct task_followup {
	const char *message;
	const struct engi_verifier_kind *verifier; /* NULL: the turn is not judged */
	const char *verifier_file;
	void *criteria;
	const char *json;
	struct task_judge *judges; /* of the turn it closes: "turnK:judge:NAME" */
	size_t njudges;
};

/* "@turnK": where a turn's deliverables are kept inside the episode's
 * artifacts folder (a deliverable of a task with follow-ups never starts
 * with '@'). */
#define TASK_TURN_DIR "@turn"

/* Task metadata (SCHEMA.md, `meta`): keys and values as the report groups
 * tasks by them (`report --by KEY`), written to the results' /task_meta.
 * A number or a boolean is kept as its text. */
#define TASK_META_MAX	    32
#define TASK_META_KEY_MAX   63
#define TASK_META_VALUE_MAX 127

struct task_meta {
	const char *key;   /* [a-z][a-z0-9_]*, not a key the report has built in */
	const char *value; /* 1 to TASK_META_VALUE_MAX bytes of UTF-8 */
};

/* Judges (SCHEMA.md, `judges`): a rubric a language model applies to the
 * agent's final message and some deliverables after the verifier, its
 * verdict the assertion "judge:NAME" (episode/llm_judge.h). */
#define TASK_JUDGES_MAX	      16
#define TASK_JUDGE_RUBRIC_MAX 4096
#define TASK_JUDGE_NAME_MAX   (ENGI_NAME_MAX - 1 - 6) /* "judge:" before it */

struct task_judge {
	const char *name;
	const char *rubric;
	const char **inputs; /* deliverable paths (environment paths) */
	size_t ninputs;
	int required;
};

struct task {
	const char *id;
	const char *title;
	const char *file; /* as given, for messages */
	const char *dir;  /* absolute folder of the task file */
	char hash[65];	  /* content: canonical JSON + every referenced file */
	const char *json; /* the task as engisweep's JSON (a benchmark's, translated) */
	const char *domain;
	const char **software;
	size_t nsoftware;
	int type;
	int interface;
	const char *instruction;
	const char **drawings; /* absolute host paths */
	size_t ndrawings;
	struct {
		const char *image;
		const char *workdir; /* absolute guest path, NULL: the backend's */
		/* folders made empty and writable when the environment starts
		 * (absolute guest paths); environment paths may lie inside them */
		const char **folders;
		size_t nfolders;
		int cpus;
		int memory_mb;
		int network;
	} env;
	struct task_input *inputs;
	size_t ninputs;
	struct task_setup *setup;
	size_t nsetup;
	int launches; /* some setup step is a launch */
	int turn_limit;
	int fail_zero; /* on_fail "zero": a declared failure scores 0, unjudged */
	double wall_s;
	double env_s; /* environment time limit, 0: none beyond wall_s */
	struct task_deliverable *deliverables;
	size_t ndeliverables;
	const struct engi_verifier_kind *verifier;
	const char *verifier_file;
	void *criteria;
	struct engi_scoring_spec scoring;
	struct task_steps reference;
	struct task_flawed *flawed;
	size_t nflawed;
	struct task_resource *resources;
	size_t nresources;
	struct task_reply *replies; /* interaction.user */
	size_t nreplies;
	struct task_iassert *iasserts; /* interaction.assert */
	size_t niasserts;
	struct task_followup *followups;
	size_t nfollowups;
	struct task_meta *meta; /* in the file's key order */
	size_t nmeta;
	struct task_judge *judges;
	size_t njudges;
};

/* A task a source could not load, and why (source.h). */
struct task_refusal {
	const char *file;
	int code;	      /* the ENGI_E* code of the failure */
	const char *category; /* the kind of reason, for tables */
	const char *reason;   /* the whole message: file, pointer, what */
};

/* A benchmark snapshot (an environment a task names) and the engisweep
 * image that runs it: `--images FILE`, read by suite_images_read. */
struct suite_image {
	const char *snapshot;
	const char *image;
};

struct suite {
	struct arena arena;
	/* snapshot -> image overrides for benchmark sources (in the arena;
	 * set by suite_load_with from its options) */
	const struct suite_image *images;
	size_t nimages;
	/* a deliverables map file for sources whose tasks do not list their
	 * deliverables (harbor), or NULL */
	const char *deliverables;
	struct task *tasks; /* heap, tasks_alloc slots */
	size_t ntasks, tasks_alloc;
	const char *path;
	const char *source;	      /* the task source that read it (source.h) */
	struct task_refusal *refused; /* only when loaded not strictly */
	size_t nrefused;
};

/* path: a suite of any task source, detected (source.h); strict: the first
 * task that does not load is the error. */
int suite_load(struct suite *s, const char *path, struct engi_error *err);
/* One task in engisweep's JSON (a task's `json`) from file, its paths taken
 * from dir, the task's folder: how a child process gets a task of any
 * source. */
int suite_load_task_json(struct suite *s, const char *file, const char *dir,
			 struct engi_error *err);
void suite_release(struct suite *s);
const struct task *suite_find(const struct suite *s, const char *id);
const struct task_flawed *task_find_flawed(const struct task *t, const char *name);

/* Keeps a stratified subset of the suite's tasks, in place. spec, e.g.
 * "strata=software,type,interface per=4-5 seed=7 all=type:open": group
 * tasks by the strata keys (software is a task's first application), draw
 * MIN to MAX tasks from each group (all when fewer), seeded per group so the
 * draw does not depend on file order; `all=KEY:VALUE` keeps every such task
 * too. *nstrata (may be NULL) gets the number of groups. */
int suite_subset(struct suite *s, const char *spec, size_t *nstrata, struct engi_error *err);
/* Keeps the tasks whose ids a file lists, one per line (blank lines and
 * lines starting with '#' skipped; CR, a BOM and surrounding spaces
 * stripped; repeats counted once), as a benchmark's splits are given.
 * unmatched: listed ids that are no loaded task, when the suite refused
 * some (then they may be refused ones); without refusals an unknown id is
 * the error, naming file and line. */
int suite_select_file(struct suite *s, const char *path, size_t *unmatched, struct engi_error *err);

/* Moves task i of a suite loaded not strictly to its refusals (file,
 * category, reason), after it loaded: a benchmark's task the chosen
 * backend cannot run. -1 when out of memory. */
int suite_refuse_task(struct suite *s, size_t i, const char *category, const char *reason);
#define SUITE_REFUSED_BACKEND "backend cannot run it"

/* The value of metadata key of t, or NULL. */
const char *task_meta_get(const struct task *t, const char *key);

/* The assertion episode.c records for a protected input: "integrity:PATH". */
void task_integrity_name(char *out, size_t cap, const char *env_path);

/* Task t as judged at the end of conversation turn `turn` (1-based) that a
 * follow-up closed: a shallow copy with that follow-up's verifier, binary
 * scoring. Returns 0, or -1 when that turn is not judged. */
int task_turn_view(const struct task *t, size_t turn, struct task *out);

/* The assertion a judge's verdict becomes: "judge:NAME". */
void task_judge_name(char *out, size_t cap, const char *judge);
/* How many of the suite's tasks have judges. */
size_t suite_judged_tasks(const struct suite *s);

/* Default limits from the benchmark papers (tasks/SCHEMA.md, "limits"). */
int task_default_turns(int type, int iface);
#define TASK_DEFAULT_WALL_S 18000.0

#endif
