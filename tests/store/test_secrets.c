/*
 * The registry of secrets (src/core/secrets.h) and what the record writer
 * makes of secrets and control characters: scrubbing in place, the JSON
 * forms of a key, header words, the short-secret floor, environments
 * without the keys (and a child started without them), a record whose message, details and notes
 * quote a key, and a message with control characters escaped within its field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "engi/alloc.h"
#include "fsutil.h"
#include "record.h"
#include "secrets.h"
#include "text.h"

#define KEY "sk-unit-0123456789abcdef"

static void test_scrub(void)
{
	CHECK_INT(secrets_any(), 0);
	char none[] = "nothing registered " KEY;
	CHECK_INT(secrets_scrub(none, strlen(none)), strlen(none));

	CHECK_INT(secrets_add(KEY), 0);
	CHECK_INT(secrets_add("short"), 0); /* ignored: under SECRET_MIN bytes */
	CHECK_INT(secrets_any(), 1);
	char buf[] = KEY " at the start, in the " KEY KEY " middle, at the end " KEY;
	size_t n = secrets_scrub(buf, strlen(buf));
	buf[n] = '\0';
	CHECK_STR(buf,
		  "[secret] at the start, in the [secret][secret] middle, at the end [secret]");
	char s[] = "short stays short";
	CHECK_INT(secrets_scrub_str(s), strlen("short stays short"));

	/* a key with a quote and a backslash, as JSON writes it (once and
	 * inside a string of JSON) */
	CHECK_INT(secrets_add("tok\"en\\value-1"), 0);
	char j1[] = "{\"raw\":\"tok\\\"en\\\\value-1\"}";
	secrets_scrub_str(j1);
	CHECK_STR(j1, "{\"raw\":\"[secret]\"}");
	char j2[] = "\"{\\\"k\\\":\\\"tok\\\\\\\"en\\\\\\\\value-1\\\"}\"";
	secrets_scrub_str(j2);
	CHECK_STR(j2, "\"{\\\"k\\\":\\\"[secret]\\\"}\"");

	/* a header value: whole and word by word; "Bearer" is too short */
	CHECK_INT(secrets_add_header("Bearer hdr-canary-42424242"), 0);
	char h[] = "Authorization: Bearer hdr-canary-42424242; quoted: hdr-canary-42424242; Bearer";
	secrets_scrub_str(h);
	CHECK_STR(h, "Authorization: [secret]; quoted: [secret]; Bearer");

	/* the bytes a string no longer uses are zeroed */
	char tail[64];
	memset(tail, 'x', sizeof(tail));
	snprintf(tail, sizeof(tail), "a %s b", KEY);
	size_t len = strlen(tail);
	secrets_scrub_str(tail);
	for (size_t i = strlen(tail); i < len; i++)
		CHECK_INT(tail[i], 0);
	CHECK(secrets_found("x " KEY, strlen(KEY) + 2));
	CHECK(!secrets_found("x", 1));
}

static void test_env(void)
{
	CHECK_INT(setenv("ENGI_UNIT_KEY_VAR", "an-env-key-value-77", 1), 0);
	CHECK_INT(secrets_add_env("ENGI_UNIT_KEY_VAR"), 0);
	char *env[] = {"PATH=/bin",
		       "ENGI_UNIT_KEY_VAR=an-env-key-value-77",
		       "ENGI_UNIT_KEY_VAR=whatever",
		       "COPY=" KEY,
		       "ENGI_UNIT_KEY_VAR_X=kept",
		       "HOME=/h",
		       NULL};
	char **out = secrets_filter_env(env);
	CHECK(out != NULL);
	if (!out)
		return;
	CHECK_STR(out[0], "PATH=/bin");
	CHECK_STR(out[1], "ENGI_UNIT_KEY_VAR_X=kept");
	CHECK_STR(out[2], "HOME=/h");
	CHECK(out[3] == NULL);
	engi_free(out);
	/* its value became a secret too */
	char s[] = "k=an-env-key-value-77";
	secrets_scrub_str(s);
	CHECK_STR(s, "k=[secret]");
}

/* A child (the verifier, a tool) started with our environment does not get
 * the key's variable, nor a variable that holds the key under another name. */
static void test_spawn_env(void)
{
	const char *t = getenv("TMPDIR");
	char out[4096];
	snprintf(out, sizeof(out), "%s/engi-test-secrets-%d.txt", t && *t ? t : "/tmp",
		 (int)getpid());
	unlink(out);
	CHECK_INT(setenv("ENGI_UNIT_OTHER", "an-env-key-value-77", 1), 0);
	char *argv[] = {"sh", "-c",
			"printf '%s %s %s' \"${ENGI_UNIT_KEY_VAR-unset}\" "
			"\"${ENGI_UNIT_OTHER-unset}\" \"${ENGI_UNIT_PLAIN-unset}\"",
			NULL};
	char *add[] = {"ENGI_UNIT_PLAIN=plain", NULL};
	struct spawn_opts so = {.path = "/bin/sh",
				.argv = argv,
				.add_env = add,
				.out_fd = -1,
				.out_path = out,
				.cwd_fd = -1};
	struct engi_error err;
	engi_error_init(&err);
	pid_t pid = child_spawn(&so, &err);
	CHECK(pid > 0);
	int st = 0;
	if (pid > 0)
		CHECK_INT(child_wait(pid, &st), 0);
	char *text = NULL;
	CHECK_INT(fs_read_file(out, 4096, &text, NULL, &err), 0);
	if (text)
		CHECK_STR(text, "unset unset plain");
	engi_free(text);
	unlink(out);
}

static void test_record(void)
{
	struct record a, b;
	struct engi_error err;
	engi_error_init(&err);
	record_init(&a);
	record_init(&b);
	snprintf(a.cell, sizeof(a.cell), "0123456789abcdef");
	snprintf(a.message, sizeof(a.message), "done: the key is %s", KEY);
	a.nassertions = 1;
	a.assertions = engi_calloc(1, sizeof(*a.assertions));
	snprintf(a.assertions[0].name, sizeof(a.assertions[0].name), "a");
	snprintf(a.assertions[0].detail, sizeof(a.assertions[0].detail), "found '%s'", KEY);
	a.assertions[0].state = ENGI_PASS;
	a.nartifacts = 1;
	a.artifacts = engi_calloc(1, sizeof(*a.artifacts));
	snprintf(a.artifacts[0].path, sizeof(a.artifacts[0].path), "out.txt");
	snprintf(a.artifacts[0].note, sizeof(a.artifacts[0].note), "cannot copy %s", KEY);
	char *json = NULL;
	size_t len = 0;
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK(json && !strstr(json, KEY));
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	CHECK_STR(b.message, "done: the key is [secret]");
	if (b.nassertions == 1)
		CHECK_STR(b.assertions[0].detail, "found '[secret]'");
	if (b.nartifacts == 1)
		CHECK_STR(b.artifacts[0].note, "cannot copy [secret]");
	engi_free(json);
	record_release(&a);
	record_release(&b);
}

static void test_message_controls(void)
{
	struct record a, b;
	struct engi_error err;
	engi_error_init(&err);
	record_init(&a);
	record_init(&b);
	snprintf(a.cell, sizeof(a.cell), "0123456789abcdef");
	snprintf(a.message, sizeof(a.message),
		 "line1\nline2\ttab \x01 \x1b[31mred caf\xc3\xa9\x7f");
	char *json = NULL;
	size_t len = 0;
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	CHECK_STR(b.message, "line1\\x0aline2\\x09tab \\x01 \\x1b[31mred caf\xc3\xa9\\x7f");
	engi_free(json);
	record_release(&b);

	/* a full field of controls: the escaped text is cut at an escape and
	 * still fits the field when read back */
	memset(a.message, '\x1b', sizeof(a.message) - 1);
	a.message[sizeof(a.message) - 1] = '\0';
	record_init(&b);
	CHECK_INT(record_to_json(&a, &json, &len, &err), 0);
	CHECK_INT(record_from_json(json, len, &b, &err), 0);
	size_t n = strlen(b.message);
	CHECK(n > 200 && n < sizeof(b.message) && n % 4 == 0);
	for (size_t i = 0; i < n; i++)
		CHECK(b.message[i] >= 0x20);
	engi_free(json);
	record_release(&a);
	record_release(&b);

	/* a character that would not fit whole is left out whole */
	char out[6];
	CHECK_INT(text_escape_controls("ab\xe2\x9c\x93", out, sizeof(out)), 5);
	CHECK_INT(text_escape_controls("abc\xe2\x9c\x93", out, sizeof(out)), 3);
	CHECK_INT(text_escape_controls("ab\n", out, sizeof(out)), 2);
	/* bytes of an invalid sequence go one by one, a valid one whole */
	char wide[32];
	CHECK_INT(text_escape_controls("\xed\xa0\x80\xc3\xa9", wide, sizeof(wide)), 5);
	CHECK_STR(wide, "\xed\xa0\x80\xc3\xa9");
}

/* Command output made valid UTF-8: NUL, surrogates, overlongs and cut
 * characters become U+FFFD byte by byte, valid text stays. */
static void test_utf8_clean(void)
{
	static const char in[] = "a\0b\xed\xa0\x80\xc0\xaf\xe2\x82\xac\xe2\x82";
	size_t n = 0;
	char *c = text_utf8_clean(in, sizeof(in) - 1, &n);
	static const char want[] = "a\xef\xbf\xbd"
				   "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				   "\xef\xbf\xbd\xef\xbf\xbd\xe2\x82\xac"
				   "\xef\xbf\xbd\xef\xbf\xbd";
	CHECK(c != NULL);
	CHECK_INT(n, sizeof(want) - 1);
	CHECK(c && memcmp(c, want, sizeof(want)) == 0);
	engi_free(c);
}

int main(void)
{
	test_message_controls();
	test_scrub();
	test_env();
	test_spawn_env();
	test_record();
	test_utf8_clean();
	return check_exit();
}
