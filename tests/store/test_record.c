/* The record's JSON form, base64 and the outcome vocabulary. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "engi/alloc.h"
#include "engi/results.h"
#include "record.h"

static void test_outcomes(void)
{
	for (int i = 0; i < OUTCOME_COUNT; i++)
		CHECK_INT(outcome_from_name(outcome_name(i)), i);
	CHECK_STR(outcome_name(OUTCOME_FAIL_DECLARED), "fail_declared");
	CHECK_STR(outcome_name(OUTCOME_AGENT_ERROR), "agent_error");
	CHECK_STR(outcome_name(99), "unknown");
	CHECK_STR(outcome_name(-1), "unknown");
	CHECK_INT(outcome_from_name("nope"), -1);
	CHECK_INT(outcome_from_name(""), -1);
	for (int i = 0; i < OUTCOME_COUNT; i++)
		CHECK_INT(outcome_is_infra(i), i == OUTCOME_ENV_CRASH || i == OUTCOME_INFRA_ERROR);
}

static void b64_vector(const char *plain, const char *enc)
{
	size_t n = strlen(plain);
	char out[64];
	CHECK_INT(base64_encoded_len(n), strlen(enc));
	base64_encode(plain, n, out);
	CHECK_STR(out, enc);
	unsigned char back[64];
	size_t blen = 99, bad;
	CHECK_INT(base64_decode(enc, strlen(enc), back, &blen, &bad), 0);
	CHECK_INT(blen, n);
	CHECK(memcmp(back, plain, n) == 0);
}

static void b64_bad(const char *enc, size_t bad_expected)
{
	unsigned char out[64];
	size_t len, bad = 12345;
	int rc = base64_decode(enc, strlen(enc), out, &len, &bad);
	CHECK_INT(rc, ENGI_EPARSE);
	CHECK_INT(bad, bad_expected);
}

static void test_base64(void)
{
	/* RFC 4648, section 10 */
	b64_vector("", "");
	b64_vector("f", "Zg==");
	b64_vector("fo", "Zm8=");
	b64_vector("foo", "Zm9v");
	b64_vector("foob", "Zm9vYg==");
	b64_vector("fooba", "Zm9vYmE=");
	b64_vector("foobar", "Zm9vYmFy");

	/* every byte value, every length up to 300 */
	unsigned char in[300], back[300];
	char enc[401];
	unsigned x = 12345;
	for (size_t i = 0; i < sizeof(in); i++) {
		x = x * 1103515245u + 12345u;
		in[i] = (unsigned char)(i < 256 ? i : x >> 16);
	}
	int ok = 1;
	for (size_t n = 0; n <= sizeof(in); n++) {
		size_t elen = base64_encoded_len(n);
		base64_encode(in, n, enc);
		size_t blen, bad;
		if (strlen(enc) != elen || base64_decoded_max(elen) < n ||
		    base64_decode(enc, elen, back, &blen, &bad) != 0 || blen != n ||
		    memcmp(in, back, n) != 0)
			ok = 0;
	}
	CHECK(ok);

	b64_bad("Zg=", 3);  /* length not a multiple of 4 */
	b64_bad("Zg=a", 2); /* padding in the middle */
	b64_bad("Zh==", 1); /* bits past the last byte */
	b64_bad("Zm9=", 2); /* same, one byte of padding */
	b64_bad("====", 0);
	b64_bad("Zm=v", 2);
	b64_bad("Zg==Zg==", 2); /* padding before the end */
	b64_bad("Zm9v\nZm9v", 9);
	b64_bad("Zm9-", 3); /* base64url is not accepted */
	b64_bad("Z m9", 1);
	CHECK(base64_encoded_len(SIZE_MAX) == SIZE_MAX);
}

/* A record with every field set to something that would show a mix-up. */
static void full_record(struct record *r)
{
	record_init(r);
	snprintf(r->cell, sizeof(r->cell), "0123456789abcdef");
	/* longest strings that fit */
	memset(r->task_id, 't', sizeof(r->task_id) - 1);
	snprintf(r->model, sizeof(r->model), "gpt-x \"quoted\" \\ back");
	snprintf(r->condition, sizeof(r->condition), "no-\xe2\x9c\x93-tools");
	r->trial = 2;
	r->outcome = OUTCOME_TIME_LIMIT;
	r->attempts = 3;
	r->success = 0;
	r->feasible = 1;
	r->score = 0.1;
	r->quality = NAN;
	r->turns = 200;
	r->tokens_in = 9007199254740993LL; /* not exact as a double */
	r->tokens_out = 0;
	r->cost_usd = 1e-300;
	r->wall_s = 18000.000000001;
	r->env_s = -0.0;
	r->model_s = 1.0 / 3.0;
	r->verify_s = 5e-324;
	r->started_at = 1735689600.123456;
	r->rank = 17;
	snprintf(r->host, sizeof(r->host), "node-017");
	memset(r->run_id, 'r', sizeof(r->run_id) - 1);
	/* control characters are escaped on the way out: test_secrets.c */
	snprintf(r->message, sizeof(r->message), "line1 \"line2\" tab \\ end");
	r->run_outcome = OUTCOME_FAIL_DECLARED;
	snprintf(r->run_message, sizeof(r->run_message), "gave up: \"why\"");

	r->nassertions = 3;
	r->assertions = engi_calloc(3, sizeof(*r->assertions));
	for (size_t i = 0; i < 3; i++) {
		struct engi_assertion *a = &r->assertions[i];
		snprintf(a->name, sizeof(a->name), "check_%zu", i);
		snprintf(a->stage, sizeof(a->stage), "stage_%zu", i);
		a->state = (int)i + 1;
		a->required = i != 1;
		a->value = i == 0 ? NAN : 2.5 * (double)i;
		a->expected = i == 2 ? INFINITY : -1.0 * (double)i;
		memset(a->detail, 'd', sizeof(a->detail) - 1);
	}
	r->nmetrics = 2;
	r->metrics = engi_calloc(2, sizeof(*r->metrics));
	snprintf(r->metrics[0].name, sizeof(r->metrics[0].name), "geometry");
	r->metrics[0].value = 0.987654321012345678;
	snprintf(r->metrics[1].name, sizeof(r->metrics[1].name), "neg_inf");
	r->metrics[1].value = -INFINITY;
	r->nartifacts = 1;
	r->artifacts = engi_calloc(1, sizeof(*r->artifacts));
	snprintf(r->artifacts[0].path, sizeof(r->artifacts[0].path), "deliver/part.step");
	r->artifacts[0].bytes = 4294967297ULL;
	memset(r->artifacts[0].sha256, 'a', 64);
	snprintf(r->artifacts[0].note, sizeof(r->artifacts[0].note), "ok");

	r->trace_len = 1000;
	r->trace_raw_len = 123456;
	r->trace = engi_malloc(r->trace_len);
	for (size_t i = 0; i < r->trace_len; i++)
		r->trace[i] = (unsigned char)(i * 7 + 3);
}

static int same_double(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return memcmp(&a, &b, sizeof(a)) == 0; /* -0.0 too */
}

static void check_same(const struct record *a, const struct record *b)
{
	CHECK_STR(b->cell, a->cell);
	CHECK_STR(b->task_id, a->task_id);
	CHECK_STR(b->model, a->model);
	CHECK_STR(b->condition, a->condition);
	CHECK_INT(b->trial, a->trial);
	CHECK_INT(b->outcome, a->outcome);
	CHECK_INT(b->attempts, a->attempts);
	CHECK_INT(b->success, a->success);
	CHECK_INT(b->feasible, a->feasible);
	CHECK(same_double(b->score, a->score));
	CHECK(same_double(b->quality, a->quality));
	CHECK_INT(b->turns, a->turns);
	CHECK_INT(b->tokens_in, a->tokens_in);
	CHECK_INT(b->tokens_out, a->tokens_out);
	CHECK(same_double(b->cost_usd, a->cost_usd));
	CHECK(same_double(b->wall_s, a->wall_s));
	CHECK(same_double(b->env_s, a->env_s));
	CHECK(same_double(b->model_s, a->model_s));
	CHECK(same_double(b->verify_s, a->verify_s));
	CHECK(same_double(b->started_at, a->started_at));
	CHECK_INT(b->rank, a->rank);
	CHECK_STR(b->host, a->host);
	CHECK_STR(b->run_id, a->run_id);
	CHECK_STR(b->message, a->message);
	CHECK_INT(b->run_outcome, a->run_outcome);
	CHECK_STR(b->run_message, a->run_message);
	CHECK_INT(b->nassertions, a->nassertions);
	for (size_t i = 0; i < a->nassertions && i < b->nassertions; i++) {
		const struct engi_assertion *x = &a->assertions[i];
		const struct engi_assertion *y = &b->assertions[i];
		CHECK_STR(y->name, x->name);
		CHECK_STR(y->stage, x->stage);
		CHECK_INT(y->state, x->state);
		CHECK_INT(y->required, x->required);
		CHECK(same_double(y->value, x->value));
		CHECK(same_double(y->expected, x->expected));
		CHECK_STR(y->detail, x->detail);
	}
	CHECK_INT(b->nmetrics, a->nmetrics);
	for (size_t i = 0; i < a->nmetrics && i < b->nmetrics; i++) {
		CHECK_STR(b->metrics[i].name, a->metrics[i].name);
		CHECK(same_double(b->metrics[i].value, a->metrics[i].value));
	}
	CHECK_INT(b->nartifacts, a->nartifacts);
	for (size_t i = 0; i < a->nartifacts && i < b->nartifacts; i++) {
		CHECK_STR(b->artifacts[i].path, a->artifacts[i].path);
		CHECK_INT(b->artifacts[i].bytes, a->artifacts[i].bytes);
		CHECK_STR(b->artifacts[i].sha256, a->artifacts[i].sha256);
		CHECK_STR(b->artifacts[i].note, a->artifacts[i].note);
	}
	CHECK_INT(b->trace_len, a->trace_len);
	CHECK_INT(b->trace_raw_len, a->trace_raw_len);
	CHECK(b->trace_len == a->trace_len &&
	      (a->trace_len == 0 || memcmp(b->trace, a->trace, a->trace_len) == 0));
}

static void test_round_trip(void)
{
	struct record a, b;
	struct engi_error err;
	engi_error_init(&err);
	full_record(&a);
	char *json = NULL;
	size_t len = 0;
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK(json && strlen(json) == len);
	CHECK(json && !strchr(json, '\n'));
	CHECK(json && strstr(json, "\"quality\":null"));
	CHECK(json && strstr(json, "\"value\":null"));
	CHECK(json && strstr(json, "\"expected\":\"Infinity\""));
	CHECK(json && strstr(json, "\"value\":\"-Infinity\""));
	CHECK(json && strstr(json, "\"outcome\":\"time_limit\""));
	CHECK(json && strstr(json, "\"state\":\"unavailable\""));

	record_init(&b);
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	CHECK_STR(err.msg, "");
	check_same(&a, &b);

	/* the same record again, over a record that owns arrays */
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	check_same(&a, &b);

	/* deterministic: writing the read-back gives the same bytes */
	char *json2 = NULL;
	size_t len2 = 0;
	CHECK_INT(record_to_json(&b, &json2, &len2, &err), 0);
	CHECK(json2 && len2 == len && memcmp(json, json2, len) == 0);
	engi_free(json2);
	engi_free(json);
	record_release(&b);
	record_release(&a);

	/* an empty record: no arrays, no trace */
	record_init(&a);
	snprintf(a.cell, sizeof(a.cell), "00000000000000ff");
	record_init(&b);
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK(json && strstr(json, "\"trace\":\"\""));
	CHECK(json && strstr(json, "\"assertions\":[]"));
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	check_same(&a, &b);
	CHECK(b.trace == NULL && b.assertions == NULL);
	engi_free(json);
	record_release(&b);
	record_release(&a);
}

/* A message cut in the middle of a character still gives a record. */
static void test_bad_utf8(void)
{
	struct record a, b;
	struct engi_error err;
	engi_error_init(&err);
	record_init(&a);
	record_init(&b);
	snprintf(a.cell, sizeof(a.cell), "abc");
	snprintf(a.message, sizeof(a.message), "caf\xc3\xa9 cut \xe2\x9c");
	snprintf(a.host, sizeof(a.host), "\xff\xfe");
	char *json;
	size_t len;
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	CHECK_STR(b.message, "caf\xc3\xa9 cut ??");
	CHECK_STR(b.host, "??");
	engi_free(json);
	record_release(&a);
	record_release(&b);

	record_init(&a);
	a.outcome = 42;
	CHECK_INT(record_to_json(&a, &json, &len, &err), ENGI_EINVALID);
	CHECK(strstr(err.msg, "outcome 42") != NULL);
	CHECK(json == NULL);
	record_release(&a);
}

/* Parses text; expects code and a message containing needle, and the
 * target record left as it was. */
static void expect_error(const char *text, int code, const char *needle)
{
	struct record r;
	struct engi_error err;
	engi_error_init(&err);
	record_init(&r);
	snprintf(r.cell, sizeof(r.cell), "keep");
	int rc = record_from_json(text, strlen(text), &r, &err);
	CHECK_INT(rc, code);
	if (!strstr(err.msg, needle)) {
		check_failed_++;
		fprintf(stderr, "message '%s' lacks '%s'\n", err.msg, needle);
	}
	CHECK_STR(r.cell, "keep");
	record_release(&r);
}

/* The JSON of full_record with one change: key set to val (NULL: removed),
 * at the top level or in the first assertion when in_assertion. */
static char *edited(const char *key, json_t *val, int in_assertion)
{
	struct record a;
	full_record(&a);
	char *json;
	size_t len;
	record_to_json(&a, &json, &len, NULL);
	record_release(&a);
	json_t *root = json_loadb(json, len, 0, NULL);
	engi_free(json);
	json_t *obj = root;
	if (in_assertion)
		obj = json_array_get(json_object_get(root, "assertions"), 0);
	if (val)
		json_object_set_new(obj, key, val);
	else
		json_object_del(obj, key);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

static void expect_edit(const char *key, json_t *val, int in_assertion, int code,
			const char *needle)
{
	char *text = edited(key, val, in_assertion);
	expect_error(text, code, needle);
	free(text);
}

static void test_errors(void)
{
	expect_error("", ENGI_EPARSE, "malformed record JSON");
	expect_error("{", ENGI_EPARSE, "line 1");
	expect_error("[]", ENGI_EPARSE, "expected a JSON object");
	expect_error("{} x", ENGI_EPARSE, "malformed record JSON");
	expect_error("{\"cell\":\"a\",\"cell\":\"b\"}", ENGI_EPARSE, "duplicate");
	expect_error("{\"cell\":1}", ENGI_EPARSE, "/cell: expected a string");
	expect_error("{\"cell\":\"a\"}", ENGI_EPARSE, "/task_id: missing");

	char long_id[ENGI_TASK_ID_STR + 8];
	memset(long_id, 'x', ENGI_TASK_ID_STR);
	long_id[ENGI_TASK_ID_STR] = '\0';
	expect_edit("task_id", json_string(long_id), 0, ENGI_ETOOBIG,
		    "/task_id: string of 128 bytes is longer than the 127");
	expect_edit("cell", json_string("0123456789abcdef0"), 0, ENGI_ETOOBIG, "/cell");
	char long_detail[300];
	memset(long_detail, 'y', 256);
	long_detail[256] = '\0';
	expect_edit("detail", json_string(long_detail), 1, ENGI_ETOOBIG, "/assertions/0/detail");
	expect_edit("message", json_stringn("a\0b", 3), 0, ENGI_EPARSE, "malformed record JSON");
	expect_edit("trial", json_real(1.5), 0, ENGI_EPARSE, "/trial: expected an integer");
	expect_edit("turns", json_integer(-1), 0, ENGI_EPARSE,
		    "/turns: -1 is out of range [0, 2147483647]");
	expect_edit("rank", json_integer(1LL << 40), 0, ENGI_EPARSE,
		    "/rank: 1099511627776 is out of range");
	expect_edit("success", json_integer(1), 0, ENGI_EPARSE,
		    "/success: expected a boolean, found an integer");
	expect_edit("score", json_string("high"), 0, ENGI_EPARSE,
		    "/score: expected a number or null");
	expect_edit("value", json_string("x"), 1, ENGI_EPARSE,
		    "/assertions/0/value: expected a number or null");
	expect_edit("state", json_string("passed"), 1, ENGI_EPARSE,
		    "/assertions/0/state: unknown state 'passed'");
	expect_edit("required", NULL, 1, ENGI_EPARSE, "/assertions/0/required: missing");
	expect_edit("colour", json_true(), 1, ENGI_EPARSE, "/assertions/0/colour: unknown field");
	expect_edit("outcome", json_string("crashed"), 0, ENGI_EPARSE,
		    "/outcome: unknown outcome 'crashed'");
	expect_edit("extra", json_integer(1), 0, ENGI_EPARSE, "/extra: unknown field");
	expect_edit("metrics", json_object(), 0, ENGI_EPARSE, "/metrics: expected an array");
	expect_edit("artifacts", json_pack("[i]", 1), 0, ENGI_EPARSE,
		    "/artifacts/0: expected an object");
	expect_edit("artifacts",
		    json_pack("[{s:s,s:I,s:s,s:s}]", "path", "p", "bytes", (json_int_t)-5, "sha256",
			      "", "note", ""),
		    0, ENGI_EPARSE, "/artifacts/0/bytes: -5 is out of range [0, ");
	expect_edit("trace", json_string("abc"), 0, ENGI_EPARSE, "/trace: base64 length 3");
	expect_edit("trace", json_string("ab*d"), 0, ENGI_EPARSE,
		    "/trace: invalid base64 at character 2");
	expect_edit("trace", json_integer(0), 0, ENGI_EPARSE, "/trace: expected a base64 string");
	expect_edit("trace_raw_len", NULL, 0, ENGI_EPARSE, "/trace_raw_len: missing");
}

/* The run's own end: an outcome or none ("", -1 in the record), and its
 * message; a journal line written before the two fields existed reads
 * with the run unknown. */
static void test_run_end(void)
{
	struct record a, b;
	struct engi_error err;
	engi_error_init(&err);
	record_init(&a);
	CHECK_INT(a.run_outcome, -1);
	snprintf(a.cell, sizeof(a.cell), "00000000000000aa");
	char *json = NULL;
	size_t len = 0;
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK(json && strstr(json, "\"run_outcome\":\"\",\"run_message\":\"\""));
	record_init(&b);
	b.run_outcome = OUTCOME_DONE;
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	CHECK_INT(b.run_outcome, -1);
	engi_free(json);
	record_release(&b);

	/* a line without them */
	full_record(&a);
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK(json && strstr(json, "\"run_outcome\":\"fail_declared\""));
	json_t *root = json ? json_loadb(json, len, 0, NULL) : NULL;
	engi_free(json);
	json_object_del(root, "run_outcome");
	json_object_del(root, "run_message");
	char *old = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	record_init(&b);
	CHECK_INT(old ? record_from_json(old, strlen(old), &b, &err) : -1, 0);
	CHECK_INT(b.run_outcome, -1);
	CHECK_STR(b.run_message, "");
	CHECK_INT(b.outcome, a.outcome);
	CHECK_STR(b.message, a.message);
	free(old);
	record_release(&b);
	record_release(&a);

	/* a value not of the list is refused, at its pointer */
	expect_edit("run_outcome", json_string("crashed"), 0, ENGI_EPARSE,
		    "/run_outcome: unknown outcome 'crashed'");
	expect_edit("run_outcome", json_integer(0), 0, ENGI_EPARSE,
		    "/run_outcome: expected a string");
	expect_edit("run_message", json_integer(0), 0, ENGI_EPARSE,
		    "/run_message: expected a string");
	record_init(&a);
	a.run_outcome = OUTCOME_COUNT;
	CHECK_INT(record_to_json(&a, &json, &len, &err), ENGI_EINVALID);
	char said[64];
	snprintf(said, sizeof(said), "run_outcome %d is not valid", OUTCOME_COUNT);
	CHECK(strstr(err.msg, said) != NULL);
	record_release(&a);

	/* the row: the outcome's name, or empty */
	struct engi_res_episode e;
	full_record(&a);
	record_to_row(&a, &e);
	CHECK_STR(e.run_outcome, "fail_declared");
	CHECK_STR(e.run_message, a.run_message);
	record_init(&b);
	CHECK_INT(record_from_row(&b, &e, &err), 0);
	CHECK_INT(b.run_outcome, OUTCOME_FAIL_DECLARED);
	e.run_outcome[0] = '\0';
	CHECK_INT(record_from_row(&b, &e, &err), 0);
	CHECK_INT(b.run_outcome, -1);
	record_release(&b);
	record_release(&a);
}

/* The take moves the arrays and the scores out of the verdict. */
static void test_take_verdict(void)
{
	struct engi_verdict v;
	engi_verdict_init(&v);
	CHECK_INT(engi_verdict_add(&v, "exists", "delivery", ENGI_PASS, 1, NAN, NAN, "file %s",
				   "part.stl"),
		  0);
	CHECK_INT(engi_verdict_add(&v, "volume", "geometry", ENGI_FAIL, 1, 2.0, 1.0, NULL), 0);
	CHECK_INT(engi_verdict_metric(&v, "geometry", 0.75), 0);
	v.success = 0;
	v.feasible = 1;
	v.quality = 0.5;
	v.score = 0.25;

	struct record r;
	record_init(&r);
	r.nassertions = 1; /* replaced, not leaked */
	r.assertions = engi_calloc(1, sizeof(*r.assertions));
	CHECK_INT(record_take_verdict(&r, &v), 0);
	CHECK_INT(r.nassertions, 2);
	CHECK_STR(r.assertions[0].name, "exists");
	CHECK_STR(r.assertions[0].detail, "file part.stl");
	CHECK_STR(r.assertions[1].stage, "geometry");
	CHECK_INT(r.assertions[1].state, ENGI_FAIL);
	CHECK_INT(r.nmetrics, 1);
	CHECK_NEAR(r.metrics[0].value, 0.75, 0);
	CHECK_INT(r.success, 0);
	CHECK_INT(r.feasible, 1);
	CHECK_NEAR(r.quality, 0.5, 0);
	CHECK_NEAR(r.score, 0.25, 0);
	CHECK(v.a == NULL && v.na == 0 && v.m == NULL && v.nm == 0);
	engi_verdict_release(&v);
	record_release(&r);
	CHECK(r.assertions == NULL && r.nassertions == 0 && r.attempts == 1);
}

/* Every allocation failure ends in ENGI_ENOMEM and leaks nothing (the
 * sanitizer build checks the leaks). */
static void test_out_of_memory(void)
{
	struct record a;
	full_record(&a);
	char *good;
	size_t good_len;
	CHECK_INT(record_to_json(&a, &good, &good_len, NULL), 0);
	int all_ok = 1, reached_success = 0;
	for (long n = 1; n < 40 && !reached_success; n++) {
		char *json = NULL;
		size_t len;
		struct engi_error err;
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = record_to_json(&a, &json, &len, &err);
		engi_alloc_fail_after(0);
		if (rc == 0)
			reached_success = 1;
		else if (rc != ENGI_ENOMEM || json)
			all_ok = 0;
		engi_free(json);
	}
	CHECK(all_ok && reached_success);
	reached_success = 0;
	for (long n = 1; n < 40 && !reached_success; n++) {
		struct record b;
		struct engi_error err;
		engi_error_init(&err);
		record_init(&b);
		engi_alloc_fail_after(n);
		int rc = record_from_json(good, good_len, &b, &err);
		engi_alloc_fail_after(0);
		if (rc == 0)
			reached_success = 1;
		else if (rc != ENGI_ENOMEM || b.assertions || b.trace)
			all_ok = 0;
		record_release(&b);
	}
	CHECK(all_ok && reached_success);
	engi_free(good);
	record_release(&a);
}

int main(void)
{
	test_outcomes();
	test_base64();
	test_round_trip();
	test_bad_utf8();
	test_errors();
	test_run_end();
	test_take_verdict();
	test_out_of_memory();
	return check_exit();
}
