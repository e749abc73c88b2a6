/*
 * payload.c - a cell's result between ranks: fixed-layout head, the record
 * without its trace, the trace (payload.h).
 */
#include "payload.h"

#include <string.h>

#include "engi/alloc.h"

int payload_pack(const struct record *r, size_t cell, char **out, size_t *len,
		 struct engi_error *err)
{
	*out = NULL;
	*len = 0;
	if (r->trace_len && !r->trace)
		RAISE(err, ENGI_EINVALID, "record '%s': trace of %zu bytes has no data", r->cell,
		      r->trace_len);
	char *json = NULL;
	size_t n = 0;
	TRY(record_to_json_bare(r, &json, &n, err));
	struct payload_head h = {
	    .magic = PAYLOAD_HEAD_MAGIC,
	    .outcome = (int32_t)r->outcome,
	    .cell = (uint64_t)cell,
	    .json_len = (uint64_t)n,
	    .trace_len = (uint64_t)r->trace_len,
	    .trace_raw_len = (uint64_t)r->trace_raw_len,
	    .success = r->success ? 1 : 0,
	    .turns = (int32_t)r->turns,
	    .score = r->score,
	    .cost_usd = r->cost_usd,
	    .wall_s = r->wall_s,
	    .tokens_in = r->tokens_in,
	    .tokens_out = r->tokens_out,
	};
	size_t total = sizeof h + n;
	char *p =
	    r->trace_len <= SIZE_MAX - total - 1 ? engi_malloc(total + r->trace_len + 1) : NULL;
	if (!p) {
		engi_free(json);
		RAISE(err, ENGI_ENOMEM, "out of memory packing the result of cell %s", r->cell);
	}
	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, json, n);
	if (r->trace_len)
		memcpy(p + total, r->trace, r->trace_len);
	p[total + r->trace_len] = '\0';
	engi_free(json);
	*out = p;
	*len = total + r->trace_len;
	return 0;
}

int payload_open(const char *p, size_t len, size_t cell, struct payload_head *head,
		 const char **json, const unsigned char **trace, struct engi_error *err)
{
	if (!p || len < sizeof *head)
		RAISE(err, ENGI_EINVALID, "a result of %zu bytes is shorter than its head (%zu)",
		      p ? len : 0, sizeof *head);
	memcpy(head, p, sizeof *head);
	if (head->magic != PAYLOAD_HEAD_MAGIC)
		RAISE(err, ENGI_EINVALID,
		      "a result's head has magic 0x%08x, not 0x%08x: ranks of different builds?",
		      (unsigned)head->magic, (unsigned)PAYLOAD_HEAD_MAGIC);
	size_t rest = len - sizeof *head;
	if (head->json_len > rest || head->trace_len != rest - head->json_len)
		RAISE(err, ENGI_EINVALID,
		      "a result's head says %llu bytes of record and %llu of trace, %zu came",
		      (unsigned long long)head->json_len, (unsigned long long)head->trace_len,
		      rest);
	if (head->cell != (uint64_t)cell)
		RAISE(err, ENGI_EINVALID, "the result of cell index %zu carried cell index %llu",
		      cell, (unsigned long long)head->cell);
	*json = p + sizeof *head;
	*trace = (const unsigned char *)*json + head->json_len;
	return 0;
}

int payload_read(const char *p, size_t len, size_t cell, const char *cell_id,
		 struct payload_head *head, struct record *r, char **line, size_t *line_len,
		 struct engi_error *err)
{
	const char *json;
	const unsigned char *trace;
	if (r)
		record_init(r);
	if (line) {
		*line = NULL;
		*line_len = 0;
	}
	TRY(payload_open(p, len, cell, head, &json, &trace, err));
	size_t n = (size_t)head->json_len, tn = (size_t)head->trace_len;
	if (r) {
		TRY(record_from_json(json, n, r, err));
		if (r->trace_len || r->trace_raw_len)
			RAISE(err, ENGI_EINVALID,
			      "the result of cell %s carried a trace in its record", cell_id);
		if (strcmp(r->cell, cell_id) != 0)
			RAISE(err, ENGI_EINVALID,
			      "the result of cell %s carried the record of cell %s", cell_id,
			      r->cell);
		if (tn) {
			r->trace = engi_malloc(tn);
			if (!r->trace)
				RAISE(err, ENGI_ENOMEM,
				      "out of memory reading the trace of cell %s", cell_id);
			memcpy(r->trace, trace, tn);
			r->trace_len = tn;
		}
		r->trace_raw_len = (size_t)head->trace_raw_len;
	}
	if (line)
		TRY(record_json_with_trace(json, n, trace, tn, (size_t)head->trace_raw_len, line,
					   line_len, err));
	return 0;
}
