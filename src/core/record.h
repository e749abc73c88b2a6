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
#include "engi/schema.h"
#include "engi/verify.h"

#define CELL_ID_LEN ENGI_CELL_ID_LEN /* hex characters of a cell id */

/* The outcomes of engi/schema.h, as OUTCOME_DONE, ... */
enum outcome {
#define OUTCOME_ENUM(id, name, scored, infra, why) OUTCOME_##id = ENGI_OUTCOME_##id,
	ENGI_OUTCOMES(OUTCOME_ENUM)
#undef OUTCOME_ENUM
	    OUTCOME_COUNT = ENGI_OUTCOME_COUNT
};

const char *outcome_name(int outcome);
/* -1 when unknown */
int outcome_from_name(const char *name);
/* Infrastructure failures (env_crash, infra_error) are retried and never
 * scored; --resume reruns them. */
int outcome_is_infra(int outcome);

/* Why an episode could not be run (record.infra): what the report counts
 * under "not run". env_crash episodes carry INFRA_ENV_LOST. */
#define INFRA_ENV_LOST	       ENGI_INFRA_ENV_LOST
#define INFRA_ENDPOINT	       "endpoint unavailable"
#define INFRA_AUTH	       "authentication refused"
#define INFRA_KEY_UNSET	       "api key not set"
#define INFRA_VERIFIER_CRASH   "verifier crashed"
#define INFRA_VERIFIER_TIMEOUT "verifier timed out"
/* a checked setup step of the task (SCHEMA.md `setup`) failed */
#define INFRA_SETUP_FAILED "setup failed"
/* the sweep stopped while the episode's verification ran or waited */
#define INFRA_VERIFY_STOPPED "verifier interrupted"
/* a task's judge model (llm_judge.h) could not be reached, or refused or
 * lacked its key; or answered no verdict in its attempts */
#define INFRA_JUDGE_UNAVAILABLE "judge unavailable"
#define INFRA_JUDGE_NO_VERDICT	"judge gave no verdict"
#define INFRA_REASON_MAX	sizeof(((struct record *)0)->infra)

struct artifact {
	char path[256]; /* relative to <out>/artifacts/<cell>/ */
	uint64_t bytes;
	char sha256[65];
	char note[128]; /* why it was not copied, that its secrets were scrubbed, or empty */
};

struct record {
	/* the fields of engi/schema.h's list, in its order */
	ENGI_EPISODE_FIELDS(ENGI_REC_MEMBER_)

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

/* The outcome and the assertion states are values of their lists, else
 * ENGI_EINVALID naming the record: what every writer checks first. */
int record_check_values(const struct record *r, struct engi_error *err);

/* One line of JSON, no newline; caller frees with engi_free. */
int record_to_json(const struct record *r, char **out, size_t *len, struct engi_error *err);
int record_from_json(const char *text, size_t len, struct record *r, struct engi_error *err);
/* The same line with the trace left out ("trace": "", "trace_raw_len": 0):
 * what travels between ranks beside the trace's own bytes. */
int record_to_json_bare(const struct record *r, char **out, size_t *len, struct engi_error *err);
/* record_to_json's line, byte for byte, of the record whose bare line is
 * bare (n bytes) and whose trace is trace (trace_len bytes of zstd,
 * trace_raw_len uncompressed): its base64 put in place, no JSON parsed. */
int record_json_with_trace(const char *bare, size_t n, const unsigned char *trace, size_t trace_len,
			   size_t trace_raw_len, char **out, size_t *len, struct engi_error *err);

/* The record's episode row (struct engi_res_episode) and back: every field
 * of the list, texts cut to the narrower width (a record's always fit its
 * row). record_from_row sets the fields only: arrays and trace stay; an
 * unknown outcome is ENGI_EPARSE. */
struct engi_res_episode;
struct engi_results;
/* From a results file's frozen configuration (config_json, may be NULL):
 * the suite's refused tasks, source and reasons ("35 windows guest, ...")
 * into res; left as they are when it has none. */
void record_config_suite(const char *config_json, struct engi_results *res);

void record_to_row(const struct record *r, struct engi_res_episode *e);
int record_from_row(struct record *r, const struct engi_res_episode *e, struct engi_error *err);

#endif
