/*
 * payload.c - a cell's result between ranks: fixed-layout head, record body
 * (payload.h).
 */
#include "payload.h"

#include <string.h>

#include "engi/alloc.h"

int payload_pack(const struct record *r, size_t cell, char **out, size_t *len,
		 struct engi_error *err)
{
	*out = NULL;
	*len = 0;
	char *json = NULL;
	size_t n = 0;
	TRY(record_to_json(r, &json, &n, err));
	struct payload_head h = {
	    .magic = PAYLOAD_HEAD_MAGIC,
	    .outcome = (int32_t)r->outcome,
	    .cell = (uint64_t)cell,
	    .body_len = (uint64_t)n,
	    .success = r->success ? 1 : 0,
	    .turns = (int32_t)r->turns,
	    .score = r->score,
	    .cost_usd = r->cost_usd,
	    .wall_s = r->wall_s,
	    .tokens_in = r->tokens_in,
	    .tokens_out = r->tokens_out,
	};
	char *p = n <= SIZE_MAX - sizeof h - 1 ? engi_malloc(sizeof h + n + 1) : NULL;
	if (!p) {
		engi_free(json);
		RAISE(err, ENGI_ENOMEM, "out of memory packing the result of cell %s", r->cell);
	}
	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, json, n);
	p[sizeof h + n] = '\0';
	engi_free(json);
	*out = p;
	*len = sizeof h + n;
	return 0;
}

int payload_open(const char *p, size_t len, size_t cell, struct payload_head *head,
		 const char **body, size_t *body_len, struct engi_error *err)
{
	if (len < sizeof *head)
		RAISE(err, ENGI_EINVALID, "a result of %zu bytes is shorter than its head (%zu)",
		      len, sizeof *head);
	memcpy(head, p, sizeof *head);
	if (head->magic != PAYLOAD_HEAD_MAGIC)
		RAISE(err, ENGI_EINVALID,
		      "a result's head has magic 0x%08x, not 0x%08x: ranks of different builds?",
		      (unsigned)head->magic, (unsigned)PAYLOAD_HEAD_MAGIC);
	if (head->body_len != (uint64_t)(len - sizeof *head))
		RAISE(err, ENGI_EINVALID, "a result's head says %llu bytes of record, %zu came",
		      (unsigned long long)head->body_len, len - sizeof *head);
	if (head->cell != (uint64_t)cell)
		RAISE(err, ENGI_EINVALID, "the result of cell index %zu carried cell index %llu",
		      cell, (unsigned long long)head->cell);
	*body = p + sizeof *head;
	*body_len = len - sizeof *head;
	return 0;
}
