/*
 * pcb_spec.c - Parametric CAD Bench spec parameters, read as freecad-
 * validator 0.6.0 reads them (engi/pcb_spec.h). Text form, per line (any
 * line break Python's splitlines knows), per chunk (commas outside
 * parentheses):
 *   - a leading bullet run (-, *, U+2022) and a bold header ("**Hdr**:")
 *     are dropped, then every "**"; U+2248 reads as "=", U+2212 as "-";
 *   - without "=" the chunk is dropped; the key is the identifier it
 *     starts with, lower-cased; the value is what follows the last "="
 *     (so "d = z*m = 20 mm" is 20 mm);
 *   - "(...)" is a vector: its components are scalars, the unit after
 *     ")" (lower case only) applying to those without one;
 *   - a number with an optional unit (degrees, degree, mm, cm, deg, rad,
 *     the degree sign, m: the first that matches, in that order, case
 *     apart, with no word boundary, so "20 meters" is 20 m) is a scalar:
 *     lengths in mm, angles in radians; a tail starting with an operator
 *     (* / + - ^) makes it an expression, dropped; any other tail is
 *     ignored;
 *   - a scalar of a count key (a token num, count, number, rows, cols,
 *     columns or teeth) that is integral and unitless is a count;
 *   - a value that is a word ([A-Za-z][A-Za-z0-9_-]*) is a string.
 * Object form: a key whose value holds "value" (and "unit") is read as the
 * text "key = value unit"; an object without "value" is read for its
 * members (its own key dropped); a number is a scalar (no unit applied) or
 * a count; a list is a vector; text is read as "key = text"; true, false
 * and null are dropped.
 */
#include "engi/pcb_spec.h"

#include "engi/alloc.h"
#include "engi/slurp.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (M_PI / 180.0)

struct unit {
	const char *name;
	double scale;
};

/* In the validator's order of alternatives. */
static const struct unit units[] = {{"degrees", DEG},  {"degree", DEG}, {"mm", 1},
				    {"cm", 10},	       {"deg", DEG},	{"rad", 1},
				    {"\xc2\xb0", DEG}, {"m", 1000},	{NULL, 0}};

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The unit at s (case apart unless exact), or NULL; *len its bytes. */
static const struct unit *unit_at(const char *s, int exact, size_t *len)
{
	for (const struct unit *u = units; u->name; u++) {
		size_t k = strlen(u->name);
		if (exact ? !strncmp(s, u->name, k) : !strncasecmp(s, u->name, k)) {
			*len = k;
			return u;
		}
	}
	return NULL;
}

/* A number of the validator's syntax at s: its length, 0 if none. */
static size_t number_at(const char *s)
{
	size_t i = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	size_t d = 0;
	while (isdigit((unsigned char)s[i + d]))
		d++;
	if (d) {
		i += d;
		if (s[i] == '.') {
			i++;
			while (isdigit((unsigned char)s[i]))
				i++;
		}
	} else if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		i++;
		while (isdigit((unsigned char)s[i]))
			i++;
	} else {
		return 0;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1;
		if (s[j] == '+' || s[j] == '-')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

/* Replaces every occurrence of from (bytes) by to (no longer) in s. */
static void replace_all(char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to);
	char *p;
	while ((p = strstr(s, from)) != NULL) {
		memcpy(p, to, tl);
		memmove(p + tl, p + fl, strlen(p + fl) + 1);
	}
}

static void strip(char **s)
{
	while (is_space((unsigned char)**s))
		(*s)++;
	size_t n = strlen(*s);
	while (n && is_space((unsigned char)(*s)[n - 1]))
		(*s)[--n] = '\0';
}

/* A scalar: 0 and its value in mm or radians, *unitless when it had no
 * unit; -1 when s is not one (or is an expression). s is modified. */
static int scalar(char *s, double *v, int *unitless, const struct unit **unit)
{
	replace_all(s, "\xe2\x88\x92", "-");
	char *p = s;
	while (is_space((unsigned char)*p))
		p++;
	size_t k = number_at(p);
	if (!k)
		return -1;
	char num[64];
	if (k >= sizeof(num))
		return -1;
	memcpy(num, p, k);
	num[k] = '\0';
	p += k;
	char *after = p;
	while (is_space((unsigned char)*p))
		p++;
	size_t ul = 0;
	const struct unit *u = unit_at(p, 0, &ul);
	char *tail = u ? p + ul : after;
	while (is_space((unsigned char)*tail))
		tail++;
	if (strchr("*/+-^", *tail) && *tail)
		return -1; /* an expression, not evaluated */
	errno = 0;
	double x = strtod(num, NULL);
	if (errno == ERANGE && isinf(x))
		x = copysign(INFINITY, x);
	*v = u ? x * u->scale : x;
	*unitless = !u;
	if (unit)
		*unit = u;
	return 0;
}

/* A vector "(a, b, ...) unit": 0 and its components, -1 if not one. */
static int vector(char *s, double *out, int *n)
{
	strip(&s);
	if (*s != '(')
		return -1;
	char *close = strchr(s, ')');
	if (!close)
		return -1;
	*close = '\0';
	char *inner = s + 1, *outer = close + 1;
	while (is_space((unsigned char)*outer))
		outer++;
	size_t ul = 0;
	const struct unit *ou = unit_at(outer, 1, &ul);
	*n = 0;
	for (char *part = inner;;) {
		char *comma = strchr(part, ',');
		if (comma)
			*comma = '\0';
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", part);
		double v;
		int unitless;
		if (scalar(buf, &v, &unitless, NULL) < 0) {
			if (!ou)
				return -1;
			char with[320];
			snprintf(with, sizeof(with), "%s %s", part, ou->name);
			if (scalar(with, &v, &unitless, NULL) < 0)
				return -1;
		} else if (unitless && ou) {
			v *= ou->scale;
		}
		if (*n >= ENGI_PCB_VEC_MAX)
			return -1;
		out[(*n)++] = v;
		if (!comma)
			break;
		part = comma + 1;
	}
	return 0;
}

static int count_key(const char *key)
{
	static const char *const tokens[] = {"num",  "count",	"number", "rows",
					     "cols", "columns", "teeth",  NULL};
	char buf[ENGI_PCB_KEY_MAX];
	snprintf(buf, sizeof(buf), "%s", key);
	for (char *t = buf, *end; t; t = end) {
		end = strchr(t, '_');
		if (end)
			*end++ = '\0';
		for (size_t i = 0; tokens[i]; i++)
			if (!strcmp(t, tokens[i]))
				return 1;
	}
	return 0;
}

/* Adds or replaces the parameter (same key, same kind: the later value in
 * the first place). */
static int put(struct engi_pcb_spec *s, const struct engi_pcb_param *p, struct engi_error *err)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].kind == p->kind && !strcmp(s->p[i].key, p->key)) {
			s->p[i] = *p;
			return 0;
		}
	if (s->n >= ENGI_PCB_PARAMS_MAX)
		RAISE(err, ENGI_ETOOBIG, "spec: over %d key parameters", ENGI_PCB_PARAMS_MAX);
	struct engi_pcb_param *np = engi_reallocarray(s->p, s->n + 1, sizeof(*np));
	if (!np)
		RAISE(err, ENGI_ENOMEM, "spec: out of memory");
	s->p = np;
	s->p[s->n++] = *p;
	return 0;
}

/* The leading noise of a chunk: a bullet run, then a bold header. */
static char *skip_noise(char *s)
{
	while (is_space((unsigned char)*s))
		s++;
	char *b = s;
	for (;;) {
		if (*b == '-' || *b == '*')
			b++;
		else if (!strncmp(b, "\xe2\x80\xa2", 3))
			b += 3;
		else
			break;
	}
	if (b != s) {
		s = b;
		while (is_space((unsigned char)*s))
			s++;
	}
	if (s[0] == '*' && s[1] == '*') {
		char *e = s + 2;
		while (*e && *e != '*')
			e++;
		if (e[0] == '*' && e[1] == '*') {
			char *c = e + 2;
			while (is_space((unsigned char)*c))
				c++;
			if (*c == ':') {
				c++;
				while (is_space((unsigned char)*c))
					c++;
				s = c;
			}
		}
	}
	return s;
}

static int chunk(struct engi_pcb_spec *s, char *c, struct engi_error *err)
{
	c = skip_noise(c);
	strip(&c);
	replace_all(c, "**", "");
	strip(&c);
	replace_all(c, "\xe2\x89\x88", "=");
	replace_all(c, "\xe2\x88\x92", "-");
	char *eq = strrchr(c, '=');
	if (!eq)
		return 0;
	char *k = c;
	while (is_space((unsigned char)*k))
		k++;
	if (!isalpha((unsigned char)*k))
		return 0;
	struct engi_pcb_param p;
	memset(&p, 0, sizeof(p));
	size_t kl = 0;
	while (isalnum((unsigned char)k[kl]) || k[kl] == '_')
		kl++;
	if (kl >= sizeof(p.key))
		return 0;
	for (size_t i = 0; i < kl; i++)
		p.key[i] = (char)tolower((unsigned char)k[i]);
	char *v = eq + 1;
	strip(&v);
	if (!*v)
		return 0;
	if (*v == '(') {
		if (vector(v, p.vec, &p.nvec) < 0)
			return 0;
		p.kind = ENGI_PCB_VECTOR;
		return put(s, &p, err);
	}
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", v);
	int unitless;
	if (strlen(v) < sizeof(buf) && scalar(buf, &p.value, &unitless, NULL) == 0) {
		if (count_key(p.key) && unitless && isfinite(p.value) &&
		    p.value == floor(p.value) && fabs(p.value) < 9.2e18) {
			p.kind = ENGI_PCB_COUNT;
			p.count = (long long)p.value;
		} else {
			p.kind = ENGI_PCB_SCALAR;
		}
		return put(s, &p, err);
	}
	size_t vl = strlen(v);
	if (isalpha((unsigned char)v[0]) && vl < sizeof(p.text) &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == vl) {
		p.kind = ENGI_PCB_STRING;
		snprintf(p.text, sizeof(p.text), "%s", v);
		return put(s, &p, err);
	}
	return 0;
}

/* The byte length of a line break at s (Python's splitlines), 0 if none. */
static size_t line_break(const char *s)
{
	unsigned char c = (unsigned char)s[0];
	if (c == '\r')
		return s[1] == '\n' ? 2 : 1;
	if (c == '\n' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e)
		return 1;
	if (c == 0xc2 && (unsigned char)s[1] == 0x85)
		return 2;
	if (c == 0xe2 && (unsigned char)s[1] == 0x80 &&
	    ((unsigned char)s[2] == 0xa8 || (unsigned char)s[2] == 0xa9))
		return 3;
	return 0;
}

int engi_pcb_spec_text(const char *text, size_t len, struct engi_pcb_spec *out,
		       struct engi_error *err)
{
	memset(out, 0, sizeof(*out));
	char *buf = engi_malloc(len + 1);
	if (!buf)
		RAISE(err, ENGI_ENOMEM, "spec: out of memory");
	memcpy(buf, text, len);
	buf[len] = '\0';
	int rc = 0;
	size_t i = 0;
	while (rc == 0 && i < len) {
		/* one line */
		size_t j = i;
		while (j < len && buf[j] && !line_break(buf + j))
			j++;
		size_t brk = j < len && buf[j] ? line_break(buf + j) : 0;
		char save = buf[j];
		buf[j] = '\0';
		/* its chunks: commas at depth 0 */
		int depth = 0;
		char *start = buf + i;
		for (char *p = buf + i; rc == 0; p++) {
			if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			if ((*p == ',' && depth == 0) || !*p) {
				int end = !*p;
				*p = '\0';
				rc = chunk(out, start, err);
				if (end)
					break;
				start = p + 1;
			}
		}
		buf[j] = save;
		i = j + (brk ? brk : 1);
	}
	engi_free(buf);
	if (rc < 0)
		engi_pcb_spec_release(out);
	return rc;
}

/* A JSON number as Python's str() gives one back to its parser: any
 * text that reads as the same double. */
static void number_text(json_t *v, char *buf, size_t n)
{
	if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else
		snprintf(buf, n, "%.17g", json_real_value(v));
}

/* Python's str() of a value inside a built text. */
static void value_text(json_t *v, char *buf, size_t n)
{
	if (json_is_number(v))
		number_text(v, buf, n);
	else if (json_is_string(v))
		snprintf(buf, n, "%s", json_string_value(v));
	else if (json_is_true(v))
		snprintf(buf, n, "True");
	else if (json_is_false(v))
		snprintf(buf, n, "False");
	else
		snprintf(buf, n, "None");
}

/* "key = " + body through the text chunk rules. */
static int chunk_of(struct engi_pcb_spec *s, const char *key, const char *body,
		    struct engi_error *err)
{
	size_t n = strlen(key) + strlen(body) + 4;
	char *t = engi_malloc(n);
	if (!t)
		RAISE(err, ENGI_ENOMEM, "spec: out of memory");
	snprintf(t, n, "%s = %s", key, body);
	int rc = chunk(s, t, err);
	engi_free(t);
	return rc;
}

/* "(a, b, ...)" of a list, into a new string (engi_free), or NULL. */
static char *list_text(json_t *list)
{
	size_t cap = 8 + 64 * (json_array_size(list) + 1), k = 0;
	char *t = engi_malloc(cap);
	if (!t)
		return NULL;
	t[k++] = '(';
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e)
	{
		char item[48];
		value_text(e, item, sizeof(item));
		k += (size_t)snprintf(t + k, cap - k, "%s%s", i ? ", " : "", item);
	}
	snprintf(t + k, cap - k, ")");
	return t;
}

static int identifier(const char *k)
{
	if (!isalpha((unsigned char)k[0]))
		return 0;
	for (const char *c = k; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return 0;
	return 1;
}

static int object(struct engi_pcb_spec *s, json_t *obj, int depth, struct engi_error *err)
{
	if (depth > 32)
		return 0;
	const char *k0;
	json_t *v;
	json_object_foreach(obj, k0, v)
	{
		char key[ENGI_PCB_KEY_MAX];
		const char *a = k0;
		while (is_space((unsigned char)*a))
			a++;
		size_t kl = strlen(a);
		while (kl && is_space((unsigned char)a[kl - 1]))
			kl--;
		if (kl >= sizeof(key))
			continue;
		for (size_t i = 0; i < kl; i++)
			key[i] = (char)tolower((unsigned char)a[i]);
		key[kl] = '\0';
		if (!identifier(key))
			continue;
		int rc = 0;
		if (json_is_object(v) && json_object_get(v, "value")) {
			json_t *val = json_object_get(v, "value");
			char unit[64] = "";
			value_text(json_object_get(v, "unit"), unit, sizeof(unit));
			if (!json_object_get(v, "unit"))
				unit[0] = '\0';
			char *u = unit;
			strip(&u);
			char *body = NULL;
			if (json_is_array(val)) {
				char *l = list_text(val);
				if (l) {
					size_t n = strlen(l) + strlen(u) + 2;
					body = engi_malloc(n);
					if (body)
						snprintf(body, n, "%s%s", l, u);
					engi_free(l);
				}
			} else {
				char vt[256];
				value_text(val, vt, sizeof(vt));
				size_t n = strlen(vt) + strlen(u) + 2;
				body = engi_malloc(n);
				if (body) {
					snprintf(body, n, "%s %s", vt, u);
					char *b = body;
					strip(&b);
					memmove(body, b, strlen(b) + 1);
				}
			}
			if (!body)
				RAISE(err, ENGI_ENOMEM, "spec: out of memory");
			rc = chunk_of(s, key, body, err);
			engi_free(body);
		} else if (json_is_object(v)) {
			rc = object(s, v, depth + 1, err);
		} else if (json_is_number(v)) {
			struct engi_pcb_param p;
			memset(&p, 0, sizeof(p));
			snprintf(p.key, sizeof(p.key), "%s", key);
			double x = json_number_value(v);
			if (count_key(key) && isfinite(x) && x == floor(x) && fabs(x) < 9.2e18) {
				p.kind = ENGI_PCB_COUNT;
				p.count = (long long)x;
			} else {
				p.kind = ENGI_PCB_SCALAR;
				p.value = x;
			}
			rc = put(s, &p, err);
		} else if (json_is_array(v)) {
			char *l = list_text(v);
			if (!l)
				RAISE(err, ENGI_ENOMEM, "spec: out of memory");
			rc = chunk_of(s, key, l, err);
			engi_free(l);
		} else if (json_is_string(v)) {
			rc = chunk_of(s, key, json_string_value(v), err);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int engi_pcb_spec_read(json_t *spec, struct engi_pcb_spec *out, struct engi_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(spec))
		RAISE(err, ENGI_EPARSE, "spec: expected a JSON object");
	json_t *kp = json_object_get(spec, "key_parameters");
	int rc = 0;
	if (json_is_object(kp))
		rc = object(out, kp, 0, err);
	else if (json_is_string(kp))
		rc = engi_pcb_spec_text(json_string_value(kp), json_string_length(kp), out, err);
	if (rc < 0)
		engi_pcb_spec_release(out);
	return rc;
}

void engi_pcb_spec_release(struct engi_pcb_spec *s)
{
	engi_free(s->p);
	s->p = NULL;
	s->n = 0;
}

int engi_pcb_spec_file(const char *path, const char *name, struct engi_pcb_spec *out,
		       struct engi_error *err)
{
	memset(out, 0, sizeof(*out));
	const char *label = name ? name : path;
	char *text = NULL;
	size_t len = 0;
	TRY(engi_io_slurp(path, name, "spec", ENGI_PCB_SPEC_FILE_MAX, &text, &len, err));
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	engi_free(text);
	if (!j)
		RAISE(err, ENGI_EPARSE, "spec '%s' line %d: %s", label, je.line, je.text);
	int rc = engi_pcb_spec_read(j, out, err);
	json_decref(j);
	if (rc < 0 && rc != ENGI_ENOMEM && !strstr(err->msg, label)) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "%s", err->msg);
		rc = engi_raise(err, rc, "spec '%s': %s", label, m);
	}
	return rc;
}
