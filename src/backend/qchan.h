/*
 * qchan.h - QEMU's two JSON socket protocols: QMP (the monitor) and the
 * guest agent, both newline-delimited JSON objects over a Unix socket.
 *
 * struct qchan is the shared transport: connect with retries, send with a
 * deadline, receive one JSON object at a time with a size cap, skipping the
 * 0xFF sync bytes and any garbage before an object. Every call takes an
 * absolute deadline on the monotonic clock (clk_now_mono()); past it the call
 * answers ENGI_ETIMEOUT. A peer that closes the socket answers ENGI_EENV.
 *
 * struct qmp and struct qga add the handshakes and command calls. Replies
 * are matched by id; QMP events seen while waiting are kept in qmp->events
 * (a JSON array the caller drains). Neither is thread-safe: one env, one
 * thread.
 */
#ifndef ENGI_QCHAN_H
#define ENGI_QCHAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "engi/error.h"

struct qchan {
	int fd;
	char *buf;
	size_t len, cap;
	size_t max_msg;	  /* largest JSON object accepted */
	const char *what; /* "QMP" or "guest agent", for messages */
};

void qchan_init(struct qchan *c, const char *what, size_t max_msg);
/* Connects to path, retrying while the socket does not exist or refuses. */
int qchan_connect(struct qchan *c, const char *path, double deadline, struct engi_error *err);
int qchan_send(struct qchan *c, const void *data, size_t len, double deadline,
	       struct engi_error *err);
/* The next JSON object; *msg is the caller's. */
int qchan_recv(struct qchan *c, double deadline, json_t **msg, struct engi_error *err);
/* Drops buffered input. */
void qchan_discard(struct qchan *c);
void qchan_close(struct qchan *c);

struct qmp {
	struct qchan ch;
	json_t *events; /* [{"event": ..., "timestamp": ..., "data": ...}] */
	unsigned next_id;
};

void qmp_init(struct qmp *q);
/* Connects, reads the greeting and negotiates capabilities. */
int qmp_open(struct qmp *q, const char *path, double deadline, struct engi_error *err);
/* Runs execute with args (stolen; NULL for none). *ret (optional) gets the
 * "return" value. An "error" reply is ENGI_EIO with QEMU's description. */
int qmp_call(struct qmp *q, const char *execute, json_t *args, double timeout_s, json_t **ret,
	     struct engi_error *err);
void qmp_close(struct qmp *q);

struct qga {
	struct qchan ch;
	unsigned next_id;
};

void qga_init(struct qga *g);
/* Connects and synchronises (0xFF + guest-sync-delimited, then guest-sync),
 * retrying until the agent answers or the deadline passes. */
int qga_open(struct qga *g, const char *path, double deadline, struct engi_error *err);
int qga_call(struct qga *g, const char *execute, json_t *args, double timeout_s, json_t **ret,
	     struct engi_error *err);
void qga_close(struct qga *g);

/* Runs `/bin/sh -c` with command in the guest's folder cwd, stdout and
 * stderr interleaved, polling until it ends, o->timeout_s passes or
 * o->cancel says so; then the command's process tree is killed. Output past
 * o->out_cap is counted and dropped. */
int qga_exec(struct qga *g, const char *cwd, const char *command, const struct exec_opts *o,
	     struct exec_result *r, struct engi_error *err);
/* Runs a short helper command (mkdir, kill) and answers its exit code. */
int qga_run(struct qga *g, const char *script, double timeout_s, struct engi_error *err);
/* Writes data to the guest file path (absolute), creating it. */
int qga_put(struct qga *g, const void *data, size_t len, const char *path, struct engi_error *err);
/* Copies the guest file path to a new host file, at most max_bytes:
 * larger files are refused before any byte moves (ENGI_ETOOBIG). */
int qga_get(struct qga *g, const char *path, const char *host_path, uint64_t max_bytes,
	    uint64_t *bytes, struct engi_error *err);

#endif
