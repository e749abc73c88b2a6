/*
 * Fuzz target: what QEMU's monitor (QMP) and guest agent send back,
 * through the JSON channel (src/backend/qchan.c) and the calls built on it
 * (qga.c). The peer is the other end of a socketpair: it holds the input
 * (after its first byte) and then shuts its side, so every call ends on the
 * data or on the closed connection, never on a timeout. The first byte
 * picks the caller:
 *   0 raw messages with a small size cap (64 bytes times the second byte,
 *     at least 64), read until the channel fails;
 *   1 qmp_call, its events kept;
 *   2 qga_call;
 *   3 qga_exec (guest-exec, guest-exec-status polls, base64 output);
 *   4 qga_get (a helper command, guest-file-open/seek/read, base64 chunks)
 *     into a host file with a 4 KiB cap.
 * Inputs are cut at 100000 bytes (a socket buffer), and modes 3 and 4 at
 * 12 lines, since qga_exec sleeps between polls. Every message read is an
 * object, every failure has a code and a message; anything else aborts.
 */
#include "fuzz_file.h"

#include "fsutil.h"
#include "qchan.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FUZZ_QCHAN_MAX 100000
#define FUZZ_QGA_LINES 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expect(int rc, const struct engi_error *e)
{
	fuzz_note("qchan", rc, e->msg);
	if (rc > 0 || (rc < 0 && (e->code != rc || !e->msg[0])))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int mode = data[0] % 5;
	data++;
	size--;
	if (size > FUZZ_QCHAN_MAX)
		size = FUZZ_QCHAN_MAX;
	if (mode >= 3) {
		size_t lines = 0;
		for (size_t i = 0; i < size; i++)
			if (data[i] == '\n' && ++lines > FUZZ_QGA_LINES)
				return 0;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = write(sv[1], data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	if (shutdown(sv[1], SHUT_WR) != 0)
		abort();
	struct engi_error e;
	engi_error_init(&e);
	int rc;
	if (mode == 0) {
		struct qchan c;
		qchan_init(&c, "QMP monitor", 64 * (size_t)(size && data[0] ? data[0] : 1));
		c.fd = sv[0];
		json_t *m;
		while ((rc = qchan_recv(&c, clk_now_mono() + 10, &m, &e)) == 0) {
			if (!json_is_object(m))
				abort();
			json_decref(m);
		}
		if (m)
			abort();
		expect(rc, &e);
		qchan_close(&c);
	} else if (mode == 1) {
		struct qmp q;
		qmp_init(&q);
		q.ch.fd = sv[0];
		json_t *ret = NULL;
		rc = qmp_call(&q, "query-status", NULL, 10, &ret, &e);
		expect(rc, &e);
		if ((rc == 0) != (ret != NULL) || json_array_size(q.events) > 1000)
			abort();
		json_decref(ret);
		qmp_close(&q);
	} else {
		struct qga g;
		qga_init(&g);
		g.ch.fd = sv[0];
		if (mode == 2) {
			json_t *ret = NULL;
			rc = qga_call(&g, "guest-info", NULL, 10, &ret, &e);
			if ((rc == 0) != (ret != NULL))
				abort();
			json_decref(ret);
		} else if (mode == 3) {
			struct exec_opts o = {.timeout_s = 10, .out_cap = 4096};
			struct exec_result r;
			memset(&r, 0, sizeof(r));
			rc = qga_exec(&g, "/work", "true", &o, &r, &e);
			if (rc == 0 && (!r.out || r.out_len > o.out_cap || r.out_len > r.out_total))
				abort();
			if (rc == 0)
				backend_exec_result_release(&r);
		} else {
			char host[128];
			snprintf(host, sizeof(host), "%s/got", fuzz_dir());
			uint64_t bytes = 0;
			rc = qga_get(&g, "/work/out.txt", host, 4096, &bytes, &e);
			if (bytes > 4096 || (rc < 0 && access(host, F_OK) == 0))
				abort();
			unlink(host);
		}
		expect(rc, &e);
		qga_close(&g);
	}
	close(sv[1]);
	return 0;
}
