/*
 * The reader of engiworld replies (src/agent/ew_xml.c): every action type
 * with its attributes, CDATA and entities, bodies de-indented and
 * stripped, the case of type names; and refusals with their reasons:
 * text around the document, a missing or second reflection, unknown
 * types and attributes, wait/done/fail beside other actions, wait seconds
 * out of range, markup in a body, unclosed parts, too many actions, an
 * oversized document; and hostile input (every prefix of a valid document,
 * deep nesting, random bytes) read without a crash and always released.
 */
#include "check.h"
#include "ew_xml.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <stdlib.h>
#include <string.h>

static int parse(const char *text, struct ewxml_reply *r, char *why, size_t n)
{
	return ewxml_parse(text, strlen(text), r, why, n);
}

static void test_all_types(void)
{
	const char *doc = "<?xml version=\"1.0\"?>\n"
			  "<!-- the plan -->\n"
			  "<response>\n"
			  "  <reflection><![CDATA[  I look first. ]]></reflection>\n"
			  "  <action type=\"BASH\"><![CDATA[\n"
			  "      ls -l\n"
			  "        echo 'a < b' && true\n"
			  "  ]]></action>\n"
			  "  <action type='python'>\n"
			  "    if 1 &lt; 2:\n"
			  "        print(&quot;x&amp;y&#33;&#x263A;&quot;)\n"
			  "  </action>\n"
			  "  <action type=\"readimg\" path=\" /w/plot.png \"/>\n"
			  "</response>\n";
	struct ewxml_reply r;
	char why[256];
	int rc = parse(doc, &r, why, sizeof(why));
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "why: %s\n", why);
	CHECK_INT(r.n, 3);
	CHECK_STR(r.reflection, "I look first.");
	CHECK_INT(r.v[0].kind, EWXML_BASH);
	CHECK_STR(r.v[0].body, "ls -l\n  echo 'a < b' && true");
	CHECK_INT(r.v[1].kind, EWXML_PYTHON);
	CHECK_STR(r.v[1].body, "if 1 < 2:\n    print(\"x&y!\xE2\x98\xBA\")");
	CHECK_INT(r.v[2].kind, EWXML_READIMG);
	CHECK_STR(r.v[2].path, "/w/plot.png");
	CHECK_STR(r.v[2].body, "");
	CHECK_STR(ewxml_kind_name(r.v[2].kind), "readimg");
	ewxml_release(&r);
	CHECK_INT(r.n, 0);
	CHECK(r.reflection == NULL);
}

/* A document of one action parses to that kind (and wait seconds). */
static void one(const char *doc, int kind, double seconds)
{
	struct ewxml_reply r;
	char why[256];
	CHECK_INT(parse(doc, &r, why, sizeof(why)), 0);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.n ? r.v[0].kind : -1, kind);
	if (kind == EWXML_WAIT)
		CHECK_NEAR(r.n ? r.v[0].seconds : -1, seconds, 0);
	ewxml_release(&r);
}

static void test_signals(void)
{
	one("<response><reflection>w</reflection><action type=\"Wait\"/></response>", EWXML_WAIT,
	    EWXML_WAIT_DEFAULT_S);
	one("<response><reflection>w</reflection>"
	    "<action type=\"wait\" seconds=\" 2.5 \"></action></response>",
	    EWXML_WAIT, 2.5);
	one("<response><action type=\"wait\" seconds=\"1800\"/><reflection>w</reflection>"
	    "</response>",
	    EWXML_WAIT, 1800);
	one("<response><reflection>ok</reflection><action type=\"done\"/></response>", EWXML_DONE,
	    0);
	one("<response><reflection>no</reflection><action type=\"FAIL\"/></response>", EWXML_FAIL,
	    0);
}

/* Each document is refused, and its reason holds the fragment. */
static void test_refused(void)
{
	static const struct {
		const char *doc, *reason;
	} bad[] = {
	    {"", "no <response>"},
	    {"   \n ", "no <response>"},
	    {"```xml\n<response/>\n```", "Markdown fence"},
	    {"Sure! <response></response>", "text before <response>"},
	    {"<response><reflection>r</reflection><action type=\"done\"/></response> ok",
	     "text after </response>"},
	    {"<response></response>", "no <reflection>"},
	    {"<response/>", "no <reflection>"},
	    {"<response><reflection>r</reflection></response>", "no <action>"},
	    {"<response><reflection>  </reflection><action type=\"done\"/></response>",
	     "<reflection> is empty"},
	    {"<response><reflection>a</reflection><reflection>b</reflection></response>",
	     "more than one <reflection>"},
	    {"<response><reflection>r</reflection><action type=\"rm\">x</action></response>",
	     "unknown action type 'rm'"},
	    {"<response><reflection>r</reflection><action>x</action></response>", "without a type"},
	    {"<response><reflection>r</reflection><action type=\"bash\" cwd=\"/\">x</action>"
	     "</response>",
	     "no attribute 'cwd'"},
	    {"<response><reflection>r</reflection><action type=\"bash\" path=\"/x\">x</action>"
	     "</response>",
	     "bash action takes no path"},
	    {"<response><reflection>r</reflection><action type=\"bash\"> </action></response>",
	     "empty body"},
	    {"<response><reflection>r</reflection><action type=\"python\"/></response>",
	     "empty body"},
	    {"<response><reflection>r</reflection><action type=\"readimg\"/></response>",
	     "non-empty path"},
	    {"<response><reflection>r</reflection><action type=\"readimg\" path=\"a\">b</action>"
	     "</response>",
	     "takes no body"},
	    {"<response><reflection>r</reflection><action type=\"done\">all good</action>"
	     "</response>",
	     "takes no body"},
	    {"<response><reflection>r</reflection><action type=\"done\" seconds=\"1\"/>"
	     "</response>",
	     "takes no seconds"},
	    {"<response><reflection>r</reflection><action type=\"wait\" seconds=\"1801\"/>"
	     "</response>",
	     "from 0 to 1800"},
	    {"<response><reflection>r</reflection><action type=\"wait\" seconds=\"-1\"/>"
	     "</response>",
	     "from 0 to 1800"},
	    {"<response><reflection>r</reflection><action type=\"wait\" seconds=\"ten\"/>"
	     "</response>",
	     "from 0 to 1800"},
	    {"<response><reflection>r</reflection><action type=\"wait\" seconds=\"nan\"/>"
	     "</response>",
	     "from 0 to 1800"},
	    {"<response><reflection>r</reflection><action type=\"bash\">ls</action>"
	     "<action type=\"done\"/></response>",
	     "done action must be the only action"},
	    {"<response><reflection>r</reflection><action type=\"wait\"/>"
	     "<action type=\"wait\"/></response>",
	     "wait action must be the only action"},
	    {"<response><reflection>r</reflection><action type=\"bash\">cat < f</action>"
	     "</response>",
	     "put code in CDATA"},
	    {"<response><reflection>r</reflection><action type=\"bash\">a && b</action>"
	     "</response>",
	     "starts no entity"},
	    {"<response><reflection>r</reflection><action type=\"bash\">&nbsp;</action>"
	     "</response>",
	     "unknown entity"},
	    {"<response><reflection>r</reflection><action type=\"bash\">&#0;</action>"
	     "</response>",
	     "no valid character"},
	    {"<response><reflection>r</reflection><action type=\"bash\">&#xD800;</action>"
	     "</response>",
	     "no valid character"},
	    {"<response><reflection>r</reflection><action type=\"bash\"><![CDATA[ls</action>"
	     "</response>",
	     "CDATA section is not closed"},
	    {"<response><reflection>r</reflection><action type=\"bash\">ls</response>",
	     "</response> closes <action>"},
	    {"<response><reflection>r</reflection><action type=\"bash\">ls", "is not closed"},
	    {"<response><reflection>r</reflection>", "<response> is not closed"},
	    {"<response><reflection>r</reflection><action type=\"bash>ls</action></response>",
	     "a '<' inside the value"},
	    {"<response><reflection>r</reflection><action type=bash>ls</action></response>",
	     "must be quoted"},
	    {"<response><reflection>r</reflection><action type=\"bash\" type=\"bash\">ls"
	     "</action></response>",
	     "given twice"},
	    {"<response><reflection>r</reflection><action type=\"bash\"type=\"x\">ls</action>"
	     "</response>",
	     "expected white space"},
	    {"<response><thought>r</thought></response>", "unexpected element <thought>"},
	    {"<response>hello<reflection>r</reflection></response>", "text directly inside"},
	    {"<response id=\"1\"><reflection>r</reflection><action type=\"done\"/></response>",
	     "<response> takes no attributes"},
	    {"<responses><reflection>r</reflection></responses>", "expected <response>"},
	    {"<!-- open <response></response>", "comment is not closed"},
	    {"<?xml version=\"1.0\"<response/>", "declaration is not closed"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ewxml_reply r;
		char why[256];
		int rc = parse(bad[i].doc, &r, why, sizeof(why));
		CHECK_INT(rc, ENGI_EPARSE);
		if (!strstr(why, bad[i].reason)) {
			CHECK(!"the reason names the fault");
			fprintf(stderr, "doc %zu: '%s' lacks '%s'\n", i, why, bad[i].reason);
		}
		CHECK(!strncmp(why, "line ", 5));
		CHECK_INT(r.n, 0);
		CHECK(r.reflection == NULL);
		ewxml_release(&r);
	}
}

static void test_bounds(void)
{
	struct ewxml_reply r;
	char why[256];
	/* 17 actions */
	char doc[4096] = "<response><reflection>r</reflection>";
	for (int i = 0; i < EWXML_ACTIONS_MAX + 1; i++)
		strcat(doc, "<action type=\"bash\">true</action>");
	strcat(doc, "</response>");
	CHECK_INT(parse(doc, &r, why, sizeof(why)), ENGI_EPARSE);
	CHECK(strstr(why, "more than 16 actions") != NULL);
	/* 16 are fine */
	char *end = strstr(doc, "<action");
	end = strstr(end + 1, "<action");
	memmove(doc + strlen("<response><reflection>r</reflection>"), end, strlen(end) + 1);
	CHECK_INT(parse(doc, &r, why, sizeof(why)), 0);
	CHECK_INT(r.n, EWXML_ACTIONS_MAX);
	ewxml_release(&r);
	/* over the document cap */
	size_t big = EWXML_DOC_MAX + 1;
	char *huge = engi_malloc(big + 1);
	CHECK(huge != NULL);
	if (huge) {
		memset(huge, ' ', big);
		huge[big] = '\0';
		CHECK_INT(ewxml_parse(huge, big, &r, why, sizeof(why)), ENGI_EPARSE);
		CHECK(strstr(why, "longer than") != NULL);
		engi_free(huge);
	}
	/* a body near the cap is read (no recursion, no quadratic blow-up) */
	size_t n = EWXML_DOC_MAX - 200;
	char *body = engi_malloc(n + 1);
	if (body) {
		static const char head[] =
		    "<response><reflection>r</reflection><action type=\"bash\"><![CDATA[";
		static const char tail[] = "]]></action></response>";
		memcpy(body, head, sizeof(head) - 1);
		memset(body + sizeof(head) - 1, 'x', n - sizeof(head) - sizeof(tail) + 2);
		memcpy(body + n - sizeof(tail) + 1, tail, sizeof(tail));
		CHECK_INT(ewxml_parse(body, n, &r, why, sizeof(why)), 0);
		CHECK_INT(r.n, 1);
		CHECK_INT(strlen(r.n ? r.v[0].body : ""), n - sizeof(head) - sizeof(tail) + 2);
		ewxml_release(&r);
		engi_free(body);
	}
	/* deep nesting is refused at the first child, not followed */
	char *deep = engi_malloc(200000 * 3 + 64);
	if (deep) {
		strcpy(deep, "<response><reflection>r</reflection><action type=\"bash\">");
		size_t l = strlen(deep);
		for (int i = 0; i < 200000; i++, l += 3)
			memcpy(deep + l, "<a>", 3);
		deep[l] = '\0';
		CHECK_INT(ewxml_parse(deep, l, &r, why, sizeof(why)), ENGI_EPARSE);
		engi_free(deep);
	}
	/* a NUL byte inside the length */
	static const char nul[] = "<response><reflection>r</reflection><action type=\"bash\">a\0b"
				  "</action></response>";
	CHECK_INT(ewxml_parse(nul, sizeof(nul) - 1, &r, why, sizeof(why)), ENGI_EPARSE);
	CHECK(strstr(why, "NUL") != NULL);
	/* a tiny reason buffer is still a string */
	char tiny[4];
	CHECK_INT(parse("nope", &r, tiny, sizeof(tiny)), ENGI_EPARSE);
	CHECK(strlen(tiny) < sizeof(tiny));
	CHECK_INT(parse("nope", &r, NULL, 0), ENGI_EPARSE);
}

/* Every prefix of a valid document, and bytes flipped at random, read
 * without a crash; only the whole document parses. */
static void test_hostile(void)
{
	static const char doc[] =
	    "<?xml version=\"1.0\"?><response><reflection><![CDATA[r]]></reflection>"
	    "<action type=\"bash\"><![CDATA[echo hi]]></action><!-- c -->"
	    "<action type=\"readimg\" path=\"a&amp;b.png\"/></response>";
	size_t n = sizeof(doc) - 1;
	for (size_t k = 0; k <= n; k++) {
		struct ewxml_reply r;
		char why[128];
		int rc = ewxml_parse(doc, k, &r, why, sizeof(why));
		CHECK(rc == (k == n ? 0 : ENGI_EPARSE));
		if (k == n)
			CHECK_STR(r.n == 2 ? r.v[1].path : "", "a&b.png");
		ewxml_release(&r);
	}
	unsigned seed = 7;
	char buf[sizeof(doc)];
	int parsed = 0;
	for (int round = 0; round < 20000; round++) {
		memcpy(buf, doc, sizeof(doc));
		for (int f = 0; f < 1 + round % 4; f++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245u + 12345u;
			buf[at] = (char)(seed >> 16);
		}
		struct ewxml_reply r;
		char why[128];
		int rc = ewxml_parse(buf, n, &r, why, sizeof(why));
		CHECK(rc == 0 || rc == ENGI_EPARSE);
		if (rc == 0) {
			parsed++;
			CHECK(r.reflection && r.reflection[0] && r.n >= 1 &&
			      r.n <= EWXML_ACTIONS_MAX);
		} else {
			CHECK(why[0] != '\0');
		}
		ewxml_release(&r);
	}
	CHECK(parsed < 20000);
}

int main(void)
{
	test_all_types();
	test_signals();
	test_refused();
	test_bounds();
	test_hostile();
	return check_exit();
}
