/*
 * The podman backend: one container per episode, of an image podman has
 * locally (a task's environment.image names it: podman's short name, e.g.
 * `podman tag ghcr.io/org/task:1 cadbench-task` then "cadbench-task"), for
 * clusters and machines that run containers rather than VMs.
 *
 * The container runs `/bin/sh` keeping itself alive (the image needs a
 * POSIX shell), with podman's default capabilities (those Docker gives,
 * which Harbor's tasks run with), no new privileges, a PID limit, the task's CPUs and memory where
 * podman can limit them, and no network unless the task asks for one. Its working folder (the
 * task's workdir, default /work) and the task's folders are made when it starts. Commands run as
 * `podman exec` of `/bin/sh -c COMMAND` there, with PATH, HOME, LANG and TERM and nothing of our
 * environment; files go in and out with `podman cp` through a scratch file in the episode's
 * work_root, a deliverable checked first in the container to be a regular
 * file (no link) within its cap. backend_stop removes the container, which
 * ends every process the episode started.
 *
 * A command past its time limit: its podman client is killed, then the
 * command's shell in the container (its pid written by the wrapper);
 * processes it left in the background run on until the episode ends.
 *
 * Availability. Whether podman can start containers here is probed once,
 * with the task's image: as podman is configured, then, where that fails
 * (containers in containers: no cgroup controllers to delegate, rlimits
 * that cannot be raised), with a configuration of our own (the runc
 * runtime, cgroupfs, no default ulimits; then no CPU or memory limit) in
 * CONTAINERS_CONF. Neither working, or no podman (ENGI_PODMAN names the
 * program; default `podman` in PATH), refuses the sweep before it starts
 * with the reason. An image podman does not have locally is refused by
 * name: engisweep never pulls.
 */
#include "backend.h"

#include "engi/alloc.h"
#include "engi/json.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "fsutil.h"

#define PODMAN_WORKDIR	"/work"
#define PODMAN_PROBE_S	120.0
#define PODMAN_START_S	120.0
#define PODMAN_OP_S	120.0
#define PODMAN_PIDS_MAX "4096"

struct podman_env {
	char name[128];		/* the container's */
	char scratch[PATH_MAX]; /* work_root: scratch files of put and get */
	char workdir[ENV_PATH_MAX + 1];
	struct backend_folders folders;
	int started;
	unsigned long seq; /* scratch and pid file names */
};

static struct {
	pthread_once_t once;
	char podman[PATH_MAX];
	char why[512];
	int found;
	pthread_mutex_t lock;
	int mode;	     /* 0 not probed, 1 podman as configured, 2 ours, 3 ours
			      * without limits, -1 none works */
	char conf[PATH_MAX]; /* our CONTAINERS_CONF */
	char confenv[PATH_MAX + 32];
} pm = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static void find_podman(void)
{
	const char *name = getenv("ENGI_PODMAN");
	if (!name || !name[0])
		name = "podman";
	if (strchr(name, '/')) {
		snprintf(pm.podman, sizeof(pm.podman), "%s", name);
		pm.found = access(name, X_OK) == 0;
	} else {
		pm.found = child_find_program(name, pm.podman, sizeof(pm.podman)) == 0;
	}
	if (!pm.found)
		snprintf(pm.why, sizeof(pm.why),
			 "no podman program '%s' (ENGI_PODMAN names it; Debian: apt-get install "
			 "podman runc)",
			 name);
}

/* Runs podman with args (NULL-terminated, without the program name) under
 * o, with the global options the probed mode needs. */
static int podman_call(char *const *args, const struct exec_opts *o, struct exec_result *r,
		       struct engi_error *err)
{
	char *argv[48];
	size_t n = 0;
	argv[n++] = "podman";
	if (pm.mode >= 2) {
		argv[n++] = "--runtime";
		argv[n++] = "runc";
		argv[n++] = "--cgroup-manager";
		argv[n++] = "cgroupfs";
	}
	for (size_t i = 0; args[i] && n + 1 < sizeof(argv) / sizeof(*argv); i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	char *const add[] = {pm.mode >= 2 ? pm.confenv : NULL, NULL};
	struct spawn_opts so = {.path = pm.podman, .argv = argv, .cwd_fd = -1};
	if (pm.mode >= 2)
		so.add_env = add;
	memset(r, 0, sizeof(*r));
	return backend_run_captured(&so, o, r, err);
}

/* podman_call with a time limit and an output cap. */
static int podman_run(char *const *args, double timeout_s, size_t cap, struct exec_result *r,
		      struct engi_error *err)
{
	struct exec_opts o = {.timeout_s = timeout_s, .out_cap = cap};
	return podman_call(args, &o, r, err);
}

/* The last line of a command's output, for a message. */
static void last_line(const struct exec_result *r, char *buf, size_t n)
{
	size_t e = r->out_len;
	while (e > 0 && (r->out[e - 1] == '\n' || r->out[e - 1] == ' '))
		e--;
	size_t b = e;
	while (b > 0 && r->out[b - 1] != '\n')
		b--;
	size_t k = e - b < n - 1 ? e - b : n - 1;
	for (size_t i = 0; i < k; i++)
		buf[i] = (unsigned char)r->out[b + i] < 0x20 ? '?' : r->out[b + i];
	buf[k] = '\0';
}

/* A throwaway container of image under the current mode: does it run? */
static int probe_once(const char *image, char *why, size_t n)
{
	char *args[] = {"run",	   "--rm",	  "--network", "none",	 "--entrypoint",
			"/bin/sh", (char *)image, "-c",	       "exit 0", NULL};
	struct exec_result r;
	struct engi_error e;
	engi_error_init(&e);
	int rc = podman_run(args, PODMAN_PROBE_S, 8192, &r, &e);
	int ok = rc == 0 && r.exit_code == 0;
	if (!ok) {
		char line[256] = "";
		if (rc == 0)
			last_line(&r, line, sizeof(line));
		snprintf(why, n, "%s", rc < 0 ? e.msg : r.timed_out ? "it timed out" : line);
	}
	backend_exec_result_release(&r);
	return ok;
}

static void remove_conf(void)
{
	if (pm.conf[0])
		unlink(pm.conf);
}

static int write_conf(int limits)
{
	const char *base = getenv("TMPDIR");
	if (!pm.conf[0]) {
		atexit(remove_conf);
		snprintf(pm.conf, sizeof(pm.conf), "%s/engisweep-podman-%d.conf",
			 base && base[0] == '/' ? base : "/tmp", (int)getpid());
		snprintf(pm.confenv, sizeof(pm.confenv), "CONTAINERS_CONF=%s", pm.conf);
	}
	char text[256];
	snprintf(text, sizeof(text), "[containers]\ndefault_ulimits = []\n%s",
		 limits ? "" : "cgroups = \"disabled\"\n");
	struct engi_error e;
	engi_error_init(&e);
	return fs_write_file_atomic(pm.conf, text, strlen(text), &e);
}

/* How podman runs containers here, probed once with image: pm.mode. */
static int podman_probe(const char *image, struct engi_error *err)
{
	pthread_once(&pm.once, find_podman);
	if (!pm.found)
		RAISE(err, ENGI_ENOTSUP, "the podman backend: %s", pm.why);
	pthread_mutex_lock(&pm.lock);
	if (pm.mode == 0) {
		char w1[256] = "", w2[256] = "";
		pm.mode = 1;
		if (!probe_once(image, w1, sizeof(w1))) {
			pm.mode = 2;
			if (write_conf(1) < 0 || !probe_once(image, w2, sizeof(w2))) {
				pm.mode = 3;
				if (write_conf(0) < 0 || !probe_once(image, w2, sizeof(w2))) {
					pm.mode = -1;
					snprintf(
					    pm.why, sizeof(pm.why),
					    "podman cannot start containers here (as configured: "
					    "%s; with runc and cgroupfs: %s)",
					    w1, w2);
				}
			}
		}
	}
	int mode = pm.mode;
	pthread_mutex_unlock(&pm.lock);
	if (mode < 0)
		RAISE(err, ENGI_ENOTSUP, "the podman backend: %s", pm.why);
	return 0;
}

static int image_present(const char *image, struct engi_error *err)
{
	if (!image || !strcmp(image, "host"))
		RAISE(err, ENGI_EINVALID,
		      "the podman backend runs a task in a container image it has locally: the "
		      "task names none (environment.image, or an images map)");
	pthread_once(&pm.once, find_podman);
	if (!pm.found)
		RAISE(err, ENGI_ENOTSUP, "the podman backend: %s", pm.why);
	char *args[] = {"image", "exists", (char *)image, NULL};
	struct exec_result r;
	TRY(podman_run(args, PODMAN_OP_S, 4096, &r, err));
	int code = r.exit_code;
	backend_exec_result_release(&r);
	if (code != 0)
		RAISE(err, ENGI_ENOTFOUND,
		      "podman has no image '%s' here (engisweep never pulls: podman pull, load or "
		      "build it, or podman tag an image with that name)",
		      image);
	return 0;
}

static int podman_prepare(const struct env_spec *spec, struct engi_error *err)
{
	TRY(image_present(spec->image, err));
	return podman_probe(spec->image, err);
}

/* A podman command on the episode's container that must succeed. */
static int must(struct podman_env *pe, char *const *args, double timeout_s, const char *what,
		struct engi_error *err)
{
	struct exec_result r;
	TRY(podman_run(args, timeout_s, 16384, &r, err));
	int ok = r.exit_code == 0;
	char line[256] = "";
	if (!ok)
		last_line(&r, line, sizeof(line));
	backend_exec_result_release(&r);
	if (!ok)
		RAISE(err, ENGI_EENV, "podman: cannot %s in container '%s': %s", what, pe->name,
		      line);
	return 0;
}

static int podman_start(struct backend_env *env, const struct env_spec *spec,
			struct engi_error *err)
{
	struct podman_env *pe = env->priv;
	TRY(podman_prepare(spec, err));
	TRY(backend_folders_copy(&pe->folders, spec, err));
	snprintf(pe->workdir, sizeof(pe->workdir), "%s",
		 spec->workdir ? spec->workdir : PODMAN_WORKDIR);
	snprintf(pe->scratch, sizeof(pe->scratch), "%s",
		 spec->work_root ? spec->work_root : "/tmp");
	TRY(fs_mkdir_p(pe->scratch, 0700, err));
	/* container names: [a-zA-Z0-9][a-zA-Z0-9_.-]* */
	char base[96];
	size_t k = 0;
	for (const char *c = spec->name ? spec->name : "episode"; *c && k + 1 < sizeof(base); c++)
		base[k++] = (char)(isalnum((unsigned char)*c) || *c == '.' || *c == '-' ? *c : '_');
	base[k] = '\0';
	snprintf(pe->name, sizeof(pe->name), "engisweep-%d-%s", (int)getpid(), base);
	char cpus[16], mem[24];
	snprintf(cpus, sizeof(cpus), "%d", spec->cpus > 0 ? spec->cpus : 1);
	snprintf(mem, sizeof(mem), "%dm", spec->memory_mb > 0 ? spec->memory_mb : 1024);
	/* the folders made, then the shell waits (a TERM ends it at once) */
	char keep[4 * ENV_PATH_MAX + BACKEND_FOLDERS_MAX * (BACKEND_FOLDER_MAX + 4)];
	size_t off = (size_t)snprintf(keep, sizeof(keep), "mkdir -p '%s'", pe->workdir);
	for (size_t i = 0; i < pe->folders.n && off < sizeof(keep); i++)
		off +=
		    (size_t)snprintf(keep + off, sizeof(keep) - off, " '%s'", pe->folders.path[i]);
	if (off < sizeof(keep))
		snprintf(keep + off, sizeof(keep) - off,
			 " && trap 'exit 0' TERM && while :; do sleep 3600 & wait $!; done");
	char *args[40];
	size_t n = 0;
	char *fixed[] = {"run",
			 "-d",
			 "--name",
			 pe->name,
			 "--hostname",
			 "sandbox",
			 "--security-opt",
			 "no-new-privileges",
			 "--network",
			 spec->network ? "slirp4netns" : "none",
			 NULL};
	for (size_t i = 0; fixed[i]; i++)
		args[n++] = fixed[i];
	if (pm.mode != 3) {
		args[n++] = "--pids-limit";
		args[n++] = PODMAN_PIDS_MAX;
		args[n++] = "--cpus";
		args[n++] = cpus;
		args[n++] = "--memory";
		args[n++] = mem;
	}
	char *tail[] = {"--entrypoint", "/bin/sh", (char *)spec->image, "-c", keep, NULL};
	for (size_t i = 0; tail[i]; i++)
		args[n++] = tail[i];
	args[n] = NULL;
	pe->started = 1; /* whatever happens now, stop removes the name */
	TRY(must(pe, args, PODMAN_START_S, "start it from its image", err));
	/* ready once the working folder exists */
	char *probe[] = {"exec",
			 pe->name,
			 "/bin/sh",
			 "-c",
			 "for i in 1 2 3 4 5 6 7 8 9 10; do test -d \"$1\" && exit 0; sleep 0.2; "
			 "done; exit 1",
			 "sh",
			 pe->workdir,
			 NULL};
	return must(pe, probe, PODMAN_OP_S, "make the working folder", err);
}

/* A path in the container: the working folder's, or absolute in a folder. */
static int guest_path(const struct podman_env *pe, const char *p, char *buf, size_t n,
		      struct engi_error *err)
{
	if (p[0] == '/') {
		const char *rest;
		TRY(backend_folders_find(&pe->folders, p, &rest, err));
		snprintf(buf, n, "%s", p);
		return 0;
	}
	TRY(fs_env_path_check(p, err));
	if (snprintf(buf, n, "%s/%s", pe->workdir, p) >= (int)n)
		RAISE(err, ENGI_EINVALID, "path '%s' is too long", p);
	return 0;
}

/* Whether the episode's container still runs. */
static int running(struct podman_env *pe)
{
	char *args[] = {"inspect", "-f", "{{.State.Running}}", pe->name, NULL};
	struct exec_result r;
	struct engi_error e;
	engi_error_init(&e);
	if (podman_run(args, PODMAN_OP_S, 1024, &r, &e) < 0)
		return 0;
	int up = r.exit_code == 0 && r.out_len >= 4 && !memcmp(r.out, "true", 4);
	backend_exec_result_release(&r);
	return up;
}

static int podman_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		       struct exec_result *r, struct engi_error *err)
{
	struct podman_env *pe = env->priv;
	char pidfile[64];
	snprintf(pidfile, sizeof(pidfile), "/tmp/.engisweep-exec-%lu", ++pe->seq);
	/* the wrapper notes its pid, then becomes the command's shell */
	char *args[24];
	size_t n = 0;
	args[n++] = "exec";
	if (o->detach)
		args[n++] = "-d";
	char *rest[] = {"--workdir",
			pe->workdir,
			"--env",
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"--env",
			"HOME=/root",
			"--env",
			"LANG=C",
			"--env",
			"TERM=dumb",
			pe->name,
			"/bin/sh",
			"-c",
			"echo $$ > \"$1\" 2>/dev/null; shift; exec /bin/sh -c \"$1\"",
			"sh",
			pidfile,
			(char *)command,
			NULL};
	for (size_t i = 0; rest[i]; i++)
		args[n++] = rest[i];
	args[n] = NULL;
	TRY(podman_call(args, o, r, err));
	if (r->timed_out || r->cancelled) {
		char *kill_args[] = {"exec",
				     pe->name,
				     "/bin/sh",
				     "-c",
				     "p=$(cat \"$1\" 2>/dev/null) && kill -9 \"$p\"",
				     "sh",
				     pidfile,
				     NULL};
		struct exec_result k;
		struct engi_error e;
		engi_error_init(&e);
		if (podman_run(kill_args, PODMAN_OP_S, 1024, &k, &e) == 0)
			backend_exec_result_release(&k);
	} else if (r->exit_code == 125 && !running(pe)) {
		/* podman's own failure: the container is gone, not the command's doing */
		char line[256] = "";
		last_line(r, line, sizeof(line));
		backend_exec_result_release(r);
		RAISE(err, ENGI_EENV, "podman: the container '%s' is gone: %s", pe->name, line);
	}
	return 0;
}

static int podman_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		      struct engi_error *err)
{
	struct podman_env *pe = env->priv;
	char gp[PATH_MAX], tmp[PATH_MAX + 64], dst[PATH_MAX + 160];
	TRY(guest_path(pe, env_path, gp, sizeof(gp), err));
	snprintf(tmp, sizeof(tmp), "%s/.podman-put-%lu", pe->scratch, ++pe->seq);
	TRY(fs_write_file_atomic(tmp, data, len, err));
	char *mk[] = {"exec",
		      pe->name,
		      "/bin/sh",
		      "-c",
		      "mkdir -p -- \"$(dirname -- \"$1\")\" && ! test -L \"$1\"",
		      "sh",
		      gp,
		      NULL};
	int rc = must(pe, mk, PODMAN_OP_S, "make the folder of a file", err);
	snprintf(dst, sizeof(dst), "%s:%s", pe->name, gp);
	char *cp[] = {"cp", tmp, dst, NULL};
	if (rc == 0)
		rc = must(pe, cp, PODMAN_OP_S, "copy a file in", err);
	unlink(tmp);
	if (rc == ENGI_EENV && running(pe)) {
		/* the container is fine: the path was in the way (a link) */
		rc = ENGI_EIO;
		if (err)
			err->code = rc;
	}
	return rc;
}

static int podman_get(struct backend_env *env, const char *env_path, const char *host_path,
		      uint64_t max_bytes, uint64_t *bytes, struct engi_error *err)
{
	struct podman_env *pe = env->priv;
	char gp[PATH_MAX], tmp[PATH_MAX + 64], src[PATH_MAX + 160];
	TRY(guest_path(pe, env_path, gp, sizeof(gp), err));
	/* a regular file, not a link, within its cap, before anything is copied */
	char cap[32];
	snprintf(cap, sizeof(cap), "%llu", (unsigned long long)max_bytes);
	char *chk[] = {"exec",
		       pe->name,
		       "/bin/sh",
		       "-c",
		       "test -L \"$1\" && { echo link; exit 0; }; test -f \"$1\" || { echo "
		       "missing; exit 0; }; s=$(wc -c < \"$1\") && echo \"size $s\"",
		       "sh",
		       gp,
		       NULL};
	struct exec_result r;
	TRY(podman_run(chk, PODMAN_OP_S, 1024, &r, err));
	char line[256] = "";
	last_line(&r, line, sizeof(line));
	int code = r.exit_code;
	backend_exec_result_release(&r);
	if (code != 0)
		RAISE(err, ENGI_EENV, "podman: cannot look at '%s' in container '%s': %s", env_path,
		      pe->name, line);
	if (!strcmp(line, "link"))
		RAISE(err, ENGI_EIO, "cannot open '%s': it is a symbolic link", env_path);
	if (strncmp(line, "size ", 5))
		RAISE(err, ENGI_EIO, "cannot open '%s': no such regular file", env_path);
	unsigned long long size = strtoull(line + 5, NULL, 10);
	if (size > max_bytes)
		RAISE(err, ENGI_ETOOBIG, "'%s' is %llu bytes, over its cap of %llu", env_path, size,
		      (unsigned long long)max_bytes);
	snprintf(tmp, sizeof(tmp), "%s/.podman-get-%lu", pe->scratch, ++pe->seq);
	snprintf(src, sizeof(src), "%s:%s", pe->name, gp);
	char *cp[] = {"cp", src, tmp, NULL};
	int rc = must(pe, cp, PODMAN_OP_S, "copy a file out", err);
	if (rc == 0)
		rc = fs_copy_file_capped(tmp, host_path, max_bytes, bytes, err);
	fs_rm_rf(tmp, NULL);
	return rc;
}

static void podman_stop(struct backend_env *env)
{
	struct podman_env *pe = env->priv;
	if (!pe->started)
		return;
	char *args[] = {"rm", "-f", "-t", "0", pe->name, NULL};
	struct exec_result r;
	struct engi_error e;
	engi_error_init(&e);
	if (podman_run(args, PODMAN_OP_S, 4096, &r, &e) == 0)
		backend_exec_result_release(&r);
	pe->started = 0;
}

static const struct backend_ops podman_ops = {
    .start = podman_start,
    .prepare = podman_prepare,
    .exec = podman_exec,
    .put = podman_put,
    .get = podman_get,
    .stop = podman_stop,
};

const struct backend_desc backend_podman = {
    .name = "podman",
    .summary = "a container of a local podman image per episode",
    .caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES | BACKEND_CAP_WORKDIR | BACKEND_CAP_FOLDERS |
	    BACKEND_CAP_DETACH,
    .priv_size = sizeof(struct podman_env),
    .ops = &podman_ops,
};
