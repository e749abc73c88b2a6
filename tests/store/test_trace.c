/* The episode trace: JSON lines in, zstd out, and back. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "secrets.h"
#include "trace.h"

static json_t *event(int k)
{
	return json_pack("{s:i, s:s, s:f, s:[i,i]}", "turn", k, "action", "echo \"hi\"\n", "t",
			 0.5 * k, "xy", k, -k);
}

static void test_round_trip(void)
{
	struct trace t;
	struct engi_dynbuf want;
	struct engi_error err;
	engi_error_init(&err);
	trace_init(&t, (size_t)1 << 20);
	engi_dynbuf_init(&want, (size_t)1 << 20);
	for (int k = 0; k < 200; k++) {
		json_t *ev = event(k);
		CHECK_INT(trace_event(&t, ev), 0);
		char *line = json_dumps(ev, JSON_COMPACT);
		engi_dynbuf_addstr(&want, line);
		engi_dynbuf_addstr(&want, "\n");
		free(line);
		json_decref(ev); /* the trace kept no reference */
	}
	CHECK_INT(t.truncated, 0);
	unsigned char *z = NULL;
	size_t zlen = 0, raw = 0;
	CHECK_INT(trace_finish(&t, &z, &zlen, &raw, &err), 0);
	CHECK_INT(raw, want.len);
	CHECK(zlen > 0 && zlen < raw / 4);
	char *out = NULL;
	size_t len = 0;
	CHECK_INT(trace_decompress(z, zlen, raw, &out, &len, &err), 0);
	CHECK_INT(len, want.len);
	CHECK(out && memcmp(out, want.buf, want.len) == 0 && out[len] == '\0');
	CHECK(out && strncmp(out, "{\"turn\":0,\"action\":\"echo \\\"hi\\\"\\n\"", 33) == 0);
	engi_free(out);

	/* the cap is a limit on the output */
	CHECK_INT(trace_decompress(z, zlen, raw - 1, &out, &len, &err), ENGI_ETOOBIG);
	CHECK(out == NULL);
	CHECK(strstr(err.msg, "cap of") != NULL);
	engi_error_init(&err);

	/* two frames one after the other */
	unsigned char *zz = engi_malloc(2 * zlen);
	memcpy(zz, z, zlen);
	memcpy(zz + zlen, z, zlen);
	CHECK_INT(trace_decompress(zz, 2 * zlen, 2 * raw, &out, &len, &err), 0);
	CHECK_INT(len, 2 * raw);
	CHECK(out && memcmp(out + raw, want.buf, raw) == 0);
	engi_free(out);
	engi_free(zz);

	/* damaged input */
	CHECK_INT(trace_decompress(z, zlen - 3, raw, &out, &len, &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "corrupt trace") != NULL);
	engi_error_init(&err);
	unsigned char *bad = engi_malloc(zlen);
	memcpy(bad, z, zlen);
	bad[0] ^= 0xff; /* magic number */
	CHECK_INT(trace_decompress(bad, zlen, raw, &out, &len, &err), ENGI_EPARSE);
	engi_error_init(&err);
	engi_free(bad);
	CHECK_INT(trace_decompress((const unsigned char *)"hello", 5, 100, &out, &len, &err),
		  ENGI_EPARSE);
	engi_error_init(&err);
	CHECK_INT(trace_decompress(z, 0, 100, &out, &len, &err), ENGI_EPARSE);
	CHECK(out == NULL);
	engi_error_init(&err);

	engi_free(z);
	engi_dynbuf_release(&want);
	trace_release(&t);
}

static void test_empty(void)
{
	struct trace t;
	trace_init(&t, 1024);
	unsigned char *z;
	size_t zlen, raw = 99;
	CHECK_INT(trace_finish(&t, &z, &zlen, &raw, NULL), 0);
	CHECK_INT(raw, 0);
	char *out;
	size_t len = 99;
	CHECK_INT(trace_decompress(z, zlen, 0, &out, &len, NULL), 0);
	CHECK_INT(len, 0);
	CHECK(out && out[0] == '\0');
	engi_free(out);
	engi_free(z);
	trace_release(&t);
}

static void test_cap(void)
{
	struct trace t;
	trace_init(&t, 300);
	int rc = 0, added = 0;
	while (rc == 0 && added < 1000) {
		json_t *ev = event(added);
		rc = trace_event(&t, ev);
		json_decref(ev);
		if (rc == 0)
			added++;
	}
	CHECK_INT(rc, ENGI_ETOOBIG);
	CHECK(added > 0 && added < 1000);
	CHECK_INT(t.truncated, 1);
	CHECK(t.buf.len <= 300);
	/* what is there is whole lines only */
	CHECK(t.buf.len > 0 && t.buf.buf[t.buf.len - 1] == '\n');
	CHECK_INT(strlen(t.buf.buf), t.buf.len);
	int lines = 0;
	for (size_t i = 0; i < t.buf.len; i++)
		lines += t.buf.buf[i] == '\n';
	CHECK_INT(lines, added);
	/* a smaller event still fits after a refused one */
	json_t *small = json_pack("{s:b}", "truncated", 1);
	size_t before = t.buf.len;
	rc = trace_event(&t, small);
	CHECK(rc == 0 || rc == ENGI_ETOOBIG);
	CHECK(rc != 0 || t.buf.len == before + strlen("{\"truncated\":true}\n"));
	json_decref(small);

	json_t *arr = json_array();
	CHECK_INT(trace_event(&t, arr), ENGI_EINVALID);
	json_decref(arr);

	unsigned char *z;
	size_t zlen, raw;
	CHECK_INT(trace_finish(&t, &z, &zlen, &raw, NULL), 0);
	CHECK_INT(raw, t.buf.len);
	engi_free(z);
	trace_release(&t);
}

/* The zstd tool writes frames without a content size when it reads a pipe;
 * the decompressor must take those too. */
static void test_zstd_tool(void)
{
	const char *text = "{\"a\":1}\n{\"b\":2}\n";
	char path[] = "/tmp/engi-trace-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "printf '%%s' '%s' | zstd -q -c > %s", text, path);
	if (system(cmd) != 0) {
		fprintf(stderr, "zstd tool not usable: skipped\n");
		remove(path);
		return;
	}
	FILE *f = fopen(path, "rb");
	unsigned char buf[512];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	remove(path);
	char *out;
	size_t len;
	CHECK_INT(trace_decompress(buf, n, 100, &out, &len, NULL), 0);
	CHECK_STR(out, text);
	engi_free(out);
}

static void test_out_of_memory(void)
{
	struct trace t;
	trace_init(&t, 1 << 20);
	for (int k = 0; k < 50; k++) {
		json_t *ev = event(k);
		trace_event(&t, ev);
		json_decref(ev);
	}
	int all_ok = 1, done = 0;
	for (long n = 1; n < 20 && !done; n++) {
		unsigned char *z = NULL;
		size_t zlen, raw;
		engi_alloc_fail_after(n);
		int rc = trace_finish(&t, &z, &zlen, &raw, NULL);
		engi_alloc_fail_after(0);
		if (rc == 0) {
			done = 1;
			char *out = NULL;
			size_t len;
			for (long m = 1; m < 40; m++) {
				engi_alloc_fail_after(m);
				rc = trace_decompress(z, zlen, raw, &out, &len, NULL);
				engi_alloc_fail_after(0);
				if (rc == 0)
					break;
				if (rc != ENGI_ENOMEM || out)
					all_ok = 0;
			}
			CHECK(rc == 0 && len == t.buf.len);
			engi_free(out);
		} else if (rc != ENGI_ENOMEM || z) {
			all_ok = 0;
		}
		engi_free(z);
	}
	CHECK(all_ok && done);
	/* an event refused for memory is taken back out whole */
	size_t before = t.buf.len;
	json_t *big = json_pack("{s:s}", "x", "yyyyyyyyyy");
	engi_alloc_fail_after(1);
	int rc = 0;
	for (int i = 0; i < 10000 && rc == 0; i++)
		rc = trace_event(&t, big);
	engi_alloc_fail_after(0);
	CHECK_INT(rc, ENGI_ENOMEM);
	CHECK(t.buf.len >= before && t.buf.buf[t.buf.len - 1] == '\n');
	CHECK_INT(t.truncated, 0);
	json_decref(big);
	trace_release(&t);
}

/* A key quoted back by an endpoint (in text, in a reply body kept as a
 * string, in tool-call arguments) leaves no trace: each event is scrubbed. */
static void test_secrets(void)
{
	const char *key = "sk-trace-canary-31337";
	CHECK_INT(secrets_add(key), 0);
	struct trace t;
	struct engi_error err;
	engi_error_init(&err);
	trace_init(&t, (size_t)1 << 20);
	json_t *args = json_pack("{s:s}", "command", "echo sk-trace-canary-31337 > out.txt");
	char *args_s = json_dumps(args, JSON_COMPACT);
	json_t *raw = json_pack("{s:s,s:s}", "text", "your key is sk-trace-canary-31337",
				"arguments", args_s);
	char *raw_s = json_dumps(raw, JSON_COMPACT);
	json_t *ev = json_pack("{s:s,s:s,s:{s:s}}", "ev", "model_reply", "raw", raw_s, "body",
			       "quoted", key);
	CHECK_INT(trace_event(&t, ev), 0);
	CHECK(!strstr(t.buf.buf, key));
	CHECK(strstr(t.buf.buf, "[secret]") != NULL);
	CHECK(t.buf.len == strlen(t.buf.buf) && t.buf.buf[t.buf.len - 1] == '\n');
	unsigned char *z = NULL;
	size_t zlen = 0;
	char *back = NULL;
	CHECK_INT(trace_finish(&t, &z, &zlen, NULL, &err), 0);
	CHECK_INT(trace_decompress(z, zlen, (size_t)1 << 20, &back, NULL, &err), 0);
	CHECK(back && !strstr(back, key));
	json_t *line = back ? json_loads(back, 0, NULL) : NULL;
	CHECK(line != NULL); /* still one valid JSON line */
	json_decref(line);
	engi_free(back);
	engi_free(z);
	free(raw_s);
	free(args_s);
	json_decref(raw);
	json_decref(args);
	json_decref(ev);
	trace_release(&t);
}

int main(void)
{
	test_round_trip();
	test_empty();
	test_cap();
	test_zstd_tool();
	test_out_of_memory();
	test_secrets();
	return check_exit();
}
