/*
 * brep_run.c - the B-rep kernel under a time limit. OpenCASCADE is not
 * hardened against hostile shapes: a mutated BREP can make its reader or
 * its integrals loop for ever (or, in principle, crash). With a timeout
 * the measurement runs in a forked child that sends its report back over a
 * pipe; the parent stops it at the deadline and names the file either way.
 */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/dynbuf.h"
#include "engi/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the child sends: this header, then the face, body and feature
 * arrays whose counts the report gives. */
struct reply {
	int rc;
	struct engi_error err;
	struct engi_brep_report rep;
};

#define REPLY_MAX ((size_t)1 << 30)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static _Noreturn void child(int fd, const char *path, unsigned flags)
{
	struct reply r;
	memset(&r, 0, sizeof(r));
	engi_error_init(&r.err);
	r.rc = engi_brep_measure_file(path, flags, &r.rep, &r.err);
	int bad = write_all(fd, &r, sizeof(r));
	if (!bad && r.rc == 0) {
		bad |=
		    write_all(fd, r.rep.props.face, r.rep.props.faces * sizeof(*r.rep.props.face));
		bad |= write_all(fd, r.rep.body, r.rep.nbodies * sizeof(*r.rep.body));
		bad |= write_all(fd, r.rep.feature, r.rep.nfeatures * sizeof(*r.rep.feature));
	}
	engi_brep_report_release(&r.rep);
	/* _exit: the parent's atexit handlers and stdio buffers are its own */
	_exit(bad ? 3 : 0);
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
	struct reply r;
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

int engi_brep_analyze(const char *path, const struct engi_brep_opts *opts,
		      struct engi_brep_report *rep, struct engi_error *err)
{
	unsigned flags = opts ? opts->flags : 0;
	double limit = opts ? opts->timeout_s : 0;
	if (!(limit > 0) || !engi_brep_built())
		return engi_brep_measure_file(path, flags, rep, err);
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
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
		close(fds[0]);
		child(fds[1], path, flags);
	}
	close(fds[1]);
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, REPLY_MAX);
	double deadline = now_s() + limit;
	int rc = 0, timed_out = 0;
	char chunk[65536];
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd pf = {.fd = fds[0], .events = POLLIN};
		int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
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
		rc = engi_raise(
		    err, ENGI_EPARSE,
		    "'%s': the shape reader (OpenCASCADE) died of signal %d on this file", path,
		    WTERMSIG(st));
	else if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		rc = engi_raise(err, ENGI_EENV, "'%s': the shape reader exited with status %d",
				path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (rc == 0)
		rc = decode(path, b.buf, b.len, rep, err);
	engi_dynbuf_release(&b);
	return rc;
}
