/*
 * report_files.c - the report as CSV and JSON for programs: one list of
 * fields per row, written as a CSV line or a JSON object with the same keys
 * in the same order (report_render.h; the columns in engi/report.h).
 */
#include "report_render.h"

#include "engi/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_string(struct engi_dynbuf *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	engi_textout_str(o, "\"");
	for (size_t i = 0; i < n;) {
		unsigned char ch = s[i];
		if (ch == '"' || ch == '\\') {
			char esc[2] = {'\\', (char)ch};
			engi_textout_bytes(o, esc, 2);
		} else if (ch == '\n') {
			engi_textout_str(o, "\\n");
		} else if (ch == '\r') {
			engi_textout_str(o, "\\r");
		} else if (ch == '\t') {
			engi_textout_str(o, "\\t");
		} else if (ch == '\b') {
			engi_textout_str(o, "\\b");
		} else if (ch == '\f') {
			engi_textout_str(o, "\\f");
		} else if (ch < 0x20) {
			engi_textout(o, "\\u%04x", ch);
		} else if (ch < 0x80) {
			engi_textout_bytes(o, (const char *)&s[i], 1);
		} else {
			size_t len = engi_utf8_seq(&s[i], n - i);
			if (len) {
				engi_textout_bytes(o, (const char *)&s[i], len);
				i += len;
				continue;
			}
			engi_textout_str(o, "\\ufffd");
		}
		i++;
	}
	engi_textout_str(o, "\"");
}

/* ---- the row as a list of fields, shared by CSV and JSON ---- */

enum field_kind { F_STR, F_SIZE, F_I64, F_NUM };

struct field {
	const char *key;
	int kind;
	const char *s;
	size_t z;
	int64_t i;
	double x;
};

#define ROW_FIELDS 36

static void row_fields(const struct engi_report_data *d, const struct engi_report_row *r,
		       struct field *f)
{
	size_t n = 0;
/* clang-format off */
#define FS(k, v) f[n++] = (struct field){.key = k, .kind = F_STR, .s = (v)}
#define FZ(k, v) f[n++] = (struct field){.key = k, .kind = F_SIZE, .z = (v)}
#define FI(k, v) f[n++] = (struct field){.key = k, .kind = F_I64, .i = (v)}
#define FN(k, v) f[n++] = (struct field){.key = k, .kind = F_NUM, .x = (v)}
	/* clang-format on */
	FS("table", d->ntables ? d->table_name[r->table] : "overall");
	FS("group", r->group ? r->group : "");
	FS("model", r->model ? r->model : "");
	FS("condition", r->condition ? r->condition : "");
	FZ("tasks", r->tasks);
	FZ("episodes", r->episodes);
	FZ("scored", r->scored);
	FN("score_x100", r->score.mean);
	FN("ci_lo_x100", r->score.lo);
	FN("ci_hi_x100", r->score.hi);
	FS("ci_flag", engi_ci_flag_name(r->score.flag));
	FZ("ci_draws", r->score.draws);
	FN("reward_x100", r->reward.mean);
	FN("reward_lo_x100", r->reward.lo);
	FN("reward_hi_x100", r->reward.hi);
	FS("reward_flag", engi_ci_flag_name(r->reward.flag));
	FN("success_rate", r->success_rate);
	FZ("stable_success", r->stable_success);
	FZ("mixed", r->mixed);
	FZ("stable_failure", r->stable_failure);
	FZ("single_trial", r->single_trial);
#define FOUTCOME(id, name, scored, infra, why) FZ(name, r->outcomes[ENGI_REPORT_##id]);
	ENGI_OUTCOMES(FOUTCOME)
#undef FOUTCOME
	FZ("other_outcome", r->outcomes[ENGI_REPORT_OTHER]);
	FZ("not_run", r->not_run);
	FS("not_run_reasons", r->not_run_reasons ? r->not_run_reasons : "");
	FN("mean_turns", r->mean_turns);
	FN("mean_wall_s", r->mean_wall_s);
	FI("tokens_in", r->tokens_in);
	FI("tokens_out", r->tokens_out);
	FN("cost_usd", r->cost_usd);
#undef FS
#undef FZ
#undef FI
#undef FN
	BUG_ON(n != ROW_FIELDS);
}

/* Numbers in files: 12 significant digits, far beyond what a bootstrap
 * supports, and the same text on every machine (glibc rounds exactly). */
static void field_value(struct engi_dynbuf *o, const struct field *f, int json)
{
	switch (f->kind) {
	case F_STR:
		if (json)
			json_string(o, f->s);
		else
			engi_textout_csv_str(o, f->s);
		break;
	case F_SIZE:
		engi_textout(o, "%zu", f->z);
		break;
	case F_I64:
		engi_textout(o, "%" PRId64, f->i);
		break;
	default:
		if (isfinite(f->x))
			engi_textout(o, "%.12g", f->x);
		else if (json)
			engi_textout_str(o, "null");
		break;
	}
}

void engi_report_render_csv(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	struct field f[ROW_FIELDS];
	struct engi_report_row empty;
	memset(&empty, 0, sizeof(empty));
	row_fields(d, &empty, f);
	for (size_t i = 0; i < ROW_FIELDS; i++)
		engi_textout(o, "%s%s", i ? "," : "", f[i].key);
	engi_textout_str(o, "\r\n");
	for (size_t r = 0; r < d->nrows; r++) {
		row_fields(d, &d->rows[r], f);
		for (size_t i = 0; i < ROW_FIELDS; i++) {
			if (i)
				engi_textout_str(o, ",");
			field_value(o, &f[i], 0);
		}
		engi_textout_str(o, "\r\n");
	}
}

static double ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}

static void json_num(struct engi_dynbuf *o, const char *key, double v)
{
	if (isfinite(v))
		engi_textout(o, ", \"%s\": %.12g", key, v);
	else
		engi_textout(o, ", \"%s\": null", key);
}

/* The evidence ladder, the "evidence" member of the JSON file. */
static void json_evidence(struct engi_dynbuf *o, const struct engi_evidence *ev)
{
	engi_textout_str(o, ",\n  \"evidence\": {\"stages\": [");
	for (size_t s = 0; s < ev->nstages; s++) {
		engi_textout_str(o, s ? ", " : "");
		json_string(o, ev->stages[s]);
	}
	engi_textout_str(o, "],\n    \"arms\": [");
	for (size_t a = 0; a < ev->narms; a++) {
		const struct engi_evidence_arm *arm = &ev->arms[a];
		engi_textout_str(o, a ? ",\n      {\"model\": " : "\n      {\"model\": ");
		json_string(o, arm->model);
		engi_textout_str(o, ", \"condition\": ");
		json_string(o, arm->condition);
		engi_textout(o,
			     ", \"episodes\": %zu, \"tasks\": %zu, "
			     "\"perfect_tasks\": %zu",
			     arm->episodes, arm->tasks, arm->perfect);
		json_num(o, "perfect_rate", ratio((double)arm->perfect, (double)arm->tasks));
		json_num(o, "score_x100", arm->score_x100);
		json_num(o, "cost_usd", arm->cost_usd);
		json_num(o, "cost_per_task", ratio(arm->cost_usd, (double)arm->tasks));
		json_num(o, "cost_per_point", ratio(arm->cost_usd, arm->score_x100));
		engi_textout_str(o, ", \"ladder\": [");
		for (size_t s = 0; s < ev->nstages; s++) {
			engi_textout_str(o, s ? ", {\"stage\": " : "{\"stage\": ");
			json_string(o, ev->stages[s]);
			engi_textout(o, ", \"denominator\": %zu, \"passed\": %zu",
				     arm->denominator[s], arm->passed[s]);
			json_num(o, "pass_rate",
				 ratio((double)arm->passed[s], (double)arm->denominator[s]));
			engi_textout(o, ", \"first_failed\": %zu}", arm->first_failed[s]);
		}
		engi_textout(o, "], \"passed_every_stage\": %zu}", arm->first_failed[ev->nstages]);
	}
	engi_textout_str(o, ev->narms ? "\n    ]}" : "]}");
}

static void json_values(struct engi_dynbuf *o, const struct engi_report_value *v, size_t n)
{
	engi_textout_str(o, "[");
	for (size_t i = 0; i < n; i++) {
		engi_textout_str(o, i ? ", {\"value\": " : "{\"value\": ");
		json_string(o, v[i].value);
		engi_textout(o, ", \"episodes\": %zu}", v[i].episodes);
	}
	engi_textout_str(o, "]");
}

void engi_report_render_json(struct engi_dynbuf *o, const struct engi_report_data *d)
{
	engi_textout_str(o, "{\n  \"format\": \"engisweep-report\",\n"
			    "  \"format_version\": 3,\n");
	engi_textout(o,
		     "  \"bootstrap\": {\"seed\": %" PRIu64 ", \"draws\": %zu, "
		     "\"level\": %.12g, \"min_tasks\": %zu, \"interval\": \"%s\"},\n",
		     d->boot.seed, d->boot.draws, d->boot.level, d->boot.min_tasks,
		     engi_interval_name(d->boot.interval));
	engi_textout_str(o, "  \"episodes\": {\"planned\": ");
	if (d->planned)
		engi_textout(o, "%" PRIu64 ", \"missing\": %" PRIu64, d->planned, d->missing);
	else
		engi_textout_str(o, "null, \"missing\": null");
	engi_textout(o,
		     ", \"recorded\": %zu, \"extra\": %zu, \"duplicates\": %zu, "
		     "\"scored\": %zu, \"%s\": %zu, \"%s\": %zu, "
		     "\"other_outcome\": %zu, "
		     "\"unknown_task\": %zu, \"tasks_listed\": %zu, "
		     "\"tasks_unrun\": %zu},\n",
		     d->recorded, d->extra, d->duplicates, d->scored,
		     engi_outcome_name(ENGI_OUTCOME_ENV_CRASH), d->env_crash,
		     engi_outcome_name(ENGI_OUTCOME_INFRA_ERROR), d->infra_error, d->other_outcome,
		     d->unknown_task, d->tasks_listed, d->tasks_unrun);
	engi_textout_str(o, "  \"not_run\": [");
	for (size_t i = 0; i < d->nnot_run; i++) {
		const struct engi_report_not_run *n = &d->not_run[i];
		const struct engi_report_row *r = overall(d, n->arm);
		engi_textout_str(o, i ? ",\n    {\"model\": " : "\n    {\"model\": ");
		json_string(o, r->model);
		engi_textout_str(o, ", \"condition\": ");
		json_string(o, r->condition);
		engi_textout_str(o, ", \"reason\": ");
		json_string(o, n->reason);
		engi_textout(o, ", \"episodes\": %zu}", n->episodes);
	}
	engi_textout_str(o, d->nnot_run ? "\n  ],\n" : "],\n");
	engi_textout_str(o, "  \"provenance\": {\"versions\": ");
	json_values(o, d->versions, d->nversions);
	engi_textout_str(o, ", \"verifiers\": ");
	json_values(o, d->verifiers, d->nverifiers);
	engi_textout(o, ", \"mixed_versions\": %s, \"mixed_verifiers\": %s},\n",
		     d->mixed_versions ? "true" : "false", d->mixed_verifiers ? "true" : "false");
	engi_textout(o, "  \"clean_verification\": {\"episodes\": %zu, \"disagree\": %zu},\n",
		     d->clean_checked, d->clean_disagree);
	if (d->suite_refused) {
		engi_textout(o, "  \"suite_refused\": {\"tasks\": %" PRIu64 ", \"source\": ",
			     d->suite_refused);
		json_string(o, d->suite_source);
		engi_textout_str(o, ", \"reasons\": ");
		json_string(o, d->suite_refused_reasons);
		engi_textout_str(o, "},\n");
	}
	engi_textout_str(o, "  \"tables\": [");
	for (size_t t = 0; t < d->ntables; t++) {
		engi_textout_str(o, t ? ", " : "");
		json_string(o, d->table_name[t]);
	}
	engi_textout_str(o, "],\n");
	engi_textout_str(o, "  \"rows\": [");
	struct field f[ROW_FIELDS];
	for (size_t r = 0; r < d->nrows; r++) {
		row_fields(d, &d->rows[r], f);
		engi_textout_str(o, r ? ",\n    {" : "\n    {");
		for (size_t i = 0; i < ROW_FIELDS; i++) {
			engi_textout(o, "%s\"%s\": ", i ? ", " : "", f[i].key);
			field_value(o, &f[i], 1);
		}
		engi_textout_str(o, "}");
	}
	engi_textout_str(o, d->nrows ? "\n  ]" : "]");
	if (d->evidence)
		json_evidence(o, d->evidence);
	engi_textout_str(o, "\n}\n");
}
