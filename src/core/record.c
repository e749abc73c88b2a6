#include "record.h"

#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base64.h"
#include "engi/alloc.h"
#include "engi/json.h"
#include "engi/utf8.h"
#include "engi/results.h"
#include "secrets.h"
#include "text.h"

/* ---- outcomes ---- */

const char *outcome_name(int outcome)
{
	return engi_outcome_name(outcome);
}

int outcome_from_name(const char *name)
{
	return engi_outcome_find(name, SIZE_MAX);
}

int outcome_is_infra(int outcome)
{
	return engi_outcome_infra(outcome);
}

/* ---- lifecycle ---- */

/* a field's initial value by its kind: an outcome of kind o is unknown */
#define INIT_o(v) ((v) = -1);
#define INIT_S(v)
#define INIT_M(v)
#define INIT_O(v)
#define INIT_I(v)
#define INIT_L(v)
#define INIT_B(v)
#define INIT_D(v)

void record_init(struct record *r)
{
	memset(r, 0, sizeof(*r));
	r->attempts = 1;
#define INIT_FIELD(name, kind, rec, row, since, csv, dflt) INIT_##kind(r->name)
	ENGI_EPISODE_FIELDS(INIT_FIELD)
#undef INIT_FIELD
}

void record_release(struct record *r)
{
	engi_free(r->assertions);
	engi_free(r->metrics);
	engi_free(r->artifacts);
	engi_free(r->trace);
	record_init(r);
}

int record_take_verdict(struct record *r, struct engi_verdict *v)
{
	engi_free(r->assertions);
	engi_free(r->metrics);
	r->assertions = v->a;
	r->nassertions = v->na;
	r->metrics = v->m;
	r->nmetrics = v->nm;
	v->a = NULL;
	v->na = v->alloc_a = 0;
	v->m = NULL;
	v->nm = v->alloc_m = 0;
	r->success = v->success;
	r->feasible = v->feasible;
	r->quality = v->quality;
	r->score = v->score;
	return 0;
}

/* ---- writing ---- */

/*
 * A JSON string from a fixed-size C string. Messages and details come from
 * agents and guests and may have been cut in the middle of a character: such
 * bytes become '?' so that one bad byte never costs the whole record.
 * Secrets only shorten it, so the string still fits its field when read
 * back.
 */
static json_t *json_text(const char *s)
{
	/* every text field is scrubbed of secrets: this is the one writer
	 * of journal and wire records (and so of rank 0's HDF5 rows) */
	char *clean = engi_strdup(s);
	if (!clean)
		return NULL;
	size_t n = secrets_scrub_str(clean);
	json_t *j = json_stringn(clean, n);
	if (j) {
		engi_free(clean);
		return j;
	}
	const unsigned char *u = (const unsigned char *)clean;
	for (size_t i = 0; i < n;) {
		size_t k = engi_utf8_seq(u + i, n - i);
		if (k == 0) {
			clean[i++] = '?';
			continue;
		}
		i += k;
	}
	j = json_stringn(clean, n);
	engi_free(clean);
	return j;
}

/* A message with its control characters escaped, within its field. */
static json_t *json_message(const char *s, size_t cap)
{
	char buf[1024];
	text_escape_controls(s, buf, cap < sizeof(buf) ? cap : sizeof(buf));
	return json_text(buf);
}

/* NaN has no JSON form: it is written as null. Infinities are written as
 * the strings "Infinity" and "-Infinity". */
static json_t *json_num(double d)
{
	if (isnan(d))
		return json_null();
	if (isinf(d))
		return json_string(d > 0 ? "Infinity" : "-Infinity");
	return json_real(d);
}

struct writer {
	int failed; /* a json_* constructor ran out of memory */
};

static void put(struct writer *w, json_t *obj, const char *key, json_t *val)
{
	if (!obj || !val || json_object_set_new(obj, key, val) < 0) {
		json_decref(val);
		w->failed = 1;
	}
}

static json_t *assertion_json(struct writer *w, const struct engi_assertion *a)
{
	json_t *o = json_object();
	put(w, o, "name", json_text(a->name));
	put(w, o, "stage", json_text(a->stage));
	put(w, o, "state", json_string(engi_astate_name(a->state)));
	put(w, o, "required", json_boolean(a->required));
	put(w, o, "value", json_num(a->value));
	put(w, o, "expected", json_num(a->expected));
	put(w, o, "detail", json_text(a->detail));
	return o;
}

static json_t *metric_json(struct writer *w, const struct engi_metric *m)
{
	json_t *o = json_object();
	put(w, o, "name", json_text(m->name));
	put(w, o, "value", json_num(m->value));
	return o;
}

static json_t *artifact_json(struct writer *w, const struct artifact *a)
{
	json_t *o = json_object();
	put(w, o, "path", json_text(a->path));
	put(w, o, "bytes", json_integer((json_int_t)a->bytes));
	put(w, o, "sha256", json_text(a->sha256));
	put(w, o, "note", json_text(a->note));
	return o;
}

int record_check_values(const struct record *r, struct engi_error *err)
{
	if (r->outcome < 0 || r->outcome >= OUTCOME_COUNT)
		RAISE(err, ENGI_EINVALID, "record '%s': outcome %d is not valid", r->cell,
		      r->outcome);
		/* an outcome of kind o: one of the list, or -1 (unknown) */
#define VALID_o(name)                                                                              \
	if (r->name < -1 || r->name >= OUTCOME_COUNT)                                              \
		RAISE(err, ENGI_EINVALID, "record '%s': %s %d is not valid", r->cell, #name,       \
		      r->name);
#define VALID_S(name)
#define VALID_M(name)
#define VALID_O(name)
#define VALID_I(name)
#define VALID_L(name)
#define VALID_B(name)
#define VALID_D(name)
#define VALID_FIELD(name, kind, rec, row, since, csv, dflt) VALID_##kind(name)
	ENGI_EPISODE_FIELDS(VALID_FIELD)
#undef VALID_FIELD
	for (size_t i = 0; i < r->nassertions; i++) {
		int st = r->assertions[i].state;
		if (st < ENGI_PASS || st > ENGI_UNAVAILABLE)
			RAISE(err, ENGI_EINVALID,
			      "record '%s': assertion '%s' has state %d, which "
			      "is not valid",
			      r->cell, r->assertions[i].name, st);
	}
	return 0;
}

static int check_writable(const struct record *r, struct engi_error *err)
{
	TRY(record_check_values(r, err));
	for (size_t i = 0; i < r->nartifacts; i++)
		if (r->artifacts[i].bytes > (uint64_t)INT64_MAX)
			RAISE(err, ENGI_EINVALID,
			      "record '%s': artifact '%s' has %" PRIu64
			      " bytes, more than JSON carries",
			      r->cell, r->artifacts[i].path, r->artifacts[i].bytes);
	if (r->trace_len && !r->trace)
		RAISE(err, ENGI_EINVALID, "record '%s': trace of %zu bytes has no data", r->cell,
		      r->trace_len);
	if (base64_encoded_len(r->trace_len) == SIZE_MAX || r->trace_raw_len > (size_t)INT64_MAX)
		RAISE(err, ENGI_ETOOBIG, "record '%s': trace too large", r->cell);
	return 0;
}

static json_t *trace_json(const struct record *r)
{
	if (!r->trace_len)
		return json_string("");
	size_t n = base64_encoded_len(r->trace_len);
	char *b64 = engi_malloc(n + 1);
	if (!b64)
		return NULL;
	base64_encode(r->trace, r->trace_len, b64);
	json_t *j = json_stringn_nocheck(b64, n); /* ASCII by construction */
	engi_free(b64);
	return j;
}

/* A field's JSON value by its kind (engi/schema.h). */
#define JSON_S(v) json_text(v)
#define JSON_M(v) json_message(v, sizeof(v))
#define JSON_O(v) json_string(outcome_name(v))
#define JSON_o(v) json_string((v) >= 0 ? outcome_name(v) : "")
#define JSON_I(v) json_integer(v)
#define JSON_L(v) json_integer(v)
#define JSON_B(v) json_boolean(v)
#define JSON_D(v) json_num(v)

static json_t *record_json(const struct record *r, int with_trace)
{
	struct writer w = {0};
	json_t *o = json_object();
#define PUT_FIELD(name, kind, rec, row, since, csv, dflt) put(&w, o, #name, JSON_##kind(r->name));
	ENGI_EPISODE_FIELDS(PUT_FIELD)
#undef PUT_FIELD

	json_t *arr = json_array();
	for (size_t i = 0; arr && i < r->nassertions; i++)
		if (json_array_append_new(arr, assertion_json(&w, &r->assertions[i])) < 0)
			w.failed = 1;
	put(&w, o, "assertions", arr);
	arr = json_array();
	for (size_t i = 0; arr && i < r->nmetrics; i++)
		if (json_array_append_new(arr, metric_json(&w, &r->metrics[i])) < 0)
			w.failed = 1;
	put(&w, o, "metrics", arr);
	arr = json_array();
	for (size_t i = 0; arr && i < r->nartifacts; i++)
		if (json_array_append_new(arr, artifact_json(&w, &r->artifacts[i])) < 0)
			w.failed = 1;
	put(&w, o, "artifacts", arr);

	/* last, so that record_json_with_trace can put them back in place */
	put(&w, o, "trace", with_trace ? trace_json(r) : json_string(""));
	put(&w, o, "trace_raw_len", json_integer(with_trace ? (json_int_t)r->trace_raw_len : 0));
	if (w.failed) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int to_json(const struct record *r, int with_trace, char **out, size_t *len,
		   struct engi_error *err)
{
	*out = NULL;
	if (len)
		*len = 0;
	TRY(check_writable(r, err));
	json_t *o = record_json(r, with_trace);
	if (!o)
		RAISE(err, ENGI_ENOMEM, "out of memory writing record '%s'", r->cell);
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(17);
	size_t n = json_dumpb(o, NULL, 0, flags);
	char *buf = n ? engi_malloc(n + 1) : NULL;
	if (!buf || json_dumpb(o, buf, n, flags) != n) {
		json_decref(o);
		engi_free(buf);
		RAISE(err, ENGI_ENOMEM, "out of memory writing record '%s'", r->cell);
	}
	json_decref(o);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int record_to_json(const struct record *r, char **out, size_t *len, struct engi_error *err)
{
	return to_json(r, 1, out, len, err);
}

int record_to_json_bare(const struct record *r, char **out, size_t *len, struct engi_error *err)
{
	return to_json(r, 0, out, len, err);
}

#define BARE_TAIL ",\"trace\":\"\",\"trace_raw_len\":0}"

int record_json_with_trace(const char *bare, size_t n, const unsigned char *trace, size_t trace_len,
			   size_t trace_raw_len, char **out, size_t *len, struct engi_error *err)
{
	*out = NULL;
	*len = 0;
	size_t tail = sizeof(BARE_TAIL) - 1;
	if (n < tail || memcmp(bare + n - tail, BARE_TAIL, tail) != 0)
		RAISE(err, ENGI_EINVALID, "a record without its trace does not end in %s",
		      BARE_TAIL);
	if (trace_len && !trace)
		RAISE(err, ENGI_EINVALID, "a trace of %zu bytes has no data", trace_len);
	size_t b64 = base64_encoded_len(trace_len);
	if (b64 == SIZE_MAX || trace_raw_len > (size_t)INT64_MAX || b64 > SIZE_MAX - n - 64)
		RAISE(err, ENGI_ETOOBIG, "a record's trace of %zu bytes is too large", trace_len);
	char *buf = engi_malloc(n - tail + b64 + 64);
	if (!buf)
		RAISE(err, ENGI_ENOMEM, "out of memory writing a record with its trace");
	size_t k = n - tail;
	memcpy(buf, bare, k);
	/* what record_to_json writes: base64 is ASCII that JSON leaves as it is */
	memcpy(buf + k, ",\"trace\":\"", 10);
	k += 10;
	base64_encode(trace, trace_len, buf + k);
	k += b64;
	k += (size_t)snprintf(buf + k, 48, "\",\"trace_raw_len\":%zu}", trace_raw_len);
	*out = buf;
	*len = k;
	return 0;
}

/* ---- reading ---- */

/* Its messages: "record: <pointer>: <what>" (engi/json.h). */
#define RECORD "record"

_Static_assert(sizeof(long) >= sizeof(int64_t), "engi_json_int reads an int64_t");

struct reader {
	struct engi_error *err;
	char path[ENGI_POINTER_MAX]; /* JSON pointer of the object being read */
};

/* A member of any type, required. */
static int get(struct reader *rd, json_t *obj, const char *key, json_t **val)
{
	*val = json_object_get(obj, key);
	/* absent: engi_json_field's "missing required field" */
	return *val ? 0 : engi_json_field(obj, key, JSON_NULL, 1, RECORD, rd->path, val, rd->err);
}

/* A required string copied into dst[cap]: a longer one is ENGI_ETOOBIG. */
static int get_str(struct reader *rd, json_t *obj, const char *key, char *dst, size_t cap)
{
	const char *s;
	TRY(engi_json_string(obj, key, 1, 0, RECORD, rd->path, &s, rd->err));
	size_t n = strlen(s);
	if (n >= cap) {
		char p[ENGI_POINTER_MAX];
		engi_json_pointer(p, sizeof(p), rd->path, key);
		return engi_raise(rd->err, ENGI_ETOOBIG,
				  RECORD ": %s: string of %zu bytes is longer than the %zu allowed",
				  p, n, cap - 1);
	}
	memcpy(dst, s, n + 1);
	return 0;
}

/* A required integer in [min, max]. */
static int get_i64(struct reader *rd, json_t *obj, const char *key, int64_t min, int64_t max,
		   int64_t *dst)
{
	json_t *v;
	long x;
	TRY(engi_json_field(obj, key, JSON_INTEGER, 1, RECORD, rd->path, &v, rd->err));
	TRY(engi_json_int(obj, key, min, max, 0, RECORD, rd->path, &x, rd->err));
	*dst = x;
	return 0;
}

static int get_int(struct reader *rd, json_t *obj, const char *key, int min, int *dst)
{
	int64_t v;
	TRY(get_i64(rd, obj, key, min, INT_MAX, &v));
	*dst = (int)v;
	return 0;
}

static int get_bool(struct reader *rd, json_t *obj, const char *key, int *dst)
{
	json_t *v;
	TRY(engi_json_field(obj, key, JSON_TRUE, 1, RECORD, rd->path, &v, rd->err));
	*dst = json_is_true(v);
	return 0;
}

/* A number as json_num writes it: null for NaN, "Infinity", "-Infinity". */
static int get_num(struct reader *rd, json_t *obj, const char *key, double *dst)
{
	json_t *v;
	TRY(get(rd, obj, key, &v));
	if (json_is_null(v)) {
		*dst = NAN;
	} else if (json_is_number(v)) {
		*dst = json_number_value(v);
	} else if (json_is_string(v) && strcmp(json_string_value(v), "Infinity") == 0) {
		*dst = INFINITY;
	} else if (json_is_string(v) && strcmp(json_string_value(v), "-Infinity") == 0) {
		*dst = -INFINITY;
	} else {
		char p[ENGI_POINTER_MAX];
		engi_json_pointer(p, sizeof(p), rd->path, key);
		return engi_parse_error(rd->err, RECORD, p, "expected a number or null, found %s",
					engi_json_kind(v));
	}
	return 0;
}

/* Points rd->path at element i of array key and checks it is an object. */
static int enter(struct reader *rd, const char *key, size_t i, json_t *el)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), "", key);
	engi_json_pointer_index(rd->path, sizeof(rd->path), p, i);
	return engi_json_expect(el, JSON_OBJECT, RECORD, rd->path, rd->err);
}

/* The names of n values (name(0) .. name(n - 1)) into names[n + 1], NULL
 * last, for engi_json_choice. */
static void value_names(const char **names, int n, const char *(*name)(int))
{
	for (int i = 0; i < n; i++)
		names[i] = name(i);
	names[n] = NULL;
}

static const char *const assertion_keys[] = {"name",  "stage",	  "state",  "required",
					     "value", "expected", "detail", NULL};

static int read_assertion(struct reader *rd, json_t *o, struct engi_assertion *a)
{
	TRY(engi_json_only_keys(o, assertion_keys, RECORD, rd->path, rd->err));
	TRY(get_str(rd, o, "name", a->name, sizeof(a->name)));
	TRY(get_str(rd, o, "stage", a->stage, sizeof(a->stage)));
	_Static_assert(ENGI_PASS == 0, "states are counted from ENGI_PASS");
	const char *states[ENGI_UNAVAILABLE + 2];
	value_names(states, ENGI_UNAVAILABLE + 1, engi_astate_name);
	TRY(engi_json_choice(o, "state", states, "state", 1, RECORD, rd->path, &a->state, rd->err));
	TRY(get_bool(rd, o, "required", &a->required));
	TRY(get_num(rd, o, "value", &a->value));
	TRY(get_num(rd, o, "expected", &a->expected));
	TRY(get_str(rd, o, "detail", a->detail, sizeof(a->detail)));
	return 0;
}

static const char *const metric_keys[] = {"name", "value", NULL};

static int read_metric(struct reader *rd, json_t *o, struct engi_metric *m)
{
	TRY(engi_json_only_keys(o, metric_keys, RECORD, rd->path, rd->err));
	TRY(get_str(rd, o, "name", m->name, sizeof(m->name)));
	TRY(get_num(rd, o, "value", &m->value));
	return 0;
}

static const char *const artifact_keys[] = {"path", "bytes", "sha256", "note", NULL};

static int read_artifact(struct reader *rd, json_t *o, struct artifact *a)
{
	int64_t bytes;
	TRY(engi_json_only_keys(o, artifact_keys, RECORD, rd->path, rd->err));
	TRY(get_str(rd, o, "path", a->path, sizeof(a->path)));
	TRY(get_i64(rd, o, "bytes", 0, INT64_MAX, &bytes));
	a->bytes = (uint64_t)bytes;
	TRY(get_str(rd, o, "sha256", a->sha256, sizeof(a->sha256)));
	TRY(get_str(rd, o, "note", a->note, sizeof(a->note)));
	return 0;
}

/* Allocates *items for the array key; *n is its length. */
static int read_items(struct reader *rd, json_t *root, const char *key, size_t size, void **items,
		      size_t *n, json_t **arr)
{
	TRY(engi_json_field(root, key, JSON_ARRAY, 1, RECORD, rd->path, arr, rd->err));
	*n = json_array_size(*arr);
	*items = NULL;
	if (*n == 0)
		return 0;
	*items = engi_calloc(*n, size);
	if (!*items)
		return engi_raise(rd->err, ENGI_ENOMEM, "out of memory reading record: /%s", key);
	return 0;
}

static int read_trace(struct reader *rd, json_t *root, struct record *r)
{
	json_t *v;
	TRY(get(rd, root, "trace", &v));
	if (!json_is_string(v))
		return engi_parse_error(rd->err, RECORD, "/trace",
					"expected a base64 string, found %s", engi_json_kind(v));
	int64_t raw;
	TRY(get_i64(rd, root, "trace_raw_len", 0, INT64_MAX, &raw));
	r->trace_raw_len = (size_t)raw;
	size_t n = json_string_length(v);
	if (n == 0)
		return 0;
	r->trace = engi_malloc(base64_decoded_max(n));
	if (!r->trace)
		return engi_raise(rd->err, ENGI_ENOMEM, "out of memory reading record: /trace");
	size_t bad;
	if (base64_decode(json_string_value(v), n, r->trace, &r->trace_len, &bad) < 0) {
		if (bad == n)
			return engi_parse_error(rd->err, RECORD, "/trace",
						"base64 length %zu is not a multiple of 4", n);
		return engi_parse_error(rd->err, RECORD, "/trace",
					"invalid base64 at character %zu", bad);
	}
	return 0;
}

static const char *const record_keys[] = {
#define FIELD_KEY(name, kind, rec, row, since, csv, dflt) #name,
    ENGI_EPISODE_FIELDS(FIELD_KEY)
#undef FIELD_KEY
	"assertions",
    "metrics",
    "artifacts",
    "trace",
    "trace_raw_len",
    NULL};

static int get_outcome(struct reader *rd, json_t *root, const char *key, int *dst)
{
	const char *outcomes[OUTCOME_COUNT + 1];
	value_names(outcomes, OUTCOME_COUNT, outcome_name);
	return engi_json_choice(root, key, outcomes, "outcome", 1, RECORD, rd->path, dst, rd->err);
}

/* An outcome of kind o: one of the list, or "" for unknown (-1). */
static int get_outcome_or_none(struct reader *rd, json_t *root, const char *key, int *dst)
{
	const char *s;
	TRY(engi_json_string(root, key, 1, 0, RECORD, rd->path, &s, rd->err));
	if (!s[0]) {
		*dst = -1;
		return 0;
	}
	return get_outcome(rd, root, key, dst);
}

/* A field read by its kind (engi/schema.h); an optional one may be absent. */
#define GET_S(key, dst) get_str(rd, root, key, dst, sizeof(dst))
#define GET_M(key, dst) get_str(rd, root, key, dst, sizeof(dst))
#define GET_O(key, dst) get_outcome(rd, root, key, &(dst))
#define GET_o(key, dst) get_outcome_or_none(rd, root, key, &(dst))
#define GET_I(key, dst) get_int(rd, root, key, 0, &(dst))
#define GET_L(key, dst) get_i64(rd, root, key, 0, INT64_MAX, &(dst))
#define GET_B(key, dst) get_bool(rd, root, key, &(dst))
#define GET_D(key, dst) get_num(rd, root, key, &(dst))

static int read_record(struct reader *rd, json_t *root, struct record *r)
{
	/* a misspelt field is an error, not a silently dropped value */
	TRY(engi_json_only_keys(root, record_keys, RECORD, rd->path, rd->err));
	/* a field with a version is absent in journals written before it existed */
#define GET_FIELD(name, kind, rec, row, since, csv, dflt)                                          \
	if (!(since) || json_object_get(root, #name))                                              \
		TRY(GET_##kind(#name, r->name));
	ENGI_EPISODE_FIELDS(GET_FIELD)
#undef GET_FIELD

	json_t *arr, *el;
	size_t i;
	void *items;
	TRY(read_items(rd, root, "assertions", sizeof(*r->assertions), &items, &r->nassertions,
		       &arr));
	r->assertions = items;
	json_array_foreach(arr, i, el)
	{
		TRY(enter(rd, "assertions", i, el));
		TRY(read_assertion(rd, el, &r->assertions[i]));
	}
	rd->path[0] = '\0';
	TRY(read_items(rd, root, "metrics", sizeof(*r->metrics), &items, &r->nmetrics, &arr));
	r->metrics = items;
	json_array_foreach(arr, i, el)
	{
		TRY(enter(rd, "metrics", i, el));
		TRY(read_metric(rd, el, &r->metrics[i]));
	}
	rd->path[0] = '\0';
	TRY(read_items(rd, root, "artifacts", sizeof(*r->artifacts), &items, &r->nartifacts, &arr));
	r->artifacts = items;
	json_array_foreach(arr, i, el)
	{
		TRY(enter(rd, "artifacts", i, el));
		TRY(read_artifact(rd, el, &r->artifacts[i]));
	}
	rd->path[0] = '\0';
	return read_trace(rd, root, r);
}

/* ---- the episode row ---- */

/* A record's texts always fit their row (widths of engi/schema.h). */
#define FITS(name, kind, rec, row, since, csv, dflt)                                               \
	_Static_assert((rec) <= (row), #name " fits its row");
ENGI_EPISODE_FIELDS(FITS)
#undef FITS

static void copy_text(char *dst, size_t size, const char *src, size_t width)
{
	size_t n = strnlen(src, width < size ? width : size - 1);
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

#define TO_ROW_S(d, s) copy_text(d, sizeof(d), s, sizeof(s))
#define TO_ROW_M(d, s) copy_text(d, sizeof(d), s, sizeof(s))
#define TO_ROW_O(d, s) copy_text(d, sizeof(d), outcome_name(s), SIZE_MAX)
#define TO_ROW_o(d, s) copy_text(d, sizeof(d), (s) >= 0 ? outcome_name(s) : "", SIZE_MAX)
#define TO_ROW_I(d, s) ((d) = (s))
#define TO_ROW_L(d, s) ((d) = (s))
#define TO_ROW_B(d, s) ((d) = (s))
#define TO_ROW_D(d, s) ((d) = (s))

void record_to_row(const struct record *r, struct engi_res_episode *e)
{
	memset(e, 0, sizeof(*e));
#define TO_ROW(name, kind, rec, row, since, csv, dflt) TO_ROW_##kind(e->name, r->name);
	ENGI_EPISODE_FIELDS(TO_ROW)
#undef TO_ROW
}

#define FROM_ROW_S(d, s) copy_text(d, sizeof(d), s, sizeof(s))
#define FROM_ROW_M(d, s) copy_text(d, sizeof(d), s, sizeof(s))
#define FROM_ROW_O(d, s) ((d) = engi_outcome_find(s, sizeof(s)))
/* "" (a file of an earlier format version, or not known): -1 */
#define FROM_ROW_o(d, s) ((d) = engi_outcome_find(s, sizeof(s)))
#define FROM_ROW_I(d, s) ((d) = (s))
#define FROM_ROW_L(d, s) ((d) = (s))
#define FROM_ROW_B(d, s) ((d) = (s))
#define FROM_ROW_D(d, s) ((d) = (s))

int record_from_row(struct record *r, const struct engi_res_episode *e, struct engi_error *err)
{
#define FROM_ROW(name, kind, rec, row, since, csv, dflt) FROM_ROW_##kind(r->name, e->name);
	ENGI_EPISODE_FIELDS(FROM_ROW)
#undef FROM_ROW
	if (r->outcome < 0)
		RAISE(err, ENGI_EPARSE, "cell %.*s has the unknown outcome '%.*s'",
		      (int)sizeof(e->cell), e->cell, (int)sizeof(e->outcome), e->outcome);
	return 0;
}

int record_from_json(const char *text, size_t len, struct record *r, struct engi_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		RAISE(err, ENGI_EPARSE, "malformed record JSON at line %d, column %d: %s",
		      jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		RAISE(err, ENGI_EPARSE, "record: expected a JSON object");
	}
	struct record tmp;
	record_init(&tmp);
	struct reader rd = {.err = err, .path = ""};
	int rc = read_record(&rd, root, &tmp);
	json_decref(root);
	if (rc < 0) {
		record_release(&tmp);
		return rc;
	}
	record_release(r);
	*r = tmp;
	return 0;
}

void record_config_suite(const char *config_json, struct engi_results *res)
{
	json_t *cfg = config_json ? json_loads(config_json, 0, NULL) : NULL;
	json_t *n = json_object_get(cfg, "suite_refused");
	json_t *why = json_object_get(cfg, "suite_refused_reasons");
	const char *src = json_string_value(json_object_get(cfg, "suite_source"));
	if (json_is_integer(n) && json_integer_value(n) > 0) {
		res->suite_refused = (uint64_t)json_integer_value(n);
		snprintf(res->suite_source, sizeof(res->suite_source), "%s", src ? src : "");
		size_t w = 0;
		const char *key;
		json_t *v;
		res->suite_refused_reasons[0] = '\0';
		json_object_foreach(why, key, v)
		{
			if (!json_is_integer(v) || w >= sizeof(res->suite_refused_reasons))
				continue;
			int k = snprintf(res->suite_refused_reasons + w,
					 sizeof(res->suite_refused_reasons) - w, "%s%lld %s",
					 w ? ", " : "", (long long)json_integer_value(v), key);
			w = k < 0 ? sizeof(res->suite_refused_reasons) : w + (size_t)k;
		}
	}
	json_decref(cfg);
}
