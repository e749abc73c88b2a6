/*
 * Guest images: cache folder, recipe hash, build. See image.h.
 */
#include "image.h"

#include "engi/alloc.h"
#include "engi/sha256.h"
#include "child.h"
#include "fsutil.h"
#include "image_recipes.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const names[] = {"tiny", "tools", "desktop", NULL};

const char *const *image_names(void)
{
	return names;
}

static int known(const char *name)
{
	for (const char *const *n = names; *n; n++)
		if (!strcmp(*n, name))
			return 1;
	return 0;
}

int image_cache_dir(char *buf, size_t n, struct engi_error *err)
{
	const char *v = getenv("ENGISWEEP_IMAGES");
	int w;
	if (v && *v)
		w = snprintf(buf, n, "%s", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && *v)
		w = snprintf(buf, n, "%s/engisweep/images", v);
	else if ((v = getenv("HOME")) && *v)
		w = snprintf(buf, n, "%s/.cache/engisweep/images", v);
	else
		RAISE(err, ENGI_EINVALID,
		      "no image cache folder: set ENGISWEEP_IMAGES (or HOME or XDG_CACHE_HOME)");
	if (w < 0 || (size_t)w >= n)
		RAISE(err, ENGI_EINVALID, "image cache folder path is too long");
	if (buf[0] != '/')
		RAISE(err, ENGI_EINVALID, "image cache folder '%s' must be an absolute path", buf);
	return 0;
}

/* The hash covers every recipe file (names and bytes) and the image name:
 * the recipes share helpers, so any change gives every image a new folder. */
static void recipe_hash(const char *name, char hex[65])
{
	struct engi_sha256 s;
	engi_sha256_init(&s);
	engi_sha256_update(&s, name, strlen(name) + 1);
	for (const struct image_recipe_file *f = image_recipe_files; f->name; f++) {
		engi_sha256_update(&s, f->name, strlen(f->name) + 1);
		uint64_t len = f->len;
		engi_sha256_update(&s, &len, sizeof(len));
		engi_sha256_update(&s, f->data, f->len);
	}
	unsigned char d[32];
	engi_sha256_final(&s, d);
	engi_sha256_hex(d, hex);
}

int image_dir(const char *name, char *buf, size_t n, char *hash, struct engi_error *err)
{
	if (!known(name))
		RAISE(err, ENGI_ENOTFOUND, "unknown image '%s' (known: tiny, tools, desktop)",
		      name);
	char cache[PATH_MAX], hex[65];
	TRY(image_cache_dir(cache, sizeof(cache), err));
	recipe_hash(name, hex);
	if (hash)
		memcpy(hash, hex, 65);
	int w = snprintf(buf, n, "%s/%s-%.16s", cache, name, hex);
	if (w < 0 || (size_t)w >= n)
		RAISE(err, ENGI_EINVALID, "image folder path is too long");
	return 0;
}

static int complete(const char *dir)
{
	static const char *const need[] = {"vmlinuz", "initrd.img", "disk.qcow2", "image.json",
					   NULL};
	char p[PATH_MAX];
	for (const char *const *f = need; *f; f++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *f);
		if (!fs_path_is_file(p))
			return 0;
	}
	return 1;
}

int image_find(const char *name, char *buf, size_t n, struct engi_error *err)
{
	TRY(image_dir(name, buf, n, NULL, err));
	if (!complete(buf))
		RAISE(err, ENGI_ENOTFOUND,
		      "image '%s' is not built (expected in '%s'): run `engisweep image build %s`",
		      name, buf, name);
	return 0;
}

static int write_recipes(const char *dir, struct engi_error *err)
{
	char p[PATH_MAX];
	for (const struct image_recipe_file *f = image_recipe_files; f->name; f++) {
		snprintf(p, sizeof(p), "%s/%s", dir, f->name);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		if (fd < 0)
			RAISE(err, ENGI_EIO, "cannot write recipe '%s': %s", p, strerror(errno));
		int rc = fs_write_all_fd(fd, f->data, f->len);
		if (close(fd) < 0 || rc < 0)
			RAISE(err, ENGI_EIO, "cannot write recipe '%s': %s", p, strerror(errno));
	}
	return 0;
}

/* Runs /bin/sh recipe outdir with its output on log; answers its status. */
static int run_recipe(const char *recipe, const char *outdir, const char *downloads, FILE *log,
		      struct engi_error *err)
{
	fflush(log);
	int logfd = fileno(log);
	char envdl[PATH_MAX + 32];
	snprintf(envdl, sizeof(envdl), "ENGI_IMAGE_DOWNLOADS=%s", downloads);
	char *const argv[] = {"sh", (char *)recipe, (char *)outdir, NULL};
	char *const add_env[] = {envdl, "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", NULL};
	struct spawn_opts so = {.path = "/bin/sh",
				.argv = argv,
				.add_env = add_env,
				.out_fd = logfd,
				.cwd_fd = -1,
				.group = SPAWN_GROUP};
	pid_t pid = child_spawn(&so, err);
	if (pid < 0)
		return (int)pid;
	int status;
	if (child_wait(pid, &status) < 0)
		RAISE(err, ENGI_EIO, "waiting for the image recipe: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		RAISE(err, ENGI_EIO, "image recipe '%s' failed (%s %d); its output is above",
		      strrchr(recipe, '/') + 1, WIFEXITED(status) ? "exit" : "signal",
		      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}

static int check_output(const char *dir, struct engi_error *err)
{
	if (!complete(dir))
		RAISE(err, ENGI_EIO,
		      "image recipe left '%s' without vmlinuz, initrd.img, disk.qcow2 "
		      "and image.json",
		      dir);
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/image.json", dir);
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	int ok = j && json_is_string(json_object_get(j, "append")) &&
		 json_is_integer(json_object_get(j, "memory_mb"));
	json_decref(j);
	if (!ok)
		RAISE(err, ENGI_EPARSE,
		      "'%s': expected an object with \"append\" (string) and "
		      "\"memory_mb\" (integer)",
		      p);
	return 0;
}

int image_build(const char *name, int force, FILE *log, struct engi_error *err)
{
	char dir[PATH_MAX], hash[65], cache[PATH_MAX];
	TRY(image_dir(name, dir, sizeof(dir), hash, err));
	TRY(image_cache_dir(cache, sizeof(cache), err));
	TRY(fs_mkdir_p(cache, 0755, err));
	char p[PATH_MAX];
	/* one build at a time per cache: the recipes share the downloads */
	snprintf(p, sizeof(p), "%s/build.lock", cache);
	int lock = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0)
		RAISE(err, ENGI_EIO, "cannot open lock file '%s': %s", p, strerror(errno));
	if (flock(lock, LOCK_EX | LOCK_NB) < 0) {
		fprintf(log, "image %s: waiting for another image build to finish\n", name);
		if (flock(lock, LOCK_EX) < 0) {
			close(lock);
			RAISE(err, ENGI_EIO, "cannot lock '%s': %s", p, strerror(errno));
		}
	}
	int rc = 0;
	if (complete(dir) && !force) {
		fprintf(log, "image %s: up to date in %s\n", name, dir);
		goto out;
	}
	char recipes[PATH_MAX], tmp[PATH_MAX], downloads[PATH_MAX], recipe[PATH_MAX];
	snprintf(recipes, sizeof(recipes), "%s/.recipes-XXXXXX", cache);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
	snprintf(downloads, sizeof(downloads), "%s/downloads", cache);
	if (!mkdtemp(recipes)) {
		rc = engi_raise(err, ENGI_EIO, "cannot create a folder in '%s': %s", cache,
				strerror(errno));
		goto out;
	}
	snprintf(recipe, sizeof(recipe), "%s/%s.sh", recipes, name);
	double t0 = clk_now_mono();
	fprintf(log, "image %s: building from recipe %.16s into %s\n", name, hash, dir);
	if ((rc = write_recipes(recipes, err)) == 0 &&
	    (rc = fs_mkdir_p(downloads, 0755, err)) == 0 && (rc = fs_rm_rf(tmp, err)) == 0 &&
	    (rc = fs_mkdir_p(tmp, 0755, err)) == 0 &&
	    (rc = run_recipe(recipe, tmp, downloads, log, err)) == 0 &&
	    (rc = check_output(tmp, err)) == 0 && (rc = fs_rm_rf(dir, err)) == 0) {
		if (rename(tmp, dir) < 0)
			rc = engi_raise(err, ENGI_EIO, "cannot rename '%s' to '%s': %s", tmp, dir,
					strerror(errno));
	}
	fs_rm_rf(recipes, NULL);
	if (rc < 0) {
		fs_rm_rf(tmp, NULL);
		engi_error_prefix(err, "image %s", name);
	} else {
		fprintf(log, "image %s: built in %.0f s\n", name, clk_now_mono() - t0);
	}
out:
	close(lock);
	return rc;
}
