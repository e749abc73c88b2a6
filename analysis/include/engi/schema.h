/*
 * schema.h - the one description of an episode record: its outcomes and its
 * fields, as X-macro lists. Everything that spells a field or an outcome
 * out is generated from here:
 *   struct engi_res_episode (engi/results.h) and struct record
 *       (src/core/record.h), the row and the record,
 *   the journal and wire line (record_to_json / record_from_json),
 *   the HDF5 /episodes compound type and its reader (src/store),
 *   the record from a row and back (record_to_row / record_from_row),
 *   the episodes CSV columns (analysis/csvin.c) and the outcome columns of
 *   the report (analysis/report_files.c, report_markdown.c), evidence and
 *   compare.
 * The names are the journal keys, the HDF5 members and the CSV columns
 * alike, and the order is the order of all of them: a new field goes where
 * it belongs and every path carries it; renaming or reordering one breaks
 * the files earlier versions wrote.
 *
 * Here because analysis/ depends on kernels only and src/ sees everything:
 * this header includes nothing of either.
 */
#ifndef ENGI_SCHEMA_H
#define ENGI_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

/* A cell id: 16 hex characters, then the NUL. */
#define ENGI_CELL_ID_LEN 16
#define ENGI_CELL_STR	 (ENGI_CELL_ID_LEN + 1)
/* a task id, NUL included: benchmarks' own ids reach 84 characters */
#define ENGI_TASK_ID_STR 128

/* The reason of an env_crash that names none (record.infra, the report). */
#define ENGI_INFRA_ENV_LOST "environment lost"
/* The reason of an infra_error that names none. */
#define ENGI_INFRA_NO_REASON "no reason given"

/*
 * X(ID, name, scored, infra, why): the terminal outcomes of an episode, in
 * the order of the report's columns. scored: counts for the score (the
 * agent's own result); infra: an infrastructure failure, retried and never
 * scored (--resume reruns it); why: the reason the report gives for one that
 * names none.
 */
#define ENGI_OUTCOMES(X)                                                                           \
	X(DONE, "done", 1, 0, "")                                                                  \
	X(FAIL_DECLARED, "fail_declared", 1, 0, "")                                                \
	X(TURN_LIMIT, "turn_limit", 1, 0, "")                                                      \
	X(TIME_LIMIT, "time_limit", 1, 0, "")                                                      \
	X(ENV_CRASH, "env_crash", 0, 1, ENGI_INFRA_ENV_LOST)                                       \
	X(INFRA_ERROR, "infra_error", 0, 1, ENGI_INFRA_NO_REASON)                                  \
	X(AGENT_ERROR, "agent_error", 1, 0, "")

enum engi_outcome {
#define ENGI_OUTCOME_ENUM_(id, name, scored, infra, why) ENGI_OUTCOME_##id,
	ENGI_OUTCOMES(ENGI_OUTCOME_ENUM_)
#undef ENGI_OUTCOME_ENUM_
	    ENGI_OUTCOME_COUNT
};

/* "unknown" outside the list */
const char *engi_outcome_name(int outcome);
/* The outcome of the first strnlen(s, width) bytes of s, -1 if none. */
int engi_outcome_find(const char *s, size_t width);
/* 0 outside the list */
int engi_outcome_scored(int outcome);
int engi_outcome_infra(int outcome);
/* The reason of an infrastructure outcome that names none, "" for others. */
const char *engi_outcome_why(int outcome);
/*
 * The names of the outcomes that are scored (scored 1) or not (0), or of
 * all (-1), in list order: the second to the next to last each after sep,
 * the last after last ("a, b or c" with ", " and " or "). Returns buf,
 * NUL-terminated, cut to size.
 */
char *engi_outcome_list(char *buf, size_t size, int scored, const char *sep, const char *last);

/*
 * X(name, kind, rec, row, since, csv, dflt): the fields of an episode.
 *   kind  S text, M text whose control characters the journal escapes (a
 *         message), O the outcome (an enum in the record, its name in the
 *         row), o an outcome that may be unknown (-1 in the record, "" in
 *         the row and the journal), I a count (int; int32 in the row), L a
 *         64-bit count, B a flag (0/1), D a number (double; NaN and
 *         infinities travel)
 *   rec   bytes of a text in struct record (the journal's limit), 0 else
 *   row   bytes of a text in struct engi_res_episode (the HDF5 width)
 *   since 0 for a field every journal and results file has; else the
 *         results format version (STORE_FORMAT_VERSION) that brought it:
 *         journals written before it lack it, and so do results files of
 *         an earlier format version (they read as the record's initial
 *         value: "", 0, or -1 for kind o)
 *   csv   the episodes CSV column: no (none), req (required), opt (dflt,
 *         a text, when empty), like (empty: the value of field dflt)
 */
#define ENGI_EPISODE_FIELDS(X)                                                                     \
	X(cell, S, ENGI_CELL_STR, ENGI_CELL_STR, 0, no, 0)                                         \
	X(task_id, S, ENGI_TASK_ID_STR, ENGI_TASK_ID_STR, 0, req, 0)                               \
	X(model, S, 64, 64, 0, req, 0)                                                             \
	X(condition, S, 64, 64, 0, opt, "base")                                                    \
	X(trial, I, 0, 0, 0, req, 0)                                                               \
	X(outcome, O, 0, 16, 0, opt, "done")                                                       \
	X(attempts, I, 0, 0, 0, no, 0) /* 1 + infrastructure retries */                            \
	X(success, B, 0, 0, 0, req, 0)                                                             \
	X(feasible, B, 0, 0, 0, like, success)                                                     \
	X(score, D, 0, 0, 0, req, 0)                                                               \
	X(quality, D, 0, 0, 0, no, 0)                                                              \
	X(turns, I, 0, 0, 0, opt, "0")                                                             \
	X(tokens_in, L, 0, 0, 0, opt, "0")                                                         \
	X(tokens_out, L, 0, 0, 0, opt, "0")                                                        \
	X(cost_usd, D, 0, 0, 0, opt, "0")                                                          \
	X(wall_s, D, 0, 0, 0, opt, "0")                                                            \
	X(env_s, D, 0, 0, 0, no, 0)                                                                \
	X(model_s, D, 0, 0, 0, no, 0)                                                              \
	X(verify_s, D, 0, 0, 0, no, 0)                                                             \
	X(started_at, D, 0, 0, 0, no, 0) /* unix time, seconds */                                  \
	X(rank, I, 0, 0, 0, no, 0)                                                                 \
	X(host, S, 64, 64, 0, no, 0)                                                               \
	X(run_id, S, 40, 40, 0, no, 0)	    /* which invocation produced it (resume checks) */     \
	X(message, M, 256, 256, 0, no, 0)   /* agent's summary or failure reason */                \
	X(infra, S, 32, 64, 1, opt, "")	    /* infrastructure outcomes: why, else "" */            \
	X(version, S, 32, 64, 1, opt, "")   /* engisweep version that ran and judged it */         \
	X(verifier, S, 64, 128, 1, opt, "") /* "kind@version" that judged it, or "" */             \
	/* the run's own end, before the verdict (--resume judges a verifier                       \
	 * failure again from it) */                                                               \
	X(run_outcome, o, 0, 16, 2, no, 0)                                                         \
	X(run_message, M, 256, 256, 2, no, 0)                                                      \
	/* the task's judges' model (run --judge): its usage, apart from the                       \
	 * agent's tokens_in, tokens_out and cost_usd and outside its limits */                    \
	X(judge_tokens_in, L, 0, 0, 3, no, 0)  /* since 3: judge request tokens */                 \
	X(judge_tokens_out, L, 0, 0, 3, no, 0) /* since 3: judge reply tokens */                   \
	X(judge_cost_usd, D, 0, 0, 3, no, 0)   /* since 3: judge dollars */

/* the field types of each kind, in the row and in the record */
#define ENGI_ROW_TYPE_S(name, size) char name[size]
#define ENGI_ROW_TYPE_M(name, size) char name[size]
#define ENGI_ROW_TYPE_O(name, size) char name[size]
#define ENGI_ROW_TYPE_o(name, size) char name[size]
#define ENGI_ROW_TYPE_I(name, size) int32_t name
#define ENGI_ROW_TYPE_L(name, size) int64_t name
#define ENGI_ROW_TYPE_B(name, size) int32_t name
#define ENGI_ROW_TYPE_D(name, size) double name

#define ENGI_REC_TYPE_S(name, size) char name[size]
#define ENGI_REC_TYPE_M(name, size) char name[size]
#define ENGI_REC_TYPE_O(name, size) int name /* enum engi_outcome */
#define ENGI_REC_TYPE_o(name, size) int name /* enum engi_outcome, or -1 */
#define ENGI_REC_TYPE_I(name, size) int name
#define ENGI_REC_TYPE_L(name, size) int64_t name
#define ENGI_REC_TYPE_B(name, size) int name
#define ENGI_REC_TYPE_D(name, size) double name

#define ENGI_ROW_MEMBER_(name, kind, rec, row, since, csv, dflt) ENGI_ROW_TYPE_##kind(name, row);
#define ENGI_REC_MEMBER_(name, kind, rec, row, since, csv, dflt) ENGI_REC_TYPE_##kind(name, rec);

/* Kinds as values, for tables generated from the list. */
enum engi_field_kind {
	ENGI_FK_S,
	ENGI_FK_M,
	ENGI_FK_O,
	ENGI_FK_o,
	ENGI_FK_I,
	ENGI_FK_L,
	ENGI_FK_B,
	ENGI_FK_D
};

/* The episodes CSV modes, as values. */
enum engi_csv_mode { ENGI_CSV_no, ENGI_CSV_req, ENGI_CSV_opt, ENGI_CSV_like };

#endif
