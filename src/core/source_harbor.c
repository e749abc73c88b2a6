/*
 * The harbor task source: Harbor task folders (one, or a dataset folder of
 * them), each translated into engisweep's own task JSON (tasks/SCHEMA.md):
 *
 *   instruction.md      -> the instruction
 *   task.toml [agent] timeout_sec
 *                       -> limits.wall_s
 *   [environment] cpus, memory_mb (or the older memory = "2G"),
 *   allow_internet      -> environment cpus, memory_mb, network (Harbor's
 *                          default: a network)
 *   [environment] docker_image, else environment/Dockerfile's FROM
 *                       -> the key of the images map (--images) that names
 *                          the engisweep image; "*" maps every key; an
 *                          environment the map does not name is refused
 *   Dockerfile WORKDIR  -> environment.workdir (default /app); COPY and ADD
 *                          of build-context files into it -> inputs; what
 *                          the Dockerfile installs or copies elsewhere is
 *                          the mapped image's to provide
 *   solution/           -> the reference: its files written to /solution,
 *                          then solve.sh run from the working folder (none:
 *                          a reference that declares failure)
 *   tests/              -> a verifier of kind command with Harbor's
 *                          protocol: after the agent stops, /tests emptied,
 *                          the folder's files uploaded there, test.sh run
 *                          from the working folder in the episode's own
 *                          environment with [verifier] env, within
 *                          [verifier] timeout_sec, its output in
 *                          /logs/verifier/test-stdout.txt; the reward
 *                          (check harbor_reward) is the score: the task is
 *                          of type optimization, its quality the reward
 *                          clamped to [0, 1]
 *   [task] name, [metadata] category, difficulty
 *                       -> meta harbor_name, category, difficulty, and the
 *                          working folder as harbor_workdir
 *
 * /tests, /logs and /solution are the task's environment folders. A task's
 * deliverables are not in its folder: a deliverables map (--deliverables
 * FILE) names them, by task name, folder name or "*". Refused with the
 * reason, never half run: GPUs, MCP servers, docker-compose environments
 * without an image, multi-stage copies, variables taken from the host,
 * files that are not regular files.
 */
#include "source.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "fsutil.h"
#include "toml.h"

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define HB_INSTR_CAP	  ((size_t)1 << 20)
#define HB_DOCKERFILE_CAP ((size_t)256 << 10)
#define HB_MAP_CAP	  ((size_t)4 << 20)
#define HB_MAX_TASKS	  4096
#define HB_MAX_FILES	  64
#define HB_MAX_DEPTH	  8
#define HB_DEFAULT_WD	  "/app"
#define HB_RUN_MAX	  4000

static const char *const hb_folders[] = {"/tests", "/logs", "/solution"};

struct hb_refusal {
	char category[96];
	char msg[1024];
};

static int hb_is_task(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/task.toml", dir);
	if (!fs_path_is_file(p))
		return 0;
	snprintf(p, sizeof(p), "%s/instruction.md", dir);
	return fs_path_is_file(p);
}

/* A dataset's task folder: not hidden, a folder (not a link), a task. */
static int hb_keep_task(const char *root, const char *name, void *ctx)
{
	(void)ctx;
	char p[PATH_MAX];
	struct stat st;
	return name[0] != '.' && snprintf(p, sizeof(p), "%s/%s", root, name) < (int)sizeof(p) &&
	       lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && hb_is_task(p);
}

/* The task folders of a dataset folder, sorted. */
static int hb_task_dirs(const char *root, char ***out, size_t *n)
{
	return fs_dir_names(root, hb_keep_task, NULL, HB_MAX_TASKS, out, n);
}

static int hb_probe(const char *path)
{
	if (!fs_path_is_dir(path))
		return 0;
	if (hb_is_task(path))
		return 90;
	char **names;
	size_t n;
	if (hb_task_dirs(path, &names, &n) < 0)
		return 0;
	fs_names_free(names, n);
	return n ? 80 : 0;
}

/* Characters a path may hold to reach a shell quoted, and a file name. */
static int hb_name_ok(const char *s)
{
	static const char ok[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+";
	return s[0] && strspn(s, ok) == strlen(s) && strcmp(s, ".") && strcmp(s, "..");
}

/* The regular files under dir/sub (paths relative to dir, sorted) into a
 * JSON array of strings; -1 with r filled when one is not a regular file or
 * a name is unusual, or there are more than HB_MAX_FILES. */
static int hb_files(const char *dir, const char *sub, int depth, json_t *out, struct hb_refusal *r)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	char **names = NULL;
	size_t n = 0;
	if (fs_dir_names(p, NULL, NULL, 4 * HB_MAX_FILES, &names, &n) < 0)
		SUITE_REFUSE(r, "unreadable folder", "cannot read the folder %s", sub);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char rel[PATH_MAX], full[PATH_MAX];
		struct stat st;
		if (!hb_name_ok(names[i])) {
			snprintf(r->category, sizeof(r->category), "unusual file name");
			snprintf(r->msg, sizeof(r->msg),
				 "%s holds a file whose name is not of "
				 "[A-Za-z0-9._+-]",
				 sub);
			rc = -1;
		} else if (snprintf(rel, sizeof(rel), "%s/%s", sub, names[i]) >= (int)sizeof(rel) ||
			   snprintf(full, sizeof(full), "%s/%s", dir, rel) >= (int)sizeof(full) ||
			   lstat(full, &st) < 0) {
			snprintf(r->category, sizeof(r->category), "unreadable folder");
			snprintf(r->msg, sizeof(r->msg), "cannot read %s/%s", sub, names[i]);
			rc = -1;
		} else if (S_ISDIR(st.st_mode) && depth < HB_MAX_DEPTH) {
			rc = hb_files(dir, rel, depth + 1, out, r);
		} else if (!S_ISREG(st.st_mode)) {
			snprintf(r->category, sizeof(r->category), "not a regular file");
			snprintf(r->msg, sizeof(r->msg), "%s is not a regular file", rel);
			rc = -1;
		} else if (json_array_size(out) >= HB_MAX_FILES) {
			snprintf(r->category, sizeof(r->category), "too many files");
			snprintf(r->msg, sizeof(r->msg), "more than %d files under %s",
				 HB_MAX_FILES, sub);
			rc = -1;
		} else {
			json_array_append_new(out, json_string(rel));
		}
	}
	fs_names_free(names, n);
	return rc;
}

/* A TOML table's number (integer or float) at key, or dflt. -1 when the
 * value is there and is no number. */
static int hb_num(json_t *tbl, const char *key, double dflt, double *out)
{
	json_t *v = json_object_get(tbl, key);
	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return 0;
}

/* "2G", "512M", "1024K" in MB (Harbor's older memory setting). */
static int hb_size_mb(const char *s, double *mb)
{
	char *end = NULL;
	double x = strtod(s, &end);
	if (!end || end == s || !isfinite(x) || x <= 0)
		return -1;
	if (!strcmp(end, "G") || !strcmp(end, "g"))
		x *= 1024;
	else if (!strcmp(end, "K") || !strcmp(end, "k"))
		x /= 1024;
	else if (strcmp(end, "M") && strcmp(end, "m"))
		return -1;
	*mb = x;
	return 0;
}

/* ---- the Dockerfile: the few instructions engisweep translates ---- */

struct hb_docker {
	char from[256];
	char workdir[256];
	json_t *copies; /* [{"host", "dest"}]: build-context files, dest absolute */
};

/* The words of a Dockerfile instruction's arguments, JSON form or not;
 * -1 when there is more than fits. */
static int hb_words(const char *args, char words[][256], int max)
{
	int n = 0;
	while (isspace((unsigned char)*args))
		args++;
	if (*args == '[') {
		json_t *j = json_loads(args, JSON_DECODE_ANY, NULL);
		size_t i;
		json_t *e;
		if (!json_is_array(j)) {
			json_decref(j);
			return -1;
		}
		json_array_foreach(j, i, e)
		{
			const char *w = json_string_value(e);
			if (!w || n >= max || strlen(w) >= 256) {
				json_decref(j);
				return -1;
			}
			snprintf(words[n++], 256, "%s", w);
		}
		json_decref(j);
		return n;
	}
	while (*args) {
		size_t k = strcspn(args, " \t");
		if (n >= max || k >= 256)
			return -1;
		memcpy(words[n], args, k);
		words[n++][k] = '\0';
		args += k;
		while (isspace((unsigned char)*args))
			args++;
	}
	return n;
}

/* wd joined with p (p absolute: p), into out; -1 when too long. */
static int hb_join(const char *wd, const char *p, char *out, size_t n)
{
	int w = p[0] == '/' ? snprintf(out, n, "%s", p) : snprintf(out, n, "%s/%s", wd, p);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int hb_copy(struct hb_docker *dk, const char *envdir, const char *args, int line,
		   struct hb_refusal *r)
{
	char words[34][256];
	int n = hb_words(args, words, 34);
	if (n < 0)
		SUITE_REFUSE(r, "unsupported Dockerfile",
			     "environment/Dockerfile:%d: a COPY or ADD "
			     "engisweep cannot read",
			     line);
	int first = 0;
	while (first < n && !strncmp(words[first], "--", 2)) {
		if (!strncmp(words[first], "--from", 6))
			SUITE_REFUSE(r, "unsupported Dockerfile",
				     "environment/Dockerfile:%d: a copy from another build stage "
				     "(%s)",
				     line, words[first]);
		first++; /* --chown, --chmod, --link: the guest's owner and mode */
	}
	if (n - first < 2)
		SUITE_REFUSE(r, "unsupported Dockerfile",
			     "environment/Dockerfile:%d: a COPY or ADD without source and "
			     "destination",
			     line);
	const char *dest = words[n - 1];
	int many = n - first > 2;
	for (int i = first; i < n - 1; i++) {
		const char *src = words[i];
		if (strchr(src, '$') || strchr(dest, '$') || strstr(src, "://") ||
		    strpbrk(src, "*?[") || src[0] == '/' || strstr(src, ".."))
			SUITE_REFUSE(r, "unsupported Dockerfile",
				     "environment/Dockerfile:%d: '%s' is not a plain path of the "
				     "build context",
				     line, src);
		char ctx[PATH_MAX];
		snprintf(ctx, sizeof(ctx), "environment/%s", src);
		while (strlen(ctx) > 12 && ctx[strlen(ctx) - 1] == '/')
			ctx[strlen(ctx) - 1] = '\0';
		char full[PATH_MAX];
		snprintf(full, sizeof(full), "%s/../%s", envdir, ctx);
		struct stat st;
		if (lstat(full, &st) < 0)
			SUITE_REFUSE(r, "unsupported Dockerfile",
				     "environment/Dockerfile:%d: '%s' is not in the build context",
				     line, src);
		json_t *files = json_array();
		if (S_ISDIR(st.st_mode)) {
			char parent[PATH_MAX];
			snprintf(parent, sizeof(parent), "%s/..", envdir);
			if (hb_files(parent, ctx, 0, files, r) < 0) {
				json_decref(files);
				return -1;
			}
		} else if (S_ISREG(st.st_mode)) {
			json_array_append_new(files, json_string(ctx));
		} else {
			json_decref(files);
			SUITE_REFUSE(r, "not a regular file", "%s is not a regular file", ctx);
		}
		size_t k;
		json_t *f;
		json_array_foreach(files, k, f)
		{
			const char *host = json_string_value(f);
			/* a folder's contents go into dest; a file to dest, or
			 * into it when dest is a folder */
			char rel[PATH_MAX], d[PATH_MAX], abs[PATH_MAX];
			if (S_ISDIR(st.st_mode))
				snprintf(rel, sizeof(rel), "%s", host + strlen(ctx) + 1);
			else
				snprintf(rel, sizeof(rel), "%s", strrchr(host, '/') + 1);
			int into = S_ISDIR(st.st_mode) || many || dest[strlen(dest) - 1] == '/';
			size_t dl = strlen(dest);
			while (dl > 1 && dest[dl - 1] == '/')
				dl--;
			if (into)
				snprintf(d, sizeof(d), "%.*s/%s", (int)dl, dest, rel);
			else
				snprintf(d, sizeof(d), "%s", dest);
			if (hb_join(dk->workdir, d, abs, sizeof(abs)) < 0) {
				json_decref(files);
				SUITE_REFUSE(r, "unsupported Dockerfile",
					     "environment/Dockerfile:%d: a path too long", line);
			}
			json_array_append_new(dk->copies,
					      json_pack("{s:s, s:s}", "host", host, "dest", abs));
		}
		json_decref(files);
	}
	return 0;
}

/* Reads the Dockerfile of envdir (FROM, WORKDIR, COPY/ADD); other
 * instructions build the image the images map names. */
static int hb_dockerfile(const char *envdir, struct hb_docker *dk, struct hb_refusal *r)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/Dockerfile", envdir);
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	snprintf(dk->workdir, sizeof(dk->workdir), "/");
	if (fs_read_file(p, HB_DOCKERFILE_CAP, &text, &len, &e) < 0)
		SUITE_REFUSE(r, "unreadable Dockerfile", "environment/Dockerfile: %s", e.msg);
	int rc = 0, line = 0, wd_set = 0;
	char *save = NULL;
	/* continuation lines joined: a backslash before the newline */
	for (size_t i = 0; i + 1 < len; i++)
		if (text[i] == '\\' && text[i + 1] == '\n')
			text[i] = text[i + 1] = ' ';
	for (char *ln = strtok_r(text, "\n", &save); ln && rc == 0;
	     ln = strtok_r(NULL, "\n", &save)) {
		line++;
		while (isspace((unsigned char)*ln))
			ln++;
		if (!*ln || *ln == '#')
			continue;
		size_t k = strcspn(ln, " \t");
		char ins[16];
		if (k >= sizeof(ins))
			continue;
		for (size_t j = 0; j < k; j++)
			ins[j] = (char)toupper((unsigned char)ln[j]);
		ins[k] = '\0';
		const char *args = ln + k;
		while (isspace((unsigned char)*args))
			args++;
		char words[8][256];
		if (!strcmp(ins, "FROM")) {
			int n = hb_words(args, words, 8);
			int w = 0;
			while (w < n && !strncmp(words[w], "--", 2))
				w++;
			if (n <= w) {
				snprintf(r->category, sizeof(r->category),
					 "unsupported Dockerfile");
				snprintf(r->msg, sizeof(r->msg),
					 "environment/Dockerfile:%d: FROM without an image", line);
				rc = -1;
			} else if (!dk->from[0]) {
				snprintf(dk->from, sizeof(dk->from), "%s", words[w]);
			}
		} else if (!strcmp(ins, "WORKDIR")) {
			char abs[PATH_MAX];
			int n = hb_words(args, words, 8);
			if (n != 1 || strchr(words[0], '$') ||
			    hb_join(dk->workdir, words[0], abs, sizeof(abs)) < 0 ||
			    strlen(abs) >= sizeof(dk->workdir)) {
				snprintf(r->category, sizeof(r->category),
					 "unsupported Dockerfile");
				snprintf(r->msg, sizeof(r->msg),
					 "environment/Dockerfile:%d: a WORKDIR engisweep cannot "
					 "read",
					 line);
				rc = -1;
			} else {
				while (strlen(abs) > 1 && abs[strlen(abs) - 1] == '/')
					abs[strlen(abs) - 1] = '\0';
				snprintf(dk->workdir, sizeof(dk->workdir), "%s", abs);
				wd_set = 1;
			}
		} else if (!strcmp(ins, "COPY") || !strcmp(ins, "ADD")) {
			rc = hb_copy(dk, envdir, args, line, r);
		}
	}
	engi_free(text);
	if (rc == 0 && !wd_set)
		snprintf(dk->workdir, sizeof(dk->workdir), "%s", HB_DEFAULT_WD);
	return rc;
}

/* ---- the deliverables map ---- */

/* The map's entry for the task (its name, its name's last part, its
 * folder's name, then "*"), or NULL. */
static json_t *hb_map_entry(json_t *map, const char *name, const char *folder)
{
	const char *keys[] = {name, name ? strrchr(name, '/') : NULL, folder, "*"};
	if (keys[1])
		keys[1]++;
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		json_t *e = keys[i] ? json_object_get(map, keys[i]) : NULL;
		if (e)
			return e;
	}
	return NULL;
}

/* A guest path of the map as the task's: relative to the working folder,
 * or absolute where it is not under it. */
static void hb_env_path(const char *wd, const char *p, char *out, size_t n)
{
	size_t w = strlen(wd);
	if (p[0] == '/' && !strncmp(p, wd, w) && p[w] == '/')
		snprintf(out, n, "%s", p + w + 1);
	else
		snprintf(out, n, "%s", p);
}

static json_t *hb_deliverables(json_t *entry, const char *wd, const char *mapfile,
			       struct hb_refusal *r, int *bad)
{
	*bad = 0;
	json_t *out = json_array();
	size_t i;
	json_t *e;
	if (!json_is_array(entry) || !json_array_size(entry)) {
		*bad = 1;
		snprintf(r->msg, sizeof(r->msg), "%s: the task's entry is not a non-empty array",
			 mapfile);
		return out;
	}
	json_array_foreach(entry, i, e)
	{
		json_t *d = json_is_string(e) ? json_pack("{s:O}", "path", e) : json_deep_copy(e);
		const char *p = json_string_value(json_object_get(d, "path"));
		if (!p) {
			*bad = 1;
			snprintf(r->msg, sizeof(r->msg),
				 "%s: deliverable %zu is neither a path nor an object with one",
				 mapfile, i);
			json_decref(d);
			break;
		}
		char ep[PATH_MAX];
		hb_env_path(wd, p, ep, sizeof(ep));
		json_object_set_new(d, "path", json_string(ep));
		json_array_append_new(out, d);
	}
	return out;
}

/* ---- one task ---- */

/* s quoted for sh (single quotes), appended to b; -1 when it does not fit. */
static int hb_quote(char *b, size_t n, const char *s)
{
	size_t k = strlen(b);
	if (k + 2 >= n)
		return -1;
	b[k++] = '\'';
	for (; *s; s++) {
		if (*s == '\'') {
			if (k + 4 >= n)
				return -1;
			memcpy(b + k, "'\\''", 4);
			k += 4;
		} else {
			if (k + 1 >= n)
				return -1;
			b[k++] = *s;
		}
	}
	if (k + 2 >= n)
		return -1;
	b[k++] = '\'';
	b[k] = '\0';
	return 0;
}

/* An env table's variables as "export K='V'; " into b. Values taken from
 * the host (${VAR}) are refused: no variable of the host reaches an
 * environment. */
static int hb_exports(json_t *tbl, const char *where, char *b, size_t n, struct hb_refusal *r)
{
	const char *k;
	json_t *v;
	json_object_foreach(tbl, k, v)
	{
		const char *s = json_string_value(v);
		if (!s || !k[0] ||
		    strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			      "0123456789_") != strlen(k) ||
		    isdigit((unsigned char)k[0]))
			SUITE_REFUSE(r, "unsupported setting",
				     "task.toml: %s: '%s' is not a "
				     "variable with a text value",
				     where, k);
		if (strstr(s, "${") || s[0] == '$')
			SUITE_REFUSE(r, "host variable",
				     "task.toml: %s: '%s' takes its value from the host, which "
				     "engisweep never passes into an environment",
				     where, k);
		size_t l = strlen(b);
		if (snprintf(b + l, n - l, "export %s=", k) >= (int)(n - l) ||
		    hb_quote(b, n, s) < 0 || strlen(b) + 3 >= n)
			SUITE_REFUSE(r, "unsupported setting", "task.toml: %s: too long", where);
		strcat(b, "; ");
	}
	return 0;
}

struct hb_ctx {
	struct suite *s;
	json_t *map; /* the deliverables map, or NULL */
	const char *mapfile;
};

static int hb_translate(const struct hb_ctx *hc, const char *dir, const char *folder, json_t *toml,
			json_t **out, struct hb_refusal *r)
{
	*out = NULL;
	json_t *tt = json_object_get(toml, "task"), *md = json_object_get(toml, "metadata"),
	       *ag = json_object_get(toml, "agent"), *ve = json_object_get(toml, "verifier"),
	       *en = json_object_get(toml, "environment"), *so = json_object_get(toml, "solution");
	const char *name = json_string_value(json_object_get(tt, "name"));
	/* id: the folder's name, as engisweep's ids are written */
	char id[128];
	size_t k = 0;
	for (const char *c = folder; *c && k + 1 < sizeof(id); c++)
		id[k++] =
		    isalnum((unsigned char)*c) || *c == '.' || *c == '_' || *c == '-' ? *c : '-';
	id[k] = '\0';
	if (!isalnum((unsigned char)id[0]))
		SUITE_REFUSE(r, "unusual task name",
			     "the folder name '%s' does not start with a "
			     "letter or digit",
			     folder);
	/* resources */
	double cpus, mem, agent_s, verifier_s, gpus;
	if (hb_num(en, "cpus", 1, &cpus) < 0 || hb_num(en, "memory_mb", 2048, &mem) < 0 ||
	    hb_num(en, "gpus", 0, &gpus) < 0 || hb_num(ag, "timeout_sec", 0, &agent_s) < 0 ||
	    hb_num(ve, "timeout_sec", 600, &verifier_s) < 0)
		SUITE_REFUSE(r, "malformed task.toml",
			     "task.toml: a number setting ([environment] cpus, memory_mb, gpus, "
			     "[agent] or [verifier] timeout_sec) is not a number");
	const char *memory = json_string_value(json_object_get(en, "memory"));
	if (memory && hb_size_mb(memory, &mem) < 0)
		SUITE_REFUSE(r, "malformed task.toml",
			     "task.toml: [environment] memory '%s' is not "
			     "a size such as 2G or 512M",
			     memory);
	if (gpus > 0)
		SUITE_REFUSE(r, "unsupported environment",
			     "task.toml: [environment] gpus = %g: "
			     "engisweep's environments have no GPUs",
			     gpus);
	if (json_array_size(json_object_get(en, "mcp_servers")))
		SUITE_REFUSE(
		    r, "unsupported environment",
		    "task.toml: [[environment.mcp_servers]]: MCP servers are not supported");
	if (cpus < 1 || cpus > 64 || cpus != floor(cpus) || mem < 64 || mem > 262144 ||
	    !(agent_s >= 0) || !(verifier_s > 0 && verifier_s <= 86400))
		SUITE_REFUSE(r, "unsupported environment",
			     "task.toml: cpus %g, memory %g MB, agent timeout %g s or verifier "
			     "timeout %g s outside what engisweep runs (1-64 CPUs, 64-262144 MB, "
			     "a verifier limit up to a day)",
			     cpus, mem, agent_s, verifier_s);
	json_t *net = json_object_get(en, "allow_internet");
	int network = net ? json_is_true(net) : 1;
	/* the environment: the image the map names, the Dockerfile's layout */
	struct hb_docker dk;
	memset(&dk, 0, sizeof(dk));
	dk.copies = json_array();
	char envdir[PATH_MAX], p[PATH_MAX];
	snprintf(envdir, sizeof(envdir), "%s/environment", dir);
	snprintf(p, sizeof(p), "%s/Dockerfile", envdir);
	const char *docker_image = json_string_value(json_object_get(en, "docker_image"));
	if (fs_path_is_file(p)) {
		if (hb_dockerfile(envdir, &dk, r) < 0) {
			json_decref(dk.copies);
			return -1;
		}
	} else {
		snprintf(dk.workdir, sizeof(dk.workdir), "%s", HB_DEFAULT_WD);
		if (!docker_image) {
			json_decref(dk.copies);
			SUITE_REFUSE(
			    r, "unsupported environment",
			    "environment/: no Dockerfile and no [environment] "
			    "docker_image (a docker-compose environment is not supported)");
		}
	}
	const char *key = docker_image ? docker_image : dk.from;
	const char *image = suite_image_for(hc->s, key, suite_image_for(hc->s, "*", NULL));
	if (!image) {
		json_decref(dk.copies);
		SUITE_REFUSE(r, "environment not mapped",
			     "its environment '%s' is no engisweep image: map it with --images "
			     "FILE ({\"%s\": IMAGE}, or \"*\" for every task)",
			     key, key);
	}
	/* inputs: the copies into the working folder */
	json_t *inputs = json_array();
	size_t i;
	json_t *c;
	size_t wl = strlen(dk.workdir);
	json_array_foreach(dk.copies, i, c)
	{
		const char *dest = json_string_value(json_object_get(c, "dest"));
		if (strncmp(dest, dk.workdir, wl) || dest[wl] != '/')
			continue; /* the image's content */
		json_array_append_new(inputs,
				      json_pack("{s:O, s:s}", "host", json_object_get(c, "host"),
						"env", dest + wl + 1));
	}
	json_decref(dk.copies);
	/* deliverables */
	json_t *entry = hc->map ? hb_map_entry(hc->map, name, folder) : NULL;
	if (!entry) {
		json_decref(inputs);
		SUITE_REFUSE(r, "no deliverables",
			     "a Harbor task does not list what the agent delivers: name it in a "
			     "deliverables map (--deliverables FILE: {\"%s\": [\"answer.txt\"]}, "
			     "or \"*\" for every task)",
			     name ? name : folder);
	}
	int bad;
	json_t *deliv = hb_deliverables(entry, dk.workdir, hc->mapfile, r, &bad);
	if (bad) {
		json_decref(inputs);
		json_decref(deliv);
		snprintf(r->category, sizeof(r->category), "malformed deliverables map");
		return -1;
	}
	/* the verifier: tests/ with Harbor's protocol */
	json_t *tests = json_array(), *uploads = json_array();
	snprintf(p, sizeof(p), "%s/tests/test.sh", dir);
	if (!fs_path_is_file(p) || hb_files(dir, "tests", 0, tests, r) < 0) {
		if (!r->category[0]) {
			snprintf(r->category, sizeof(r->category), "no tests");
			snprintf(r->msg, sizeof(r->msg), "tests/test.sh is missing");
		}
		json_decref(inputs);
		json_decref(deliv);
		json_decref(tests);
		json_decref(uploads);
		return -1;
	}
	json_array_foreach(tests, i, c)
	{
		char to[PATH_MAX];
		snprintf(to, sizeof(to), "/%s", json_string_value(c));
		json_array_append_new(uploads, json_pack("{s:O, s:s}", "from", c, "to", to));
	}
	json_decref(tests);
	char vexp[2048] = "", sexp[2048] = "";
	if (hb_exports(json_object_get(ve, "env"), "[verifier] env", vexp, sizeof(vexp), r) < 0 ||
	    hb_exports(json_object_get(so, "env"), "[solution] env", sexp, sizeof(sexp), r) < 0) {
		json_decref(inputs);
		json_decref(deliv);
		json_decref(uploads);
		return -1;
	}
	char run[HB_RUN_MAX];
	snprintf(run, sizeof(run),
		 "cd '%s' && chmod +x /tests/test.sh && { %s/tests/test.sh > "
		 "/logs/verifier/test-stdout.txt 2>&1; echo \"test.sh exit status $?\"; }",
		 dk.workdir, vexp);
	const char *dfile = json_string_value(json_object_get(json_array_get(deliv, 0), "path"));
	json_t *verifier = json_pack(
	    "{s:s, s:s, s:s, s:[s], s:o, s:s, s:f, s:[{s:s, s:s, s:b}], s:{s:s, s:s, s:f, s:f}}",
	    "kind", "command", "file", dfile, "env", "episode", "clear", "/tests", "upload",
	    uploads, "run", run, "timeout_s", verifier_s, "criteria", "name", "reward", "check",
	    "harbor_reward", "required", 0, "objective", "metric", "evaluator_score", "sense",
	    "max", "baseline", 0.0, "reference", 1.0);
	/* the reference: solution/ into /solution, solve.sh run */
	json_t *reference = json_array(), *sol = json_array();
	snprintf(p, sizeof(p), "%s/solution/solve.sh", dir);
	if (fs_path_is_file(p) && hb_files(dir, "solution", 0, sol, r) == 0) {
		json_array_foreach(sol, i, c)
		{
			char to[PATH_MAX];
			snprintf(to, sizeof(to), "/%s", json_string_value(c));
			json_array_append_new(reference,
					      json_pack("{s:s, s:O}", "write", to, "from", c));
		}
		char srun[HB_RUN_MAX];
		snprintf(srun, sizeof(srun),
			 "cd '%s' && chmod +x /solution/solve.sh && %s/solution/solve.sh",
			 dk.workdir, sexp);
		json_array_append_new(reference, json_pack("{s:s}", "run", srun));
	} else {
		json_array_clear(reference);
		json_array_append_new(
		    reference,
		    json_pack("{s:s}", "fail", "the Harbor task has no solution/solve.sh"));
	}
	json_decref(sol);
	r->category[0] = '\0';
	/* metadata */
	json_t *meta = json_object();
	/* where the deliverables lie in the guest, for export --format harbor */
	json_object_set_new(meta, "harbor_workdir", json_string(dk.workdir));
	if (name && strlen(name) < 128)
		json_object_set_new(meta, "harbor_name", json_string(name));
	const char *cat = json_string_value(json_object_get(md, "category"));
	if (cat && strlen(cat) < 128 && cat[0])
		json_object_set_new(meta, "category", json_string(cat));
	json_t *diff = json_object_get(md, "difficulty");
	if ((json_is_string(diff) && json_string_length(diff) && json_string_length(diff) < 128) ||
	    json_is_number(diff))
		json_object_set(meta, "difficulty", diff);
	/* the domain: the metadata's, when it names one of engisweep's */
	static const char *const domains[] = {"CAD", "CAE", "CAM", "BIM", "EDA", "DCC"};
	const char *domain = "CAD";
	const char *mdom = json_string_value(json_object_get(md, "domain"));
	for (size_t d = 0; d < 6; d++)
		if ((mdom && !strcasecmp(mdom, domains[d])) ||
		    (cat && !strcasecmp(cat, domains[d])))
			domain = domains[d];
	const char *sw = json_string_value(json_object_get(md, "software"));
	char swbuf[64];
	if (!sw || !sw[0] || strlen(sw) > 63) {
		snprintf(swbuf, sizeof(swbuf), "%s",
			 strstr(folder, "freecad") || (name && strstr(name, "freecad")) ? "FreeCAD"
											: "harbor");
		sw = swbuf;
	}
	char instr_path[PATH_MAX];
	snprintf(instr_path, sizeof(instr_path), "%s/instruction.md", dir);
	char *instr = NULL;
	size_t ilen = 0;
	struct engi_error e;
	engi_error_init(&e);
	if (fs_read_file(instr_path, HB_INSTR_CAP, &instr, &ilen, &e) < 0 ||
	    strlen(instr) != ilen || !ilen) {
		engi_free(instr);
		json_decref(inputs);
		json_decref(deliv);
		json_decref(verifier);
		json_decref(reference);
		json_decref(meta);
		SUITE_REFUSE(r, "unreadable instruction", "instruction.md: %s",
			     e.msg[0] ? e.msg : "empty or holds a NUL byte");
	}
	json_t *folders = json_array();
	for (size_t f = 0; f < sizeof(hb_folders) / sizeof(*hb_folders); f++)
		json_array_append_new(folders, json_string(hb_folders[f]));
	json_t *task =
	    json_pack("{s:s, s:s, s:s, s:[s], s:s, s:s, s:s, s:{s:s, s:s, s:i, s:i, s:b, s:o}, "
		      "s:[{s:s}], s:o, s:o, s:o, s:o}",
		      "id", id, "title", name ? name : folder, "domain", domain, "software", sw,
		      "type", "optimization", "interface", "cli", "instruction", instr,
		      "environment", "image", image, "workdir", dk.workdir, "cpus", (int)cpus,
		      "memory_mb", (int)mem, "network", network, "folders", folders, "setup", "run",
		      "mkdir -p /logs/agent /logs/verifier /logs/artifacts", "deliverables", deliv,
		      "verifier", verifier, "reference", reference, "meta", meta);
	engi_free(instr);
	if (!task) {
		json_decref(inputs);
		SUITE_REFUSE(r, "out of memory", "out of memory");
	}
	if (json_array_size(inputs))
		json_object_set(task, "inputs", inputs);
	json_decref(inputs);
	if (agent_s > 0)
		json_object_set_new(task, "limits", json_pack("{s:f}", "wall_s", agent_s));
	*out = task;
	return 0;
}

static int hb_load_task(const struct hb_ctx *hc, const char *dir, const char *folder, int strict,
			struct engi_error *err)
{
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/task.toml", dir);
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	json_t *toml = NULL, *task = NULL;
	struct hb_refusal r = {"", ""};
	int rc = fs_read_file(file, ENGI_TOML_MAX_BYTES, &text, &len, &e);
	if (rc == 0)
		rc = engi_toml_parse(text, len, file, &toml, &e);
	engi_free(text);
	if (rc < 0)
		return suite_settle_file(hc->s, file, rc, "not valid TOML", e.msg, 1, &e, strict,
					 err);
	rc = hb_translate(hc, dir, folder, toml, &task, &r);
	json_decref(toml);
	if (rc == 0) {
		rc = suite_add_json(hc->s, file, dir, task, &e);
		json_decref(task);
		return suite_settle_file(hc->s, file, rc, NULL, NULL, 0, &e, strict, err);
	}
	return suite_settle_file(hc->s, file, rc, r.category, r.msg, 0, &e, strict, err);
}

static int hb_load(struct suite *s, const char *path, int strict, struct engi_error *err)
{
	char *abs = realpath(path, NULL);
	if (!abs || !fs_path_is_dir(abs)) {
		free(abs);
		RAISE(err, ENGI_ENOTFOUND, "'%s' is not a Harbor task or dataset folder", path);
	}
	struct hb_ctx hc = {s, NULL, s->deliverables};
	if (s->deliverables) {
		char *text = NULL;
		size_t len = 0;
		int rc = fs_read_file(s->deliverables, HB_MAP_CAP, &text, &len, err);
		if (rc == 0)
			rc = engi_json_parse(s->deliverables, text, len, &hc.map, err);
		engi_free(text);
		if (rc == 0 && !json_is_object(hc.map))
			rc = engi_raise(err, ENGI_EPARSE,
					"%s: /: expected an object of task name -> deliverables",
					s->deliverables);
		if (rc < 0) {
			json_decref(hc.map);
			free(abs);
			return rc;
		}
	}
	int rc = 0;
	if (hb_is_task(abs)) {
		const char *slash = strrchr(abs, '/');
		rc = hb_load_task(&hc, abs, slash ? slash + 1 : abs, strict, err);
	} else {
		char **names;
		size_t n = 0;
		if (hb_task_dirs(abs, &names, &n) < 0 || !n)
			rc = engi_raise(err, ENGI_ENOTFOUND,
					"'%s' holds no Harbor task (a folder with task.toml and "
					"instruction.md)",
					path);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			char dir[2 * PATH_MAX];
			snprintf(dir, sizeof(dir), "%s/%s", abs, names[i]);
			rc = hb_load_task(&hc, dir, names[i], strict, err);
		}
		if (n)
			fs_names_free(names, n);
	}
	json_decref(hc.map);
	free(abs);
	return rc;
}

static const struct task_source_ops hb_ops = {
    .probe = hb_probe,
    .load = hb_load,
};

const struct task_source task_source_harbor = {
    .name = "harbor",
    .summary = "Harbor task folders (task.toml, instruction.md, environment/, solution/, tests/), "
	       "one or a dataset folder of them",
    .supports = "task.toml timeouts, cpus, memory, internet; the Dockerfile's FROM, WORKDIR and "
		"copies into it; solution/solve.sh as the reference; tests/test.sh with its "
		"reward.json or reward.txt; deliverables from a deliverables map",
    .ops = &hb_ops,
    .partial = 1,
    .takes_deliverables = 1,
};
