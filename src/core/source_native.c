/*
 * The native task source: a folder of *.json task files (tasks/SCHEMA.md),
 * or one. Each entry of the folder must be a regular file or a link to one
 * inside it; each file is read, parsed and added to the suite.
 */
#include "source.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TASK_FILE_CAP ((size_t)4 << 20)

/* One task file of the native source into s. */
static int load_one(struct suite *s, const char *file, struct engi_error *err)
{
	char *text = NULL;
	size_t len = 0;
	TRY(fs_read_file(file, TASK_FILE_CAP, &text, &len, err));
	json_t *root;
	int prc = engi_json_parse(file, text, len, &root, err);
	engi_free(text);
	TRY(prc);
	char absdir[PATH_MAX];
	char *resolved = realpath(file, NULL);
	if (!resolved) {
		json_decref(root);
		RAISE(err, ENGI_EIO, "cannot resolve '%s'", file);
	}
	snprintf(absdir, sizeof(absdir), "%s", resolved);
	free(resolved);
	char *slash = strrchr(absdir, '/');
	if (slash)
		*slash = '\0';
	int rc = suite_add_json(s, file, absdir, root, err);
	json_decref(root);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A task file of a suite folder is a regular file, or a symbolic link to
 * one inside the folder: a FIFO named x.json would block the loader, a
 * device would feed it forever, a link could read files from anywhere. */
static int check_task_entry(const char *dir, const char *file, struct engi_error *err)
{
	struct stat st;
	if (lstat(file, &st) < 0)
		RAISE(err, ENGI_EIO, "cannot read task file '%s': %s", file, strerror(errno));
	if (S_ISREG(st.st_mode))
		return 0;
	if (!S_ISLNK(st.st_mode))
		RAISE(err, ENGI_EINVALID, "task file '%s' is not a regular file", file);
	char *real = realpath(file, NULL), *rdir = realpath(dir, NULL);
	size_t dl = rdir ? strlen(rdir) : 0;
	int inside = real && rdir && !strncmp(real, rdir, dl) && real[dl] == '/';
	int regular = real && stat(real, &st) == 0 && S_ISREG(st.st_mode);
	free(real);
	free(rdir);
	if (!inside)
		RAISE(err, ENGI_EINVALID,
		      "task file '%s' is a symbolic link that leads outside the suite folder",
		      file);
	if (!regular)
		RAISE(err, ENGI_EINVALID,
		      "task file '%s' is a symbolic link to something other than a regular file",
		      file);
	return 0;
}

/* ---- the native source: a folder of *.json task files, or one ---- */

static int native_probe(const char *path)
{
	size_t n = strlen(path);
	if (fs_path_is_file(path))
		return n > 5 && !strcmp(path + n - 5, ".json") ? 10 : 0;
	if (!fs_path_is_dir(path))
		return 0;
	DIR *d = opendir(path);
	int found = 0;
	struct dirent *de;
	while (d && !found && (de = readdir(d)) != NULL) {
		size_t k = strlen(de->d_name);
		found = k >= 6 && !strcmp(de->d_name + k - 5, ".json") && de->d_name[0] != '.';
	}
	if (d)
		closedir(d);
	return found ? 10 : 0;
}

/* The kind of a loader message "FILE: /POINTER: what 'name' (detail)":
 * the pointer with its indices as *, what with quoted names as '…', no
 * detail; "FILE: line L column C: ..." is not valid JSON. */
static void native_category(const char *file, const char *msg, char *out, size_t n)
{
	size_t fl = strlen(file);
	const char *m = !strncmp(msg, file, fl) && !strncmp(msg + fl, ": ", 2) ? msg + fl + 2 : msg;
	if (!strncmp(m, "line ", 5)) {
		snprintf(out, n, "not valid JSON");
		return;
	}
	size_t o = 0;
	int in_ptr = m[0] == '/', quoted = 0;
	for (const char *p = m; *p && o + 4 < n; p++) {
		if (in_ptr && *p == ':')
			in_ptr = 0;
		if (in_ptr && *p == '/' && p[1] >= '0' && p[1] <= '9') {
			out[o++] = '/';
			out[o++] = '*';
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			continue;
		}
		if (!in_ptr && *p == '(' && p > m && p[-1] == ' ')
			break;
		if (!in_ptr && *p == '\'' && (quoted || p == m || p[-1] == ' ')) {
			if (!quoted)
				out[o++] = '\'', out[o++] = '.', out[o++] = '.';
			else
				out[o++] = '\'';
			quoted = !quoted;
			continue;
		}
		if (!quoted)
			out[o++] = *p;
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

static int native_load(struct suite *s, const char *path, int strict, struct engi_error *err)
{
	char **files = NULL;
	size_t nfiles = 0, alloc = 0;
	int rc = 0;
	if (fs_path_is_dir(path)) {
		DIR *d = opendir(path);
		if (!d) {
			suite_release(s);
			RAISE(err, ENGI_EIO, "cannot open suite folder '%s'", path);
		}
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name);
			if (n < 6 || strcmp(de->d_name + n - 5, ".json") || de->d_name[0] == '.')
				continue;
			if (nfiles == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				char **nf = engi_reallocarray(files, alloc, sizeof(*files));
				if (!nf) {
					rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
					break;
				}
				files = nf;
			}
			char buf[PATH_MAX];
			snprintf(buf, sizeof(buf), "%s/%s", path, de->d_name);
			struct engi_error ce;
			engi_error_init(&ce);
			if (check_task_entry(path, buf, &ce) < 0) {
				if (strict) {
					rc = engi_raise(err, ce.code, "%s", ce.msg);
					break;
				}
				rc = suite_refuse(s, buf, ce.code, "not a regular file", ce.msg);
				if (rc < 0) {
					engi_raise(err, rc, "out of memory");
					break;
				}
				continue;
			}
			files[nfiles] = engi_strdup(buf);
			if (!files[nfiles]) {
				rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
				break;
			}
			nfiles++;
		}
		closedir(d);
		if (rc == 0 && nfiles == 0)
			rc = engi_raise(err, ENGI_ENOTFOUND,
					"suite folder '%s' has no *.json task files", path);
	} else if (fs_path_is_file(path)) {
		files = engi_malloc(sizeof(*files));
		if (!files || !(files[0] = engi_strdup(path)))
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		else
			nfiles = 1;
	} else {
		struct stat st;
		if (lstat(path, &st) == 0)
			rc = engi_raise(err, ENGI_EINVALID,
					"'%s' is neither a task file nor a suite folder (not a "
					"regular file)",
					path);
		else
			rc = engi_raise(err, ENGI_ENOTFOUND, "no task file or suite folder '%s'",
					path);
	}
	if (rc == 0)
		qsort(files, nfiles, sizeof(*files), cmp_str);
	for (size_t i = 0; rc == 0 && i < nfiles; i++) {
		struct engi_error e;
		engi_error_init(&e);
		rc = load_one(s, files[i], &e);
		if (rc == 0)
			continue;
		if (strict || rc == ENGI_ENOMEM) {
			engi_raise(err, rc, "%s", e.msg);
		} else {
			char cat[96];
			native_category(files[i], e.msg, cat, sizeof(cat));
			rc = suite_refuse(s, files[i], rc, cat, e.msg);
			if (rc < 0)
				engi_raise(err, rc, "out of memory");
		}
	}
	for (size_t i = 0; i < nfiles; i++)
		engi_free(files[i]);
	engi_free(files);
	return rc;
}

static const struct task_source_ops native_ops = {
    .probe = native_probe,
    .load = native_load,
};

const struct task_source task_source_native = {
    .name = "native",
    .summary = "engisweep's own task JSON: a folder of *.json task files, or one (tasks/SCHEMA.md)",
    .supports = "every field of tasks/SCHEMA.md; verifier kinds built in; references and "
		"flawed variants",
    .ops = &native_ops,
};
