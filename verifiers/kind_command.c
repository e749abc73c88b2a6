/*
 * Verifier kind "command": a benchmark's own evaluator, run in an
 * environment after the agent has stopped and its deliverables are saved.
 * The evaluator's files come from the task's folder, which the agent never
 * sees, and are put into the environment only then; what the evaluator
 * prints and its exit status are judged by the criteria:
 *
 *   {"kind": "command", "file": "model.stl", "env": "episode",
 *    "upload": [{"from": "eval/check.py", "to": "/tmp/eval/check.py"}],
 *    "run": "python3 /tmp/eval/check.py", "timeout_s": 120,
 *    "criteria": [
 *      {"name": "passes", "check": "output_equals", "text": "True\n"},
 *      {"name": "says_ok", "check": "output_contains", "text": "OK"},
 *      {"name": "score", "check": "last_number", "min": 0.8},
 *      {"name": "clean_exit", "check": "exit_status", "equals": 0},
 *      {"name": "verdict", "check": "true_false"},
 *      {"name": "score", "check": "quantified_score", "field": "score"},
 *      {"name": "reward", "check": "harbor_reward"}]}
 *
 * "env" is "episode" (the episode's own environment, the default) or
 * "clean" (a fresh one of the task's image with the saved deliverables put
 * back at their paths). "last_number" is the last line of the output that
 * is a number and nothing else. "true_false" is the evaluator protocol of
 * EngiWorld (after OSWorld's): the output, CRLF read as LF, is exactly
 * "True\n" (exit status 0: pass) or "False\n" (exit status 0 or 1: fail);
 * anything else is the evaluator's failure, ENGI_EPARSE, never a verdict.
 * "quantified_score" is its scored protocol: the number is read from
 * score.json, then quant_metrics.json in the working folder, then from the
 * output (as JSON: "field", default "score", then "score", "metric_value",
 * metrics.<field>; else its lines from the last, each as JSON or a bare
 * number); it is the metric "evaluator_score" (the task's objective) and
 * the criterion's value, passing when above 0. No number, an empty output
 * or an exit status other than 0 (1 with "False") is the evaluator's
 * failure. A score file the evaluator did not write (there before it ran,
 * unchanged after) is said by the assertion "score_written_by_evaluator".
 * "harbor_reward" is Harbor's verifier protocol: /logs/verifier is emptied
 * before the evaluator runs (a reward file the agent left there is never
 * read), then the reward is /logs/verifier/reward.json's (a flat object:
 * its "reward", else its one numeric value; each numeric value is also the
 * metric "reward:KEY", other values are ignored) or, without that file,
 * reward.txt's one number; the exit status is not judged (Harbor ignores
 * it). The reward is "evaluator_score" and the criterion's value, passing
 * when above 0; no reward file, an empty or unreadable one is the
 * evaluator's failure. "clear" (at most 8 absolute folders) empties
 * folders of the environment before the uploads, so that nothing the agent
 * put where the evaluator's files go is there when it runs.
 * An evaluator that runs past timeout_s, or
 * an environment that fails, is never a verdict: the former is returned as
 * ENGI_ETIMEOUT, the latter as ENGI_EENV, for the runner to record as an
 * infrastructure failure.
 */
#include "engi/verify.h"

#include "engi/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CMD_UPLOADS_MAX 64
#define CMD_CLEAR_MAX	8
#define CMD_PATH_MAX	256
#define CMD_RUN_MAX	4096
#define CMD_TEXT_MAX	4096
#define CMD_OUT_CAP	((size_t)1 << 20)
#define CMD_TIMEOUT_S	600.0
#define CMD_TIMEOUT_MAX 86400.0
#define POINTER_MAX	ENGI_POINTER_MAX

enum cmd_check {
	CHECK_OUTPUT_EQUALS,
	CHECK_OUTPUT_CONTAINS,
	CHECK_LAST_NUMBER,
	CHECK_EXIT_STATUS,
	CHECK_TRUE_FALSE,
	CHECK_QUANTIFIED,
	CHECK_HARBOR
};

static const char *const check_names[] = {
    "output_equals", "output_contains",	 "last_number",	  "exit_status",
    "true_false",    "quantified_score", "harbor_reward", NULL};

struct cmd_criterion {
	struct engi_criterion c;
	int check;
	char text[CMD_TEXT_MAX]; /* output_*; quantified_score: the field */
};

struct cmd_upload {
	char from[CMD_PATH_MAX]; /* relative to the task's folder */
	char to[CMD_PATH_MAX];
};

struct cmd_criteria {
	int env;
	char task_dir[PATH_MAX];
	char run[CMD_RUN_MAX];
	double timeout_s;
	size_t nuploads;
	struct cmd_upload uploads[CMD_UPLOADS_MAX];
	size_t nclear;
	char clear[CMD_CLEAR_MAX][CMD_PATH_MAX]; /* absolute folders */
	size_t n;
	struct cmd_criterion v[];
};

static void cmd_free(void *criteria)
{
	engi_free(criteria);
}

/* A string member copied into out (cap bytes), required, non-empty, with no
 * control characters but newlines and tabs where text_ok. */
static int copy_str(json_t *obj, const char *key, char *out, size_t cap, int text_ok,
		    const char *file, const char *ptr, struct engi_error *err)
{
	const char *s = NULL;
	TRY(engi_json_string(obj, key, 1, 1, file, ptr, &s, err));
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	size_t n = strlen(s);
	if (n >= cap)
		return engi_parse_error(err, file, p, "longer than %zu bytes", cap - 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 && !(text_ok && (ch == '\n' || ch == '\t' || ch == '\r')))
			return engi_parse_error(err, file, p, "holds a control character");
	}
	memcpy(out, s, n + 1);
	return 0;
}

/* A path relative to the task's folder that stays inside it: no leading
 * '/', no '..' component. */
static int relative_inside(const char *path)
{
	if (path[0] == '/')
		return 0;
	for (const char *s = path; *s;) {
		size_t len = strcspn(s, "/");
		if (len == 2 && s[0] == '.' && s[1] == '.')
			return 0;
		s += len;
		while (*s == '/')
			s++;
	}
	return 1;
}

/* A folder "clear" may empty: absolute, of characters no shell reads, no
 * "." or ".." component, not the root. */
static int clear_path_ok(const char *d)
{
	static const char ok[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-";
	size_t n = strlen(d);
	if (d[0] != '/' || n < 2 || n >= CMD_PATH_MAX || strspn(d, ok) != n)
		return 0;
	for (const char *s = d + 1; *s;) {
		size_t len = strcspn(s, "/");
		if (len == 0 || (len == 1 && s[0] == '.') ||
		    (len == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		s += len;
		if (*s == '/')
			s++;
	}
	return 1;
}

static int parse_upload(json_t *item, const char *file, const char *ptr, const char *task_dir,
			struct cmd_upload *u, struct engi_error *err)
{
	static const char *const keys[] = {"from", "to", NULL};
	if (!json_is_object(item))
		return engi_parse_error(err, file, ptr, "expected an object, got %s",
					engi_json_kind(item));
	TRY(engi_json_only_keys(item, keys, file, ptr, err));
	TRY(copy_str(item, "from", u->from, sizeof(u->from), 0, file, ptr, err));
	TRY(copy_str(item, "to", u->to, sizeof(u->to), 0, file, ptr, err));
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, "from");
	if (!relative_inside(u->from))
		return engi_parse_error(err, file, p,
					"'%s' must be a path inside the task's folder", u->from);
	char host[PATH_MAX];
	struct stat st;
	if (snprintf(host, sizeof(host), "%s/%s", task_dir, u->from) >= (int)sizeof(host))
		return engi_parse_error(err, file, p, "path too long");
	if (lstat(host, &st) < 0)
		return engi_parse_error(err, file, p, "'%s': %s", u->from, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return engi_parse_error(err, file, p, "'%s' is not a regular file", u->from);
	return 0;
}

static int parse_item(json_t *item, const char *file, const char *ptr, struct cmd_criterion *c,
		      struct engi_error *err)
{
	static const char *const keys[] = {"name",    "check",	 "text", "equals", "value",
					   "tol_rel", "tol_abs", "min",	 "max",	   "required",
					   "stage",   "field",	 NULL};
	if (!json_is_object(item))
		return engi_parse_error(err, file, ptr, "expected an object, got %s",
					engi_json_kind(item));
	TRY(engi_json_only_keys(item, keys, file, ptr, err));
	TRY(engi_json_choice(item, "check", check_names, "check", 1, file, ptr, &c->check, err));
	int texty = c->check == CHECK_OUTPUT_EQUALS || c->check == CHECK_OUTPUT_CONTAINS;
	char p[POINTER_MAX];
	if (c->check != CHECK_QUANTIFIED && json_object_get(item, "field")) {
		engi_json_pointer(p, sizeof(p), ptr, "field");
		return engi_parse_error(err, file, p, "does not apply to check '%s'",
					check_names[c->check]);
	}
	if (!texty && json_object_get(item, "text")) {
		engi_json_pointer(p, sizeof(p), ptr, "text");
		return engi_parse_error(err, file, p, "does not apply to check '%s'",
					check_names[c->check]);
	}
	unsigned allowed = c->check == CHECK_LAST_NUMBER   ? (ENGI_CMP_VALUE | ENGI_CMP_RANGE)
			   : c->check == CHECK_EXIT_STATUS ? ENGI_CMP_EQUALS
							   : ENGI_CMP_NONE;
	char what[64];
	snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
	TRY(engi_criterion_parse(item, file, ptr, what, allowed, "evaluator", &c->c, err));
	if (c->check == CHECK_EXIT_STATUS && c->c.cmp != ENGI_CMP_EQUALS) {
		engi_json_pointer(p, sizeof(p), ptr, "equals");
		return engi_parse_error(err, file, p, "check 'exit_status' needs 'equals'");
	}
	if (c->check == CHECK_QUANTIFIED) {
		const char *s = "score";
		TRY(engi_json_string(item, "field", 0, 0, file, ptr, &s, err));
		engi_json_pointer(p, sizeof(p), ptr, "field");
		if (!s)
			s = "score";
		if (!engi_json_name_valid(s, strlen(s)))
			return engi_parse_error(err, file, p, "'%s' is not a valid name", s);
		snprintf(c->text, sizeof(c->text), "%s", s);
	}
	if (texty) {
		const char *s = NULL;
		TRY(engi_json_string(item, "text", 1, 0, file, ptr, &s, err));
		engi_json_pointer(p, sizeof(p), ptr, "text");
		if (strlen(s) >= sizeof(c->text))
			return engi_parse_error(err, file, p, "longer than %zu bytes",
						sizeof(c->text) - 1);
		snprintf(c->text, sizeof(c->text), "%s", s);
	}
	return 0;
}

static int cmd_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		     void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind",	"file",	  "env",       "upload",
					   "clear",	"run",	  "timeout_s", "criteria",
					   "objective", "reward", NULL};
	static const char *const envs[] = {"episode", "clean", NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct cmd_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct cmd_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	int env = 0, rc = 0;
	char p[POINTER_MAX];
	rc = engi_json_choice(ver, "env", envs, "env", 0, file, pointer, &env, err);
	cc->env = env == 1 ? ENGI_VENV_CLEAN : ENGI_VENV_EPISODE;
	/* the task's folder: given, or where the task file lies */
	const char *slash = strrchr(file, '/');
	if (dir)
		snprintf(cc->task_dir, sizeof(cc->task_dir), "%s", dir);
	else if (slash)
		snprintf(cc->task_dir, sizeof(cc->task_dir), "%.*s", (int)(slash - file), file);
	else
		snprintf(cc->task_dir, sizeof(cc->task_dir), ".");
	if (rc == 0)
		rc = copy_str(ver, "run", cc->run, sizeof(cc->run), 1, file, pointer, err);
	int present = 0;
	cc->timeout_s = CMD_TIMEOUT_S;
	if (rc == 0)
		rc = engi_json_number(ver, "timeout_s", file, pointer, &present, &cc->timeout_s,
				      err);
	if (rc == 0 && present && !(cc->timeout_s > 0 && cc->timeout_s <= CMD_TIMEOUT_MAX)) {
		engi_json_pointer(p, sizeof(p), pointer, "timeout_s");
		rc = engi_parse_error(err, file, p, "must be more than 0 and at most %.0f",
				      CMD_TIMEOUT_MAX);
	}
	json_t *up = json_object_get(ver, "upload");
	engi_json_pointer(p, sizeof(p), pointer, "upload");
	if (rc == 0 && up && !json_is_array(up))
		rc =
		    engi_parse_error(err, file, p, "expected an array, got %s", engi_json_kind(up));
	if (rc == 0 && json_array_size(up) > CMD_UPLOADS_MAX)
		rc = engi_parse_error(err, file, p, "at most %d files", CMD_UPLOADS_MAX);
	for (size_t i = 0; rc == 0 && i < json_array_size(up); i++) {
		char ip[POINTER_MAX];
		engi_json_pointer_index(ip, sizeof(ip), p, i);
		rc = parse_upload(json_array_get(up, i), file, ip, cc->task_dir, &cc->uploads[i],
				  err);
		cc->nuploads = i + 1;
	}
	json_t *cl = json_object_get(ver, "clear");
	engi_json_pointer(p, sizeof(p), pointer, "clear");
	if (rc == 0 && cl && (!json_is_array(cl) || json_array_size(cl) > CMD_CLEAR_MAX))
		rc = engi_parse_error(err, file, p, "expected an array of at most %d folders",
				      CMD_CLEAR_MAX);
	for (size_t i = 0; rc == 0 && i < json_array_size(cl); i++) {
		char ip[POINTER_MAX];
		engi_json_pointer_index(ip, sizeof(ip), p, i);
		const char *d = json_string_value(json_array_get(cl, i));
		if (!d || !clear_path_ok(d))
			rc = engi_parse_error(err, file, ip,
					      "expected an absolute folder of [A-Za-z0-9._/-] "
					      "without '.' or '..' components, not '/', at most "
					      "%d bytes",
					      CMD_PATH_MAX - 1);
		else
			snprintf(cc->clear[cc->nclear++], CMD_PATH_MAX, "%s", d);
	}
	cc->n = n;
	char base[POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ptr[POINTER_MAX];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		rc = parse_item(json_array_get(arr, i), file, ptr, &cc->v[i], err);
		if (rc == 0)
			rc = engi_criterion_name_unique(&cc->v[0].c, sizeof(cc->v[0]), i, 0, file,
							base, ptr, err);
	}
	if (rc < 0) {
		cmd_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

static int cmd_env(const void *criteria)
{
	const struct cmd_criteria *cc = criteria;
	return cc ? cc->env : ENGI_VENV_EPISODE;
}

/* The last line of out that is a number and nothing else (spaces aside). */
static int last_number(const char *out, size_t len, double *x)
{
	int found = 0;
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && out[j] != '\n')
			j++;
		char line[128];
		size_t a = i, b = j;
		while (a < b && isspace((unsigned char)out[a]))
			a++;
		while (b > a && isspace((unsigned char)out[b - 1]))
			b--;
		if (b > a && b - a < sizeof(line)) {
			memcpy(line, out + a, b - a);
			line[b - a] = '\0';
			char *end = NULL;
			errno = 0;
			double v = strtod(line, &end);
			if (end && *end == '\0' && errno == 0 && isfinite(v)) {
				*x = v;
				found = 1;
			}
		}
		i = j + 1;
	}
	return found;
}

/* What the evaluator printed, for a message: at most 60 bytes, control
 * characters as '?'. */
static void output_excerpt(const char *out, size_t len, char *buf, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k + 4 < n && i < 60; i++)
		buf[k++] = (unsigned char)out[i] < 0x20 || out[i] == 0x7f ? '?' : out[i];
	if (len > 60 && k + 4 < n)
		buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
	buf[k] = '\0';
}

static int judge_true_false(const struct cmd_criterion *c, int status, const char *out, size_t len,
			    struct engi_verdict *v, struct engi_error *err)
{
	/* CRLF read as LF */
	char norm[8];
	size_t k = 0;
	for (size_t i = 0; i < len && k < sizeof(norm); i++)
		if (!(out[i] == '\r' && i + 1 < len && out[i + 1] == '\n'))
			norm[k++] = out[i];
	int is_true = len <= 7 && k == 5 && !memcmp(norm, "True\n", 5);
	int is_false = len <= 8 && k == 6 && !memcmp(norm, "False\n", 6);
	char ex[80];
	output_excerpt(out, len, ex, sizeof(ex));
	if (!is_true && !is_false)
		RAISE(err, ENGI_EPARSE,
		      "the evaluator printed neither True nor False (exit status %d, %zu bytes: "
		      "'%s')",
		      status, len, ex);
	if ((is_true && status != 0) || (is_false && status != 0 && status != 1))
		RAISE(err, ENGI_EPARSE, "the evaluator printed %s and exited with status %d",
		      is_true ? "True" : "False", status);
	return engi_criterion_report(&c->c, is_true ? ENGI_PASS : ENGI_FAIL, is_true ? 1 : 0, v,
				     err, "the evaluator printed %s", is_true ? "True" : "False");
}

/* A score in a JSON value: a number, or an object's field, "score",
 * "metric_value" or metrics.<field>; booleans are not scores. */
static int json_score(json_t *j, const char *field, double *x)
{
	if (json_is_object(j)) {
		json_t *m = json_object_get(j, "metrics");
		json_t *c[] = {json_object_get(j, field), json_object_get(j, "score"),
			       json_object_get(j, "metric_value"),
			       json_is_object(m) ? json_object_get(m, field) : NULL};
		for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
			if (json_is_number(c[i])) {
				*x = json_number_value(c[i]);
				return 1;
			}
		return 0;
	}
	if (json_is_number(j)) {
		*x = json_number_value(j);
		return 1;
	}
	return 0;
}

/* The score of one text: the whole as JSON, else its lines from the last,
 * each as JSON or as a bare number. 1 found, 0 not. */
static int text_score(const char *t, size_t len, const char *field, double *x)
{
	json_t *j = json_loadb(t, len, JSON_DECODE_ANY, NULL);
	int found = j && json_score(j, field, x);
	json_decref(j);
	if (found || j)
		return found;
	size_t end = len;
	while (end > 0) {
		size_t b = end;
		while (b > 0 && t[b - 1] != '\n')
			b--;
		size_t s = b, e = end;
		while (s < e && isspace((unsigned char)t[s]))
			s++;
		while (e > s && isspace((unsigned char)t[e - 1]))
			e--;
		if (e > s) {
			j = json_loadb(t + s, e - s, JSON_DECODE_ANY, NULL);
			found = j && json_score(j, field, x);
			json_decref(j);
			if (!found && !j && e - s < 64) {
				char num[64];
				memcpy(num, t + s, e - s);
				num[e - s] = '\0';
				char *endp = NULL;
				errno = 0;
				double v = strtod(num, &endp);
				found = endp && *endp == '\0' && endp != num && errno == 0;
				if (found)
					*x = v;
			}
			if (found)
				return 1;
		}
		end = b > 0 ? b - 1 : 0;
	}
	return 0;
}

/* The evaluator's score files, read after it ran (text engi_free, NULL
 * when absent) */
struct score_files {
	char *text[2];
	size_t len[2];
	int agents[2]; /* there before the evaluator, unchanged after */
};

static const char *const score_file_names[] = {"score.json", "quant_metrics.json"};

static int judge_quantified(const struct cmd_criterion *c, int status, const char *out, size_t len,
			    const struct score_files *sf, struct engi_verdict *v,
			    struct engi_error *err)
{
	size_t a = 0, b = len;
	while (a < b && isspace((unsigned char)out[a]))
		a++;
	while (b > a && isspace((unsigned char)out[b - 1]))
		b--;
	if (status != 0 && !(status == 1 && b - a == 5 && !memcmp(out + a, "False", 5)))
		RAISE(err, ENGI_EPARSE, "the evaluator exited with status %d", status);
	if (a == b)
		RAISE(err, ENGI_EPARSE, "the evaluator printed nothing");
	double x = NAN;
	int found = 0, from = -1;
	for (int i = 0; i < 2 && !found; i++)
		if (sf->text[i] && text_score(sf->text[i], sf->len[i], c->text, &x)) {
			found = 1;
			from = i;
		}
	if (!found)
		found = text_score(out, len, c->text, &x);
	if (!found)
		RAISE(err, ENGI_EPARSE, "the evaluator gave no score (field '%s')", c->text);
	if (!isfinite(x))
		RAISE(err, ENGI_EPARSE, "the evaluator's score is not finite");
	TRY(engi_verdict_metric(v, "evaluator_score", x));
	if (from >= 0 && sf->agents[from]) {
		struct engi_criterion g = c->c;
		snprintf(g.name, sizeof(g.name), "score_written_by_evaluator");
		snprintf(g.stage, sizeof(g.stage), "integrity");
		g.required = 0;
		TRY(engi_criterion_report(&g, ENGI_FAIL, NAN, v, err,
					  "the score came from %s, which was there before the "
					  "evaluator ran and which it did not rewrite",
					  score_file_names[from]));
	}
	return engi_criterion_report(&c->c, x > 0 ? ENGI_PASS : ENGI_FAIL, x, v, err,
				     "the evaluator's score is %.6g (from %s)", x,
				     from >= 0 ? score_file_names[from] : "its output");
}

#define HARBOR_DIR "/logs/verifier"
static const char *const harbor_files[] = {HARBOR_DIR "/reward.json", HARBOR_DIR "/reward.txt"};

/* Harbor's reward: reward.json's (sf->text[0]) "reward", else its one
 * numeric value, every numeric value a metric "reward:KEY"; else
 * reward.txt's (sf->text[1]) one number. */
static int judge_harbor(const struct cmd_criterion *c, const struct score_files *sf,
			struct engi_verdict *v, struct engi_error *err)
{
	double x = NAN;
	const char *from = NULL;
	if (sf->text[0]) {
		from = "reward.json";
		if (!sf->len[0])
			RAISE(err, ENGI_EPARSE, "the evaluator's reward.json is empty");
		json_t *j = json_loadb(sf->text[0], sf->len[0], 0, NULL);
		if (!json_is_object(j)) {
			json_decref(j);
			RAISE(err, ENGI_EPARSE, "the evaluator's reward.json is not a JSON object");
		}
		const char *k;
		json_t *val;
		size_t numeric = 0;
		double only = NAN;
		int rc = 0;
		json_object_foreach(j, k, val)
		{
			if (!json_is_number(val) || !isfinite(json_number_value(val)))
				continue;
			numeric++;
			only = json_number_value(val);
			char name[ENGI_NAME_MAX];
			if (rc == 0 && engi_json_name_valid(k, strlen(k)) &&
			    snprintf(name, sizeof(name), "reward:%s", k) < (int)sizeof(name))
				rc = engi_verdict_metric(v, name, only);
		}
		json_t *r = json_object_get(j, "reward");
		if (json_is_number(r))
			x = json_number_value(r);
		else if (numeric == 1 && !r)
			x = only;
		json_decref(j);
		if (rc < 0)
			RAISE(err, rc, "out of memory");
		if (isnan(x))
			RAISE(err, ENGI_EPARSE,
			      "the evaluator's reward.json has no numeric 'reward' and %zu numeric "
			      "values",
			      numeric);
	} else if (sf->text[1]) {
		from = "reward.txt";
		char num[64];
		size_t a = 0, b = sf->len[1];
		while (a < b && isspace((unsigned char)sf->text[1][a]))
			a++;
		while (b > a && isspace((unsigned char)sf->text[1][b - 1]))
			b--;
		char *end = NULL;
		if (b > a && b - a < sizeof(num)) {
			memcpy(num, sf->text[1] + a, b - a);
			num[b - a] = '\0';
			errno = 0;
			x = strtod(num, &end);
		}
		if (!end || *end || errno)
			RAISE(err, ENGI_EPARSE, "the evaluator's reward.txt is not one number");
	} else {
		RAISE(err, ENGI_EPARSE,
		      "the evaluator wrote no reward file (" HARBOR_DIR "/reward.json or "
		      "reward.txt)");
	}
	if (!isfinite(x))
		RAISE(err, ENGI_EPARSE, "the evaluator's reward is not finite");
	TRY(engi_verdict_metric(v, "evaluator_score", x));
	return engi_criterion_report(&c->c, x > 0 ? ENGI_PASS : ENGI_FAIL, x, v, err,
				     "the reward is %.6g (from %s)", x, from);
}

static int judge_one(const struct cmd_criterion *c, int status, const char *out, size_t len,
		     const struct score_files *sf, const struct score_files *hf,
		     struct engi_verdict *v, struct engi_error *err)
{
	switch (c->check) {
	case CHECK_HARBOR:
		return judge_harbor(c, hf, v, err);
	case CHECK_QUANTIFIED:
		return judge_quantified(c, status, out, len, sf, v, err);
	case CHECK_TRUE_FALSE:
		return judge_true_false(c, status, out, len, v, err);
	case CHECK_EXIT_STATUS:
		return engi_criterion_judge(&c->c, "exit status", status, NULL, v, err);
	case CHECK_LAST_NUMBER: {
		double x;
		if (!last_number(out, len, &x))
			return engi_criterion_report(&c->c, ENGI_FAIL, NAN, v, err,
						     "the evaluator printed no number on a line "
						     "of its own (%zu bytes of output)",
						     len);
		return engi_criterion_judge(&c->c, "last number", x, NULL, v, err);
	}
	case CHECK_OUTPUT_EQUALS: {
		int same = strlen(c->text) == len && !memcmp(c->text, out, len);
		return engi_criterion_report(&c->c, same ? ENGI_PASS : ENGI_FAIL, (double)len, v,
					     err, "the output (%zu bytes) %s the expected text",
					     len, same ? "is" : "is not");
	}
	default: {
		int in = memmem(out, len, c->text, strlen(c->text)) != NULL;
		return engi_criterion_report(&c->c, in ? ENGI_PASS : ENGI_FAIL, (double)len, v, err,
					     "the output (%zu bytes) %s the expected text", len,
					     in ? "holds" : "does not hold");
	}
	}
}

static int cmd_verify_env(const void *criteria, const struct engi_verify_env_ops *env,
			  const struct engi_verify_ctx *ctx, struct engi_verdict *v,
			  struct engi_error *err)
{
	const struct cmd_criteria *cc = criteria;
	int harbor = 0;
	for (size_t i = 0; i < cc->n; i++)
		harbor |= cc->v[i].check == CHECK_HARBOR;
	for (size_t i = 0; i <= cc->nclear; i++) {
		/* the folders to empty, then Harbor's reward folder */
		if (i == cc->nclear && !harbor)
			break;
		const char *d = i < cc->nclear ? cc->clear[i] : HARBOR_DIR;
		char cmd[5 * CMD_PATH_MAX];
		/* its contents (the folder itself may be a mount point), with
		 * what any POSIX shell has: globs that match nothing stay words,
		 * which rm -f passes over */
		snprintf(cmd, sizeof(cmd),
			 "mkdir -p -- '%s' && rm -rf -- '%s'/* '%s'/.[!.]* '%s'/..?*", d, d, d, d);
		int st = -1;
		char *o = NULL;
		size_t ol = 0;
		TRY(env->exec(env->ctx, cmd, 60, 4096, &st, &o, &ol, err));
		engi_free(o);
		if (st != 0)
			RAISE(err, ENGI_EIO, "cannot empty '%s' before the evaluator (exit %d)", d,
			      st);
	}
	for (size_t i = 0; i < cc->nuploads; i++) {
		char host[PATH_MAX];
		snprintf(host, sizeof(host), "%s/%s", ctx->task_dir ? ctx->task_dir : cc->task_dir,
			 cc->uploads[i].from);
		TRY(env->put(env->ctx, host, cc->uploads[i].to, err));
	}
	int quantified = 0;
	for (size_t i = 0; i < cc->n; i++)
		quantified |= cc->v[i].check == CHECK_QUANTIFIED;
	struct score_files sf;
	memset(&sf, 0, sizeof(sf));
	char *before = NULL;
	size_t before_len = 0;
	int st = -1;
	/* what score files the working folder held before the evaluator */
	static const char hash_cmd[] = "sha256sum score.json quant_metrics.json 2>/dev/null";
	if (quantified)
		TRY(env->exec(env->ctx, hash_cmd, 60, 4096, &st, &before, &before_len, err));
	int status = -1;
	char *out = NULL;
	size_t len = 0;
	int rc = env->exec(env->ctx, cc->run, cc->timeout_s, CMD_OUT_CAP, &status, &out, &len, err);
	char *after = NULL;
	size_t after_len = 0;
	if (rc == 0 && status >= 0 && quantified)
		rc = env->exec(env->ctx, hash_cmd, 60, 4096, &st, &after, &after_len, err);
	for (int i = 0; rc == 0 && status >= 0 && quantified && i < 2; i++) {
		char cat[64];
		snprintf(cat, sizeof(cat), "cat -- %s 2>/dev/null", score_file_names[i]);
		char *t = NULL;
		size_t tl = 0;
		rc = env->exec(env->ctx, cat, 60, CMD_OUT_CAP, &st, &t, &tl, err);
		if (rc == 0 && st == 0) {
			sf.text[i] = t;
			sf.len[i] = tl;
			/* the same "HASH  NAME" line before and after: not the evaluator's */
			char line[128];
			snprintf(line, sizeof(line), "  %s\n", score_file_names[i]);
			const char *pb = before ? strstr(before, line) : NULL;
			const char *pa = after ? strstr(after, line) : NULL;
			sf.agents[i] = pb && pa && pb - before >= 64 && pa - after >= 64 &&
				       !memcmp(pb - 64, pa - 64, 64);
		} else {
			engi_free(t);
		}
	}
	engi_free(before);
	engi_free(after);
	struct score_files hf;
	memset(&hf, 0, sizeof(hf));
	for (int i = 0; rc == 0 && status >= 0 && harbor && i < 2; i++) {
		char cat[128];
		snprintf(cat, sizeof(cat), "test -f '%s' && cat -- '%s'", harbor_files[i],
			 harbor_files[i]);
		char *t = NULL;
		size_t tl = 0;
		rc = env->exec(env->ctx, cat, 60, CMD_OUT_CAP, &st, &t, &tl, err);
		if (rc == 0 && st == 0) {
			hf.text[i] = t;
			hf.len[i] = tl;
		} else {
			engi_free(t);
		}
	}
	if (rc < 0) {
		engi_free(out);
		engi_free(sf.text[0]);
		engi_free(sf.text[1]);
		engi_free(hf.text[0]);
		engi_free(hf.text[1]);
		return rc;
	}
	if (status < 0) {
		engi_free(out);
		RAISE(err, ENGI_ETIMEOUT, "the evaluator '%.80s' ran past its limit of %.0f s",
		      cc->run, cc->timeout_s);
	}
	rc = engi_verdict_metric(v, "evaluator_exit_status", status);
	for (size_t i = 0; i < cc->n && rc == 0; i++)
		rc = judge_one(&cc->v[i], status, out ? out : "", len, &sf, &hf, v, err);
	engi_free(out);
	engi_free(sf.text[0]);
	engi_free(sf.text[1]);
	engi_free(hf.text[0]);
	engi_free(hf.text[1]);
	return rc;
}

static size_t cmd_names(const void *criteria, const char **out, size_t cap)
{
	const struct cmd_criteria *cc = criteria;
	return engi_criteria_names(&cc->v[0].c, sizeof(cc->v[0]), cc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_command = {
    .name = "command",
    .summary = "a benchmark's own evaluator run in the environment after the agent stops",
    .version = 1,
    .parse = cmd_parse,
    .free_criteria = cmd_free,
    .names = cmd_names,
    .env = cmd_env,
    .verify_env = cmd_verify_env,
};
