/*
 * The JSON socket transport and QMP. See qchan.h.
 */
#include "qchan.h"

#include "engi/alloc.h"
#include "fsutil.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

void qchan_init(struct qchan *c, const char *what, size_t max_msg)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->what = what;
	c->max_msg = max_msg;
}

static int remaining_ms(double deadline)
{
	double r = deadline - clk_now_mono();
	if (r <= 0)
		return 0;
	return r > 1e6 ? 1000000000 : (int)(r * 1000) + 1;
}

int qchan_connect(struct qchan *c, const char *path, double deadline, struct engi_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		RAISE(err, ENGI_EINVALID, "%s socket path '%s' is longer than %zu bytes", c->what,
		      path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			RAISE(err, ENGI_EENV, "cannot create a socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			c->fd = fd;
			return 0;
		}
		int e = errno;
		close(fd);
		if (e != ENOENT && e != ECONNREFUSED && e != EAGAIN)
			RAISE(err, ENGI_EENV, "cannot connect to the %s at '%s': %s", c->what, path,
			      strerror(e));
		if (clk_now_mono() >= deadline)
			RAISE(err, ENGI_ETIMEOUT,
			      "the %s socket '%s' did not accept a connection in time", c->what,
			      path);
		clk_sleep_seconds(0.01);
	}
}

int qchan_send(struct qchan *c, const void *data, size_t len, double deadline,
	       struct engi_error *err)
{
	const char *p = data;
	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			RAISE(err, ENGI_EENV, "the %s connection broke while sending: %s", c->what,
			      strerror(errno));
		struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
		int ms = remaining_ms(deadline);
		if (!ms || poll(&pf, 1, ms) == 0)
			RAISE(err, ENGI_ETIMEOUT, "the %s did not take a request in time", c->what);
	}
	return 0;
}

void qchan_discard(struct qchan *c)
{
	c->len = 0;
}

/* Drops what comes before the first '{' in buf. */
static void skip_to_object(struct qchan *c)
{
	if (!c->len)
		return;
	size_t i = 0;
	while (i < c->len && c->buf[i] != '{')
		i++;
	memmove(c->buf, c->buf + i, c->len - i);
	c->len -= i;
}

int qchan_recv(struct qchan *c, double deadline, json_t **msg, struct engi_error *err)
{
	*msg = NULL;
	size_t scanned = 0;
	for (;;) {
		skip_to_object(c);
		if (scanned > c->len)
			scanned = 0;
		char *nl =
		    c->len > scanned ? memchr(c->buf + scanned, '\n', c->len - scanned) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			json_error_t je;
			json_t *m = json_loadb(c->buf, n, 0, &je);
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			scanned = 0;
			if (m && json_is_object(m)) {
				*msg = m;
				return 0;
			}
			json_decref(m); /* not an object: a stray line, skip it */
			continue;
		}
		scanned = c->len;
		if (c->len >= c->max_msg)
			RAISE(err, ENGI_EENV, "the %s sent a message over %zu bytes", c->what,
			      c->max_msg);
		if (c->cap - c->len < 65536) {
			size_t ncap = c->cap ? c->cap * 2 : 131072;
			if (ncap > c->max_msg + 65536)
				ncap = c->max_msg + 65536;
			char *nb = engi_realloc(c->buf, ncap);
			if (!nb)
				RAISE(err, ENGI_ENOMEM, "out of memory reading the %s", c->what);
			c->buf = nb;
			c->cap = ncap;
		}
		ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n == 0)
			RAISE(err, ENGI_EENV, "the %s closed its connection", c->what);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			RAISE(err, ENGI_EENV, "reading from the %s: %s", c->what, strerror(errno));
		struct pollfd pf = {.fd = c->fd, .events = POLLIN};
		int ms = remaining_ms(deadline);
		if (!ms || poll(&pf, 1, ms) == 0)
			RAISE(err, ENGI_ETIMEOUT, "the %s did not answer in time", c->what);
	}
}

void qchan_close(struct qchan *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	engi_free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static int send_json(struct qchan *c, json_t *m, double deadline, struct engi_error *err)
{
	char *s = json_dumps(m, JSON_COMPACT);
	if (!s)
		RAISE(err, ENGI_ENOMEM, "out of memory encoding a %s request", c->what);
	size_t n = strlen(s);
	int rc = qchan_send(c, s, n, deadline, err);
	if (rc == 0)
		rc = qchan_send(c, "\n", 1, deadline, err);
	free(s);
	return rc;
}

/* Sends {"execute": execute, "arguments": args, "id": id} and waits for the
 * reply carrying id; other messages go to keep (events) or are dropped. */
static int call(struct qchan *c, json_t *keep, unsigned id, const char *execute, json_t *args,
		double timeout_s, json_t **ret, struct engi_error *err)
{
	if (ret)
		*ret = NULL;
	double deadline = clk_now_mono() + timeout_s;
	json_t *m = json_pack("{s:s,s:I}", "execute", execute, "id", (json_int_t)id);
	if (!m) {
		json_decref(args);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	if (args)
		json_object_set_new(m, "arguments", args);
	int rc = send_json(c, m, deadline, err);
	json_decref(m);
	if (rc < 0) {
		engi_error_prefix(err, "%s", execute);
		return rc;
	}
	for (;;) {
		json_t *r;
		rc = qchan_recv(c, deadline, &r, err);
		if (rc < 0) {
			engi_error_prefix(err, "%s", execute);
			return rc;
		}
		json_t *rid = json_object_get(r, "id");
		if (json_object_get(r, "event")) {
			if (keep && json_array_size(keep) < 1000)
				json_array_append(keep, r);
			json_decref(r);
			continue;
		}
		if (!json_is_integer(rid) || json_integer_value(rid) != (json_int_t)id) {
			json_decref(r); /* a late reply to an earlier call */
			continue;
		}
		json_t *e = json_object_get(r, "error");
		if (e) {
			const char *desc = json_string_value(json_object_get(e, "desc"));
			rc = engi_raise(err, ENGI_EIO, "%s: %s", execute, desc ? desc : "failed");
			json_decref(r);
			return rc;
		}
		if (ret) {
			*ret = json_incref(json_object_get(r, "return"));
			if (!*ret)
				*ret = json_object();
		}
		json_decref(r);
		return 0;
	}
}

void qmp_init(struct qmp *q)
{
	qchan_init(&q->ch, "QMP monitor", 1 << 20);
	q->events = json_array();
	q->next_id = 1;
}

int qmp_open(struct qmp *q, const char *path, double deadline, struct engi_error *err)
{
	TRY(qchan_connect(&q->ch, path, deadline, err));
	json_t *greet;
	TRY(qchan_recv(&q->ch, deadline, &greet, err));
	int ok = json_object_get(greet, "QMP") != NULL;
	json_decref(greet);
	if (!ok)
		RAISE(err, ENGI_EENV, "QMP monitor at '%s' did not greet", path);
	double left = deadline - clk_now_mono();
	return call(&q->ch, q->events, q->next_id++, "qmp_capabilities", NULL, left > 1 ? left : 1,
		    NULL, err);
}

int qmp_call(struct qmp *q, const char *execute, json_t *args, double timeout_s, json_t **ret,
	     struct engi_error *err)
{
	if (q->ch.fd < 0) {
		json_decref(args);
		RAISE(err, ENGI_EENV, "QMP monitor is not connected");
	}
	return call(&q->ch, q->events, q->next_id++, execute, args, timeout_s, ret, err);
}

void qmp_close(struct qmp *q)
{
	qchan_close(&q->ch);
	json_decref(q->events);
	q->events = NULL;
}

void qga_init(struct qga *g)
{
	/* guest-exec-status carries up to 16 MiB of output, base64 */
	qchan_init(&g->ch, "guest agent", (size_t)48 << 20);
	g->next_id = 1;
}

int qga_call(struct qga *g, const char *execute, json_t *args, double timeout_s, json_t **ret,
	     struct engi_error *err)
{
	if (g->ch.fd < 0) {
		json_decref(args);
		RAISE(err, ENGI_EENV, "guest agent is not connected");
	}
	int rc = call(&g->ch, NULL, g->next_id++, execute, args, timeout_s, ret, err);
	/* an agent that stops answering leaves the channel out of step */
	if (rc == ENGI_ETIMEOUT && err)
		err->code = ENGI_EENV;
	return rc == ENGI_ETIMEOUT ? ENGI_EENV : rc;
}

int qga_open(struct qga *g, const char *path, double deadline, struct engi_error *err)
{
	TRY(qchan_connect(&g->ch, path, deadline, err));
	/* The socket takes connections before the agent runs, and the agent
	 * answers a 0xFF with an error: send the delimiter and a sync, retry
	 * until the matching reply arrives, then confirm with a plain sync. */
	unsigned long token =
	    (unsigned long)getpid() * 1000003ul + (unsigned long)(clk_now_mono() * 1e6);
	for (unsigned attempt = 0;; attempt++) {
		token =
		    (token * 6364136223846793005ull + 1442695040888963407ull) & 0x7fffffffffffull;
		double round_end = clk_now_mono() + (attempt < 5 ? 0.3 : 1.0);
		if (round_end > deadline)
			round_end = deadline;
		char req[128];
		int n = snprintf(
		    req, sizeof(req),
		    "\xff{\"execute\":\"guest-sync-delimited\",\"arguments\":{\"id\":%lu}}\n",
		    token);
		struct engi_error e;
		engi_error_init(&e);
		int rc = qchan_send(&g->ch, req, (size_t)n, round_end, &e);
		while (rc == 0) {
			json_t *r;
			rc = qchan_recv(&g->ch, round_end, &r, &e);
			if (rc < 0)
				break;
			json_t *ret = json_object_get(r, "return");
			int match =
			    json_is_integer(ret) && (unsigned long)json_integer_value(ret) == token;
			json_decref(r);
			if (match) {
				qchan_discard(&g->ch);
				json_t *args = json_pack("{s:I}", "id", (json_int_t)(token + 1));
				json_t *ret2;
				TRY(call(&g->ch, NULL, g->next_id++, "guest-sync", args,
					 deadline - clk_now_mono() > 2 ? deadline - clk_now_mono()
								       : 2,
					 &ret2, err));
				int ok = json_integer_value(ret2) == (json_int_t)(token + 1);
				json_decref(ret2);
				if (!ok)
					RAISE(err, ENGI_EENV,
					      "guest agent answered guest-sync with another id");
				return 0;
			}
		}
		if (rc == ENGI_EENV && clk_now_mono() < deadline) {
			/* the connection broke (QEMU gone?): let the caller see it */
			return engi_raise(err, rc, "%s", e.msg);
		}
		if (clk_now_mono() >= deadline)
			RAISE(err, ENGI_ETIMEOUT,
			      "the guest agent did not answer before the deadline");
	}
}

void qga_close(struct qga *g)
{
	qchan_close(&g->ch);
}
