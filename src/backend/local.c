/*
 * The local backend: a private work folder on the host per episode, every
 * command run in a bubblewrap sandbox over it.
 *
 * Folders. Each process makes one private folder (mkdtemp, mode 0700)
 * under $TMPDIR (else /tmp; on clusters usually node-local scratch), never
 * under the results folder, holds a lock on its .lock for its life and
 * removes it at exit; the folders of processes that died without removing
 * theirs (nobody holds the lock) are removed when the next one starts. Each
 * episode gets a folder in it, ep-XXXXXX: ep/work is the work folder,
 * ep/tmp the episode's /tmp, ep/f0, ep/f1, ... the task's own folders
 * (environment.folders, such as /logs); all go when the episode stops.
 * Files are copied in and out here on the host, resolved one component at
 * a time with O_NOFOLLOW beneath the work folder (or, for an absolute path
 * inside one of the task's folders, beneath that folder), so a link
 * planted by the agent cannot make us read or write outside them;
 * deliverables keep their size caps (fs_copy_fd_capped).
 *
 * Sandbox. Every command runs as `bwrap ... -- /bin/sh -c COMMAND` with
 *  - new mount, PID, IPC, UTS, network, cgroup and (where it can) user
 *    namespaces (--unshare-all; --share-net only for a task that asks for a
 *    network), every capability dropped, a session of its own (no TIOCSTI
 *    into our terminal), --die-with-parent;
 *  - a file system grown from an empty root that is read-only once set up:
 *    the system folders /usr /etc /opt and /bin /sbin /lib* bound read-only
 *    (or the same links to usr/ on a merged-/usr system), a fresh /proc of
 *    the PID namespace, a minimal /dev, the work folder at /work (the cwd,
 *    the path the qemu guests use too; or at the task's workdir), root/tmp
 *    at /tmp and each of the task's folders at its guest path: the only
 *    writable places besides the sandbox's own /dev;
 *  - a minimal environment (PATH, HOME=/work, TMPDIR=/tmp, LANG, LC_ALL,
 *    TERM), given to bwrap itself, so that /proc/1/environ, the namespace's
 *    init (bwrap) and the shell's parent, holds no variable of ours either.
 * Why a list of system folders rather than / read-only with tmpfs over the
 * sensitive places: what is not named is absent by construction, wherever
 * the user keeps results, suites, homes, scratch and sockets (/work, /home,
 * /scratch, /run/munge, ...), whereas a list of places to cover fails open
 * on each place it forgot. The one gap, something sensitive kept inside a
 * system folder (a suite installed under /usr/share, results under /opt,
 * $TMPDIR under /var), is closed by masking: the sweep names its results
 * folder, suite, task folders and models file (backend_local_hide), this
 * file adds $TMPDIR, and each of those that lies under a bound folder gets
 * an empty tmpfs (a folder) or /dev/null (a file) over it, as do the host
 * secrets root could otherwise read (/etc/shadow, /etc/gshadow, /etc/ssh,
 * /etc/munge).
 *
 * Processes. The shell runs in a new PID namespace whose init is bwrap;
 * when the shell exits, init exits and the kernel kills all that is left
 * in the namespace, whatever setsid, nohup or double forks did. bwrap runs
 * in a process group of its own: a time limit or a cancel kills it, and
 * --die-with-parent takes the namespace with it (as it does if we die).
 * A command killed by a signal inside reports exit code 128 + the signal.
 *
 * Availability. The sandbox is probed once, with a real sandboxed command.
 * bwrap missing (ENGI_BWRAP names the program; default `bwrap` in PATH) or
 * failing (a container without user namespaces) makes it unavailable;
 * then commands run unsandboxed, as `sh -c` in the work folder in a
 * process group of its own that is killed when the command ends (setsid
 * escapes that, and the whole host is in reach), and only where the sweep
 * allowed it (backend_local_allow_unsandboxed: trusted agents only, or
 * --unsafe-local); otherwise an episode fails to start.
 */
#include "backend.h"

#include "engi/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "fsutil.h"

#define SANDBOX_WORKDIR	 "/work"
#define SANDBOX_PROBE_S	 30.0
#define SANDBOX_MASK_MAX 64

struct local_env {
	char root[PATH_MAX]; /* the episode's private folder */
	char dir[PATH_MAX];  /* root/work: the work folder */
	char tmp[PATH_MAX];  /* root/tmp: its /tmp */
	int dirfd;
	int network;
	int sandboxed;
	/* where the work folder appears in the sandbox: /work, or the task's
	 * own working folder (a guest path such as /home/user/Desktop) */
	char workdir[ENV_PATH_MAX + 1];
	/* the task's folders (guest paths) and root/fN, bound at each */
	struct backend_folders folders;
	char fhost[BACKEND_FOLDERS_MAX][PATH_MAX];
};

/* Shown read-only in the sandbox, when they exist. */
static const char *const system_dirs[] = {"/usr",   "/bin",    "/sbin", "/lib", "/lib32",
					  "/lib64", "/libx32", "/etc",	"/opt", NULL};
/* Covered even though they lie in a system folder. */
static const char *const host_secrets[] = {
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/munge", NULL};

#define NSYSTEM (sizeof(system_dirs) / sizeof(system_dirs[0]) - 1)

static struct {
	pthread_once_t once;
	pthread_mutex_t lock; /* mask, nmask */
	int ok;
	int allow_unsandboxed;
	char procdir[PATH_MAX]; /* this process's folder of episode folders */
	char procerr[512];	/* why there is none */
	char bwrap[PATH_MAX];
	char why[512];
	/* each system folder: bound (its real path in real) or a link */
	struct {
		int kind; /* 0 absent, 1 bound, 2 link */
		char real[PATH_MAX];
		char link[PATH_MAX];
	} sys[NSYSTEM];
	/* host paths under a bound folder, and where they appear inside */
	struct {
		char host[PATH_MAX];
		char dest[PATH_MAX];
	} mask[SANDBOX_MASK_MAX];
	size_t nmask;
} sb = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static const char *tmp_base(void)
{
	const char *base = getenv("TMPDIR");
	return base && base[0] == '/' ? base : "/tmp";
}

/* Removes the folders of local backends that died without removing them
 * (killed, crashed): a live one holds the lock on its folder's .lock. A
 * folder without .lock is one being made, or not ours: left alone. */
static void remove_stale(const char *base)
{
	DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char path[PATH_MAX], lock[PATH_MAX + 8];
		struct stat st;
		if (strncmp(de->d_name, "engisweep-local-", 16) ||
		    snprintf(path, sizeof(path), "%s/%s", base, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		snprintf(lock, sizeof(lock), "%s/.lock", path);
		int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			fs_rm_rf(path, NULL);
		close(fd);
	}
	closedir(d);
}

static void remove_procdir(void)
{
	if (sb.procdir[0])
		fs_rm_rf(sb.procdir, NULL);
}

/* This process's folder under $TMPDIR (0700), locked for its life (the
 * lock file is locked before it takes its name, so no scan sees it
 * unlocked) and removed at exit; stale ones of dead processes go first. */
static void make_procdir(void)
{
	const char *base = tmp_base();
	remove_stale(base);
	char dir[PATH_MAX], tmp[PATH_MAX + 16], lock[PATH_MAX + 8];
	if (snprintf(dir, sizeof(dir), "%s/engisweep-local-XXXXXX", base) >=
	    (int)sizeof(dir) - 64) {
		snprintf(sb.procerr, sizeof(sb.procerr), "TMPDIR '%s' is too long for work folders",
			 base);
		return;
	}
	if (!mkdtemp(dir)) {
		snprintf(sb.procerr, sizeof(sb.procerr),
			 "cannot create a private folder under '%s' (TMPDIR): %s", base,
			 strerror(errno));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s/.lock-new", dir);
	snprintf(lock, sizeof(lock), "%s/.lock", dir);
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0 || rename(tmp, lock) < 0) {
		snprintf(sb.procerr, sizeof(sb.procerr), "cannot lock '%s': %s", lock,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		fs_rm_rf(dir, NULL);
		return;
	}
	/* fd stays open, holding the lock, until we exit */
	snprintf(sb.procdir, sizeof(sb.procdir), "%s", dir);
	atexit(remove_procdir);
}

/* The episode's folders in this process's folder: root (0700), root/work
 * (open as le->dirfd), root/tmp; on failure nothing is left. */
static int make_private_root(struct local_env *le, struct engi_error *err)
{
	le->root[0] = '\0';
	if (!sb.procdir[0])
		RAISE(err, ENGI_EENV, "%s", sb.procerr);
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/ep-XXXXXX", sb.procdir);
	if (!mkdtemp(root))
		RAISE(err, ENGI_EENV, "cannot create a work folder in '%s': %s", sb.procdir,
		      strerror(errno));
	snprintf(le->root, sizeof(le->root), "%s", root);
	snprintf(le->dir, sizeof(le->dir), "%s/work", root);
	snprintf(le->tmp, sizeof(le->tmp), "%s/tmp", root);
	if (mkdir(le->dir, 0700) < 0 || mkdir(le->tmp, 0700) < 0 ||
	    (le->dirfd = open(le->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		int e = errno;
		fs_rm_rf(root, NULL);
		le->root[0] = '\0';
		RAISE(err, ENGI_EENV, "cannot create work folders in '%s': %s", root, strerror(e));
	}
	return 0;
}

/* root/fN for each of the task's folders (0700, like work and tmp). */
static int make_folders(struct local_env *le, struct engi_error *err)
{
	for (size_t i = 0; i < le->folders.n; i++) {
		snprintf(le->fhost[i], sizeof(le->fhost[i]), "%s/f%zu", le->root, i);
		if (mkdir(le->fhost[i], 0700) < 0)
			RAISE(err, ENGI_EENV, "cannot create the folder for '%s' in '%s': %s",
			      le->folders.path[i], le->root, strerror(errno));
	}
	return 0;
}

/* Where host path p (absolute, links resolved) appears in the sandbox:
 * under the system folder bound from a real path it lies in, or NULL. */
static const char *mask_dest(const char *p, char *dest, size_t n)
{
	for (size_t i = 0; i < NSYSTEM; i++) {
		if (sb.sys[i].kind != 1)
			continue;
		size_t len = strlen(sb.sys[i].real);
		if (strncmp(p, sb.sys[i].real, len) || (p[len] != '/' && p[len] != '\0'))
			continue;
		if (snprintf(dest, n, "%s%s", system_dirs[i], p + len) >= (int)n)
			return NULL;
		return dest;
	}
	return NULL;
}

/* Under sb.lock. A path outside every bound folder is absent anyway. */
static int add_mask(const char *path, struct engi_error *err)
{
	char real[PATH_MAX], dest[PATH_MAX];
	if (!realpath(path, real)) {
		if (path[0] != '/' || strlen(path) >= sizeof(real))
			return 0; /* nothing there to show */
		snprintf(real, sizeof(real), "%s", path);
	}
	if (!mask_dest(real, dest, sizeof(dest)))
		return 0;
	for (size_t i = 0; i < sb.nmask; i++) {
		size_t len = strlen(sb.mask[i].host);
		if (!strncmp(real, sb.mask[i].host, len) && (real[len] == '/' || real[len] == '\0'))
			return 0; /* covered already */
	}
	if (sb.nmask == SANDBOX_MASK_MAX)
		RAISE(err, ENGI_EINVALID,
		      "more than %d places to hide inside the system folders the local sandbox "
		      "shows (the last: '%s')",
		      SANDBOX_MASK_MAX, real);
	snprintf(sb.mask[sb.nmask].host, PATH_MAX, "%s", real);
	snprintf(sb.mask[sb.nmask].dest, PATH_MAX, "%s", dest);
	sb.nmask++;
	return 0;
}

static int find_bwrap(char *out, size_t n)
{
	const char *name = getenv("ENGI_BWRAP");
	int named = name && *name;
	if (!named)
		name = "bwrap";
	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		if (access(out, X_OK) == 0)
			return 0;
		snprintf(sb.why, sizeof(sb.why), "ENGI_BWRAP names '%s', which is not a program",
			 name);
		return -1;
	}
	if (child_find_program(name, out, n) == 0)
		return 0;
	snprintf(sb.why, sizeof(sb.why),
		 "bubblewrap is not installed (no '%s' in PATH; scripts/deps installs it, "
		 "ENGI_BWRAP names another)",
		 name);
	return -1;
}

static void find_system_dirs(void)
{
	for (size_t i = 0; i < NSYSTEM; i++) {
		struct stat st;
		const char *d = system_dirs[i];
		sb.sys[i].kind = 0;
		if (lstat(d, &st) < 0 || !realpath(d, sb.sys[i].real) ||
		    stat(sb.sys[i].real, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		sb.sys[i].kind = 1;
		/* a link into another system folder (/bin -> usr/bin) stays a link */
		ssize_t n = readlink(d, sb.sys[i].link, sizeof(sb.sys[i].link) - 1);
		if (n <= 0)
			continue;
		sb.sys[i].link[n] = '\0';
		for (size_t k = 0; k < NSYSTEM; k++) {
			size_t len = strlen(system_dirs[k]);
			if (k != i && !strncmp(sb.sys[i].real, system_dirs[k], len) &&
			    sb.sys[i].real[len] == '/' && lstat(system_dirs[k], &st) == 0 &&
			    S_ISDIR(st.st_mode))
				sb.sys[i].kind = 2;
		}
	}
}

struct argv_vec {
	const char **v;
	size_t n, cap;
};

static void av(struct argv_vec *a, const char *s)
{
	if (a->n + 1 < a->cap)
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* bwrap's arguments for command in le (NULL-terminated, engi_free); the
 * strings are le's, sb's or literals. NULL: out of memory. */
static char **sandbox_argv(const struct local_env *le, const char *command)
{
	struct argv_vec a = {.cap = 64 + 3 * (NSYSTEM + SANDBOX_MASK_MAX + BACKEND_FOLDERS_MAX)};
	a.v = engi_calloc(a.cap, sizeof(*a.v));
	if (!a.v)
		return NULL;
	av(&a, sb.bwrap);
	av(&a, "--unshare-all");
	if (le->network)
		av(&a, "--share-net");
	av(&a, "--die-with-parent");
	av(&a, "--new-session");
	av(&a, "--cap-drop");
	av(&a, "ALL");
	av(&a, "--hostname");
	av(&a, "sandbox");
	for (size_t i = 0; i < NSYSTEM; i++) {
		if (sb.sys[i].kind == 1) {
			av(&a, "--ro-bind");
			av(&a, sb.sys[i].real);
			av(&a, system_dirs[i]);
		} else if (sb.sys[i].kind == 2) {
			av(&a, "--symlink");
			av(&a, sb.sys[i].link);
			av(&a, system_dirs[i]);
		}
	}
	/* a mask needs its mount point: what is gone now needs none */
	pthread_mutex_lock(&sb.lock);
	for (size_t i = 0; i < sb.nmask; i++) {
		struct stat st;
		if (lstat(sb.mask[i].host, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			av(&a, "--tmpfs");
		} else {
			av(&a, "--ro-bind");
			av(&a, "/dev/null");
		}
		av(&a, sb.mask[i].dest);
	}
	pthread_mutex_unlock(&sb.lock);
	av(&a, "--proc");
	av(&a, "/proc");
	av(&a, "--dev");
	av(&a, "/dev");
	av(&a, "--bind");
	av(&a, le->tmp);
	av(&a, "/tmp");
	/* bwrap makes the mount points (and their parents) on the empty root */
	for (size_t i = 0; i < le->folders.n; i++) {
		av(&a, "--bind");
		av(&a, le->fhost[i]);
		av(&a, le->folders.path[i]);
	}
	av(&a, "--bind");
	av(&a, le->dir);
	av(&a, le->workdir[0] ? le->workdir : SANDBOX_WORKDIR);
	av(&a, "--chdir");
	av(&a, le->workdir[0] ? le->workdir : SANDBOX_WORKDIR);
	av(&a, "--remount-ro");
	av(&a, "/");
	av(&a, "--");
	av(&a, "/bin/sh");
	av(&a, "-c");
	av(&a, command);
	return (char **)a.v;
}

/* Opens rel beneath dirfd without following any link; creates parent
 * folders when flags has O_CREAT. name: the path as messages show it. */
static int open_beneath(int dirfd, const char *rel, const char *name, int flags,
			struct engi_error *err)
{
	TRY(fs_env_path_check(rel, err));
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
			RAISE(err, ENGI_EIO, "cannot create folder '%s' for '%s': %s", comp, name,
			      strerror(e));
		}
		int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			RAISE(err, ENGI_EIO, "cannot open folder '%s' of '%s': %s", comp, name,
			      e == ELOOP || e == ENOTDIR ? "not a plain folder (a link?)"
							 : strerror(e));
		fd = next;
		comp = slash + 1;
	}
	int f = openat(fd, comp, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	int e = errno;
	close(fd);
	if (f < 0)
		RAISE(err, ENGI_EIO, "cannot open '%s': %s", name,
		      e == ELOOP ? "it is a symbolic link" : strerror(e));
	return f;
}

/* Opens environment path p: beneath the work folder, or, absolute inside
 * one of the task's folders, beneath that folder's host directory (itself
 * opened without following a link). Other absolute paths are refused. */
static int open_env(const struct local_env *le, const char *p, int flags, struct engi_error *err)
{
	if (p[0] != '/')
		return open_beneath(le->dirfd, p, p, flags, err);
	const char *rest;
	int i = backend_folders_find(&le->folders, p, &rest, err);
	if (i < 0)
		return i;
	int dfd = open(le->fhost[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		RAISE(err, ENGI_EENV, "cannot open the folder '%s': %s", le->folders.path[i],
		      strerror(errno));
	int fd = open_beneath(dfd, rest, p, flags, err);
	close(dfd);
	return fd;
}

static int local_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		     struct engi_error *err)
{
	struct local_env *le = env->priv;
	int fd = open_env(le, env_path, O_WRONLY | O_CREAT | O_TRUNC, err);
	if (fd < 0)
		return fd;
	int rc = 0;
	if (fs_write_all_fd(fd, data, len) < 0)
		rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", env_path, strerror(errno));
	close(fd);
	return rc;
}

static int local_get(struct backend_env *env, const char *env_path, const char *host_path,
		     uint64_t max_bytes, uint64_t *bytes, struct engi_error *err)
{
	struct local_env *le = env->priv;
	int in = open_env(le, env_path, O_RDONLY, err);
	if (in < 0)
		return in;
	int rc = fs_copy_fd_capped(in, env_path, host_path, max_bytes, bytes, err);
	close(in);
	return rc;
}

static int local_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		      struct exec_result *r, struct engi_error *err)
{
	struct local_env *le = env->priv;
	/* Everything the child needs is built before fork: between fork and
	 * exec only async-signal-safe calls are allowed in a threaded process. */
	char home[PATH_MAX + 8], tmpdir[PATH_MAX + 16];
	snprintf(home, sizeof(home), "HOME=%s",
		 le->sandboxed ? (le->workdir[0] ? le->workdir : SANDBOX_WORKDIR) : le->dir);
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", le->sandboxed ? "/tmp" : le->tmp);
	char *const envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
			      home,
			      tmpdir,
			      "LANG=C",
			      "LC_ALL=C",
			      "TERM=dumb",
			      NULL};
	if (!le->sandboxed) {
		char *const argv[] = {"sh", "-c", (char *)command, NULL};
		struct spawn_opts so = {
		    .path = "/bin/sh", .argv = argv, .envp = envp, .cwd_fd = le->dirfd};
		return backend_run_captured(&so, o, r, err);
	}
	char **argv = sandbox_argv(le, command);
	if (!argv)
		RAISE(err, ENGI_ENOMEM, "out of memory starting a command");
	struct spawn_opts so = {.path = sb.bwrap, .argv = argv, .envp = envp, .cwd_fd = le->dirfd};
	int rc = backend_run_captured(&so, o, r, err);
	engi_free(argv);
	return rc;
}

/* One sandboxed command in a throwaway folder: does bwrap work here? */
static void sandbox_probe(void)
{
	struct local_env le = {.dirfd = -1};
	struct engi_error e;
	engi_error_init(&e);
	if (make_private_root(&le, &e) < 0) {
		snprintf(sb.why, sizeof(sb.why), "cannot probe it: %s", e.msg);
		return;
	}
	le.sandboxed = 1;
	struct backend_env env = {.priv = &le};
	struct exec_opts o = {.timeout_s = SANDBOX_PROBE_S, .out_cap = 400};
	struct exec_result r;
	memset(&r, 0, sizeof(r));
	int rc = local_exec(&env, "echo sandbox-ok > probe && cat probe", &o, &r, &e);
	if (rc == 0 && r.exit_code == 0 && r.out && !strcmp(r.out, "sandbox-ok\n")) {
		sb.ok = 1;
	} else {
		/* bwrap's first line says why ("No permissions to create new
		 * namespace", ...) */
		char line[256] = "";
		if (rc < 0)
			snprintf(line, sizeof(line), "%s", e.msg);
		else if (r.timed_out)
			snprintf(line, sizeof(line), "no answer in %.0f s", SANDBOX_PROBE_S);
		else if (r.out)
			snprintf(line, sizeof(line), "%.*s", (int)strcspn(r.out, "\n"), r.out);
		for (char *c = line; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = ' ';
		snprintf(sb.why, sizeof(sb.why), "'%s' fails its probe (exit %d%s%s)", sb.bwrap,
			 r.exit_code, line[0] ? ": " : "", line);
	}
	backend_exec_result_release(&r);
	close(le.dirfd);
	fs_rm_rf(le.root, NULL);
}

static void sandbox_init(void)
{
	make_procdir();
	if (find_bwrap(sb.bwrap, sizeof(sb.bwrap)) < 0)
		return;
	find_system_dirs();
	pthread_mutex_lock(&sb.lock);
	for (const char *const *s = host_secrets; *s; s++)
		add_mask(*s, NULL);
	add_mask(tmp_base(), NULL);
	pthread_mutex_unlock(&sb.lock);
	sandbox_probe();
}

int backend_local_sandbox(char *why, size_t len)
{
	pthread_once(&sb.once, sandbox_init);
	if (sb.ok)
		snprintf(why, len, "bubblewrap '%s': new namespaces work here", sb.bwrap);
	else
		snprintf(why, len, "%s", sb.why);
	return sb.ok;
}

void backend_local_allow_unsandboxed(int allow)
{
	sb.allow_unsandboxed = allow;
}

int backend_local_hide(const char *path, struct engi_error *err)
{
	pthread_once(&sb.once, sandbox_init);
	pthread_mutex_lock(&sb.lock);
	int rc = add_mask(path, err);
	pthread_mutex_unlock(&sb.lock);
	return rc;
}

/* A task's own working folder and its folders (guest paths) exist only in
 * the sandbox. */
static int need_sandbox_for(const struct env_spec *spec, struct engi_error *err)
{
	if (!spec->workdir && !spec->nfolders)
		return 0;
	pthread_once(&sb.once, sandbox_init);
	if (sb.ok)
		return 0;
	if (spec->workdir)
		RAISE(err, ENGI_ENOTSUP,
		      "the task's working folder '%s' is a guest path, which the local backend "
		      "gives only inside its sandbox, and the sandbox is unavailable (%s): use "
		      "the qemu backend",
		      spec->workdir, sb.why);
	RAISE(err, ENGI_ENOTSUP,
	      "the task's folder '%s' is a guest path, which the local backend gives only "
	      "inside its sandbox, and the sandbox is unavailable (%s): use the qemu backend",
	      spec->folders[0], sb.why);
}

static int local_prepare(const struct env_spec *spec, struct engi_error *err)
{
	return need_sandbox_for(spec, err);
}

static int local_start(struct backend_env *env, const struct env_spec *spec, struct engi_error *err)
{
	struct local_env *le = env->priv;
	le->dirfd = -1;
	pthread_once(&sb.once, sandbox_init);
	le->sandboxed = sb.ok;
	le->network = spec->network;
	TRY(need_sandbox_for(spec, err));
	TRY(backend_folders_copy(&le->folders, spec, err));
	snprintf(le->workdir, sizeof(le->workdir), "%s", spec->workdir ? spec->workdir : "");
	if (!sb.ok && !sb.allow_unsandboxed)
		RAISE(err, ENGI_ENOTSUP,
		      "the local backend's sandbox is unavailable (%s), and running unsandboxed "
		      "was not allowed (--unsafe-local)",
		      sb.why);
	/* the episode's host-side scratch (protected-input checks, images)
	 * lives in work_root; the agent's folder never does */
	TRY(fs_mkdir_p(spec->work_root, 0700, err));
	TRY(make_private_root(le, err));
	int rc = make_folders(le, err);
	if (rc < 0) {
		close(le->dirfd);
		le->dirfd = -1;
		fs_rm_rf(le->root, NULL);
		le->root[0] = '\0';
	}
	return rc;
}

static void local_stop(struct backend_env *env)
{
	struct local_env *le = env->priv;
	if (le->dirfd >= 0)
		close(le->dirfd);
	le->dirfd = -1;
	if (le->root[0])
		fs_rm_rf(le->root, NULL);
}

static const struct backend_ops local_ops = {
    .start = local_start,
    .prepare = local_prepare,
    .exec = local_exec,
    .put = local_put,
    .get = local_get,
    .stop = local_stop,
};

const struct backend_desc backend_local = {
    .name = "local",
    .summary = "a private work folder per episode; commands in a bubblewrap sandbox",
    .caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES | BACKEND_CAP_WORKDIR | BACKEND_CAP_FOLDERS,
    .priv_size = sizeof(struct local_env),
    .ops = &local_ops,
};
