/*
 * Verifier kind "ccx_dat": nodal results that CalculiX prints into its .dat
 * file with *NODE PRINT (tasks/SCHEMA.md, "Kind ccx_dat").
 *
 * A block is a header line such as
 *   " displacements (vx,vy,vz) for set TIP and time  0.1000000E+01"
 * followed by blank lines and rows "<node> <v1> <v2> <v3>"; the next line
 * that is neither blank nor a row ends it. For each criterion the last block
 * of its quantity and set in the file is used: the last time step printed.
 */
#include "engi/verify.h"

#include "engi/alloc.h"
#include "engi/slurp.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CCX_FILE_MAX ((size_t)256 << 20)
#define CCX_LINE_MAX 4096
#define CCX_SET_MAX  81 /* CalculiX names have at most 80 characters */
#define POINTER_MAX  ENGI_POINTER_MAX

static const char *const quantity_names[] = {"displacements", "forces", NULL};
static const char *const component_names[] = {"x", "y", "z", "magnitude", NULL};
static const char *const reduce_names[] = {"mean", "min", "max", "maxabs", "sum", NULL};

enum { COMP_X, COMP_Y, COMP_Z, COMP_MAGNITUDE };
enum { RED_MEAN, RED_MIN, RED_MAX, RED_MAXABS, RED_SUM };

struct ccx_criterion {
	struct engi_criterion c;
	int quantity, component, reduce;
	char set[CCX_SET_MAX];
};

struct ccx_criteria {
	size_t n;
	struct ccx_criterion v[];
};

static void ccx_free(void *criteria)
{
	engi_free(criteria);
}

static int parse_set(json_t *item, const char *file, const char *ptr, char *out,
		     struct engi_error *err)
{
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, "set");
	json_t *j = json_object_get(item, "set");
	if (!j)
		return engi_parse_error(err, file, p, "missing required field");
	if (!json_is_string(j))
		return engi_parse_error(err, file, p, "expected a string, found %s",
					engi_json_kind(j));
	const char *s = json_string_value(j);
	size_t n = json_string_length(j);
	if (n == 0 || n >= CCX_SET_MAX || strlen(s) != n)
		return engi_parse_error(err, file, p, "must be 1 to %d characters",
					CCX_SET_MAX - 1);
	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)s[i]) || !isprint((unsigned char)s[i]))
			return engi_parse_error(err, file, p,
						"'%s' is not a set name (no spaces or control "
						"characters)",
						s);
	memcpy(out, s, n + 1);
	return 0;
}

static int ccx_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		     void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind", "file", "criteria", "objective", "reward", NULL};
	static const char *const item_keys[] = {
	    "name",    "quantity", "set", "component", "reduce",   "equals", "value",
	    "tol_rel", "tol_abs",  "min", "max",       "required", "stage",  NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct ccx_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct ccx_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	cc->n = n;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *item = json_array_get(arr, i);
		struct ccx_criterion *c = &cc->v[i];
		char ptr[POINTER_MAX], what[64];
		char base[POINTER_MAX];
		engi_json_pointer(base, sizeof(base), pointer, "criteria");
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		rc = engi_json_only_keys(item, item_keys, file, ptr, err);
		if (rc == 0)
			rc = engi_json_choice(item, "quantity", quantity_names, "quantity", 1, file,
					      ptr, &c->quantity, err);
		if (rc < 0)
			break;
		snprintf(what, sizeof(what), "quantity '%s'", quantity_names[c->quantity]);
		rc = engi_criterion_parse(item, file, ptr, what, ENGI_CMP_VALUE | ENGI_CMP_RANGE,
					  "response", &c->c, err);
		if (rc == 0)
			rc = engi_criterion_name_unique(&cc->v[0].c, sizeof(cc->v[0]), i, 0, file,
							base, ptr, err);
		if (rc == 0)
			rc = parse_set(item, file, ptr, c->set, err);
		if (rc == 0)
			rc = engi_json_choice(item, "component", component_names, "component", 1,
					      file, ptr, &c->component, err);
		if (rc == 0)
			rc = engi_json_choice(item, "reduce", reduce_names, "reduction", 1, file,
					      ptr, &c->reduce, err);
	}
	if (rc < 0) {
		ccx_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

/* ---- reading the .dat file ---- */

struct line {
	const char *s;
	size_t len;
	size_t no; /* 1-based */
};

/* Next line of buf at *pos; 0 at the end. */
static int next_line(const char *buf, size_t size, size_t *pos, size_t *no, struct line *l)
{
	if (*pos >= size)
		return 0;
	const char *s = buf + *pos;
	const char *nl = memchr(s, '\n', size - *pos);
	size_t len = nl ? (size_t)(nl - s) : size - *pos;
	*pos += len + (nl ? 1 : 0);
	if (len && s[len - 1] == '\r')
		len--;
	l->s = s;
	l->len = len;
	l->no = ++*no;
	return 1;
}

static int blank(const struct line *l)
{
	for (size_t i = 0; i < l->len; i++)
		if (!isspace((unsigned char)l->s[i]))
			return 0;
	return 1;
}

/* Parses a Fortran E-format number; also "0.1234567-100", the form Fortran
 * writes when a three-digit exponent leaves no room for the E. */
static int fortran_double(const char *s, const char **end, double *out)
{
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (e == s)
		return -1;
	int has_exp = 0;
	for (const char *q = s; q < e; q++)
		has_exp |= *q == 'e' || *q == 'E';
	if (!has_exp && (*e == '-' || *e == '+') && isdigit((unsigned char)e[1]) &&
	    isdigit((unsigned char)e[2]) && isdigit((unsigned char)e[3]) &&
	    !isdigit((unsigned char)e[4]) && e[4] != '.') {
		char *e2;
		long ex = strtol(e, &e2, 10);
		v *= pow(10.0, (double)ex);
		e = e2;
	}
	*end = e;
	*out = v;
	return 0;
}

/* A header "<quantity> (...) for set <SET> and time <t>": fills quantity
 * (its words before the parenthesis), set and time. */
static int parse_header(const struct line *l, char *quantity, size_t qcap, char *set, double *time)
{
	char text[CCX_LINE_MAX + 1];
	memcpy(text, l->s, l->len);
	text[l->len] = '\0';
	const char *forset = strstr(text, " for set ");
	const char *andtime = strstr(text, " and time");
	const char *paren = strchr(text, '(');
	if (!forset || !andtime || !paren || paren > forset || andtime < forset)
		return 0;
	const char *q = text;
	while (isspace((unsigned char)*q))
		q++;
	size_t qn = (size_t)(paren - q);
	while (qn && isspace((unsigned char)q[qn - 1]))
		qn--;
	if (qn == 0 || qn >= qcap)
		return 0;
	memcpy(quantity, q, qn);
	quantity[qn] = '\0';
	const char *s = forset + strlen(" for set ");
	while (*s == ' ')
		s++;
	size_t sn = 0;
	while (s[sn] && !isspace((unsigned char)s[sn]))
		sn++;
	if (sn == 0 || sn >= CCX_SET_MAX)
		return 0;
	memcpy(set, s, sn);
	set[sn] = '\0';
	const char *end;
	if (fortran_double(andtime + strlen(" and time"), &end, time) < 0)
		*time = NAN;
	return 1;
}

/* A row "<node> <v1> <v2> <v3>": 1 when it is one, 0 when the line is not a
 * row (the block ends), -1 when it starts like a row but is malformed. */
static int parse_row(const struct line *l, double v[3])
{
	char text[CCX_LINE_MAX + 1];
	memcpy(text, l->s, l->len);
	text[l->len] = '\0';
	char *s = text, *e;
	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	strtol(s, &e, 10);
	if (e == s || !(*e == '\0' || isspace((unsigned char)*e)) || errno == ERANGE)
		return 0;
	const char *p = e;
	for (int k = 0; k < 3; k++) {
		while (isspace((unsigned char)*p))
			p++;
		const char *q;
		if (fortran_double(p, &q, &v[k]) < 0 || !isfinite(v[k]))
			return -1;
		p = q;
	}
	return 1;
}

struct found {
	size_t pos;	/* offset of the first line after the header */
	size_t line_no; /* of the header */
	double time;
	int seen;
};

/* Finds, for every criterion, the last block of its quantity and set. */
static int scan_blocks(const char *buf, size_t size, const char *target,
		       const struct ccx_criteria *cc, struct found *found, struct engi_error *e)
{
	size_t pos = 0, no = 0;
	struct line l;
	while (next_line(buf, size, &pos, &no, &l)) {
		if (l.len > CCX_LINE_MAX)
			return engi_raise(e, ENGI_EPARSE,
					  "cannot read CalculiX output '%s': line %zu is longer "
					  "than %d characters",
					  target, l.no, CCX_LINE_MAX);
		if (memchr(l.s, '\0', l.len))
			return engi_raise(e, ENGI_EPARSE,
					  "cannot read CalculiX output '%s': line %zu holds a NUL "
					  "byte",
					  target, l.no);
		char quantity[64], set[CCX_SET_MAX];
		double time;
		if (!parse_header(&l, quantity, sizeof(quantity), set, &time))
			continue;
		for (size_t i = 0; i < cc->n; i++) {
			const struct ccx_criterion *c = &cc->v[i];
			if (strcasecmp(quantity, quantity_names[c->quantity]) ||
			    strcasecmp(set, c->set))
				continue;
			found[i].pos = pos;
			found[i].line_no = l.no;
			found[i].time = time;
			found[i].seen = 1;
		}
	}
	return 0;
}

static int judge(const struct ccx_criterion *c, const char *buf, size_t size, const char *target,
		 const struct found *f, struct engi_verdict *v, struct engi_error *err)
{
	const char *q = quantity_names[c->quantity];
	if (!f->seen)
		return engi_criterion_report(&c->c, ENGI_FAIL, NAN, v, err,
					     "no '%s' block for set '%s' in '%s'", q, c->set,
					     target);
	struct nsum {
		double s, c;
	} sum = {0, 0};
	double lo = INFINITY, hi = -INFINITY, maxabs = 0;
	size_t rows = 0, pos = f->pos, no = f->line_no;
	struct line l;
	while (next_line(buf, size, &pos, &no, &l)) {
		if (blank(&l))
			continue;
		double x[3];
		int r = parse_row(&l, x);
		if (r == 0)
			break;
		if (r < 0)
			return engi_criterion_report(&c->c, ENGI_UNAVAILABLE, NAN, v, err,
						     "cannot read CalculiX output '%s': line %zu: "
						     "expected a node number and 3 finite values",
						     target, l.no);
		double val = c->component == COMP_MAGNITUDE
				 ? sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])
				 : x[c->component];
		double t = sum.s + val; /* Neumaier */
		sum.c += fabs(sum.s) >= fabs(val) ? (sum.s - t) + val : (val - t) + sum.s;
		sum.s = t;
		lo = val < lo ? val : lo;
		hi = val > hi ? val : hi;
		maxabs = fabs(val) > maxabs ? fabs(val) : maxabs;
		rows++;
	}
	if (rows == 0)
		return engi_criterion_report(&c->c, ENGI_FAIL, NAN, v, err,
					     "the last '%s' block for set '%s' in '%s' (line %zu) "
					     "has no rows",
					     q, c->set, target, f->line_no);
	double total = sum.s + sum.c, m = 0;
	switch (c->reduce) {
	case RED_MEAN:
		m = total / (double)rows;
		break;
	case RED_MIN:
		m = lo;
		break;
	case RED_MAX:
		m = hi;
		break;
	case RED_MAXABS:
		m = maxabs;
		break;
	case RED_SUM:
		m = total;
		break;
	}
	/* finite values whose magnitude or sum overflows: no measurement */
	if (!isfinite(m))
		return engi_criterion_report(&c->c, ENGI_UNAVAILABLE, NAN, v, err,
					     "cannot read CalculiX output '%s': the %s %s of set "
					     "'%s' (line %zu) overflows a double",
					     target, reduce_names[c->reduce],
					     component_names[c->component], c->set, f->line_no);
	int rc = engi_verdict_metric(v, c->c.name, m);
	if (rc < 0)
		RAISE(err, rc, "cannot record metric '%s': %s", c->c.name, engi_strerror(rc));
	char label[160], note[64];
	snprintf(label, sizeof(label), "%s %s %s of set %s:", reduce_names[c->reduce],
		 component_names[c->component], q, c->set);
	snprintf(note, sizeof(note), "(%zu node%s, time %g)", rows, rows == 1 ? "" : "s", f->time);
	return engi_criterion_judge(&c->c, label, m, note, v, err);
}

static int ccx_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		      struct engi_verdict *v, struct engi_error *err)
{
	const struct ccx_criteria *cc = criteria;
	struct engi_error e;
	engi_error_init(&e);
	char path[PATH_MAX];
	char *buf = NULL;
	size_t size = 0;
	struct found *found = engi_calloc(cc->n, sizeof(*found));
	if (!found)
		RAISE(err, ENGI_ENOMEM, "out of memory verifying '%s'", target);
	int rc;
	int n = snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	if (n < 0 || (size_t)n >= sizeof(path))
		rc = engi_raise(&e, ENGI_EINVALID,
				"cannot read CalculiX output '%s': path too long", target);
	else
		rc = engi_io_slurp(path, target, "CalculiX output", CCX_FILE_MAX, &buf, &size, &e);
	if (rc == 0)
		rc = scan_blocks(buf, size, target, cc, found, &e);
	if (rc == ENGI_ENOMEM) {
		engi_free(found);
		engi_free(buf);
		RAISE(err, rc, "%s", e.msg);
	}
	int read_rc = rc;
	rc = 0;
	for (size_t i = 0; i < cc->n && rc == 0; i++)
		rc = read_rc < 0 ? engi_criterion_report(&cc->v[i].c, ENGI_UNAVAILABLE, NAN, v, err,
							 "%s", e.msg)
				 : judge(&cc->v[i], buf, size, target, &found[i], v, err);
	engi_free(found);
	engi_free(buf);
	return rc;
}

static size_t ccx_names(const void *criteria, const char **out, size_t cap)
{
	const struct ccx_criteria *cc = criteria;
	return engi_criteria_names(&cc->v[0].c, sizeof(cc->v[0]), cc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_ccx_dat = {
    .name = "ccx_dat",
    .summary = "CalculiX .dat nodal results (*NODE PRINT)",
    .version = 2,
    .parse = ccx_parse,
    .verify = ccx_verify,
    .free_criteria = ccx_free,
    .names = ccx_names,
};
