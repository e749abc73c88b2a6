#include "trace.h"

#include <jansson.h>
#include <stdio.h>
#include <zstd.h>

#include "engi/alloc.h"
#include "secrets.h"

#define TRACE_ZSTD_LEVEL 3

void trace_init(struct trace *t, size_t cap)
{
	engi_dynbuf_init(&t->buf, cap);
	t->truncated = 0;
}

void trace_release(struct trace *t)
{
	engi_dynbuf_release(&t->buf);
	t->truncated = 0;
}

struct sink {
	struct engi_dynbuf *buf;
	int rc;
};

static int sink_add(const char *data, size_t n, void *arg)
{
	struct sink *s = arg;
	s->rc = engi_dynbuf_add(s->buf, data, n);
	return s->rc < 0 ? -1 : 0;
}

int trace_event(struct trace *t, const json_t *obj)
{
	if (!json_is_object(obj))
		return ENGI_EINVALID;
	/* Streamed straight into the buffer; an event that does not fit is
	 * taken back out whole, so the trace stays valid JSON lines. */
	size_t mark = t->buf.len;
	struct sink s = {&t->buf, 0};
	int rc = json_dump_callback(obj, sink_add, &s, JSON_COMPACT);
	if (rc == 0)
		rc = engi_dynbuf_add(&t->buf, "\n", 1);
	else
		rc = s.rc < 0 ? s.rc : ENGI_ENOMEM;
	if (rc < 0) {
		t->buf.len = mark;
		if (t->buf.buf)
			t->buf.buf[mark] = '\0';
		if (rc == ENGI_ETOOBIG)
			t->truncated = 1;
		return rc;
	}
	/* the one place events are written: no key quoted back by an
	 * endpoint or written by an agent stays in the line */
	size_t n = secrets_scrub(t->buf.buf + mark, t->buf.len - mark);
	t->buf.len = mark + n;
	t->buf.buf[t->buf.len] = '\0';
	return 0;
}

int trace_finish(struct trace *t, unsigned char **z, size_t *zlen, size_t *raw_len,
		 struct engi_error *err)
{
	*z = NULL;
	*zlen = 0;
	const char *src = t->buf.buf ? t->buf.buf : "";
	size_t n = t->buf.len;
	size_t bound = ZSTD_compressBound(n);
	if (ZSTD_isError(bound))
		RAISE(err, ENGI_ETOOBIG, "cannot compress a trace of %zu bytes: %s", n,
		      ZSTD_getErrorName(bound));
	unsigned char *dst = engi_malloc(bound);
	if (!dst)
		RAISE(err, ENGI_ENOMEM, "out of memory compressing a trace of %zu bytes", n);
	size_t got = ZSTD_compress(dst, bound, src, n, TRACE_ZSTD_LEVEL);
	if (ZSTD_isError(got)) {
		engi_free(dst);
		RAISE(err, ENGI_EIO, "cannot compress a trace of %zu bytes: %s", n,
		      ZSTD_getErrorName(got));
	}
	unsigned char *shrunk = engi_realloc(dst, got);
	*z = shrunk ? shrunk : dst;
	*zlen = got;
	if (raw_len)
		*raw_len = n;
	return 0;
}

/*
 * Streaming, so frames without a recorded content size (the zstd tool
 * writes those when it reads a pipe) and concatenated frames work too, and
 * the cap is checked as the output grows, before it is allocated.
 */
int trace_decompress(const unsigned char *z, size_t zlen, size_t cap, char **out, size_t *len,
		     struct engi_error *err)
{
	*out = NULL;
	if (len)
		*len = 0;
	if (zlen == 0)
		RAISE(err, ENGI_EPARSE, "empty trace: not a zstd frame");
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	size_t chunk_len = ZSTD_DStreamOutSize();
	char *chunk = engi_malloc(chunk_len);
	if (!dctx || !chunk) {
		ZSTD_freeDCtx(dctx);
		engi_free(chunk);
		RAISE(err, ENGI_ENOMEM, "out of memory decompressing a trace");
	}
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, cap);
	ZSTD_inBuffer in = {z, zlen, 0};
	size_t ret = 1; /* nonzero: inside a frame */
	int rc = 0;
	while (in.pos < in.size || ret != 0) {
		ZSTD_outBuffer o = {chunk, chunk_len, 0};
		size_t before = in.pos;
		ret = ZSTD_decompressStream(dctx, &o, &in);
		if (ZSTD_isError(ret)) {
			rc = engi_raise(err, ENGI_EPARSE, "corrupt trace: %s",
					ZSTD_getErrorName(ret));
			break;
		}
		if (o.pos && (rc = engi_dynbuf_add(&b, chunk, o.pos)) < 0) {
			if (rc == ENGI_ETOOBIG)
				engi_raise(err, rc,
					   "trace decompresses to more than "
					   "its cap of %zu bytes",
					   cap);
			else
				engi_raise(err, rc,
					   "out of memory decompressing a "
					   "trace");
			break;
		}
		if (in.pos == in.size && ret != 0 && o.pos < o.size && in.pos == before) {
			rc = engi_raise(err, ENGI_EPARSE, "corrupt trace: truncated zstd frame");
			break;
		}
	}
	ZSTD_freeDCtx(dctx);
	engi_free(chunk);
	if (rc < 0) {
		engi_dynbuf_release(&b);
		return rc;
	}
	/* an add, even of nothing, leaves the buffer allocated and
	 * NUL-terminated, which a take of an empty buffer does not promise */
	if (engi_dynbuf_add(&b, "", 0) == 0)
		*out = engi_dynbuf_take(&b, len);
	engi_dynbuf_release(&b);
	if (!*out)
		RAISE(err, ENGI_ENOMEM, "out of memory decompressing a trace");
	return 0;
}

const char *trace_codec_version(void)
{
	static char buf[32];
	if (!buf[0])
		snprintf(buf, sizeof(buf), "zstd %s", ZSTD_versionString());
	return buf;
}
