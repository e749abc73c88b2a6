/*
 * CalculiX .inp reader for the subset agents produce (see fe.h).
 *
 * Two stages: the text is read into raw records that keep deck numbers and
 * set names, then everything is resolved to indices at the end, so a deck may
 * name nodes before they are defined. Messages are "<file>:<line>: ..." for
 * what a line says and "<file>: ..." for what only the whole deck shows.
 * Keywords and parameters are case-insensitive, as in CalculiX.
 */
#include "engi/fe.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define INP_MAX_BYTES  ((size_t)2 << 30)
#define INP_NAME_MAX   80
#define INP_FIELDS_MAX 32

/* A growable array of fixed-size records. */
struct vec {
	void *p;
	size_t n, alloc, size;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->alloc) {
		size_t na = v->alloc ? 2 * v->alloc : 64;
		void *q = engi_reallocarray(v->p, na, v->size);
		if (!q)
			return NULL;
		v->p = q;
		v->alloc = na;
	}
	void *r = (char *)v->p + v->n * v->size;
	memset(r, 0, v->size);
	v->n++;
	return r;
}

struct set {
	char name[INP_NAME_MAX];
	int is_elem;
	struct vec ids; /* int64_t */
};

struct raw_elem {
	int64_t id;
	int type;
	int64_t node[20];
	int mat; /* index into materials, -1 until a section names it */
};

struct material {
	char name[INP_NAME_MAX];
	double young, poisson;
	int has_elastic;
};

struct ref { /* a node, element or set named by a load or a boundary */
	int64_t id;
	char set[INP_NAME_MAX];
	int line;
	int a, b; /* dofs or face */
	double value;
};

struct section {
	char elset[INP_NAME_MAX], material[INP_NAME_MAX];
	int line;
};

struct parser {
	const char *name;
	struct engi_error *err;
	int line;
	struct vec nodes;		/* struct { int64_t id; double x[3]; } */
	struct vec elems;		/* struct raw_elem */
	struct vec sets;		/* struct set */
	struct vec mats;		/* struct material */
	struct vec secs;		/* struct section */
	struct vec bcs, cloads, dloads; /* struct ref */
	int steps;
};

struct raw_node {
	int64_t id;
	double x[3];
};

__attribute__((format(printf, 3, 4))) static int fail(struct parser *ps, int code, const char *fmt,
						      ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->line > 0)
		return engi_raise(ps->err, code, "%s:%d: %s", ps->name, ps->line, msg);
	return engi_raise(ps->err, code, "%s: %s", ps->name, msg);
}

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	size_t k = 0;
	while (isspace((unsigned char)s[k]))
		k++;
	memmove(s, s + k, n - k + 1);
}

/* Splits on commas in place; empty trailing field dropped. */
static int split(char *s, char **f, int max)
{
	int n = 0;
	char *p = s;
	for (;;) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		if (n == max)
			return -1;
		trim(p);
		f[n++] = p;
		if (!c)
			break;
		p = c + 1;
	}
	if (n > 0 && f[n - 1][0] == 0)
		n--;
	return n;
}

static int parse_int(struct parser *ps, const char *s, const char *what, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno)
		return fail(ps, ENGI_EPARSE, "%s: expected an integer, found '%.40s'", what, s);
	*out = v;
	return 0;
}

static int parse_num(struct parser *ps, const char *s, const char *what, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || !isfinite(v))
		return fail(ps, ENGI_EPARSE, "%s: expected a number, found '%.40s'", what, s);
	*out = v;
	return 0;
}

/* Value of a keyword parameter NAME=value, or NULL. */
static const char *param(char **f, int n, const char *key)
{
	size_t k = strlen(key);
	for (int i = 1; i < n; i++)
		if (strncasecmp(f[i], key, k) == 0) {
			const char *p = f[i] + k;
			while (isspace((unsigned char)*p))
				p++;
			if (*p == '=') {
				p++;
				while (isspace((unsigned char)*p))
					p++;
				return p;
			}
			if (!*p)
				return "";
		}
	return NULL;
}

static int copy_name(struct parser *ps, char *dst, const char *src, const char *what)
{
	if (!src || !*src)
		return fail(ps, ENGI_EPARSE, "%s needs a name", what);
	if (strlen(src) >= INP_NAME_MAX)
		return fail(ps, ENGI_EPARSE, "%s name is longer than %d characters", what,
			    INP_NAME_MAX - 1);
	for (size_t i = 0; src[i]; i++)
		dst[i] = (char)toupper((unsigned char)src[i]);
	dst[strlen(src)] = 0;
	return 0;
}

static struct set *find_set(struct parser *ps, const char *name, int is_elem)
{
	struct set *s = ps->sets.p;
	for (size_t i = 0; i < ps->sets.n; i++)
		if (s[i].is_elem == is_elem && strcasecmp(s[i].name, name) == 0)
			return &s[i];
	return NULL;
}

static int get_set(struct parser *ps, const char *name, int is_elem, struct set **out)
{
	struct set *s = find_set(ps, name, is_elem);
	if (!s) {
		s = vec_push(&ps->sets);
		if (!s)
			return fail(ps, ENGI_ENOMEM, "out of memory");
		TRY(copy_name(ps, s->name, name, is_elem ? "ELSET" : "NSET"));
		s->is_elem = is_elem;
		s->ids.size = sizeof(int64_t);
	}
	*out = s;
	return 0;
}

static int set_add(struct parser *ps, struct set *s, int64_t id)
{
	int64_t *p = vec_push(&s->ids);
	if (!p)
		return fail(ps, ENGI_ENOMEM, "out of memory");
	*p = id;
	return 0;
}

enum block {
	B_NONE,
	B_SKIP,
	B_NODE,
	B_ELEMENT,
	B_SET,
	B_ELASTIC,
	B_SECTION,
	B_BOUNDARY,
	B_CLOAD,
	B_DLOAD,
	B_AFTER_STEP
};

struct state {
	enum block block;
	struct set *set, *set2; /* current set; the set named by *ELEMENT or *NODE */
	int generate;
	int etype;
	struct raw_elem *pending; /* element continued on the next line */
	int pending_n;
	struct material *mat;
	struct section *sec;
};

static int keyword(struct parser *ps, struct state *st, char *line)
{
	char *f[INP_FIELDS_MAX];
	int n = split(line + 1, f, INP_FIELDS_MAX);
	if (n <= 0)
		return fail(ps, ENGI_EPARSE, "empty keyword");
	if (st->pending)
		return fail(ps, ENGI_EPARSE, "element %lld is missing nodes",
			    (long long)st->pending->id);
	const char *k = f[0];
	st->block = B_SKIP;
	st->set = st->set2 = NULL;
	if (ps->steps > 0 && strcasecmp(k, "STEP") == 0)
		return fail(ps, ENGI_ENOTSUP, "only one *STEP is supported");
	if (strcasecmp(k, "HEADING") == 0 || strcasecmp(k, "NODE PRINT") == 0 ||
	    strcasecmp(k, "EL PRINT") == 0 || strcasecmp(k, "NODE FILE") == 0 ||
	    strcasecmp(k, "EL FILE") == 0 || strcasecmp(k, "DENSITY") == 0 ||
	    strcasecmp(k, "END STEP") == 0 || strcasecmp(k, "NODE OUTPUT") == 0 ||
	    strcasecmp(k, "ELEMENT OUTPUT") == 0) {
		return 0;
	}
	if (strcasecmp(k, "STEP") == 0) {
		const char *nl = param(f, n, "NLGEOM");
		if (nl && (!*nl || strcasecmp(nl, "NO") != 0))
			return fail(ps, ENGI_ENOTSUP,
				    "*STEP, NLGEOM is not supported (linear only)");
		ps->steps++;
		return 0;
	}
	if (strcasecmp(k, "STATIC") == 0)
		return 0; /* the solver choice does not change a linear answer */
	if (strcasecmp(k, "NODE") == 0) {
		st->block = B_NODE;
		const char *ns = param(f, n, "NSET");
		if (ns)
			TRY(get_set(ps, ns, 0, &st->set2));
		return 0;
	}
	if (strcasecmp(k, "ELEMENT") == 0) {
		const char *t = param(f, n, "TYPE");
		if (!t || !*t)
			return fail(ps, ENGI_EPARSE, "*ELEMENT needs TYPE=");
		st->etype = -1;
		for (int i = 0; i < ENGI_FE_ETYPE_COUNT; i++)
			if (strcasecmp(t, engi_fe_etype_name((enum engi_fe_etype)i)) == 0)
				st->etype = i;
		if (st->etype < 0)
			return fail(ps, ENGI_ENOTSUP,
				    "element type '%.40s' is not supported (C3D4, C3D10, C3D8)", t);
		st->block = B_ELEMENT;
		const char *es = param(f, n, "ELSET");
		if (es)
			TRY(get_set(ps, es, 1, &st->set2));
		return 0;
	}
	if (strcasecmp(k, "NSET") == 0 || strcasecmp(k, "ELSET") == 0) {
		int is_elem = toupper((unsigned char)k[0]) == 'E';
		const char *nm = param(f, n, is_elem ? "ELSET" : "NSET");
		if (!nm || !*nm)
			return fail(ps, ENGI_EPARSE, "*%s needs %s=", is_elem ? "ELSET" : "NSET",
				    is_elem ? "ELSET" : "NSET");
		TRY(get_set(ps, nm, is_elem, &st->set));
		st->generate = param(f, n, "GENERATE") != NULL;
		st->block = B_SET;
		return 0;
	}
	if (strcasecmp(k, "MATERIAL") == 0) {
		st->mat = vec_push(&ps->mats);
		if (!st->mat)
			return fail(ps, ENGI_ENOMEM, "out of memory");
		TRY(copy_name(ps, st->mat->name, param(f, n, "NAME"), "*MATERIAL"));
		return 0;
	}
	if (strcasecmp(k, "ELASTIC") == 0) {
		const char *t = param(f, n, "TYPE");
		if (t && strcasecmp(t, "ISO") != 0)
			return fail(ps, ENGI_ENOTSUP,
				    "*ELASTIC, TYPE=%.20s is not supported (ISO only)", t);
		if (!st->mat)
			return fail(ps, ENGI_EPARSE, "*ELASTIC outside a *MATERIAL");
		st->block = B_ELASTIC;
		return 0;
	}
	if (strcasecmp(k, "SOLID SECTION") == 0) {
		struct section *s = vec_push(&ps->secs);
		if (!s)
			return fail(ps, ENGI_ENOMEM, "out of memory");
		TRY(copy_name(ps, s->elset, param(f, n, "ELSET"), "*SOLID SECTION ELSET"));
		TRY(copy_name(ps, s->material, param(f, n, "MATERIAL"), "*SOLID SECTION MATERIAL"));
		s->line = ps->line;
		st->block = B_SECTION;
		return 0;
	}
	if (strcasecmp(k, "BOUNDARY") == 0) {
		if (param(f, n, "OP") && strcasecmp(param(f, n, "OP"), "MOD") != 0)
			return fail(ps, ENGI_ENOTSUP, "*BOUNDARY, OP=NEW is not supported");
		st->block = B_BOUNDARY;
		return 0;
	}
	if (strcasecmp(k, "CLOAD") == 0) {
		st->block = B_CLOAD;
		return 0;
	}
	if (strcasecmp(k, "DLOAD") == 0) {
		st->block = B_DLOAD;
		return 0;
	}
	return fail(ps, ENGI_ENOTSUP, "unsupported keyword '*%.40s'", k);
}

static int ref_target(struct parser *ps, const char *s, struct ref *r)
{
	if (isdigit((unsigned char)s[0]) || s[0] == '-')
		return parse_int(ps, s, "node or element", &r->id);
	return copy_name(ps, r->set, s, "set");
}

static int data(struct parser *ps, struct state *st, char *line)
{
	char *f[INP_FIELDS_MAX];
	int n = split(line, f, INP_FIELDS_MAX);
	if (n < 0)
		return fail(ps, ENGI_EPARSE, "more than %d fields", INP_FIELDS_MAX);
	if (n == 0)
		return 0;
	switch (st->block) {
	case B_NONE:
		return fail(ps, ENGI_EPARSE, "data line before any keyword");
	case B_SKIP:
	case B_AFTER_STEP:
		return 0;
	case B_NODE: {
		if (n < 2 || n > 4)
			return fail(ps, ENGI_EPARSE,
				    "*NODE line needs a number and 1 to 3 coordinates");
		struct raw_node *nd = vec_push(&ps->nodes);
		if (!nd)
			return fail(ps, ENGI_ENOMEM, "out of memory");
		TRY(parse_int(ps, f[0], "node number", &nd->id));
		if (nd->id <= 0)
			return fail(ps, ENGI_EPARSE, "node number %lld is not positive",
				    (long long)nd->id);
		for (int i = 1; i < n; i++)
			TRY(parse_num(ps, f[i], "node coordinate", &nd->x[i - 1]));
		if (st->set2)
			TRY(set_add(ps, st->set2, nd->id));
		return 0;
	}
	case B_ELEMENT: {
		int need = engi_fe_etype_nodes((enum engi_fe_etype)st->etype);
		int i0 = 0;
		struct raw_elem *e = st->pending;
		if (!e) {
			e = vec_push(&ps->elems);
			if (!e)
				return fail(ps, ENGI_ENOMEM, "out of memory");
			TRY(parse_int(ps, f[0], "element number", &e->id));
			if (e->id <= 0)
				return fail(ps, ENGI_EPARSE, "element number %lld is not positive",
					    (long long)e->id);
			e->type = st->etype;
			e->mat = -1;
			st->pending_n = 0;
			i0 = 1;
			if (st->set2)
				TRY(set_add(ps, st->set2, e->id));
		}
		for (int i = i0; i < n; i++) {
			if (st->pending_n == need)
				return fail(ps, ENGI_EPARSE, "element %lld has more than %d nodes",
					    (long long)e->id, need);
			TRY(parse_int(ps, f[i], "element node", &e->node[st->pending_n]));
			st->pending_n++;
		}
		st->pending = st->pending_n < need ? e : NULL;
		return 0;
	}
	case B_SET:
		if (st->generate) {
			int64_t a = 0, b = 0, s = 1;
			if (n < 2 || n > 3)
				return fail(ps, ENGI_EPARSE, "GENERATE needs first, last[, step]");
			TRY(parse_int(ps, f[0], "first", &a));
			TRY(parse_int(ps, f[1], "last", &b));
			if (n == 3)
				TRY(parse_int(ps, f[2], "step", &s));
			if (s <= 0 || b < a || (b - a) / s > 100000000)
				return fail(ps, ENGI_EPARSE,
					    "GENERATE range %lld, %lld, %lld is invalid",
					    (long long)a, (long long)b, (long long)s);
			for (int64_t i = a; i <= b; i += s)
				TRY(set_add(ps, st->set, i));
			return 0;
		}
		for (int i = 0; i < n; i++) {
			if (isdigit((unsigned char)f[i][0])) {
				int64_t id = 0;
				TRY(parse_int(ps, f[i], "set member", &id));
				TRY(set_add(ps, st->set, id));
			} else {
				struct set *o = find_set(ps, f[i], st->set->is_elem);
				if (!o)
					return fail(ps, ENGI_EPARSE, "unknown set '%.40s'", f[i]);
				if (o == st->set)
					return fail(ps, ENGI_EPARSE, "set '%.40s' includes itself",
						    f[i]);
				size_t cnt = o->ids.n;
				for (size_t j = 0; j < cnt; j++)
					TRY(set_add(ps, st->set, ((int64_t *)o->ids.p)[j]));
			}
		}
		return 0;
	case B_ELASTIC:
		if (n < 2)
			return fail(ps, ENGI_EPARSE, "*ELASTIC needs E and Poisson's ratio");
		TRY(parse_num(ps, f[0], "Young's modulus", &st->mat->young));
		TRY(parse_num(ps, f[1], "Poisson's ratio", &st->mat->poisson));
		if (!(st->mat->young > 0) || !(st->mat->poisson > -1 && st->mat->poisson < 0.5))
			return fail(ps, ENGI_EINVALID,
				    "material '%s': E must be positive and -1 < nu < 0.5",
				    st->mat->name);
		st->mat->has_elastic = 1;
		st->block = B_SKIP; /* temperature-dependent rows are not supported */
		return 0;
	case B_SECTION:
		return 0;
	case B_BOUNDARY:
	case B_CLOAD:
	case B_DLOAD: {
		struct vec *v = st->block == B_BOUNDARY ? &ps->bcs
				: st->block == B_CLOAD	? &ps->cloads
							: &ps->dloads;
		struct ref *r = vec_push(v);
		if (!r)
			return fail(ps, ENGI_ENOMEM, "out of memory");
		r->line = ps->line;
		TRY(ref_target(ps, f[0], r));
		if (st->block == B_BOUNDARY) {
			if (n < 2 || n > 4)
				return fail(ps, ENGI_EPARSE,
					    "*BOUNDARY line is node or set, first dof[, last dof[, "
					    "value]]");
			int64_t a = 0, b = 0;
			TRY(parse_int(ps, f[1], "first dof", &a));
			b = a;
			if (n >= 3 && f[2][0])
				TRY(parse_int(ps, f[2], "last dof", &b));
			if (n == 4)
				TRY(parse_num(ps, f[3], "value", &r->value));
			if (a < 1 || b < a || b > 6)
				return fail(ps, ENGI_EPARSE, "dof range %lld..%lld is invalid",
					    (long long)a, (long long)b);
			if (b > 3)
				return fail(
				    ps, ENGI_ENOTSUP,
				    "rotational dofs 4-6 have no meaning for solid elements");
			r->a = (int)a, r->b = (int)b;
		} else if (st->block == B_CLOAD) {
			int64_t d = 0;
			if (n != 3)
				return fail(ps, ENGI_EPARSE,
					    "*CLOAD line is node or set, dof, value");
			TRY(parse_int(ps, f[1], "dof", &d));
			if (d < 1 || d > 3)
				return fail(ps, ENGI_EPARSE, "*CLOAD dof %lld is not 1, 2 or 3",
					    (long long)d);
			TRY(parse_num(ps, f[2], "value", &r->value));
			r->a = (int)d;
		} else {
			if (n >= 2 && (toupper((unsigned char)f[1][0]) != 'P' ||
				       !isdigit((unsigned char)f[1][1]) || f[1][2]))
				return fail(
				    ps, ENGI_ENOTSUP,
				    "*DLOAD type '%.20s' is not supported (face pressure P1..P6)",
				    f[1]);
			if (n != 3)
				return fail(ps, ENGI_EPARSE,
					    "*DLOAD line is element or set, Pn, value");
			r->a = f[1][1] - '0';
			TRY(parse_num(ps, f[2], "value", &r->value));
		}
		return 0;
	}
	}
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	int64_t x = ((const struct raw_node *)a)->id, y = ((const struct raw_node *)b)->id;
	return (x > y) - (x < y);
}

struct idmap {
	int64_t id;
	uint32_t index;
};

static int cmp_idmap(const void *a, const void *b)
{
	int64_t x = ((const struct idmap *)a)->id, y = ((const struct idmap *)b)->id;
	return (x > y) - (x < y);
}

static int64_t lookup(const struct idmap *m, size_t n, int64_t id)
{
	struct idmap key = {id, 0};
	const struct idmap *p = bsearch(&key, m, n, sizeof(*m), cmp_idmap);
	return p ? (int64_t)p->index : -1;
}

/* Indices named by a ref: one id or a set's members. */
static int ref_ids(struct parser *ps, const struct ref *r, int is_elem, const int64_t **ids,
		   size_t *n)
{
	if (!r->set[0]) {
		*ids = &r->id;
		*n = 1;
		return 0;
	}
	struct set *s = find_set(ps, r->set, is_elem);
	if (!s) {
		ps->line = r->line;
		return fail(ps, ENGI_EINVALID, "unknown %s '%s'",
			    is_elem ? "element set" : "node set", r->set);
	}
	*ids = s->ids.p;
	*n = s->ids.n;
	return 0;
}

static int resolve(struct parser *ps, struct engi_fe_solid *m)
{
	ps->line = 0;
	size_t nn = ps->nodes.n, ne = ps->elems.n;
	struct raw_node *rn = ps->nodes.p;
	struct raw_elem *re = ps->elems.p;
	if (nn == 0)
		return fail(ps, ENGI_EINVALID, "the deck has no *NODE");
	if (ne == 0)
		return fail(ps, ENGI_EINVALID, "the deck has no *ELEMENT");
	if (nn > UINT32_MAX - 1 || ne > UINT32_MAX - 1)
		return fail(ps, ENGI_ETOOBIG, "too many nodes or elements");
	qsort(rn, nn, sizeof(*rn), cmp_node);
	for (size_t i = 1; i < nn; i++)
		if (rn[i].id == rn[i - 1].id)
			return fail(ps, ENGI_EINVALID, "node %lld is defined twice",
				    (long long)rn[i].id);
	struct idmap *nmap = engi_malloc(nn * sizeof(*nmap));
	struct idmap *emap = engi_malloc(ne * sizeof(*emap));
	int rc = ENGI_ENOMEM;
	m->nnodes = nn;
	m->nelems = ne;
	m->xyz = engi_malloc(3 * nn * sizeof(*m->xyz));
	m->node_id = engi_malloc(nn * sizeof(*m->node_id));
	m->force = engi_calloc(3 * nn, sizeof(*m->force));
	m->etype = engi_malloc(ne);
	m->off = engi_malloc((ne + 1) * sizeof(*m->off));
	m->elem_id = engi_malloc(ne * sizeof(*m->elem_id));
	m->young = engi_malloc(ne * sizeof(double));
	m->poisson = engi_malloc(ne * sizeof(double));
	size_t nconn = 0;
	for (size_t e = 0; e < ne; e++)
		nconn += (size_t)engi_fe_etype_nodes((enum engi_fe_etype)re[e].type);
	m->conn = engi_malloc(nconn * sizeof(*m->conn));
	if (!nmap || !emap || !m->xyz || !m->node_id || !m->force || !m->etype || !m->off ||
	    !m->elem_id || !m->young || !m->poisson || !m->conn) {
		rc = fail(ps, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nn; i++) {
		memcpy(m->xyz + 3 * i, rn[i].x, sizeof(rn[i].x));
		m->node_id[i] = rn[i].id;
		nmap[i].id = rn[i].id;
		nmap[i].index = (uint32_t)i;
	}
	m->off[0] = 0;
	for (size_t e = 0; e < ne; e++) {
		int k = engi_fe_etype_nodes((enum engi_fe_etype)re[e].type);
		m->etype[e] = (uint8_t)re[e].type;
		m->elem_id[e] = re[e].id;
		emap[e].id = re[e].id;
		emap[e].index = (uint32_t)e;
		m->off[e + 1] = m->off[e] + (size_t)k;
		for (int j = 0; j < k; j++) {
			int64_t ix = lookup(nmap, nn, re[e].node[j]);
			if (ix < 0) {
				rc =
				    fail(ps, ENGI_EINVALID, "element %lld uses undefined node %lld",
					 (long long)re[e].id, (long long)re[e].node[j]);
				goto out;
			}
			for (int q = 0; q < j; q++)
				if (re[e].node[q] == re[e].node[j]) {
					rc = fail(ps, ENGI_EINVALID,
						  "element %lld uses node %lld twice",
						  (long long)re[e].id, (long long)re[e].node[j]);
					goto out;
				}
			m->conn[m->off[e] + (size_t)j] = (uint32_t)ix;
		}
	}
	qsort(emap, ne, sizeof(*emap), cmp_idmap);
	for (size_t i = 1; i < ne; i++)
		if (emap[i].id == emap[i - 1].id) {
			rc = fail(ps, ENGI_EINVALID, "element %lld is defined twice",
				  (long long)emap[i].id);
			goto out;
		}
	/* sections give materials to elements */
	struct section *sec = ps->secs.p;
	struct material *mat = ps->mats.p;
	for (size_t s = 0; s < ps->secs.n; s++) {
		int mi = -1;
		for (size_t k = 0; k < ps->mats.n; k++)
			if (strcasecmp(mat[k].name, sec[s].material) == 0)
				mi = (int)k;
		ps->line = sec[s].line;
		if (mi < 0) {
			rc = fail(ps, ENGI_EINVALID, "*SOLID SECTION names unknown material '%s'",
				  sec[s].material);
			goto out;
		}
		if (!mat[mi].has_elastic) {
			rc = fail(ps, ENGI_EINVALID, "material '%s' has no *ELASTIC", mat[mi].name);
			goto out;
		}
		struct set *es = find_set(ps, sec[s].elset, 1);
		if (!es) {
			rc = fail(ps, ENGI_EINVALID,
				  "*SOLID SECTION names unknown element set '%s'", sec[s].elset);
			goto out;
		}
		for (size_t k = 0; k < es->ids.n; k++) {
			int64_t ix = lookup(emap, ne, ((int64_t *)es->ids.p)[k]);
			if (ix < 0) {
				rc = fail(ps, ENGI_EINVALID,
					  "element set '%s' names undefined element %lld", es->name,
					  (long long)((int64_t *)es->ids.p)[k]);
				goto out;
			}
			re[ix].mat = mi;
		}
	}
	ps->line = 0;
	for (size_t e = 0; e < ne; e++) {
		if (re[e].mat < 0) {
			rc = fail(ps, ENGI_EINVALID, "element %lld has no *SOLID SECTION",
				  (long long)re[e].id);
			goto out;
		}
		m->young[e] = mat[re[e].mat].young;
		m->poisson[e] = mat[re[e].mat].poisson;
	}
	/* boundaries */
	struct vec bcs = {.size = sizeof(struct engi_fe_bc)};
	struct ref *r = ps->bcs.p;
	for (size_t i = 0; i < ps->bcs.n; i++) {
		const int64_t *ids;
		size_t cnt;
		if ((rc = ref_ids(ps, &r[i], 0, &ids, &cnt)) < 0)
			goto out_bcs;
		for (size_t k = 0; k < cnt; k++) {
			int64_t ix = lookup(nmap, nn, ids[k]);
			if (ix < 0) {
				ps->line = r[i].line;
				rc = fail(ps, ENGI_EINVALID, "*BOUNDARY names undefined node %lld",
					  (long long)ids[k]);
				goto out_bcs;
			}
			for (int d = r[i].a; d <= r[i].b; d++) {
				struct engi_fe_bc *b = vec_push(&bcs);
				if (!b) {
					rc = fail(ps, ENGI_ENOMEM, "out of memory");
					goto out_bcs;
				}
				b->node = (uint32_t)ix;
				b->dof = (uint8_t)(d - 1);
				b->value = r[i].value;
			}
		}
	}
	m->bc = bcs.p;
	m->nbc = bcs.n;
	bcs.p = NULL;
	r = ps->cloads.p;
	for (size_t i = 0; i < ps->cloads.n; i++) {
		const int64_t *ids;
		size_t cnt;
		if ((rc = ref_ids(ps, &r[i], 0, &ids, &cnt)) < 0)
			goto out;
		for (size_t k = 0; k < cnt; k++) {
			int64_t ix = lookup(nmap, nn, ids[k]);
			if (ix < 0) {
				ps->line = r[i].line;
				rc = fail(ps, ENGI_EINVALID, "*CLOAD names undefined node %lld",
					  (long long)ids[k]);
				goto out;
			}
			m->force[3 * (size_t)ix + (size_t)(r[i].a - 1)] += r[i].value;
		}
	}
	struct vec pr = {.size = sizeof(struct engi_fe_pressure)};
	r = ps->dloads.p;
	for (size_t i = 0; i < ps->dloads.n; i++) {
		const int64_t *ids;
		size_t cnt;
		if ((rc = ref_ids(ps, &r[i], 1, &ids, &cnt)) < 0)
			goto out_pr;
		for (size_t k = 0; k < cnt; k++) {
			int64_t ix = lookup(emap, ne, ids[k]);
			ps->line = r[i].line;
			if (ix < 0) {
				rc = fail(ps, ENGI_EINVALID, "*DLOAD names undefined element %lld",
					  (long long)ids[k]);
				goto out_pr;
			}
			int faces = m->etype[ix] == ENGI_FE_C3D8 ? 6 : 4;
			if (r[i].a < 1 || r[i].a > faces) {
				rc = fail(ps, ENGI_EINVALID, "element %lld (%s) has no face P%d",
					  (long long)ids[k],
					  engi_fe_etype_name((enum engi_fe_etype)m->etype[ix]),
					  r[i].a);
				goto out_pr;
			}
			struct engi_fe_pressure *p = vec_push(&pr);
			if (!p) {
				rc = fail(ps, ENGI_ENOMEM, "out of memory");
				goto out_pr;
			}
			p->elem = (uint32_t)ix;
			p->face = (uint8_t)r[i].a;
			p->value = r[i].value;
		}
	}
	m->press = pr.p;
	m->npress = pr.n;
	pr.p = NULL;
	rc = 0;
	goto out;
out_pr:
	engi_free(pr.p);
	goto out;
out_bcs:
	engi_free(bcs.p);
out:
	engi_free(nmap);
	engi_free(emap);
	return rc;
}

int engi_inp_parse(const char *name, const char *text, size_t len, struct engi_fe_solid *m,
		   struct engi_error *err)
{
	struct parser ps = {.name = name, .err = err};
	ps.nodes.size = sizeof(struct raw_node);
	ps.elems.size = sizeof(struct raw_elem);
	ps.sets.size = sizeof(struct set);
	ps.mats.size = sizeof(struct material);
	ps.secs.size = sizeof(struct section);
	ps.bcs.size = ps.cloads.size = ps.dloads.size = sizeof(struct ref);
	struct state st = {.block = B_NONE};
	char buf[1024];
	int rc = 0;
	size_t pos = 0;
	engi_fe_solid_release(m);
	while (pos < len) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		ps.line++;
		size_t n = e - pos;
		if (n >= sizeof(buf)) {
			rc = fail(&ps, ENGI_EPARSE, "line longer than %zu characters",
				  sizeof(buf) - 1);
			break;
		}
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		pos = e + 1;
		if (memchr(buf, 0, n)) {
			rc = fail(&ps, ENGI_EPARSE, "NUL byte in a text deck");
			break;
		}
		trim(buf);
		if (!buf[0] || (buf[0] == '*' && buf[1] == '*'))
			continue;
		rc = buf[0] == '*' ? keyword(&ps, &st, buf) : data(&ps, &st, buf);
		if (rc < 0)
			break;
	}
	if (rc == 0 && st.pending) {
		rc = fail(&ps, ENGI_EPARSE, "element %lld is missing nodes",
			  (long long)st.pending->id);
	}
	if (rc == 0)
		rc = resolve(&ps, m);
	struct set *s = ps.sets.p;
	for (size_t i = 0; i < ps.sets.n; i++)
		engi_free(s[i].ids.p);
	engi_free(ps.sets.p);
	engi_free(ps.nodes.p);
	engi_free(ps.elems.p);
	engi_free(ps.mats.p);
	engi_free(ps.secs.p);
	engi_free(ps.bcs.p);
	engi_free(ps.cloads.p);
	engi_free(ps.dloads.p);
	if (rc < 0)
		engi_fe_solid_release(m);
	return rc;
}

static int slurp(const char *path, char **text, size_t *len, struct engi_error *err)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return engi_raise(err, ENGI_EIO, "cannot open '%s': %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(fp);
		return engi_raise(err, ENGI_EIO, "cannot read '%s': not a regular file", path);
	}
	if ((size_t)sb.st_size > INP_MAX_BYTES) {
		fclose(fp);
		return engi_raise(err, ENGI_ETOOBIG, "cannot read '%s': larger than %zu bytes",
				  path, INP_MAX_BYTES);
	}
	size_t n = (size_t)sb.st_size;
	char *t = engi_malloc(n + 1);
	if (!t) {
		fclose(fp);
		return engi_raise(err, ENGI_ENOMEM, "cannot read '%s': out of memory", path);
	}
	size_t got = fread(t, 1, n, fp);
	int bad = ferror(fp);
	fclose(fp);
	if (bad || got != n) {
		engi_free(t);
		return engi_raise(err, ENGI_EIO, "cannot read '%s': short read", path);
	}
	t[n] = 0;
	*text = t;
	*len = n;
	return 0;
}

int engi_inp_read(const char *path, struct engi_fe_solid *m, struct engi_error *err)
{
	char *text;
	size_t len;
	TRY(slurp(path, &text, &len, err));
	int rc = engi_inp_parse(path, text, len, m, err);
	engi_free(text);
	return rc;
}

int engi_ccx_dat_max_u(const char *path, double *max_u, size_t *nfound, struct engi_error *err)
{
	char *text;
	size_t len;
	TRY(slurp(path, &text, &len, err));
	*max_u = 0;
	*nfound = 0;
	int in = 0;
	char *save = NULL;
	for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *p = ln;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		if (strncmp(p, "displacements", 13) == 0) {
			if (*nfound)
				break; /* first block only */
			in = 1;
			continue;
		}
		if (!in)
			continue;
		long long id;
		double u[3];
		if (sscanf(p, "%lld %lf %lf %lf", &id, &u[0], &u[1], &u[2]) != 4) {
			if (*nfound)
				break;
			continue;
		}
		double mag = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
		if (mag > *max_u)
			*max_u = mag;
		(*nfound)++;
	}
	engi_free(text);
	if (!*nfound)
		return engi_raise(err, ENGI_EPARSE, "'%s' has no displacements block", path);
	return 0;
}

/* One fixed-width field of a .frd line: the format glues negative numbers
 * to their neighbours, so fields are cut by column, not by blanks. NaN and
 * infinities pass so that the caller names them; a blank field or anything
 * else that is not a number is -1. */
static int frd_value(const char *line, size_t len, size_t at, size_t width, double *out)
{
	char buf[32];
	if (at + width > len || width >= sizeof(buf))
		return -1;
	memcpy(buf, line + at, width);
	buf[width] = 0;
	char *p = buf, *end;
	while (*p == ' ')
		p++;
	if (!*p)
		return -1;
	*out = strtod(p, &end);
	while (*end == ' ')
		end++;
	return *end ? -1 : 0;
}

/* The same, finite numbers only. */
static int frd_field(const char *line, size_t len, size_t at, size_t width, double *out)
{
	return frd_value(line, len, at, width, out) < 0 || !isfinite(*out) ? -1 : 0;
}

int engi_ccx_frd_max_u(const char *path, double *max_u, size_t *nfound, struct engi_error *err)
{
	char *text;
	size_t len;
	TRY(slurp(path, &text, &len, err));
	*max_u = 0;
	*nfound = 0;
	int in = 0, rc = 0;
	size_t pos = 0, lineno = 0;
	while (pos < len) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		const char *l = text + pos;
		size_t n = e - pos;
		if (n && l[n - 1] == '\r')
			n--;
		pos = e + 1;
		lineno++;
		if (n >= 10 && !strncmp(l, " -4  DISP", 9)) {
			if (*nfound)
				break; /* first step only */
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (n >= 3 && !strncmp(l, " -3", 3)) {
			if (*nfound)
				break;
			continue;
		}
		if (n < 3 || strncmp(l, " -1", 3) != 0)
			continue;
		double u[3];
		for (int k = 0; k < 3; k++)
			if (frd_field(l, n, 13 + 12 * (size_t)k, 12, &u[k]) < 0) {
				rc =
				    engi_raise(err, ENGI_EPARSE,
					       "%s:%zu: malformed displacement line", path, lineno);
				goto out;
			}
		double mag = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
		if (mag > *max_u)
			*max_u = mag;
		(*nfound)++;
	}
	if (!*nfound)
		rc = engi_raise(err, ENGI_EPARSE, "'%s' has no DISP block", path);
out:
	engi_free(text);
	return rc;
}

/* ---- stresses of CalculiX result files ---------------------------------- */

void engi_ccx_stress_init(struct engi_ccx_stress *s)
{
	memset(s, 0, sizeof(*s));
}

void engi_ccx_stress_release(struct engi_ccx_stress *s)
{
	engi_free(s->rec);
	engi_ccx_stress_init(s);
}

/* Cuts text into lines: *l and *n are the next line without its "\r\n",
 * *lineno counts from 1. Returns 0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, const char **l, size_t *n,
		     size_t *lineno)
{
	if (*pos >= len)
		return 0;
	size_t e = *pos;
	while (e < len && text[e] != '\n')
		e++;
	*l = text + *pos;
	*n = e - *pos;
	if (*n && (*l)[*n - 1] == '\r')
		(*n)--;
	*pos = e + 1;
	(*lineno)++;
	return 1;
}

static int stress_push(struct vec *v, const char *name, size_t lineno,
		       const struct engi_ccx_stress_rec *r, struct engi_error *err)
{
	for (int k = 0; k < 6; k++)
		if (!isfinite(r->s[k]))
			return engi_raise(err, ENGI_EPARSE, "%s:%zu: stress is not a finite number",
					  name, lineno);
	if (v->n >= ENGI_CCX_STRESS_MAX)
		return engi_raise(err, ENGI_ETOOBIG, "%s:%zu: more than %zu stress records", name,
				  lineno, (size_t)ENGI_CCX_STRESS_MAX);
	struct engi_ccx_stress_rec *p = vec_push(v);
	if (!p)
		return engi_raise(err, ENGI_ENOMEM, "%s: out of memory", name);
	*p = *r;
	return 0;
}

static int frd_int(const char *line, size_t len, size_t at, size_t width, int64_t *out)
{
	char buf[32], *end;
	if (at + width > len || width >= sizeof(buf))
		return -1;
	memcpy(buf, line + at, width);
	buf[width] = 0;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	while (*end == ' ')
		end++;
	if (*end || errno || end == buf)
		return -1;
	*out = v;
	return 0;
}

/* The last blank-separated word of a line: the FORMAT field of a "100C"
 * record (0 short, 1 long, 2 binary). */
static int frd_format(const char *l, size_t n)
{
	while (n && l[n - 1] == ' ')
		n--;
	size_t b = n;
	while (b && l[b - 1] != ' ')
		b--;
	if (n - b != 1 || l[b] < '0' || l[b] > '2')
		return 1;
	return l[b] - '0';
}

int engi_ccx_frd_stress_parse(const char *name, const char *text, size_t len,
			      struct engi_ccx_stress *out, struct engi_error *err)
{
	struct vec v = {.size = sizeof(struct engi_ccx_stress_rec)};
	size_t pos = 0, lineno = 0, n, ncomp = 0;
	const char *l;
	int in = 0, closed = 0, fmt = 1, rc = 0;
	engi_ccx_stress_release(out);
	while (!closed && next_line(text, len, &pos, &l, &n, &lineno)) {
		if (!in) {
			if (n >= 6 && !strncmp(l, "  100C", 6))
				fmt = frd_format(l, n);
			if (n >= 11 && !strncmp(l, " -4  STRESS", 11) &&
			    (n == 11 || l[11] == ' ')) {
				if (fmt == 2) {
					rc = engi_raise(err, ENGI_ENOTSUP,
							"%s:%zu: binary .frd results are not "
							"supported (ASCII only)",
							name, lineno);
					goto out;
				}
				in = 1;
			}
			continue;
		}
		if (n >= 3 && !strncmp(l, " -5", 3)) {
			ncomp++;
			continue;
		}
		if (n >= 3 && !strncmp(l, " -3", 3)) {
			closed = 1;
			continue;
		}
		if (n < 3 || strncmp(l, " -1", 3) != 0) {
			rc = engi_raise(err, ENGI_EPARSE,
					"%s:%zu: unexpected line in a STRESS block", name, lineno);
			goto out;
		}
		if (ncomp != 6) {
			rc = engi_raise(err, ENGI_EPARSE,
					"%s:%zu: STRESS block with %zu components (expected 6: "
					"SXX SYY SZZ SXY SYZ SZX)",
					name, lineno, ncomp);
			goto out;
		}
		size_t w = fmt == 0 ? 5 : 10, at = 3 + w;
		struct engi_ccx_stress_rec r = {0};
		int bad = frd_int(l, n, 3, w, &r.id) < 0 || r.id <= 0;
		for (int k = 0; k < 6 && !bad; k++)
			bad = frd_value(l, n, at + 12 * (size_t)k, 12, &r.s[k]) < 0;
		if (bad) {
			rc = engi_raise(err, ENGI_EPARSE, "%s:%zu: malformed stress line", name,
					lineno);
			goto out;
		}
		if ((rc = stress_push(&v, name, lineno, &r, err)) < 0)
			goto out;
	}
	if (!in)
		rc = engi_raise(err, ENGI_EPARSE,
				"%s: no STRESS block (*NODE FILE or *EL FILE with S)", name);
	else if (!closed)
		rc = engi_raise(err, ENGI_EPARSE, "%s:%zu: STRESS block is not closed by -3", name,
				lineno);
	else if (!v.n)
		rc = engi_raise(err, ENGI_EPARSE, "%s:%zu: STRESS block is empty", name, lineno);
out:
	if (rc < 0) {
		engi_free(v.p);
		return rc;
	}
	out->rec = v.p;
	out->n = v.n;
	return 0;
}

/* "stresses (elem, integ.pnt.,sxx,syy,szz,sxy,sxz,syz) for set EALL and
 * time  0.1000000E+01": the time, or NAN when the header names none. */
static double dat_time(const char *l, size_t n)
{
	char buf[256];
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, l, n);
	buf[n] = 0;
	const char *t = strstr(buf, " time");
	if (!t)
		return NAN;
	char *end;
	double v = strtod(t + 5, &end);
	return end == t + 5 ? NAN : v;
}

/* One data line: elem ip sxx syy szz sxy sxz syz (blank-separated). */
static int dat_stress_line(const char *l, size_t n, struct engi_ccx_stress_rec *r)
{
	char buf[256], *p = buf, *end;
	double s[6];
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, l, n);
	buf[n] = 0;
	errno = 0;
	long long id = strtoll(p, &end, 10);
	if (end == p || errno || id <= 0)
		return -1;
	p = end;
	long long ip = strtoll(p, &end, 10);
	if (end == p || errno || ip <= 0 || ip > 1000)
		return -1;
	p = end;
	for (int k = 0; k < 6; k++) {
		while (*p == ' ' || *p == '\t')
			p++;
		s[k] = strtod(p, &end);
		if (end == p)
			return -1;
		p = end;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return -1;
	r->id = id;
	r->ip = (int)ip;
	/* the file's order is xx yy zz xy xz yz */
	r->s[0] = s[0], r->s[1] = s[1], r->s[2] = s[2];
	r->s[3] = s[3], r->s[4] = s[5], r->s[5] = s[4];
	return 0;
}

int engi_ccx_dat_stress_parse(const char *name, const char *text, size_t len,
			      struct engi_ccx_stress *out, struct engi_error *err)
{
	struct vec v = {.size = sizeof(struct engi_ccx_stress_rec)};
	size_t pos = 0, lineno = 0, n;
	const char *l;
	int in = 0, blocks = 0, rc = 0;
	double time0 = NAN;
	engi_ccx_stress_release(out);
	while (next_line(text, len, &pos, &l, &n, &lineno)) {
		while (n && isspace((unsigned char)*l))
			l++, n--;
		while (n && isspace((unsigned char)l[n - 1]))
			n--;
		if (!n)
			continue;
		if (n >= 14 && !strncmp(l, "stresses (elem", 14)) {
			double t = dat_time(l, n);
			if (blocks && !(t == time0 || (isnan(t) && isnan(time0))))
				break; /* the first time only */
			time0 = t;
			blocks++;
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (!isdigit((unsigned char)l[0]) && l[0] != '-' && l[0] != '+') {
			in = 0; /* the next block's header */
			continue;
		}
		struct engi_ccx_stress_rec r = {0};
		if (dat_stress_line(l, n, &r) < 0) {
			rc = engi_raise(err, ENGI_EPARSE,
					"%s:%zu: malformed stress line (elem, integration point, 6 "
					"stresses)",
					name, lineno);
			goto out;
		}
		if ((rc = stress_push(&v, name, lineno, &r, err)) < 0)
			goto out;
	}
	if (!v.n)
		rc = engi_raise(err, ENGI_EPARSE, "%s: no stresses block (*EL PRINT with S)%s",
				name, blocks ? " with values" : "");
out:
	if (rc < 0) {
		engi_free(v.p);
		return rc;
	}
	out->rec = v.p;
	out->n = v.n;
	return 0;
}

int engi_ccx_frd_stress(const char *path, struct engi_ccx_stress *s, struct engi_error *err)
{
	char *text;
	size_t len;
	engi_ccx_stress_release(s);
	TRY(slurp(path, &text, &len, err));
	int rc = engi_ccx_frd_stress_parse(path, text, len, s, err);
	engi_free(text);
	return rc;
}

int engi_ccx_dat_stress(const char *path, struct engi_ccx_stress *s, struct engi_error *err)
{
	char *text;
	size_t len;
	engi_ccx_stress_release(s);
	TRY(slurp(path, &text, &len, err));
	int rc = engi_ccx_dat_stress_parse(path, text, len, s, err);
	engi_free(text);
	return rc;
}
