/*
 * backend.h - where an episode runs: a clean environment per episode that
 * can run commands and move files in and out.
 *
 * A backend is a descriptor (name, capabilities, size of its private state,
 * ops table) in a static registry. backend_start allocates a struct
 * backend_env with the backend's private state and starts the environment;
 * backend_stop tears it down and frees everything, so nothing survives from
 * one episode to the next. Callers use the backend_* wrappers, never the ops
 * directly; an op a backend lacks answers ENGI_ENOTSUP naming the backend.
 *
 * Every call blocks. Errors: ENGI_EENV when the environment itself failed
 * (crashed, unreachable): the runner turns that into outcome env_crash and
 * retries; other codes are about the request (bad path, over a cap).
 * One env is used by one thread at a time.
 */
#ifndef ENGI_BACKEND_H
#define ENGI_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"

enum backend_caps {
	BACKEND_CAP_EXEC = 1u << 0,
	BACKEND_CAP_FILES = 1u << 1,
	BACKEND_CAP_SCREEN = 1u << 2,
	BACKEND_CAP_INPUT = 1u << 3,
	BACKEND_CAP_ISOLATED = 1u << 4, /* a VM: the agent cannot touch the host */
	BACKEND_CAP_WORKDIR = 1u << 5,	/* honours env_spec.workdir */
	/* exec_opts.detach: a command started in the background outlives
	 * its exec (a task's setup step `launch`) */
	BACKEND_CAP_DETACH = 1u << 6,
	BACKEND_CAP_FOLDERS = 1u << 7, /* honours env_spec.folders */
};

/* The most folders an env_spec may ask for, and the longest one. */
#define BACKEND_FOLDERS_MAX 8
#define BACKEND_FOLDER_MAX  255

struct env_spec {
	const char *image;
	int cpus;
	int memory_mb;
	int network;
	const char *work_root; /* a host folder the backend may use */
	/* the working folder in the guest, absolute (NULL: the backend's);
	 * only for backends with BACKEND_CAP_WORKDIR */
	const char *workdir;
	/* guest folders (absolute, none inside another or the working folder)
	 * made empty and writable at start; environment paths may be absolute
	 * inside them. Only for backends with BACKEND_CAP_FOLDERS */
	const char *const *folders;
	size_t nfolders;
	int detach;	  /* the task starts background commands (exec_opts.detach) */
	const char *name; /* unique per episode attempt, safe as a file name */
	const char *key;  /* "TASK/MODEL", the same for every trial (or NULL) */
};

struct exec_opts {
	double timeout_s;
	size_t out_cap;		  /* bytes of output kept; the rest is counted, dropped */
	int (*cancel)(void *ctx); /* polled; non-zero kills the command */
	void *cancel_ctx;
	/* start the command in a session of its own, its input and output
	 * away from the caller, and return at once (exit 0 when it started);
	 * it runs on after the exec. BACKEND_CAP_DETACH only. */
	int detach;
};

struct exec_result {
	int exit_code; /* -1 when killed */
	int timed_out;
	int cancelled;
	int term_signal; /* 0 unless killed by a signal */
	char *out;	 /* stdout and stderr interleaved, NUL-terminated */
	size_t out_len;
	uint64_t out_total; /* bytes the command wrote, kept or not */
	double wall_s;
};

void backend_exec_result_release(struct exec_result *r);

struct backend_env;

struct backend_ops {
	int (*start)(struct backend_env *env, const struct env_spec *spec, struct engi_error *err);
	int (*exec)(struct backend_env *env, const char *command, const struct exec_opts *o,
		    struct exec_result *r, struct engi_error *err);
	int (*put)(struct backend_env *env, const void *data, size_t len, const char *env_path,
		   struct engi_error *err);
	int (*get)(struct backend_env *env, const char *env_path, const char *host_path,
		   uint64_t max_bytes, uint64_t *bytes, struct engi_error *err);
	int (*screenshot)(struct backend_env *env, double scale, unsigned char **png, size_t *len,
			  struct engi_error *err);
	int (*input)(struct backend_env *env, const char *event_json, struct engi_error *err);
	/* Freezes (pause 1) or thaws the environment while the agent waits for
	 * its model, so environment time excludes model time. Optional. */
	int (*pause)(struct backend_env *env, int pause, struct engi_error *err);
	/* Environment events since the last call (a JSON array, engi_free), or
	 * NULL. Optional. */
	char *(*events)(struct backend_env *env);
	/* Checks (and readies, e.g. a saved VM state) what starting spec needs,
	 * once before a sweep. Optional; no env exists yet. */
	int (*prepare)(const struct env_spec *spec, struct engi_error *err);
	void (*stop)(struct backend_env *env);
};

struct backend_desc {
	const char *name;
	const char *summary;
	unsigned caps;
	size_t priv_size;
	const struct backend_ops *ops; /* NULL: not built into this binary */
	const char *not_built_hint;
};

struct backend_env {
	const struct backend_desc *desc;
	void *priv;
};

/* NULL with a message listing valid names, or saying it is not built. */
const struct backend_desc *backend_lookup(const char *name, struct engi_error *err);
const struct backend_desc *const *backend_all(void);
/* The backends this binary was configured without (ENGI_QEMU=OFF: qemu),
 * each with its not_built_hint; backend_lookup answers ENGI_ENOTSUP for them. */
const struct backend_desc *const *backend_not_built(void);

int backend_start(const struct backend_desc *d, const struct env_spec *spec,
		  struct backend_env **out, struct engi_error *err);
int backend_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		 struct exec_result *r, struct engi_error *err);
int backend_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		struct engi_error *err);
int backend_get(struct backend_env *env, const char *env_path, const char *host_path,
		uint64_t max_bytes, uint64_t *bytes, struct engi_error *err);
/*
 * An image file of the environment for a model (the read_image tool):
 * fetched like a deliverable (backend_get: at most BACKEND_IMAGE_FILE_CAP
 * bytes, no links) through a scratch file in scratch_dir, then fitted by
 * screen_image_fit to BACKEND_IMAGE_SIDE_MAX pixels and
 * BACKEND_IMAGE_BYTES_MAX bytes. *b64 is the image, base64 (engi_free);
 * note says what it is ("'plot.png': image/png, 3120 bytes, 640x480").
 * Errors other than ENGI_EENV and ENGI_ENOMEM are about the file and are
 * for the agent to read.
 */
#define BACKEND_IMAGE_FILE_CAP	((uint64_t)32 << 20)
#define BACKEND_IMAGE_SIDE_MAX	1568
#define BACKEND_IMAGE_BYTES_MAX ((size_t)3 << 20)
int backend_read_image(struct backend_env *env, const char *env_path, const char *scratch_dir,
		       char **b64, char *note, size_t note_len, struct engi_error *err);
int backend_screenshot(struct backend_env *env, double scale, unsigned char **png, size_t *len,
		       struct engi_error *err);
int backend_input(struct backend_env *env, const char *event_json, struct engi_error *err);
/* No-ops (0, NULL) for backends without them. */
int backend_pause(struct backend_env *env, int pause, struct engi_error *err);
char *backend_events(struct backend_env *env);
/* Whether the backend can give an episode what spec asks (a working
 * folder, commands left running): ENGI_EINVALID saying why, if not. */
int backend_can_run(const struct backend_desc *d, const struct env_spec *spec,
		    struct engi_error *err);
int backend_prepare(const struct backend_desc *d, const struct env_spec *spec,
		    struct engi_error *err);
/*
 * env_spec.folders as a backend keeps them for the episode.
 * backend_folders_copy checks them (at most BACKEND_FOLDERS_MAX absolute
 * paths of [A-Za-z0-9._/-] without '.', '..' or empty components, so none
 * needs quoting in a shell): ENGI_EINVALID if not. backend_folders_find
 * takes an absolute environment path: the index of the folder it lies
 * strictly inside, *rest what follows that folder's '/' (a safe relative
 * path); ENGI_EINVALID saying why when it lies in none.
 */
struct backend_folders {
	char path[BACKEND_FOLDERS_MAX][BACKEND_FOLDER_MAX + 1];
	size_t n;
};
int backend_folders_copy(struct backend_folders *f, const struct env_spec *spec,
			 struct engi_error *err);
int backend_folders_find(const struct backend_folders *f, const char *env_path, const char **rest,
			 struct engi_error *err);
/* Stops the environment and frees env; *env becomes NULL. NULL is fine. */
void backend_stop(struct backend_env **env);

/*
 * Runs the program so describes (its output and errors on a pipe, kept up
 * to o->out_cap) in a process group of its own until it ends, its time
 * limit passes or o->cancel says so; the group is killed then, and when
 * the program ends, so that nothing it started outlives it. Fills r (the
 * caller releases it). For backends that run their commands as host
 * programs (local: bwrap; podman: its client).
 */
struct spawn_opts;
int backend_run_captured(struct spawn_opts *so, const struct exec_opts *o, struct exec_result *r,
			 struct engi_error *err);

/*
 * The local backend's sandbox (local.c: bubblewrap namespaces around every
 * command). backend_local_sandbox probes it once per process: 1 when it
 * works here, else 0; why says which (the bwrap found, or what failed).
 * Where it is unavailable, local episodes fail to start unless
 * backend_local_allow_unsandboxed(1) let them run directly on the host.
 * backend_local_hide names a host path (results folder, suite, task
 * folder) the sandbox must not show even where it lies inside the system
 * folders it shows (an error only past 64 such places). Call these before
 * episodes start.
 */
int backend_local_sandbox(char *why, size_t len);
void backend_local_allow_unsandboxed(int allow);
int backend_local_hide(const char *path, struct engi_error *err);

#endif
