/*
 * payload.h - what a rank sends rank 0 for a cell: a fixed-layout head,
 * then the cell's record as the journal writes it (one JSON object).
 *
 * Rank 0 decides from the head alone (which cell, its outcome, what it
 * spent and how long it ran: the budget, the durations that order the
 * queue, the check that the result is the cell it sent), without parsing
 * the record; the body it appends to the journal unchanged and parses once,
 * for the results file. The trace travels inside the body (base64 of its
 * zstd bytes), the form the journal keeps on disk, so no rank encodes it
 * twice. Every rank of a job runs the same binary on the same kind of node:
 * the head is native-endian and native-aligned; its magic word tells a
 * payload of another layout (or byte order) from this one.
 */
#ifndef ENGI_PAYLOAD_H
#define ENGI_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "record.h"

#define PAYLOAD_HEAD_MAGIC 0x31485245u /* "ERH1" in a little-endian dump */

struct payload_head {
	uint32_t magic;
	int32_t outcome; /* enum engi_outcome */
	uint64_t cell;	 /* the cell's index in the matrix */
	uint64_t body_len;
	int32_t success;
	int32_t turns;
	double score;
	double cost_usd;
	double wall_s;
	int64_t tokens_in;
	int64_t tokens_out;
};

/* A payload of record r for cell index cell: engi_malloc'd bytes. */
int payload_pack(const struct record *r, size_t cell, char **out, size_t *len,
		 struct engi_error *err);

/* The head and body of payload p (len bytes), checked: the magic, the
 * lengths, and that it is cell `cell`'s. */
int payload_open(const char *p, size_t len, size_t cell, struct payload_head *head,
		 const char **body, size_t *body_len, struct engi_error *err);

#endif
