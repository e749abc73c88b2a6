/*
 * record.h - the record of one finished episode, as it travels from the
 * worker rank to rank 0, into the journal and into the HDF5 store.
 *
 * A record is a plain struct that owns its arrays (record_init /
 * record_release). record_to_json and record_from_json give its one wire and
 * journal form: a single JSON object, the trace as base64 of its zstd bytes.
 * NaN is written as null, infinities as "Infinity"/"-Infinity"; bytes that
 * are not valid UTF-8 become '?'; every registered secret (secrets.h) in a
 * text field becomes SECRET_MARK, and the message has its control
 * characters escaped (\x1b), within its 255 bytes. Unknown fields are
 * errors.
 * record_from_json needs an initialised record: on success it releases the
 * old contents and fills it, on failure it leaves it unchanged.
 */
#ifndef ENGI_RECORD_H
#define ENGI_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"
#include "engi/verify.h"

#define CELL_ID_LEN 16 /* hex characters of a cell id */

#define OUTCOME_MAP(X)                                                                             \
	X(DONE, "done")                                                                            \
	X(FAIL_DECLARED, "fail_declared")                                                          \
	X(TURN_LIMIT, "turn_limit")                                                                \
	X(TIME_LIMIT, "time_limit")                                                                \
	X(ENV_CRASH, "env_crash")                                                                  \
	X(AGENT_ERROR, "agent_error")                                                              \
	X(INFRA_ERROR, "infra_error")

enum outcome {
#define OUTCOME_ENUM(n, s) OUTCOME_##n,
	OUTCOME_MAP(OUTCOME_ENUM)
#undef OUTCOME_ENUM
	    OUTCOME_COUNT
};

const char *outcome_name(int outcome);
/* -1 when unknown */
int outcome_from_name(const char *name);
/* Infrastructure failures (env_crash, infra_error) are retried and never
 * scored; --resume reruns them. */
int outcome_is_infra(int outcome);

/* Why an episode could not be run (record.infra): what the report counts
 * under "not run". env_crash episodes carry INFRA_ENV_LOST. */
#define INFRA_ENV_LOST	       "environment lost"
#define INFRA_ENDPOINT	       "endpoint unavailable"
#define INFRA_AUTH	       "authentication refused"
#define INFRA_KEY_UNSET	       "api key not set"
#define INFRA_VERIFIER_CRASH   "verifier crashed"
#define INFRA_VERIFIER_TIMEOUT "verifier timed out"
#define INFRA_REASON_MAX       32

struct artifact {
	char path[256]; /* relative to <out>/artifacts/<cell>/ */
	uint64_t bytes;
	char sha256[65];
	char note[128]; /* why it was not copied, that its secrets were scrubbed, or empty */
};

struct record {
	char cell[CELL_ID_LEN + 1];
	char task_id[64];
	char model[64];
	char condition[64];
	int trial;

	int outcome;  /* enum outcome */
	int attempts; /* 1 + infrastructure retries */
	int success, feasible;
	double score, quality;
	int turns;
	int64_t tokens_in, tokens_out;
	double cost_usd;
	double wall_s, env_s, model_s, verify_s;
	double started_at; /* unix time, seconds */
	int rank;
	char host[64];
	char run_id[40];	      /* which invocation produced it (for resume checks) */
	char message[256];	      /* agent's summary or failure reason */
	char infra[INFRA_REASON_MAX]; /* infrastructure outcomes: why (INFRA_*), else "" */
	char version[32];	      /* engisweep version that ran and judged it */
	char verifier[64];	      /* "kind@version" of the verifier that judged it, or "" */

	struct engi_assertion *assertions;
	size_t nassertions;
	struct engi_metric *metrics;
	size_t nmetrics;
	struct artifact *artifacts;
	size_t nartifacts;

	unsigned char *trace; /* zstd-compressed JSONL */
	size_t trace_len;
	size_t trace_raw_len;
};

void record_init(struct record *r);
void record_release(struct record *r);
/* Takes the verdict's assertions and metrics and its scoring fields. */
int record_take_verdict(struct record *r, struct engi_verdict *v);

/* One line of JSON, no newline; caller frees with engi_free. */
int record_to_json(const struct record *r, char **out, size_t *len, struct engi_error *err);
int record_from_json(const char *text, size_t len, struct record *r, struct engi_error *err);

#endif
