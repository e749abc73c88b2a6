/*
 * Fuzz target: journal lines (record_from_json through journal_read). The
 * input follows a journal header in a file; every record read must encode
 * again (record_to_json) to text that decodes to the same encoding, so that
 * a resumed sweep keeps what the journal held. Anything else aborts.
 */
#include "fuzz_file.h"

#include "engi/alloc.h"
#include "journal.h"
#include "record.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "{\"format\":\"engisweep-journal\",\"version\":1}\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int round_trip(void *ctx, struct record *r, struct engi_error *err)
{
	char *a = NULL, *b = NULL;
	size_t alen, blen;
	struct engi_error e;
	engi_error_init(&e);
	if (record_to_json(r, &a, &alen, &e) < 0)
		abort();
	struct record r2;
	record_init(&r2);
	if (record_from_json(a, alen, &r2, &e) < 0 || record_to_json(&r2, &b, &blen, &e) < 0)
		abort();
	if (alen != blen || memcmp(a, b, alen))
		abort();
	engi_free(a);
	engi_free(b);
	record_release(&r2);
	record_release(r);
	(*(size_t *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *text = malloc(strlen(HEADER) + size + 1);
	if (!text)
		abort();
	memcpy(text, HEADER, strlen(HEADER));
	if (size)
		memcpy(text + strlen(HEADER), data, size);
	char path[128];
	fuzz_write_file("journal.jsonl", text, strlen(HEADER) + size, path, sizeof(path));
	free(text);
	struct engi_error e;
	engi_error_init(&e);
	size_t n = 0, seen = 0;
	int rc = journal_read(path, round_trip, &seen, &n, &e);
	fuzz_note("journal", rc, e.msg);
	if (rc > 0 || (rc < 0 && (e.code != rc || !strstr(e.msg, "journal.jsonl"))))
		abort();
	if (n != seen)
		abort();
	return 0;
}
