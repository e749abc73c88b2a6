/*
 * brep_run.c - the B-rep kernel's C side: it runs OpenCASCADE in a process
 * of its own, engisweep-brep (brep_helper.c), and reads the report back
 * over a pipe. Two reasons: OCCT is not hardened against hostile shapes
 * (a mutated BREP can make its reader or its integrals loop for ever, or
 * in principle crash), so the helper is stopped at a deadline and its
 * death named; and linking OCCT into engisweep would cost every process
 * start about 40 ms of CPU for files most sweeps never read.
 *
 * The helper is looked for in $ENGI_BREP_HELPER, then beside the running
 * program (both are installed into the same folder), then where this
 * build made it.
 */
#include "brep_reply.h"
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/dynbuf.h"
#include "engi/error.h"
#include "engi/fdio.h"
#include "engi/sha256.h"
#include "engi/slurp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MAX   ((size_t)1 << 30)
#define HELPER_NAME "engisweep-brep"
/* the descriptor the helper writes its report on */
#define REPORT_FD 3

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* The helper's path into out[PATH_MAX], or -1 (none found: why in err). */
static int helper_path(char *out, struct engi_error *err)
{
	if (!ENGI_WITH_BREP)
		RAISE(err, ENGI_ENOTSUP,
		      "the B-rep kernel is not built into this binary (configure with "
		      "OpenCASCADE, -DENGI_BREP=ON; docs/building.md)");
	const char *env = getenv("ENGI_BREP_HELPER");
	if (env && *env) {
		if (strlen(env) >= PATH_MAX || !executable(env))
			RAISE(err, ENGI_EENV,
			      "ENGI_BREP_HELPER='%s' is not an executable file (the B-rep "
			      "kernel's program, " HELPER_NAME ")",
			      env);
		snprintf(out, PATH_MAX, "%s", env);
		return 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + sizeof("/" HELPER_NAME) <= PATH_MAX) {
			snprintf(slash, PATH_MAX - (size_t)(slash - self), "/" HELPER_NAME);
			if (executable(self)) {
				snprintf(out, PATH_MAX, "%s", self);
				return 0;
			}
		}
	}
#ifdef ENGI_BREP_HELPER_BUILT
	if (executable(ENGI_BREP_HELPER_BUILT)) {
		snprintf(out, PATH_MAX, "%s", ENGI_BREP_HELPER_BUILT);
		return 0;
	}
#endif
	RAISE(err, ENGI_EENV,
	      "the B-rep kernel's program " HELPER_NAME
	      " is not beside this one nor where it was built (install it with engisweep, "
	      "or set ENGI_BREP_HELPER)");
}

int engi_brep_built(void)
{
	char p[PATH_MAX];
	struct engi_error e;
	engi_error_init(&e);
	return helper_path(p, &e) == 0;
}

/* A copy of n items of size bytes at *off in buf, or NULL (n == 0 or no
 * memory: *fail set for the latter). */
static void *take(const char *buf, size_t *off, size_t n, size_t size, int *fail)
{
	if (n == 0)
		return NULL;
	void *p = engi_malloc(n * size);
	if (!p) {
		*fail = 1;
		return NULL;
	}
	memcpy(p, buf + *off, n * size);
	*off += n * size;
	return p;
}

/* Decodes the child's bytes into rep; sizes are checked against what came. */
static int decode(const char *path, const char *buf, size_t len, struct engi_brep_report *rep,
		  struct engi_error *err)
{
	struct engi_brep_reply r;
	if (len < sizeof(r))
		RAISE(err, ENGI_EPARSE, "'%s': the shape reader's report is truncated (%zu bytes)",
		      path, len);
	memcpy(&r, buf, sizeof(r));
	if (r.rc < 0) {
		r.err.msg[sizeof(r.err.msg) - 1] = '\0';
		return engi_raise(err, r.rc, "%s", r.err.msg);
	}
	size_t nf = r.rep.props.faces, nb = r.rep.nbodies, nfe = r.rep.nfeatures;
	size_t rest = len - sizeof(r);
	if (nf > rest / sizeof(struct engi_brep_face) ||
	    nb > rest / sizeof(struct engi_brep_body) ||
	    nfe > rest / sizeof(struct engi_brep_feature) ||
	    nf * sizeof(struct engi_brep_face) + nb * sizeof(struct engi_brep_body) +
		    nfe * sizeof(struct engi_brep_feature) !=
		rest ||
	    (r.rep.measured >= 0 && (size_t)r.rep.measured >= nb))
		RAISE(err, ENGI_EPARSE, "'%s': the shape reader's report does not add up", path);
	*rep = r.rep;
	size_t off = sizeof(r);
	int fail = 0;
	rep->props.face = take(buf, &off, nf, sizeof(struct engi_brep_face), &fail);
	rep->body = take(buf, &off, nb, sizeof(struct engi_brep_body), &fail);
	rep->feature = take(buf, &off, nfe, sizeof(struct engi_brep_feature), &fail);
	if (fail) {
		engi_brep_report_release(rep);
		RAISE(err, ENGI_ENOMEM, "'%s': no memory for the shape report", path);
	}
	return 0;
}

const char *engi_brep_cache_dir(char *buf, size_t n)
{
	const char *v = getenv("ENGI_BREP_CACHE");
	int w;
	if (v && *v) {
		if (!strcmp(v, "off"))
			return NULL;
		w = snprintf(buf, n, "%s", v);
	} else if ((v = getenv("XDG_CACHE_HOME")) && *v) {
		w = snprintf(buf, n, "%s/engisweep/brep", v);
	} else if ((v = getenv("HOME")) && *v) {
		w = snprintf(buf, n, "%s/.cache/engisweep/brep", v);
	} else {
		return NULL;
	}
	return w > 0 && (size_t)w < n && buf[0] == '/' ? buf : NULL;
}

/* The kept report's name: the file's content, the flags, the helper
 * program and the report's layout. -1 when a file cannot be read. */
static int cache_key(const char *helper, const char *path, unsigned flags, char key[65])
{
	char hh[65], fh[65];
	struct engi_error e;
	engi_error_init(&e);
	if (engi_sha256_file(helper, hh, &e) < 0 || engi_sha256_file(path, fh, &e) < 0)
		return -1;
	char text[256];
	snprintf(text, sizeof(text), "engisweep-brep report 1 %s %s %u %zu %zu %zu %zu", hh, fh,
		 flags, sizeof(struct engi_brep_reply), sizeof(struct engi_brep_face),
		 sizeof(struct engi_brep_body), sizeof(struct engi_brep_feature));
	engi_sha256_str(text, strlen(text), key);
	return 0;
}

/* Keeps a report: written beside, renamed over; failures only cost time. */
static void cache_write(const char *dir, const char *file, const char *buf, size_t len)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0700);
			*s = '/';
		}
	mkdir(p, 0700);
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", file, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	int bad = engi_write_all(fd, buf, len) < 0;
	if (close(fd) != 0 || bad || rename(tmp, file) != 0)
		unlink(tmp);
}

int engi_brep_analyze(const char *path, const struct engi_brep_opts *opts,
		      struct engi_brep_report *rep, struct engi_error *err)
{
	unsigned flags = opts ? opts->flags : 0;
	double limit = opts ? opts->timeout_s : 0;
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
	char helper[PATH_MAX];
	int rc = helper_path(helper, err);
	if (rc < 0) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err->msg);
		return engi_raise(err, rc, "'%s': %s", path, why);
	}
	/* a report kept from an earlier reading of the same bytes */
	char key[65], kept[PATH_MAX + 80] = "";
	if (opts && opts->cache_dir && cache_key(helper, path, flags, key) == 0) {
		snprintf(kept, sizeof(kept), "%s/%s.rep", opts->cache_dir, key);
		size_t klen = 0;
		char *kbuf = NULL;
		struct engi_error re;
		engi_error_init(&re);
		if (engi_io_slurp(kept, NULL, "kept B-rep report", REPLY_MAX, &kbuf, &klen, &re) ==
		    0) {
			struct engi_error ke;
			engi_error_init(&ke);
			int krc = decode(path, kbuf, klen, rep, &ke);
			engi_free(kbuf);
			if (krc == 0)
				return 0;
			unlink(kept); /* not a report of ours: read afresh */
			memset(rep, 0, sizeof(*rep));
			rep->measured = -1;
		}
	}
	char fdarg[16], flagarg[16];
	snprintf(fdarg, sizeof(fdarg), "%d", REPORT_FD);
	snprintf(flagarg, sizeof(flagarg), "%u", flags);
	char *const argv[] = {
	    (char *)HELPER_NAME, (char *)"--report", fdarg, flagarg, (char *)path, NULL};
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0)
		RAISE(err, ENGI_EENV, "'%s': cannot make a pipe for the shape reader: %s", path,
		      strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		RAISE(err, ENGI_EENV, "'%s': cannot start the shape reader: %s", path, strerror(e));
	}
	if (pid == 0) {
		/* async-signal-safe calls only until exec */
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0 && nul != 0) {
			dup2(nul, 0);
			close(nul);
		}
		if (dup2(fds[1], REPORT_FD) < 0)
			_exit(126);
		execv(helper, argv);
		_exit(127);
	}
	close(fds[1]);
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, REPLY_MAX);
	double deadline = limit > 0 ? now_s() + limit : 0;
	int timed_out = 0;
	char chunk[65536];
	for (;;) {
		int ms = -1;
		if (limit > 0) {
			double left = deadline - now_s();
			if (left <= 0) {
				timed_out = 1;
				break;
			}
			ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
		}
		struct pollfd pf = {.fd = fds[0], .events = POLLIN};
		int pr = poll(&pf, 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			rc = engi_raise(err, ENGI_EENV, "'%s': waiting for the shape reader: %s",
					path, strerror(errno));
			break;
		}
		if (pr == 0)
			continue; /* the deadline is checked above */
		ssize_t n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* end of the report (or a dead child: waitpid says) */
		if (engi_dynbuf_add(&b, chunk, (size_t)n) < 0) {
			rc = engi_raise(err, ENGI_ETOOBIG,
					"'%s': the shape reader's report is over %zu bytes", path,
					REPLY_MAX);
			break;
		}
	}
	close(fds[0]);
	if (timed_out || rc < 0)
		kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		rc = engi_raise(err, ENGI_ETIMEOUT,
				"'%s': reading and measuring the shape took over %g s (stopped)",
				path, limit);
	else if (rc == 0 && WIFSIGNALED(st))
		/* OCCT crashed (or a limit killed it): a fault of the kernel, not
		 * a verdict on the file */
		rc = engi_raise(
		    err, ENGI_EBUG,
		    "'%s': the shape reader (OpenCASCADE) died of signal %d on this file", path,
		    WTERMSIG(st));
	else if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
		rc = engi_raise(err, ENGI_EENV, "'%s': cannot run the shape reader '%s'", path,
				helper);
	else if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		rc = engi_raise(err, ENGI_EENV, "'%s': the shape reader exited with status %d",
				path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (rc == 0)
		rc = decode(path, b.buf, b.len, rep, err);
	if (rc == 0 && kept[0])
		cache_write(opts->cache_dir, kept, b.buf, b.len);
	engi_dynbuf_release(&b);
	return rc;
}
