/*
 * The QMP / guest-agent transport against a scripted peer on a socketpair:
 * sync bytes and garbage before objects, events between replies, late
 * replies to earlier calls, error replies, oversized messages, silence,
 * and a peer that hangs up.
 */
#include "qchan.h"

#include "fsutil.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			failures++;                                                                \
			printf("FAIL line %d: ", __LINE__);                                        \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

struct peer {
	int fd;
	const char *script; /* what to send after reading one request line */
	size_t script_len;
	int hang_up;
};

static void *peer_main(void *p)
{
	struct peer *pr = p;
	char c;
	/* the socketpair is non-blocking for the client; the peer blocks, or it
	 * would answer (and hang up) before the request was sent */
	fcntl(pr->fd, F_SETFL, fcntl(pr->fd, F_GETFL) & ~O_NONBLOCK);
	/* wait for one request line */
	while (read(pr->fd, &c, 1) == 1 && c != '\n')
		;
	if (pr->script_len)
		fs_write_all_fd(pr->fd, pr->script, pr->script_len);
	if (pr->hang_up)
		shutdown(pr->fd, SHUT_RDWR);
	return NULL;
}

/* Runs one call of execute against a peer that sends script. */
static int one_call(int qmp, const char *script, size_t len, int hang_up, size_t max_msg,
		    double timeout, json_t **ret, struct engi_error *e, json_t **events)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	struct peer pr = {sv[1], script, len, hang_up};
	pthread_t th;
	pthread_create(&th, NULL, peer_main, &pr);
	int rc;
	if (qmp) {
		struct qmp q;
		qmp_init(&q);
		q.ch.fd = sv[0];
		if (max_msg)
			q.ch.max_msg = max_msg;
		rc = qmp_call(&q, "query-status", NULL, timeout, ret, e);
		if (events)
			*events = json_incref(q.events);
		qmp_close(&q);
	} else {
		struct qga g;
		qga_init(&g);
		g.ch.fd = sv[0];
		if (max_msg)
			g.ch.max_msg = max_msg;
		rc = qga_call(&g, "guest-ping", NULL, timeout, ret, e);
		qga_close(&g);
	}
	pthread_join(th, NULL);
	close(sv[1]);
	return rc;
}

int main(void)
{
	/* the peer writes into sockets the client has already given up on */
	signal(SIGPIPE, SIG_IGN);
	struct engi_error e;
	json_t *ret = NULL, *events = NULL;

	/* sync bytes, garbage, a stale reply and an event before ours */
	static const char s1[] = "\xff\xffnoise\n{\"return\": 1, \"id\": 99}\n"
				 "{\"event\": \"STOP\", \"timestamp\": {}}\r\n"
				 "{\"return\": {\"status\": \"running\"}, \"id\": 1}\r\n";
	engi_error_init(&e);
	int rc = one_call(1, s1, sizeof(s1) - 1, 0, 0, 5, &ret, &e, &events);
	CHECK(rc == 0, "qmp call: %s", e.msg);
	CHECK(ret && !strcmp(json_string_value(json_object_get(ret, "status")), "running"),
	      "return value");
	CHECK(json_array_size(events) == 1, "event kept: %zu", json_array_size(events));
	json_decref(ret);
	json_decref(events);
	ret = events = NULL;

	/* an error reply carries QEMU's description */
	static const char s2[] =
	    "{\"error\": {\"class\": \"GenericError\", \"desc\": \"no such thing\"}, \"id\": 1}\n";
	engi_error_init(&e);
	rc = one_call(0, s2, sizeof(s2) - 1, 0, 0, 5, &ret, &e, NULL);
	CHECK(rc == ENGI_EIO && strstr(e.msg, "no such thing"), "error reply: %d %s", rc, e.msg);

	/* a reply split over a line that is not JSON, then the real one */
	static const char s3[] = "{not json}\n[1,2]\n{\"return\": {}, \"id\": 1}\n";
	engi_error_init(&e);
	rc = one_call(0, s3, sizeof(s3) - 1, 0, 0, 5, &ret, &e, NULL);
	CHECK(rc == 0 && json_is_object(ret), "skips stray lines: %s", e.msg);
	json_decref(ret);
	ret = NULL;

	/* a message over the cap: an environment failure, not a huge buffer */
	char *big = malloc(300000);
	memset(big, 'x', 300000);
	big[0] = '{';
	engi_error_init(&e);
	rc = one_call(0, big, 300000, 0, 100000, 5, &ret, &e, NULL);
	CHECK(rc == ENGI_EENV && strstr(e.msg, "over"), "oversized: %d %s", rc, e.msg);
	free(big);

	/* silence: the guest agent's timeout is an environment failure, QMP's a timeout */
	engi_error_init(&e);
	double t0 = clk_now_mono();
	rc = one_call(0, "", 0, 0, 0, 0.3, &ret, &e, NULL);
	CHECK(rc == ENGI_EENV && e.code == ENGI_EENV, "qga silence: %d %s", rc, e.msg);
	CHECK(clk_now_mono() - t0 < 3, "timeout took %.2f s", clk_now_mono() - t0);
	engi_error_init(&e);
	rc = one_call(1, "", 0, 0, 0, 0.3, &ret, &e, NULL);
	CHECK(rc == ENGI_ETIMEOUT, "qmp silence: %d %s", rc, e.msg);

	/* the peer hangs up mid-message */
	static const char s4[] = "{\"return\": ";
	engi_error_init(&e);
	rc = one_call(0, s4, sizeof(s4) - 1, 1, 0, 5, &ret, &e, NULL);
	CHECK(rc == ENGI_EENV && strstr(e.msg, "closed"), "hang-up: %d %s", rc, e.msg);

	/* connecting to nothing gives up at the deadline */
	struct qchan c;
	qchan_init(&c, "guest agent", 1024);
	engi_error_init(&e);
	rc = qchan_connect(&c, "/nonexistent/engisweep-test.sock", clk_now_mono() + 0.2, &e);
	CHECK(rc == ENGI_ETIMEOUT, "connect: %d %s", rc, e.msg);
	char longp[200];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	engi_error_init(&e);
	rc = qchan_connect(&c, longp, clk_now_mono() + 0.2, &e);
	CHECK(rc == ENGI_EINVALID, "long path: %d %s", rc, e.msg);
	qchan_close(&c);

	printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
	return failures != 0;
}
