#include "engi/evidence.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include "strtab.h"
#include "textout.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OUTPUT_CAP ((size_t)64 << 20)
#define ARM_KEY	   130

enum { SEEN = 1, FAILED = 2 };

void engi_evidence_init(struct engi_evidence *ev)
{
	memset(ev, 0, sizeof *ev);
}

void engi_evidence_release(struct engi_evidence *ev)
{
	engi_free(ev->stages);
	engi_free(ev->arms);
	engi_free(ev->counts);
	engi_strpool_free(&ev->names);
	engi_evidence_init(ev);
}

static int is_scored(const char *outcome, size_t width)
{
	return engi_outcome_scored(engi_outcome_find(outcome, width));
}

static void field(char *dst, size_t size, const char *src, size_t width)
{
	size_t n = strnlen(src, width);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

struct ev_ctx {
	size_t ne;
	char (*cell)[ENGI_CELL_STR + 1];
	char (*task)[65];
	char (*arm)[ARM_KEY];
	size_t *ep_task, *ep_arm; /* dense ids */
	unsigned char *scored;
	size_t ntasks, narms;
	size_t *arm_first; /* an episode of each arm, for its names */
	struct strtab cells, tasks, arms;
	unsigned char *state;	/* episode x stage */
	unsigned char *applies; /* task x stage */
	double *sum;		/* arm x task */
	size_t *cnt;
	unsigned char *imperfect;
};

static void ctx_release(struct ev_ctx *c)
{
	engi_free(c->cell);
	engi_free(c->task);
	engi_free(c->arm);
	engi_free(c->ep_task);
	engi_free(c->ep_arm);
	engi_free(c->scored);
	engi_free(c->arm_first);
	engi_strtab_release(&c->cells);
	engi_strtab_release(&c->tasks);
	engi_strtab_release(&c->arms);
	engi_free(c->state);
	engi_free(c->applies);
	engi_free(c->sum);
	engi_free(c->cnt);
	engi_free(c->imperfect);
}

static int index_episodes(struct ev_ctx *c, const struct engi_results *res, struct engi_error *err)
{
	size_t ne = res->nepisodes;
	c->ne = ne;
	c->cell = engi_reallocarray(NULL, ne + 1, sizeof *c->cell);
	c->task = engi_reallocarray(NULL, ne + 1, sizeof *c->task);
	c->arm = engi_reallocarray(NULL, ne + 1, sizeof *c->arm);
	c->ep_task = engi_reallocarray(NULL, ne + 1, sizeof *c->ep_task);
	c->ep_arm = engi_reallocarray(NULL, ne + 1, sizeof *c->ep_arm);
	c->scored = engi_calloc(ne + 1, 1);
	c->arm_first = engi_reallocarray(NULL, ne + 1, sizeof *c->arm_first);
	if (!c->cell || !c->task || !c->arm || !c->ep_task || !c->ep_arm || !c->scored ||
	    !c->arm_first)
		RAISE(err, ENGI_ENOMEM, "out of memory indexing %zu episodes", ne);
	for (size_t i = 0; i < ne; i++) {
		const struct engi_res_episode *e = &res->episodes[i];
		field(c->cell[i], sizeof c->cell[i], e->cell, sizeof e->cell);
		field(c->task[i], sizeof c->task[i], e->task_id, sizeof e->task_id);
		char m[65], k[65];
		field(m, sizeof m, e->model, sizeof e->model);
		field(k, sizeof k, e->condition, sizeof e->condition);
		snprintf(c->arm[i], ARM_KEY, "%s\x1f%s", m, k);
		c->scored[i] = (unsigned char)is_scored(e->outcome, sizeof e->outcome);
		/* the first record of a cell keeps its assertions */
		if (engi_strtab_get(&c->cells, c->cell[i]) == SIZE_MAX)
			TRY(engi_strtab_put(&c->cells, c->cell[i], i, err));
		size_t t = engi_strtab_get(&c->tasks, c->task[i]);
		if (t == SIZE_MAX) {
			t = c->ntasks++;
			TRY(engi_strtab_put(&c->tasks, c->task[i], t, err));
		}
		c->ep_task[i] = t;
		size_t a = engi_strtab_get(&c->arms, c->arm[i]);
		if (a == SIZE_MAX) {
			a = c->narms++;
			c->arm_first[a] = i;
			TRY(engi_strtab_put(&c->arms, c->arm[i], a, err));
		}
		c->ep_arm[i] = a;
	}
	return 0;
}

static int stage_id(struct engi_evidence *ev, const char *s, size_t *id, struct engi_error *err)
{
	for (size_t i = 0; i < ev->nstages; i++)
		if (!strcmp(ev->stages[i], s)) {
			*id = i;
			return 0;
		}
	if (ev->nstages == ENGI_EVIDENCE_STAGES_MAX)
		RAISE(err, ENGI_EINVALID, "more than %d assertion stages (at '%.80s')",
		      ENGI_EVIDENCE_STAGES_MAX, s);
	TRY(engi_strpool_add(&ev->names, s, &ev->stages[ev->nstages], NULL, err));
	*id = ev->nstages++;
	return 0;
}

static int compute(struct engi_evidence *ev, struct ev_ctx *c, const struct engi_results *res,
		   struct engi_error *err)
{
	TRY(index_episodes(c, res, err));
	size_t ne = c->ne, nt = c->ntasks, na = c->narms;
	const size_t S = ENGI_EVIDENCE_STAGES_MAX;
	ev->stages = engi_calloc(S, sizeof *ev->stages);
	c->state = engi_calloc(ne * S + 1, 1);
	c->applies = engi_calloc(nt * S + 1, 1);
	if (na && nt > SIZE_MAX / sizeof(double) / na)
		RAISE(err, ENGI_EINVALID, "%zu tasks x %zu arms is too large", nt, na);
	c->sum = engi_calloc(na * nt + 1, sizeof *c->sum);
	c->cnt = engi_calloc(na * nt + 1, sizeof *c->cnt);
	c->imperfect = engi_calloc(na * nt + 1, 1);
	if (!ev->stages || !c->state || !c->applies || !c->sum || !c->cnt || !c->imperfect)
		RAISE(err, ENGI_ENOMEM, "out of memory for the evidence ladder");

	for (size_t i = 0; i < res->nassertions; i++) {
		const struct engi_res_assertion *as = &res->assertions[i];
		char cell[ENGI_CELL_STR + 1], state[17];
		field(cell, sizeof cell, as->cell, sizeof as->cell);
		field(state, sizeof state, as->state, sizeof as->state);
		size_t e = engi_strtab_get(&c->cells, cell);
		if (e == SIZE_MAX) {
			ev->assertions_orphan++;
			continue;
		}
		if (!as->required || !c->scored[e] || !strcmp(state, "inapplicable")) {
			ev->assertions_ignored++;
			continue;
		}
		size_t s = 0;
		TRY(stage_id(ev, engi_res_str(res, as->stage), &s, err));
		c->state[e * S + s] |= SEEN;
		if (strcmp(state, "pass"))
			c->state[e * S + s] |= FAILED;
		c->applies[c->ep_task[e] * S + s] = 1;
		ev->assertions_used++;
	}

	size_t ns = ev->nstages;
	ev->arms = engi_calloc(na + 1, sizeof *ev->arms);
	ev->counts = engi_calloc(na * (3 * ns + 1) + 1, sizeof *ev->counts);
	if (!ev->arms || !ev->counts)
		RAISE(err, ENGI_ENOMEM, "out of memory for the evidence ladder");
	ev->narms = na;
	for (size_t a = 0; a < na; a++) {
		struct engi_evidence_arm *arm = &ev->arms[a];
		const struct engi_res_episode *e = &res->episodes[c->arm_first[a]];
		TRY(engi_strpool_add(&ev->names, engi_res_str(res, e->model), &arm->model, NULL,
				     err));
		TRY(engi_strpool_add(&ev->names, engi_res_str(res, e->condition), &arm->condition,
				     NULL, err));
		size_t *base = ev->counts + a * (3 * ns + 1);
		arm->denominator = base;
		arm->passed = base + ns;
		arm->first_failed = base + 2 * ns;
	}
	for (size_t i = 0; i < ne; i++) {
		const struct engi_res_episode *e = &res->episodes[i];
		struct engi_evidence_arm *arm = &ev->arms[c->ep_arm[i]];
		if (isfinite(e->cost_usd))
			arm->cost_usd += e->cost_usd;
		if (!c->scored[i])
			continue;
		if (!isfinite(e->score))
			RAISE(err, ENGI_EINVALID,
			      "episode %zu (cell '%s') has a score that is not "
			      "finite",
			      i, c->cell[i]);
		arm->episodes++;
		size_t at = c->ep_arm[i] * nt + c->ep_task[i];
		c->sum[at] += e->score;
		c->cnt[at]++;
		if (!(e->score >= 1.0))
			c->imperfect[at] = 1;
		size_t first = ns;
		for (size_t s = 0; s < ns; s++) {
			if (!c->applies[c->ep_task[i] * S + s])
				continue;
			unsigned char st = c->state[i * S + s];
			arm->denominator[s]++;
			if (st == SEEN)
				arm->passed[s]++;
			else if (first == ns)
				first = s;
		}
		arm->first_failed[first]++;
	}
	for (size_t a = 0; a < na; a++) {
		struct engi_evidence_arm *arm = &ev->arms[a];
		double total = 0.0;
		for (size_t t = 0; t < nt; t++) {
			size_t at = a * nt + t;
			if (!c->cnt[at])
				continue;
			arm->tasks++;
			total += c->sum[at] / (double)c->cnt[at];
			if (!c->imperfect[at])
				arm->perfect++;
		}
		arm->score_x100 = arm->tasks ? 100.0 * total / (double)arm->tasks : NAN;
	}
	return 0;
}

int engi_evidence_compute(struct engi_evidence *ev, const struct engi_results *res,
			  struct engi_error *err)
{
	struct ev_ctx c;
	memset(&c, 0, sizeof c);
	int rc = compute(ev, &c, res, err);
	ctx_release(&c);
	return rc;
}

/* ---- rendering ---- */

static void md_name(struct engi_dynbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '\\' || *s == '`' || *s == '*' || *s == '_')
			engi_textout(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			engi_textout(b, " ");
		else
			engi_textout(b, "%c", *s);
	}
}

static void md_arm(struct engi_dynbuf *b, const struct engi_evidence_arm *a)
{
	engi_textout(b, "| ");
	md_name(b, a->model);
	engi_textout(b, " | ");
	md_name(b, a->condition);
	engi_textout(b, " |");
}

static double ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}

static void md_money(struct engi_dynbuf *b, double v)
{
	if (isfinite(v))
		engi_textout(b, " %.4f |", v);
	else
		engi_textout(b, " – |");
}

static void render_markdown(struct engi_dynbuf *b, const struct engi_evidence *ev)
{
	size_t ns = ev->nstages;
	if (ns) {
		engi_textout(b,
			     "## Evidence ladder\n\nDenominator: per model and "
			     "stage, the scored episodes of the tasks where the "
			     "stage applies (a required, applicable assertion of "
			     "that stage on some episode of the task); an episode "
			     "without a verdict there, or with fail or unavailable, "
			     "counts as a failure. %zu assertions used, %zu ignored "
			     "(optional, inapplicable or of unscored episodes), %zu "
			     "naming no recorded episode.\n\n| model | condition |",
			     ev->assertions_used, ev->assertions_ignored, ev->assertions_orphan);
		for (size_t s = 0; s < ns; s++) {
			engi_textout(b, " ");
			md_name(b, ev->stages[s]);
			engi_textout(b, " |");
		}
		engi_textout(b, "\n|---|---|");
		for (size_t s = 0; s < ns; s++)
			engi_textout(b, "---:|");
		engi_textout(b, "\n");
		for (size_t a = 0; a < ev->narms; a++) {
			const struct engi_evidence_arm *arm = &ev->arms[a];
			md_arm(b, arm);
			for (size_t s = 0; s < ns; s++) {
				if (!arm->denominator[s]) {
					engi_textout(b, " – |");
					continue;
				}
				engi_textout(b, " %.1f %% (%zu/%zu) |",
					     100.0 * (double)arm->passed[s] /
						 (double)arm->denominator[s],
					     arm->passed[s], arm->denominator[s]);
			}
			engi_textout(b, "\n");
		}
		engi_textout(b, "\n## First failed stage\n\nDenominator: per model, "
				"the scored episodes; each counted once, at the first "
				"applicable stage it does not pass.\n\n| model | "
				"condition | episodes |");
		for (size_t s = 0; s < ns; s++) {
			engi_textout(b, " ");
			md_name(b, ev->stages[s]);
			engi_textout(b, " |");
		}
		engi_textout(b, " none |\n|---|---|---:|");
		for (size_t s = 0; s <= ns; s++)
			engi_textout(b, "---:|");
		engi_textout(b, "\n");
		for (size_t a = 0; a < ev->narms; a++) {
			const struct engi_evidence_arm *arm = &ev->arms[a];
			md_arm(b, arm);
			engi_textout(b, " %zu |", arm->episodes);
			for (size_t s = 0; s <= ns; s++)
				engi_textout(b, " %zu |", arm->first_failed[s]);
			engi_textout(b, "\n");
		}
		engi_textout(b, "\n");
	}
	engi_textout(b, "## Perfect tasks and cost\n\nDenominator: per model, the tasks "
			"with a scored episode. A perfect task: every scored trial "
			"scores 1. Cost: summed over every recorded episode; per score "
			"point: cost / score x100.\n\n| model | condition | tasks | "
			"perfect tasks | perfect-task rate | cost (USD) | per task | "
			"per score point |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t a = 0; a < ev->narms; a++) {
		const struct engi_evidence_arm *arm = &ev->arms[a];
		md_arm(b, arm);
		engi_textout(b, " %zu | %zu |", arm->tasks, arm->perfect);
		if (arm->tasks)
			engi_textout(b, " %.1f %% |",
				     100.0 * (double)arm->perfect / (double)arm->tasks);
		else
			engi_textout(b, " – |");
		md_money(b, arm->cost_usd);
		md_money(b, ratio(arm->cost_usd, (double)arm->tasks));
		md_money(b, ratio(arm->cost_usd, arm->score_x100));
		engi_textout(b, "\n");
	}
	engi_textout(b, "\n");
}

int engi_evidence_write_markdown(const struct engi_evidence *ev, FILE *f, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, OUTPUT_CAP);
	render_markdown(&b, ev);
	int rc = engi_textout_check(&b, "evidence", OUTPUT_CAP, err);
	if (rc == 0 && b.len && fwrite(b.buf, 1, b.len, f) != b.len)
		rc = engi_raise(err, ENGI_EIO, "cannot write the evidence tables: %s",
				strerror(errno));
	engi_dynbuf_release(&b);
	return rc;
}

static void csv_num(struct engi_dynbuf *b, double v)
{
	if (isfinite(v))
		engi_textout(b, ",%.6f", v);
	else
		engi_textout(b, ",");
}

static void csv_arm(struct engi_dynbuf *b, const struct engi_evidence_arm *a)
{
	engi_textout_csv_str(b, a->model);
	engi_textout(b, ",");
	engi_textout_csv_str(b, a->condition);
	engi_textout(b, ",%zu,%zu,%zu", a->episodes, a->tasks, a->perfect);
	csv_num(b, ratio((double)a->perfect, (double)a->tasks));
	csv_num(b, a->score_x100);
	csv_num(b, a->cost_usd);
	csv_num(b, ratio(a->cost_usd, (double)a->tasks));
	csv_num(b, ratio(a->cost_usd, a->score_x100));
	engi_textout(b, ",");
}

int engi_evidence_write_csv(const struct engi_evidence *ev, const char *path,
			    struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, OUTPUT_CAP);
	engi_textout(&b, "model,condition,episodes,tasks,perfect_tasks,perfect_rate,"
			 "score_x100,cost_usd,cost_per_task,cost_per_point,stage,"
			 "denominator,passed,pass_rate,first_failed\r\n");
	for (size_t a = 0; a < ev->narms; a++) {
		const struct engi_evidence_arm *arm = &ev->arms[a];
		for (size_t s = 0; s < ev->nstages; s++) {
			csv_arm(&b, arm);
			engi_textout_csv_str(&b, ev->stages[s]);
			engi_textout(&b, ",%zu,%zu", arm->denominator[s], arm->passed[s]);
			csv_num(&b, ratio((double)arm->passed[s], (double)arm->denominator[s]));
			engi_textout(&b, ",%zu\r\n", arm->first_failed[s]);
		}
		csv_arm(&b, arm);
		engi_textout(&b, "none,,,,%zu\r\n", arm->first_failed[ev->nstages]);
	}
	int rc = engi_textout_check(&b, "evidence", OUTPUT_CAP, err);
	FILE *f = rc == 0 ? fopen(path, "wb") : NULL;
	if (rc == 0 && !f)
		rc = engi_raise(err, ENGI_EIO, "cannot create '%s': %s", path, strerror(errno));
	if (f) {
		int ok = fwrite(b.buf, 1, b.len, f) == b.len;
		ok = (fclose(f) == 0) && ok;
		if (!ok)
			rc = engi_raise(err, ENGI_EIO, "cannot write '%s': %s", path,
					strerror(errno));
	}
	engi_dynbuf_release(&b);
	return rc;
}
