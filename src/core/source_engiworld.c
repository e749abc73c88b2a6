/*
 * The engiworld task source: an EngiWorld task tree as the benchmark
 * publishes it, task/<category>/<gui|cli>/<folder>/<task-NN>/<task-NN>.json
 * (a path to the tree, or to a checkout holding task/), every task file
 * read and translated into engisweep's own task JSON (tasks/SCHEMA.md):
 *
 *   id              the benchmark's id, checked against the file's place
 *   category        -> type (single, selection, vision, optimization,
 *                      cross, open); the folder's software -> domain
 *   related_apps    -> software
 *   snapshot        -> environment.image (the snapshot name; an images map
 *                      names engisweep images for it)
 *   config          upload_file -> inputs (host path relative to the
 *                      folder of the task folders, guest path under the
 *                      guest's Desktop, the working folder); launch and
 *                      execute -> setup steps launch and run (status
 *                      ignored), the runtime's screen placeholders at
 *                      1920x1080
 *   artifact_paths  -> deliverables
 *   evaluator       postconfig upload_file -> the command verifier's
 *                      uploads; vm_command_line -> its command; exact_match
 *                      against "True\n" -> check true_false (any other
 *                      output is an evaluator error, never a verdict)
 *   ground_truth/   files named like a deliverable -> the reference
 *   category, the id's os, snapshot
 *                   -> meta category, os, snapshot (for report --by)
 *
 * What engisweep does not run yet is refused with its reason, never half
 * run: Windows guests, setup steps other than upload_file, launch and
 * execute (and their options other than command, shell, timeout), evaluators
 * other than one vm_command_line with exact_match or quantified_score,
 * paths outside the guest's Desktop, files the task names that are not
 * in the tree.
 */
#include "source.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "engi/json.h"
#include "engi/schema.h"
#include "fsutil.h"
#include "task.h"
#include "text.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define EW_FILE_CAP ((size_t)4 << 20)
#define EW_DESKTOP  "/home/user/Desktop"

static const struct {
	const char *slug, *type;
	int turns_cli, turns_gui;
} ew_categories[] = {
    {"single-software-execution", "single", 100, 200},
    {"software-selection", "selection", 100, 200},
    {"vision-guided-modeling", "vision", 100, 200},
    {"design-optimization", "optimization", 100, 200},
    {"cross-software-coordination", "cross", 150, 300},
    {"open-environment-engineering", "open", 150, 150},
};

/* the paper's table of software environments: each application's domain */
static const struct {
	const char *slug, *domain;
} ew_software[] = {
    {"freecad", "CAD"},		{"autocad", "CAD"},  {"solidworks", "CAD"},    {"brl-cad", "CAD"},
    {"openscad", "CAD"},	{"librecad", "CAD"}, {"solvespace", "CAD"},    {"ansys", "CAE"},
    {"abaqus", "CAE"},		{"openfoam", "CAE"}, {"fenics", "CAE"},	       {"calculix", "CAE"},
    {"floris", "CAE"},		{"openfast", "CAE"}, {"cadence-orcad", "EDA"}, {"eagle", "EDA"},
    {"altium-designer", "EDA"}, {"kicad", "EDA"},    {"freecad-path", "CAM"},  {"solidcam", "CAM"},
    {"archicad", "BIM"},	{"bonsai", "BIM"},   {"openstudio", "BIM"},    {"revit", "BIM"},
    {"blender", "DCC"},		{"zbrush", "DCC"},
};

/* Snapshots whose software Debian 12 ships close enough, in engisweep's own
 * images: CalculiX 2.21 as Debian's ccx 2.20, OpenSCAD 2021.01 as it is. */
static const struct {
	const char *snapshot, *image;
} ew_images[] = {
    {"CalculiX-2.21", "tools"},
    {"OpenSCAD2021.01", "tools"},
};

/* The categories' earlier names: a tree checked out before the rename
 * (the repository's id-migration-20261009.json) keeps them in its folder
 * names and ids. Such a task loads under its current id. */
static const struct {
	const char *was, *now;
} ew_legacy[] = {
    {"single-software", "single-software-execution"},
    {"image-based-modeling", "vision-guided-modeling"},
    {"quantitative-design", "design-optimization"},
    {"multi-software", "cross-software-coordination"},
    {"open-ended", "open-environment-engineering"},
};

/* The earlier folder name of category i, or NULL. */
static const char *ew_was(size_t i)
{
	for (size_t k = 0; k < sizeof(ew_legacy) / sizeof(*ew_legacy); k++)
		if (!strcmp(ew_legacy[k].now, ew_categories[i].slug))
			return ew_legacy[k].was;
	return NULL;
}

static const char *ew_image(const char *snapshot)
{
	for (size_t i = 0; i < sizeof(ew_images) / sizeof(*ew_images); i++)
		if (!strcmp(ew_images[i].snapshot, snapshot))
			return ew_images[i].image;
	return NULL;
}

/* The category of a folder name or an id's first part, current or
 * earlier. */
static int ew_category(const char *slug)
{
	for (size_t i = 0; i < sizeof(ew_categories) / sizeof(*ew_categories); i++) {
		const char *was = ew_was(i);
		if (!strcmp(ew_categories[i].slug, slug) || (was && !strcmp(was, slug)))
			return (int)i;
	}
	return -1;
}

static const char *ew_domain(const char *software)
{
	for (size_t i = 0; i < sizeof(ew_software) / sizeof(*ew_software); i++)
		if (!strcmp(ew_software[i].slug, software))
			return ew_software[i].domain;
	return NULL;
}

int source_engiworld_id(const char *id, struct engiworld_id *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = strlen(id);
	if (n == 0 || n >= ENGI_TASK_ID_STR)
		return -1;
	const char *first = strstr(id, "--");
	if (!first || first == id || (size_t)(first - id) >= sizeof(out->category))
		return -1;
	memcpy(out->category, id, (size_t)(first - id));
	int ci = ew_category(out->category);
	if (ci < 0)
		return -1;
	out->type = ew_categories[ci].type;
	out->current = ew_categories[ci].slug;
	out->legacy = strcmp(out->category, out->current) != 0;
	const char *p = first + 2;
	if (!strncmp(p, "cli--", 5) || !strncmp(p, "gui--", 5))
		memcpy(out->interface, p, 3);
	else
		return -1;
	p += 5;
	/* the last two parts: task-NN[-suffix] and the os */
	const char *os = NULL, *task = NULL;
	for (const char *q = p; (q = strstr(q, "--")) != NULL; q += 2) {
		task = os;
		os = q;
	}
	if (!os || !task || task < p)
		return -1;
	size_t fl = (size_t)(task - p), tl = (size_t)(os - task - 2);
	if (!fl || fl >= sizeof(out->folder) || tl < 6 || tl >= sizeof(out->task))
		return -1;
	memcpy(out->folder, p, fl);
	memcpy(out->task, task + 2, tl);
	snprintf(out->os, sizeof(out->os), "%s", os + 2);
	if (strcmp(out->os, "ubuntu") && strcmp(out->os, "windows"))
		return -1;
	if (strncmp(out->task, "task-", 5) || out->task[5] < '0' || out->task[5] > '9')
		return -1;
	for (const char *c = out->folder; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return -1;
	return 0;
}

/* The tree: path itself, or path/task. */
static int ew_root(const char *path, char *root, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/taxonomy.json", path);
	if (fs_path_is_file(p)) {
		snprintf(root, n, "%s", path);
		return 1;
	}
	snprintf(p, sizeof(p), "%s/task/taxonomy.json", path);
	if (fs_path_is_file(p)) {
		snprintf(root, n, "%s/task", path);
		return 1;
	}
	return 0;
}

static int ew_probe(const char *path)
{
	char root[PATH_MAX], p[PATH_MAX + 32];
	if (!fs_path_is_dir(path) || !ew_root(path, root, sizeof(root)))
		return 0;
	for (size_t i = 0; i < sizeof(ew_categories) / sizeof(*ew_categories); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, ew_categories[i].slug);
		if (fs_path_is_dir(p))
			return 90;
		const char *was = ew_was(i);
		snprintf(p, sizeof(p), "%s/%s", root, was ? was : "");
		if (was && fs_path_is_dir(p))
			return 90;
	}
	snprintf(p, sizeof(p), "%s/task-c", root);
	return fs_path_is_dir(p) ? 90 : 0; /* the oldest layout: refused by load */
}

/* A refusal under construction: its kind and its message. */
struct ew_refusal {
	char category[96];
	char msg[512];
	/* the first file the task names that is not there: the reason only
	 * once everything else of the task is known to be supported */
	char missing_category[96];
	char missing[512];
};

/* A guest path of an EngiWorld task as a path under the working folder
 * (the Desktop), into out; -1 when it is elsewhere. */
static int ew_guest_rel(const char *guest, char *out, size_t n)
{
	size_t dl = strlen(EW_DESKTOP);
	if (strncmp(guest, EW_DESKTOP, dl) || guest[dl] != '/' || !guest[dl + 1])
		return -1;
	const char *rel = guest + dl + 1;
	size_t k = strlen(rel);
	while (k && rel[k - 1] == '/')
		k--;
	if (!k || k >= n)
		return -1;
	memcpy(out, rel, k);
	out[k] = '\0';
	return fs_env_path_check(out, NULL) < 0 ? -1 : 0;
}

/* Where a task is: the tree (absolute; host paths of the translated task
 * are relative to it), the folder of the task folders relative to the tree
 * (category/interface/folder, against which the runtime takes local paths)
 * and the task's own folder in it. */
struct ew_at {
	const char *root;
	const char *frel;
	const char *taskdir;
};

/* base + "/" + rel with "." and ".." resolved as names, into out: -1 when
 * it leaves base's root (the tree) or does not fit. */
static int ew_join(const char *base, const char *rel, char *out, size_t n)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s/%s", base, rel) >= (int)sizeof(buf) || rel[0] == '/')
		return -1;
	size_t len = 0;
	out[0] = '\0';
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (!len)
				return -1;
			char *slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		size_t k = strlen(c);
		if (len + (len ? 1 : 0) + k + 1 > n)
			return -1;
		if (len)
			out[len++] = '/';
		memcpy(out + len, c, k + 1);
		len += k;
	}
	return len ? 0 : -1;
}

/* Each file of an upload_file step: host path (relative to the folder of
 * the task folders, as the runtime takes it, and anywhere in the tree: a
 * file may be shared between tasks) and guest path. Appends {"host"|"from":
 * path in the tree, "env"|"to"} objects to list. */
static int ew_uploads(const struct ew_at *at, json_t *step, const char *where, const char *hkey,
		      const char *gkey, json_t *list, struct ew_refusal *r)
{
	json_t *files = json_object_get(json_object_get(step, "parameters"), "files");
	if (!json_is_array(files) || !json_array_size(files))
		SUITE_REFUSE(r, "malformed step", "%s: upload_file without files", where);
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
	{
		const char *local = json_string_value(json_object_get(f, "local_path"));
		const char *guest = json_string_value(json_object_get(f, "path"));
		if (!local || !guest)
			SUITE_REFUSE(r, "malformed step",
				     "%s/parameters/files/%zu: a file needs local_path and path",
				     where, i);
		char rel[256], host[PATH_MAX];
		if (ew_guest_rel(guest, rel, sizeof(rel)) < 0)
			SUITE_REFUSE(
			    r, "guest path outside the Desktop",
			    "%s/parameters/files/%zu: guest path '%s' is not under " EW_DESKTOP,
			    where, i, guest);
		char tree[PATH_MAX];
		if (ew_join(at->frel, local, tree, sizeof(tree)) < 0 ||
		    fs_env_path_check(tree, NULL) < 0)
			SUITE_REFUSE(
			    r, "file outside the tree",
			    "%s/parameters/files/%zu: '%s' (from %s) is not a path inside the "
			    "task tree",
			    where, i, local, at->frel);
		snprintf(host, sizeof(host), "%s/%s", at->root, tree);
		if (!fs_path_is_file(host) && !r->missing[0]) {
			snprintf(r->missing_category, sizeof(r->missing_category), "%s",
				 !strcmp(hkey, "from") ? "evaluator file missing"
						       : "input file missing");
			snprintf(r->missing, sizeof(r->missing),
				 "%s/parameters/files/%zu: '%s' is not in the task tree", where, i,
				 local);
		}
		json_array_append_new(list, json_pack("{s:s, s:s}", hkey, tree, gkey, rel));
	}
	return 0;
}

/* The runtime's screen placeholders, at the benchmark's 1920x1080. */
static const char *const ew_placeholders[][2] = {
    {"{SCREEN_WIDTH_HALF}", "960"},
    {"{SCREEN_HEIGHT_HALF}", "540"},
    {"{SCREEN_WIDTH}", "1920"},
    {"{SCREEN_HEIGHT}", "1080"},
};

/* word with the placeholders replaced, appended to out after a blank,
 * sh-quoted when quote (-1: out of memory or past out's cap). */
static int ew_append_word(struct engi_dynbuf *out, const char *word, int quote)
{
	struct engi_dynbuf w;
	engi_dynbuf_init(&w, TASK_SETUP_CMD_MAX);
	int rc = 0;
	for (const char *p = word; *p && rc == 0;) {
		size_t k, n = sizeof(ew_placeholders) / sizeof(*ew_placeholders);
		for (k = 0; k < n; k++)
			if (!strncmp(p, ew_placeholders[k][0], strlen(ew_placeholders[k][0])))
				break;
		rc = engi_dynbuf_add(&w, k < n ? ew_placeholders[k][1] : p,
				     k < n ? strlen(ew_placeholders[k][1]) : 1);
		p += k < n ? strlen(ew_placeholders[k][0]) : 1;
	}
	const char *plain = w.buf ? w.buf : "";
	char *q = quote && rc == 0 ? text_sh_quote(plain) : NULL;
	const char *t = quote ? q : plain;
	if (rc == 0 && (!t || (out->len && engi_dynbuf_add(out, " ", 1) < 0) ||
			engi_dynbuf_addstr(out, t) < 0))
		rc = -1;
	engi_free(q);
	engi_dynbuf_release(&w);
	return rc < 0 ? -1 : 0;
}

/* A launch or execute step as a native setup step: its command (a list of
 * words, or a string: a shell command with "shell": true, else words split
 * at blanks, as the runtime splits them), placeholders replaced; an
 * execute waits (its "timeout", default 120 s) and its status is ignored,
 * as the runtime ignores it. */
static int ew_command_step(json_t *st, const char *ptr, int launch, json_t *setup,
			   struct ew_refusal *r)
{
	json_t *par = json_object_get(st, "parameters");
	json_t *cmd = json_object_get(par, "command");
	const char *key;
	json_t *v;
	json_object_foreach(par, key, v)
	{
		if (strcmp(key, "command") && strcmp(key, "shell") &&
		    (launch || strcmp(key, "timeout")))
			SUITE_REFUSE(
			    r, "setup step not supported",
			    "%s/parameters/%s: the runtime's '%s' of a %s step is not supported "
			    "yet",
			    ptr, key, key, launch ? "launch" : "execute");
	}
	json_t *shell = json_object_get(par, "shell");
	int sh = json_is_true(shell) ||
		 (json_is_string(shell) && !strcmp(json_string_value(shell), "true"));
	struct engi_dynbuf out;
	engi_dynbuf_init(&out, TASK_SETUP_CMD_MAX);
	int rc = 0;
	if (json_is_string(cmd) && sh) {
		rc = ew_append_word(&out, json_string_value(cmd), 0);
	} else if (json_is_string(cmd)) {
		char *copy = engi_strdup(json_string_value(cmd));
		char *save = NULL;
		for (char *w = copy ? strtok_r(copy, " \t\n", &save) : NULL; w && rc == 0;
		     w = strtok_r(NULL, " \t\n", &save))
			rc = ew_append_word(&out, w, 1);
		rc = copy ? rc : -1;
		engi_free(copy);
	} else if (json_is_array(cmd)) {
		size_t i;
		json_t *w;
		json_array_foreach(cmd, i, w)
		{
			if (!json_is_string(w)) {
				engi_dynbuf_release(&out);
				SUITE_REFUSE(r, "malformed step",
					     "%s/parameters/command/%zu: expected a string", ptr,
					     i);
			}
			if (rc == 0)
				rc = ew_append_word(&out, json_string_value(w), 1);
		}
	}
	if (!out.len || rc < 0) {
		engi_dynbuf_release(&out);
		SUITE_REFUSE(
		    r, "malformed step",
		    "%s/parameters/command: expected a command (a string or a list of words) "
		    "of at most %d bytes",
		    ptr, TASK_SETUP_CMD_MAX);
	}
	if (strstr(out.buf, "{CLIENT_PASSWORD}")) {
		engi_dynbuf_release(&out);
		SUITE_REFUSE(
		    r, "setup step not supported",
		    "%s/parameters/command: needs the guest user's password ({CLIENT_PASSWORD})",
		    ptr);
	}
	json_t *step = json_pack("{s:s}", launch ? "launch" : "run", out.buf);
	engi_dynbuf_release(&out);
	if (!launch) {
		json_t *to = json_object_get(par, "timeout");
		double t = json_is_number(to) ? json_number_value(to) : TASK_SETUP_TIMEOUT_S;
		if (!(t > 0 && t <= 3600)) {
			json_decref(step);
			SUITE_REFUSE(r, "malformed step",
				     "%s/parameters/timeout: expected (0, 3600] seconds", ptr);
		}
		json_object_set_new(step, "timeout_s", json_real(t));
		json_object_set_new(step, "check", json_false());
	}
	json_array_append_new(setup, step);
	return 0;
}

/* A list of setup steps (config, or the evaluator's postconfig) at where:
 * each upload_file's files appended to list as ew_uploads does; launch and
 * execute steps appended to setup as native setup steps (config only:
 * setup NULL refuses them). */
static int ew_steps(const struct ew_at *at, json_t *steps, const char *where, const char *hkey,
		    const char *gkey, json_t *list, json_t *setup, struct ew_refusal *r)
{
	size_t i;
	json_t *st;
	json_array_foreach(steps, i, st)
	{
		char ptr[64];
		snprintf(ptr, sizeof(ptr), "%s/%zu", where, i);
		const char *type = json_string_value(json_object_get(st, "type"));
		int launch = type && !strcmp(type, "launch");
		if (setup && type && (launch || !strcmp(type, "execute"))) {
			if (ew_command_step(st, ptr, launch, setup, r) < 0)
				return -1;
			continue;
		}
		if (!type || strcmp(type, "upload_file"))
			SUITE_REFUSE(r, "setup step not supported",
				     "%s: step type '%s' is not supported yet", ptr,
				     type ? type : "(none)");
		if (ew_uploads(at, st, ptr, hkey, gkey, list, r) < 0)
			return -1;
	}
	return 0;
}

/* The reference: each ground-truth file named like a deliverable, written
 * at its path; a task without any says so and fails. */
static json_t *ew_reference(const struct ew_at *at, json_t *deliverables)
{
	json_t *steps = json_array();
	size_t i;
	json_t *d;
	json_array_foreach(deliverables, i, d)
	{
		const char *path = json_string_value(json_object_get(d, "path"));
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		char rel[PATH_MAX], host[PATH_MAX + 8];
		snprintf(rel, sizeof(rel), "%.1000s/%.200s/ground_truth/%.200s", at->frel,
			 at->taskdir, base);
		snprintf(host, sizeof(host), "%s/%s", at->root, rel);
		if (fs_path_is_file(host))
			json_array_append_new(steps,
					      json_pack("{s:s, s:s}", "write", path, "from", rel));
	}
	if (!json_array_size(steps))
		json_array_append_new(
		    steps,
		    json_pack("{s:s}", "fail", "this task's ground_truth/ holds no deliverable"));
	return steps;
}

enum ew_entry { EW_FOLDERS, EW_PNG_FILES };

/* Sub-folders (not hidden, not '_'-prefixed), or PNG files (not hidden). */
static int ew_keep(const char *dir, const char *name, void *ctx)
{
	enum ew_entry want = *(const enum ew_entry *)ctx;
	size_t k = strlen(name);
	if (name[0] == '.')
		return 0;
	if (want == EW_PNG_FILES)
		return k >= 5 && !strcasecmp(name + k - 4, ".png");
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return name[0] != '_' && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The names in dir of its sub-folders or of its PNG files, at most cap, in
 * name order (fs_dir_names): a task's hash must not depend on the folder's
 * order. */
static int ew_names(const char *dir, enum ew_entry want, size_t cap, char ***out, size_t *n)
{
	return fs_dir_names(dir, ew_keep, &want, cap, out, n);
}

/* A vision task's drawings: the images of its init_file/ folder, which the
 * benchmark attaches to every request (PNG: engisweep's drawings). */
static json_t *ew_drawings(const struct ew_at *at)
{
	char idir[PATH_MAX];
	snprintf(idir, sizeof(idir), "%.1500s/%.1000s/%.200s/init_file", at->root, at->frel,
		 at->taskdir);
	json_t *list = json_array();
	char **names;
	size_t n;
	if (ew_names(idir, EW_PNG_FILES, 64, &names, &n) < 0)
		return list;
	for (size_t i = 0; i < n; i++) {
		char rel[PATH_MAX];
		snprintf(rel, sizeof(rel), "%.1000s/%.200s/init_file/%.200s", at->frel, at->taskdir,
			 names[i]);
		json_array_append_new(list, json_string(rel));
	}
	fs_names_free(names, n);
	return list;
}

/* The script that runs an evaluator as the benchmark's runtime does: its
 * prepare_command first (bash, within prep_s; failing is the evaluator's
 * dependency failing), then the command, whose standard output alone is
 * judged. What the runtime takes for the evaluator's failure rather than a
 * verdict is made one here, so the command kind reports it and never
 * scores it: a missing module or EVAL_DEPENDENCY_ERROR in either stream
 * (a line that is neither True nor False, exit 97), or exit status 1 with
 * a traceback on standard error (exit 98). -1 when it does not fit. */
#define EW_EVAL "/tmp/.engisweep-evaluator"
static int ew_evaluator_script(char *out, size_t cap, const char *cmd, const char *prep,
			       double prep_s)
{
	char pre[2048] = "";
	if (prep) {
		char *q = text_sh_quote(prep);
		int n =
		    q ? snprintf(pre, sizeof(pre),
				 "timeout %.0f bash -c %s >" EW_EVAL ".prepare 2>&1 </dev/null || "
				 "{ echo \"evaluator preparation failed (exit $?): $(tail -c "
				 "300 " EW_EVAL ".prepare)\"; exit 97; }\n",
				 prep_s, q)
		      : -1;
		engi_free(q);
		if (n < 0 || n >= (int)sizeof(pre))
			return -1;
	}
	int n = snprintf(
	    out, cap,
	    "%s{ %s\n} >" EW_EVAL ".out 2>" EW_EVAL ".stderr; r=$?\n"
	    "if grep -Eq '^[[:space:]]*(ModuleNotFoundError|ImportError):|EVAL_DEPENDENCY_ERROR:|"
	    "FreeCADCmd is unavailable to the evaluator' " EW_EVAL ".out " EW_EVAL ".stderr; then "
	    "echo \"evaluator dependency error: $(tail -c 300 " EW_EVAL ".stderr)\"; exit 97; fi\n"
	    "cat " EW_EVAL ".out\n"
	    "if [ $r -eq 1 ] && grep -q 'Traceback (most recent call last):' " EW_EVAL ".stderr; "
	    "then echo \"(exit status 1 with a traceback on standard error)\"; exit 98; fi\n"
	    "exit $r",
	    pre, cmd);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The evaluator as a command verifier. */
static int ew_verifier(const struct ew_at *at, int optimization, json_t *ev, json_t *deliverables,
		       json_t **out, struct ew_refusal *r)
{
	const char *field = "score";
	if (!json_is_object(ev))
		SUITE_REFUSE(r, "malformed evaluator", "/evaluator: expected an object");
	json_t *func = json_object_get(ev, "func"), *res = json_object_get(ev, "result");
	if (!json_is_string(func))
		SUITE_REFUSE(r, "evaluator not supported",
			     "/evaluator/func: a list of functions is not supported yet");
	const char *fn = json_string_value(func);
	if (strcmp(fn, "exact_match") && strcmp(fn, "quantified_score"))
		SUITE_REFUSE(r, "evaluator not supported", "/evaluator/func: '%s' is not supported",
			     fn);
	if (!json_is_object(res))
		SUITE_REFUSE(r, "evaluator not supported",
			     "/evaluator/result: one getter object is supported");
	const char *gt = json_string_value(json_object_get(res, "type"));
	if (!gt || strcmp(gt, "vm_command_line"))
		SUITE_REFUSE(r, "evaluator not supported",
			     "/evaluator/result/type: '%s' is not supported", gt ? gt : "(none)");
	const char *cmd = json_string_value(json_object_get(res, "command"));
	if (!cmd || !*cmd)
		SUITE_REFUSE(r, "malformed evaluator",
			     "/evaluator/result/command: expected a command");
	json_t *prep = json_object_get(res, "prepare_command");
	if (prep && (!json_is_string(prep) || !*json_string_value(prep)))
		SUITE_REFUSE(r, "malformed evaluator",
			     "/evaluator/result/prepare_command: expected a command");
	json_t *pto = json_object_get(res, "prepare_timeout");
	double prep_s = json_is_number(pto) ? json_number_value(pto) : 960.0;
	if (pto && !(json_is_number(pto) && prep_s > 0 && prep_s <= 7200))
		SUITE_REFUSE(r, "malformed evaluator",
			     "/evaluator/result/prepare_timeout: expected (0, 7200] seconds");
	if (!strcmp(fn, "exact_match")) {
		const char *want = json_string_value(json_object_get(
		    json_object_get(json_object_get(ev, "expected"), "rules"), "expected"));
		if (!want || strcmp(want, "True\n"))
			SUITE_REFUSE(r, "evaluator not supported",
				     "/evaluator/expected: only the rule \"True\\n\" is supported");
	} else {
		json_t *f = json_object_get(json_object_get(ev, "metric"), "output_field");
		if (f &&
		    (!json_is_string(f) ||
		     !engi_json_name_valid(json_string_value(f), strlen(json_string_value(f)))))
			SUITE_REFUSE(r, "malformed evaluator",
				     "/evaluator/metric/output_field: expected a name");
		if (f)
			field = json_string_value(f);
		if (!optimization)
			SUITE_REFUSE(
			    r, "evaluator not supported",
			    "/evaluator/func: quantified_score outside design-optimization is not "
			    "supported yet");
	}
	json_t *uploads = json_array();
	if (ew_steps(at, json_object_get(ev, "postconfig"), "/evaluator/postconfig", "from", "to",
		     uploads, NULL, r) < 0) {
		json_decref(uploads);
		return -1;
	}
	const char *file =
	    json_string_value(json_object_get(json_array_get(deliverables, 0), "path"));
	char run[4096];
	if (ew_evaluator_script(run, sizeof(run), cmd, prep ? json_string_value(prep) : NULL,
				prep_s) < 0) {
		json_decref(uploads);
		SUITE_REFUSE(
		    r, "malformed evaluator",
		    "/evaluator/result: its command and prepare_command are longer than %zu "
		    "bytes",
		    sizeof(run) - 1024);
	}
	double timeout_s = 600.0 + (prep ? prep_s : 0);
	if (strcmp(fn, "quantified_score")) {
		*out = json_pack("{s:s, s:s, s:s, s:o, s:s, s:f, s:[{s:s, s:s}]}", "kind",
				 "command", "file", file, "env", "episode", "upload", uploads,
				 "run", run, "timeout_s", timeout_s, "criteria", "name",
				 "evaluator", "check", "true_false");
		return 0;
	}
	/* the evaluator's own number is the quality, 0 to 1 (its eval.py clamps
	 * it and gives 0 when a constraint fails) */
	*out =
	    json_pack("{s:s, s:s, s:s, s:o, s:s, s:f, s:[{s:s, s:s, s:s, s:b}], "
		      "s:{s:s, s:s, s:f, s:f}}",
		      "kind", "command", "file", file, "env", "episode", "upload", uploads, "run",
		      run, "timeout_s", timeout_s, "criteria", "name", "evaluator", "check",
		      "quantified_score", "field", field, "required", 0, "objective", "metric",
		      "evaluator_score", "sense", "max", "baseline", 0.0, "reference", 1.0);
	return 0;
}

/* One task file into s (0), or refused (r filled, -1). */
static int ew_translate(struct suite *s, const char *dir, const char *cat, const char *iface,
			const char *folder, const char *taskdir, const char *file, json_t *root,
			struct ew_refusal *r, struct engi_error *err)
{
	/* dir is <tree>/<cat>/<iface>/<folder> */
	char tree[PATH_MAX], frel[PATH_MAX];
	snprintf(tree, sizeof(tree), "%s", dir);
	for (int k = 0; k < 3; k++) {
		char *slash = strrchr(tree, '/');
		if (slash)
			*slash = '\0';
	}
	snprintf(frel, sizeof(frel), "%.200s/%.100s/%.200s", cat, iface, folder);
	const struct ew_at at = {tree, frel, taskdir};
	const char *id = json_string_value(json_object_get(root, "id"));
	if (!id)
		SUITE_REFUSE(r, "malformed task", "/id: expected a string");
	struct engiworld_id pid;
	if (source_engiworld_id(id, &pid) < 0)
		SUITE_REFUSE(r, "malformed task",
			     "/id: '%s' is not an EngiWorld id "
			     "(<category>--<cli|gui>--<folder>--task-NN--<ubuntu|windows>)",
			     id);
	if (strcmp(pid.category, cat) || strcmp(pid.interface, iface) ||
	    strcmp(pid.folder, folder) || strcmp(pid.task, taskdir))
		SUITE_REFUSE(r, "id does not match its folder",
			     "/id: '%s' is not the id of the folder %s/%s/%s/%s", id, cat, iface,
			     folder, taskdir);
	if (!strcmp(pid.os, "windows"))
		SUITE_REFUSE(r, "windows guest",
			     "'%s' runs in a Windows guest, which engisweep does not run", id);
	int ci = ew_category(cat);
	const char *instruction = json_string_value(json_object_get(root, "instruction"));
	const char *snapshot = json_string_value(json_object_get(root, "snapshot"));
	/* a task of the earlier layout under its current id */
	char now_id[ENGI_TASK_ID_STR];
	snprintf(now_id, sizeof(now_id), "%s%s", pid.current, id + strlen(pid.category));
	id = now_id;
	if (!instruction || !snapshot)
		SUITE_REFUSE(r, "malformed task", "/%s: expected a string",
			     instruction ? "snapshot" : "instruction");
	if (strlen(snapshot) > TASK_META_VALUE_MAX)
		SUITE_REFUSE(r, "malformed task", "/snapshot: expected a name of 1 to %d bytes",
			     TASK_META_VALUE_MAX);
	json_t *apps = json_object_get(root, "related_apps");
	const char *domain = NULL;
	size_t i;
	json_t *a;
	json_array_foreach(apps, i, a)
	{
		if (!domain && json_is_string(a))
			domain = ew_domain(json_string_value(a));
	}
	if (!json_is_array(apps) || !json_array_size(apps))
		SUITE_REFUSE(r, "malformed task", "/related_apps: expected a non-empty list");
	if (!domain)
		SUITE_REFUSE(r, "unknown software",
			     "/related_apps: no application of the benchmark's tables");
	int gui = !strcmp(iface, "gui");

	json_t *inputs = json_array(), *setup = json_array();
	if (ew_steps(&at, json_object_get(root, "config"), "/config", "host", "env", inputs, setup,
		     r) < 0) {
		json_decref(inputs);
		json_decref(setup);
		return -1;
	}
	/* the runtime runs each step in turn, uploads among them; engisweep
	 * puts the inputs in first: a launch or execute before an upload
	 * would see the file sooner than the benchmark's runtime shows it */
	json_t *deliverables = json_array();
	json_t *arts = json_object_get(root, "artifact_paths");
	json_array_foreach(arts, i, a)
	{
		char rel[256];
		const char *g = json_string_value(a);
		if (!g || ew_guest_rel(g, rel, sizeof(rel)) < 0) {
			json_decref(inputs);
			json_decref(setup);
			json_decref(deliverables);
			SUITE_REFUSE(r, "guest path outside the Desktop",
				     "/artifact_paths/%zu: '%s' is not under " EW_DESKTOP, i,
				     g ? g : "?");
		}
		json_array_append_new(deliverables, json_pack("{s:s}", "path", rel));
	}
	if (!json_array_size(deliverables)) {
		json_decref(inputs);
		json_decref(setup);
		json_decref(deliverables);
		SUITE_REFUSE(r, "no artifact paths", "/artifact_paths: the task names no artifact");
	}
	json_t *verifier = NULL;
	if (ew_verifier(&at, !strcmp(ew_categories[ci].type, "optimization"),
			json_object_get(root, "evaluator"), deliverables, &verifier, r) < 0) {
		json_decref(inputs);
		json_decref(setup);
		json_decref(deliverables);
		return -1;
	}
	const char *image = suite_image_for(s, snapshot, ew_image(snapshot));
	if (!image) {
		json_decref(inputs);
		json_decref(setup);
		json_decref(deliverables);
		json_decref(verifier);
		SUITE_REFUSE(r, "no image for the snapshot",
			     "/snapshot: no engisweep image runs '%s' (the images that do: see "
			     "docs/engiworld.md; --images FILE names others)",
			     snapshot);
	}
	if (r->missing[0]) {
		json_decref(inputs);
		json_decref(setup);
		json_decref(deliverables);
		json_decref(verifier);
		SUITE_REFUSE(r, r->missing_category, "%s", r->missing);
	}
	json_t *task = json_pack(
	    "{s:s, s:s, s:O, s:s, s:s, s:s, s:{s:s, s:s, s:i, s:i}, s:o, s:{s:i, s:f}, s:o, s:o}",
	    "id", id, "domain", domain, "software", apps, "type", ew_categories[ci].type,
	    "interface", iface, "instruction", instruction, "environment", "image", image,
	    "workdir", EW_DESKTOP, "cpus", 4, "memory_mb", 16384, "inputs", inputs, "limits",
	    "turns", gui ? ew_categories[ci].turns_gui : ew_categories[ci].turns_cli, "wall_s",
	    18000.0, "deliverables", deliverables, "verifier", verifier);
	if (json_array_size(setup))
		json_object_set(task, "setup", setup);
	json_object_set_new(task, "reference", ew_reference(&at, deliverables));
	/* what report --by groups on (SCHEMA.md, `meta`) */
	json_t *meta = json_pack("{s:s, s:s}", "category", ew_categories[ci].slug, "os", pid.os);
	if (meta && *snapshot)
		json_object_set_new(meta, "snapshot", json_string(snapshot));
	json_object_set_new(task, "meta", meta);
	/* the benchmark's rule: an agent whose last action is FAIL scores 0 */
	json_object_set_new(task, "on_fail", json_string("zero"));
	/* a cheat probe for `engisweep audit`: every artifact there, empty */
	json_t *empty = json_array();
	json_array_foreach(deliverables, i, a)
	{
		json_array_append_new(empty, json_pack("{s:O, s:s}", "write",
						       json_object_get(a, "path"), "text", ""));
	}
	json_object_set_new(task, "flawed",
			    json_pack("[{s:s, s:o, s:s}]", "name", "empty-artifacts", "steps",
				      empty, "expect", "fail"));
	if (!strcmp(ew_categories[ci].type, "vision")) {
		json_t *dr = ew_drawings(&at);
		if (json_array_size(dr))
			json_object_set_new(task, "drawings", dr);
		else
			json_decref(dr);
	}
	/* paths in the tree: inputs and evaluator files may be shared */
	int rc = suite_add_json(s, file, tree, task, err);
	json_decref(task);
	json_decref(setup);
	return rc;
}

static int ew_load_file(struct suite *s, const char *dir, const char *cat, const char *iface,
			const char *folder, const char *taskdir, const char *file, int strict,
			struct engi_error *err)
{
	char *text = NULL;
	size_t len = 0;
	struct engi_error e;
	engi_error_init(&e);
	json_t *root = NULL;
	struct ew_refusal r = {"", "", "", ""};
	int rc = fs_read_file(file, EW_FILE_CAP, &text, &len, &e);
	if (rc == 0)
		rc = engi_json_parse(file, text, len, &root, &e);
	engi_free(text);
	if (rc < 0) {
		json_decref(root);
		return suite_settle_file(s, file, rc, "not valid JSON", e.msg, 1, &e, strict, err);
	}
	rc = ew_translate(s, dir, cat, iface, folder, taskdir, file, root, &r, &e);
	json_decref(root);
	return suite_settle_file(s, file, rc, r.category, r.msg, 0, &e, strict, err);
}

static int ew_load(struct suite *s, const char *path, int strict, struct engi_error *err)
{
	char given[PATH_MAX], root[PATH_MAX];
	char *abs = realpath(path, NULL);
	if (!abs || !fs_path_is_dir(abs) || !ew_root(abs, given, sizeof(given))) {
		free(abs);
		RAISE(err, ENGI_ENOTFOUND, "'%s' is not an EngiWorld task tree (no taxonomy.json)",
		      path);
	}
	free(abs);
	snprintf(root, sizeof(root), "%s", given);
	int rc = 0;
	size_t found = 0;
	for (size_t c = 0; rc == 0 && c < 2 * sizeof(ew_categories) / sizeof(*ew_categories); c++) {
		/* each category's folder, then its folder of the earlier layout */
		size_t ci = c / 2;
		const char *cat = c % 2 ? ew_was(ci) : ew_categories[ci].slug;
		if (!cat)
			continue;
		for (int g = 0; rc == 0 && g < 2; g++) {
			const char *iface = g ? "gui" : "cli";
			char idir[PATH_MAX];
			snprintf(idir, sizeof(idir), "%s/%s/%s", root, cat, iface);
			char **folders;
			size_t nf;
			if (ew_names(idir, EW_FOLDERS, SIZE_MAX, &folders, &nf) < 0)
				continue;
			for (size_t f = 0; rc == 0 && f < nf; f++) {
				char fdir[PATH_MAX];
				snprintf(fdir, sizeof(fdir), "%s/%s", idir, folders[f]);
				char **tasks;
				size_t nt;
				if (ew_names(fdir, EW_FOLDERS, SIZE_MAX, &tasks, &nt) < 0)
					continue;
				for (size_t t = 0; rc == 0 && t < nt; t++) {
					if (strncmp(tasks[t], "task-", 5))
						continue;
					char file[PATH_MAX];
					snprintf(file, sizeof(file), "%.1500s/%.200s/%.200s.json",
						 fdir, tasks[t], tasks[t]);
					if (!fs_path_is_file(file))
						continue;
					found++;
					rc = ew_load_file(s, fdir, cat, iface, folders[f], tasks[t],
							  file, strict, err);
				}
				fs_names_free(tasks, nt);
			}
			fs_names_free(folders, nf);
		}
	}
	char oldest[PATH_MAX + 16];
	snprintf(oldest, sizeof(oldest), "%s/task-c", root);
	if (rc == 0 && !found && fs_path_is_dir(oldest))
		rc = engi_raise(
		    err, ENGI_EINVALID,
		    "EngiWorld tree '%s' is in the repository's oldest layout "
		    "(task/task-c/<software>/), which engisweep does not read: check out a "
		    "later commit (task/<category>/<gui|cli>/<folder>/<task-NN>/)",
		    root);
	if (rc == 0 && !found)
		rc =
		    engi_raise(err, ENGI_ENOTFOUND, "EngiWorld tree '%s' holds no task file", root);
	return rc;
}

static const struct task_source_ops ew_ops = {
    .probe = ew_probe,
    .load = ew_load,
};

const struct task_source task_source_engiworld = {
    .name = "engiworld",
    .summary = "an EngiWorld task tree (task/<category>/<gui|cli>/<folder>/<task-NN>/)",
    .supports = "Ubuntu tasks; setup steps upload_file, launch, execute; evaluator postconfig "
		"upload_file, getter "
		"vm_command_line, func exact_match against \"True\\n\" or quantified_score "
		"(design-optimization); ground_truth/ as the reference",
    .ops = &ew_ops,
    .partial = 1,
};
