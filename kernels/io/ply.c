/*
 * PLY reader, ASCII and binary little-endian (big-endian files are refused
 * with a message saying so). The header declares elements and their
 * properties; the reader takes x, y, z of element "vertex" and the list
 * "vertex_indices" (or "vertex_index") of element "face", and steps over
 * every other element and property. A PLY without faces is a point cloud.
 */
#include "engi/meshio.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/mesh.h"
#include "reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PLY_ELEMENTS_MAX   16
#define PLY_PROPERTIES_MAX 32
#define PLY_NAME_MAX	   32

enum ply_type { T_NONE, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 };

static const struct {
	const char *name;
	int type, size;
} ply_types[] = {
    {"char", T_I8, 1},	 {"int8", T_I8, 1},	{"uchar", T_U8, 1},   {"uint8", T_U8, 1},
    {"short", T_I16, 2}, {"int16", T_I16, 2},	{"ushort", T_U16, 2}, {"uint16", T_U16, 2},
    {"int", T_I32, 4},	 {"int32", T_I32, 4},	{"uint", T_U32, 4},   {"uint32", T_U32, 4},
    {"float", T_F32, 4}, {"float32", T_F32, 4}, {"double", T_F64, 8}, {"float64", T_F64, 8},
};

struct ply_prop {
	char name[PLY_NAME_MAX];
	int type;      /* the value, or the items of a list */
	int list_type; /* T_NONE for a scalar */
};

struct ply_elem {
	char name[PLY_NAME_MAX];
	unsigned long long count;
	struct ply_prop prop[PLY_PROPERTIES_MAX];
	int nprop;
};

struct ply {
	const char *name;
	int binary;
	struct ply_elem el[PLY_ELEMENTS_MAX];
	int nel;
	const char *p, *end; /* body cursor */
	size_t line;	     /* ASCII body line, for messages */
	struct engi_error *err;
};

__attribute__((format(printf, 3, 4))) static int ply_fail(struct ply *y, int code, const char *fmt,
							  ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return engi_raise(y->err, code, "cannot read PLY '%s': %s", y->name, msg);
}

static int type_of(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(ply_types) / sizeof(ply_types[0]); i++)
		if (strlen(ply_types[i].name) == n && !memcmp(ply_types[i].name, s, n))
			return ply_types[i].type;
	return T_NONE;
}

static int type_size(int t)
{
	for (size_t i = 0; i < sizeof(ply_types) / sizeof(ply_types[0]); i++)
		if (ply_types[i].type == t)
			return ply_types[i].size;
	return 0;
}

/* Next word of a header line into out (NUL-terminated, truncated). */
static size_t word(const char **s, const char *end, const char **w)
{
	engi_io_skip_blanks(s, end, 0);
	*w = *s;
	while (*s < end && **s != ' ' && **s != '\t')
		(*s)++;
	return (size_t)(*s - *w);
}

static int is_word(const char *w, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(w, lit, n);
}

static int parse_header(struct ply *y, const char *buf, size_t len)
{
	struct io_lines l = {buf, buf + len, 0};
	const char *s, *w;
	size_t n;
	if (!engi_io_next_line(&l, &s, &n) || !is_word(s, n, "ply"))
		return ply_fail(y, ENGI_EPARSE, "does not start with 'ply'");
	int have_format = 0;
	for (;;) {
		if (!engi_io_next_line(&l, &s, &n))
			return ply_fail(y, ENGI_EPARSE, "header has no 'end_header'");
		const char *end = s + n;
		size_t k = word(&s, end, &w);
		if (k == 0 || is_word(w, k, "comment") || is_word(w, k, "obj_info"))
			continue;
		if (is_word(w, k, "end_header"))
			break;
		if (is_word(w, k, "format")) {
			k = word(&s, end, &w);
			if (is_word(w, k, "ascii"))
				y->binary = 0;
			else if (is_word(w, k, "binary_little_endian"))
				y->binary = 1;
			else if (is_word(w, k, "binary_big_endian"))
				return ply_fail(y, ENGI_ENOTSUP,
						"header line %zu: binary big-endian PLY is not "
						"supported (convert it to little-endian or ASCII)",
						l.lineno);
			else
				return ply_fail(y, ENGI_EPARSE,
						"header line %zu: unknown format '%.*s'", l.lineno,
						(int)(k < 32 ? k : 32), w);
			have_format = 1;
		} else if (is_word(w, k, "element")) {
			if (y->nel == PLY_ELEMENTS_MAX)
				return ply_fail(y, ENGI_ETOOBIG,
						"header line %zu: more than %d elements", l.lineno,
						PLY_ELEMENTS_MAX);
			struct ply_elem *e = &y->el[y->nel++];
			k = word(&s, end, &w);
			if (k == 0 || k >= PLY_NAME_MAX)
				return ply_fail(y, ENGI_EPARSE, "header line %zu: bad element name",
						l.lineno);
			memcpy(e->name, w, k);
			long long c;
			if (engi_io_integer(&s, end, &c) < 0 || c < 0)
				return ply_fail(y, ENGI_EPARSE,
						"header line %zu: element '%s' has no valid count",
						l.lineno, e->name);
			e->count = (unsigned long long)c;
		} else if (is_word(w, k, "property")) {
			if (y->nel == 0)
				return ply_fail(y, ENGI_EPARSE,
						"header line %zu: property before any element",
						l.lineno);
			struct ply_elem *e = &y->el[y->nel - 1];
			if (e->nprop == PLY_PROPERTIES_MAX)
				return ply_fail(
				    y, ENGI_ETOOBIG,
				    "header line %zu: element '%s' has more than %d properties",
				    l.lineno, e->name, PLY_PROPERTIES_MAX);
			struct ply_prop *p = &e->prop[e->nprop++];
			k = word(&s, end, &w);
			p->list_type = T_NONE;
			if (is_word(w, k, "list")) {
				k = word(&s, end, &w);
				p->list_type = type_of(w, k);
				if (p->list_type == T_NONE || p->list_type == T_F32 ||
				    p->list_type == T_F64)
					return ply_fail(y, ENGI_EPARSE,
							"header line %zu: bad list count type",
							l.lineno);
				k = word(&s, end, &w);
			}
			p->type = type_of(w, k);
			if (p->type == T_NONE)
				return ply_fail(y, ENGI_EPARSE,
						"header line %zu: unknown type '%.*s'", l.lineno,
						(int)(k < 32 ? k : 32), w);
			k = word(&s, end, &w);
			if (k == 0 || k >= PLY_NAME_MAX)
				return ply_fail(y, ENGI_EPARSE,
						"header line %zu: bad property name", l.lineno);
			memcpy(p->name, w, k);
			p->name[k] = 0;
		} else {
			return ply_fail(y, ENGI_EPARSE, "header line %zu: unknown keyword '%.*s'",
					l.lineno, (int)(k < 32 ? k : 32), w);
		}
	}
	if (!have_format)
		return ply_fail(y, ENGI_EPARSE, "header has no 'format' line");
	y->p = l.p;
	y->end = buf + len;
	y->line = l.lineno;
	return 0;
}

/* One value of type t from the body. */
static int read_value(struct ply *y, int t, double *out)
{
	if (!y->binary) {
		for (;;) {
			while (y->p < y->end &&
			       (*y->p == ' ' || *y->p == '\t' || *y->p == '\r' || *y->p == '\n')) {
				if (*y->p == '\n')
					y->line++;
				y->p++;
			}
			break;
		}
		if (t == T_F32 || t == T_F64)
			return engi_io_number(&y->p, y->end, out);
		long long v;
		if (engi_io_integer(&y->p, y->end, &v) < 0)
			return -1;
		*out = (double)v;
		return 0;
	}
	int sz = type_size(t);
	if (y->end - y->p < sz)
		return -1;
	const unsigned char *b = (const unsigned char *)y->p;
	uint64_t u = 0;
	for (int i = 0; i < sz; i++)
		u |= (uint64_t)b[i] << (8 * i);
	y->p += sz;
	switch (t) {
	case T_I8:
		*out = (double)(int8_t)u;
		break;
	case T_U8:
		*out = (double)(uint8_t)u;
		break;
	case T_I16:
		*out = (double)(int16_t)u;
		break;
	case T_U16:
		*out = (double)(uint16_t)u;
		break;
	case T_I32:
		*out = (double)(int32_t)u;
		break;
	case T_U32:
		*out = (double)(uint32_t)u;
		break;
	case T_F32: {
		uint32_t u32 = (uint32_t)u;
		float f;
		memcpy(&f, &u32, sizeof(f));
		*out = f;
		break;
	}
	default: {
		double d;
		memcpy(&d, &u, sizeof(d));
		*out = d;
	}
	}
	return 0;
}

static int read_body(struct ply *y, struct io_mesh *b)
{
	for (int ei = 0; ei < y->nel; ei++) {
		struct ply_elem *e = &y->el[ei];
		int is_vertex = !strcmp(e->name, "vertex"), is_face = !strcmp(e->name, "face");
		int xyz[3] = {-1, -1, -1}, list = -1;
		for (int k = 0; k < e->nprop; k++) {
			for (int d = 0; d < 3; d++)
				if (is_vertex && e->prop[k].list_type == T_NONE &&
				    !strcmp(e->prop[k].name, (const char *[]){"x", "y", "z"}[d]))
					xyz[d] = k;
			if (is_face && e->prop[k].list_type != T_NONE &&
			    (!strcmp(e->prop[k].name, "vertex_indices") ||
			     !strcmp(e->prop[k].name, "vertex_index")))
				list = k;
		}
		if (is_vertex && (xyz[0] < 0 || xyz[1] < 0 || xyz[2] < 0))
			return ply_fail(y, ENGI_EPARSE,
					"element 'vertex' lacks property x, y or z");
		if (is_vertex && e->count > b->max_verts)
			return ply_fail(y, ENGI_ETOOBIG, "%llu vertices, over the cap of %zu",
					e->count, b->max_verts);
		if (is_face && list < 0)
			return ply_fail(y, ENGI_EPARSE,
					"element 'face' lacks list 'vertex_indices'");
		if (is_face && e->count > b->max_tris)
			return ply_fail(y, ENGI_ETOOBIG, "%llu faces, over the cap of %zu",
					e->count, b->max_tris);
		if (e->nprop == 0)
			continue; /* occupies no bytes, however many it claims */
		for (unsigned long long i = 0; i < e->count; i++) {
			double p[3] = {0, 0, 0};
			uint32_t idx[ENGI_MESHIO_POLYGON_MAX];
			size_t nidx = 0;
			for (int k = 0; k < e->nprop; k++) {
				const struct ply_prop *pr = &e->prop[k];
				double v;
				if (pr->list_type == T_NONE) {
					if (read_value(y, pr->type, &v) < 0)
						return ply_fail(
						    y, ENGI_EPARSE,
						    "%s %llu: property '%s' is missing or "
						    "not a number",
						    e->name, i, pr->name);
					for (int d = 0; d < 3; d++)
						if (k == xyz[d])
							p[d] = v;
					continue;
				}
				double cnt;
				if (read_value(y, pr->list_type, &cnt) < 0 || !(cnt >= 0))
					return ply_fail(y, ENGI_EPARSE,
							"%s %llu: list '%s' has no valid length",
							e->name, i, pr->name);
				if (cnt > ENGI_MESHIO_POLYGON_MAX)
					return ply_fail(
					    y, ENGI_ETOOBIG,
					    "%s %llu: list '%s' has %.0f items, over the cap "
					    "of %d",
					    e->name, i, pr->name, cnt, ENGI_MESHIO_POLYGON_MAX);
				for (size_t j = 0; j < (size_t)cnt; j++) {
					if (read_value(y, pr->type, &v) < 0)
						return ply_fail(y, ENGI_EPARSE,
								"%s %llu: list '%s' is truncated",
								e->name, i, pr->name);
					if (k == list) {
						if (!(v >= 0 && v < (double)b->m->nverts) ||
						    v != floor(v))
							return ply_fail(y, ENGI_EPARSE,
									"face %llu refers to "
									"vertex %.0f, but there "
									"are %zu",
									i, v, b->m->nverts);
						idx[nidx++] = (uint32_t)v;
					}
				}
			}
			if (is_vertex) {
				int bad = 0;
				while (bad < 3 && engi_coord_ok(p[bad]))
					bad++;
				if (bad < 3)
					return ply_fail(
					    y, ENGI_EPARSE, "vertex %llu: coordinate %c = %g %s", i,
					    "xyz"[bad], p[bad], engi_coord_problem(p[bad]));
				int rc = engi_io_add_vertex(b, p);
				if (rc < 0)
					return ply_fail(y, rc, "out of memory");
			}
			if (is_face) {
				if (nidx < 3)
					return ply_fail(y, ENGI_EPARSE,
							"face %llu has %zu corners, fewer than 3",
							i, nidx);
				for (size_t k = 1; k + 1 < nidx; k++) {
					int rc = engi_io_add_tri(b, idx[0], idx[k], idx[k + 1]);
					if (rc == ENGI_ETOOBIG)
						return ply_fail(y, rc, "more than %zu triangles",
								b->max_tris);
					if (rc < 0)
						return ply_fail(y, rc, "out of memory");
				}
			}
		}
	}
	return 0;
}

int engi_ply_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, size_t max_tris, struct engi_error *err)
{
	struct io_mesh b;
	engi_io_mesh_start(&b, m, max_verts, max_tris);
	struct ply *y = engi_calloc(1, sizeof(*y));
	if (!y)
		RAISE(err, ENGI_ENOMEM, "cannot read PLY '%s': out of memory", name);
	y->name = name;
	y->err = err;
	int rc = parse_header(y, buf, len);
	if (rc == 0) {
		int vertex_seen = 0;
		for (int i = 0; i < y->nel; i++) {
			if (!strcmp(y->el[i].name, "face") && !vertex_seen)
				rc = ply_fail(y, ENGI_EPARSE,
					      "element 'face' comes before element 'vertex'");
			vertex_seen |= !strcmp(y->el[i].name, "vertex");
		}
		if (rc == 0 && !vertex_seen)
			rc = ply_fail(y, ENGI_EPARSE, "no element 'vertex'");
	}
	if (rc == 0)
		rc = read_body(y, &b);
	engi_free(y);
	if (rc < 0)
		engi_io_mesh_abort(&b);
	return rc;
}

int engi_ply_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		  struct engi_error *err)
{
	char *buf;
	size_t len;
	engi_mesh_release(m);
	TRY(engi_io_slurp(path, NULL, "PLY", ENGI_MESHIO_BYTES_MAX, &buf, &len, err));
	int rc = engi_ply_parse(buf, len, path, m, max_verts, max_tris, err);
	engi_free(buf);
	return rc;
}
