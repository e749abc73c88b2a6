/*
 * Task loading (tasks/SCHEMA.md): the corpus of malformed task files, the demo
 * suite, content hashes, defaults and duplicate ids.
 *
 * usage: test_loader BAD_TASKS_FOLDER DEMO_SUITE_FOLDER
 *
 * Every NN-name.json in BAD_TASKS_FOLDER must fail to load with exactly the
 * message in NN-name.expect, where @FILE@ stands for the task file's path as
 * passed to suite_load, @DIR@ for the folder's absolute, resolved path and
 * @KINDS@ for the registered verifier kinds as the loader lists them.
 * base.task in the same folder is the valid task the cases are made from.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "engi/verify.h"
#include "fsutil.h"
#include "task.h"

#define FILE_CAP ((size_t)1 << 20)

static const char *tmp_root(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t ? t : "/tmp";
}

static char *make_tmpdir(void)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s/engi-test-loader-XXXXXX", tmp_root());
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		exit(2);
	}
	return engi_strdup(buf);
}

static void remove_tree(char *dir)
{
	struct engi_error e;
	engi_error_init(&e);
	if (fs_rm_rf(dir, &e) < 0)
		fprintf(stderr, "cannot remove %s: %s\n", dir, e.msg);
	engi_free(dir);
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	struct engi_error e;
	engi_error_init(&e);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(fs_mkdir_parents(path, 0755, &e) == 0);
	if (fs_write_file_atomic(path, text, strlen(text), &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		exit(2);
	}
}

/* Copies a tree of regular files and folders. */
static void copy_tree(const char *src, const char *dst)
{
	struct engi_error e;
	engi_error_init(&e);
	CHECK(fs_mkdir_p(dst, 0755, &e) == 0);
	DIR *d = opendir(src);
	CHECK(d != NULL);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char s[PATH_MAX], t[PATH_MAX];
		snprintf(s, sizeof(s), "%s/%s", src, de->d_name);
		snprintf(t, sizeof(t), "%s/%s", dst, de->d_name);
		if (fs_path_is_dir(s)) {
			copy_tree(s, t);
		} else {
			uint64_t n;
			CHECK(fs_copy_file_capped(s, t, (uint64_t)1 << 30, &n, &e) == 0);
		}
	}
	closedir(d);
}

/* Replaces every occurrence of `from` in s by `to`; returns a new string. */
static char *replace_all(const char *s, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), count = 0;
	for (const char *p = strstr(s, from); p; p = strstr(p + nf, from))
		count++;
	char *out = engi_malloc(strlen(s) + count * nt + 1);
	if (!out)
		exit(2);
	char *o = out;
	for (;;) {
		const char *p = strstr(s, from);
		if (!p)
			break;
		memcpy(o, s, (size_t)(p - s));
		o += p - s;
		memcpy(o, to, nt);
		o += nt;
		s = p + nf;
	}
	strcpy(o, s);
	return out;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir ending with suffix. */
static char **list_names(const char *dir, const char *suffix, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "cannot open %s\n", dir);
		exit(2);
	}
	char **v = NULL;
	size_t cnt = 0;
	struct dirent *de;
	size_t ns = strlen(suffix);
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len <= ns || strcmp(de->d_name + len - ns, suffix) || de->d_name[0] == '.')
			continue;
		v = engi_reallocarray(v, cnt + 1, sizeof(*v));
		if (!v || !(v[cnt] = engi_strdup(de->d_name)))
			exit(2);
		cnt++;
	}
	closedir(d);
	qsort(v, cnt, sizeof(*v), cmp_names);
	*n = cnt;
	return v;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		engi_free(v[i]);
	engi_free(v);
}

/* A case name is NN-short-name: two digits, a dash, [a-z0-9-]. */
/* Digits of a case's leading number (two or three), or 0 when the name is
 * not NN-short-name / NNN-short-name. */
static size_t case_digits(const char *name, size_t len)
{
	size_t d = 0;
	while (d < 3 && d < len && name[d] >= '0' && name[d] <= '9')
		d++;
	if (d < 2 || len < d + 2 || name[d] != '-')
		return 0;
	for (size_t i = d + 1; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return d;
}

static void test_corpus(const char *dir)
{
	char absdir[PATH_MAX];
	if (!realpath(dir, absdir)) {
		perror(dir);
		exit(2);
	}
	/* "mesh, ccx_dat, ...": the registry's kinds, as the loader lists them */
	char kinds[512] = "";
	const struct engi_verifier_kind *const *k = engi_verifier_kinds();
	for (size_t i = 0; k[i]; i++) {
		strncat(kinds, k[i]->name, sizeof(kinds) - strlen(kinds) - 1);
		if (k[i + 1])
			strncat(kinds, ", ", sizeof(kinds) - strlen(kinds) - 1);
	}
	CHECK(strstr(kinds, "mesh, ccx_dat") == kinds);
	struct engi_error err;
	struct suite s;

	/* the valid task every case is derived from */
	char base[PATH_MAX];
	snprintf(base, sizeof(base), "%s/base.task", dir);
	engi_error_init(&err);
	int rc = suite_load(&s, base, &err);
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "base.task: %s\n", err.msg);
	} else {
		CHECK_INT(s.ntasks, 1);
		suite_release(&s);
	}

	size_t n, nexp;
	char **cases = list_names(dir, ".json", &n);
	char **expects = list_names(dir, ".expect", &nexp);
	CHECK(n >= 30);
	CHECK_INT(nexp, n);
	int numbers[1000] = {0};
	for (size_t i = 0; i < n; i++) {
		const char *name = cases[i];
		size_t stem = strlen(name) - strlen(".json");
		size_t digits = case_digits(name, stem);
		if (!digits) {
			fprintf(stderr, "%s: a case is named NN-short-name.json\n", name);
			CHECK(0);
			continue;
		}
		int num = atoi(name);
		if (numbers[num]++)
			fprintf(stderr, "%s: number %02d is used twice\n", name, num);
		CHECK_INT(numbers[num], 1);

		char path[PATH_MAX], exp_path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		snprintf(exp_path, sizeof(exp_path), "%s/%.*s.expect", dir, (int)stem, name);
		char *raw = NULL;
		size_t len;
		engi_error_init(&err);
		if (fs_read_file(exp_path, FILE_CAP, &raw, &len, &err) < 0) {
			fprintf(stderr, "%s: %s\n", name, err.msg);
			CHECK(0);
			continue;
		}
		while (len && (raw[len - 1] == '\n' || raw[len - 1] == '\r'))
			raw[--len] = '\0';
		CHECK(strchr(raw, '\n') == NULL); /* one message, one line */
		char *with_file = replace_all(raw, "@FILE@", path);
		char *with_dir = replace_all(with_file, "@DIR@", absdir);
		char *expected = replace_all(with_dir, "@KINDS@", kinds);
		engi_free(with_file);
		engi_free(with_dir);
		engi_free(raw);

		engi_error_init(&err);
		rc = suite_load(&s, path, &err);
		CHECK(rc < 0);
		CHECK_INT(err.code, rc);
		CHECK_INT(s.ntasks, 0);
		if (rc == 0)
			suite_release(&s);
		if (strcmp(err.msg, expected)) {
			char *got_file = replace_all(err.msg, path, "@FILE@");
			char *got_dir = replace_all(got_file, absdir, "@DIR@");
			char *got = replace_all(got_dir, kinds, "@KINDS@");
			engi_free(got_dir);
			fprintf(stderr, "%s:\n  expected: %s\n  got:      %s\n  as .expect: %s\n",
				name, expected, err.msg, got);
			engi_free(got_file);
			engi_free(got);
		}
		CHECK_STR(err.msg, expected);
		engi_free(expected);
	}
	/* every .expect belongs to a case */
	for (size_t i = 0; i < nexp; i++) {
		char json[NAME_MAX + 1];
		size_t stem = strlen(expects[i]) - strlen(".expect");
		snprintf(json, sizeof(json), "%.*s.json", (int)stem, expects[i]);
		int found = 0;
		for (size_t j = 0; j < n && !found; j++)
			found = !strcmp(cases[j], json);
		if (!found)
			fprintf(stderr, "%s: no %s next to it\n", expects[i], json);
		CHECK(found);
	}
	free_names(cases, n);
	free_names(expects, nexp);
}

static int is_hex64(const char *h)
{
	if (strlen(h) != 64)
		return 0;
	for (const char *p = h; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

static void test_demo(const char *demo)
{
	struct suite a, b;
	struct engi_error err;
	engi_error_init(&err);
	int rc = suite_load(&a, demo, &err);
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", demo, err.msg);
		return;
	}
	CHECK_INT(a.ntasks, 12);
	CHECK_INT(suite_load(&b, demo, &err), 0);
	CHECK_INT(b.ntasks, a.ntasks);
	for (size_t i = 0; i < a.ntasks && i < b.ntasks; i++) {
		CHECK(is_hex64(a.tasks[i].hash));
		CHECK_STR(a.tasks[i].id, b.tasks[i].id);
		CHECK_STR(a.tasks[i].hash, b.tasks[i].hash);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(a.tasks[i].hash, a.tasks[j].hash) != 0);
	}
	/* tasks come in file-name order */
	for (size_t i = 1; i < a.ntasks; i++)
		CHECK(strcmp(a.tasks[i - 1].file, a.tasks[i].file) < 0);

	const struct task *t = suite_find(&a, "flange");
	CHECK(t != NULL);
	if (t) {
		CHECK_STR(t->domain, "CAD");
		CHECK_INT(t->type, TASK_SINGLE);
		CHECK_INT(t->interface, IFACE_CLI);
		CHECK_STR(t->verifier->name, "mesh");
		CHECK_STR(t->verifier_file, "flange.stl");
		CHECK_STR(t->env.image, "tools");
		CHECK_INT(t->env.memory_mb, 2048);
		CHECK_INT(t->env.cpus, 1);
		CHECK_INT(t->env.network, 0);
		/* no limits: the defaults for a single CLI task */
		CHECK_INT(t->turn_limit, 100);
		CHECK_NEAR(t->wall_s, TASK_DEFAULT_WALL_S, 0);
		CHECK_INT(t->ndeliverables, 2);
		if (t->ndeliverables == 2) {
			CHECK_INT(t->deliverables[0].required, 1);
			CHECK_INT(t->deliverables[1].required, 0);
			CHECK_INT(t->deliverables[1].max_bytes, 1048576);
		}
		CHECK_INT(t->reference.n, 3);
		if (t->reference.n == 3) {
			CHECK_INT(t->reference.v[0].kind, STEP_WRITE_FILE);
			CHECK(t->reference.v[0].host && t->reference.v[0].host[0] == '/');
			CHECK_INT(t->reference.v[1].kind, STEP_RUN);
			CHECK_INT(t->reference.v[2].kind, STEP_DONE);
		}
		CHECK_INT(t->nflawed, 2);
		CHECK(task_find_flawed(t, "wrong-pcd") != NULL);
		CHECK(task_find_flawed(t, "wrong") == NULL);
		CHECK_INT(t->nresources, 0);
		CHECK_INT(t->scoring.mode, ENGI_SCORING_BINARY);
	}
	t = suite_find(&a, "cantilever-ccx");
	CHECK(t != NULL);
	if (t) {
		CHECK_INT(t->turn_limit, 60);
		CHECK_NEAR(t->wall_s, 3600, 0);
		CHECK_INT(t->ninputs, 1);
		if (t->ninputs == 1) {
			CHECK_STR(t->inputs[0].env, "mesh.inp");
			CHECK_INT(t->inputs[0].protected_, 1);
		}
		CHECK_INT(t->nresources, 1);
		if (t->nresources == 1) {
			CHECK_STR(t->resources[0].name, "calculix");
			CHECK_INT(t->resources[0].count, 1);
		}
	}
	t = suite_find(&a, "shaft-sizing");
	CHECK(t != NULL);
	if (t)
		CHECK_INT(t->turn_limit, 150); /* cross, CLI */
	t = suite_find(&a, "beam-section-opt");
	CHECK(t != NULL);
	if (t)
		CHECK_INT(t->scoring.mode, ENGI_SCORING_OPTIMIZATION);
	CHECK(suite_find(&a, "no-such-task") == NULL);
	suite_release(&a);
	suite_release(&b);
}

static const char *find_hash(const char *dir, const char *id, char out[65])
{
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	out[0] = '\0';
	if (suite_load(&s, dir, &err) < 0) {
		fprintf(stderr, "%s: %s\n", dir, err.msg);
		CHECK(0);
		return out;
	}
	const struct task *t = suite_find(&s, id);
	CHECK(t != NULL);
	if (t)
		snprintf(out, 65, "%s", t->hash);
	suite_release(&s);
	return out;
}

/* Flips the low bit of byte `at` of a file. */
static void flip_byte(const char *path, long at)
{
	FILE *f = fopen(path, "r+b");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fseek(f, at, SEEK_SET) == 0);
	int c = fgetc(f);
	CHECK(c != EOF);
	CHECK(fseek(f, at, SEEK_SET) == 0);
	fputc(c ^ 1, f);
	fclose(f);
}

static void test_hash(const char *demo)
{
	char *tmp = make_tmpdir();
	char src[PATH_MAX], dst[PATH_MAX];
	snprintf(src, sizeof(src), "%s/cantilever-ccx", demo);
	snprintf(dst, sizeof(dst), "%s/cantilever-ccx", tmp);
	copy_tree(src, dst);
	snprintf(src, sizeof(src), "%s/cantilever-ccx.json", demo);
	snprintf(dst, sizeof(dst), "%s/cantilever-ccx.json", tmp);
	uint64_t n;
	struct engi_error err;
	engi_error_init(&err);
	CHECK(fs_copy_file_capped(src, dst, FILE_CAP, &n, &err) == 0);

	char orig[65], copy[65], h[65];
	find_hash(demo, "cantilever-ccx", orig);
	/* the hash is of content, not of where the suite lies */
	CHECK_STR(find_hash(tmp, "cantilever-ccx", copy), orig);

	/* one byte of the protected input mesh */
	char input[PATH_MAX];
	snprintf(input, sizeof(input), "%s/cantilever-ccx/inputs/mesh.inp", tmp);
	flip_byte(input, 100);
	find_hash(tmp, "cantilever-ccx", h);
	CHECK(h[0] && strcmp(h, orig) != 0);
	flip_byte(input, 100);
	CHECK_STR(find_hash(tmp, "cantilever-ccx", h), orig);

	/* a held-back reference file, played by a write step */
	char ref[PATH_MAX];
	snprintf(ref, sizeof(ref), "%s/cantilever-ccx/reference/cantilever.inp", tmp);
	flip_byte(ref, 10);
	find_hash(tmp, "cantilever-ccx", h);
	CHECK(h[0] && strcmp(h, orig) != 0);
	flip_byte(ref, 10);

	/* the JSON itself: layout does not count, values do */
	char *text = NULL;
	size_t len;
	CHECK(fs_read_file(dst, FILE_CAP, &text, &len, &err) == 0);
	if (text) {
		char *spaced = replace_all(text, "\"schema\": 1,", "\"schema\"  :  1 ,\n\n");
		put_file(tmp, "cantilever-ccx.json", spaced);
		CHECK_STR(find_hash(tmp, "cantilever-ccx", h), orig);
		engi_free(spaced);
		char *changed = replace_all(text, "\"turns\": 60", "\"turns\": 61");
		CHECK(strcmp(changed, text) != 0);
		put_file(tmp, "cantilever-ccx.json", changed);
		find_hash(tmp, "cantilever-ccx", h);
		CHECK(h[0] && strcmp(h, orig) != 0);
		engi_free(changed);
		engi_free(text);
	}
	remove_tree(tmp);
}

/* A minimal valid task with the given type and interface; extra is spliced
 * in as more top-level fields (with a trailing comma) or "". */
static void write_task(const char *dir, const char *file, const char *id, const char *type,
		       const char *iface, const char *extra)
{
	char text[4096];
	const char *objective =
	    !strcmp(type, "optimization")
		? ", \"objective\": {\"metric\": \"volume\", \"sense\": \"min\", "
		  "\"baseline\": 2000, \"reference\": 1000}"
		: "";
	snprintf(text, sizeof(text),
		 "{\"id\": \"%s\", \"domain\": \"CAD\", \"software\": [\"openscad\"],\n"
		 " \"type\": \"%s\", \"interface\": \"%s\", \"instruction\": \"Make a cube.\",\n"
		 " %s\n"
		 " \"deliverables\": [{\"path\": \"cube.stl\"}],\n"
		 " \"verifier\": {\"kind\": \"mesh\", \"file\": \"cube.stl\",\n"
		 "   \"criteria\": [{\"name\": \"closed\", \"check\": \"watertight\"}]%s},\n"
		 " \"reference\": [{\"run\": \"true\"}]}\n",
		 id, type, iface, extra, objective);
	put_file(dir, file, text);
}

/* A file a verifier kind reads (here cad_similarity's reference mesh) is
 * part of the task's content: changing it changes the hash. */
static void test_hash_verifier_files(void)
{
	char *tmp = make_tmpdir();
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/part", tmp);
	CHECK(mkdir(dir, 0755) == 0);
	put_file(dir, "ref.stl", "solid r\nendsolid r\n");
	put_file(tmp, "part.json",
		 "{\"id\": \"part\", \"domain\": \"CAD\", \"software\": [\"openscad\"],\n"
		 " \"type\": \"single\", \"interface\": \"cli\", \"instruction\": \"Model it.\",\n"
		 " \"deliverables\": [{\"path\": \"part.stl\"}],\n"
		 " \"verifier\": {\"kind\": \"cad_similarity\", \"file\": \"part.stl\",\n"
		 "   \"reference\": \"part/ref.stl\",\n"
		 "   \"criteria\": [{\"name\": \"geometry\", \"check\": \"similarity\", \"min\": "
		 "0.5}]},\n"
		 " \"reference\": [{\"run\": \"true\"}]}\n");
	char orig[65], h[65];
	find_hash(tmp, "part", orig);
	CHECK(orig[0] != '\0');
	put_file(dir, "ref.stl", "solid s\nendsolid s\n");
	find_hash(tmp, "part", h);
	CHECK(h[0] && strcmp(h, orig) != 0);
	put_file(dir, "ref.stl", "solid r\nendsolid r\n");
	CHECK_STR(find_hash(tmp, "part", h), orig);
	remove_tree(tmp);
}

/* A task's meta: strings, numbers and booleans kept as text in the file's
 * order, reachable by key; a task without one has none. */
static void test_meta(void)
{
	char *tmp = make_tmpdir();
	write_task(tmp, "m.json", "m", "single", "cli",
		   "\"meta\": {\"family\": \"standard_workflow\", \"locale\": "
		   "\"zh-\u4e2d\u6587\", \"level\": 3, \"ratio\": 0.1, \"big\": 1e3, "
		   "\"checked\": true, \"z_9\": false},");
	write_task(tmp, "n.json", "n", "single", "cli", "");
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(suite_load(&s, tmp, &err), 0);
	const struct task *m = suite_find(&s, "m"), *n = suite_find(&s, "n");
	CHECK(m && n);
	if (m && n) {
		static const char *const want[][2] = {
		    {"family", "standard_workflow"},
		    {"locale", "zh-\xe4\xb8\xad\xe6\x96\x87"},
		    {"level", "3"},
		    {"ratio", "0.1"},
		    {"big", "1000"},
		    {"checked", "true"},
		    {"z_9", "false"},
		};
		CHECK_INT(m->nmeta, sizeof(want) / sizeof(*want));
		for (size_t i = 0; i < m->nmeta && i < sizeof(want) / sizeof(*want); i++) {
			CHECK_STR(m->meta[i].key, want[i][0]);
			CHECK_STR(m->meta[i].value, want[i][1]);
		}
		CHECK_STR(task_meta_get(m, "level"), "3");
		CHECK(task_meta_get(m, "nope") == NULL);
		CHECK_INT(n->nmeta, 0);
		/* the task as engisweep's JSON (what a judge child loads) has it */
		CHECK(strstr(m->json, "\"meta\":{") != NULL);
	}
	suite_release(&s);
	remove_tree(tmp);
}

static void test_defaults(void)
{
	static const struct {
		const char *type, *iface;
		int turns;
	} cases[] = {
	    {"single", "cli", 100},	  {"single", "gui", 200}, {"selection", "cli", 100},
	    {"selection", "gui", 200},	  {"vision", "gui", 200}, {"optimization", "cli", 100},
	    {"optimization", "gui", 200}, {"cross", "cli", 150},  {"cross", "gui", 300},
	    {"open", "cli", 150},
	};
	size_t nc = sizeof(cases) / sizeof(*cases);
	char *tmp = make_tmpdir();
	for (size_t i = 0; i < nc; i++) {
		char file[64], id[64];
		snprintf(file, sizeof(file), "t%02zu.json", i);
		snprintf(id, sizeof(id), "%s-%s", cases[i].type, cases[i].iface);
		write_task(tmp, file, id, cases[i].type, cases[i].iface, "");
	}
	/* partial limits keep the other default; inputs and deliverables too */
	put_file(tmp, "in/data.txt", "data\n");
	write_task(tmp, "u1.json", "turns-only", "cross", "gui",
		   "\"limits\": {\"turns\": 7}, \"environment\": {\"cpus\": 4},\n"
		   " \"inputs\": [{\"host\": \"in/data.txt\", \"env\": \"data.txt\"}],");
	write_task(tmp, "u2.json", "wall-only", "cross", "gui",
		   "\"limits\": {\"wall_s\": 60.5}, \"environment\": {},");

	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	int rc = suite_load(&s, tmp, &err);
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "defaults: %s\n", err.msg);
		remove_tree(tmp);
		return;
	}
	CHECK_INT(s.ntasks, nc + 2);
	for (size_t i = 0; i < nc && i < s.ntasks; i++) {
		const struct task *t = &s.tasks[i];
		CHECK_STR(task_type_name(t->type), cases[i].type);
		CHECK_STR(task_interface_name(t->interface), cases[i].iface);
		if (t->turn_limit != cases[i].turns)
			fprintf(stderr, "%s: default turns\n", t->id);
		CHECK_INT(t->turn_limit, cases[i].turns);
		CHECK_INT(task_default_turns(t->type, t->interface), cases[i].turns);
		CHECK_NEAR(t->wall_s, 18000, 0);
		CHECK_STR(t->title, t->id);
		CHECK_STR(t->env.image, "host");
		CHECK_INT(t->env.cpus, 1);
		CHECK_INT(t->env.memory_mb, 1024);
		CHECK_INT(t->env.network, 0);
		CHECK_INT(t->ninputs, 0);
		CHECK_INT(t->nflawed, 0);
		CHECK_INT(t->nresources, 0);
		CHECK_INT(t->ndrawings, 0);
		CHECK_INT(t->ndeliverables, 1);
		CHECK_INT(t->deliverables[0].max_bytes, 64ull << 20);
		CHECK_INT(t->deliverables[0].required, 1);
		CHECK_INT(t->scoring.mode, !strcmp(cases[i].type, "optimization")
					       ? ENGI_SCORING_OPTIMIZATION
					       : ENGI_SCORING_BINARY);
	}
	const struct task *t = suite_find(&s, "turns-only");
	CHECK(t != NULL);
	if (t) {
		CHECK_INT(t->turn_limit, 7);
		CHECK_NEAR(t->wall_s, 18000, 0);
		CHECK_INT(t->env.cpus, 4);
		CHECK_INT(t->env.memory_mb, 1024);
		CHECK_STR(t->env.image, "host");
		CHECK_INT(t->ninputs, 1);
		if (t->ninputs == 1)
			CHECK_INT(t->inputs[0].protected_, 0);
	}
	t = suite_find(&s, "wall-only");
	CHECK(t != NULL);
	if (t) {
		CHECK_INT(t->turn_limit, 300);
		CHECK_NEAR(t->wall_s, 60.5, 0);
		CHECK_INT(t->env.cpus, 1);
	}
	suite_release(&s);
	CHECK_NEAR(TASK_DEFAULT_WALL_S, 18000, 0);
	remove_tree(tmp);
}

/* environment.folders: guest folders the task's environment paths may
 * name absolutely, strictly inside one; part of the task's content. */
static void test_folders(void)
{
	char *tmp = make_tmpdir();
	put_file(tmp, "in/x.txt", "x\n");
	static const char *const task_fmt =
	    "{\"id\": \"%s\", \"domain\": \"CAE\", \"software\": [\"sh\"],\n"
	    " \"type\": \"single\", \"interface\": \"cli\", \"instruction\": \"Do it.\",\n"
	    " \"environment\": {\"workdir\": \"/home/user\"%s},\n"
	    " \"inputs\": [{\"host\": \"in/x.txt\", \"env\": \"/solution/in/x.txt\", "
	    "\"protected\": true},\n"
	    "             {\"host\": \"in/x.txt\", \"env\": \"x.txt\"}],\n"
	    " \"deliverables\": [{\"path\": \"/logs/out.txt\"}, {\"path\": \"out.txt\"}],\n"
	    " \"verifier\": {\"kind\": \"command\", \"file\": \"/logs/out.txt\", "
	    "\"run\": \"cat /logs/out.txt\",\n"
	    "   \"criteria\": [{\"name\": \"ok\", \"check\": \"output_equals\", "
	    "\"text\": \"x\\n\"}]},\n"
	    " \"interaction\": {\"assert\": [{\"name\": \"no_key\", \"check\": \"no_file\", "
	    "\"path\": \"/logs/key\"}]},\n"
	    " \"reference\": [{\"write\": \"/tests/a/b.txt\", \"text\": \"b\"},\n"
	    "                {\"run\": \"cp /solution/in/x.txt /logs/out.txt\"}]}\n";
	char text[4096];
	snprintf(text, sizeof(text), task_fmt, "f",
		 ", \"folders\": [\"/tests\", \"/logs\", \"/solution\", \"/home/other\"]");
	put_file(tmp, "f.json", text);
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	int rc = suite_load(&s, tmp, &err);
	CHECK_INT(rc, 0);
	if (rc < 0) {
		fprintf(stderr, "folders: %s\n", err.msg);
		remove_tree(tmp);
		return;
	}
	const struct task *t = suite_find(&s, "f");
	CHECK(t != NULL);
	char with[65] = "";
	if (t) {
		CHECK_INT(t->env.nfolders, 4);
		if (t->env.nfolders == 4) {
			CHECK_STR(t->env.folders[0], "/tests");
			CHECK_STR(t->env.folders[3], "/home/other");
		}
		CHECK_STR(t->env.workdir, "/home/user");
		CHECK_STR(t->inputs[0].env, "/solution/in/x.txt");
		CHECK_STR(t->deliverables[0].path, "/logs/out.txt");
		CHECK_STR(t->reference.v[0].path, "/tests/a/b.txt");
		CHECK_STR(t->iasserts[0].path, "/logs/key");
		snprintf(with, sizeof(with), "%s", t->hash);
	}
	suite_release(&s);

	/* without the folders the absolute paths are refused, the message as
	 * for any task; a task's folders are part of its hash */
	snprintf(text, sizeof(text), task_fmt, "f", "");
	put_file(tmp, "f.json", text);
	engi_error_init(&err);
	CHECK(suite_load(&s, tmp, &err) < 0);
	CHECK(strstr(err.msg, "/inputs/0/env: absolute path '/solution/in/x.txt' (paths are "
			      "relative to the working folder)") != NULL);
	snprintf(text, sizeof(text), task_fmt, "f",
		 ", \"folders\": [\"/tests\", \"/logs\", \"/solution\", \"/home/others\"]");
	put_file(tmp, "f.json", text);
	char other[65];
	find_hash(tmp, "f", other);
	CHECK(other[0] && with[0] && strcmp(other, with) != 0);
	remove_tree(tmp);
}

static void test_duplicate_id(void)
{
	char *tmp = make_tmpdir();
	write_task(tmp, "a-first.json", "same", "single", "cli", "");
	write_task(tmp, "b-other.json", "other", "single", "cli", "");
	write_task(tmp, "c-second.json", "same", "single", "cli", "");
	struct suite s;
	struct engi_error err;
	engi_error_init(&err);
	int rc = suite_load(&s, tmp, &err);
	CHECK_INT(rc, ENGI_EPARSE);
	CHECK_INT(s.ntasks, 0);
	char expected[3 * PATH_MAX];
	snprintf(expected, sizeof(expected),
		 "%s/c-second.json: /id: 'same' is already the id of %s/a-first.json", tmp, tmp);
	CHECK_STR(err.msg, expected);

	/* the same file loaded alone is fine */
	char one[PATH_MAX];
	snprintf(one, sizeof(one), "%s/c-second.json", tmp);
	engi_error_init(&err);
	CHECK_INT(suite_load(&s, one, &err), 0);
	CHECK_INT(s.ntasks, 1);
	suite_release(&s);

	/* a bad file after good ones: the good ones are released, no task left */
	put_file(tmp, "d-broken.json", "{\"id\": \"broken\"}\n");
	char bad_file[PATH_MAX];
	snprintf(bad_file, sizeof(bad_file), "%s/d-broken.json", tmp);
	remove(one);
	engi_error_init(&err);
	CHECK(suite_load(&s, tmp, &err) < 0);
	snprintf(expected, sizeof(expected), "%s: /domain: missing required field", bad_file);
	CHECK_STR(err.msg, expected);
	CHECK_INT(s.ntasks, 0);
	remove_tree(tmp);
}

static void test_suite_paths(void)
{
	struct suite s;
	struct engi_error err;
	char *tmp = make_tmpdir();
	put_file(tmp, "README.md", "no tasks here\n");
	engi_error_init(&err);
	CHECK_INT(suite_load(&s, tmp, &err), ENGI_ENOTFOUND);
	char expected[2 * PATH_MAX];
	snprintf(expected, sizeof(expected), "suite folder '%s' has no *.json task files", tmp);
	CHECK_STR(err.msg, expected);

	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/nothing", tmp);
	engi_error_init(&err);
	CHECK_INT(suite_load(&s, missing, &err), ENGI_ENOTFOUND);
	snprintf(expected, sizeof(expected), "no task file or suite folder '%s'", missing);
	CHECK_STR(err.msg, expected);
	remove_tree(tmp);
}

/* Every allocation in turn fails: the load reports out of memory (never
 * another error, never a crash) and leaks nothing, until it succeeds. */
static void oom_sweep(const char *path, size_t ntasks)
{
	struct suite s;
	struct engi_error err;
	int done = 0, bad_code = 0, bad_msg = 0;
	long n;
	for (n = 1; n < 100000 && !done; n++) {
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = suite_load(&s, path, &err);
		engi_alloc_fail_after(0);
		if (rc == 0) {
			CHECK_INT(s.ntasks, ntasks);
			suite_release(&s);
			done = 1;
		} else if (rc != ENGI_ENOMEM && !bad_code++) {
			fprintf(stderr, "%s, allocation %ld fails: code %d: %s\n", path, n, rc,
				err.msg);
		} else if (!strstr(err.msg, "out of memory") && !bad_msg++) {
			fprintf(stderr, "%s, allocation %ld fails: %s\n", path, n, err.msg);
		}
	}
	CHECK(done);
	CHECK(n > 2); /* at least one allocation failed */
	CHECK_INT(bad_code, 0);
	CHECK_INT(bad_msg, 0);
}

static void test_out_of_memory(const char *bad_dir, const char *demo)
{
	char base[PATH_MAX];
	snprintf(base, sizeof(base), "%s/base.task", bad_dir);
	oom_sweep(base, 1);
	oom_sweep(demo, 12);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s BAD_TASKS_FOLDER DEMO_SUITE_FOLDER\n", argv[0]);
		return 2;
	}
	test_corpus(argv[1]);
	test_demo(argv[2]);
	test_hash(argv[2]);
	test_hash_verifier_files();
	test_defaults();
	test_meta();
	test_folders();
	test_duplicate_id();
	test_suite_paths();
	test_out_of_memory(argv[1], argv[2]);
	return check_exit();
}
