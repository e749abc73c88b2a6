/*
 * Commands and files through the QEMU guest agent. See qchan.h.
 *
 * The guest is untrusted: every size it reports is checked against our caps
 * before we act on it, its output is kept up to a cap, and a guest agent
 * that stops answering is an environment failure (ENGI_EENV), never a hang.
 */
#include "qchan.h"

#include "base64.h"
#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "fsutil.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One guest-agent call; ENGI_QGA_TIMEOUT (seconds) overrides it. */
static double call_timeout(void)
{
	static double t;
	if (t <= 0) {
		const char *v = getenv("ENGI_QGA_TIMEOUT");
		double d = v ? atof(v) : 0;
		t = d > 0 && d < 3600 ? d : 30.0;
	}
	return t;
}
#define CALL_TIMEOUT_S call_timeout()
#define FILE_CHUNK     ((size_t)1 << 20)
/* where the output of commands started detached goes, in the guest */
#define QGA_LAUNCH_LOG "/tmp/engisweep-launch.log"

/* The command runs in a session of its own (setsid does not fork: the
 * agent's child is no group leader), under a wrapper shell that kills the
 * whole group when the command's shell ends: the agent reports a command
 * finished only once its output pipe closes, so nothing the command left
 * running may hold it, as in the local backend. */
static const char wrapper[] =
    "setsid /bin/sh -c \"$1\" </dev/null & c=$!; wait $c; r=$?; kill -9 -$c 2>/dev/null; exit $r";

static int spawn(struct qga *g, const char *script, json_int_t *pid, struct engi_error *err)
{
	json_t *args = json_pack("{s:s,s:[s,s,s,s],s:b}", "path", "/bin/sh", "arg", "-c", wrapper,
				 "engi", script, "capture-output", 1);
	json_t *ret;
	int rc = qga_call(g, "guest-exec", args, CALL_TIMEOUT_S, &ret, err);
	if (rc < 0) {
		/* the agent cannot start a process: the guest is not usable */
		if (err)
			err->code = ENGI_EENV;
		engi_error_prefix(err, "the guest agent cannot start a command");
		return ENGI_EENV;
	}
	json_t *p = json_object_get(ret, "pid");
	int ok = json_is_integer(p);
	if (ok)
		*pid = json_integer_value(p);
	json_decref(ret);
	if (!ok)
		RAISE(err, ENGI_EENV, "guest-exec answered without a pid");
	return 0;
}

/* Kills the wrapper's command group, then the wrapper and every descendant
 * left, stopped first, found through /proc/PID/task/TID/children. */
static int kill_tree(struct qga *g, json_int_t pid, struct engi_error *err)
{
	char script[384];
	snprintf(
	    script, sizeof(script),
	    "for c in $(cat /proc/%lld/task/*/children 2>/dev/null); do kill -9 -$c 2>/dev/null; "
	    "done; k() { kill -STOP $1 2>/dev/null; for c in $(cat /proc/$1/task/*/children "
	    "2>/dev/null); do k $c; done; kill -KILL $1 2>/dev/null; }; k %lld",
	    (long long)pid, (long long)pid);
	return qga_run(g, script, 10, err) < 0 ? -1 : 0;
}

/* Keeps up to cap bytes of the base64 text in out, counts the rest. */
static int take_output(json_t *b64, struct engi_dynbuf *out, uint64_t *total,
		       struct engi_error *err)
{
	const char *s = json_string_value(b64);
	if (!s)
		return 0;
	size_t n = json_string_length(b64);
	unsigned char *raw = engi_malloc(base64_decoded_max(n) + 1);
	if (!raw)
		RAISE(err, ENGI_ENOMEM, "out of memory decoding guest output");
	size_t len = 0, bad;
	if (base64_decode(s, n, raw, &len, &bad) < 0) {
		engi_free(raw);
		RAISE(err, ENGI_EENV, "guest agent sent output that is not base64 (at byte %zu)",
		      bad);
	}
	*total += len;
	size_t room = out->cap - out->len;
	size_t keep = len < room ? len : room;
	int rc = keep ? engi_dynbuf_add(out, raw, keep) : 0;
	engi_free(raw);
	if (rc < 0)
		RAISE(err, ENGI_ENOMEM, "out of memory keeping guest output");
	return 0;
}

int qga_exec(struct qga *g, const char *cwd, const char *command, const struct exec_opts *o,
	     struct exec_result *r, struct engi_error *err)
{
	char *qcwd = text_sh_quote(cwd);
	/* detached: a session of its own (a background child is no group
	 * leader, so setsid does not fork), out of reach of the wrapper's
	 * kill, its output appended to a log in the guest */
	char *qcmd = o->detach ? text_sh_quote(command) : NULL;
	size_t n = strlen(command) + (qcwd ? strlen(qcwd) : 0) + (qcmd ? strlen(qcmd) : 0) + 512;
	char *script = qcwd && (qcmd || !o->detach) ? engi_malloc(n) : NULL;
	if (!script) {
		engi_free(qcwd);
		engi_free(qcmd);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	if (o->detach)
		/* the wrapper kills this script's group when it ends: wait
		 * (at most 5 s) until the child leads its own session or has
		 * ended (a launch may be quick; its status is not waited for) */
		snprintf(script, n,
			 "cd %s || exit 125\nexec 2>&1\nsetsid /bin/sh -c %s </dev/null "
			 ">>" QGA_LAUNCH_LOG " 2>&1 &\np=$!; i=0\n"
			 "while [ $i -lt 500 ] && [ -e /proc/$p ] && "
			 "[ \"$(cut -d' ' -f6 /proc/$p/stat 2>/dev/null)\" != \"$p\" ]; do "
			 "sleep 0.01; i=$((i+1)); done\n"
			 "echo \"started $p\"",
			 qcwd, qcmd);
	else
		snprintf(script, n, "cd %s || exit 125\nexec 2>&1\n%s", qcwd, command);
	engi_free(qcwd);
	engi_free(qcmd);
	double t0 = clk_now_mono();
	json_int_t pid = 0;
	int rc = spawn(g, script, &pid, err);
	engi_free(script);
	if (rc < 0)
		return rc;

	struct engi_dynbuf out;
	engi_dynbuf_init(&out, o->out_cap);
	double wait = 0.005;
	int killed = 0;
	double killed_at = 0;
	for (;;) {
		double now = clk_now_mono();
		if (killed && now - killed_at > 10) {
			/* something in the guest still holds the output pipe */
			r->exit_code = -1;
			break;
		}
		if (!killed &&
		    (now - t0 > o->timeout_s || (o->cancel && o->cancel(o->cancel_ctx)))) {
			if (now - t0 > o->timeout_s)
				r->timed_out = 1;
			else
				r->cancelled = 1;
			if ((rc = kill_tree(g, pid, err)) < 0)
				break;
			killed = 1;
			killed_at = clk_now_mono();
		}
		json_t *st;
		rc = qga_call(g, "guest-exec-status", json_pack("{s:I}", "pid", pid),
			      CALL_TIMEOUT_S, &st, err);
		if (rc < 0) {
			/* an agent that forgot its own command (it was killed and
			 * restarted) has lost the environment's state: not the
			 * command's failure */
			if (err)
				err->code = ENGI_EENV;
			engi_error_prefix(err, "the guest agent lost the running command");
			rc = ENGI_EENV;
			break;
		}
		if (json_is_true(json_object_get(st, "exited"))) {
			json_t *code = json_object_get(st, "exitcode");
			json_t *sig = json_object_get(st, "signal");
			r->exit_code = json_is_integer(code) ? (int)json_integer_value(code) : -1;
			r->term_signal = json_is_integer(sig) ? (int)json_integer_value(sig) : 0;
			if (r->term_signal || killed)
				r->exit_code = -1;
			rc = take_output(json_object_get(st, "out-data"), &out, &r->out_total, err);
			if (rc == 0)
				rc = take_output(json_object_get(st, "err-data"), &out,
						 &r->out_total, err);
			json_decref(st);
			break;
		}
		json_decref(st);
		clk_sleep_seconds(wait);
		wait = fmin(wait * 1.5, 0.1);
	}
	r->wall_s = clk_now_mono() - t0;
	if (rc < 0) {
		engi_dynbuf_release(&out);
		return rc;
	}
	r->out = engi_dynbuf_take(&out, &r->out_len);
	if (!r->out)
		RAISE(err, ENGI_ENOMEM, "out of memory keeping command output");
	return 0;
}

int qga_run(struct qga *g, const char *script, double timeout_s, struct engi_error *err)
{
	struct exec_opts o = {.timeout_s = timeout_s, .out_cap = 4096};
	struct exec_result r = {0};
	TRY(qga_exec(g, "/", script, &o, &r, err));
	int code = r.timed_out ? -1 : r.exit_code;
	backend_exec_result_release(&r);
	if (code < 0)
		RAISE(err, ENGI_EENV, "a helper command in the guest did not finish in %.0f s",
		      timeout_s);
	return code;
}

static int file_open(struct qga *g, const char *path, const char *mode, json_int_t *h,
		     struct engi_error *err)
{
	json_t *ret;
	TRY(qga_call(g, "guest-file-open", json_pack("{s:s,s:s}", "path", path, "mode", mode),
		     CALL_TIMEOUT_S, &ret, err));
	int ok = json_is_integer(ret);
	if (ok)
		*h = json_integer_value(ret);
	json_decref(ret);
	if (!ok)
		RAISE(err, ENGI_EENV, "guest-file-open answered without a handle");
	return 0;
}

static void file_close(struct qga *g, json_int_t h)
{
	struct engi_error e;
	engi_error_init(&e);
	qga_call(g, "guest-file-close", json_pack("{s:I}", "handle", h), CALL_TIMEOUT_S, NULL, &e);
}

int qga_put(struct qga *g, const void *data, size_t len, const char *path, struct engi_error *err)
{
	const char *slash = strrchr(path, '/');
	if (slash && slash != path) {
		char *dir = engi_strndup(path, (size_t)(slash - path));
		char *q = dir ? text_sh_quote(dir) : NULL;
		engi_free(dir);
		if (!q)
			RAISE(err, ENGI_ENOMEM, "out of memory");
		char script[ENV_PATH_MAX * 4 + 64];
		snprintf(script, sizeof(script), "mkdir -p -- %s", q);
		engi_free(q);
		int code = qga_run(g, script, CALL_TIMEOUT_S, err);
		if (code < 0)
			return code;
		if (code)
			RAISE(err, ENGI_EIO, "cannot create the folder of '%s' in the guest", path);
	}
	json_int_t h;
	TRY(file_open(g, path, "w", &h, err));
	const unsigned char *p = data;
	char *b64 = engi_malloc(base64_encoded_len(FILE_CHUNK) + 1);
	if (!b64) {
		file_close(g, h);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = 0;
	size_t off = 0;
	do {
		size_t k = len - off < FILE_CHUNK ? len - off : FILE_CHUNK;
		base64_encode(p + off, k, b64);
		json_t *ret;
		rc = qga_call(g, "guest-file-write",
			      json_pack("{s:I,s:s}", "handle", h, "buf-b64", b64), CALL_TIMEOUT_S,
			      &ret, err);
		if (rc < 0)
			break;
		json_int_t wrote = json_integer_value(json_object_get(ret, "count"));
		json_decref(ret);
		if (wrote != (json_int_t)k) {
			rc = engi_raise(err, ENGI_EIO,
					"short write to '%s' in the guest (disk full?)", path);
			break;
		}
		off += k;
	} while (off < len);
	engi_free(b64);
	file_close(g, h);
	return rc;
}

int qga_get(struct qga *g, const char *path, const char *host_path, uint64_t max_bytes,
	    uint64_t *bytes, struct engi_error *err)
{
	*bytes = 0;
	/* like the local backend: only plain files, reached without links */
	char *q = text_sh_quote(path);
	if (!q)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	char script[ENV_PATH_MAX * 8 + 160];
	snprintf(
	    script, sizeof(script),
	    "p=%s; [ -h \"$p\" ] && exit 3; [ -e \"$p\" ] || exit 5; "
	    "[ \"$(readlink -f \"$p\")\" = \"$p\" ] || exit 4; [ -f \"$p\" ] || exit 6; exit 0",
	    q);
	engi_free(q);
	int code = qga_run(g, script, CALL_TIMEOUT_S, err);
	if (code < 0)
		return code;
	switch (code) {
	case 0:
		break;
	case 3:
		RAISE(err, ENGI_EIO, "cannot open '%s': it is a symbolic link", path);
	case 4:
		RAISE(err, ENGI_EIO, "cannot open '%s': a folder on its path is a link", path);
	case 5:
		RAISE(err, ENGI_EIO, "cannot open '%s': no such file", path);
	default:
		RAISE(err, ENGI_EIO, "cannot open '%s': not a plain file", path);
	}

	json_int_t h;
	TRY(file_open(g, path, "r", &h, err));
	json_t *ret;
	int rc = qga_call(
	    g, "guest-file-seek",
	    json_pack("{s:I,s:I,s:s}", "handle", h, "offset", (json_int_t)0, "whence", "end"),
	    CALL_TIMEOUT_S, &ret, err);
	if (rc < 0) {
		file_close(g, h);
		return rc;
	}
	json_int_t size = json_integer_value(json_object_get(ret, "position"));
	json_decref(ret);
	if (size < 0 || (uint64_t)size > max_bytes) {
		file_close(g, h);
		RAISE(err, ENGI_ETOOBIG, "'%s' is %lld bytes, over the cap of %llu", path,
		      (long long)size, (unsigned long long)max_bytes);
	}
	rc = qga_call(
	    g, "guest-file-seek",
	    json_pack("{s:I,s:I,s:s}", "handle", h, "offset", (json_int_t)0, "whence", "set"),
	    CALL_TIMEOUT_S, NULL, err);
	if (rc < 0) {
		file_close(g, h);
		return rc;
	}
	int fd = open(host_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		file_close(g, h);
		RAISE(err, ENGI_EIO, "cannot create '%s': %s", host_path, strerror(errno));
	}
	unsigned char *raw = engi_malloc(base64_decoded_max(base64_encoded_len(FILE_CHUNK)) + 1);
	if (!raw)
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	while (rc == 0) {
		rc = qga_call(g, "guest-file-read",
			      json_pack("{s:I,s:I}", "handle", h, "count", (json_int_t)FILE_CHUNK),
			      CALL_TIMEOUT_S, &ret, err);
		if (rc < 0)
			break;
		json_t *b = json_object_get(ret, "buf-b64");
		size_t blen = json_string_length(b), n = 0, bad;
		int eof = json_is_true(json_object_get(ret, "eof"));
		if (!json_is_string(b) || blen > base64_encoded_len(FILE_CHUNK) ||
		    base64_decode(json_string_value(b), blen, raw, &n, &bad) < 0)
			rc = engi_raise(err, ENGI_EENV,
					"guest-file-read sent a malformed chunk of '%s'", path);
		json_decref(ret);
		if (rc < 0)
			break;
		/* the size seen at open is not a promise: the file may grow */
		if (*bytes + n > max_bytes) {
			rc = engi_raise(err, ENGI_ETOOBIG, "'%s' grew over the cap of %llu bytes",
					path, (unsigned long long)max_bytes);
			break;
		}
		if (n && fs_write_all_fd(fd, raw, n) < 0) {
			rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", host_path,
					strerror(errno));
			break;
		}
		*bytes += n;
		if (eof || n == 0)
			break;
	}
	engi_free(raw);
	if (close(fd) < 0 && rc == 0)
		rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", host_path, strerror(errno));
	file_close(g, h);
	if (rc < 0)
		unlink(host_path);
	return rc;
}
