/*
 * ew_xml.h - the reply of a model in the `engiworld` action space: one XML
 * document, nothing around it but white space (an XML declaration and
 * comments are allowed):
 *
 *   <response>
 *     <reflection>what I see and why I act</reflection>
 *     <action type="bash"><![CDATA[ls -l]]></action>
 *     <action type="python"><![CDATA[print(2 + 2)]]></action>
 *     <action type="readimg" path="/abs/plot.png"/>
 *   </response>
 *
 * exactly one non-empty <reflection> and 1 to EWXML_ACTIONS_MAX <action>s,
 * in any order. Action types (case-insensitive): bash and python take a
 * non-empty body and no attribute but type; readimg a non-empty path and no
 * body; wait an optional seconds (a number from 0 to 1800, default 120);
 * done and fail nothing. wait, done and fail stand alone in a response.
 * Bodies are text and CDATA sections (the five XML entities and character
 * references decoded), de-indented by their common leading white space and
 * stripped.
 *
 * The reader is strict and bounded: one pass, no recursion (the grammar is
 * flat), documents of at most EWXML_DOC_MAX bytes; any input gives either a
 * reply or a reason, never a crash.
 */
#ifndef ENGI_EW_XML_H
#define ENGI_EW_XML_H

#include <stddef.h>

#define EWXML_DOC_MAX	     ((size_t)1 << 20)
#define EWXML_ACTIONS_MAX    16
#define EWXML_WAIT_DEFAULT_S 120.0
#define EWXML_WAIT_MAX_S     1800.0

enum ewxml_kind { EWXML_BASH, EWXML_PYTHON, EWXML_READIMG, EWXML_WAIT, EWXML_DONE, EWXML_FAIL };

struct ewxml_action {
	int kind;
	char *body;	/* bash, python: the code; "" for the others */
	char *path;	/* readimg: the path; else NULL */
	double seconds; /* wait */
};

struct ewxml_reply {
	char *reflection;
	struct ewxml_action v[EWXML_ACTIONS_MAX];
	size_t n;
};

/* Reads text (len bytes) into r: 0; ENGI_EPARSE with the reason in why (a
 * sentence for the model, "line N: ..." where it has a place); ENGI_ENOMEM.
 * r is always released and ready for ewxml_release. */
int ewxml_parse(const char *text, size_t len, struct ewxml_reply *r, char *why, size_t why_n);
void ewxml_release(struct ewxml_reply *r);
/* "bash", "python", "readimg", "wait", "done", "fail" */
const char *ewxml_kind_name(int kind);

#endif
