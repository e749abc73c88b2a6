/*
 * A cell's result between ranks (src/sweep/payload.h): packed from a record
 * and read back, the head carries what rank 0 decides on, the record comes
 * back whole with its trace, and the journal's line built from the parts
 * is record_to_json's, byte for byte; a short, foreign, mislabelled or
 * truncated payload is refused with a reason, never read past its end.
 */
#include "check.h"
#include "engi/alloc.h"
#include "payload.h"
#include "record.h"

#include <stdio.h>
#include <string.h>

static void make_record(struct record *r, size_t trace_len)
{
	record_init(r);
	snprintf(r->cell, sizeof(r->cell), "%s", "0123456789abcdef");
	snprintf(r->task_id, sizeof(r->task_id), "%s", "bracket");
	snprintf(r->model, sizeof(r->model), "%s", "m");
	snprintf(r->condition, sizeof(r->condition), "%s", "base");
	snprintf(r->message, sizeof(r->message), "%s", "said \"done\" at last");
	r->trial = 2;
	r->outcome = OUTCOME_DONE;
	r->success = 1;
	r->score = 0.75;
	r->cost_usd = 1.25;
	r->wall_s = 42.5;
	r->turns = 7;
	r->tokens_in = 12345;
	r->tokens_out = 678;
	r->attempts = 1;
	if (trace_len) {
		r->trace = engi_malloc(trace_len);
		for (size_t i = 0; i < trace_len; i++)
			r->trace[i] = (unsigned char)(i * 131 + 7);
		r->trace_len = trace_len;
		r->trace_raw_len = 3 * trace_len + 1;
	}
}

static void round_trip(size_t trace_len)
{
	struct record r;
	make_record(&r, trace_len);
	struct engi_error e;
	engi_error_init(&e);
	char *p = NULL;
	size_t len = 0;
	CHECK_INT(payload_pack(&r, 17, &p, &len, &e), 0);
	CHECK(p != NULL && len > sizeof(struct payload_head) + trace_len);

	/* the head: what rank 0 reads without parsing anything */
	struct payload_head h;
	const char *json;
	const unsigned char *trace;
	CHECK_INT(payload_open(p, len, 17, &h, &json, &trace, &e), 0);
	CHECK_INT(h.cell, 17);
	CHECK_INT(h.outcome, OUTCOME_DONE);
	CHECK_INT(h.success, 1);
	CHECK_INT(h.turns, 7);
	CHECK_INT(h.tokens_in, 12345);
	CHECK_INT(h.tokens_out, 678);
	CHECK_INT(h.trace_len, trace_len);
	CHECK_INT(h.trace_raw_len, trace_len ? 3 * trace_len + 1 : 0);
	CHECK_NEAR(h.score, 0.75, 0);
	CHECK_NEAR(h.cost_usd, 1.25, 0);
	CHECK_NEAR(h.wall_s, 42.5, 0);
	/* the record's JSON travels without the trace */
	CHECK(memmem(json, h.json_len, "\"trace\":\"\"", 10) != NULL);

	/* the record back, its trace whole; the journal's line byte for byte */
	struct record back;
	char *line = NULL;
	size_t n = 0;
	CHECK_INT(payload_read(p, len, 17, r.cell, &h, &back, &line, &n, &e), 0);
	CHECK(strcmp(back.cell, r.cell) == 0);
	CHECK_INT(back.trial, 2);
	CHECK(strcmp(back.message, r.message) == 0);
	CHECK_INT(back.trace_len, trace_len);
	CHECK_INT(back.trace_raw_len, r.trace_raw_len);
	CHECK(trace_len == 0 || memcmp(back.trace, r.trace, trace_len) == 0);
	char *want = NULL;
	size_t wn = 0;
	CHECK_INT(record_to_json(&r, &want, &wn, &e), 0);
	CHECK_INT(n, wn);
	CHECK(line && want && memcmp(line, want, wn) == 0);
	/* and the line reads back as the record */
	struct record again;
	record_init(&again);
	CHECK_INT(record_from_json(line, n, &again, &e), 0);
	CHECK_INT(again.trace_len, trace_len);
	CHECK(trace_len == 0 || memcmp(again.trace, r.trace, trace_len) == 0);
	record_release(&again);
	record_release(&back);
	engi_free(want);
	engi_free(line);

	/* another cell's result, by index and by name */
	engi_error_init(&e);
	CHECK(payload_open(p, len, 18, &h, &json, &trace, &e) < 0);
	CHECK(strstr(e.msg, "cell index 18") != NULL);
	engi_error_init(&e);
	CHECK(payload_read(p, len, 17, "fedcba9876543210", &h, &back, NULL, NULL, &e) < 0);
	CHECK(strstr(e.msg, "carried the record of cell 0123456789abcdef") != NULL);
	record_release(&back);
	/* cut short: the head's lengths disagree */
	engi_error_init(&e);
	CHECK(payload_open(p, len - 1, 17, &h, &json, &trace, &e) < 0);
	CHECK(strstr(e.msg, "of trace, ") != NULL);
	/* shorter than a head */
	engi_error_init(&e);
	CHECK(payload_open(p, 5, 17, &h, &json, &trace, &e) < 0);
	CHECK(strstr(e.msg, "shorter than its head") != NULL);
	/* a record that is not JSON */
	p[sizeof(struct payload_head)] = 'x';
	engi_error_init(&e);
	CHECK(payload_read(p, len, 17, r.cell, &h, &back, NULL, NULL, &e) < 0);
	record_release(&back);
	/* another layout */
	p[0] ^= 0x55;
	engi_error_init(&e);
	CHECK(payload_open(p, len, 17, &h, &json, &trace, &e) < 0);
	CHECK(strstr(e.msg, "magic") != NULL);
	engi_free(p);
	record_release(&r);
}

int main(void)
{
	round_trip(0);
	round_trip(1);
	round_trip(65537);
	/* a bare line that is not record_to_json_bare's is refused */
	struct engi_error e;
	engi_error_init(&e);
	char *out = NULL;
	size_t n = 0;
	CHECK(record_json_with_trace("{\"a\":1}", 7, NULL, 0, 0, &out, &n, &e) < 0);
	CHECK(out == NULL);
	return check_exit();
}
