/*
 * The reader of engiworld replies (ew_xml.h): a cursor over the document,
 * one element at a time; element content is gathered into a capped buffer.
 * Every failure says where (the line) and what was expected.
 */
#include "ew_xml.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "engi/error.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_MAX_LEN 32
#define ATTRS_MAX    8

struct cur {
	const char *s, *p, *end;
	char *why;
	size_t why_n;
};

struct attr {
	char name[NAME_MAX_LEN + 1];
	char *value;
};

static const char *const kind_names[] = {"bash", "python", "readimg", "wait", "done", "fail"};

const char *ewxml_kind_name(int kind)
{
	return kind >= 0 && kind <= EWXML_FAIL ? kind_names[kind] : "?";
}

static int line_of(const struct cur *c)
{
	int line = 1;
	for (const char *q = c->s; q < c->p && q < c->end; q++)
		line += *q == '\n';
	return line;
}

__attribute__((format(printf, 2, 3))) static int bad(struct cur *c, const char *fmt, ...)
{
	int n = snprintf(c->why, c->why_n, "line %d: ", line_of(c));
	if (n < 0 || (size_t)n >= c->why_n)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why + n, c->why_n - (size_t)n, fmt, ap);
	va_end(ap);
	return ENGI_EPARSE;
}

static int is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static void skip_ws(struct cur *c)
{
	while (c->p < c->end && is_ws(*c->p))
		c->p++;
}

static int at(const struct cur *c, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(c->end - c->p) >= n && !memcmp(c->p, lit, n);
}

/* Past the next occurrence of lit; 0, or -1 when there is none. */
static int skip_past(struct cur *c, const char *lit)
{
	size_t n = strlen(lit);
	for (const char *q = c->p; (size_t)(c->end - q) >= n; q++)
		if (!memcmp(q, lit, n)) {
			c->p = q + n;
			return 0;
		}
	return -1;
}

static int skip_comment(struct cur *c)
{
	c->p += 4; /* "<!--" */
	if (skip_past(c, "-->") < 0)
		return bad(c, "a comment is not closed with -->");
	return 0;
}

static int name_char(char ch, int first)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':' ||
	       (!first && ((ch >= '0' && ch <= '9') || ch == '-' || ch == '.'));
}

/* A name at the cursor into out (at most NAME_MAX_LEN characters). */
static int read_name(struct cur *c, char *out, const char *what)
{
	size_t n = 0;
	if (c->p >= c->end || !name_char(*c->p, 1))
		return bad(c, "expected %s", what);
	while (c->p < c->end && name_char(*c->p, n == 0)) {
		if (n == NAME_MAX_LEN)
			return bad(c, "a name longer than %d characters", NAME_MAX_LEN);
		out[n++] = *c->p++;
	}
	out[n] = '\0';
	return 0;
}

static int put_utf8(struct engi_dynbuf *b, unsigned long cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
	}
	return engi_dynbuf_add(b, u, n);
}

/* An entity reference at the cursor ('&'), decoded into b. */
static int read_entity(struct cur *c, struct engi_dynbuf *b)
{
	static const struct {
		const char *name;
		char ch;
	} named[] = {{"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
	const char *semi =
	    memchr(c->p, ';', (size_t)(c->end - c->p) < 12 ? (size_t)(c->end - c->p) : 12);
	if (!semi)
		return bad(c,
			   "a '&' that starts no entity (write &amp;, or put the text in CDATA)");
	const char *nm = c->p + 1;
	size_t n = (size_t)(semi - nm);
	if (n >= 2 && nm[0] == '#') {
		int hex = nm[1] == 'x';
		const char *d = nm + 1 + hex;
		unsigned long cp = 0;
		if (d == semi)
			return bad(c, "an empty character reference");
		for (; d < semi; d++) {
			int v = *d >= '0' && *d <= '9'		? *d - '0'
				: hex && *d >= 'a' && *d <= 'f' ? *d - 'a' + 10
				: hex && *d >= 'A' && *d <= 'F' ? *d - 'A' + 10
								: -1;
			if (v < 0)
				return bad(c, "a malformed character reference '%.*s'",
					   (int)(semi - c->p + 1), c->p);
			cp = cp * (hex ? 16 : 10) + (unsigned long)v;
			if (cp > 0x10FFFF)
				break;
		}
		if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return bad(c, "a character reference to no valid character");
		c->p = semi + 1;
		return put_utf8(b, cp) < 0 ? ENGI_ENOMEM : 0;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i].name) == n && !memcmp(named[i].name, nm, n)) {
			c->p = semi + 1;
			return engi_dynbuf_add(b, &named[i].ch, 1) < 0 ? ENGI_ENOMEM : 0;
		}
	return bad(c, "unknown entity '&%.*s;' (XML knows lt, gt, amp, quot, apos)", (int)n, nm);
}

/* Attributes up to '>' or "/>"; *empty says which. */
static int read_attrs(struct cur *c, struct attr *v, size_t *nv, int *empty)
{
	*nv = 0;
	for (;;) {
		int sep = c->p < c->end && is_ws(*c->p);
		skip_ws(c);
		if (at(c, "/>")) {
			c->p += 2;
			*empty = 1;
			return 0;
		}
		if (at(c, ">")) {
			c->p++;
			*empty = 0;
			return 0;
		}
		if (c->p >= c->end)
			return bad(c, "a tag is not closed with '>'");
		if (!sep)
			return bad(c, "expected white space, '>' or '/>' in a tag");
		if (*nv == ATTRS_MAX)
			return bad(c, "more than %d attributes in a tag", ATTRS_MAX);
		struct attr *a = &v[*nv];
		TRY(read_name(c, a->name, "an attribute name"));
		for (size_t i = 0; i < *nv; i++)
			if (!strcmp(v[i].name, a->name))
				return bad(c, "the attribute '%s' is given twice", a->name);
		skip_ws(c);
		if (!at(c, "="))
			return bad(c, "expected '=' after the attribute '%s'", a->name);
		c->p++;
		skip_ws(c);
		char q = c->p < c->end ? *c->p : '\0';
		if (q != '"' && q != '\'')
			return bad(c, "the value of '%s' must be quoted", a->name);
		c->p++;
		struct engi_dynbuf b;
		engi_dynbuf_init(&b, EWXML_DOC_MAX);
		int rc = 0;
		while (rc == 0 && c->p < c->end && *c->p != q) {
			if (*c->p == '<')
				rc = bad(c, "a '<' inside the value of '%s'", a->name);
			else if (*c->p == '&')
				rc = read_entity(c, &b);
			else if (engi_dynbuf_add(&b, c->p++, 1) < 0)
				rc = ENGI_ENOMEM;
		}
		if (rc == 0 && c->p >= c->end)
			rc = bad(c, "the value of '%s' is not closed", a->name);
		if (rc == 0 && !(a->value = engi_dynbuf_take(&b, NULL)))
			rc = ENGI_ENOMEM;
		engi_dynbuf_release(&b);
		if (rc < 0)
			return rc;
		c->p++; /* the closing quote */
		(*nv)++;
	}
}

static void attrs_free(struct attr *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		engi_free(v[i].value);
}

/* Text and CDATA up to </name>, which is consumed; no child elements. */
static int read_content(struct cur *c, const char *name, char **out)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, EWXML_DOC_MAX);
	int rc = 0;
	for (;;) {
		if (c->p >= c->end) {
			rc = bad(c, "<%s> is not closed with </%s>", name, name);
			break;
		}
		if (at(c, "<![CDATA[")) {
			const char *start = c->p + 9;
			c->p = start;
			if (skip_past(c, "]]>") < 0) {
				rc = bad(c, "a CDATA section is not closed with ]]>");
				break;
			}
			if (engi_dynbuf_add(&b, start, (size_t)(c->p - 3 - start)) < 0) {
				rc = ENGI_ENOMEM;
				break;
			}
		} else if (at(c, "<!--")) {
			if ((rc = skip_comment(c)) < 0)
				break;
		} else if (at(c, "</")) {
			char nm[NAME_MAX_LEN + 1];
			c->p += 2;
			if ((rc = read_name(c, nm, "a closing tag's name")) < 0)
				break;
			if (strcmp(nm, name)) {
				rc = bad(c, "</%s> closes <%s>", nm, name);
				break;
			}
			skip_ws(c);
			if (!at(c, ">")) {
				rc = bad(c, "expected '>' to end </%s>", name);
				break;
			}
			c->p++;
			break;
		} else if (*c->p == '<') {
			rc = bad(c,
				 "markup inside <%s>: its body takes text or <![CDATA[...]]> only "
				 "(put code in CDATA)",
				 name);
			break;
		} else if (*c->p == '&') {
			if ((rc = read_entity(c, &b)) < 0)
				break;
		} else if (*c->p == '\0') {
			rc = bad(c, "a NUL byte");
			break;
		} else {
			/* a run of plain text at once */
			const char *q = c->p;
			while (q < c->end && *q != '<' && *q != '&' && *q != '\0')
				q++;
			if (engi_dynbuf_add(&b, c->p, (size_t)(q - c->p)) < 0) {
				rc = ENGI_ENOMEM;
				break;
			}
			c->p = q;
		}
	}
	if (rc == 0 && !(*out = engi_dynbuf_take(&b, NULL)))
		rc = ENGI_ENOMEM;
	engi_dynbuf_release(&b);
	return rc;
}

/* De-indents s by the white space every non-blank line starts with (blank
 * lines do not count), then strips it, in place. */
static void dedent_strip(char *s)
{
	size_t common = (size_t)-1;
	const char *first = NULL;
	for (const char *line = s; line;) {
		const char *nl = strchr(line, '\n');
		size_t ind = 0;
		while (line[ind] == ' ' || line[ind] == '\t')
			ind++;
		int blank = line[ind] == '\n' || line[ind] == '\0' ||
			    (line[ind] == '\r' && (line[ind + 1] == '\n' || !line[ind + 1]));
		if (!blank) {
			if (!first) {
				first = line;
				common = ind;
			} else {
				size_t k = 0;
				while (k < common && k < ind && line[k] == first[k])
					k++;
				common = k;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	char *w = s;
	for (const char *line = s; line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
		size_t drop = 0;
		while (drop < n && drop < common && (line[drop] == ' ' || line[drop] == '\t'))
			drop++;
		memmove(w, line + drop, n - drop);
		w += n - drop;
		line = nl ? nl + 1 : NULL;
	}
	*w = '\0';
	size_t len = strlen(s);
	while (len && is_ws(s[len - 1]))
		s[--len] = '\0';
	size_t lead = 0;
	while (lead < len && is_ws(s[lead]))
		lead++;
	memmove(s, s + lead, len - lead + 1);
}

static const char *attr_get(const struct attr *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

/* An action's attributes and body into a, checked against its type. */
static int check_action(struct cur *c, const struct attr *v, size_t nv, char *body,
			struct ewxml_action *a)
{
	for (size_t i = 0; i < nv; i++)
		if (strcmp(v[i].name, "type") && strcmp(v[i].name, "path") &&
		    strcmp(v[i].name, "seconds"))
			return bad(c, "<action> has no attribute '%s' (type, path, seconds)",
				   v[i].name);
	const char *type = attr_get(v, nv, "type");
	if (!type)
		return bad(c, "an <action> without a type");
	a->kind = -1;
	for (int k = 0; k <= EWXML_FAIL; k++)
		if (!strcasecmp(type, kind_names[k]))
			a->kind = k;
	if (a->kind < 0)
		return bad(c,
			   "unknown action type '%.40s' (bash, python, readimg, wait, done, fail)",
			   type);
	const char *kn = kind_names[a->kind];
	const char *path = attr_get(v, nv, "path");
	const char *secs = attr_get(v, nv, "seconds");
	dedent_strip(body);
	if (path && a->kind != EWXML_READIMG)
		return bad(c, "a %s action takes no path", kn);
	if (secs && a->kind != EWXML_WAIT)
		return bad(c, "a %s action takes no seconds", kn);
	if ((a->kind == EWXML_BASH || a->kind == EWXML_PYTHON) && !body[0])
		return bad(c, "a %s action with an empty body", kn);
	if (a->kind != EWXML_BASH && a->kind != EWXML_PYTHON && body[0])
		return bad(c, "a %s action takes no body", kn);
	if (a->kind == EWXML_READIMG) {
		size_t pl = path ? strlen(path) : 0;
		while (pl && is_ws(path[pl - 1]))
			pl--;
		size_t lead = 0;
		while (lead < pl && is_ws(path[lead]))
			lead++;
		if (pl == lead)
			return bad(c, "a readimg action needs a non-empty path");
		if (!(a->path = engi_malloc(pl - lead + 1)))
			return ENGI_ENOMEM;
		memcpy(a->path, path + lead, pl - lead);
		a->path[pl - lead] = '\0';
	}
	a->seconds = EWXML_WAIT_DEFAULT_S;
	if (secs) {
		char *end = NULL;
		double d = strtod(secs, &end);
		while (end && is_ws(*end))
			end++;
		if (end == secs || !end || *end || !isfinite(d) || d < 0 || d > EWXML_WAIT_MAX_S)
			return bad(c, "wait seconds '%.40s': expected a number from 0 to %g", secs,
				   EWXML_WAIT_MAX_S);
		a->seconds = d;
	}
	return 0;
}

/* The <action> or <reflection> at the cursor ('<'). */
static int read_child(struct cur *c, struct ewxml_reply *r, int *nrefl)
{
	char nm[NAME_MAX_LEN + 1];
	c->p++;
	TRY(read_name(c, nm, "an element name"));
	int action = !strcmp(nm, "action");
	if (!action && strcmp(nm, "reflection"))
		return bad(c,
			   "unexpected element <%s> in <response> (only <reflection> and <action>)",
			   nm);
	struct attr v[ATTRS_MAX];
	size_t nv = 0;
	int empty = 0;
	int rc = read_attrs(c, v, &nv, &empty);
	char *body = NULL;
	if (rc == 0 && !empty)
		rc = read_content(c, nm, &body);
	if (rc == 0 && empty && !(body = engi_strdup("")))
		rc = ENGI_ENOMEM;
	if (rc == 0 && !action) {
		if (nv)
			rc = bad(c, "<reflection> takes no attributes");
		else if (++*nrefl > 1)
			rc = bad(c, "more than one <reflection>");
		if (rc == 0) {
			dedent_strip(body);
			if (!body[0])
				rc = bad(c, "the <reflection> is empty");
		}
		if (rc == 0) {
			r->reflection = body;
			body = NULL;
		}
	} else if (rc == 0) {
		if (r->n == EWXML_ACTIONS_MAX)
			rc = bad(c, "more than %d actions in one response", EWXML_ACTIONS_MAX);
		else {
			struct ewxml_action *a = &r->v[r->n];
			memset(a, 0, sizeof(*a));
			rc = check_action(c, v, nv, body, a);
			if (rc == 0) {
				a->body = body;
				body = NULL;
				r->n++;
			} else {
				engi_free(a->path);
				a->path = NULL;
			}
		}
	}
	engi_free(body);
	attrs_free(v, nv);
	return rc;
}

/* White space and comments. */
static int skip_misc(struct cur *c)
{
	for (;;) {
		skip_ws(c);
		if (!at(c, "<!--"))
			return 0;
		TRY(skip_comment(c));
	}
}

static int parse_doc(struct cur *c, struct ewxml_reply *r)
{
	if (at(c, "\xEF\xBB\xBF"))
		c->p += 3;
	TRY(skip_misc(c));
	if (at(c, "<?xml")) {
		if (skip_past(c, "?>") < 0)
			return bad(c, "the XML declaration is not closed with ?>");
		TRY(skip_misc(c));
	}
	if (at(c, "```"))
		return bad(c, "a Markdown fence: the reply must be the XML document alone");
	if (!at(c, "<response"))
		return bad(c, c->p < c->end ? "text before <response>: the reply must be one "
					      "<response> document and nothing else"
					    : "no <response> document");
	c->p += 9;
	struct attr v[ATTRS_MAX];
	size_t nv = 0;
	int empty = 0;
	if (c->p < c->end && !is_ws(*c->p) && *c->p != '>' && *c->p != '/')
		return bad(c, "expected <response>");
	int rc = read_attrs(c, v, &nv, &empty);
	attrs_free(v, nv);
	TRY(rc);
	if (nv)
		return bad(c, "<response> takes no attributes");
	int nrefl = 0;
	while (!empty) {
		skip_ws(c);
		if (c->p >= c->end)
			return bad(c, "<response> is not closed with </response>");
		if (at(c, "<!--")) {
			TRY(skip_comment(c));
		} else if (at(c, "</")) {
			char nm[NAME_MAX_LEN + 1];
			c->p += 2;
			TRY(read_name(c, nm, "a closing tag's name"));
			if (strcmp(nm, "response"))
				return bad(c, "</%s> closes <response>", nm);
			skip_ws(c);
			if (!at(c, ">"))
				return bad(c, "expected '>' to end </response>");
			c->p++;
			break;
		} else if (at(c, "<![CDATA[") || *c->p != '<') {
			return bad(c, "text directly inside <response>: it holds only <reflection> "
				      "and <action> elements");
		} else {
			TRY(read_child(c, r, &nrefl));
		}
	}
	TRY(skip_misc(c));
	if (c->p < c->end)
		return bad(c, "text after </response>: the reply must be the XML document alone");
	if (!nrefl)
		return bad(c, "the response has no <reflection>");
	if (!r->n)
		return bad(c, "the response has no <action>");
	for (size_t i = 0; i < r->n; i++) {
		int k = r->v[i].kind;
		if ((k == EWXML_WAIT || k == EWXML_DONE || k == EWXML_FAIL) && r->n > 1)
			return bad(c, "a %s action must be the only action of its response",
				   kind_names[k]);
	}
	return 0;
}

void ewxml_release(struct ewxml_reply *r)
{
	engi_free(r->reflection);
	for (size_t i = 0; i < r->n; i++) {
		engi_free(r->v[i].body);
		engi_free(r->v[i].path);
	}
	memset(r, 0, sizeof(*r));
}

int ewxml_parse(const char *text, size_t len, struct ewxml_reply *r, char *why, size_t why_n)
{
	memset(r, 0, sizeof(*r));
	char dummy[8];
	if (!why || !why_n)
		why = dummy, why_n = sizeof(dummy);
	why[0] = '\0';
	if (!text)
		text = "", len = 0;
	struct cur c = {.s = text, .p = text, .end = text + len, .why = why, .why_n = why_n};
	if (len > EWXML_DOC_MAX) {
		snprintf(why, why_n, "the response is longer than %zu bytes", EWXML_DOC_MAX);
		return ENGI_EPARSE;
	}
	int rc = parse_doc(&c, r);
	if (rc < 0) {
		ewxml_release(r);
		if (rc == ENGI_ENOMEM)
			snprintf(why, why_n, "out of memory");
	}
	return rc;
}
