/*
 * A cell's result between ranks (src/sweep/payload.h): packed from a record
 * and opened again, the head carries what rank 0 decides on and the body is
 * the record as the journal writes it; a short, foreign, mislabelled or
 * truncated payload is refused with a reason, never read past its end.
 */
#include "check.h"
#include "engi/alloc.h"
#include "payload.h"
#include "record.h"

#include <stdio.h>
#include <string.h>

static void make_record(struct record *r)
{
	record_init(r);
	snprintf(r->cell, sizeof(r->cell), "%s", "0123456789abcdef");
	snprintf(r->task_id, sizeof(r->task_id), "%s", "bracket");
	snprintf(r->model, sizeof(r->model), "%s", "m");
	snprintf(r->condition, sizeof(r->condition), "%s", "base");
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
}

int main(void)
{
	struct record r;
	make_record(&r);
	struct engi_error e;
	engi_error_init(&e);
	char *p = NULL;
	size_t len = 0;
	CHECK_INT(payload_pack(&r, 17, &p, &len, &e), 0);
	CHECK(p != NULL && len > sizeof(struct payload_head));

	/* the head: what rank 0 reads without parsing the record */
	struct payload_head h;
	const char *body = NULL;
	size_t blen = 0;
	CHECK_INT(payload_open(p, len, 17, &h, &body, &blen, &e), 0);
	CHECK_INT(h.cell, 17);
	CHECK_INT(h.outcome, OUTCOME_DONE);
	CHECK_INT(h.success, 1);
	CHECK_INT(h.turns, 7);
	CHECK_INT(h.tokens_in, 12345);
	CHECK_INT(h.tokens_out, 678);
	CHECK_NEAR(h.score, 0.75, 0);
	CHECK_NEAR(h.cost_usd, 1.25, 0);
	CHECK_NEAR(h.wall_s, 42.5, 0);

	/* the body: the journal's line, the same bytes record_to_json gives */
	char *json = NULL;
	size_t jlen = 0;
	CHECK_INT(record_to_json(&r, &json, &jlen, &e), 0);
	CHECK_INT(blen, jlen);
	CHECK(json && body && memcmp(body, json, jlen) == 0);
	struct record back;
	record_init(&back);
	CHECK_INT(record_from_json(body, blen, &back, &e), 0);
	CHECK(strcmp(back.cell, r.cell) == 0);
	CHECK_INT(back.trial, 2);
	record_release(&back);
	engi_free(json);

	/* another cell's result */
	engi_error_init(&e);
	CHECK(payload_open(p, len, 18, &h, &body, &blen, &e) < 0);
	CHECK(strstr(e.msg, "cell index 18") != NULL);
	/* cut short: the head's length disagrees */
	engi_error_init(&e);
	CHECK(payload_open(p, len - 1, 17, &h, &body, &blen, &e) < 0);
	CHECK(strstr(e.msg, "bytes of record") != NULL);
	/* shorter than a head */
	engi_error_init(&e);
	CHECK(payload_open(p, 5, 17, &h, &body, &blen, &e) < 0);
	CHECK(strstr(e.msg, "shorter than its head") != NULL);
	/* another layout */
	p[0] ^= 0x55;
	engi_error_init(&e);
	CHECK(payload_open(p, len, 17, &h, &body, &blen, &e) < 0);
	CHECK(strstr(e.msg, "magic") != NULL);
	engi_free(p);
	record_release(&r);
	return check_exit();
}
