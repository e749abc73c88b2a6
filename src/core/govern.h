/*
 * govern.h - a question or report from an episode's model agent to the
 * sweep's request governor on rank 0 (token buckets shared by every rank,
 * the adaptive concurrency limit of each model). A fixed-layout struct,
 * sent between ranks as it is (every rank runs the same binary).
 */
#ifndef ENGI_GOVERN_H
#define ENGI_GOVERN_H

#include <stdint.h>

enum govern_verb {
	GOVERN_ASK = 1,	 /* the seconds to wait before a request of est_tokens */
	GOVERN_TELL = 2, /* a request ended: its HTTP status and the tokens used */
};

struct govern_msg {
	uint32_t model; /* index in the sweep's models; set by the episode runner */
	uint32_t verb;	/* enum govern_verb */
	int64_t status; /* tell: HTTP status, 0 when no reply came */
	double tokens;	/* tell: tokens used */
	double est_tokens;
};

#endif
