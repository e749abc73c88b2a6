/*
 * trace.h - the trace of one episode: JSON lines, compressed with zstd.
 * The only place that includes <zstd.h>.
 *
 * The episode runner appends one JSON object per event (requests, replies,
 * actions, observations, verdicts) with trace_event; the buffer has a cap
 * and refuses events past it with ENGI_ETOOBIG (the runner then records one
 * truncation marker). Every registered secret (secrets.h) is scrubbed from
 * each event as it is written. trace_finish compresses the whole buffer.
 */
#ifndef ENGI_TRACE_H
#define ENGI_TRACE_H

#include <stddef.h>

#include "engi/dynbuf.h"
#include "engi/error.h"

typedef struct json_t json_t;

#define TRACE_CAP_DEFAULT ((size_t)64 << 20)

struct trace {
	struct engi_dynbuf buf;
	int truncated;
};

/* "zstd 1.5.4": the codec library this binary runs with. */
const char *trace_codec_version(void);

void trace_init(struct trace *t, size_t cap);
void trace_release(struct trace *t);
/* Appends the object as one line; steals nothing (caller keeps obj). */
int trace_event(struct trace *t, const json_t *obj);
/* Compresses the lines; *z is the caller's (engi_free). */
int trace_finish(struct trace *t, unsigned char **z, size_t *zlen, size_t *raw_len,
		 struct engi_error *err);
/* Decompresses a zstd frame of at most cap bytes; *out NUL-terminated. */
int trace_decompress(const unsigned char *z, size_t zlen, size_t cap, char **out, size_t *len,
		     struct engi_error *err);

#endif
