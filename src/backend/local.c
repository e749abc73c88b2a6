/*
 * The local backend: a private work folder on the host per episode. Commands
 * run as `sh -c` in that folder, in their own process group, with a minimal
 * environment (no variables of ours leak in, API keys included), stdin from
 * /dev/null and a time limit; the whole group is killed when a command ends,
 * times out or is cancelled. File names from the environment are resolved
 * one component at a time with O_NOFOLLOW, so a link planted by the agent
 * cannot make us read or write outside the folder. It isolates nothing else:
 * use it for development, trusted agents, and clusters without VMs.
 */
#include "backend.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "fsutil.h"

struct local_env {
	char dir[PATH_MAX];
	int dirfd;
};

static int local_start(struct backend_env *env, const struct env_spec *spec,
		       struct engi_error *err)
{
	struct local_env *le = env->priv;
	le->dirfd = -1;
	if (snprintf(le->dir, sizeof(le->dir), "%s/%s", spec->work_root, spec->name) >=
	    (int)sizeof(le->dir))
		RAISE(err, ENGI_EINVALID, "work folder name too long under '%s'", spec->work_root);
	TRY(mkdir_p(spec->work_root, 0700, err));
	TRY(rm_rf(le->dir, err));
	if (mkdir(le->dir, 0700) < 0)
		RAISE(err, ENGI_EENV, "cannot create work folder '%s': %s", le->dir, strerror(errno));
	le->dirfd = open(le->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (le->dirfd < 0)
		RAISE(err, ENGI_EENV, "cannot open work folder '%s': %s", le->dir, strerror(errno));
	return 0;
}

static void local_stop(struct backend_env *env)
{
	struct local_env *le = env->priv;
	if (le->dirfd >= 0)
		close(le->dirfd);
	le->dirfd = -1;
	if (le->dir[0])
		rm_rf(le->dir, NULL);
}

/* Opens rel beneath dirfd without following any link; creates parent
 * folders when flags has O_CREAT. */
static int open_beneath(int dirfd, const char *rel, int flags, struct engi_error *err)
{
	TRY(env_path_check(rel, err));
	char buf[ENV_PATH_MAX + 1];
	snprintf(buf, sizeof(buf), "%s", rel);
	int fd = dup(dirfd);
	if (fd < 0)
		RAISE(err, ENGI_EENV, "cannot open work folder: %s", strerror(errno));
	char *comp = buf;
	for (;;) {
		char *slash = strchr(comp, '/');
		if (!slash)
			break;
		*slash = '\0';
		if ((flags & O_CREAT) && mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			close(fd);
			RAISE(err, ENGI_EIO, "cannot create folder '%s' for '%s': %s", comp, rel, strerror(e));
		}
		int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			RAISE(err, ENGI_EIO, "cannot open folder '%s' of '%s': %s", comp, rel,
			      e == ELOOP || e == ENOTDIR ? "not a plain folder (a link?)" : strerror(e));
		fd = next;
		comp = slash + 1;
	}
	int f = openat(fd, comp, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	int e = errno;
	close(fd);
	if (f < 0)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", rel,
		      e == ELOOP ? "it is a symbolic link" : strerror(e));
	return f;
}

static int local_put(struct backend_env *env, const void *data, size_t len,
		     const char *env_path, struct engi_error *err)
{
	struct local_env *le = env->priv;
	int fd = open_beneath(le->dirfd, env_path, O_WRONLY | O_CREAT | O_TRUNC, err);
	if (fd < 0)
		return fd;
	int rc = 0;
	if (write_all_fd(fd, data, len) < 0)
		rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", env_path, strerror(errno));
	close(fd);
	return rc;
}

static int local_get(struct backend_env *env, const char *env_path,
		     const char *host_path, uint64_t max_bytes, uint64_t *bytes,
		     struct engi_error *err)
{
	struct local_env *le = env->priv;
	int in = open_beneath(le->dirfd, env_path, O_RDONLY, err);
	if (in < 0)
		return in;
	int rc = copy_fd_capped(in, env_path, host_path, max_bytes, bytes, err);
	close(in);
	return rc;
}

static void kill_group(pid_t pgid)
{
	if (pgid > 0)
		kill(-pgid, SIGKILL);
}

static int local_exec(struct backend_env *env, const char *command,
		      const struct exec_opts *o, struct exec_result *r,
		      struct engi_error *err)
{
	struct local_env *le = env->priv;
	/* Everything the child needs is built before fork: between fork and
	 * exec only async-signal-safe calls are allowed in a threaded process. */
	char home[PATH_MAX + 8], tmpdir[PATH_MAX + 16];
	snprintf(home, sizeof(home), "HOME=%s", le->dir);
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", le->dir);
	char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home, tmpdir,
			      "LANG=C", "LC_ALL=C", "TERM=dumb", NULL};
	char *const argv[] = {"sh", "-c", (char *)command, NULL};
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		RAISE(err, ENGI_EENV, "cannot create a pipe: %s", strerror(errno));
	double t0 = now_mono();
	struct spawn_opts so = {.path = "/bin/sh", .argv = argv, .envp = envp, .out_fd = pfd[1],
				.cwd_fd = le->dirfd, .group = SPAWN_GROUP};
	pid_t pid = spawn_child(&so, err);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return (int)pid;
	}

	struct engi_dynbuf out;
	engi_dynbuf_init(&out, o->out_cap);
	int status = 0, exited = 0, eof = 0;
	double exited_at = 0;
	char buf[16384];
	while (!eof || !exited) {
		double now = now_mono();
		if (!exited && now - t0 > o->timeout_s) {
			r->timed_out = 1;
			kill_group(pid);
		}
		if (!exited && o->cancel && o->cancel(o->cancel_ctx)) {
			r->cancelled = 1;
			kill_group(pid);
		}
		/* the shell is gone but something it started holds the pipe */
		if (exited && !eof && now - exited_at > 0.2) {
			kill_group(pid);
			break;
		}
		if (!eof) {
			struct pollfd p = {.fd = pfd[0], .events = POLLIN};
			int pr = poll(&p, 1, 20);
			if (pr > 0) {
				ssize_t n = read(pfd[0], buf, sizeof(buf));
				if (n > 0) {
					r->out_total += (uint64_t)n;
					size_t room = out.cap - out.len;
					size_t keep = (size_t)n < room ? (size_t)n : room;
					if (keep && engi_dynbuf_add(&out, buf, keep) < 0) {
						/* out of memory: stop keeping output */
						out.cap = out.len;
					}
				} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
					eof = 1;
				}
			}
		} else {
			struct timespec ts = {0, 5 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				exited = 1;
				exited_at = now_mono();
			}
		}
	}
	close(pfd[0]);
	kill_group(pid); /* nothing the command started outlives it */
	r->wall_s = now_mono() - t0;
	if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	} else {
		r->exit_code = -1;
		r->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	r->out = engi_dynbuf_take(&out, &r->out_len);
	if (!r->out)
		RAISE(err, ENGI_ENOMEM, "out of memory keeping command output");
	return 0;
}

static const struct backend_ops local_ops = {
	.start = local_start,
	.exec = local_exec,
	.put = local_put,
	.get = local_get,
	.stop = local_stop,
};

const struct backend_desc backend_local = {
	.name = "local",
	.summary = "a private work folder on the host per episode (no isolation)",
	.caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES,
	.priv_size = sizeof(struct local_env),
	.ops = &local_ops,
};
