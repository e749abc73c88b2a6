/*
 * payload.h - what a rank sends rank 0 for a cell: a fixed-layout head,
 * the cell's record as JSON without its trace, then the trace's own bytes.
 *
 * Rank 0 decides from the head alone (which cell, its outcome, what it
 * spent and how long it ran: the budget, the durations that order the
 * queue, the check that the result is the cell it sent) without parsing
 * anything. The record's JSON is small whatever the episode did, so the
 * parse that the results file needs stays small too; the trace (zstd,
 * hundreds of KB to MB for model and GUI episodes) is stored as it came and
 * put into the journal's line as base64 without a JSON parser ever reading
 * it. Every rank of a job runs the same binary on the same kind of node:
 * the head is native-endian and native-aligned; its magic word tells a
 * payload of another layout (or byte order) from this one.
 */
#ifndef ENGI_PAYLOAD_H
#define ENGI_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "record.h"

#define PAYLOAD_HEAD_MAGIC 0x32485245u /* "ERH2" in a little-endian dump */

struct payload_head {
	uint32_t magic;
	int32_t outcome; /* enum engi_outcome */
	uint64_t cell;	 /* the cell's index in the matrix */
	uint64_t json_len;
	uint64_t trace_len;	/* zstd bytes after the JSON */
	uint64_t trace_raw_len; /* their size uncompressed */
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

/* The head of payload p (len bytes), checked: the magic, the lengths, and
 * that it is cell `cell`'s; *json and *trace point into p. */
int payload_open(const char *p, size_t len, size_t cell, struct payload_head *head,
		 const char **json, const unsigned char **trace, struct engi_error *err);

/* Payload p read back, each part only when asked for: r (non-NULL: the
 * record, initialised here, its trace copied in; it must be cell_id's) and
 * line (non-NULL: the journal's line, as record_to_json would write it). */
int payload_read(const char *p, size_t len, size_t cell, const char *cell_id,
		 struct payload_head *head, struct record *r, char **line, size_t *line_len,
		 struct engi_error *err);

#endif
