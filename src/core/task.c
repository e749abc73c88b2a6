/*
 * The task file format (tasks/SCHEMA.md): one task's JSON validated into
 * struct task, every error naming the file and the JSON pointer.
 */
#include "task.h"
#include "task_load.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "engi/results.h"
#include "engi/schema.h"
#include "engi/sha256.h"
#include "fsutil.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TASK_ID_MAX   (ENGI_TASK_ID_STR - 1)
#define WORKDIR_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-"
#define PTR_MAX	      ENGI_POINTER_MAX

const char *task_type_name(int type)
{
	switch (type) {
#define TASK_TYPE_STR(n, s)                                                                        \
	case TASK_##n:                                                                             \
		return s;
		TASK_TYPE_MAP(TASK_TYPE_STR)
#undef TASK_TYPE_STR
	}
	return "?";
}

const char *task_interface_name(int iface)
{
	return iface == IFACE_GUI ? "gui" : "cli";
}

int task_default_turns(int type, int iface)
{
	if (type == TASK_OPEN)
		return 150;
	if (type == TASK_CROSS)
		return iface == IFACE_GUI ? 300 : 150;
	return iface == IFACE_GUI ? 200 : 100;
}

/* What every validation helper needs: where we are, for messages. */
struct loadctx {
	const char *file;
	const char *dir;
	struct arena *a;
	struct engi_error *err;
	struct engi_sha256 *files_hash; /* content of referenced host files */
	size_t followups;		/* the task's follow-ups: each lets a done end a turn */
	const struct task *task;	/* being parsed: its environment comes first */
};

__attribute__((format(printf, 3, 4))) static int bad(struct loadctx *c, const char *ptr,
						     const char *fmt, ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return engi_parse_error(c->err, c->file, ptr, "%s", msg);
}

static int oom(struct loadctx *c)
{
	return engi_raise(c->err, ENGI_ENOMEM, "%s: out of memory", c->file);
}

/* The getters of engi/json.h on the task file. */
static void ptr_key(char *out, const char *base, const char *key)
{
	engi_json_pointer(out, PTR_MAX, base, key);
}

static void ptr_idx(char *out, const char *base, size_t i)
{
	engi_json_pointer_index(out, PTR_MAX, base, i);
}

static int only_keys(struct loadctx *c, json_t *obj, const char *ptr, const char *const *allowed)
{
	return engi_json_only_keys(obj, allowed, c->file, ptr, c->err);
}

static int field(struct loadctx *c, json_t *obj, const char *ptr, const char *key, json_type want,
		 int required, json_t **out)
{
	return engi_json_field(obj, key, want, required, c->file, ptr, out, c->err);
}

static int expect_object(struct loadctx *c, const char *ptr, const json_t *v)
{
	return engi_json_expect(v, JSON_OBJECT, c->file, ptr, c->err);
}

/* A string member copied into the task's arena. */
static int get_str(struct loadctx *c, json_t *obj, const char *ptr, const char *key, int required,
		   int nonempty, const char **out)
{
	const char *v;
	TRY(engi_json_string(obj, key, required, nonempty, c->file, ptr, &v, c->err));
	*out = v ? arena_strdup(c->a, v) : NULL;
	return !v || *out ? 0 : oom(c);
}

static int get_int(struct loadctx *c, json_t *obj, const char *ptr, const char *key, long lo,
		   long hi, long dflt, long *out)
{
	return engi_json_int(obj, key, lo, hi, dflt, c->file, ptr, out, c->err);
}

static int get_num(struct loadctx *c, json_t *obj, const char *ptr, const char *key, int required,
		   double dflt, double *out)
{
	json_t *v;
	int present;
	TRY(field(c, obj, ptr, key, JSON_REAL, required, &v));
	*out = dflt;
	return engi_json_number(obj, key, c->file, ptr, &present, out, c->err);
}

static int get_bool(struct loadctx *c, json_t *obj, const char *ptr, const char *key, int dflt,
		    int *out)
{
	return engi_json_bool(obj, key, dflt, c->file, ptr, out, c->err);
}

static int check_name_max(struct loadctx *c, const char *ptr, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return bad(c, ptr, "must be 1 to %zu characters", max);
	if (!engi_json_name_valid_max(s, n, max))
		return bad(c, ptr, "'%s' is not a valid name ([A-Za-z0-9][A-Za-z0-9._-]*)", s);
	return 0;
}

/* a criterion's, a flawed variant's or an assertion's name */
static int check_name(struct loadctx *c, const char *ptr, const char *s)
{
	return check_name_max(c, ptr, s, ENGI_JSON_NAME_MAX);
}

static const char *path_base(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

/* Whether path is folder or lies inside it. */
static int path_within(const char *path, const char *folder)
{
	size_t n = strlen(folder);
	return !strncmp(path, folder, n) && (path[n] == '\0' || path[n] == '/');
}

/* An environment path: relative to the working folder, or absolute strictly
 * inside one of the task's folders (the folder, '/', then a relative path). */
static int check_env_path(struct loadctx *c, const char *ptr, const char *s)
{
	struct engi_error e;
	engi_error_init(&e);
	size_t nf = c->task ? c->task->env.nfolders : 0;
	if (s[0] == '/' && nf) {
		for (size_t i = 0; i < nf; i++) {
			const char *f = c->task->env.folders[i];
			size_t n = strlen(f);
			if (strncmp(s, f, n) || s[n] != '/')
				continue;
			if (strlen(s) > ENV_PATH_MAX)
				return bad(c, ptr, "path longer than %d bytes", ENV_PATH_MAX);
			if (fs_env_path_check(s + n + 1, &e) < 0)
				return bad(c, ptr, "'%s' inside the folder '%s': %s", s, f, e.msg);
			return 0;
		}
		char list[TASK_FOLDERS_MAX * (TASK_FOLDER_MAX + 2)] = "";
		for (size_t i = 0; i < nf; i++) {
			if (i)
				strcat(list, ", ");
			strcat(list, c->task->env.folders[i]);
		}
		return bad(c, ptr,
			   "absolute path '%s' (paths are relative to the working folder, or "
			   "absolute inside one of the task's folders: %s)",
			   s, list);
	}
	if (fs_env_path_check(s, &e) < 0)
		return bad(c, ptr, "%s", e.msg);
	return 0;
}

/* A host path named by the task: relative to its folder, inside it, an
 * existing regular file; its content goes into the task hash. */
static int host_file(struct loadctx *c, const char *ptr, const char *rel, const char **abs_out)
{
	struct engi_error e;
	engi_error_init(&e);
	if (rel[0] == '/' || fs_env_path_check(rel, &e) < 0)
		return bad(
		    c, ptr,
		    "'%s': host paths are relative to the task file's folder and stay inside it",
		    rel);
	char abs[PATH_MAX];
	if (snprintf(abs, sizeof(abs), "%s/%s", c->dir, rel) >= (int)sizeof(abs))
		return bad(c, ptr, "path too long");
	char *real = realpath(abs, NULL);
	if (!real)
		return bad(c, ptr, "no such file '%s' beside the task file", rel);
	size_t dl = strlen(c->dir);
	int inside = !strncmp(real, c->dir, dl) && real[dl] == '/';
	free(real);
	if (!inside)
		return bad(c, ptr, "'%s' leads outside the task's folder (through a link?)", rel);
	if (!fs_path_is_file(abs))
		return bad(c, ptr, "'%s' is not a regular file", rel);
	char hex[65];
	if (fs_sha256_regular_file(abs, hex, &e) < 0)
		return bad(c, ptr, "%s", e.msg);
	task_hash_add_file(c->files_hash, rel, hex);
	*abs_out = arena_strdup(c->a, abs);
	return *abs_out ? 0 : oom(c);
}

static int get_str_array(struct loadctx *c, json_t *obj, const char *ptr, const char *key,
			 int required, int min_items, const char ***out, size_t *n)
{
	json_t *arr;
	TRY(field(c, obj, ptr, key, JSON_ARRAY, required, &arr));
	*out = NULL;
	*n = 0;
	if (!arr)
		return 0;
	char p[PTR_MAX];
	ptr_key(p, ptr, key);
	size_t count = json_array_size(arr);
	if (count < (size_t)min_items)
		return bad(c, p, "needs at least %d item%s", min_items, min_items == 1 ? "" : "s");
	const char **v = arena_array(c->a, count ? count : 1, sizeof(*v));
	if (!v)
		return oom(c);
	for (size_t i = 0; i < count; i++) {
		json_t *s = json_array_get(arr, i);
		char pi[PTR_MAX];
		ptr_idx(pi, p, i);
		if (!json_is_string(s) || json_string_length(s) == 0)
			return bad(c, pi, "expected a non-empty string, found %s",
				   engi_json_kind(s));
		v[i] = arena_strdup(c->a, json_string_value(s));
		if (!v[i])
			return oom(c);
	}
	*out = v;
	*n = count;
	return 0;
}

static int parse_steps(struct loadctx *c, json_t *arr, const char *ptr, struct task_steps *out)
{
	size_t n = json_array_size(arr);
	if (n == 0)
		return bad(c, ptr, "needs at least one step");
	out->v = arena_array(c->a, n, sizeof(*out->v));
	if (!out->v)
		return oom(c);
	out->n = n;
	size_t dones = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *st = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, ptr, i);
		TRY(expect_object(c, p, st));
		static const char *const keys[] = {"run",  "write", "from", "text",
						   "done", "fail",  "ask",  NULL};
		TRY(only_keys(c, st, p, keys));
		struct task_step *s = &out->v[i];
		const char *run, *write, *from, *text, *done, *fail, *ask;
		TRY(get_str(c, st, p, "run", 0, 1, &run));
		TRY(get_str(c, st, p, "ask", 0, 1, &ask));
		TRY(get_str(c, st, p, "write", 0, 1, &write));
		TRY(get_str(c, st, p, "from", 0, 1, &from));
		TRY(get_str(c, st, p, "text", 0, 0, &text));
		TRY(get_str(c, st, p, "done", 0, 0, &done));
		TRY(get_str(c, st, p, "fail", 0, 0, &fail));
		int kinds = !!run + !!write + !!done + !!fail + !!ask;
		if (kinds != 1)
			return bad(c, p, "a step needs exactly one of run, write, ask, done, fail");
		if (run || ask) {
			if (from || text)
				return bad(c, p, "'from' and 'text' belong to 'write' steps");
			s->kind = run ? STEP_RUN : STEP_ASK;
			s->text = run ? run : ask;
		} else if (write) {
			ptr_key(pk, p, "write");
			TRY(check_env_path(c, pk, write));
			s->path = write;
			if (!!from + !!text != 1)
				return bad(c, p,
					   "a write step needs exactly one of 'from' and 'text'");
			if (from) {
				ptr_key(pk, p, "from");
				s->kind = STEP_WRITE_FILE;
				TRY(host_file(c, pk, from, &s->host));
			} else {
				s->kind = STEP_WRITE_TEXT;
				s->text = text;
			}
		} else {
			if (from || text)
				return bad(c, p, "'from' and 'text' belong to 'write' steps");
			s->kind = done ? STEP_DONE : STEP_FAIL;
			s->text = done ? done : fail;
			/* with follow-ups, a done ends a turn of the conversation
			 * and the script goes on with the next message */
			if (done && i + 1 != n && ++dones > c->followups) {
				if (!c->followups)
					return bad(c, p, "'done' must be the last step");
				return bad(c, p,
					   "more done steps before the last than the task's %zu "
					   "follow-ups",
					   c->followups);
			}
			if (fail && i + 1 != n)
				return bad(c, p, "'fail' must be the last step");
		}
	}
	return 0;
}

/* An absolute guest folder of [A-Za-z0-9._/-] without '.', '..' or empty
 * components, at most TASK_FOLDER_MAX characters. */
static int guest_folder_ok(const char *p)
{
	size_t n = strlen(p);
	return p[0] == '/' && n <= TASK_FOLDER_MAX && strspn(p, WORKDIR_CHARS) == n &&
	       fs_env_path_check(p + 1, NULL) == 0;
}

/* Top-level folders the environment keeps for itself: the system folders
 * the local sandbox shows read-only, and those special in a guest. */
static const char *const system_folders[] = {"usr",    "bin", "sbin", "lib",  "lib32", "lib64",
					     "libx32", "etc", "opt",  "proc", "dev",   "sys",
					     "boot",   "run", "tmp",  "var",  NULL};

/* environment.folders: 1 to TASK_FOLDERS_MAX guest folders made empty and
 * writable when the environment starts, none overlapping another or the
 * working folder. */
static int parse_folders(struct loadctx *c, json_t *env, struct task *t)
{
	const char **v;
	size_t n;
	TRY(get_str_array(c, env, "/environment", "folders", 0, 1, &v, &n));
	if (n > TASK_FOLDERS_MAX)
		return bad(c, "/environment/folders", "expected 1 to %d folders, found %zu",
			   TASK_FOLDERS_MAX, n);
	const char *wd = t->env.workdir ? t->env.workdir : "/work";
	for (size_t i = 0; i < n; i++) {
		const char *f = v[i];
		char p[PTR_MAX];
		ptr_idx(p, "/environment/folders", i);
		if (!strcmp(f, "/"))
			return bad(c, p, "'/' is the whole file system, not a folder of its own");
		if (!guest_folder_ok(f))
			return bad(c, p,
				   "'%s' is not an absolute guest path of [A-Za-z0-9._/-] without "
				   "'.', '..' or empty components, at most %d characters",
				   f, TASK_FOLDER_MAX);
		size_t first = strcspn(f + 1, "/");
		for (const char *const *sys = system_folders; *sys; sys++)
			if (strlen(*sys) == first && !strncmp(f + 1, *sys, first))
				return bad(c, p,
					   "'%s' lies in /%s, which the environment keeps for "
					   "itself (read-only or special)",
					   f, *sys);
		if (!strcmp(f, wd))
			return bad(c, p, "'%s' is the working folder", f);
		if (path_within(f, wd))
			return bad(c, p, "'%s' lies inside the working folder '%s'", f, wd);
		if (path_within(wd, f))
			return bad(c, p, "'%s' contains the working folder '%s'", f, wd);
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(f, v[j]))
				return bad(c, p, "'%s' is already /environment/folders/%zu", f, j);
			if (path_within(f, v[j]))
				return bad(c, p, "'%s' lies inside /environment/folders/%zu ('%s')",
					   f, j, v[j]);
			if (path_within(v[j], f))
				return bad(c, p, "'%s' contains /environment/folders/%zu ('%s')", f,
					   j, v[j]);
		}
	}
	t->env.folders = v;
	t->env.nfolders = n;
	return 0;
}

static int parse_environment(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *env;
	TRY(field(c, root, "", "environment", JSON_OBJECT, 0, &env));
	t->env.image = "host";
	t->env.cpus = 1;
	t->env.memory_mb = 1024;
	t->env.network = 0;
	t->env.workdir = NULL;
	t->env.folders = NULL;
	t->env.nfolders = 0;
	if (!env)
		return 0;
	static const char *const keys[] = {"image",	"workdir", "folders", "cpus",
					   "memory_mb", "network", NULL};
	TRY(only_keys(c, env, "/environment", keys));
	const char *image;
	TRY(get_str(c, env, "/environment", "image", 0, 1, &image));
	if (image)
		t->env.image = image;
	const char *wd;
	TRY(get_str(c, env, "/environment", "workdir", 0, 1, &wd));
	if (wd && !guest_folder_ok(wd))
		return bad(
		    c, "/environment/workdir",
		    "'%s' is not an absolute guest path of [A-Za-z0-9._/-] without '.', '..' "
		    "or empty components, at most 200 characters",
		    wd);
	t->env.workdir = wd;
	TRY(parse_folders(c, env, t));
	long v;
	TRY(get_int(c, env, "/environment", "cpus", 1, 64, 1, &v));
	t->env.cpus = (int)v;
	TRY(get_int(c, env, "/environment", "memory_mb", 64, 262144, 1024, &v));
	t->env.memory_mb = (int)v;
	TRY(get_bool(c, env, "/environment", "network", 0, &t->env.network));
	return 0;
}

static int parse_inputs(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *arr;
	TRY(field(c, root, "", "inputs", JSON_ARRAY, 0, &arr));
	if (!arr)
		return 0;
	t->ninputs = json_array_size(arr);
	t->inputs = arena_array(c->a, t->ninputs ? t->ninputs : 1, sizeof(*t->inputs));
	if (!t->inputs)
		return oom(c);
	for (size_t i = 0; i < t->ninputs; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/inputs", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"host", "env", "protected", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_input *in = &t->inputs[i];
		const char *host;
		TRY(get_str(c, o, p, "host", 1, 1, &host));
		ptr_key(pk, p, "host");
		TRY(host_file(c, pk, host, &in->host));
		TRY(get_str(c, o, p, "env", 1, 1, &in->env));
		ptr_key(pk, p, "env");
		TRY(check_env_path(c, pk, in->env));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->inputs[j].env, in->env))
				return bad(c, pk, "'%s' is already the target of /inputs/%zu",
					   in->env, j);
		TRY(get_bool(c, o, p, "protected", 0, &in->protected_));
	}
	return 0;
}

static int parse_setup(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *arr;
	TRY(field(c, root, "", "setup", JSON_ARRAY, 0, &arr));
	if (!arr)
		return 0;
	t->nsetup = json_array_size(arr);
	if (t->nsetup < 1 || t->nsetup > TASK_SETUP_MAX)
		return bad(c, "/setup", "expected 1 to %d steps, found %zu", TASK_SETUP_MAX,
			   t->nsetup);
	t->setup = arena_array(c->a, t->nsetup, sizeof(*t->setup));
	if (!t->setup)
		return oom(c);
	for (size_t i = 0; i < t->nsetup; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/setup", i);
		TRY(expect_object(c, p, o));
		struct task_setup *st = &t->setup[i];
		st->launch = json_object_get(o, "launch") != NULL;
		if (st->launch == (json_object_get(o, "run") != NULL))
			return bad(c, p, "a setup step has exactly one of 'run' and 'launch'");
		static const char *const run_keys[] = {"run", "timeout_s", "check", NULL};
		static const char *const launch_keys[] = {"launch", NULL};
		TRY(only_keys(c, o, p, st->launch ? launch_keys : run_keys));
		const char *key = st->launch ? "launch" : "run";
		TRY(get_str(c, o, p, key, 1, 1, &st->cmd));
		ptr_key(pk, p, key);
		if (strlen(st->cmd) > TASK_SETUP_CMD_MAX)
			return bad(c, pk, "longer than %d bytes", TASK_SETUP_CMD_MAX);
		TRY(get_num(c, o, p, "timeout_s", 0, TASK_SETUP_TIMEOUT_S, &st->timeout_s));
		if (!(st->timeout_s > 0 && st->timeout_s <= 3600)) {
			ptr_key(pk, p, "timeout_s");
			return bad(c, pk, "must be in (0, 3600] seconds, found %g", st->timeout_s);
		}
		TRY(get_bool(c, o, p, "check", 1, &st->check));
		if (st->launch) {
			st->check = 0;
			t->launches = 1;
		}
	}
	return 0;
}

static int parse_limits(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *lim;
	TRY(field(c, root, "", "limits", JSON_OBJECT, 0, &lim));
	t->turn_limit = task_default_turns(t->type, t->interface);
	t->wall_s = TASK_DEFAULT_WALL_S;
	if (!lim)
		return 0;
	static const char *const keys[] = {"turns", "wall_s", "env_s", NULL};
	TRY(only_keys(c, lim, "/limits", keys));
	long turns;
	TRY(get_int(c, lim, "/limits", "turns", 1, 100000, t->turn_limit, &turns));
	t->turn_limit = (int)turns;
	TRY(get_num(c, lim, "/limits", "wall_s", 0, t->wall_s, &t->wall_s));
	if (!(t->wall_s > 0))
		return bad(c, "/limits/wall_s", "must be greater than 0");
	TRY(get_num(c, lim, "/limits", "env_s", 0, 0, &t->env_s));
	if (json_object_get(lim, "env_s") && !(t->env_s > 0))
		return bad(c, "/limits/env_s", "must be greater than 0");
	return 0;
}

static int parse_deliverables(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *arr;
	TRY(field(c, root, "", "deliverables", JSON_ARRAY, 1, &arr));
	t->ndeliverables = json_array_size(arr);
	if (t->ndeliverables == 0)
		return bad(c, "/deliverables", "needs at least one deliverable");
	t->deliverables = arena_array(c->a, t->ndeliverables, sizeof(*t->deliverables));
	if (!t->deliverables)
		return oom(c);
	for (size_t i = 0; i < t->ndeliverables; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/deliverables", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"path", "max_bytes", "required", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_deliverable *d = &t->deliverables[i];
		TRY(get_str(c, o, p, "path", 1, 1, &d->path));
		ptr_key(pk, p, "path");
		TRY(check_env_path(c, pk, d->path));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->deliverables[j].path, d->path))
				return bad(c, pk, "'%s' is already /deliverables/%zu", d->path, j);
		long mb;
		TRY(get_int(c, o, p, "max_bytes", 1, LONG_MAX, 64L << 20, &mb));
		d->max_bytes = (unsigned long long)mb;
		TRY(get_bool(c, o, p, "required", 1, &d->required));
	}
	return 0;
}

static int parse_scoring(struct loadctx *c, json_t *ver, struct task *t)
{
	struct engi_scoring_spec *sc = &t->scoring;
	memset(sc, 0, sizeof(*sc));
	json_t *obj, *rew;
	TRY(field(c, ver, "/verifier", "objective", JSON_OBJECT, 0, &obj));
	TRY(field(c, ver, "/verifier", "reward", JSON_OBJECT, 0, &rew));
	if (obj && rew)
		return bad(c, "/verifier", "'objective' and 'reward' exclude each other");
	if (t->type == TASK_OPTIMIZATION && !obj)
		return bad(c, "/verifier/objective",
			   "missing (type 'optimization' needs an objective)");
	if (obj && t->type != TASK_OPTIMIZATION)
		return bad(c, "/verifier/objective",
			   "only tasks of type 'optimization' have an objective");
	if (obj) {
		static const char *const keys[] = {"metric",	"sense",  "baseline",
						   "reference", "lambda", NULL};
		TRY(only_keys(c, obj, "/verifier/objective", keys));
		const char *metric, *sense;
		TRY(get_str(c, obj, "/verifier/objective", "metric", 1, 1, &metric));
		if (strlen(metric) >= sizeof(sc->metric))
			return bad(c, "/verifier/objective/metric", "too long");
		strcpy(sc->metric, metric);
		sc->mode = ENGI_SCORING_OPTIMIZATION;
		json_t *lam = json_object_get(obj, "lambda");
		if (lam) {
			TRY(get_num(c, obj, "/verifier/objective", "lambda", 1, 0, &sc->lambda));
			if (json_object_get(obj, "baseline") || json_object_get(obj, "reference"))
				return bad(c, "/verifier/objective/lambda",
					   "a cost-based objective has no baseline or reference");
			if (!(sc->lambda > 0))
				return bad(c, "/verifier/objective/lambda",
					   "must be greater than 0");
			sc->cost_based = 1;
			sc->minimize = 1;
		} else {
			TRY(get_str(c, obj, "/verifier/objective", "sense", 1, 1, &sense));
			if (!strcmp(sense, "min"))
				sc->minimize = 1;
			else if (strcmp(sense, "max"))
				return bad(c, "/verifier/objective/sense",
					   "'%s' is neither 'min' nor 'max'", sense);
			TRY(get_num(c, obj, "/verifier/objective", "baseline", 1, 0,
				    &sc->baseline));
			TRY(get_num(c, obj, "/verifier/objective", "reference", 1, 0,
				    &sc->reference));
			if (sc->minimize ? !(sc->reference < sc->baseline)
					 : !(sc->reference > sc->baseline))
				return bad(c, "/verifier/objective/reference",
					   "reference %g must be better than baseline %g (sense "
					   "'%s': %s is better)",
					   sc->reference, sc->baseline, sense,
					   sc->minimize ? "lower" : "higher");
		}
	}
	if (rew) {
		static const char *const keys[] = {"geometry", "spec", NULL};
		TRY(only_keys(c, rew, "/verifier/reward", keys));
		const char *g, *s;
		TRY(get_str(c, rew, "/verifier/reward", "geometry", 1, 1, &g));
		TRY(get_str(c, rew, "/verifier/reward", "spec", 1, 1, &s));
		if (strlen(g) >= sizeof(sc->geometry_metric) ||
		    strlen(s) >= sizeof(sc->spec_metric))
			return bad(c, "/verifier/reward", "metric name too long");
		strcpy(sc->geometry_metric, g);
		strcpy(sc->spec_metric, s);
		sc->mode = ENGI_SCORING_CONTINUOUS;
	}
	return 0;
}

static int parse_verifier(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *ver;
	TRY(field(c, root, "", "verifier", JSON_OBJECT, 1, &ver));
	const char *kind;
	TRY(get_str(c, ver, "/verifier", "kind", 1, 1, &kind));
	struct engi_error e;
	engi_error_init(&e);
	t->verifier = engi_verifier_lookup(kind, &e);
	if (!t->verifier)
		return bad(c, "/verifier/kind", "%s", e.msg);
	TRY(get_str(c, ver, "/verifier", "file", 1, 1, &t->verifier_file));
	int found = 0;
	for (size_t i = 0; i < t->ndeliverables; i++)
		if (!strcmp(t->deliverables[i].path, t->verifier_file))
			found = 1;
	if (!found)
		return bad(c, "/verifier/file", "'%s' is not one of the deliverables",
			   t->verifier_file);
	TRY(parse_scoring(c, ver, t));
	int rc = t->verifier->parse(ver, c->file, c->dir, "/verifier", &t->criteria, c->err);
	if (rc < 0 && c->err && c->err->code == 0)
		return bad(c, "/verifier/criteria", "%s", engi_strerror(rc));
	return rc;
}

/* followups: messages that arrive when the agent ends a turn with done, each
 * with the verifier of the turn it closes (SCHEMA.md, `followups`). */
static int parse_followups(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *arr;
	TRY(field(c, root, "", "followups", JSON_ARRAY, 0, &arr));
	if (!arr)
		return 0;
	size_t n = json_array_size(arr);
	if (n == 0 || n > TASK_FOLLOWUPS_MAX)
		return bad(c, "/followups", "expected 1 to %d follow-ups, found %zu",
			   TASK_FOLLOWUPS_MAX, n);
	for (size_t i = 0; i < t->ndeliverables; i++)
		if (t->deliverables[i].path[0] == '@') {
			char p[PTR_MAX];
			ptr_idx(p, "/deliverables", i);
			return bad(c, p,
				   "'%s': a task with follow-ups keeps each turn's deliverables "
				   "under @turnK/, so no deliverable may start with '@'",
				   t->deliverables[i].path);
		}
	t->followups = arena_array(c->a, n, sizeof(*t->followups));
	if (!t->followups)
		return oom(c);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/followups", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"message", "verifier", "judges", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_followup *f = &t->followups[i];
		t->nfollowups = i + 1; /* what task_release frees */
		TRY(get_str(c, o, p, "message", 1, 1, &f->message));
		if (strlen(f->message) > TASK_FOLLOWUP_MSG_MAX) {
			ptr_key(pk, p, "message");
			return bad(c, pk, "longer than %d bytes", TASK_FOLLOWUP_MSG_MAX);
		}
		json_t *ver;
		TRY(field(c, o, p, "verifier", JSON_OBJECT, 0, &ver));
		if (!ver)
			continue;
		char pv[PTR_MAX];
		ptr_key(pv, p, "verifier");
		if (json_object_get(ver, "objective") || json_object_get(ver, "reward"))
			return bad(c, pv,
				   "a turn is judged pass or fail: no 'objective' or 'reward'");
		const char *kind;
		TRY(get_str(c, ver, pv, "kind", 1, 1, &kind));
		struct engi_error e;
		engi_error_init(&e);
		if (!(f->verifier = engi_verifier_lookup(kind, &e))) {
			ptr_key(pk, pv, "kind");
			return bad(c, pk, "%s", e.msg);
		}
		TRY(get_str(c, ver, pv, "file", 1, 1, &f->verifier_file));
		int found = 0;
		for (size_t k = 0; k < t->ndeliverables; k++)
			found |= !strcmp(t->deliverables[k].path, f->verifier_file);
		if (!found) {
			ptr_key(pk, pv, "file");
			return bad(c, pk, "'%s' is not one of the deliverables", f->verifier_file);
		}
		int rc = f->verifier->parse(ver, c->file, c->dir, pv, &f->criteria, c->err);
		if (rc < 0 && c->err && c->err->code == 0)
			return bad(c, pv, "%s", engi_strerror(rc));
		if (rc < 0)
			return rc;
		if (f->verifier->env && f->verifier->env(f->criteria) != ENGI_VENV_NONE) {
			ptr_key(pk, pv, "kind");
			return bad(c, pk,
				   "'%s' judges in an environment: a turn's deliverables are "
				   "judged on the host",
				   kind);
		}
		/* the task as the turn's verifier child reads it: this verifier,
		 * no flawed variants (their names are the whole task's) */
		json_t *copy = json_deep_copy(root);
		char *text = NULL;
		if (copy && json_object_set(copy, "verifier", ver) == 0) {
			json_object_del(copy, "flawed");
			text = json_dumps(copy, JSON_SORT_KEYS | JSON_COMPACT);
		}
		json_decref(copy);
		f->json = text ? arena_strdup(c->a, text) : NULL;
		free(text);
		if (!f->json)
			return oom(c);
	}
	c->followups = n;
	return 0;
}

static int parse_flawed(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *arr;
	TRY(field(c, root, "", "flawed", JSON_ARRAY, 0, &arr));
	if (!arr)
		return 0;
	t->nflawed = json_array_size(arr);
	t->flawed = arena_array(c->a, t->nflawed ? t->nflawed : 1, sizeof(*t->flawed));
	if (!t->flawed)
		return oom(c);
	for (size_t i = 0; i < t->nflawed; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/flawed", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"name", "steps", "expect", "failing", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_flawed *f = &t->flawed[i];
		TRY(get_str(c, o, p, "name", 1, 1, &f->name));
		ptr_key(pk, p, "name");
		TRY(check_name(c, pk, f->name));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->flawed[j].name, f->name))
				return bad(c, pk, "'%s' is already /flawed/%zu", f->name, j);
		json_t *steps;
		TRY(field(c, o, p, "steps", JSON_ARRAY, 1, &steps));
		ptr_key(pk, p, "steps");
		TRY(parse_steps(c, steps, pk, &f->steps));
		const char *expect;
		TRY(get_str(c, o, p, "expect", 1, 1, &expect));
		if (strcmp(expect, "fail")) {
			ptr_key(pk, p, "expect");
			return bad(
			    c, pk,
			    "'%s' is not a verdict a flawed variant may expect (valid: fail)",
			    expect);
		}
		TRY(get_str_array(c, o, p, "failing", 0, 1, &f->failing, &f->nfailing));
	}
	return 0;
}

static int parse_resources(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *obj;
	TRY(field(c, root, "", "resources", JSON_OBJECT, 0, &obj));
	if (!obj)
		return 0;
	t->nresources = json_object_size(obj);
	t->resources = arena_array(c->a, t->nresources ? t->nresources : 1, sizeof(*t->resources));
	if (!t->resources)
		return oom(c);
	size_t i = 0;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		char p[PTR_MAX];
		ptr_key(p, "/resources", key);
		TRY(check_name(c, p, key));
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 1024)
			return bad(c, p, "expected an integer from 1 to 1024");
		t->resources[i].name = arena_strdup(c->a, key);
		if (!t->resources[i].name)
			return oom(c);
		t->resources[i].count = (int)json_integer_value(v);
		i++;
	}
	return 0;
}

/* A POSIX extended regular expression of the task, compiled now so a bad
 * one is a load error; *compiled tells suite_release to free it. */
static int compile_re(struct loadctx *c, const char *ptr, const char *pattern, int icase,
		      regex_t *re, int *compiled)
{
	int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
	if (rc != 0) {
		char msg[160];
		regerror(rc, re, msg, sizeof(msg));
		return bad(c, ptr, "'%s' is not a valid extended regular expression: %s", pattern,
			   msg);
	}
	*compiled = 1;
	return 0;
}

static int parse_replies(struct loadctx *c, json_t *arr, struct task *t)
{
	size_t n = json_array_size(arr);
	if (n == 0)
		return bad(c, "/interaction/user", "needs at least 1 item");
	if (n > TASK_INTERACTION_MAX)
		return bad(c, "/interaction/user", "at most %d replies", TASK_INTERACTION_MAX);
	t->replies = arena_array(c->a, n, sizeof(*t->replies));
	if (!t->replies)
		return oom(c);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/interaction/user", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"reply", "when", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_reply *r = &t->replies[i];
		t->nreplies = i + 1; /* what suite_release walks */
		TRY(get_str(c, o, p, "reply", 1, 1, &r->reply));
		TRY(get_str(c, o, p, "when", 0, 1, &r->when));
		if (r->when) {
			ptr_key(pk, p, "when");
			TRY(compile_re(c, pk, r->when, 1, &r->re, &r->compiled));
		}
	}
	return 0;
}

static int parse_iasserts(struct loadctx *c, json_t *arr, struct task *t)
{
	size_t n = json_array_size(arr);
	if (n == 0)
		return bad(c, "/interaction/assert", "needs at least 1 item");
	if (n > TASK_INTERACTION_MAX)
		return bad(c, "/interaction/assert", "at most %d assertions", TASK_INTERACTION_MAX);
	t->iasserts = arena_array(c->a, n, sizeof(*t->iasserts));
	if (!t->iasserts)
		return oom(c);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, "/interaction/assert", i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"name", "check",    "pattern",
						   "path", "required", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_iassert *a = &t->iasserts[i];
		t->niasserts = i + 1;
		TRY(get_str(c, o, p, "name", 1, 1, &a->name));
		ptr_key(pk, p, "name");
		TRY(check_name(c, pk, a->name));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(t->iasserts[j].name, a->name))
				return bad(c, pk, "'%s' is already /interaction/assert/%zu",
					   a->name, j);
		const char *check;
		TRY(get_str(c, o, p, "check", 1, 1, &check));
		TRY(get_str(c, o, p, "pattern", 0, 1, &a->pattern));
		TRY(get_str(c, o, p, "path", 0, 1, &a->path));
		TRY(get_bool(c, o, p, "required", 1, &a->required));
		ptr_key(pk, p, "check");
		if (!strcmp(check, "asked_user"))
			a->check = ICHECK_ASKED_USER;
		else if (!strcmp(check, "no_command"))
			a->check = ICHECK_NO_COMMAND;
		else if (!strcmp(check, "no_file"))
			a->check = ICHECK_NO_FILE;
		else
			return bad(c, pk,
				   "'%s' is not an interaction check (valid: asked_user, "
				   "no_command, no_file)",
				   check);
		if (a->check == ICHECK_NO_COMMAND) {
			ptr_key(pk, p, "pattern");
			if (!a->pattern)
				return bad(c, pk, "missing (check 'no_command' needs a pattern)");
			TRY(compile_re(c, pk, a->pattern, 0, &a->re, &a->compiled));
		} else if (a->pattern) {
			ptr_key(pk, p, "pattern");
			return bad(c, pk, "only check 'no_command' takes a pattern");
		}
		ptr_key(pk, p, "path");
		if (a->check == ICHECK_NO_FILE) {
			if (!a->path)
				return bad(c, pk, "missing (check 'no_file' needs a path)");
			TRY(check_env_path(c, pk, a->path));
		} else if (a->path) {
			return bad(c, pk, "only check 'no_file' takes a path");
		}
	}
	return 0;
}

static int parse_interaction(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *obj, *user, *asserts;
	TRY(field(c, root, "", "interaction", JSON_OBJECT, 0, &obj));
	if (!obj)
		return 0;
	static const char *const keys[] = {"user", "assert", NULL};
	TRY(only_keys(c, obj, "/interaction", keys));
	TRY(field(c, obj, "/interaction", "user", JSON_ARRAY, 0, &user));
	TRY(field(c, obj, "/interaction", "assert", JSON_ARRAY, 0, &asserts));
	if (!user && !asserts)
		return bad(c, "/interaction", "needs 'user', 'assert' or both");
	if (user)
		TRY(parse_replies(c, user, t));
	if (asserts)
		TRY(parse_iasserts(c, asserts, t));
	return 0;
}

/* A metadata value as the report shows it: a string as it is, a number
 * as its shortest decimal text (integers and plain decimals as written),
 * a boolean as true or false; NULL and *why when it is not one. */
static const char *meta_text(json_t *v, char *num, size_t cap, const char **why)
{
	*why = NULL;
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_true(v) || json_is_false(v))
		return json_is_true(v) ? "true" : "false";
	if (json_is_integer(v)) {
		snprintf(num, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return num;
	}
	if (json_is_real(v)) {
		double x = json_real_value(v);
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(num, cap, "%.*g", prec, x);
			if (strtod(num, NULL) == x)
				break;
		}
		return num;
	}
	*why = engi_json_kind(v);
	return NULL;
}

static int parse_meta(struct loadctx *c, json_t *root, struct task *t)
{
	json_t *obj;
	TRY(field(c, root, "", "meta", JSON_OBJECT, 0, &obj));
	if (!obj)
		return 0;
	size_t n = json_object_size(obj);
	if (n > TASK_META_MAX)
		return bad(c, "/meta", "at most %d keys, found %zu", TASK_META_MAX, n);
	t->meta = arena_array(c->a, n ? n : 1, sizeof(*t->meta));
	if (!t->meta)
		return oom(c);
	static const char *const builtin[] = {ENGI_RES_BUILTIN_KEYS};
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v)
	{
		char p[PTR_MAX];
		ptr_key(p, "/meta", key);
		size_t kl = strlen(key);
		int ok = kl >= 1 && kl <= TASK_META_KEY_MAX && key[0] >= 'a' && key[0] <= 'z';
		for (size_t i = 1; ok && i < kl; i++)
			ok = (key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') ||
			     key[i] == '_';
		if (!ok)
			return bad(c, p,
				   "not a metadata key ([a-z][a-z0-9_]*, at most %d characters)",
				   TASK_META_KEY_MAX);
		for (size_t i = 0; i < sizeof(builtin) / sizeof(*builtin); i++)
			if (!strcmp(builtin[i], key))
				return bad(c, p,
					   "'%s' is a key the report takes from the task itself "
					   "(reserved: overall, type, domain, interface, software, "
					   "title, scoring, turns)",
					   key);
		char num[64];
		const char *why, *text = meta_text(v, num, sizeof(num), &why);
		if (!text)
			return bad(c, p, "expected a string, a number or a boolean, found %s", why);
		size_t vl = strlen(text);
		if (json_is_string(v) && json_string_length(v) != vl)
			return bad(c, p, "holds a NUL character");
		if (vl == 0 || vl > TASK_META_VALUE_MAX)
			return bad(c, p, "must be 1 to %d bytes, found %zu", TASK_META_VALUE_MAX,
				   vl);
		for (size_t i = 0; i < vl; i++)
			if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
				return bad(c, p, "holds a control character");
		struct task_meta *m = &t->meta[t->nmeta];
		m->key = arena_strdup(c->a, key);
		m->value = arena_strdup(c->a, text);
		if (!m->key || !m->value)
			return oom(c);
		t->nmeta++;
	}
	return 0;
}

const char *task_meta_get(const struct task *t, const char *key)
{
	for (size_t i = 0; i < t->nmeta; i++)
		if (!strcmp(t->meta[i].key, key))
			return t->meta[i].value;
	return NULL;
}

void task_integrity_name(char *out, size_t cap, const char *env_path)
{
	snprintf(out, cap, "integrity:%s", env_path);
}

void task_judge_name(char *out, size_t cap, const char *judge)
{
	snprintf(out, cap, "judge:%s", judge);
}

size_t suite_judged_tasks(const struct suite *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->ntasks; i++) {
		size_t j = s->tasks[i].njudges;
		for (size_t k = 0; k < s->tasks[i].nfollowups; k++)
			j += s->tasks[i].followups[k].njudges;
		n += j > 0;
	}
	return n;
}

/* `judges`: [{"name", "rubric", "inputs", "required"}], each input one of
 * the deliverables. */
static int parse_judge_list(struct loadctx *c, json_t *holder, const char *at, const struct task *t,
			    size_t name_max, struct task_judge **out, size_t *nout)
{
	json_t *arr;
	char ptr[PTR_MAX];
	ptr_key(ptr, at, "judges");
	TRY(field(c, holder, at, "judges", JSON_ARRAY, 0, &arr));
	if (!arr)
		return 0;
	size_t n = json_array_size(arr);
	if (n == 0)
		return bad(c, ptr, "needs at least 1 item");
	if (n > TASK_JUDGES_MAX)
		return bad(c, ptr, "at most %d judges", TASK_JUDGES_MAX);
	struct task_judge *judges = arena_array(c->a, n, sizeof(*judges));
	if (!judges)
		return oom(c);
	*out = judges;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		char p[PTR_MAX], pk[PTR_MAX];
		ptr_idx(p, ptr, i);
		TRY(expect_object(c, p, o));
		static const char *const keys[] = {"name", "rubric", "inputs", "required", NULL};
		TRY(only_keys(c, o, p, keys));
		struct task_judge *j = &judges[i];
		*nout = i + 1;
		TRY(get_str(c, o, p, "name", 1, 1, &j->name));
		ptr_key(pk, p, "name");
		TRY(check_name_max(c, pk, j->name, name_max));
		for (size_t k = 0; k < i; k++)
			if (!strcmp(judges[k].name, j->name))
				return bad(c, pk, "'%s' is already %s/%zu", j->name, ptr, k);
		TRY(get_str(c, o, p, "rubric", 1, 1, &j->rubric));
		ptr_key(pk, p, "rubric");
		if (strlen(j->rubric) > TASK_JUDGE_RUBRIC_MAX)
			return bad(c, pk, "%zu bytes, at most %d", strlen(j->rubric),
				   TASK_JUDGE_RUBRIC_MAX);
		TRY(get_str_array(c, o, p, "inputs", 0, 0, &j->inputs, &j->ninputs));
		for (size_t k = 0; k < j->ninputs; k++) {
			char pi[PTR_MAX];
			snprintf(pi, sizeof(pi), "%s/inputs/%zu", p, k);
			size_t d = 0;
			while (d < t->ndeliverables &&
			       strcmp(t->deliverables[d].path, j->inputs[k]))
				d++;
			if (d == t->ndeliverables)
				return bad(c, pi, "'%s' is not one of the deliverables",
					   j->inputs[k]);
			for (size_t m = 0; m < k; m++)
				if (!strcmp(j->inputs[m], j->inputs[k]))
					return bad(c, pi, "'%s' is already %s/inputs/%zu",
						   j->inputs[k], p, m);
		}
		TRY(get_bool(c, o, p, "required", 1, &j->required));
	}
	return 0;
}

static int parse_judges(struct loadctx *c, json_t *root, struct task *t)
{
	TRY(parse_judge_list(c, root, "", t, TASK_JUDGE_NAME_MAX, &t->judges, &t->njudges));
	/* a follow-up's judges judge the turn it closes ("turnK:judge:NAME") */
	json_t *fa = json_object_get(root, "followups");
	for (size_t k = 0; k < t->nfollowups; k++) {
		char p[PTR_MAX];
		ptr_idx(p, "/followups", k);
		TRY(parse_judge_list(c, json_array_get(fa, k), p, t, TASK_JUDGE_NAME_MAX - 6,
				     &t->followups[k].judges, &t->followups[k].njudges));
	}
	return 0;
}

/* Every assertion an episode of t can record: the delivery check of the
 * verifier's file, the verifier kind's own, integrity:PATH of each protected
 * input and the interaction assertions (episode.c adds the last two). NULL
 * when memory runs out; *n gets the count. */
static const char **assertion_names(struct loadctx *c, const struct task *t, size_t *n)
{
	size_t nkind = t->verifier->names(t->criteria, NULL, 0);
	size_t cap = 1 + nkind + t->ninputs + t->niasserts + t->njudges;
	for (size_t k = 0; k < t->nfollowups; k++) {
		const struct task_followup *f = &t->followups[k];
		cap += f->njudges;
		cap += 1 + (f->verifier
				? 1 + (f->verifier->names ? f->verifier->names(f->criteria, NULL, 0)
							  : 0)
				: 0);
	}
	const char **v = arena_array(c->a, cap, sizeof(*v));
	char buf[ENGI_NAME_MAX + PTR_MAX];
	if (!v)
		return NULL;
	engi_delivered_name(buf, sizeof(buf), t->verifier_file);
	if (!(v[0] = arena_strdup(c->a, buf)))
		return NULL;
	*n = 1 + t->verifier->names(t->criteria, v + 1, nkind);
	for (size_t i = 0; i < t->ninputs; i++) {
		if (!t->inputs[i].protected_)
			continue;
		task_integrity_name(buf, sizeof(buf), t->inputs[i].env);
		if (!(v[(*n)++] = arena_strdup(c->a, buf)))
			return NULL;
	}
	for (size_t i = 0; i < t->niasserts; i++)
		v[(*n)++] = t->iasserts[i].name;
	for (size_t k = 0; k < t->nfollowups; k++) {
		const struct task_followup *f = &t->followups[k];
		snprintf(buf, sizeof(buf), "turn%zu:reached", k + 1);
		if (!(v[(*n)++] = arena_strdup(c->a, buf)))
			return NULL;
		for (size_t i = 0; i < f->njudges; i++) {
			char jn[ENGI_NAME_MAX];
			task_judge_name(jn, sizeof(jn), f->judges[i].name);
			snprintf(buf, sizeof(buf), "turn%zu:%s", k + 1, jn);
			if (!(v[(*n)++] = arena_strdup(c->a, buf)))
				return NULL;
		}
		if (!f->verifier)
			continue;
		const char *own[1 + 256];
		char del[ENGI_NAME_MAX + PTR_MAX];
		engi_delivered_name(del, sizeof(del), f->verifier_file);
		own[0] = del;
		size_t m =
		    1 + (f->verifier->names ? f->verifier->names(f->criteria, own + 1, 256) : 0);
		if (m > 257)
			m = 257;
		for (size_t j = 0; j < m; j++) {
			snprintf(buf, sizeof(buf), "turn%zu:%s", k + 1, own[j]);
			if (!(v[(*n)++] = arena_strdup(c->a, buf)))
				return NULL;
		}
	}
	for (size_t i = 0; i < t->njudges; i++) {
		task_judge_name(buf, sizeof(buf), t->judges[i].name);
		if (!(v[(*n)++] = arena_strdup(c->a, buf)))
			return NULL;
	}
	return v;
}

/* A flawed variant must fail on assertions the task has: a misspelt name
 * would only show once validate had run every episode. */
static int check_failing(struct loadctx *c, const struct task *t)
{
	if (!t->nflawed || !t->verifier->names)
		return 0;
	size_t n = 0;
	const char **names = assertion_names(c, t, &n);
	if (!names)
		return oom(c);
	for (size_t i = 0; i < t->nflawed; i++)
		for (size_t k = 0; k < t->flawed[i].nfailing; k++) {
			const char *want = t->flawed[i].failing[k];
			size_t j = 0;
			while (j < n && strcmp(names[j], want))
				j++;
			if (j < n)
				continue;
			char p[PTR_MAX], list[ENGI_ERROR_MSG_MAX / 2] = "";
			snprintf(p, sizeof(p), "/flawed/%zu/failing/%zu", i, k);
			engi_json_join(list, sizeof(list), names, n);
			return bad(c, p, "no assertion '%s' (the task's assertions: %s)", want,
				   list);
		}
	return 0;
}

static int parse_task(struct loadctx *c, json_t *root, struct task *t)
{
	c->task = t;
	if (!json_is_object(root))
		return bad(c, "", "a task file holds one JSON object, found %s",
			   engi_json_kind(root));
	static const char *const keys[] = {
	    "schema",	   "id",	   "title",	"domain",      "software", "type",
	    "interface",   "instruction",  "drawings",	"environment", "inputs",   "setup",
	    "limits",	   "deliverables", "verifier",	"reference",   "flawed",   "resources",
	    "interaction", "on_fail",	   "followups", "meta",	       "judges",   NULL};
	TRY(only_keys(c, root, "", keys));
	static const char *const on_fail[] = {"judge", "zero", NULL};
	int of = 0;
	TRY(engi_json_choice(root, "on_fail", on_fail, "on_fail", 0, c->file, "", &of, c->err));
	t->fail_zero = of == 1;
	long schema;
	TRY(get_int(c, root, "", "schema", 0, LONG_MAX, 1, &schema));
	if (schema != 1)
		return bad(c, "/schema",
			   "unsupported schema version %ld (this engisweep reads version 1)",
			   schema);
	TRY(get_str(c, root, "", "id", 1, 1, &t->id));
	TRY(check_name_max(c, "/id", t->id, TASK_ID_MAX));
	TRY(get_str(c, root, "", "title", 0, 0, &t->title));
	if (!t->title)
		t->title = t->id;

	TRY(get_str(c, root, "", "domain", 1, 1, &t->domain));
	static const char *const domains[] = {
#define DOMAIN_STR(d) #d,
	    TASK_DOMAIN_MAP(DOMAIN_STR)
#undef DOMAIN_STR
	};
	int dom_ok = 0;
	for (size_t i = 0; i < sizeof(domains) / sizeof(*domains); i++)
		if (!strcmp(domains[i], t->domain))
			dom_ok = 1;
	if (!dom_ok)
		return bad(c, "/domain",
			   "'%s' is not a domain (valid: CAD, CAE, CAM, BIM, EDA, DCC)", t->domain);

	TRY(get_str_array(c, root, "", "software", 1, 1, &t->software, &t->nsoftware));

	const char *type, *iface;
	TRY(get_str(c, root, "", "type", 1, 1, &type));
	t->type = -1;
#define TYPE_MATCH(n, s)                                                                           \
	if (!strcmp(type, s))                                                                      \
		t->type = TASK_##n;
	TASK_TYPE_MAP(TYPE_MATCH)
#undef TYPE_MATCH
	if (t->type < 0)
		return bad(c, "/type",
			   "'%s' is not a task type (valid: single, selection, vision, "
			   "optimization, cross, open)",
			   type);
	TRY(get_str(c, root, "", "interface", 1, 1, &iface));
	if (!strcmp(iface, "cli"))
		t->interface = IFACE_CLI;
	else if (!strcmp(iface, "gui"))
		t->interface = IFACE_GUI;
	else
		return bad(c, "/interface", "'%s' is neither 'cli' nor 'gui'", iface);
	if (t->type == TASK_OPEN && t->interface == IFACE_GUI)
		return bad(c, "/interface", "open-environment tasks are CLI only");

	TRY(get_str(c, root, "", "instruction", 1, 1, &t->instruction));

	const char **drawings;
	TRY(get_str_array(c, root, "", "drawings", 0, 0, &drawings, &t->ndrawings));
	if (t->ndrawings) {
		t->drawings = arena_array(c->a, t->ndrawings, sizeof(*t->drawings));
		if (!t->drawings)
			return oom(c);
		for (size_t i = 0; i < t->ndrawings; i++) {
			char p[PTR_MAX];
			ptr_idx(p, "/drawings", i);
			TRY(host_file(c, p, drawings[i], &t->drawings[i]));
			/* condition drawings=files puts them at drawings/<name> */
			for (size_t j = 0; j < i; j++)
				if (!strcmp(path_base(drawings[j]), path_base(drawings[i])))
					return bad(c, p,
						   "'%s' has the same file name as /drawings/%zu",
						   drawings[i], j);
		}
	}
	TRY(parse_environment(c, root, t));
	TRY(parse_inputs(c, root, t));
	TRY(parse_setup(c, root, t));
	TRY(parse_limits(c, root, t));
	TRY(parse_deliverables(c, root, t));
	TRY(parse_verifier(c, root, t));
	TRY(parse_followups(c, root, t));

	json_t *ref;
	TRY(field(c, root, "", "reference", JSON_ARRAY, 1, &ref));
	TRY(parse_steps(c, ref, "/reference", &t->reference));
	TRY(parse_flawed(c, root, t));
	TRY(parse_resources(c, root, t));
	TRY(parse_interaction(c, root, t));
	TRY(parse_meta(c, root, t));
	TRY(parse_judges(c, root, t));
	return check_failing(c, t);
}

/* Frees what a task holds outside the arena, loaded or half-loaded: its
 * criteria and compiled patterns. */
void task_release(struct task *t)
{
	if (t->verifier && t->criteria) {
		engi_verifier_free(t->verifier, t->criteria);
		t->criteria = NULL;
	}
	for (size_t i = 0; i < t->nfollowups; i++)
		if (t->followups[i].verifier && t->followups[i].criteria) {
			engi_verifier_free(t->followups[i].verifier, t->followups[i].criteria);
			t->followups[i].criteria = NULL;
		}
	for (size_t i = 0; i < t->nreplies; i++)
		if (t->replies[i].compiled) {
			regfree(&t->replies[i].re);
			t->replies[i].compiled = 0;
		}
	for (size_t i = 0; i < t->niasserts; i++)
		if (t->iasserts[i].compiled) {
			regfree(&t->iasserts[i].re);
			t->iasserts[i].compiled = 0;
		}
}

int task_from_json(struct arena *a, const char *file, const char *absdir, json_t *root,
		   struct task *t, struct engi_error *err)
{
	struct engi_sha256 files;
	engi_sha256_init(&files);
	struct loadctx c = {.file = file, .dir = absdir, .a = a, .err = err, .files_hash = &files};
	memset(t, 0, sizeof(*t));
	int rc = parse_task(&c, root, t);
	if (rc == 0)
		task_hash_verifier_files(&files, absdir, json_object_get(root, "verifier"));
	for (size_t i = 0; rc == 0 && i < t->nfollowups; i++)
		task_hash_verifier_files(
		    &files, absdir,
		    json_object_get(json_array_get(json_object_get(root, "followups"), i),
				    "verifier"));
	if (rc == 0) {
		t->file = arena_strdup(a, file);
		t->dir = arena_strdup(a, absdir);
		char *canon = json_dumps(root, JSON_SORT_KEYS | JSON_COMPACT);
		if (!t->file || !t->dir || !canon) {
			free(canon);
			rc = oom(&c);
		} else {
			task_hash_final(canon, &files, t->hash);
			t->json = arena_strdup(a, canon);
			free(canon);
			if (!t->json)
				rc = oom(&c);
		}
	}
	if (rc < 0)
		task_release(t);
	return rc;
}

int task_turn_view(const struct task *t, size_t turn, struct task *out)
{
	if (turn < 1 || turn > t->nfollowups || !t->followups[turn - 1].verifier)
		return -1;
	const struct task_followup *f = &t->followups[turn - 1];
	*out = *t;
	out->verifier = f->verifier;
	out->verifier_file = f->verifier_file;
	out->criteria = f->criteria;
	out->json = f->json;
	memset(&out->scoring, 0, sizeof(out->scoring));
	out->scoring.mode = ENGI_SCORING_BINARY;
	out->fail_zero = 0;
	return 0;
}

const struct task_flawed *task_find_flawed(const struct task *t, const char *name)
{
	for (size_t i = 0; i < t->nflawed; i++)
		if (!strcmp(t->flawed[i].name, name))
			return &t->flawed[i];
	return NULL;
}
