/*
 * The validating JSON getters (verifiers/json.c) every reader of a task,
 * criteria or sweep file shares: each message word for word with its file
 * and JSON pointer, defaults when absent, the type rules (an integer is a
 * number, false is a boolean), NUL characters and names refused, pointers
 * escaped and cut to their buffer.
 */
#include "check.h"

#include "engi/error.h"
#include "engi/json.h"

#include <jansson.h>
#include <string.h>

static json_t *obj;
static struct engi_error err;

static void expect_msg(int rc, const char *msg)
{
	CHECK_INT(rc, ENGI_EPARSE);
	CHECK_STR(err.msg, msg);
	engi_error_init(&err);
}

static void test_pointer(void)
{
	char p[16];
	engi_json_pointer(p, sizeof(p), "/a", "b/c~d");
	CHECK_STR(p, "/a/b~1c~0d");
	engi_json_pointer(p, 8, "/a", "b/c~d");
	CHECK_STR(p, "/a/b~1c");
	engi_json_pointer(p, 6, "/a", "b/c~d");
	CHECK_STR(p, "/a/b"); /* no half escape */
	engi_json_pointer_index(p, sizeof(p), "/list", 12);
	CHECK_STR(p, "/list/12");
	char list[12];
	static const char *const names[] = {"alpha", "beta", "gamma", NULL};
	engi_json_join(list, sizeof(list), names, 3);
	CHECK_STR(list, "alpha, beta");
	expect_msg(engi_parse_error(&err, "f.json", "", "bad %d", 7), "f.json: /: bad 7");
}

static void test_getters(void)
{
	json_t *v;
	const char *s;
	long l;
	int b, present;
	double d = -1;
	CHECK_INT(engi_json_field(obj, "n", JSON_REAL, 1, "t.json", "/x", &v, &err), 0);
	CHECK(json_is_integer(v)); /* an integer is a number */
	CHECK_INT(engi_json_field(obj, "absent", JSON_REAL, 0, "t.json", "/x", &v, &err), 0);
	CHECK(v == NULL);
	expect_msg(engi_json_field(obj, "absent", JSON_STRING, 1, "t.json", "/x", &v, &err),
		   "t.json: /x/absent: missing required field");
	expect_msg(engi_json_field(obj, "s", JSON_OBJECT, 0, "t.json", "", &v, &err),
		   "t.json: /s: expected an object, found a string");
	expect_msg(engi_json_field(obj, "n", JSON_ARRAY, 0, "t.json", "", &v, &err),
		   "t.json: /n: expected an array, found an integer");

	CHECK_INT(engi_json_string(obj, "s", 1, 1, "t.json", "", &s, &err), 0);
	CHECK_STR(s, "text");
	expect_msg(engi_json_string(obj, "empty", 0, 1, "t.json", "", &s, &err),
		   "t.json: /empty: must not be empty");
	CHECK_INT(engi_json_string(obj, "empty", 0, 0, "t.json", "", &s, &err), 0);
	CHECK_STR(s, "");
	expect_msg(engi_json_string(obj, "nul", 0, 0, "t.json", "/o", &s, &err),
		   "t.json: /o/nul: string contains a NUL character");
	CHECK_INT(engi_json_string(obj, "absent", 0, 1, "t.json", "", &s, &err), 0);
	CHECK(s == NULL);

	CHECK_INT(engi_json_int(obj, "n", 0, 10, 3, "t.json", "", &l, &err), 0);
	CHECK_INT(l, 7);
	CHECK_INT(engi_json_int(obj, "absent", 0, 10, 3, "t.json", "", &l, &err), 0);
	CHECK_INT(l, 3);
	expect_msg(engi_json_int(obj, "n", 8, 10, 3, "t.json", "", &l, &err),
		   "t.json: /n: 7 is out of range [8, 10]");
	expect_msg(engi_json_int(obj, "x", 0, 10, 3, "t.json", "", &l, &err),
		   "t.json: /x: expected an integer, found a number");

	CHECK_INT(engi_json_bool(obj, "no", 1, "t.json", "", &b, &err), 0);
	CHECK_INT(b, 0); /* false is a boolean */
	CHECK_INT(engi_json_bool(obj, "absent", 1, "t.json", "", &b, &err), 0);
	CHECK_INT(b, 1);
	expect_msg(engi_json_bool(obj, "n", 1, "t.json", "", &b, &err),
		   "t.json: /n: expected a boolean, found an integer");

	CHECK_INT(engi_json_number(obj, "x", "t.json", "", &present, &d, &err), 0);
	CHECK(present && d == 2.5);
	d = -1;
	CHECK_INT(engi_json_number(obj, "absent", "t.json", "", &present, &d, &err), 0);
	CHECK(!present && d == -1);
	expect_msg(engi_json_number(obj, "s", "t.json", "", &present, &d, &err),
		   "t.json: /s: expected a number, found a string");
	CHECK(!present);
	expect_msg(
	    engi_json_expect(json_object_get(obj, "nothing"), JSON_TRUE, "t.json", "/z", &err),
	    "t.json: /z: expected a boolean, found null");

	/* a number with a floor, and what was found with its value */
	CHECK_INT(engi_json_number_min(obj, "x", 0, 9, "t.json", "", &d, &err), 0);
	CHECK(d == 2.5);
	CHECK_INT(engi_json_number_min(obj, "n", 7, 9, "t.json", "", &d, &err), 0);
	CHECK(d == 7); /* the floor itself is allowed */
	CHECK_INT(engi_json_number_min(obj, "absent", 0, 9, "t.json", "", &d, &err), 0);
	CHECK(d == 9);
	expect_msg(engi_json_number_min(obj, "n", 7.5, 9, "t.json", "/o", &d, &err),
		   "t.json: /o/n: expected a number ≥ 7.5, found an integer (7)");
	expect_msg(engi_json_number_min(obj, "s", 0, 9, "t.json", "", &d, &err),
		   "t.json: /s: expected a number ≥ 0, found a string ('text')");
	expect_msg(engi_json_number_min(obj, "nothing", 0, 9, "t.json", "", &d, &err),
		   "t.json: /nothing: expected a number ≥ 0, found null");
	char found[32];
	engi_json_found(found, sizeof(found), json_object_get(obj, "x"));
	CHECK_STR(found, "a number (2.5)");
	engi_json_found(found, sizeof(found), json_object_get(obj, "no"));
	CHECK_STR(found, "a boolean (false)");
	json_t *arr = json_array();
	engi_json_found(found, sizeof(found), arr);
	CHECK_STR(found, "an array");
	json_decref(arr);
	json_t *long_s = json_string("0123456789012345678901234567890123456789012345678901234567"
				     "89abcdef");
	char wide[96];
	engi_json_found(wide, sizeof(wide), long_s);
	CHECK_STR(wide,
		  "a string ('012345678901234567890123456789012345678901234567890123456789')");
	engi_json_found(found, sizeof(found), long_s); /* cut to its buffer */
	CHECK_INT(strlen(found), sizeof(found) - 1);
	json_decref(long_s);
}

static void test_keys_and_choices(void)
{
	static const char *const keys[] = {"n", "x", "s", "empty", "nul", "no", "nothing", NULL};
	static const char *const fewer[] = {"n", "x", NULL};
	static const char *const choices[] = {"text", "other", NULL};
	CHECK_INT(engi_json_only_keys(obj, keys, "t.json", "/o", &err), 0);
	expect_msg(engi_json_only_keys(obj, fewer, "t.json", "/o", &err),
		   "t.json: /o/s: unknown field (valid: n, x)");
	int i = -1;
	CHECK_INT(engi_json_choice(obj, "s", choices, "kind", 1, "t.json", "", &i, &err), 0);
	CHECK_INT(i, 0);
	i = -1;
	CHECK_INT(engi_json_choice(obj, "absent", choices, "kind", 0, "t.json", "", &i, &err), 0);
	CHECK_INT(i, -1);
	expect_msg(engi_json_choice(obj, "empty", choices, "kind", 1, "t.json", "", &i, &err),
		   "t.json: /empty: unknown kind '' (valid: text, other)");
	expect_msg(engi_json_choice(obj, "n", choices, "kind", 1, "t.json", "", &i, &err),
		   "t.json: /n: expected a string, found an integer");
	/* "text\0x" is not "text" */
	json_object_set_new(obj, "nul2", json_stringn("text\0x", 6));
	expect_msg(engi_json_choice(obj, "nul2", choices, "kind", 1, "t.json", "", &i, &err),
		   "t.json: /nul2: unknown kind 'text' (valid: text, other)");
}

static void test_parse(void)
{
	json_t *root = NULL;
	CHECK_INT(engi_json_parse("a.json", "{\"a\": 1}", 8, &root, &err), 0);
	CHECK(json_is_object(root));
	json_decref(root);
	expect_msg(engi_json_parse("a.json", "{\"a\": 1, \"a\": 2}", 16, &root, &err),
		   "a.json: line 1 column 12: duplicate object key near '\"a\"'");
	CHECK(root == NULL);
	expect_msg(engi_json_parse("a.json", "{\"a\":\n 1", 9, &root, &err),
		   "a.json: line 2 column 2: '}' expected near end of file");
}

static void test_names(void)
{
	char long_name[80];
	memset(long_name, 'a', sizeof(long_name));
	long_name[ENGI_JSON_NAME_MAX] = '\0';
	CHECK(engi_json_name_valid("a.b_c-9", 7));
	CHECK(engi_json_name_valid(long_name, ENGI_JSON_NAME_MAX));
	long_name[ENGI_JSON_NAME_MAX] = 'a';
	long_name[ENGI_JSON_NAME_MAX + 1] = '\0';
	CHECK(!engi_json_name_valid(long_name, ENGI_JSON_NAME_MAX + 1));
	CHECK(!engi_json_name_valid("", 0));
	CHECK(!engi_json_name_valid("_a", 2));
	CHECK(!engi_json_name_valid("a b", 3));
	CHECK(!engi_json_name_valid("ab", 3)); /* a NUL inside */
}

int main(void)
{
	json_error_t je;
	obj = json_loads("{\"n\": 7, \"x\": 2.5, \"s\": \"text\", \"empty\": \"\","
			 " \"nul\": \"a\\u0000b\", \"no\": false, \"nothing\": null}",
			 JSON_ALLOW_NUL, &je);
	BUG_ON(!obj);
	engi_error_init(&err);
	test_pointer();
	test_getters();
	test_keys_and_choices();
	test_names();
	test_parse();
	json_decref(obj);
	return check_exit();
}
